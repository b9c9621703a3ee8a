"""Runs TVM's version of relax passes on a test input and diffs the result with ours.

usage: python pass_diff.py FILE.rlx RELAX_OPT PASS [PASS ...]

FILE may hold several modules separated by `# -----` lines. Each is parsed by TVM,
transformed by the TVM passes named (class names in tvm.relax.transform, e.g.
CanonicalizeBindings DeadCodeElimination), printed, and compared with
`RELAX_OPT --split-input-file --<kebab-case pass> ...` on the same chunk. A manual
checking tool for pass authors: it needs a Python with apache-tvm 0.25.
"""
import re
import sys

import tvm
from tvm import relax
from tvm.script import from_source

from common import run_relax_opt, split_chunks


def kebab(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    path, relax_opt, passes = argv[0], argv[1], argv[2:]
    chunks = split_chunks(open(path, encoding="utf-8").read())
    bad = 0
    for i, chunk in enumerate(chunks):
        if "@I.ir_module" not in chunk:
            continue
        mod = from_source(chunk)
        for p in passes:
            mod = getattr(relax.transform, p)()(mod)
        theirs = mod.script().rstrip("\n") + "\n"
        flags = [f"--{kebab(p)}" for p in passes]
        ours = run_relax_opt(relax_opt, chunk, flags).stdout
        if ours == theirs:
            print(f"chunk {i}: same")
        else:
            bad += 1
            print(f"chunk {i}: DIFFERENT\n--- tvm\n{theirs}--- ours\n{ours}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
