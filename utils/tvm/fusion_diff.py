"""Differential check of relax's fusion against TVM's zero pipeline.

usage: python fusion_diff.py [--relax-opt PATH] [--stage zero|fuseops] [--tvm-legalized]
                             [--quiet] [--diff] FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines (the lit tests are such
files); a chunk that is not a whole module (no `@I.ir_module`) is skipped. For every
chunk:

1. TVM parses it and runs the zero pipeline (`relax.get_pipeline("zero")`: LegalizeOps,
   AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR), or with `--stage fuseops` the
   same passes up to FuseOps;
2. relax-opt runs `--legalize-ops --annotate-tir-op-pattern --fold-constant --fuse-ops
   --fuse-tir` (without `--fuse-tir` for `--stage fuseops`) on the same chunk;
3. for every Relax function of TVM's result, the number of kernel calls (`call_tir`,
   `call_tir_inplace`, and calls of `Primitive` functions at the fuseops stage) is
   compared with relax's: relax must not leave more kernels than TVM;
4. TVM parses relax's output, and the two modules are compared with
   `tvm_ffi.structural_equal(a, b, map_free_vars=True)`.

With `--tvm-legalized`, both sides start from TVM's LegalizeOps result (relax-opt reads
the text TVM prints and skips `--legalize-ops`), which separates fusion from differences
in legalization (ops relax does not legalize yet).

A chunk is reported `same text`, `equal` (structurally equal, printed differently),
`counts ok` (not structurally equal, but no function has more kernels than TVM's),
`MORE KERNELS` (some function has more kernels than TVM's) or `skipped` (TVM could not
parse or compile the chunk). `--diff` prints a unified diff of TVM's text against
relax's for chunks that are not equal. The last line sums up. Exit status 1 when some
chunk has more kernels than TVM's or relax-opt fails.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`). relax-opt
defaults to `$CARGO_TARGET_DIR/debug/relax-opt`, else `target/debug/relax-opt`.
"""
import difflib
import re
import sys

import tvm  # noqa: F401  (registers the script parser)
from tvm import relax
from tvm.script import from_source

from common import default_tool, last_line, run_relax_opt, split_chunks, structural_equal


TVM_PASSES = {
    "zero": lambda: [
        relax.transform.LegalizeOps(),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
    ],
    "fuseops": lambda: [
        relax.transform.LegalizeOps(),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
    ],
}

RELAX_FLAGS = {
    "zero": ["--legalize-ops", "--annotate-tir-op-pattern", "--fold-constant", "--fuse-ops", "--fuse-tir"],
    "fuseops": ["--legalize-ops", "--annotate-tir-op-pattern", "--fold-constant", "--fuse-ops"],
}


def kernel_counts(mod):
    """Kernel calls per Relax function that is not itself Primitive."""
    prim_relax = set()
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function) and func.attrs is not None and "Primitive" in func.attrs:
            prim_relax.add(gv.name_hint)
    counts = {}
    for gv, func in mod.functions.items():
        if not isinstance(func, relax.Function) or gv.name_hint in prim_relax:
            continue
        n = [0]

        def visit(e, n=n):
            if isinstance(e, relax.Call):
                op = e.op
                if isinstance(op, tvm.ir.Op) and op.name in ("relax.call_tir", "relax.call_tir_inplace"):
                    n[0] += 1
                elif isinstance(op, relax.GlobalVar) and op.name_hint in prim_relax:
                    n[0] += 1

        relax.analysis.post_order_visit(func.body, visit)
        counts[gv.name_hint] = n[0]
    return counts


def text_counts(text):
    """Kernel calls per Relax function, read from printed text (for modules TVM cannot
    parse back, such as those with constants whose metadata is not printed)."""
    funcs = {}
    cur = None
    relax_fn = False
    prim_relax = set()
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("@R.function"):
            relax_fn = True
            continue
        m = re.match(r"def (\w+)\(", s)
        if m and line.startswith("    def"):
            cur = m.group(1) if relax_fn else None
            relax_fn = False
            if cur:
                funcs[cur] = []
            continue
        if s.startswith("@"):
            relax_fn = False
        if cur:
            if '"Primitive": True' in s:
                prim_relax.add(cur)
            funcs[cur].append(s)
    counts = {}
    for name, lines in funcs.items():
        if name in prim_relax:
            continue
        n = 0
        for s in lines:
            n += len(re.findall(r"R\.call_tir(?:_inplace)?\(", s))
            n += sum(1 for p in prim_relax if re.search(r"\bcls\." + p + r"\(", s))
        counts[name] = n
    return counts


