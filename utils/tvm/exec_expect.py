"""Expected values of `# EXEC:` lines from TVM 0.25's Relax VM.

usage: python exec_expect.py [--update] FILE.rlx [FILE.rlx ...]

A test file's `# EXEC: f(args...) == expected` (or `~=`) lines (docs/runtime.md) say
what `relax-run --check-exec` must compute. This script computes the expected side with
TVM instead of by hand: TVM parses FILE (one module), builds it (`tvm.compile(mod,
"llvm")`), and runs each line's function in `relax.VirtualMachine` on the line's
arguments, each converted to its parameter's dtype as relax-run converts it (a list for
an `R.Shape` parameter is a shape, a number for an `R.Prim` parameter a scalar).

Without `--update` each line's expected value is checked against TVM's result with the
tolerance of its operator (`==` exact, NaN equal to NaN; `~=` `1e-5 * |b| + 1e-6` for
float32/float64, `1e-2 * |b| + 1e-3` for float16/bfloat16), and the exit status is 1
when any line disagrees. With `--update` the expected values are rewritten with TVM's
results (floats as the shortest decimal of their dtype), keeping the operator.

Run it with TVM 0.25's Python (`~/.cache/relax-peers/tvm025/bin/python`). Test files
whose numbers come from here say so in a comment, with the command.
"""
import ast
import re
import sys

import numpy as np
import tvm
from tvm import relax
from tvm.script import from_source

from common import last_line

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

EXEC = re.compile(r"^(?P<lead>\s*#\s*EXEC:\s*)(?P<call>.*?)\s+(?P<op>==|~=)\s+(?P<expected>.*?)\s*$")


def literal(text):
    """A Python literal with `inf` and `nan` allowed."""
    tree = ast.parse(text, mode="eval").body

    def conv(n):
        if isinstance(n, ast.Name) and n.id in ("inf", "nan"):
            return float(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -conv(n.operand)
        if isinstance(n, ast.List):
            return [conv(e) for e in n.elts]
        if isinstance(n, ast.Tuple):
            return tuple(conv(e) for e in n.elts)
        return ast.literal_eval(n)

    return conv(tree)


def parse_call(text):
    tree = ast.parse(text, mode="eval").body
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise ValueError(f"not a call: {text}")
    return tree.func.id, [literal(ast.unparse(a)) for a in tree.args]


def np_dtype(dtype):
    if dtype == "bfloat16":
        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def argument(sinfo, value):
    if isinstance(sinfo, relax.TensorStructInfo):
        return tvm.runtime.tensor(np.array(value, dtype=np_dtype(sinfo.dtype)))
    if isinstance(sinfo, relax.ShapeStructInfo):
        return tvm.runtime.ShapeTuple([int(v) for v in value])
    if isinstance(sinfo, relax.PrimStructInfo):
        return value
    raise ValueError(f"cannot pass a {type(sinfo).__name__}")


def result(v):
    """TVM's result as nested Python values: (kind, dtype, value)."""
    if hasattr(v, "numpy"):
        a = v.numpy()
        return ("tensor", str(a.dtype), a)
    if isinstance(v, tvm.runtime.ShapeTuple):
        return ("tensor", "int64", np.array(list(v), dtype=np.int64))
    if isinstance(v, (list, tuple)) or type(v).__name__ == "Array":
        return ("tuple", None, [result(x) for x in v])
    if isinstance(v, (bool, int, float, np.generic)):
        a = np.array(v)
        return ("tensor", str(a.dtype), a)
    raise ValueError(f"cannot compare a {type(v).__name__}")


def fmt_scalar(x, dtype):
    if dtype == "bool":
        return "True" if bool(x) else "False"
    if dtype.startswith(("int", "uint")):
        return str(int(x))
    f = float(x)
    if np.isnan(f):
        return "nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    if dtype in ("float16", "bfloat16", "float32"):
        s = str(np.float32(x)) if dtype != "float16" else str(np.float16(x))
    else:
        s = repr(f)
    return s if any(c in s for c in ".en") else s + ".0"


def fmt(r):
    kind, dtype, v = r
    if kind == "tuple":
        inner = ", ".join(fmt(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"

    def rec(a):
        if a.ndim == 0:
            return fmt_scalar(a.item() if dtype != "bfloat16" else float(a), dtype)
        return "[" + ", ".join(rec(x) for x in a) + "]"

    return rec(v)


def close(r, expected, exact):
    kind, dtype, v = r
    if kind == "tuple":
        return isinstance(expected, tuple) and len(expected) == len(v) and all(
            close(x, e, exact) for x, e in zip(v, expected)
        )
    e = np.array(expected, dtype=np.float64)
    if e.shape != v.shape:
        return False
    a = v.astype(np.float64)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    if exact:
        return bool(same.all())
    rel, ab = (1e-2, 1e-3) if dtype in ("float16", "bfloat16") else (1e-5, 1e-6)
    with np.errstate(invalid="ignore"):
        return bool((same | (np.abs(a - e) <= rel * np.abs(e) + ab)).all())


def main(argv):
    update = "--update" in argv
    files = [a for a in argv if a != "--update"]
    bad = 0
    for path in files:
        with open(path) as f:
            lines = f.read().split("\n")
        mod = from_source("\n".join(lines))
        if not isinstance(mod, tvm.IRModule):
            mod = tvm.IRModule({"main": mod})
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        for i, line in enumerate(lines):
            m = EXEC.match(line)
            if not m:
                continue
            name, args = parse_call(m["call"])
            func = mod[name]
            try:
                made = [argument(p.struct_info, a) for p, a in zip(func.params, args)]
                r = result(vm[name](*made))
            except Exception as e:  # noqa: BLE001 - reported per line
                print(f"{path}:{i + 1}: TVM failed: {last_line(e)}")
                bad += 1
                continue
            if update:
                lines[i] = f"{m['lead']}{m['call']} {m['op']} {fmt(r)}"
            elif not close(r, literal(m["expected"]), m["op"] == "=="):
                print(f"{path}:{i + 1}: {name}: TVM computes {fmt(r)}")
                bad += 1
        if update:
            with open(path, "w") as f:
                f.write("\n".join(lines))
    print(f"{'updated' if update else 'checked'} {len(files)} file(s), {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
