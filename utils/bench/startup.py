#!/usr/bin/env python3
"""Start-up benchmark: how long `relax-run --engine jit` takes before it computes, cold
(every kernel compiled), warm (every kernel from the compile cache), and TVM's
`tvm.compile` plus loading the VM on the same text (docs/codegen.md, "The compile cache").

    python3 utils/bench/startup.py [MODULE.rlx] [--sym s=1 --sym p=16] [--repeat 5]
                                   [--tvm-python PATH] [--bin DIR]

MODULE defaults to the TVM-printed decoder block `shared/samples/tvm-0.27/decoder/
00_input.rlx` (hidden 256). relax: each run is a fresh `relax-run MODULE --engine jit
--seed 1 --sym ... --repeat 2` process; its own report line `jit: N kernels ready in S s`
gives the JIT's seconds, the process's wall time the whole start-up (parse, verify,
pipeline, JIT, one call). Cold runs use `--no-cache`; warm runs share a fresh
`--cache-dir` that one untimed run filled. TVM (with `--tvm-python`, a Python with
apache-tvm, e.g. ~/.cache/relax-peers/tvm027/bin/python): `tvm.script.from_source`,
`tvm.compile(mod, "llvm")` and `relax.VirtualMachine(ex, tvm.cpu())` timed inside one
process (its import of tvm not counted). The library row: the module compiled once
with `relax-translate --emit=lib` (docs/library.md), then fresh `relax-run LIB.so --seed 1
--sym ... --repeat 2` processes (load the library, read the executable, one call: no
parser, no pipeline, no LLVM). Medians of `--repeat` runs. Needs a release build:
`cargo build --release -p relax-run -p relax-translate`.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODULE = os.path.join(os.path.dirname(ROOT), "shared", "samples", "tvm-0.27", "decoder", "00_input.rlx")

TVM_SCRIPT = r"""
import sys, time
import tvm
from tvm import relax
text = open(sys.argv[1]).read()
t0 = time.perf_counter()
mod = tvm.script.from_source(text)
ex = tvm.compile(mod, target="llvm") if hasattr(tvm, "compile") else relax.build(mod, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
print(time.perf_counter() - t0)
"""


def relax_run(relax, module, syms, extra):
    """One relax-run process: (wall seconds, JIT seconds, kernels, cached)."""
    # Unchecked, as TVM's build and a library are (relax-run checks modules by default).
    cmd = [relax, module, "--engine", "jit", "--unchecked", "--seed", "1", "--repeat", "2", *extra]
    for s in syms:
        cmd += ["--sym", s]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"relax-run failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")
    m = re.search(r"jit: (\d+) kernels ready in ([0-9.]+) s \((\d+) from the compile cache[;)]", r.stderr)
    if not m:
        sys.exit(f"relax-run printed no `jit:` line:\n{r.stderr[-2000:]}")
    return wall, float(m.group(2)), int(m.group(1)), int(m.group(3))


def library_run(relax, lib, syms):
    """One relax-run process on a compiled library: (wall seconds, load seconds)."""
    cmd = [relax, lib, "--seed", "1", "--repeat", "2", *[x for s in syms for x in ("--sym", s)]]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"relax-run failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")
    m = re.search(r"library: (\d+) kernels ready in ([0-9.]+) s", r.stderr)
    if not m:
        sys.exit(f"relax-run printed no `library:` line:\n{r.stderr[-2000:]}")
    return wall, float(m.group(2))


def tvm_compile(python, module):
    r = subprocess.run([python, "-c", TVM_SCRIPT, module], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"TVM failed:\n{r.stderr[-2000:]}")
    return float(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("module", nargs="?", default=DEFAULT_MODULE)
    ap.add_argument("--sym", action="append", default=None, help="NAME=INT for relax-run (default s=1, p=16)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tvm-python")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    a = ap.parse_args()
    syms = a.sym if a.sym is not None else ["s=1", "p=16"]
    relax = os.path.join(a.bin, "relax-run")
    if not os.path.exists(relax):
        sys.exit(f"{relax} is missing: cargo build --release -p relax-run")
    if not os.path.exists(a.module):
        sys.exit(f"no module {a.module}")
    cold = [relax_run(relax, a.module, syms, ["--no-cache"]) for _ in range(a.repeat)]
    with tempfile.TemporaryDirectory() as cache:
        relax_run(relax, a.module, syms, ["--cache-dir", cache])
        warm = [relax_run(relax, a.module, syms, ["--cache-dir", cache]) for _ in range(a.repeat)]
    translate = os.path.join(a.bin, "relax-translate")
    lib_runs = None
    if os.path.exists(translate):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "module.so")
            subprocess.run([translate, a.module, "--emit=lib", "-o", lib], check=True)
            lib_runs = [library_run(relax, lib, syms) for _ in range(a.repeat)]
    kernels = cold[0][2]
    assert all(w[3] == kernels for w in warm), "a warm run missed the cache"
    med = lambda xs: statistics.median(xs)  # noqa: E731
    print(f"module: {os.path.relpath(a.module, os.getcwd())} ({kernels} kernels), medians of {a.repeat} runs")
    print("| start-up | whole process s | kernels ready s |")
    print("|---|---:|---:|")
    print(f"| relax-run, cold (`--no-cache`) | {med([c[0] for c in cold]):.3f} | {med([c[1] for c in cold]):.3f} |")
    print(f"| relax-run, warm (compile cache) | {med([w[0] for w in warm]):.3f} | {med([w[1] for w in warm]):.3f} |")
    if lib_runs:
        print(f"| relax-run LIB.so (`--emit=lib`) | {med([r[0] for r in lib_runs]):.3f} | {med([r[1] for r in lib_runs]):.4f} |")
    if a.tvm_python:
        t = med([tvm_compile(a.tvm_python, a.module) for _ in range(a.repeat)])
        print(f"| TVM: from_source + tvm.compile + VirtualMachine | {t:.3f} | - |")


if __name__ == "__main__":
    main()
