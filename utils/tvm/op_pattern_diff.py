"""Compares the op_pattern that TVM's AnnotateTIROpPattern gives every PrimFunc with ours.

usage: python op_pattern_diff.py RELAX_OPT FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines (the lit tests under
test/Transform/annotate-tir-op-pattern/ do). Every chunk is parsed by TVM and annotated
by `relax.transform.AnnotateTIROpPattern()`; the same chunk goes through
`RELAX_OPT --annotate-tir-op-pattern`, and the `op_pattern` attribute of each PrimFunc in
its output is read back. The script prints one line per PrimFunc and a summary, and exits
1 when any value differs (or when only one side fails on a chunk). A chunk that this
TVM cannot parse (another release's dialect) is reported and skipped: run the script with
the matching TVM then.

A manual check for pass authors; it needs a Python with apache-tvm (0.25 for the project's
dialect, 0.27 for `samples/tvm-0.27`).
"""
import re
import sys

import tvm
from tvm import relax
from tvm.script import from_source

from common import run_relax_opt, split_chunks

try:  # TVM 0.25+ calls TensorIR `tirx`; older releases `tir`.
    from tvm.tirx import PrimFunc
except ImportError:  # pragma: no cover
    from tvm.tir import PrimFunc


def tvm_patterns(chunk):
    """{name: op_pattern} after TVM's pass; raises on a parse or pass failure."""
    mod = relax.transform.AnnotateTIROpPattern()(from_source(chunk))
    return {
        gv.name_hint: int(f.attrs["op_pattern"])
        for gv, f in mod.functions.items()
        if isinstance(f, PrimFunc)
    }


DEF_RE = re.compile(r"^    @T\.prim_func.*\n    def (\w+)\(", re.M)
ATTR_RE = re.compile(r'"op_pattern": (?:T\.\w+\()?(-?\d+|True|False)')


def our_patterns(relax_opt, chunk):
    """{name: op_pattern} from relax-opt's printed output, or an error string."""
    r = run_relax_opt(relax_opt, chunk, ["--annotate-tir-op-pattern"])
    if r.returncode != 0:
        return r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}"
    out = {}
    defs = list(DEF_RE.finditer(r.stdout))
    for i, d in enumerate(defs):
        end = defs[i + 1].start() if i + 1 < len(defs) else len(r.stdout)
        # The attribute line comes first in the body; stop at the next function.
        body = r.stdout[d.end() : end]
        m = ATTR_RE.search(body.split("\n    @", 1)[0])
        v = m.group(1) if m else None
        out[d.group(1)] = {"True": 1, "False": 0}.get(v, int(v) if v is not None else None)
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    relax_opt, paths = argv[0], argv[1:]
    print(f"TVM {tvm.__version__}")
    funcs = same = bad = skipped = both_fail = 0
    for path in paths:
        text = open(path, encoding="utf-8").read()
        chunks = split_chunks(text)
        for i, chunk in enumerate(chunks):
            if "@I.ir_module" not in chunk:
                continue
            where = f"{path}#{i}"
            try:
                theirs = tvm_patterns(chunk)
            except Exception as e:  # noqa: BLE001 - any TVM failure
                lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
                errs = [ln for ln in lines if "error" in ln.lower()]
                msg = (errs or lines or [type(e).__name__])[0]
                ours = our_patterns(relax_opt, chunk)
                if isinstance(ours, str):
                    print(f"{where}: both fail (tvm: {msg}; ours: {ours})")
                    both_fail += 1
                else:
                    print(f"{where}: SKIPPED, TVM fails ({msg}); ours: {ours}")
                    skipped += 1
                continue
            ours = our_patterns(relax_opt, chunk)
            if isinstance(ours, str):
                print(f"{where}: DIFFERENT, relax-opt fails: {ours}")
                bad += 1
                continue
            for name in sorted(set(theirs) | set(ours)):
                t, o = theirs.get(name), ours.get(name)
                funcs += 1
                if t == o:
                    same += 1
                    print(f"{where}: {name}: {t}")
                else:
                    bad += 1
                    print(f"{where}: {name}: DIFFERENT tvm={t} ours={o}")
    print(
        f"{funcs} PrimFuncs compared: {same} same, {bad} different; "
        f"{both_fail} chunks fail on both sides, {skipped} chunks skipped"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
