"""Differential check of relax's memory planning against TVM's.

usage: python memory_diff.py [--relax-opt PATH] [--quiet] [--text] [--run] FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines, or be a transcript with
`=== ` section lines (the first section is used). For every module:

1. TVM parses it; if a Relax function still calls high-level ops, TVM's `LegalizeOps`
   runs first and its printed result is the common input of both sides;
2. TVM runs its pipeline up to memory planning (RewriteDataflowReshape, ToNonDataflow,
   RemovePurityChecking, CallTIRRewrite, StaticPlanBlockMemory), and relax the same
   passes (`--rewrite-dataflow-reshape ... --plan-memory`);
3. per Relax function, the numbers of `R.memory.alloc_storage` and the sum of their
   constant sizes ("static bytes") are compared, and TVM parses relax's output and
   compares the modules with `tvm_ffi.structural_equal(a, b, map_free_vars=True)`;
4. both sides then run LowerAllocTensor and KillAfterLastUse, compared the same way.

Verdicts per module: `equal` (structurally equal after planning and after the kills),
`better` (fewer storages or fewer static bytes than TVM in some function and no worse in
any), `tvm-invalid` (TVM's planner produced IR its own parser rejects, such as a storage
allocated in one `if` branch and used in the other; relax's plan is valid), `tvm-unsafe`
(relax's self-check, `plan-memory{check-only=true}`, finds that TVM's plan reuses
memory an alias still reads, as with `match_cast`; storage counts are then not
comparable), `same-count` (counts and bytes equal, structure differs: e.g. TVM's planner
missed an alias), `WORSE` (more storages or more static bytes somewhere), `FAILED`
(relax-opt failed), `skipped` (TVM cannot parse or plan the module). `--text` prints
the two planned `main` functions for every module that is not `equal`.

With `--run`, the numbers are compared too: every Relax function whose parameters and
result are tensors runs on random inputs (symbolic variables 3, 5, 2, 4, ...) in TVM's VM
(`tvm.compile` of the common input with the `default_build` pipeline: TVM's own planning, no fusion) and in `relax-run` on
relax's planned, lowered and killed module, and in `relax-run` on the unplanned common
input; results must agree to 1e-4. Modules with a kernel that stores nothing (`T.evaluate(0)`,
as in TVM's planning tests) and functions the unplanned module cannot run either (an
unknown packed function) are not compared; inputs that already allocate explicitly
(`R.builtin.alloc_tensor`) are not compared with TVM, whose VM does not clear memory. A difference between relax's planned and unplanned
numbers is always the verdict `NUMBERS` (also for `tvm-invalid` modules, which TVM does not
run); a difference from TVM's is `NUMBERS` unless TVM's plan is unsafe (`tvm-unsafe`,
TVM's numbers are then the wrong ones).

Exit status 1 when any module is WORSE, NUMBERS or FAILED. Run it with TVM 0.25's Python
(`~/.cache/relax-peers/tvm025/bin/python`). relax-opt defaults to
`$CARGO_TARGET_DIR/debug/relax-opt`, else `target/debug/relax-opt`.
"""
import os
import re
import subprocess
import sys
import tempfile

import tvm  # noqa: F401  (registers the script parser)
from tvm import relax
from tvm.script import from_source

from common import default_tool, run_relax_opt, split_chunks, structural_equal

PLAN = ["RewriteDataflowReshape", "ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory"]
KILL = ["LowerAllocTensor", "KillAfterLastUse"]
OURS_PLAN = [
    "--rewrite-dataflow-reshape",
    "--to-non-dataflow",
    "--remove-purity-checking",
    "--call-tir-rewrite",
    "--plan-memory",
]


def last_line(e):
    """The last line of an exception's message or of an error output that mentions an
    error, else its last line (unlike `common.last_line`, which takes the last line: TVM's
    memory passes and relax-opt's diagnostics put notes after the error line)."""
    lines = [l for l in str(e).strip().splitlines() if l.strip()]
    msgs = [l for l in lines if "error" in l.lower() or "Error" in l]
    return (msgs or lines or [repr(e)])[-1].strip()


def run_tvm(mod, names):
    for n in names:
        mod = getattr(relax.transform, n)()(mod)
    return mod