def check_chunk(chunk, relax_opt, stage, tvm_legalized=False):
    """Returns (status, detail, tvm_counts, relax_counts)."""
    flags = RELAX_FLAGS[stage]
    try:
        theirs_mod = from_source(chunk)
        passes = TVM_PASSES[stage]()
        if tvm_legalized:
            chunk = passes[0](theirs_mod).script()
            # Both sides continue from the printed text (names are made unique there).
            theirs_mod = from_source(chunk)
            passes = passes[1:]
            flags = flags[1:]
        for p in passes:
            theirs_mod = p(theirs_mod)
        theirs = theirs_mod.script()
    except Exception as e:  # noqa: BLE001 - any TVM failure skips the chunk
        return "skipped", f"TVM: {last_line(e)}", {}, {}
    run = run_relax_opt(relax_opt, chunk, flags)
    tc = kernel_counts(theirs_mod)
    if run.returncode != 0:
        return "FAILED", f"relax-opt failed:\n{run.stderr}", tc, {}
    ours = run.stdout
    diff = "".join(
        difflib.unified_diff(
            theirs.rstrip("\n").splitlines(True), ours.rstrip("\n").splitlines(True), "tvm", "relax"
        )
    )
    try:
        ours_mod = from_source(ours)
    except Exception as e:  # noqa: BLE001
        if "metadata[" not in ours:
            return "FAILED", f"TVM cannot parse relax's output: {last_line(e)}\n{diff}", tc, {}
        # Constants without printed data: TVM cannot read either side back.
        oc = text_counts(ours)
        more = [f for f in tc if oc.get(f, 0) > tc[f]]
        if more:
            return "MORE KERNELS", f"functions: {', '.join(more)}\n{diff}", tc, oc
        if theirs.rstrip("\n") == "\n".join(l for l in ours.rstrip("\n").splitlines() if not l.startswith("# metadata[")):
            return "same text", diff, tc, oc
        return "counts ok", diff, tc, oc
    oc = kernel_counts(ours_mod)
    more = [f for f in tc if oc.get(f, 0) > tc[f]]
    same = structural_equal(theirs_mod, ours_mod, map_free_vars=True)
    if not same:
        # TVM's own result does not always survive its print/parse round trip; compare
        # with the re-parsed text then.
        try:
            same = structural_equal(from_source(theirs), ours_mod, map_free_vars=True)
        except Exception:  # noqa: BLE001
            same = False
    if same:
        return ("same text" if theirs.rstrip("\n") == ours.rstrip("\n") else "equal"), diff, tc, oc
    if more:
        return "MORE KERNELS", f"functions: {', '.join(more)}\n{diff}", tc, oc
    return "counts ok", diff, tc, oc


def main(argv):
    relax_opt = default_tool("relax-opt")
    quiet = False
    show_diff = False
    stage = "zero"
    tvm_legalized = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "--stage":
            stage = next(it)
        elif a.startswith("--stage="):
            stage = a.split("=", 1)[1]
        elif a == "--tvm-legalized":
            tvm_legalized = True
        elif a == "--quiet":
            quiet = True
        elif a == "--diff":
            show_diff = True
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            files.append(a)
    if not files or stage not in TVM_PASSES:
        print(__doc__)
        return 2
    counts = {}
    total_tvm = total_ours = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        chunks = split_chunks(text)
        for i, chunk in enumerate(chunks):
            if "@I.ir_module" not in chunk:
                continue
            status, detail, tc, oc = check_chunk(chunk, relax_opt, stage, tvm_legalized)
            counts[status] = counts.get(status, 0) + 1
            if status not in ("skipped", "FAILED"):
                total_tvm += sum(tc.values())
                total_ours += sum(oc.get(f, 0) for f in tc)
            if quiet and status in ("same text", "equal"):
                continue
            where = f"{path} chunk {i}" if len(chunks) > 1 else path
            kernels = ", ".join(f"{f}: tvm {tc[f]} relax {oc.get(f, '-')}" for f in sorted(tc))
            print(f"{where}: {status}" + (f" ({kernels})" if kernels else ""))
            if status in ("skipped", "FAILED"):
                print("    " + detail.replace("\n", "\n    "))
            elif show_diff and status != "same text" and detail:
                print("    " + detail.replace("\n", "\n    "))
    print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f"; kernel calls: tvm {total_tvm}, relax {total_ours}")
    return 1 if counts.get("MORE KERNELS") or counts.get("FAILED") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
