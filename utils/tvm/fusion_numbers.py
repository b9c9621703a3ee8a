"""Numbers of fused modules: relax's zero pipeline against the un-fused module and TVM.

usage: python fusion_numbers.py [--relax-opt PATH] [--seed S] [--quiet] FILE.rlx [FILE.rlx ...]

For every module of the files (chunks separated by `# -----` lines) that TVM parses, and
every public Relax function of it whose inputs can be made up (`run_diff.py`'s rules:
symbolic variables 2, 3, 4, ...; floats uniform in [-1, 1)):

1. relax-opt runs the zero pipeline (`--zero`: legalize-ops, annotate-tir-op-pattern,
   fold-constant, fuse-ops, fuse-tir) on the module;
2. the same inputs go to `relax-run` on the original (un-fused) module, to `relax-run` on
   relax's fused module, and to TVM's VM running the original module (`tvm.compile`,
   which legalizes, fuses and plans memory with TVM's own passes);
3. the fused results must equal the un-fused ones, and should equal TVM's
   (`run_diff.py`'s tolerance).

A function is `same` (all three agree), `FUSED DIFFERENT` (fused and un-fused relax
results differ), `tvm differs` (relax's two results agree, TVM's do not: TVM 0.25's
memory planner ignores `match_cast` aliases and computes wrong numbers), `tvm skipped`
(relax's results agree; TVM cannot build or run the module, or crashes on it: TVM's
planner makes invalid IR of some `if`/`else` functions), `relax failed`, or `skipped`
(inputs cannot be made up, the un-fused module does not run, or the function became a
PrimFunc: public `Primitive` functions of TVM's `FuseTIR` tests). Each file runs in a child process, so that a crash of TVM
loses one file only (`tvm crashed` when relax's two results agreed before the crash:
TVM 0.25 crashes building some `if`/`else` functions its planner makes invalid). Exit
status 1 when a fused result differs, relax fails or a check crashes.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`); relax-run and
relax-opt default to `$CARGO_TARGET_DIR/debug/`, else `target/debug/`.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tvm  # noqa: E402
from tvm import relax  # noqa: E402
from tvm.script import from_source  # noqa: E402

import run_diff  # noqa: E402
from common import default_tool, last_line, run_relax_opt, split_chunks  # noqa: E402


def relax_outputs(relax_run, text, name, arrays, d, tag):
    src = os.path.join(d, f"{tag}.rlx")
    with open(src, "w") as f:
        f.write(text)
    cmd = [relax_run, src, "--entry", name, "--output-dir", os.path.join(d, f"out_{tag}")]
    for i, a in enumerate(arrays):
        p = os.path.join(d, f"in{i}.npy")
        np.save(p, a)
        cmd += ["--input", p]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["no message"])[0]
    outs, i = [], 0
    while os.path.exists(os.path.join(d, f"out_{tag}", f"out{i}.npy")):
        outs.append(run_diff.read_npy(os.path.join(d, f"out_{tag}", f"out{i}.npy"), None))
        i += 1
    return outs, None


def check_function(where, chunk, fused, mod, name, relax_run, seed):
    func = mod[name]
    values = {}
    for i, n in enumerate(run_diff.sym_names(func)):
        for p in func.params:
            for v in tvm.relax.analysis.definable_tir_vars_in_struct_info(p.struct_info):
                if v.name == n:
                    values[v] = run_diff.tir.IntImm(v.dtype, 2 + i % 3)
    rng = np.random.default_rng(seed)
    try:
        made = [run_diff.make_value(p.struct_info, values, rng) for p in func.params]
    except ValueError as e:
        return "skipped", f"inputs: {e}"
    arrays = [m[1] for m in made]
    with tempfile.TemporaryDirectory() as d:
        unfused, err = relax_outputs(relax_run, chunk, name, arrays, d, "unfused")
        if unfused is None:
            # Nothing to compare with (an unknown packed function, say).
            return "skipped", f"the un-fused module does not run: {err}"
        ours, err = relax_outputs(relax_run, fused, name, arrays, d, "fused")
        if ours is None:
            if "is not a Relax function" in err:
                # A public Primitive function of the input became a PrimFunc (TVM's
                # FuseTIR does the same).
                return "skipped", f"`{name}` became a PrimFunc"
            return "relax failed", f"fused: {err}"
    diff = run_diff.compare(ours, unfused)
    if diff:
        return "FUSED DIFFERENT", diff
    # What is known if TVM crashes now.
    print(f"{where} {name}: relax agrees", flush=True)
    try:
        ex = tvm.compile(mod, target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        theirs = []
        run_diff.flatten(vm[name](*[m[0] for m in made]), theirs)
    except Exception as e:  # noqa: BLE001 - TVM failures skip the comparison with TVM
        return "tvm skipped", last_line(e)
    diff = run_diff.compare(ours, theirs)
    return ("tvm differs", diff) if diff else ("same", "")


def check_file(path, relax_opt, relax_run, seed, quiet):
    """Checks one file; prints one line per function and a last line `COUNTS <json>`."""
    counts = {}
    text = open(path, encoding="utf-8").read()
    for ci, chunk in enumerate(c for c in split_chunks(text) if "def " in c):
        where = f"{path}#{ci}"
        try:
            mod = from_source(chunk)
        except Exception as e:  # noqa: BLE001
            counts["skipped"] = counts.get("skipped", 0) + 1
            if not quiet:
                print(f"{where}: skipped (TVM cannot parse: {last_line(e)})")
            continue
        if not isinstance(mod, tvm.IRModule):
            mod = tvm.IRModule({"main": mod})
        fused = run_relax_opt(relax_opt, chunk, ["--zero"])
        if fused.returncode != 0:
            counts["relax failed"] = counts.get("relax failed", 0) + 1
            print(f"{where}: relax failed (relax-opt --zero: {fused.stderr.strip()[:300]})")
            continue
        for gv, func in mod.functions.items():
            if not isinstance(func, relax.Function) or "global_symbol" not in func.attrs:
                continue
            name = gv.name_hint
            print(f"{where} {name}: ...", flush=True)
            status, detail = check_function(where, chunk, fused.stdout, mod, name, relax_run, seed)
            counts[status] = counts.get(status, 0) + 1
            if not quiet or status not in ("same", "skipped", "tvm skipped"):
                print(f"{where} {name}: {status}" + (f" ({detail})" if detail else ""))
    print("COUNTS " + json.dumps(counts), flush=True)


def main(argv):
    relax_run = default_tool("relax-run")
    relax_opt = os.path.join(os.path.dirname(relax_run), "relax-opt")
    seed, quiet, one, files = 0, False, False, []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
            relax_run = os.path.join(os.path.dirname(relax_opt), "relax-run")
        elif a == "--seed":
            seed = int(next(it))
        elif a == "--quiet":
            quiet = True
        elif a == "--one":
            one = True
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    if one:
        check_file(files[0], relax_opt, relax_run, seed, quiet)
        return 0
    counts = {}
    for path in files:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", "--relax-opt", relax_opt, "--seed", str(seed)]
        r = subprocess.run(cmd + (["--quiet"] if quiet else []) + [path], capture_output=True, text=True)
        got = None
        lines = r.stdout.splitlines()
        for line in lines:
            if line.startswith("COUNTS "):
                got = json.loads(line[len("COUNTS "):])
            elif not line.endswith((": ...", ": relax agrees")):
                print(line)
        if got is None:
            # TVM crashed (TVM 0.25 crashes building some `if`/`else` functions that its
            # own planner made invalid): the function it crashed on is counted by what
            # relax showed; the functions after it are not checked.
            last = lines[-1] if lines else ""
            if last.endswith(": relax agrees"):
                print(f"{last[: -len(': relax agrees')]}: tvm crashed (fused and un-fused relax agree)")
                got = {"tvm crashed": 1}
            else:
                print(f"{path}: crashed (the rest of {path} is not checked)")
                got = {"crashed": 1}
        for k, v in got.items():
            counts[k] = counts.get(k, 0) + v
    print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 1 if counts.get("FUSED DIFFERENT") or counts.get("relax failed") or counts.get("crashed") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