def has_high_level_ops(mod):
    """True when a Relax function calls an op other than the call/memory/VM family."""
    found = []

    def visit(e):
        if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.Op):
            name = e.op.name
            if not (name.startswith("relax.call_") or name.startswith("relax.memory.")
                    or name.startswith("relax.builtin.") or name.startswith("relax.vm.")
                    or name in ("relax.invoke_closure", "relax.invoke_pure_closure", "relax.make_closure",
                                "relax.null_value", "relax.print", "relax.assert_op", "relax.shape_of",
                                "relax.reshape")):
                found.append(name)

    for _, f in mod.functions.items():
        if isinstance(f, relax.Function):
            relax.analysis.post_order_visit(f, visit)
    return bool(found)


def storage_stats(mod):
    """{function name: (number of alloc_storage, static bytes)}."""
    out = {}
    for gv, f in mod.functions.items():
        if not isinstance(f, relax.Function):
            continue
        count = [0, 0]

        def visit(e):
            if isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.Op) and e.op.name == "relax.memory.alloc_storage":
                count[0] += 1
                size = e.args[0]
                if isinstance(size, relax.ShapeExpr) and len(size.values) == 1:
                    v = size.values[0]
                    if isinstance(v, tvm.tirx.IntImm) if hasattr(tvm, "tirx") else isinstance(v, tvm.tir.IntImm):
                        count[1] += int(v.value)

        relax.analysis.post_order_visit(f, visit)
        out[gv.name_hint] = tuple(count)
    return out


def relax_equal(a, b):
    """Structural equality of the Relax functions of two modules (planning does not
    touch PrimFuncs; comparing them would compare TVM's own print/parse round trips)."""
    fa = {gv.name_hint: f for gv, f in a.functions.items() if isinstance(f, relax.Function)}
    fb = {gv.name_hint: f for gv, f in b.functions.items() if isinstance(f, relax.Function)}
    if set(fa) != set(fb):
        return False
    return all(structural_equal(fa[n], fb[n], map_free_vars=True) for n in fa)


