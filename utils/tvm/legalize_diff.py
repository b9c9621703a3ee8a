"""Differential check of `relax-opt --legalize-ops` against TVM's LegalizeOps.

usage: python legalize_diff.py [--relax-opt PATH] [--quiet] [--names] FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines (the lit tests under
test/Transform/legalize-ops are such files). For every chunk:

1. TVM parses it and runs `relax.transform.LegalizeOps()`;
2. relax-opt runs `--legalize-ops` on the same chunk;
3. TVM parses relax's output, and the two modules are compared with
   `tvm_ffi.structural_equal(a, b, map_free_vars=True)`.

When TVM's own result does not survive TVM's print/parse round trip (it happens), the
comparison is with TVM's re-parsed text instead.

A chunk is reported `same text` (relax printed exactly what TVM prints), `equal`
(structurally equal, printed differently; `--names` shows the diff) or `DIFFERENT`
(with a unified diff of TVM's text against relax's). `skipped` means TVM could not
parse or legalize the chunk. Exit status 1 when any chunk differs.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`). relax-opt
defaults to `$CARGO_TARGET_DIR/debug/relax-opt`, else `target/debug/relax-opt`.
"""
import difflib
import sys

import tvm  # noqa: F401  (registers the script parser)
from tvm import relax
from tvm.script import from_source

from common import default_tool, last_line, run_relax_opt, split_chunks, structural_equal


def check_chunk(chunk, relax_opt):
    """Returns (status, detail)."""
    try:
        theirs_mod = relax.transform.LegalizeOps()(from_source(chunk))
        theirs = theirs_mod.script()
    except Exception as e:  # noqa: BLE001 - any TVM failure skips the chunk
        return "skipped", f"TVM: {last_line(e)}"
    run = run_relax_opt(relax_opt, chunk, ["--legalize-ops"])
    if run.returncode != 0:
        return "DIFFERENT", f"relax-opt failed:\n{run.stderr}"
    ours = run.stdout
    diff = "".join(
        difflib.unified_diff(
            theirs.rstrip("\n").splitlines(True),
            ours.rstrip("\n").splitlines(True),
            "tvm",
            "relax",
        )
    )
    try:
        ours_mod = from_source(ours)
    except Exception as e:  # noqa: BLE001
        return "DIFFERENT", f"TVM cannot parse relax's output: {last_line(e)}\n{diff}"
    if not structural_equal(theirs_mod, ours_mod, map_free_vars=True):
        # Some TVM results do not survive TVM's own print/parse round trip (an int32
        # buffer load used as an index, for one); compare with the re-parsed text then.
        try:
            reparsed = from_source(theirs)
        except Exception:  # noqa: BLE001
            reparsed = None
        if reparsed is None or structural_equal(theirs_mod, reparsed, map_free_vars=True):
            return "DIFFERENT", diff
        if not structural_equal(reparsed, ours_mod, map_free_vars=True):
            return "DIFFERENT", diff
        if theirs.rstrip("\n") == ours.rstrip("\n"):
            return "same text", "(TVM's own output does not round-trip through its parser)"
        return "equal", "(compared with TVM's re-parsed output)\n" + diff
    if theirs.rstrip("\n") == ours.rstrip("\n"):
        return "same text", ""
    return "equal", diff


def main(argv):
    relax_opt = default_tool("relax-opt")
    quiet = False
    names = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "--quiet":
            quiet = True
        elif a == "--names":
            names = True
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    counts = {}
    for path in files:
        text = open(path, encoding="utf-8").read()
        chunks = split_chunks(text)
        for i, chunk in enumerate(chunks):
            if "@I.ir_module" not in chunk:
                continue
            status, detail = check_chunk(chunk, relax_opt)
            counts[status] = counts.get(status, 0) + 1
            if quiet and status in ("same text", "equal"):
                continue
            print(f"{path} chunk {i}: {status}")
            if detail and (status not in ("equal",) or names):
                print("    " + detail.replace("\n", "\n    "))
    print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return 1 if counts.get("DIFFERENT") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
