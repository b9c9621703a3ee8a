"""Random Relax modules for the fusion differential check (`fusion_diff.py`).

usage: python gen_fusion_cases.py OUT_DIR [COUNT] [SEED]

Writes COUNT modules (default 50) `case_<i>.rlx` into OUT_DIR, each one function `main`
of random dataflow bindings over float32 tensors: unary and binary elementwise ops,
broadcasts of bias vectors and scalar constants, reductions with and without
`keepdims`, softmax, matmuls against weight parameters, transposes, reshapes, concats,
splits with tuple items, strided slices, plus diamonds (values used several times) and
outputs in the middle of the block, and two dataflow blocks in a row. Half of the modules have a symbolic first dim `n`.
The generator needs no TVM; the modules read in TVM 0.25 and in relax.
"""
import os
import random
import re
import sys

UNARY = ["R.exp", "R.tanh", "R.sigmoid", "R.nn.relu", "R.negative", "R.sin", "R.nn.silu", "R.nn.gelu"]
BINARY = ["R.add", "R.multiply", "R.subtract", "R.maximum"]


def dims_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def sig_text(shape):
    return "(" + ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class Gen:
    def __init__(self, rng, symbolic):
        self.rng = rng
        self.first = "n" if symbolic else rng.choice([2, 3, 4])
        self.params = []  # (name, shape)
        self.lines = []
        self.values = []  # (name, shape)
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"v{self.count}"

    def param(self, shape):
        name = f"p{len(self.params)}"
        self.params.append((name, shape))
        return name

    def emit(self, text, shape):
        name = self.fresh()
        self.lines.append(f"{name} = {text}")
        self.values.append((name, shape))
        return name

    def pick(self, pred=lambda s: True):
        cands = [v for v in self.values if pred(v[1])]
        if not cands:
            return None
        # Prefer recent values, sometimes older ones (diamonds).
        if self.rng.random() < 0.7:
            return cands[-1]
        return self.rng.choice(cands)

    def step(self):
        r = self.rng
        kind = r.choice(
            ["unary", "unary", "binary", "binary", "bias", "scalar", "reduce", "softmax", "matmul", "transpose",
             "reshape", "concat", "split", "slice", "norm", "layernorm", "expand", "where", "cast", "reduce0",
             "permute3", "clip"]
        )
        x = self.pick()
        name, shape = x
        last = shape[-1] if shape else None
        if kind == "unary":
            return self.emit(f"{r.choice(UNARY)}({name})", shape)
        if kind == "binary":
            y = self.pick(lambda s: s == shape)
            return self.emit(f"{r.choice(BINARY)}({name}, {y[0]})", shape)
        if kind == "bias" and isinstance(last, int):
            b = self.param([last])
            return self.emit(f"{r.choice(BINARY)}({name}, {b})", shape)
        if kind == "scalar":
            return self.emit(f'{r.choice(BINARY)}({name}, R.const({r.choice([0.5, 2.0, -1.0])}, "float32"))', shape)
        if kind == "reduce" and len(shape) >= 2:
            op = r.choice(["R.sum", "R.max", "R.mean"])
            keep = r.random() < 0.5
            out = shape[:-1] + [1] if keep else shape[:-1]
            v = self.emit(f"{op}({name}, axis=[-1], keepdims={keep})", out)
            if keep and r.random() < 0.6:
                return self.emit(f"{r.choice(['R.subtract', 'R.divide', 'R.add'])}({name}, {v})", shape)
            return v
        if kind == "softmax" and len(shape) >= 1:
            return self.emit(f"R.nn.softmax({name}, axis=-1)", shape)
        if kind == "matmul" and isinstance(last, int) and len(shape) >= 2:
            k = r.choice([4, 8, 16])
            w = self.param([last, k])
            return self.emit(f'R.matmul({name}, {w}, out_dtype="void")', shape[:-1] + [k])
        if kind == "transpose" and len(shape) == 2:
            return self.emit(f"R.permute_dims({name}, axes=[1, 0])", [shape[1], shape[0]])
        if kind == "reshape" and len(shape) == 2 and isinstance(last, int) and last % 2 == 0:
            out = [shape[0], 2, last // 2]
            return self.emit(f"R.reshape({name}, R.shape([{', '.join(str(d) for d in out)}]))", out)
        if kind == "reshape" and len(shape) == 3 and isinstance(shape[1], int) and isinstance(shape[2], int):
            out = [shape[0], shape[1] * shape[2]]
            return self.emit(f"R.reshape({name}, R.shape([{', '.join(str(d) for d in out)}]))", out)
        if kind == "concat" and len(shape) >= 1 and isinstance(last, int):
            y = self.pick(lambda s: s[:-1] == shape[:-1] and isinstance(s[-1], int))
            return self.emit(f"R.concat(({name}, {y[0]}), axis=-1)", shape[:-1] + [last + y[1][-1]])
        if kind == "split" and isinstance(last, int) and last % 2 == 0:
            half = shape[:-1] + [last // 2]
            t = self.fresh()
            self.lines.append(f"{t} = R.split({name}, indices_or_sections=2, axis=-1)")
            a = self.emit(f"{t}[0]", half)
            b = self.emit(f"{t}[1]", half)
            return self.emit(f"{r.choice(BINARY)}({a}, {b})", half)
        if kind == "slice" and isinstance(last, int) and last >= 2:
            end = last // 2
            ax = len(shape) - 1
            return self.emit(
                f"R.strided_slice({name}, (R.prim_value({ax}),), (R.prim_value(0),), (R.prim_value({end}),), assume_inbound=False)",
                shape[:-1] + [end],
            )
        if kind == "norm" and isinstance(last, int) and len(shape) >= 2:
            w = self.param([last])
            return self.emit(f"R.nn.rms_norm({name}, {w}, axes=[-1], epsilon=1e-05)", shape)
        if kind == "layernorm" and isinstance(last, int) and len(shape) >= 2:
            g = self.param([last])
            b = self.param([last])
            return self.emit(
                f"R.nn.layer_norm({name}, {g}, {b}, axes=[-1], epsilon=1e-05, center=True, scale=True)", shape
            )
        if kind == "expand" and len(shape) == 2:
            v = self.emit(f"R.expand_dims({name}, axis=[1])", [shape[0], 1, shape[1]])
            return self.emit(f"R.sum({v}, axis=[1], keepdims=False)", shape)
        if kind == "where":
            y = self.pick(lambda s: s == shape)
            c = self.emit(f"R.greater({name}, {y[0]})", shape)
            self.values.pop()  # a bool tensor is not a float operand
            return self.emit(f"R.where({c}, {name}, {y[0]})", shape)
        if kind == "cast":
            h = self.emit(f'R.astype({name}, dtype="float16")', shape)
            self.values.pop()
            return self.emit(f'R.astype(R.exp({h}), dtype="float32")' if False else f'R.astype({h}, dtype="float32")', shape)
        if kind == "reduce0" and len(shape) >= 2 and isinstance(shape[0], int):
            return self.emit(f"R.sum({name}, axis=[0], keepdims=True)", [1] + shape[1:])
        if kind == "permute3" and len(shape) == 3:
            return self.emit(f"R.permute_dims({name}, axes=[0, 2, 1])", [shape[0], shape[2], shape[1]])
        if kind == "clip":
            return self.emit(f"R.clip({name}, R.prim_value(T.float32(-0.5)), R.prim_value(T.float32(0.5)))", shape)
        return self.emit(f"{r.choice(UNARY)}({name})", shape)

    def module(self, steps):
        x = self.param([self.first, self.rng.choice([4, 8, 16])])
        self.values.append((x, self.params[0][1]))
        for _ in range(steps):
            self.step()
        produced = [v for v in self.values if v[0].startswith("v")]
        outs = [produced[-1]]
        for v in produced[:-1]:
            if self.rng.random() < 0.15:
                outs.insert(0, v)
        params = ", ".join(f'{n}: R.Tensor({sig_text(s)}, dtype="float32")' for n, s in self.params)
        if len(outs) == 1:
            ret = f'R.Tensor({sig_text(outs[0][1])}, dtype="float32")'
            result = outs[0][0]
        else:
            ret = "R.Tuple(" + ", ".join(f'R.Tensor({sig_text(s)}, dtype="float32")' for _, s in outs) + ")"
            result = "(" + ", ".join(n for n, _ in outs) + ")"
        body = [
            "# from tvm.script import ir as I",
            "# from tvm.script import tirx as T",
            "# from tvm.script import relax as R",
            "",
            "@I.ir_module",
            "class Module:",
            "    @R.function",
            f"    def main({params}) -> {ret}:",
        ]
        if self.first == "n":
            body.append("        n = T.int64()")
        out_names = [n for n, _ in outs]
        if len(self.lines) > 4 and self.rng.random() < 0.3:
            # Two dataflow blocks: what the second uses of the first is an output of it.
            cut = self.rng.randint(2, len(self.lines) - 2)
            first, second = self.lines[:cut], self.lines[cut:]
            defined = [l.split(" = ")[0] for l in first]
            later = " ".join(second) + " " + result
            exported = [d for d in defined if re.search(r"\b" + d + r"\b", later)]
            body.append("        with R.dataflow():")
            body += ["            " + l for l in first]
            body.append(f"            R.output({', '.join(exported)})" if exported else "            R.output()")
            body.append("        with R.dataflow():")
            body += ["            " + l for l in second]
            tail = [n for n in out_names if n not in exported]
            body.append(f"            R.output({', '.join(tail)})" if tail else "            R.output()")
        else:
            body.append("        with R.dataflow():")
            body += ["            " + l for l in self.lines]
            body.append(f"            R.output({', '.join(out_names)})")
        body.append(f"        return {result}")
        return "\n".join(body) + "\n"


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    out = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 50
    seed = int(argv[2]) if len(argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        rng = random.Random(seed * 100003 + i)
        g = Gen(rng, symbolic=(i % 2 == 0))
        text = g.module(rng.randint(4, 14))
        with open(os.path.join(out, f"case_{i}.rlx"), "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
