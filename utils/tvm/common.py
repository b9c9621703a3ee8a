"""What the TVM comparison scripts of utils/tvm share: where the relax binaries are,
TVM's structural equality, splitting a test file into modules, running relax-opt on one
module, and the last line of an exception's message.

The scripts import it as `common` (Python puts the script's folder on the path).
"""
import os
import re
import subprocess
import tempfile

import tvm

try:  # TVM 0.25 moved structural equality into tvm_ffi.
    from tvm_ffi import structural_equal
except ImportError:  # pragma: no cover - older releases
    structural_equal = tvm.ir.structural_equal

# A `# -----` line: the separator of the modules of a test file (`--split-input-file`).
CHUNK_SEPARATOR = re.compile(r"(?m)^# -----.*\n")


def default_tool(name):
    """`$CARGO_TARGET_DIR/debug/NAME`, else `target/debug/NAME` of this checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    return os.path.join(target, "debug", name)


def last_line(e):
    """The last non-blank line of an exception's message (TVM puts the error there)."""
    lines = [l for l in str(e).strip().splitlines() if l.strip()]
    return lines[-1] if lines else repr(e)


def split_chunks(text):
    """The modules of a test file: the text between `# -----` lines."""
    return CHUNK_SEPARATOR.split(text)


def run_relax_opt(relax_opt, text, flags=()):
    """Runs `RELAX_OPT FILE FLAGS...` on `text` (written to a temporary file); returns the
    `subprocess.CompletedProcess` with text stdout and stderr."""
    with tempfile.NamedTemporaryFile("w", suffix=".rlx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return subprocess.run([relax_opt, path, *flags], capture_output=True, text=True)
    finally:
        os.unlink(path)
