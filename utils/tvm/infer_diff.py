"""Compares the types relax infers with the ones TVM infers.

usage: python infer_diff.py [--relax-opt PATH] [-q] [--strip] FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines (as for
`relax-opt --split-input-file`). Every module is parsed by TVM
(`tvm.script.from_source(text).script()`), which prints the struct info TVM infers for
unannotated bindings, and by relax (`relax-opt CHUNK`), and the two texts are diffed.
A module TVM rejects must be rejected by relax too (the error tests); the messages are
shown side by side, not compared.

With `--strip`, the annotations of bindings whose value is a call (`x: T = R.op(...)`,
`y: T = cls.f(...)`) are removed first, so that TVM's printed text of a module (the
corpus under `test/Corpus/`) becomes a test of inference for every op it uses.

Prints one line per module (`same`, `DIFFERENT`, `both reject`, `tvm rejects`,
`relax rejects`), a unified diff for differences, and a summary. Exit status 1 when
anything differs. A manual checking tool: it needs a Python with apache-tvm 0.25
(`~/.cache/relax-peers/tvm025/bin/python utils/tvm/infer_diff.py test/Parser/infer/*.rlx`).
"""
import difflib
import re
import sys

import tvm
from tvm.script import from_source

from common import default_tool, run_relax_opt, split_chunks

DEFAULT_RELAX_OPT = default_tool("relax-opt")


def chunks(text):
    """The modules of a file, with the line each starts at."""
    parts = split_chunks(text)
    line = 1
    for part in parts:
        yield line, part
        line += part.count("\n") + 1


def strip_directives(text):
    """Drops lit/FileCheck/verify-diagnostics comment lines (they do not matter to TVM)."""
    keep = []
    for l in text.splitlines():
        if re.match(r"\s*#\s*(RUN|CHECK|EXACT|expected-|COM)", l):
            continue
        keep.append(l)
    return "\n".join(keep) + "\n"


STRIP = re.compile(r"^(\s+)(\w+): (?:R\.|T\.)[^\n]*? = ((?:R\.|cls\.)\S)", re.M)


def strip_annotations(text):
    """`x: T = R.op(...)` becomes `x = R.op(...)` (match casts keep theirs)."""
    out = []
    for l in text.splitlines():
        if "R.match_cast" not in l:
            l = STRIP.sub(r"\1\2 = \3", l)
        out.append(l)
    return "\n".join(out) + "\n"


def run_tvm(text):
    try:
        mod = from_source(text)
        return True, mod.script().rstrip("\n") + "\n"
    except Exception as e:  # noqa: BLE001 - any failure is a rejection
        lines = [l.strip() for l in str(e).strip().splitlines()]
        msg = [l for l in lines if re.search(r"[Ee]rror", l)] or lines[-1:]
        return False, msg[0] if msg else type(e).__name__


def run_relax(relax_opt, text):
    p = run_relax_opt(relax_opt, text)
    if p.returncode == 0:
        return True, p.stdout
    return False, p.stderr.strip()


def main(argv):
    relax_opt = DEFAULT_RELAX_OPT
    quiet = False
    strip = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "-q":
            quiet = True
        elif a == "--strip":
            strip = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    counts = {}
    bad = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        for line, chunk in chunks(text):
            if "@I.ir_module" not in chunk and "@R.function" not in chunk:
                continue
            src = strip_directives(chunk)
            if strip:
                src = strip_annotations(src)
            t_ok, theirs = run_tvm(src)
            r_ok, ours = run_relax(relax_opt, src)
            where = f"{path}:{line}"
            if t_ok and r_ok:
                if theirs == ours:
                    verdict = "same"
                else:
                    verdict = "DIFFERENT"
            elif not t_ok and not r_ok:
                verdict = "both reject"
            elif t_ok:
                verdict = "relax rejects"
            else:
                verdict = "tvm rejects"
            counts[verdict] = counts.get(verdict, 0) + 1
            if verdict in ("same", "both reject") and quiet:
                continue
            print(f"{where}: {verdict}")
            if verdict == "DIFFERENT":
                bad += 1
                diff = difflib.unified_diff(
                    theirs.splitlines(), ours.splitlines(), "tvm", "relax", lineterm="", n=1
                )
                print("\n".join("    " + d for d in diff))
            elif verdict == "both reject" and not quiet:
                print("    tvm:   " + theirs)
                first = ours.splitlines()[0] if ours else ""
                print("    relax: " + first.split(": error: ", 1)[-1])
            elif verdict in ("relax rejects", "tvm rejects"):
                bad += 1
                print("    " + (ours if verdict == "relax rejects" else theirs).replace("\n", "\n    "))
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"tvm {tvm.__version__}: {summary}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
