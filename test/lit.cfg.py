# -*- Python -*-
"""lit configuration for the relax test tree.

Runs every ``*.rlx`` file under ``test/`` with lit's internal shell, the built relax tools
and LLVM 19's FileCheck. The Rust runner (``cargo test -p relax-lit``) runs the same tree
in process; see ``docs/testing.md``.

    python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv test/

Environment:

* ``RELAX_BIN_DIR``: where ``relax-opt``, ``relax-run`` and ``relax-translate`` are
  (default ``<repo>/target/debug``).
* ``RELAX_FEATURES``: comma-separated backends the tools were built with (``llvm``,
  ``spirv``); by default, those that ``relax-translate --version`` names.
* ``RELAX_LLVM_BIN``: LLVM 19's ``bin`` folder (default ``/usr/lib/llvm-19/bin``).

The feature ``cuda-sim`` holds when the PTX simulator ``librelax_cuda_sim.so`` is in
``RELAX_BIN_DIR`` (or its ``deps/``); ``%cuda-sim`` is its path.
"""

import os
import platform
import re
import shutil

import lit.formats

config.name = "relax"
# The internal shell; lit rejects ShTest(execute_external=True) here.
config.test_format = lit.formats.ShTest()
config.suffixes = [".rlx"]
# Inputs/ holds data that RUN lines read; Corpus/ holds TVM-printed text that
# lib/relax-driver/tests/corpus.rs reads (data, not tests); Output/ is lit's scratch space.
config.excludes = ["Inputs", "Corpus", "Output"]

config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# %t lives in test/**/Output/ (gitignored), as in LLVM's own trees.
config.test_exec_root = config.test_source_root

repo_root = os.path.dirname(config.test_source_root)
llvm_bin = os.environ.get("RELAX_LLVM_BIN", "/usr/lib/llvm-19/bin")
bin_dir = os.environ.get("RELAX_BIN_DIR", os.path.join(repo_root, "target", "debug"))

# FileCheck and `not` come from LLVM 19.
config.environment["PATH"] = os.pathsep.join(
    [llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# Variables defined before a CHECK-LABEL are forgotten after it; relax-lit always does this.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"


def tool_pattern(name):
    """Matches `name` as a whole command word, not inside a path or a longer name."""
    return r"(?<![\w./-])" + re.escape(name) + r"(?![\w./-])"


filecheck = shutil.which("FileCheck-19") or os.path.join(llvm_bin, "FileCheck")
config.substitutions.append((tool_pattern("FileCheck-19"), filecheck))
config.substitutions.append((tool_pattern("FileCheck"), filecheck))
for tool in ["relax-opt", "relax-run", "relax-translate"]:
    config.substitutions.append((tool_pattern(tool), os.path.join(bin_dir, tool)))

# Backends the tools were built with: RELAX_FEATURES when set, else what
# `relax-translate --version` says ("relax-translate 0.1.0 (backends: llvm, spirv)").
def built_backends():
    if "RELAX_FEATURES" in os.environ:
        return os.environ["RELAX_FEATURES"].split(",")
    import subprocess

    try:
        out = subprocess.run(
            [os.path.join(bin_dir, "relax-translate"), "--version"], capture_output=True, text=True
        ).stdout
    except OSError:
        return []
    found = re.search(r"\(backends: ([^)]*)\)", out)
    return found.group(1).split(",") if found else []


for feature in built_backends():
    if feature.strip() in ("llvm", "spirv"):
        config.available_features.add(feature.strip())
# The host architecture (tests of target-specific code generation name it).
config.available_features.add(platform.machine())
# External validators, when installed.
for tool in ["spirv-val", "ptxas"]:
    if shutil.which(tool, path=config.environment["PATH"]):
        config.available_features.add(tool)


# RELAX_CUDA_DRIVER names another CUDA driver library (the PTX simulator) for the tools.
if os.environ.get("RELAX_CUDA_DRIVER"):
    config.environment["RELAX_CUDA_DRIVER"] = os.environ["RELAX_CUDA_DRIVER"]


def cuda_available():
    """The CUDA engine's own test: the driver library loads, cuInit succeeds, a device exists."""
    import ctypes

    try:
        lib = ctypes.CDLL(os.environ.get("RELAX_CUDA_DRIVER") or "libcuda.so.1")
        count = ctypes.c_int(0)
        return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


if "llvm" in config.available_features and cuda_available():
    config.available_features.add("cuda")

# The PTX simulator (utils/cuda-sim): `relax-run --engine cuda --cuda-driver %cuda-sim`
# runs the CUDA engine without a GPU. `cargo build` puts the library next to the tools,
# `cargo test` into deps/ (a dev-dependency of relax-lit); the newer one is used.
cuda_sim_candidates = [os.path.join(bin_dir, "librelax_cuda_sim.so"), os.path.join(bin_dir, "deps", "librelax_cuda_sim.so")]
cuda_sim_built = [p for p in cuda_sim_candidates if os.path.isfile(p)]
cuda_sim = max(cuda_sim_built, key=os.path.getmtime) if cuda_sim_built else None
if cuda_sim:
    config.available_features.add("cuda-sim")
config.substitutions.append(("%cuda-sim", cuda_sim or cuda_sim_candidates[0]))
