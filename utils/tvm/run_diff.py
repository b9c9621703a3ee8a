"""Differential check of `relax-run` against TVM 0.25's Relax VM.

usage: python run_diff.py [--relax-run PATH] [--seed S] [--quiet] [--flag F ...] FILE.rlx [FILE.rlx ...]

Each FILE may hold several modules separated by `# -----` lines, or by the `=== NAME`
lines of the planning samples. For every module that TVM parses, and every public Relax
function of it whose parameters can be made up:

1. symbolic variables get small values (2, 3, 4, ... by name; all 3 when that fails);
2. inputs are drawn with numpy from the parameter annotations (floats uniform in
   [-1, 1), integers in [1, 4], bools either way; shapes and prim values from the
   symbolic variables) and written to .npy files;
3. TVM compiles the module (`tvm.compile(mod, "llvm")`) and runs the function in
   `relax.VirtualMachine`; relax runs `relax-run FILE --entry F --input ... --output-dir`
   with the `--flag` arguments added (`--flag=--engine=jit` for the JIT after the default
   pipeline, `--flag=--no-kernels` for the legalization of every op);
4. the results (tuples flattened, shapes as int64 vectors) must agree: integers and
   bools exactly, floats with `|a - b| <= 1e-4 * |b| + 1e-5` (numpy's `allclose`).

`relax.run.matmul`, the interpreter's reference DPS matmul, is registered with TVM so
modules calling it run on both. A function is `same`, `DIFFERENT` (with the largest
error), `relax failed` (relax-run's message) or `skipped` (TVM cannot parse, build or run
it, or its inputs cannot be made up). Exit status 1 when any function differs or relax
fails where TVM runs.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`). relax-run
defaults to `$CARGO_TARGET_DIR/debug/relax-run`, else `target/debug/relax-run`.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import tvm

tir = getattr(tvm, "tirx", None) or tvm.tir  # TVM 0.25 renamed `tir` to `tirx`
from tvm import relax
from tvm.script import from_source

from common import default_tool, last_line

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


try:
    from tvm_ffi import register_global_func
except ImportError:  # pragma: no cover - older releases
    register_global_func = tvm.register_func


@register_global_func("relax.run.matmul", override=True)
def _reference_matmul(a, b, out):
    out.copyfrom(np.matmul(a.numpy(), b.numpy()).astype(out.numpy().dtype))


def chunks(text):
    if re.search(r"^=== ", text, flags=re.M):
        parts = re.split(r"^=== .*$", text, flags=re.M)
    else:
        parts = re.split(r"^# -----.*$", text, flags=re.M)
    return [p for p in parts if "def " in p]


def np_dtype(dtype):
    if dtype == "bfloat16":
        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def sym_names(func):
    names = []
    for p in func.params:
        for v in tvm.relax.analysis.definable_tir_vars_in_struct_info(p.struct_info):
            if v.name not in names:
                names.append(v.name)
    return names


def evaluate(expr, values):
    if isinstance(expr, tir.IntImm):
        return int(expr.value)
    expr = tir.stmt_functor.substitute(expr, values)
    expr = tvm.arith.Analyzer().simplify(expr)
    if not isinstance(expr, tir.IntImm):
        raise ValueError(f"cannot evaluate {expr}")
    return int(expr.value)


def make_value(sinfo, values, rng):
    """(tvm argument, numpy array for relax or None); raises ValueError when impossible."""
    if isinstance(sinfo, relax.TensorStructInfo):
        if sinfo.shape is None or not isinstance(sinfo.shape, relax.ShapeExpr):
            raise ValueError("unknown shape")
        shape = [evaluate(d, values) for d in sinfo.shape.values]
        dt = sinfo.dtype
        if dt.startswith("float") or dt == "bfloat16":
            a = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np_dtype(dt))
        elif dt == "bool":
            a = rng.integers(0, 2, size=shape).astype(bool)
        else:
            a = rng.integers(1, 5, size=shape).astype(np_dtype(dt))
        return tvm.runtime.tensor(a), a
    if isinstance(sinfo, relax.ShapeStructInfo):
        if sinfo.values is None:
            raise ValueError("unknown shape value")
        dims = [evaluate(d, values) for d in sinfo.values]
        return tvm.runtime.ShapeTuple(dims), np.array(dims, dtype=np.int64)
    if isinstance(sinfo, relax.PrimStructInfo):
        if sinfo.value is not None:
            v = evaluate(sinfo.value, values)
        else:
            v = int(rng.integers(1, 5))
        return v, np.array(v, dtype=np.dtype(sinfo.dtype))
    raise ValueError(f"cannot make up a {type(sinfo).__name__}")


def flatten(v, out):
    if isinstance(v, (tvm.runtime.Tensor,)) or hasattr(v, "numpy"):
        out.append(v.numpy())
    elif isinstance(v, tvm.runtime.ShapeTuple):
        out.append(np.array(list(v), dtype=np.int64))
    elif isinstance(v, (list, tuple, tvm.ir.Array)) or type(v).__name__ == "Array":
        for x in v:
            flatten(x, out)
    elif isinstance(v, (int, float, bool, np.generic)):
        out.append(np.array(v))
    else:
        raise ValueError(f"cannot compare a {type(v).__name__}")


def compare(ours, theirs):
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs vs {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a.shape != b.shape:
            return f"output {i}: shape {a.shape} vs {b.shape}"
        if a.dtype.kind in "fV" or b.dtype.kind == "f" or str(a.dtype) == "bfloat16":
            x, y = a.astype(np.float64), b.astype(np.float64)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            with np.errstate(invalid="ignore"):
                ok = same | (np.abs(x - y) <= 1e-4 * np.abs(y) + 1e-5)
            if not ok.all():
                with np.errstate(invalid="ignore"):
                    err = np.where(same, 0.0, np.abs(x - y) / (np.abs(y) + 1e-5))
                return f"output {i}: max relative error {np.nanmax(err):.3g}"
        elif not np.array_equal(a.astype(np.int64), b.astype(np.int64)):
            return f"output {i}: integers differ"
    return None


def read_npy(path, dtype_hint):
    a = np.load(path)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2 and ml_dtypes is not None:
        a = a.view(ml_dtypes.bfloat16)
    return a


def run_function(text, mod, name, relax_run, seed, flags=()):
    func = mod[name]
    names = sym_names(func)
    last = None
    for choice in (lambda i: 2 + i % 3, lambda i: 3):
        values = {}
        syms = {}
        for i, n in enumerate(names):
            syms[n] = choice(i)
        for p in func.params:
            for v in tvm.relax.analysis.definable_tir_vars_in_struct_info(p.struct_info):
                values[v] = tir.IntImm(v.dtype, syms[v.name])
        rng = np.random.default_rng(seed)
        try:
            made = [make_value(p.struct_info, values, rng) for p in func.params]
        except ValueError as e:
            return "skipped", f"inputs: {e}"
        try:
            ex = tvm.compile(mod, target="llvm")
            vm = relax.VirtualMachine(ex, tvm.cpu())
            theirs = []
            flatten(vm[name](*[m[0] for m in made]), theirs)
        except Exception as e:  # noqa: BLE001 - TVM failures skip the function
            last = ("skipped", f"TVM: {last_line(e)}")
            continue
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "m.rlx")
            with open(src, "w") as f:
                f.write(text)
            cmd = [relax_run, src, "--entry", name, "--output-dir", os.path.join(d, "out"), *flags]
            for i, (_, a) in enumerate(made):
                p = os.path.join(d, f"in{i}.npy")
                np.save(p, a)
                cmd += ["--input", p]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                first = r.stderr.strip().splitlines()[0] if r.stderr.strip() else "no message"
                if "out of bounds" in first:
                    # TVM reads out of bounds silently; relax checks every access.
                    last = ("skipped", f"out-of-bounds input: {first}")
                else:
                    last = ("relax failed", first)
                continue
            ours = []
            i = 0
            while os.path.exists(os.path.join(d, "out", f"out{i}.npy")):
                ours.append(read_npy(os.path.join(d, "out", f"out{i}.npy"), None))
                i += 1
        diff = compare(ours, theirs)
        return ("DIFFERENT", diff) if diff else ("same", "")
    return last


def main(argv):
    relax_run = default_tool("relax-run")
    quiet = False
    seed = 0
    files = []
    flags = []
    it = iter(argv)
    for a in it:
        if a == "--relax-run":
            relax_run = next(it)
        elif a == "--seed":
            seed = int(next(it))
        elif a == "--quiet":
            quiet = True
        elif a == "--flag":
            flags.append(next(it))
        elif a.startswith("--flag="):
            flags.append(a[len("--flag="):])
        else:
            files.append(a)
    counts = {}
    bad = False
    for path in files:
        with open(path) as f:
            text = f.read()
        for ci, chunk in enumerate(chunks(text)):
            try:
                mod = from_source(chunk)
            except Exception as e:  # noqa: BLE001
                counts["skipped"] = counts.get("skipped", 0) + 1
                if not quiet:
                    print(f"{path}#{ci}: skipped (TVM cannot parse: {last_line(e)})")
                continue
            if not isinstance(mod, tvm.IRModule):
                mod = tvm.IRModule({"main": mod})
            for gv, func in mod.functions.items():
                if not isinstance(func, relax.Function) or "global_symbol" not in func.attrs:
                    continue
                name = gv.name_hint
                status, detail = run_function(chunk, mod, name, relax_run, seed, flags)
                counts[status] = counts.get(status, 0) + 1
                if status in ("DIFFERENT", "relax failed"):
                    bad = True
                if not quiet or status in ("DIFFERENT", "relax failed"):
                    print(f"{path}#{ci} {name}: {status}" + (f" ({detail})" if detail else ""))
    print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
