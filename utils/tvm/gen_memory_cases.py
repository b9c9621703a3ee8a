"""Random Relax modules for the fusion and memory-planning differential checks.

usage: python gen_memory_cases.py OUT_DIR [COUNT] [SEED]

Writes COUNT modules (default 60) `<kind>_<i>.rlx` into OUT_DIR, cycling through these
kinds (the inputs of `fusion_diff.py`, `fusion_numbers.py` and `memory_diff.py --run`):

* `chain`: a random op chain of `gen_fusion_cases.py` (elementwise, broadcast,
  reductions, softmax, norms, matmul + epilogue, transposes, reshapes, concats, splits,
  slices, casts, diamonds, outputs in the middle) on a 2-D or 3-D input whose leading
  dims are symbolic (`n`, or `b` and `n`), sometimes with a `tir_var_upper_bound`
  attribute;
* `ifelse`: a dataflow block, an `if` on a boolean tensor with a different op chain in
  each branch (temporaries inside the branches), another block after it;
* `alias`: `match_cast` of an intermediate to a fresh symbolic dim, copies, tuple
  construction and `TupleGetItem`, reshapes (views) of intermediates, all used after
  temporaries of the same size have been allocated (the aliasing cases of planning);
* `dtypes`: chains in float16 / int32 / float32 with casts, so storages of several
  dtypes and sizes meet;
* `multi`: several functions and several outputs (tuples of intermediates);
* `consts`: constant tensors, `R.ones` and `R.full` combined by elementwise ops and
  reductions (what fold-constant folds), then added to a chain on the input;
* `llama`: a Llama-like decoder block (RMSNorm, Q/K/V projections, reshapes to heads,
  a KV cache of symbolic length `m` concatenated with the new `n` tokens and returned,
  attention with softmax, output projection, residual, gated MLP), random sizes and
  options, with or without upper bounds.

The generator needs no TVM; the modules read in TVM 0.25 and in relax.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gen_fusion_cases import BINARY, UNARY, Gen, sig_text  # noqa: E402

HEADER = [
    "# from tvm.script import ir as I",
    "# from tvm.script import tirx as T",
    "# from tvm.script import relax as R",
    "",
    "@I.ir_module",
    "class Module:",
]


def tensor(shape, dtype="float32"):
    return f'R.Tensor({sig_text(shape)}, dtype="{dtype}")'


def attrs_line(rng, names, indent="        "):
    if not names or rng.random() < 0.5:
        return []
    bounds = ", ".join(f'"{n}": {rng.choice([16, 32, 64, 128])}' for n in names)
    extra = ""
    if rng.random() < 0.3:
        extra = ', "tir_var_lower_bound": {' + ", ".join(f'"{n}": 1' for n in names) + "}"
    return [f'{indent}R.func_attr({{"tir_var_upper_bound": {{{bounds}}}{extra}}})']


def chain_case(rng):
    lead = rng.choice([["n"], ["b", "n"], [rng.choice([2, 3])], ["n", 2]])
    g = Gen(rng, symbolic=False)
    g.first = lead[0]
    inner = rng.choice([4, 8, 16])
    shape = lead + [inner] if len(lead) > 1 else [lead[0], inner]
    x = g.param(shape)
    g.values.append((x, shape))
    for _ in range(rng.randint(5, 16)):
        g.step()
    produced = [v for v in g.values if v[0].startswith("v")]
    outs = [produced[-1]] + [v for v in produced[:-1] if rng.random() < 0.12]
    names = [d for d in lead if isinstance(d, str)]
    params = ", ".join(f"{n}: {tensor(s)}" for n, s in g.params)
    if len(outs) == 1:
        ret, result = tensor(outs[0][1]), outs[0][0]
    else:
        ret = "R.Tuple(" + ", ".join(tensor(s) for _, s in outs) + ")"
        result = "(" + ", ".join(n for n, _ in outs) + ")"
    body = HEADER + ["    @R.function", f"    def main({params}) -> {ret}:"]
    body += [f"        {n} = T.int64()" for n in names]
    body += attrs_line(rng, names)
    body.append("        with R.dataflow():")
    body += ["            " + l for l in g.lines]
    body.append(f"            R.output({', '.join(n for n, _ in outs)})")
    body.append(f"        return {result}")
    return "\n".join(body) + "\n"


def elementwise(rng, x, shape, lines, prefix, count, dtype="float32"):
    """A chain of `count` elementwise/broadcast bindings from `x`; returns the last name."""
    cur = x
    made = [x]
    for i in range(count):
        name = f"{prefix}{i}"
        r = rng.random()
        if r < 0.35 and dtype.startswith("float"):
            lines.append(f"{name} = {rng.choice(UNARY)}({cur})")
        elif r < 0.7:
            other = rng.choice(made)
            lines.append(f"{name} = {rng.choice(BINARY)}({cur}, {other})")
        elif r < 0.85:
            c = rng.choice([2, 3]) if dtype.startswith("int") else rng.choice([0.5, 2.0, -1.0])
            lines.append(f'{name} = {rng.choice(BINARY)}({cur}, R.const({c}, "{dtype}"))')
        else:
            lines.append(f"{name} = R.sum({cur}, axis=[-1], keepdims=True)")
            name2 = f"{prefix}{i}b"
            lines.append(f"{name2} = R.subtract({cur}, {name})")
            name = name2
        made.append(name)
        cur = name
    return cur


def ifelse_case(rng):
    k = rng.choice([4, 8, 16])
    shape = ["n", k]
    lines = ["with R.dataflow():"]
    pre = []
    a = elementwise(rng, "x", shape, pre, "a", rng.randint(1, 4))
    lines += ["    " + l for l in pre]
    lines.append(f"    R.output({a})")
    lines.append("if c:")
    br = []
    t = elementwise(rng, a, shape, br, "t", rng.randint(1, 5))
    br.append(f"r = R.multiply({t}, {t})")
    lines += ["    " + l for l in br]
    lines.append("else:")
    br = []
    if rng.random() < 0.5:
        e = elementwise(rng, a, shape, br, "e", rng.randint(1, 5))
        br.append(f"r = R.add({e}, x)")
    else:
        br.append(f"r = R.nn.relu({a})")
    lines += ["    " + l for l in br]
    post = []
    z = elementwise(rng, "r", shape, post, "z", rng.randint(0, 4)) if rng.random() < 0.7 else "r"
    if post:
        lines.append("with R.dataflow():")
        lines += ["    " + l for l in post]
        lines.append(f"    R.output({z})")
    body = HEADER + [
        "    @R.function",
        f'    def main(x: {tensor(shape)}, c: R.Tensor((), dtype="bool")) -> {tensor(shape)}:',
        "        n = T.int64()",
    ]
    body += attrs_line(rng, ["n"])
    body += ["        " + l for l in lines]
    body.append(f"        return {z}")
    return "\n".join(body) + "\n"


def alias_case(rng):
    k = rng.choice([4, 8, 16])
    lines = []
    a = elementwise(rng, "x", ["n", k], lines, "a", rng.randint(1, 3))
    kind = rng.choice(["match_cast", "copy", "tuple", "reshape", "all"])
    alias = a
    m_used = False
    if kind in ("match_cast", "all"):
        lines.append(f'mc = R.match_cast({alias}, R.Tensor((m, {k}), dtype="float32"))')
        alias = "mc"
        m_used = True
    if kind in ("tuple", "all"):
        lines.append(f"tp = ({alias}, x)")
        lines.append("ti = tp[0]")
        alias = "ti"
    if kind in ("reshape", "all") and k % 2 == 0:
        d = "m" if m_used else "n"
        lines.append(f"rs = R.reshape({alias}, R.shape([{d}, 2, {k // 2}]))")
        lines.append("rs1 = R.exp(rs)")
        lines.append(f"rs2 = R.reshape(rs1, R.shape([{d}, {k}]))")
        alias = "rs2"
    if kind == "copy":
        lines.append(f"cp = {alias}")
        alias = "cp"
    # Temporaries of the same size while the alias is still alive.
    tmp = elementwise(rng, "x", ["n", k], lines, "t", rng.randint(1, 4))
    lines.append(f"u = R.sum({alias}, axis=[0], keepdims=True)")
    lines.append(f"w = R.sum({tmp}, axis=[0], keepdims=True)")
    lines.append("out = R.add(u, w)")
    dataflow = rng.random() < 0.5
    body = HEADER + [
        "    @R.function",
        f"    def main(x: {tensor(['n', k])}) -> {tensor([1, k])}:",
        "        n = T.int64()",
    ]
    if m_used:
        body.append("        m = T.int64()")
    body += attrs_line(rng, ["n"])
    if dataflow:
        body.append("        with R.dataflow():")
        body += ["            " + l for l in lines]
        body.append("            R.output(out)")
    else:
        body += ["        " + l for l in lines]
    body.append("        return out")
    return "\n".join(body) + "\n"


def dtypes_case(rng):
    k = rng.choice([4, 8])
    lines = []
    names = []
    cur = "x"
    cur_dt = "float32"
    for i in range(rng.randint(4, 9)):
        dt = rng.choice(["float32", "float16", "int32", "float32"])
        name = f"c{i}"
        if dt != cur_dt:
            lines.append(f'{name} = R.astype({cur}, dtype="{dt}")')
        else:
            lines.append(f"{name} = R.add({cur}, {cur})")
        names.append(name)
        cur, cur_dt = name, dt
        if rng.random() < 0.5:
            e = elementwise(rng, cur, ["n", k], lines, f"d{i}_", rng.randint(1, 3), dtype=dt)
            cur = e
    if cur_dt != "float32":
        lines.append(f'fin = R.astype({cur}, dtype="float32")')
        cur = "fin"
    body = HEADER + [
        "    @R.function",
        f"    def main(x: {tensor(['n', k])}) -> {tensor(['n', k])}:",
        "        n = T.int64()",
    ]
    body += attrs_line(rng, ["n"])
    body.append("        with R.dataflow():")
    body += ["            " + l for l in lines]
    body.append(f"            R.output({cur})")
    body.append(f"        return {cur}")
    return "\n".join(body) + "\n"


def multi_case(rng):
    funcs = []
    for f in range(rng.randint(2, 3)):
        k = rng.choice([4, 8, 16])
        lines = []
        a = elementwise(rng, "x", ["n", k], lines, "a", rng.randint(2, 5))
        b = elementwise(rng, a, ["n", k], lines, "b", rng.randint(1, 4))
        lines.append(f"s = R.sum({b}, axis=[1], keepdims=False)")
        outs = [(a, ["n", k]), ("s", ["n"])]
        ret = "R.Tuple(" + ", ".join(tensor(s) for _, s in outs) + ")"
        fl = [
            "    @R.function",
            f"    def f{f}(x: {tensor(['n', k])}) -> {ret}:",
            "        n = T.int64()",
        ]
        fl += attrs_line(rng, ["n"])
        fl.append("        with R.dataflow():")
        fl += ["            " + l for l in lines]
        fl.append(f"            R.output({a}, s)")
        fl.append(f"        return ({a}, s)")
        funcs.append("\n".join(fl))
    return "\n".join(HEADER) + "\n" + "\n\n".join(funcs) + "\n"


def llama_case(rng):
    heads = rng.choice([2, 4])
    hd = rng.choice([8, 16])
    dm = heads * hd
    ff = rng.choice([2, 3]) * dm
    act = rng.choice(["R.nn.silu", "R.nn.gelu", "R.sigmoid"])
    norm = rng.choice(["rms", "layer"])
    T4 = lambda s: tensor(s)  # noqa: E731
    params = [
        ("x", [1, "n", dm]),
        ("kc", [1, "m", heads, hd]),
        ("vc", [1, "m", heads, hd]),
        ("g1", [dm]),
        ("g2", [dm]),
        ("wq", [dm, dm]),
        ("wk", [dm, dm]),
        ("wv", [dm, dm]),
        ("wo", [dm, dm]),
        ("w1", [dm, ff]),
        ("w3", [dm, ff]),
        ("w2", [ff, dm]),
    ]

    def norm_line(out, x, g):
        if norm == "rms":
            return f"{out} = R.nn.rms_norm({x}, {g}, axes=[-1], epsilon=1e-05)"
        return f"{out} = R.nn.layer_norm({x}, {g}, {g}, axes=[-1], epsilon=1e-05, center=True, scale=True)"

    L = [
        norm_line("h", "x", "g1"),
        'q = R.matmul(h, wq, out_dtype="void")',
        'k = R.matmul(h, wk, out_dtype="void")',
        'v = R.matmul(h, wv, out_dtype="void")',
        f"q4 = R.reshape(q, R.shape([1, n, {heads}, {hd}]))",
        f"k4 = R.reshape(k, R.shape([1, n, {heads}, {hd}]))",
        f"v4 = R.reshape(v, R.shape([1, n, {heads}, {hd}]))",
    ]
    if rng.random() < 0.5:
        L += ['q4s = R.multiply(q4, R.const(0.5, "float32"))']
        qn = "q4s"
    else:
        qn = "q4"
    L += [
        "kall = R.concat((kc, k4), axis=1)",
        "vall = R.concat((vc, v4), axis=1)",
        f"qt = R.permute_dims({qn}, axes=[0, 2, 1, 3])",
        "kt = R.permute_dims(kall, axes=[0, 2, 3, 1])",
        "vt = R.permute_dims(vall, axes=[0, 2, 1, 3])",
        'sc = R.matmul(qt, kt, out_dtype="void")',
        f'sc2 = R.multiply(sc, R.const({1.0 / hd ** 0.5:.6f}, "float32"))',
    ]
    if rng.random() < 0.5:
        L += ["mx = R.max(sc2, axis=[-1], keepdims=True)", "sc3 = R.subtract(sc2, mx)", "p = R.nn.softmax(sc3, axis=-1)"]
    else:
        L += ["p = R.nn.softmax(sc2, axis=-1)"]
    L += [
        'o = R.matmul(p, vt, out_dtype="void")',
        "ot = R.permute_dims(o, axes=[0, 2, 1, 3])",
        f"o2 = R.reshape(ot, R.shape([1, n, {dm}]))",
        'o3 = R.matmul(o2, wo, out_dtype="void")',
        "r = R.add(x, o3)",
        norm_line("h2", "r", "g2"),
        'a = R.matmul(h2, w1, out_dtype="void")',
        'b = R.matmul(h2, w3, out_dtype="void")',
        f"ga = {act}(a)",
        "gb = R.multiply(ga, b)",
        'd = R.matmul(gb, w2, out_dtype="void")',
        "out = R.add(r, d)",
    ]
    ret = f"R.Tuple({T4([1, 'n', dm])}, {T4([1, 'm + n', heads, hd])}, {T4([1, 'm + n', heads, hd])})"
    sig = ", ".join(f"{p}: {T4(s)}" for p, s in params)
    body = HEADER + ["    @R.function", f"    def main({sig}) -> {ret}:", "        n = T.int64()", "        m = T.int64()"]
    body += attrs_line(rng, ["n", "m"])
    body.append("        with R.dataflow():")
    body += ["            " + l for l in L]
    body.append("            R.output(out, kall, vall)")
    body.append("        return (out, kall, vall)")
    return "\n".join(body) + "\n"


def consts_case(rng):
    """Constant subexpressions (what fold-constant folds) feeding a chain on the input."""
    k = rng.choice([2, 4, 8])
    lines = []
    vals = ", ".join(f"{rng.uniform(-2, 2):.3f}" for _ in range(k))
    lines.append(f'c0 = R.const([{vals}], "float32")')
    cur = "c0"
    for i in range(rng.randint(1, 4)):
        r = rng.random()
        name = f"c{i + 1}"
        if r < 0.3:
            lines.append(f"{name} = {rng.choice(['R.exp', 'R.tanh', 'R.sigmoid', 'R.negative'])}({cur})")
        elif r < 0.55:
            lines.append(f"{name} = {rng.choice(BINARY)}({cur}, c0)")
        elif r < 0.75:
            lines.append(f'{name} = R.add({cur}, R.ones(R.shape([{k}]), dtype="float32"))')
        elif r < 0.9:
            lines.append(f'{name} = R.multiply({cur}, R.full(R.shape([{k}]), R.const(0.5, "float32"), dtype="float32"))')
        else:
            lines.append(f"{name}s = R.sum({cur}, axis=[0], keepdims=True)")
            lines.append(f"{name} = R.subtract({cur}, {name}s)")
        cur = name
    x = elementwise(rng, "x", ["n", k], lines, "a", rng.randint(1, 3))
    lines.append(f"y = R.add({x}, {cur})")
    y = elementwise(rng, "y", ["n", k], lines, "b", rng.randint(0, 3))
    body = HEADER + [
        "    @R.function",
        f"    def main(x: {tensor(['n', k])}) -> {tensor(['n', k])}:",
        "        n = T.int64()",
    ]
    body.append("        with R.dataflow():")
    body += ["            " + l for l in lines]
    body.append(f"            R.output({y})")
    body.append(f"        return {y}")
    return "\n".join(body) + "\n"


KINDS = [
    ("chain", chain_case),
    ("ifelse", ifelse_case),
    ("alias", alias_case),
    ("dtypes", dtypes_case),
    ("multi", multi_case),
    ("chain", chain_case),
    ("llama", llama_case),
    ("consts", consts_case),
]


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    out = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 60
    seed = int(argv[2]) if len(argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        rng = random.Random(seed * 1000003 + i)
        kind, make = KINDS[i % len(KINDS)]
        with open(os.path.join(out, f"{kind}_{i}.rlx"), "w", encoding="utf-8") as f:
            f.write(make(rng))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