def strip_alloc_sinfo(text):
    """Drops `sinfo_args=` from `R.builtin.alloc_tensor(...)`: TVM prints it but its
    parser rejects it, so TVM cannot read its own (or relax's) text otherwise."""
    out, i = [], 0
    key = ", sinfo_args=("
    while True:
        j = text.find("R.builtin.alloc_tensor(", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        k = text.find(key, j)
        end_line = text.find("\n", j)
        if k < 0 or (end_line >= 0 and k > end_line):
            out.append(text[i : j + 1])
            i = j + 1
            continue
        depth, m = 1, k + len(key)
        while depth and m < len(text):
            depth += {"(": 1, ")": -1}.get(text[m], 0)
            m += 1
        out.append(text[i:k])
        i = m


def main_text(text):
    m = re.search(r"(?ms)^    @R\.function[^\n]*\n    def main\(.*", text)
    return m.group(0) if m else text


def check_module(chunk, relax_opt_path, run=False):
    """Returns (verdict, detail, texts)."""
    run_nums = run
    # The canonical (TVM 0.25) spelling of the chunk, which TVM 0.25 reads.
    canon = run_relax_opt(relax_opt_path, chunk, [])
    if canon.returncode != 0:
        return "skipped", f"relax-opt cannot read it: {last_line(canon.stderr)}", None
    try:
        mod = from_source(strip_alloc_sinfo(canon.stdout))
        if has_high_level_ops(mod):
            mod = relax.transform.LegalizeOps()(mod)
        source = strip_alloc_sinfo(mod.script())
        mod = from_source(source)
        theirs = run_tvm(mod, PLAN)
        theirs_killed = run_tvm(theirs, KILL)
    except Exception as e:  # noqa: BLE001 - any TVM failure skips the module
        return "skipped", f"TVM: {last_line(e)}", None
    try:
        # Compare with TVM's result as its own parser reads it back (what relax's side
        # goes through too).
        theirs_text = strip_alloc_sinfo(theirs.script())
        theirs = from_source(strip_alloc_sinfo(theirs_text))
        theirs_killed = from_source(strip_alloc_sinfo(theirs_killed.script()))
    except Exception as e:  # noqa: BLE001 - TVM planned invalid IR
        run = run_relax_opt(relax_opt_path, source, OURS_PLAN)
        ok = run.returncode == 0 and run_relax_opt(relax_opt_path, run.stdout, ["--kill-after-last-use"]).returncode == 0
        verdict = "tvm-invalid" if ok else "FAILED"
        detail = f"TVM's planned module does not parse: {last_line(e)}"
        if ok and run_nums:
            killed = run_relax_opt(relax_opt_path, run.stdout, ["--lower-alloc-tensor", "--kill-after-last-use"])
            _, plan_diffs, compared = run_numbers(mod, killed.stdout, relax_opt_path, source, with_tvm=False)
            if plan_diffs:
                return "NUMBERS", "\n".join(plan_diffs), (main_text(theirs_text), main_text(run.stdout))
            detail += f"\nnumbers: {compared} function(s) run, equal to the unplanned module's"
        return verdict, detail, (main_text(theirs_text), main_text(run.stdout))
    if run_relax_opt(relax_opt_path, source, []).returncode != 0:
        # relax cannot read TVM's legalized text: start from relax's legalization.
        legal = run_relax_opt(relax_opt_path, canon.stdout, ["--legalize-ops"])
        if legal.returncode != 0:
            return "skipped", f"relax cannot read TVM's legalized text: {last_line(legal.stderr)}", None
        try:
            source = strip_alloc_sinfo(legal.stdout)
            mod = from_source(source)
            theirs = run_tvm(mod, PLAN)
            theirs_killed = run_tvm(theirs, KILL)
            theirs = from_source(strip_alloc_sinfo(theirs.script()))
            theirs_killed = from_source(strip_alloc_sinfo(theirs_killed.script()))
        except Exception as e:  # noqa: BLE001
            return "skipped", f"TVM on relax's legalized text: {last_line(e)}", None
    run = run_relax_opt(relax_opt_path, source, OURS_PLAN)
    if run.returncode != 0:
        return "FAILED", f"relax-opt planning failed:\n{run.stderr}", None
    ours_text = run.stdout
    run2 = run_relax_opt(relax_opt_path, ours_text, ["--lower-alloc-tensor", "--kill-after-last-use"])
    if run2.returncode != 0:
        return "FAILED", f"relax-opt --lower-alloc-tensor --kill-after-last-use failed:\n{run2.stderr}", None
    try:
        ours = from_source(strip_alloc_sinfo(ours_text))
        ours_killed = from_source(strip_alloc_sinfo(run2.stdout))
    except Exception as e:  # noqa: BLE001
        return "FAILED", f"TVM cannot parse relax's output: {last_line(e)}", None
    texts = (main_text(theirs.script()), main_text(ours_text))
    st, so = storage_stats(theirs), storage_stats(ours)
    # Is TVM's plan safe? relax's self-check reads it (`plan-memory{check-only=true}`).
    check = run_relax_opt(relax_opt_path, theirs_text, ["--pass-pipeline=plan-memory{check-only=true}"])
    unsafe = check.returncode != 0 and "is unsafe" in check.stderr
    worse, better = [], []
    for name in sorted(set(st) | set(so)):
        (ct, bt), (co, bo) = st.get(name, (0, 0)), so.get(name, (0, 0))
        line = f"{name}: storages {ct} -> {co}, static bytes {bt} -> {bo}"
        if co > ct or bo > bt:
            worse.append(line)
        elif co < ct or bo < bt:
            better.append(line)
    numbers = []
    if run:
        diffs, plan_diffs, compared = run_numbers(mod, run2.stdout, relax_opt_path, source)
        if plan_diffs or (diffs and not unsafe):
            return "NUMBERS", "\n".join(plan_diffs + diffs), texts
        if diffs:
            numbers = [f"numbers: {compared} function(s) run, equal to the unplanned module's, "
                       f"{len(diffs)} difference(s) from TVM's (TVM's plan is unsafe)"]
        else:
            numbers = [f"numbers: {compared} function(s) run, equal to TVM's and the unplanned module's"]
    if unsafe:
        msg = [l.split("error: ", 1)[1] for l in check.stderr.splitlines() if "is unsafe" in l]
        return "tvm-unsafe", "\n".join(msg + worse + better + numbers), texts
    if worse:
        return "WORSE", "\n".join(worse + better + numbers), texts
    equal = relax_equal(theirs, ours)
    equal_killed = relax_equal(theirs_killed, ours_killed)
    if better:
        return "better", "\n".join(better + numbers), texts
    if equal and equal_killed:
        return "equal", "\n".join(numbers), None
    where = "after planning" if not equal else "after the kills"
    return "same-count", "\n".join([f"structure differs {where}"] + numbers), texts


SYM_VALUES = [3, 5, 2, 4, 6, 7, 8, 9]


def has_stub_kernel(mod):
    """True when some PrimFunc of `mod` stores nothing (`T.evaluate(0)` bodies)."""
    tir = getattr(tvm, "tirx", None) or tvm.tir
    for _, f in mod.functions.items():
        if not isinstance(f, tir.PrimFunc):
            continue
        stores = []
        tir.stmt_functor.post_order_visit(f.body, lambda n: stores.append(1) if isinstance(n, tir.BufferStore) else None)
        if not stores:
            return True
    return False


def run_numbers(mod, killed_text, relax_opt_path, source_text=None, with_tvm=True):
    """Runs every tensor-only Relax function of `mod` in TVM and relax's planned module in
    relax-run, and (given `source_text`, the common unplanned input) relax-run on the
    unplanned module too; returns the differences of the planned numbers from TVM's, the
    differences from the unplanned ones (both lists empty when all agree) and the number of
    functions compared. When TVM cannot build the module, only planned and unplanned are
    compared. `with_tvm=False` skips TVM (whose build crashes on modules its planner makes
    invalid)."""
    import numpy as np

    if has_stub_kernel(mod):
        # Kernels without bodies (TVM's planning tests) compute nothing to compare.
        return [], [], 0
    if source_text is not None and "R.builtin.alloc_tensor(" in source_text:
        # Explicit allocations in the input may be read before any kernel writes them;
        # TVM's VM does not clear memory, relax's interpreter does.
        with_tvm = False
    relax_run = os.path.join(os.path.dirname(relax_opt_path), "relax-run")
    tmp = tempfile.mkdtemp()
    killed_path = os.path.join(tmp, "killed.rlx")
    with open(killed_path, "w") as f:
        f.write(killed_text)
    source_path = None
    if source_text is not None:
        source_path = os.path.join(tmp, "unplanned.rlx")
        with open(source_path, "w") as f:
            f.write(source_text)
    vm = None
    try:
        if with_tvm:
            ex = tvm.compile(mod, target="llvm", relax_pipeline="default_build")
            vm = relax.VirtualMachine(ex, tvm.cpu())
    except Exception as e:  # noqa: BLE001
        if source_path is None:
            return [f"TVM cannot build it: {last_line(e)}"], [], 0
    tvm_diffs, plan_diffs, compared = [], [], 0
    rng = np.random.default_rng(0)

    def relax_outputs(path, name, files):
        out_dir = os.path.join(tmp, f"out_{name}_{os.path.basename(path)}")
        run = subprocess.run([relax_run, path, "--entry", name, *files, "--output-dir", out_dir],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return None, last_line(run.stderr)
        outs, i = [], 0
        while os.path.exists(os.path.join(out_dir, f"out{i}.npy")):
            outs.append(np.load(os.path.join(out_dir, f"out{i}.npy")))
            i += 1
        return outs, None

    def close(a, b):
        return a.shape == b.shape and np.allclose(a.astype("float64"), b.astype("float64"),
                                                  rtol=1e-4, atol=1e-4, equal_nan=True)

    for gv, func in mod.functions.items():
        if not isinstance(func, relax.Function) or func.attrs is None or "global_symbol" not in func.attrs:
            continue
        name = gv.name_hint
        params = [p.struct_info for p in func.params]
        if not all(isinstance(si, relax.TensorStructInfo) and si.shape is not None for si in params):
            continue
        syms, args, files = {}, [], []
        try:
            for si in params:
                for d in si.shape.values:
                    for v in tvm.tirx.analysis.undefined_vars(d) if hasattr(tvm.tirx, "analysis") else []:
                        syms.setdefault(v, tvm.tirx.IntImm(v.dtype, SYM_VALUES[len(syms) % len(SYM_VALUES)]))
            an = tvm.arith.Analyzer()
            for i, si in enumerate(params):
                shape = [int(an.simplify(tvm.tirx.stmt_functor.substitute(d, syms))) for d in si.shape.values]
                dt = si.dtype
                if dt.startswith("float") or dt.startswith("bfloat"):
                    a = rng.uniform(-1, 1, shape).astype("float32" if dt == "bfloat16" else dt)
                elif dt == "bool":
                    a = rng.integers(0, 2, shape).astype(bool)
                else:
                    a = rng.integers(1, 5, shape).astype(dt)
                path = os.path.join(tmp, f"{name}_{i}.npy")
                np.save(path, a)
                files += ["--input", path]
                args.append(a)
        except Exception:  # noqa: BLE001 - inputs that cannot be made up: not compared
            continue
        theirs = None
        if vm is not None:
            try:
                out = vm[name](*[tvm.runtime.tensor(a) for a in args])
                theirs = []

                def flat(v):
                    if hasattr(v, "numpy"):
                        theirs.append(v.numpy())
                    else:
                        for x in v:
                            flat(x)

                flat(out)
            except Exception:  # noqa: BLE001 - a function TVM cannot run is not compared with TVM
                theirs = None
        if theirs is None and source_path is None:
            continue
        ours, err = relax_outputs(killed_path, name, files)
        if ours is None:
            if source_path is not None and relax_outputs(source_path, name, files)[0] is None:
                continue  # the unplanned module does not run either (an unknown packed function)
            plan_diffs.append(f"{name}: relax-run failed on the planned module: {err}")
            continue
        compared += 1
        if theirs is not None:
            if len(ours) != len(theirs):
                tvm_diffs.append(f"{name}: {len(ours)} outputs, TVM {len(theirs)}")
            for i, (o, t) in enumerate(zip(ours, theirs)):
                if not close(o, t):
                    tvm_diffs.append(f"{name}: output {i} differs from TVM's")
        if source_path is not None:
            unplanned, err = relax_outputs(source_path, name, files)
            if unplanned is None:
                plan_diffs.append(f"{name}: relax-run failed on the unplanned module: {err}")
                continue
            if len(ours) != len(unplanned) or not all(close(o, u) for o, u in zip(ours, unplanned)):
                plan_diffs.append(f"{name}: the planned module's numbers differ from the unplanned one's")
    return tvm_diffs, plan_diffs, compared


def chunks_of(text):
    if re.search(r"(?m)^(?:=== |######## )", text):
        parts = [p for p in re.split(r"(?m)^(?:=== |######## ).*\n", text) if p.strip()]
        first = re.split(r"(?m)^(?:prim funcs|out shapes): ", parts[0])[0] if parts else ""
        first = first.replace("\n# -----\n", "\n")
        return [first] if "@I.ir_module" in first else []
    return [c for c in split_chunks(text) if "@I.ir_module" in c or "@R.function" in c]


def main(argv):
    relax_opt_path = default_tool("relax-opt")
    quiet = show_text = run = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt_path = next(it)
        elif a == "--quiet":
            quiet = True
        elif a == "--text":
            show_text = True
        elif a == "--run":
            run = True
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    tally = {}
    bad = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        for i, chunk in enumerate(chunks_of(text)):
            verdict, detail, texts = check_module(chunk, relax_opt_path, run)
            tally[verdict] = tally.get(verdict, 0) + 1
            if verdict in ("WORSE", "FAILED", "NUMBERS"):
                bad += 1
            name = path if len(chunks_of(text)) == 1 else f"{path} [{i}]"
            if quiet and verdict in ("equal", "skipped"):
                continue
            print(f"{verdict:10} {name}")
            for line in detail.splitlines():
                print(f"           {line}")
            if show_text and texts:
                print("--- tvm\n" + texts[0] + "\n--- relax\n" + texts[1])
    print(", ".join(f"{k}: {v}" for k, v in sorted(tally.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
