"""Builds the round-trip corpus: modules built with TVM's Python APIs, printed by TVM.

usage: python make_corpus.py OUT_DIR

Run it with the Python of a TVM release (see ../shared/peers/setup.sh):

    ~/.cache/relax-peers/tvm025/bin/python utils/tvm/make_corpus.py test/Corpus/tvm-0.25
    ~/.cache/relax-peers/tvm027/bin/python utils/tvm/make_corpus.py test/Corpus/tvm-0.27

Every case is one module, built from TVMScript source (written in TVM 0.25's spelling and
converted to the running release's spelling where they differ), with `relax.BlockBuilder`
(`relax.op.*`, `emit_te`) or with the `relax.frontend.nn` exporter. Each case is printed at
several stages, one file per stage, named `<case>.<stage>.rlx`:

* `built`: the module as built (`mod.script()`);
* `legalized`: after `relax.transform.LegalizeOps()`;
* `fused`: after the zero pipeline (LegalizeOps, AnnotateTIROpPattern, FoldConstant,
  FuseOps, FuseTIR);
* `vm`: the fused module after the default build pipeline (the VM lowering passes:
  RewriteDataflowReshape ... AttachGlobalSymbol), for an `llvm` target;
* `callrewrite`, `planned`, `killed`: `main` alone (`mod["main"].script()`) after
  CallTIRRewrite, StaticPlanBlockMemory and KillAfterLastUse;
* `main`: `main` alone as built;
* `dlight`: after LegalizeOps and the dlight default GPU schedule for `cuda -arch=sm_80`;
  `dlight_fused` after the zero pipeline instead; `dlight_metal`, `dlight_rocm`,
  `dlight_vulkan` for other targets;
* `lowered`: PrimFuncs after TVM's TIR lowering for `llvm`;
* custom stages of single cases (`fuseops`, `lifted`, `patterned`, `merged`, `mixed`,
  `lifted_params`, `helper`), each a function of the built module.

A stage that TVM itself cannot run for a case is skipped (reported on stderr), an op call
that the running release rejects is left out of its case, and a case that the running
release cannot express (`R.Prim(value=...)` and `tir_vars=` do not exist after 0.25) is
left out. The output is deterministic: the same release writes the same files (the one
order TVM leaves to chance, the stores of VMShapeLower's `shape_func`, is sorted in the IR
before printing).
"""

import os
import sys
import textwrap

import numpy as np
import tvm
from tvm import relax
from tvm import tirx as tir
from tvm.script import from_source

VERSION = tuple(int(p) for p in tvm.__version__.split(".")[:2])
HEAD = VERSION >= (0, 26)

TensorSI = getattr(relax, "TensorStructInfo", None) or relax.TensorType

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n# from tvm.script import relax as R\n\n"


def spelled(text):
    """Converts TVM 0.25 source spellings to those of the running release."""
    if HEAD:
        text = text.replace("out_sinfo=", "out_ty=").replace("sinfo_args=", "ty_args=")
    return text


def parse(body):
    """Parses the members of an `@I.ir_module` class (dedented text)."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return from_source(spelled(HEADER + "@I.ir_module\nclass Module:\n" + body + "\n"))


def main_fn(params, lines, ret, attrs=None, prelude="", dataflow=True, decorator="@R.function"):
    """A module with one Relax function `main` whose body binds `lines` and returns `ret`."""
    body = ""
    if attrs:
        body += f"R.func_attr({attrs})\n"
    body += textwrap.dedent(prelude)
    if dataflow:
        body += "with R.dataflow():\n"
        body += textwrap.indent("\n".join(lines) + f"\nR.output({ret.strip('()').rstrip(',')})\n", "    ")
    else:
        body += "\n".join(lines) + "\n"
    body += f"return {ret}\n"
    src = f"{decorator}\ndef main({params}):\n" + textwrap.indent(body, "    ")
    return parse(src)


CASES = []


def case(name, stages=("built", "legalized"), only025=False):
    """Registers a builder of one module under `name`."""

    def register(build):
        CASES.append((name, build, stages, only025))
        return build

    return register


# ---------------------------------------------------------------------------------------
# Custom stages (each takes the built module and returns the text to write)


def lambda_lifted(mod):
    return relax.transform.LambdaLift()(mod).script()


def fuse_ops_only(mod):
    seq = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps()]
    return tvm.transform.Sequential(seq)(mod).script()


def by_pattern(mod):
    from tvm.relax.dpl import is_op, wildcard

    pat = is_op("relax.add")(is_op("relax.matmul")(wildcard(), wildcard()), wildcard())
    relu = is_op("relax.nn.relu")(wildcard())
    mod = relax.transform.FuseOpsByPattern([("demo.matmul_add", pat), ("demo.relu", relu)], bind_constants=False)(mod)
    return mod


# ---------------------------------------------------------------------------------------
# Operators


def ops_case(name, params, lines, stages=("built", "legalized"), dataflow=True):
    """A case whose `main` binds `y0, y1, ...` to the given op calls and returns them all.

    Calls the running release rejects are left out (reported on stderr), so one op that a
    release lacks does not lose the others.
    """

    def build():
        def module(calls):
            bound = [f"y{i} = {c}" for i, c in enumerate(calls)]
            ret = "(" + ", ".join(f"y{i}" for i in range(len(calls))) + ("," if len(calls) == 1 else "") + ")"
            return main_fn(params, bound, ret, dataflow=dataflow)

        try:
            return module(lines)
        except Exception:  # noqa: BLE001 - find the calls this release rejects
            kept = []
            for c in lines:
                try:
                    module([c])
                    kept.append(c)
                except Exception as e:  # noqa: BLE001
                    msg = [m for m in str(e).splitlines() if m.strip()]
                    print(f"{name}: dropped {c}: {msg[0] if msg else type(e).__name__}", file=sys.stderr)
            return module(kept)

    case(name, stages)(build)


UNARY_FLOAT = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf",
    "exp", "floor", "log", "negative", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh",
    "sqrt", "square", "tan", "tanh", "trunc", "isfinite", "isinf", "isnan",
]
ops_case(
    "ops_unary_float32",
    'x: R.Tensor((2, "n"), dtype="float32")',
    [f"R.{op}(x)" for op in UNARY_FLOAT],
)
ops_case(
    "ops_unary_float16_static",
    'x: R.Tensor((4, 8), dtype="float16")',
    [f"R.{op}(x)" for op in ["exp", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "negative", "abs"]],
    stages=("built", "legalized", "fused"),
)
ops_case(
    "ops_unary_int_bool",
    'a: R.Tensor((8,), dtype="int32"), b: R.Tensor((8,), dtype="bool"), c: R.Tensor((8,), dtype="int8")',
    ["R.bitwise_not(a)", "R.logical_not(b)", "R.negative(a)", "R.abs(c)", "R.sign(a)", "R.bitwise_not(c)"],
)
ops_case(
    "ops_clip_astype",
    'x: R.Tensor(("n", 16), dtype="float32"), i: R.Tensor((4,), dtype="int64")',
    [
        "R.clip(x, 0.0, 6.0)",
        "R.clip(x, -1.5, 1.5)",
        "R.clip(i, 0, 10)",
        'R.astype(x, "float16")',
        'R.astype(x, "bfloat16")',
        'R.astype(x, "int8")',
        'R.astype(i, "int32")',
        'R.astype(i, "bool")',
        'R.astype(x, "uint8")',
    ],
)
BINARY = [
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "mod", "floor_mod", "atan2", "log_add_exp",
]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
ops_case(
    "ops_binary_broadcast",
    'a: R.Tensor(("n", 1, 4), dtype="float32"), b: R.Tensor((3, 1), dtype="float32")',
    [f"R.{op}(a, b)" for op in BINARY + COMPARE],
)
ops_case(
    "ops_binary_scalar_const",
    'a: R.Tensor((4, 4), dtype="float32"), h: R.Tensor((4,), dtype="float16")',
    [
        'R.add(a, R.const(1.0, "float32"))',
        'R.multiply(a, R.const(0.5, "float32"))',
        'R.subtract(R.const(2.0, "float32"), a)',
        'R.divide(a, R.const(3.0, "float32"))',
        'R.power(a, R.const(2.0, "float32"))',
        'R.add(h, R.const(1.0, "float16"))',
        'R.maximum(a, R.const(-1e-05, "float32"))',
    ],
    stages=("built", "legalized", "fused"),
)
ops_case(
    "ops_binary_int_logical",
    'a: R.Tensor((8,), dtype="int32"), b: R.Tensor((8,), dtype="int32"), p: R.Tensor((8,), dtype="bool"), q: R.Tensor((8,), dtype="bool"), u: R.Tensor((8,), dtype="uint8")',
    [
        "R.bitwise_and(a, b)",
        "R.bitwise_or(a, b)",
        "R.bitwise_xor(a, b)",
        "R.left_shift(a, b)",
        "R.right_shift(a, b)",
        "R.logical_and(p, q)",
        "R.logical_or(p, q)",
        "R.logical_xor(p, q)",
        "R.add(a, b)",
        "R.floor_divide(a, b)",
        "R.floor_mod(a, b)",
        "R.mod(a, b)",
        "R.divide(a, b)",
        "R.equal(a, b)",
        "R.bitwise_and(u, u)",
        "R.add(u, u)",
    ],
)
ops_case(
    "ops_matmul_variants",
    'a: R.Tensor(("n", 16), dtype="float32"), b: R.Tensor((16, 8), dtype="float32"), '
    'c: R.Tensor((4, "n", 16), dtype="float16"), d: R.Tensor((16, 32), dtype="float16"), '
    'e: R.Tensor((2, 1, 3, 4), dtype="float32"), f: R.Tensor((5, 4, 6), dtype="float32"), '
    'v: R.Tensor((16,), dtype="float32"), i8: R.Tensor((4, 16), dtype="int8"), j8: R.Tensor((16, 4), dtype="int8")',
    [
        "R.matmul(a, b)",
        'R.matmul(c, d, out_dtype="float32")',
        "R.matmul(c, d)",
        "R.matmul(e, f)",
        "R.matmul(a, v)",
        "R.matmul(v, b)",
        'R.matmul(i8, j8, out_dtype="int32")',
        "R.outer(v, v)",
    ],
    stages=("built", "legalized", "fused"),
)
ops_case(
    "ops_nn_activations",
    'x: R.Tensor((2, "n", 32), dtype="float32")',
    [
        "R.nn.relu(x)",
        "R.nn.gelu(x)",
        "R.nn.gelu_tanh(x)",
        "R.nn.silu(x)",
        "R.nn.selu(x)",
        "R.nn.softplus(x)",
        "R.nn.softplus(x, beta=2.0, threshold=10.0)",
        "R.nn.leakyrelu(x)",
        "R.nn.leakyrelu(x, alpha=0.2)",
        "R.nn.softmax(x)",
        "R.nn.softmax(x, axis=1)",
        "R.nn.log_softmax(x, axis=-1)",
        "R.nn.dropout(x)",
        "R.nn.dropout(x, rate=0.1)",
    ],
)
ops_case(
    "ops_nn_norms",
    'x: R.Tensor((2, "n", 64), dtype="float32"), g: R.Tensor((64,), dtype="float32"), b: R.Tensor((64,), dtype="float32"), h: R.Tensor((1, 8, 4096), dtype="float16"), w: R.Tensor((4096,), dtype="float16")',
    [
        "R.nn.layer_norm(x, g, b, axes=[-1])",
        "R.nn.layer_norm(x, g, b, axes=[2], epsilon=1e-06, center=False, scale=False)",
        "R.nn.rms_norm(x, g)",
        "R.nn.rms_norm(x, g, axes=[-1], epsilon=1e-06)",
        "R.nn.rms_norm(h, w, axes=-1, epsilon=9.9999999999999995e-07)",
    ],
    stages=("built", "fused"),
)
ops_case(
    "ops_nn_attention",
    'q: R.Tensor((1, 8, 4, 16), dtype="float32"), k: R.Tensor((1, 12, 4, 16), dtype="float32"), v: R.Tensor((1, 12, 4, 16), dtype="float32"), bias: R.Tensor((1, 4, 8, 12), dtype="float32")',
    [
        "R.nn.attention(q, k, v)",
        "R.nn.attention(q, k, v, bias)",
        "R.nn.attention(q, k, v, scale=0.25)",
        'R.nn.attention(q, k, v, causal_mask="TopLeft")',
        'R.nn.attention(q, k, v, bias, scale=0.125, causal_mask="BottomRight")',
    ],
    stages=("built",),
)
ops_case(
    "ops_nn_custom_conv_pool",
    'x: R.Tensor((1, 3, 32, 32), dtype="float32"), w: R.Tensor((8, 3, 3, 3), dtype="float32"), g: R.Tensor((8,), dtype="float32"), bt: R.Tensor((8,), dtype="float32"), mean: R.Tensor((8,), dtype="float32"), var: R.Tensor((8,), dtype="float32"), x1: R.Tensor((1, 3, 16), dtype="float32"), w1: R.Tensor((4, 3, 3), dtype="float32")',
    [
        "R.nn.conv2d(x, w)",
        'R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_dtype="float32")',
        "R.nn.conv1d(x1, w1, padding=1)",
        "R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2])",
        "R.nn.avg_pool2d(x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1], ceil_mode=True)",
        "R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])",
        "R.nn.batch_norm(R.nn.conv2d(x, w), g, bt, mean, var, axis=1)",
        "R.nn.group_norm(R.nn.conv2d(x, w), g, bt, num_groups=2, channel_axis=1, axes=[2, 3])",
        "R.nn.pad(x, pad_width=[0, 0, 0, 0, 1, 1, 1, 1], pad_value=0.0)",
    ],
    stages=("built",),
)
ops_case(
    "ops_manipulation",
    'x: R.Tensor((2, "n", 4, 16), dtype="float32"), y: R.Tensor((2, "n", 4, 16), dtype="float32"), s: R.Tensor((1, 8, 1), dtype="float32")',
    [
        "R.reshape(x, (2, -1, 64))",
        "R.reshape(s, R.shape([8]))",
        "R.permute_dims(x)",
        "R.permute_dims(x, axes=[0, 2, 1, 3])",
        "R.permute_dims(x, [3, 2, 1, 0])",
        "R.expand_dims(x, 0)",
        "R.expand_dims(x, axis=[1, -1])",
        "R.squeeze(s)",
        "R.squeeze(s, axis=[0])",
        "R.squeeze(s, axis=2)",
        "R.flatten(x)",
        "R.concat((x, y), axis=1)",
        "R.concat([x, y])",
        "R.concat((x, y), axis=-1)",
        "R.stack((x, y))",
        "R.stack((x, y), axis=2)",
        "R.broadcast_to(s, (4, 8, 3))",
        "R.flip(x, axis=1)",
        "R.repeat(x, 2, axis=1)",
        "R.repeat(x, 3)",
        "R.tile(x, [2, 1, 1, 1])",
        "R.tile(s, 2)",
    ],
)
ops_case(
    "ops_split_forms",
    'x: R.Tensor((6, "n", 12), dtype="float32")',
    [
        "R.split(x, 3)",
        "R.split(x, indices_or_sections=2, axis=2)",
        "R.split(x, [2, 5], axis=2)",
        "R.split(x, indices_or_sections=[1, 4], axis=0)",
        "R.split(x, 1, axis=-1)",
    ],
    stages=("built", "legalized", "fused"),
)
ops_case(
    "ops_strided_slice",
    'x: R.Tensor((8, "n", 16), dtype="float32")',
    [
        "R.strided_slice(x, axes=[0], begin=[1], end=[7])",
        "R.strided_slice(x, axes=[0, 2], begin=[0, 2], end=[8, 14], strides=[2, 3])",
        "R.strided_slice(x, axes=[2], begin=[-4], end=[16], strides=[1], assume_inbound=True)",
        "R.strided_slice(x, [1], [0], [4])",
        "R.strided_slice(x, axes=[2], begin=[15], end=[0], strides=[-1])",
    ],
)
ops_case(
    "ops_dynamic_strided_slice",
    'x: R.Tensor((8, 16), dtype="float32"), b: R.Tensor((2,), dtype="int64"), e: R.Tensor((2,), dtype="int64"), st: R.Tensor((2,), dtype="int64")',
    ["R.dynamic_strided_slice(x, b, e, st)"],
    stages=("built",),
)
ops_case(
    "ops_take_where_gather",
    'x: R.Tensor(("n", 16), dtype="float32"), idx: R.Tensor((4,), dtype="int64"), idx32: R.Tensor((2, 3), dtype="int32"), c: R.Tensor(("n", 16), dtype="bool"), y: R.Tensor(("n", 16), dtype="float32"), gi: R.Tensor(("n", 2), dtype="int64")',
    [
        "R.take(x, idx, axis=0)",
        "R.take(x, idx32, axis=1)",
        "R.take(R.reshape(x, (-1,)), idx)",
        'R.take(x, idx, axis=1, mode="clip")',
        'R.take(x, idx, axis=0, mode="wrap")',
        "R.where(c, x, y)",
        'R.where(c, x, R.const(0.0, "float32"))',
        "R.gather_elements(x, gi, axis=1)",
        "R.gather_elements(x, gi)",
    ],
)
ops_case(
    "ops_collapse_einsum",
    'x: R.Tensor((2, 3, 4), dtype="float32"), t: R.Tensor((3, 1), dtype="float32"), a: R.Tensor((4, 5), dtype="float32"), b: R.Tensor((5, 6), dtype="float32")',
    [
        "R.collapse_sum_like(x, t)",
        "R.collapse_sum_to(x, (3, 1))",
        'R.einsum((a, b), "ij,jk->ik")',
        'R.einsum([a], subscripts="ij->ji")',
    ],
)
REDUCE = ["sum", "mean", "max", "min", "prod", "std", "variance"]
ops_case(
    "ops_reductions",
    'x: R.Tensor((2, "n", 8), dtype="float32")',
    [f"R.{op}(x)" for op in REDUCE]
    + [f"R.{op}(x, axis=[1, 2], keepdims=True)" for op in REDUCE]
    + ["R.sum(x, axis=1)", "R.mean(x, axis=[-1])", "R.max(x, axis=[0], keepdims=False)"],
)
ops_case(
    "ops_arg_reductions",
    'x: R.Tensor((2, "n", 8), dtype="float32"), i: R.Tensor((5, 7), dtype="int32")',
    [
        "R.argmax(x)",
        "R.argmax(x, axis=1)",
        "R.argmin(x, axis=-1, keepdims=True)",
        "R.argmin(i)",
        "R.argmax(i, axis=0, keepdims=True)",
    ],
)
ops_case(
    "ops_scan_sort",
    'x: R.Tensor((4, 16), dtype="float32"), i: R.Tensor((16,), dtype="int32")',
    [
        "R.cumsum(x)",
        "R.cumsum(x, axis=1)",
        'R.cumsum(i, axis=0, dtype="int64", exclusive=True)',
        "R.cumprod(x, axis=0)",
        'R.cumprod(x, axis=1, dtype="float32", exclusive=False)',
        "R.sort(x)",
        "R.sort(x, axis=0, descending=True)",
        "R.argsort(x)",
        'R.argsort(x, axis=0, descending=True, dtype="int64")',
        "R.topk(x, k=2)",
        'R.topk(x, k=3, axis=0, ret_type="values", largest=False, dtype="int64")',
        'R.topk(x, 1, -1, "indices")',
    ],
    stages=("built",),
)
ops_case(
    "ops_creation",
    'x: R.Tensor((2, "n"), dtype="float32"), f: R.Tensor((), dtype="float32"), i: R.Tensor((3, 3), dtype="int32")',
    [
        'R.zeros((2, 3), dtype="float32")',
        'R.ones(R.shape([4]), "int32")',
        'R.full((2, 2), f, dtype="float32")',
        "R.full((2, 2), f)",
        "R.zeros_like(x)",
        'R.ones_like(x, dtype="float16")',
        "R.full_like(x, f)",
        'R.full_like(i, f, dtype="int64")',
        'R.arange(0, 10, 1, dtype="int64")',
        'R.arange(2, 20, 3, dtype="int32")',
        'R.arange(R.prim_value(T.float32(0.0)), R.prim_value(T.float32(1.0)), R.prim_value(T.float32(0.25)), dtype="float32")',
        "R.tril(i)",
        "R.tril(i, 1)",
        "R.triu(i, k=-1)",
    ],
)
ops_case(
    "ops_shape_ops",
    'x: R.Tensor(("n", "m"), dtype="float32"), t: R.Tensor((2,), dtype="int64")',
    [
        "R.shape_of(x)",
        "R.shape_to_tensor(R.shape_of(x))",
        "R.tensor_to_shape(t)",
    ],
    stages=("built",),
    dataflow=False,
)
ops_case(
    "ops_custom_misc",
    'x: R.Tensor((4, 8), dtype="float32"), i: R.Tensor((4, 2), dtype="int64"), u: R.Tensor((4, 8), dtype="float32"), lab: R.Tensor((4,), dtype="int64")',
    [
        "R.scatter_elements(x, i, R.zeros((4, 2), dtype='float32'), axis=1)",
        "R.one_hot(lab, R.prim_value(T.float32(1.0)), R.prim_value(T.float32(0.0)), depth=8, axis=-1)",
        "R.nn.cross_entropy_with_logits(x, u)",
        "R.nn.log_softmax(x)",
        "R.nn.nll_loss(x, lab)",
        "R.image.resize2d(R.reshape(x, (1, 1, 4, 8)), (8, 16))",
    ],
    stages=("built",),
)

ops_case(
    "ops_nn_conv_variants",
    'x1: R.Tensor((1, 4, 16), dtype="float32"), w1: R.Tensor((8, 4, 3), dtype="float32"), '
    'x2: R.Tensor((1, 4, 16, 16), dtype="float16"), w2: R.Tensor((8, 4, 3, 3), dtype="float16"), '
    'x3: R.Tensor((1, 4, 8, 8, 8), dtype="float32"), w3: R.Tensor((8, 4, 3, 3, 3), dtype="float32"), '
    'xh: R.Tensor((1, 16, 16, 4), dtype="float32"), wh: R.Tensor((3, 3, 4, 8), dtype="float32"), '
    'wt1: R.Tensor((4, 8, 3), dtype="float32"), wt2: R.Tensor((4, 8, 3, 3), dtype="float16"), wt3: R.Tensor((4, 8, 3, 3, 3), dtype="float32")',
    [
        "R.nn.conv1d(x1, w1, strides=2, padding=[1, 1], dilation=1, groups=1)",
        'R.nn.conv1d(x1, w1, data_layout="NCW", kernel_layout="OIW", out_layout="NCW", out_dtype="float32")',
        'R.nn.conv2d(x2, w2, padding=(1, 1), out_dtype="float32")',
        "R.nn.conv2d(x2, w2, strides=(2, 1), padding=[0, 1, 2, 3], dilation=(2, 2))",
        'R.nn.conv2d(xh, wh, data_layout="NHWC", kernel_layout="HWIO")',
        "R.nn.conv2d(x2, R.reshape(w2, (8, 4, 3, 3)), groups=1)",
        "R.nn.conv3d(x3, w3, padding=1)",
        "R.nn.conv1d_transpose(x1, R.permute_dims(w1, [1, 0, 2]), strides=2, output_padding=1)",
        "R.nn.conv1d_transpose(R.zeros((1, 4, 16), 'float32'), wt1)",
        "R.nn.conv2d_transpose(x2, wt2, strides=(2, 2), padding=(1, 1), output_padding=(1, 1))",
        "R.nn.conv3d_transpose(x3, wt3)",
    ],
)
ops_case(
    "ops_nn_pool_variants",
    'x1: R.Tensor((1, 4, 16), dtype="float32"), x2: R.Tensor((1, 4, 16, 16), dtype="float32"), x3: R.Tensor((1, 4, 8, 8, 8), dtype="float32"), xh: R.Tensor((1, 16, 16, 4), dtype="float16")',
    [
        "R.nn.max_pool1d(x1, pool_size=2, strides=2)",
        "R.nn.max_pool2d(x2)",
        "R.nn.max_pool2d(x2, pool_size=(3, 3), strides=(2, 2), dilation=(1, 1), padding=(1, 1), ceil_mode=True)",
        'R.nn.max_pool2d(xh, pool_size=(2, 2), layout="NHWC", out_layout="NHWC")',
        "R.nn.max_pool3d(x3, pool_size=2)",
        "R.nn.avg_pool1d(x1, pool_size=3, padding=1, count_include_pad=True)",
        "R.nn.avg_pool2d(x2, pool_size=(2, 2), strides=(2, 2))",
        "R.nn.avg_pool3d(x3, pool_size=(2, 2, 2), ceil_mode=False)",
        "R.nn.adaptive_avg_pool1d(x1, output_size=4)",
        "R.nn.adaptive_avg_pool2d(x2)",
        'R.nn.adaptive_avg_pool2d(xh, output_size=(2, 3), layout="NHWC")',
        "R.nn.adaptive_avg_pool3d(x3, output_size=(1, 2, 2))",
    ],
)
ops_case(
    "ops_nn_norm_variants",
    'x: R.Tensor((2, 8, 4, 4), dtype="float32"), g: R.Tensor((8,), dtype="float32"), b: R.Tensor((8,), dtype="float32"), m: R.Tensor((8,), dtype="float32"), v: R.Tensor((8,), dtype="float32")',
    [
        "R.nn.batch_norm(x, g, b, m, v)",
        "R.nn.batch_norm(x, g, b, m, v, axis=1, epsilon=0.001, center=False, scale=True, momentum=0.9, training=True)",
        "R.nn.instance_norm(x, g, b)",
        "R.nn.instance_norm(x, g, b, channel_axis=1, axes=[2, 3], epsilon=1e-06)",
        "R.nn.group_norm(x, g, b, num_groups=4, channel_axis=1, axes=[2, 3])",
        "R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3], epsilon=0.0001, center=False, scale=False)",
        "R.nn.layer_norm(x, R.ones((4, 4), 'float32'), R.zeros((4, 4), 'float32'), axes=[-2, -1])",
    ],
    stages=("built", "legalized"),
)
ops_case(
    "ops_nn_misc",
    'x: R.Tensor((1, 8, 4, 4), dtype="float32"), a: R.Tensor((8,), dtype="float32"), p: R.Tensor((4, 10), dtype="float32"), t: R.Tensor((4,), dtype="int64"), w: R.Tensor((10,), dtype="float32")',
    [
        "R.nn.pad(x, pad_width=[0, 0, 0, 0, 1, 2, 3, 4])",
        'R.nn.pad(x, pad_width=[0, 0, 0, 0, 1, 1, 1, 1], pad_mode="reflect")',
        'R.nn.pad(x, [0, 0, 0, 0, 2, 2, 2, 2], "edge", 1.5)',
        "R.nn.pixel_shuffle(x, upscale_factor=2)",
        "R.nn.prelu(x, a)",
        "R.nn.prelu(x, a, axis=1)",
        "R.nn.nll_loss(p, t)",
        'R.nn.nll_loss(p, t, w, reduction="sum", ignore_index=3)',
        'R.nn.nll_loss(p, t, reduction="none")',
        "R.nn.cross_entropy_with_logits(p, p)",
        "R.nn.batch_flatten(x)",
    ],
)
ops_case(
    "ops_image",
    'x: R.Tensor((1, 3, 8, 8), dtype="float32"), xh: R.Tensor((1, 8, 8, 3), dtype="float16"), x5: R.Tensor((1, 3, 4, 8, 8), dtype="float32"), theta: R.Tensor((1, 2, 3), dtype="float32"), grid: R.Tensor((1, 2, 4, 4), dtype="float32")',
    [
        "R.image.resize2d(x, (16, 16))",
        'R.image.resize2d(x, R.shape([4, 4]), roi=[0.0, 0.0, 0.5, 0.5], layout="NCHW", method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="round", cubic_alpha=-0.75, cubic_exclude=1, extrapolation_value=0.5, out_dtype="float16")',
        'R.image.resize2d(xh, (4, 4), layout="NHWC", method="cubic")',
        "R.image.resize3d(x5, (8, 16, 16))",
        "R.image.affine_grid(theta, (4, 4))",
        "R.image.grid_sample(x, R.permute_dims(grid, [0, 2, 3, 1]))",
        'R.image.grid_sample(x, R.permute_dims(grid, [0, 2, 3, 1]), method="nearest", layout="NCHW", padding_mode="border", align_corners=False)',
    ],
)
ops_case(
    "ops_index_scatter",
    'x: R.Tensor((4, 6), dtype="float32"), i2: R.Tensor((3, 2), dtype="int64"), u: R.Tensor((3,), dtype="float32"), ie: R.Tensor((4, 2), dtype="int64"), ue: R.Tensor((4, 2), dtype="float32"), iv: R.Tensor((2,), dtype="int64"), b: R.Tensor((5,), dtype="float32"), v1: R.Tensor((3,), dtype="float32"), v2: R.Tensor((2,), dtype="float32")',
    [
        "R.gather_nd(x, i2)",
        "R.gather_nd(x, R.reshape(i2, (3, 2)), batch_dims=0)",
        "R.scatter_nd(x, i2, u)",
        'R.scatter_nd(x, i2, u, reduction="add")',
        "R.scatter_elements(x, ie, ue)",
        'R.scatter_elements(x, ie, ue, axis=1, reduction="mul")',
        "R.index_put(x, (iv, iv), R.ones((2,), 'float32'))",
        "R.index_put(x, (iv, iv), R.ones((2,), 'float32'), accumulate=True)",
        "R.index_tensor(x, (iv,))",
        "R.meshgrid((v1, v2))",
        'R.meshgrid((v1, v2), indexing="xy")',
        "R.one_hot(iv, R.prim_value(T.float32(1.0)), R.prim_value(T.float32(0.0)), depth=5)",
        "R.bucketize(x, b)",
        "R.bucketize(x, b, out_int32=True, right=True)",
        "R.slice_scatter(x, R.zeros((4, 2), 'float32'), 1, 3, 1, axis=1)",
    ],
    stages=("built",),
)
ops_case(
    "ops_bucketize",
    'x: R.Tensor((4, 6), dtype="float32"), b: R.Tensor((5,), dtype="float32")',
    ["R.bucketize(x, b)", "R.bucketize(x, b, out_int32=True, right=True)"],
)
ops_case(
    "ops_creation_more",
    'x: R.Tensor((3, 4), dtype="float32"), i: R.Tensor((3, 4), dtype="int32")',
    [
        'R.eye(3)',
        'R.eye(3, 4, 1, dtype="int32")',
        "R.eye_like(x)",
        'R.eye_like(i, k=-1, dtype="float16")',
        'R.hamming_window(8, 1, R.prim_value(T.float32(0.54)), R.prim_value(T.float32(0.46)), dtype="float32")',
        "R.full((2,), R.const(3, 'int32'), dtype='int32')",
        "R.zeros(R.shape([2, 2]), 'bool')",
        'R.ones((1,), "bfloat16")',
    ],
)
ops_case(
    "ops_quantize",
    'x: R.Tensor((4, 8), dtype="float32"), q: R.Tensor((4, 8), dtype="int8"), s: R.Tensor((8,), dtype="float32"), z: R.Tensor((8,), dtype="int8"), s1: R.Tensor((), dtype="float32"), z1: R.Tensor((), dtype="int8")',
    [
        "R.quantize(x, s, z, axis=1)",
        'R.quantize(x, s1, z1, axis=-1, out_dtype="uint8")',
        "R.dequantize(q, s, z, axis=1)",
        'R.dequantize(q, s1, z1, out_dtype="float16")',
    ],
)
ops_case(
    "ops_misc_more",
    'x: R.Tensor((4, 8), dtype="float32"), y: R.Tensor((4, 8), dtype="float32"), z: R.Tensor((4, 8), dtype="float32"), p: R.Tensor((2, 5), dtype="float32"), us: R.Tensor((2, 1), dtype="float32"), si: R.Tensor((2, 1), dtype="int64"), h: R.Tensor((4, 8), dtype="float16"), i: R.Tensor((5,), dtype="int32")',
    [
        "R.ewise_fma(x, y, z)",
        "R.wrap_param(h)",
        'R.wrap_param(h, dtype="float32")',
        "R.median(x)",
        "R.median(x, axis=1, keepdims=True)",
        "R.size(x)",
        "R.multinomial_from_uniform(p, us, si)",
        'R.multinomial_from_uniform(p, us, si, dtype="int32")',
        "R.layout_transform(x, index_map=lambda i, j: (j // 4, i, j % 4))",
        "R.layout_transform(x, index_map=lambda i, j: (i, j // 3, j % 3), pad_value=0.0)",
        "R.nonzero(i)",
        "R.unique(i)",
        "R.unique(i, sorted=True, return_index=False, return_inverse=True, return_counts=True, axis=0)",
        "R.builtin.stop_lift_params(x)",
        "R.memory.view(x, R.shape([8, 4]))",
        'R.memory.view(x, R.shape([32]), "float16", R.prim_value(T.int64(16)))',
        "R.memory.ensure_zero_offset(x)",
        "R.flip(x, axis=0)",
        "R.grad.no_grad(x)",
        "R.grad.start_checkpoint(x)",
        "R.grad.end_checkpoint(x)",
    ],
    stages=("built",),
)
ops_case(
    "ops_vision",
    'boxes: R.Tensor((1, 10, 4), dtype="float32"), scores: R.Tensor((1, 3, 10), dtype="float32"), data: R.Tensor((1, 10, 6), dtype="float32"), x: R.Tensor((1, 4, 16, 16), dtype="float32"), rois: R.Tensor((3, 5), dtype="float32")',
    [
        "R.vision.all_class_non_max_suppression(boxes, scores, R.const(5, 'int64'), R.const(0.5, 'float32'), R.const(0.1, 'float32'))",
        'R.vision.all_class_non_max_suppression(boxes, scores, R.const(5, "int64"), R.const(0.5, "float32"), R.const(0.1, "float32"), output_format="tensorflow")',
        "R.vision.get_valid_counts(data, score_threshold=0.2, id_index=0, score_index=1)",
        "R.vision.roi_align(x, rois, pooled_size=(2, 2), spatial_scale=0.5)",
        'R.vision.roi_align(x, rois, pooled_size=[3, 3], spatial_scale=1.0, sample_ratio=2, aligned=True, layout="NCHW", mode="max")',
        "R.vision.roi_pool(x, rois, pooled_size=(2, 2), spatial_scale=0.25)",
    ],
    stages=("built",),
)
ops_case(
    "ops_ccl_dist",
    'x: R.Tensor((4, 8), dtype="float32")',
    [
        "R.ccl.allreduce(x)",
        'R.ccl.allreduce(x, op_type="max", in_group=False)',
        "R.ccl.allgather(x, num_workers=2)",
        "R.ccl.broadcast_from_worker0(x)",
        "R.ccl.scatter_from_worker0(x, num_workers=2, axis=1)",
    ],
    stages=("built",),
)


# ---------------------------------------------------------------------------------------
# Dtypes and shapes


for dt in ["float32", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "bool"]:
    ops = ["R.add(a, b)", "R.multiply(a, b)", "R.maximum(a, b)"] if dt != "bool" else ["R.logical_and(a, b)", "R.equal(a, b)"]
    ops += [f'R.astype(a, "{"float32" if dt != "float32" else "float16"}")', "R.permute_dims(a)", "R.sum(a, axis=[1])" if dt != "bool" else "R.reshape(a, (-1,))"]
    ops_case(
        f"dtype_{dt}",
        f'a: R.Tensor(("n", 4), dtype="{dt}"), b: R.Tensor((1, 4), dtype="{dt}")',
        ops,
        stages=("built", "legalized", "fused"),
    )


@case("shapes_symbolic_arith", stages=("built", "legalized", "fused", "vm"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(("n", "m"), dtype="float32"), y: R.Tensor(("m", 4), dtype="float32"), z: R.Tensor(("k",), dtype="float32")) -> R.Tuple(R.Tensor(("n * m",), dtype="float32"), R.Tensor(("n + k",), dtype="float32"), R.Tensor(("n", 4), dtype="float32")):
            n = T.int64()
            m = T.int64()
            k = T.int64()
            with R.dataflow():
                flat = R.reshape(x, R.shape([n * m]))
                r = R.sum(x, axis=[1])
                cat = R.concat((r, z), axis=0)
                mm = R.matmul(x, y)
                e = R.exp(mm)
                R.output(flat, cat, e)
            return (flat, cat, e)
        '''
    )


@case("shapes_compound_dims", stages=("built", "legalized", "fused"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((1, "n", 64), dtype="float32"), kv: R.Tensor((1, "m", 64), dtype="float32")) -> R.Tensor((1, "m + n", 64), dtype="float32"):
            n = T.int64()
            m = T.int64()
            with R.dataflow():
                a = R.concat((kv, x), axis=1)
                b = R.reshape(a, R.shape([1, m + n, 4, 16]))
                c = R.reshape(b, R.shape([1, m + n, 64]))
                d = R.nn.softmax(c)
                R.output(d)
            return d
        '''
    )


@case("shapes_floordiv_mod", stages=("built", "legalized"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("(n + 63) // 64 * 64",), dtype="float32"):
            n = T.int64()
            with R.dataflow():
                p = R.call_pure_packed("pad_to", x, R.shape([(n + 63) // 64 * 64]), sinfo_args=(R.Tensor(((n + 63) // 64 * 64,), dtype="float32"),))
                q: R.Tensor((n % 8 + n // 8,), dtype="float32") = R.call_pure_packed("odd", x, sinfo_args=(R.Tensor((n % 8 + n // 8,), dtype="float32"),))
                R.output(p)
            return p
        '''
    )


@case("shapes_int32_tir_vars", stages=("built", "vm"))
def _():
    return parse(
        '''
        @T.prim_func(private=True, s_tir=True)
        def copy_i32(var_a: T.handle, var_b: T.handle):
            T.func_attr({"tirx.noalias": True})
            n = T.int32()
            a = T.match_buffer(var_a, (n, 4), "int32")
            b = T.match_buffer(var_b, (n, 4), "int32")
            for i, j in T.grid(n, 4):
                with T.sblock("copy"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(a[vi, vj])
                    T.writes(b[vi, vj])
                    b[vi, vj] = a[vi, vj] + 1

        @T.prim_func(private=True, s_tir=True)
        def mixed(var_a: T.handle, m: T.int64, var_b: T.handle):
            T.func_attr({"tirx.noalias": True})
            n = T.int64()
            a = T.match_buffer(var_a, (n,))
            b = T.match_buffer(var_b, (n,))
            for i in range(n):
                with T.sblock("m"):
                    vi = T.axis.spatial(n, i)
                    T.reads(a[vi])
                    T.writes(b[vi])
                    b[vi] = a[vi] * T.Cast("float32", m) + T.Cast("float32", T.Cast("int32", vi) % T.Cast("int32", m))

        @R.function
        def main(x: R.Tensor(("n", 4), dtype="int32"), y: R.Tensor(("k",), dtype="float32")) -> R.Tensor(("n", 4), dtype="int32"):
            n = T.int64()
            k = T.int64()
            cls = Module
            with R.dataflow():
                z = R.call_tir(cls.copy_i32, (x,), out_sinfo=R.Tensor((n, 4), dtype="int32"))
                w = R.call_tir(cls.mixed, (y, R.prim_value(7)), out_sinfo=R.Tensor((k,), dtype="float32"))
                R.output(z)
            return z
        '''
    )


# ---------------------------------------------------------------------------------------
# Relax constructs


@case("relax_if_else_nested", stages=("built", "legalized", "vm"))
def _():
    return parse(
        '''
        @R.function
        def main(c: R.Tensor((), dtype="bool"), d: R.Tensor((), dtype="bool"), x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            if c:
                a = R.add(x, x)
                if d:
                    b = R.multiply(a, a)
                    r = R.exp(b)
                else:
                    b = R.subtract(a, x)
                    r = R.nn.relu(b)
                y = R.add(r, a)
            else:
                y = R.negative(x)
            z = R.multiply(y, y)
            return z
        '''
    )


@case("relax_local_function", stages=("built",))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            @R.function
            def inner(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
                b = R.add(a, a)
                return b

            @R.function
            def outer(a: R.Tensor((4,), dtype="float32"), f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True)) -> R.Tensor((4,), dtype="float32"):
                b: R.Tensor((4,), dtype="float32") = f(a)
                c = R.multiply(b, a)
                return c

            z: R.Tensor((4,), dtype="float32") = outer(x, inner)
            w: R.Tensor((4,), dtype="float32") = inner(y)
            r = R.add(z, w)
            return r
        '''
    )


@case("relax_match_cast_defines", stages=("built", "legalized", "vm"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(dtype="float32", ndim=2), s: R.Shape(ndim=2), o: R.Object, t: R.Tensor) -> R.Tuple(R.Tensor(dtype="float32", ndim=2), R.Shape(ndim=2)):
            n = T.int64()
            m = T.int64()
            k = T.int64()
            y = R.match_cast(x, R.Tensor((n, m), dtype="float32"))
            sh = R.match_cast(s, R.Shape([n, k]))
            z = R.add(y, y)
            u = R.match_cast(o, R.Tensor((k,), dtype="int32"))
            v = R.match_cast(t, R.Tensor(dtype="float16"))
            w = R.match_cast(y, R.Tensor((n, n * 2 - m), dtype="float32"))
            return (z, sh)
        '''
    )


@case("relax_tuples_items", stages=("built", "legalized", "fused", "vm"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((2, 4), dtype="float32"), t: R.Tuple(R.Tensor((2, 4), dtype="float32"), R.Tuple(R.Tensor((4,), dtype="int32"), R.Shape([2, 4])))) -> R.Tuple(R.Tensor((2, 4), dtype="float32"), R.Tuple, R.Tuple(R.Tensor((2, 4), dtype="float32"))):
            with R.dataflow():
                a = t[0]
                inner = t[1]
                b = inner[0]
                c = R.add(a, x)
                pair = (c, b)
                first = pair[0]
                empty = R.tuple()
                single = (first,)
                R.output(first, empty, single)
            return (first, empty, single)
        '''
    )


@case("relax_callable_prim_value_params", stages=("built", "legalized"), only025=True)
def _():
    return parse(
        '''
        @R.function
        def main(f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True), g: R.Callable, p: R.Prim(value="k"), q: R.Prim("float32"), b: R.Prim("bool"), s: R.Shape(["m", "k"]), x: R.Tensor(("m",), dtype="float32")) -> R.Tuple(R.Prim(value="k * 2"), R.Shape(["m", "k"])):
            k = T.int64()
            m = T.int64()
            z = R.zeros((4,), "float32")
            y: R.Tensor((4,), dtype="float32") = f(z)
            r = R.prim_value(k * 2)
            return (r, s)
        '''
    )


@case("relax_prim_value_sym_defs", stages=("built", "legalized", "vm"), only025=True)
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(("n",), dtype="float32"), p: R.Prim(value="m"), q: R.Prim(value="n + 1")) -> R.Tensor(("n",), dtype="float32"):
            n = T.int64()
            m = T.int64()
            a = R.prim_value(m * n)
            y = R.add(x, x)
            return y
        '''
    )


@case("relax_callable_shape_params", stages=("built", "legalized"))
def _():
    return parse(
        '''
        @R.function
        def main(f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True), g: R.Callable((R.Tensor((4,), dtype="float32"), R.Prim("int64")), R.Tuple(R.Tensor((4,), dtype="float32"), R.Object), False), p: R.Prim("int64"), q: R.Prim("float32"), b: R.Prim("bool"), s: R.Shape(["m", "k"]), x: R.Tensor(("m",), dtype="float32")) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Shape(["m", "k"])):
            m = T.int64()
            k = T.int64()
            z = R.zeros((4,), "float32")
            y: R.Tensor((4,), dtype="float32") = f(z)
            s2 = R.shape([m, k * 2, 3])
            return (y, s)
        '''
    )


@case("relax_call_packed_family", stages=("built", "legalized", "vm"))
def _():
    return parse(
        '''
        @R.function(pure=False)
        def main(x: R.Tensor(("n", 4), dtype="float32"), s: R.Shape(["n", 4])) -> R.Tensor(("n", 4), dtype="float32"):
            n = T.int64()
            R.call_packed("my.effect", x, R.prim_value(1), R.str("tag"), sinfo_args=(R.Tuple,))
            a = R.call_packed("my.make", x, s, sinfo_args=(R.Tensor((n, 4), dtype="float32"),))
            b = R.call_pure_packed("my.pure", a, R.shape([n, 4]), R.dtype("float16"), sinfo_args=(R.Tensor((n, 4), dtype="float32"),))
            c = R.call_dps_packed("my.dps", (a, b), out_sinfo=R.Tensor((n, 4), dtype="float32"))
            d = R.call_dps_packed("my.dps2", (c,), out_sinfo=[R.Tensor((n, 4), dtype="float32"), R.Tensor((n,), dtype="int32")])
            e = R.call_packed("my.object", sinfo_args=(R.Object,))
            f = R.call_pure_packed("my.tuple", c, sinfo_args=(R.Tuple(R.Tensor((n, 4), dtype="float32"), R.Shape([n])),))
            g = R.call_pure_packed("my.prim", c, sinfo_args=(R.Prim("int64"),))
            h = R.call_pure_packed("my.unknown", c, sinfo_args=(R.Tensor(dtype="float32", ndim=2),))
            return c
        '''
    )


@case("relax_call_tir_forms", stages=("built", "main", "fused", "vm", "callrewrite", "planned", "killed"))
def _():
    return parse(
        '''
        @T.prim_func(private=True, s_tir=True)
        def scale(var_x: T.handle, m: T.int64, var_y: T.handle):
            T.func_attr({"tirx.noalias": True})
            n = T.int64()
            x = T.match_buffer(var_x, (n, T.int64(4)))
            y = T.match_buffer(var_y, (n, T.int64(4)))
            for i, j in T.grid(n, T.int64(4)):
                with T.sblock("scale"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(x[vi, vj])
                    T.writes(y[vi, vj])
                    y[vi, vj] = x[vi, vj] * T.Cast("float32", m)

        @T.prim_func(private=True, s_tir=True)
        def add_inplace(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"tirx.noalias": True})
            for i in range(T.int64(4)):
                with T.sblock("add"):
                    vi = T.axis.spatial(T.int64(4), i)
                    T.reads(a[vi], b[vi])
                    T.writes(a[vi])
                    a[vi] = a[vi] + b[vi]

        @T.prim_func(private=True, s_tir=True)
        def two_out(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(4),), "float32"), c: T.Buffer((T.int64(4),), "int32")):
            T.func_attr({"tirx.noalias": True})
            for i in range(T.int64(4)):
                with T.sblock("two"):
                    vi = T.axis.spatial(T.int64(4), i)
                    T.reads(a[vi])
                    T.writes(b[vi], c[vi])
                    b[vi] = a[vi]
                    c[vi] = T.Cast("int32", a[vi])

        @R.function
        def main(x: R.Tensor(("n", 4), dtype="float32"), a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor(("n", 4), dtype="float32"), R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="int32")):
            n = T.int64()
            cls = Module
            with R.dataflow():
                y = R.call_tir(cls.scale, (x, R.prim_value(3)), out_sinfo=R.Tensor((n, 4), dtype="float32"))
                z = R.call_tir(cls.scale, (y, R.prim_value(n)), out_sinfo=R.Tensor((n, 4), dtype="float32"))
                w: R.Tensor((4,), dtype="float32") = R.call_tir_inplace(cls.add_inplace, (a, b), out_sinfo=R.Tensor((4,), dtype="float32"), inplace_indices=[0])
                t = R.call_tir(cls.two_out, (w,), out_sinfo=[R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="int32")])
                t0 = t[0]
                t1 = t[1]
                R.output(z, t0, t1)
            return (z, t0, t1)
        '''
    )


@case("relax_print_assert_impure", stages=("built", "vm"))
def _():
    return parse(
        '''
        @R.function(pure=False)
        def main(x: R.Tensor((4,), dtype="float32"), c: R.Tensor((), dtype="bool")) -> R.Tensor((4,), dtype="float32"):
            R.print(x, format=R.str("x = {}"))
            R.print(x, c, format=R.str(""))
            R.assert_op(c, format=R.str("c must hold"))
            R.assert_op(c, x, format=R.str("x: {} \\"quoted\\"\\n"))
            y = R.add(x, x)
            return y
        '''
    )


@case("relax_private_calls", stages=("built", "main", "legalized", "fused", "vm"))
def _():
    return parse(
        '''
        @R.function(private=True)
        def helper(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
            n = T.int64()
            y = R.exp(x)
            return y

        @R.function(pure=False, private=True)
        def side(x: R.Tensor(("n",), dtype="float32")) -> R.Tuple:
            n = T.int64()
            R.print(x, format=R.str("{}"))
            return R.tuple()

        @R.function
        def other(x: R.Tensor(("m",), dtype="float32"), y: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("m",), dtype="float32"):
            m = T.int64()
            cls = Module
            a = cls.helper(x)
            b = R.add(a, y)
            return b

        @R.function(pure=False)
        def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
            cls = Module
            a = cls.other(x, x)
            _ = cls.side(a)
            b = cls.helper(a)
            return b
        '''
    )


@case("relax_func_attrs_bounds", stages=("built", "legalized", "vm", "planned", "killed"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((2, "n"), dtype="float32"), y: R.Tensor(("m", "n"), dtype="float16")) -> R.Tensor((2, "n"), dtype="float32"):
            n = T.int64()
            m = T.int64()
            R.func_attr({"relax.force_pure": True, "tir_var_upper_bound": {"n": 1024, "m": 16}, "tir_var_lower_bound": {"n": 1}, "tir_non_negative_var": ["m"], "num_input": 1, "custom_str": "hello", "custom_float": 0.5, "custom_list": [1, 2, 3]})
            a = R.exp(x)
            b = R.nn.softmax(a)
            c = R.multiply(b, a)
            d = R.add(c, x)
            return d
        '''
    )


@case("relax_module_attrs_vdevice", stages=("built", "legalized"))
def _():
    return parse(
        '''
        I.module_attrs({"system_lib_prefix": "lib_", "external_mods": [], "attr_int": 3})
        I.module_global_infos({"vdevice": [I.vdevice({"keys": ["cpu"], "kind": "llvm", "mtriple": "x86_64-unknown-linux-gnu", "tag": ""}, 0, "global"), I.vdevice({"arch": "sm_80", "keys": ["cuda", "gpu"], "kind": "cuda", "max_num_threads": 1024, "tag": "", "thread_warp_size": 32}, 0, "global"), I.vdevice({"arch": "sm_80", "keys": ["cuda", "gpu"], "kind": "cuda", "max_num_threads": 1024, "tag": "", "thread_warp_size": 32}, 1, "global")]})
        @R.function
        def main(x: R.Tensor((2, 3), dtype="float32", vdevice="llvm:0"), y: R.Tensor((2, 3), dtype="float32", vdevice="cuda:0"), z: R.Tensor((2, 3), dtype="float32", vdevice="cuda:1")) -> R.Tensor((2, 3), dtype="float32", vdevice="cuda:0"):
            with R.dataflow():
                a: R.Tensor((2, 3), dtype="float32", vdevice="cuda:0") = R.to_vdevice(x, "cuda:0")
                b: R.Tensor((2, 3), dtype="float32", vdevice="cuda:0") = R.add(a, y)
                c: R.Tensor((2, 3), dtype="float32", vdevice="cuda:0") = R.hint_on_device(b, R.device(2, 0))
                R.output(c)
            return c
        '''
    )


@case("relax_extern_funcs", stages=("built",))
def _():
    mod = parse(
        '''
        @R.function
        def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            y = R.call_dps_packed("ext_b", (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            return y
        '''
    )
    mod["ext_b"] = relax.ExternFunc("ext_b")
    mod["ext_a"] = relax.ExternFunc("ext_a_symbol")
    return mod


@case("relax_constants", stages=("built", "legalized", "fused"))
def _():
    bb = relax.BlockBuilder()
    x = relax.Var("x", TensorSI([2, 3], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.add(x, relax.const(np.arange(6, dtype="float32").reshape(2, 3))))
            b = bb.emit(relax.op.multiply(a, relax.const(2.5, "float32")))
            c = bb.emit(relax.op.add(b, relax.const(np.ones((3,), dtype="float32"))))
            d = bb.emit(relax.op.astype(c, "int32"))
            e = bb.emit(relax.op.add(d, relax.const(-7, "int32")))
            f = bb.emit(relax.op.add(e, relax.const(np.array(3, dtype="int64").astype("int32"))))
            g = bb.emit(relax.op.less(f, relax.const(True, "bool")))
            h = bb.emit(relax.op.add(x, relax.const(np.float16(1.5).astype("float32"))))
            i = bb.emit(relax.op.astype(h, "float16"))
            j = bb.emit(relax.op.multiply(i, relax.const(0.1, "float16")))
            k = bb.emit(relax.op.add(x, relax.const(np.zeros((1, 3), dtype="float32"))))
            l = bb.emit(relax.op.astype(x, "uint8"))
            m = bb.emit(relax.op.add(l, relax.const(7, "uint8")))
            o = bb.emit(relax.op.astype(x, "bfloat16"))
            gv = bb.emit_output(relax.Tuple([g, j, k, m, o]))
        bb.emit_func_output(gv)
    return bb.get()


@case("relax_unusual_floats", stages=("built", "legalized"))
def _():
    vals = [
        ("1e-05", "float32"), ("0.1", "float32"), ('float("inf")', "float32"), ('-float("inf")', "float32"),
        ('float("nan")', "float32"), ("-0.0", "float32"), ("3.4028234663852886e+38", "float32"),
        ("-3.4028234663852886e+38", "float32"), ("1.1754943508222875e-38", "float32"), ("1e-45", "float32"),
        ("1e+20", "float64"), ("1e-300", "float64"), ("65504.0", "float16"), ("0.0001", "float16"),
        ("123456789.0", "float32"), ("0.3333333333333333", "float64"), ("2.5", "bfloat16"),
        ("-1", "int64"), ("2147483648", "int64"), ("-128", "int8"), ("255", "uint8"), ("True", "bool"), ("False", "bool"),
    ]
    lines = []
    for i, (v, dt) in enumerate(vals):
        lines.append(f'c{i} = R.const({v}, "{dt}")')
    lines.append('y0 = R.add(x, R.const(1e-05, "float32"))')
    lines.append('y1 = R.multiply(x, R.const(float("inf"), "float32"))')
    lines.append('y2 = R.maximum(x, R.const(-float("inf"), "float32"))')
    lines.append('y3 = R.add(x, R.const(-0.0, "float32"))')
    lines.append('y4 = R.clip(x, -3.4028234663852886e+38, 1e-05)')
    ret = "(" + ", ".join(f"c{i}" for i in range(len(vals))) + ", y0, y1, y2, y3, y4)"
    return main_fn('x: R.Tensor((4,), dtype="float32")', lines, ret, dataflow=False)


@case("relax_name_dedup", stages=("built", "legalized"))
def _():
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    n2 = tir.Var("n", "int64")
    x = relax.Var("x", TensorSI([n, 4], "float32"))
    x2 = relax.Var("x", TensorSI([n2, 4], "float32"))
    r = relax.Var("R", TensorSI([4], "float32"))
    t = relax.Var("T", TensorSI([4], "float32"))
    cls = relax.Var("cls", TensorSI([4], "float32"))
    weird = relax.Var("a.b-c", TensorSI([4], "float32"))
    with bb.function("main", [x, x2, r, t, cls, weird]):
        with bb.dataflow():
            lv = bb.emit(relax.op.add(r, t), name_hint="lv")
            lv_b = bb.emit(relax.op.add(lv, cls), name_hint="lv")
            lv1 = bb.emit(relax.op.add(lv_b, weird), name_hint="lv1")
            s = bb.emit(relax.op.sum(x, axis=[0]), name_hint="storage")
            s2 = bb.emit(relax.op.sum(x2, axis=[0]), name_hint="storage")
            s3 = bb.emit(relax.op.add(s, s2), name_hint="storage1")
            s4 = bb.emit(relax.op.add(s3, lv1), name_hint="storage1")
            gv = bb.emit_output(s4)
        bb.emit_func_output(gv)
    return bb.get()


@case("relax_blockbuilder_mlp", stages=("built", "legalized", "fused", "vm"))
def _():
    bb = relax.BlockBuilder()
    n = tir.Var("batch", "int64")
    x = relax.Var("x", TensorSI([n, 32], "float32"))
    w1 = relax.Var("w1", TensorSI([32, 64], "float32"))
    b1 = relax.Var("b1", TensorSI([64], "float32"))
    w2 = relax.Var("w2", TensorSI([64, 10], "float32"))
    with bb.function("main", [x, w1, b1, w2], attrs={"num_input": 1}):
        with bb.dataflow():
            h = bb.emit(relax.op.matmul(x, w1))
            h = bb.emit(relax.op.add(h, b1))
            h = bb.emit(relax.op.nn.gelu(h))
            o = bb.emit(relax.op.matmul(h, w2))
            o = bb.emit(relax.op.nn.log_softmax(o))
            gv = bb.emit_output(o)
        bb.emit_func_output(gv)
    return bb.get()


@case("relax_dataflow_mixed_blocks", stages=("built", "legalized", "vm"))
def _():
    return parse(
        '''
        @R.function(pure=False)
        def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            with R.dataflow():
                a = R.add(x, x)
                unused = R.multiply(a, a)
                R.output(a)
            R.print(a, format=R.str("mid {}"))
            with R.dataflow():
                b = R.exp(a)
                c = R.add(b, a)
                R.output(c)
            d = R.subtract(c, x)
            with R.dataflow():
                R.output()
            return d
        '''
    )


@case("relax_llama_block", stages=("built", "fused", "vm", "planned"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((1, "n", 64), dtype="float16"), past_k: R.Tensor((1, "m", 4, 16), dtype="float16"), cos: R.Tensor(("n", 16), dtype="float16"), w_norm: R.Tensor((64,), dtype="float16"), w_qkv: R.Tensor((64, 192), dtype="float16"), w_o: R.Tensor((64, 64), dtype="float16")) -> R.Tuple(R.Tensor((1, "n", 64), dtype="float16"), R.Tensor((1, "m + n", 4, 16), dtype="float16")):
            n = T.int64()
            m = T.int64()
            R.func_attr({"num_input": 3, "tir_var_upper_bound": {"m": 2048, "n": 2048}})
            with R.dataflow():
                h = R.nn.rms_norm(x, w_norm, axes=[-1], epsilon=1e-05)
                qkv = R.matmul(h, w_qkv)
                qkv4 = R.reshape(qkv, R.shape([1, n, 12, 16]))
                parts = R.split(qkv4, indices_or_sections=3, axis=2)
                q = parts[0]
                k = parts[1]
                v = parts[2]
                c = R.reshape(cos, R.shape([1, n, 1, 16]))
                q_e = R.multiply(q, c)
                k_all = R.concat((past_k, k), axis=1)
                qt = R.permute_dims(q_e, axes=[0, 2, 1, 3])
                kt = R.permute_dims(k_all, axes=[0, 2, 3, 1])
                s = R.matmul(qt, kt, out_dtype="float32")
                s2 = R.multiply(s, R.const(0.25, "float32"))
                p = R.nn.softmax(s2, axis=-1)
                p16 = R.astype(p, "float16")
                vt = R.permute_dims(v, axes=[0, 2, 1, 3])
                vt2 = R.repeat(vt, 1, axis=2)
                o = R.matmul(p16, R.strided_slice(vt2, axes=[2], begin=[0], end=[n]))
                o2 = R.reshape(R.permute_dims(qt, axes=[0, 2, 1, 3]), R.shape([1, n, 64]))
                out = R.add(x, R.matmul(o2, w_o))
                R.output(out, k_all)
            return (out, k_all)
        '''
    )


@case("relax_call_tir_tir_vars", stages=("built", "fused", "vm", "callrewrite"), only025=True)
def _():
    return parse(
        '''
        @T.prim_func(private=True, s_tir=True)
        def slice_rows(var_x: T.handle, var_y: T.handle, off: T.int64, m: T.int64):
            T.func_attr({"tirx.noalias": True})
            n = T.int64()
            x = T.match_buffer(var_x, (n, T.int64(8)))
            y = T.match_buffer(var_y, (m, T.int64(8)))
            for i, j in T.grid(m, T.int64(8)):
                with T.sblock("slice"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(x[vi + off, vj])
                    T.writes(y[vi, vj])
                    y[vi, vj] = x[vi + off, vj]

        @R.function
        def main(x: R.Tensor(("n", 8), dtype="float32"), s: R.Shape(["m"])) -> R.Tensor(("m", 8), dtype="float32"):
            n = T.int64()
            m = T.int64()
            cls = Module
            with R.dataflow():
                y = R.call_tir(cls.slice_rows, (x,), out_sinfo=R.Tensor((m, 8), dtype="float32"), tir_vars=R.shape([n - m, m]))
                z = R.call_tir(cls.slice_rows, (x,), out_sinfo=R.Tensor((2, 8), dtype="float32"), tir_vars=R.shape([0, 2]))
                R.output(y)
            return y
        '''
    )


@case("relax_closures", stages=("built", ("lifted", lambda_lifted), "main"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            @R.function
            def add_y(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
                b = R.add(a, y)
                return b

            @R.function
            def twice(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
                b = R.multiply(a, R.const(2.0, "float32"))
                return b

            z: R.Tensor((4,), dtype="float32") = add_y(x)
            w: R.Tensor((4,), dtype="float32") = twice(z)
            return w
        '''
    )


@case("relax_fuseops_primitive", stages=(("fuseops", fuse_ops_only), "fused"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(("n", 64), dtype="float32"), w: R.Tensor((64, 64), dtype="float32"), b: R.Tensor((64,), dtype="float32")) -> R.Tuple(R.Tensor(("n", 64), dtype="float32"), R.Tensor(("n",), dtype="float32")):
            n = T.int64()
            with R.dataflow():
                h = R.matmul(x, w)
                h1 = R.add(h, b)
                h2 = R.nn.relu(h1)
                h3 = R.multiply(h2, R.const(0.5, "float32"))
                s = R.sum(h3, axis=[1])
                s2 = R.sqrt(s)
                t = R.permute_dims(h3)
                u = R.matmul(h3, t)
                v = R.nn.softmax(u)
                o = R.matmul(v, h3)
                R.output(o, s2)
            return (o, s2)
        '''
    )


@case(
    "relax_fuse_by_pattern",
    stages=(
        ("patterned", lambda m: by_pattern(m).script()),
        ("merged", lambda m: relax.transform.MergeCompositeFunctions()(by_pattern(m)).script()),
    ),
)
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((8, 16), dtype="float32"), w: R.Tensor((16, 16), dtype="float32"), b: R.Tensor((16,), dtype="float32")) -> R.Tensor((8, 16), dtype="float32"):
            with R.dataflow():
                h = R.matmul(x, w)
                h1 = R.add(h, b)
                h2 = R.nn.relu(h1)
                h3 = R.exp(h2)
                R.output(h3)
            return h3
        '''
    )


@case(
    "relax_mixed_precision_lift_params",
    stages=(
        "built",
        ("mixed", lambda m: relax.transform.ToMixedPrecision(out_dtype="float16")(m).script()),
        ("lifted_params", lambda m: relax.transform.LiftTransformParams()(m).script()),
    ),
)
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor((1, "n", 32), dtype="float32"), w: R.Tensor((64, 32), dtype="float32"), w2: R.Tensor((32, 64), dtype="float32")) -> R.Tensor((1, "n", 32), dtype="float32"):
            n = T.int64()
            R.func_attr({"num_input": 1})
            with R.dataflow():
                wt = R.permute_dims(w)
                h = R.matmul(x, wt)
                h2 = R.nn.gelu(h)
                w2t = R.permute_dims(w2)
                o = R.matmul(h2, w2t)
                R.output(o)
            return o
        '''
    )


@case("relax_functions_single_helper", stages=("built", "legalized", ("helper", lambda m: m["helper"].script())))
def _():
    return parse(
        '''
        @R.function(private=True)
        def helper(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
            n = T.int64()
            R.func_attr({"relax.force_pure": True, "flag": False})
            y = R.nn.relu(x)
            return y

        @R.function
        def main(x: R.Tensor((16,), dtype="float32")) -> R.Tensor((16,), dtype="float32"):
            cls = Module
            y = cls.helper(x)
            return y
        '''
    )


@case("prim_only_module", stages=("built",))
def _():
    return parse(
        '''
        @T.prim_func
        def public_copy(a: T.Buffer((128,), "float32"), b: T.Buffer((128,), "float32")):
            for i in range(128):
                b[i] = a[i]

        @T.prim_func(private=True, s_tir=True)
        def sched(var_a: T.handle, var_b: T.handle):
            T.func_attr({"tirx.noalias": True})
            n, m = T.int64(), T.int64()
            a = T.match_buffer(var_a, (n, m), "float16")
            b = T.match_buffer(var_b, (n, m), "float16")
            for i, j in T.grid(n, m):
                with T.sblock("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(a[vi, vj])
                    T.writes(b[vi, vj])
                    b[vi, vj] = a[vi, vj] * T.float16(0.5)
        '''
    )


@case("relax_shapes_and_types", stages=("built", "legalized", "vm"))
def _():
    return parse(
        '''
        @R.function
        def main(x: R.Tensor(dtype="float32"), y: R.Tensor(ndim=3), z: R.Tensor, s: R.Shape, t: R.Shape(ndim=3), o: R.Object, u: R.Tuple) -> R.Tuple(R.Tensor(dtype="float32"), R.Shape(ndim=3), R.Object):
            a = R.shape_of(y)
            b = R.match_cast(a, R.Shape(ndim=3))
            c = R.match_cast(z, R.Tensor((2, 3), dtype="int8"))
            d = R.add(x, x)
            return (d, t, o)
        '''
    )


@case("relax_shape_var_tensors", stages=("built", "legalized"))
def _():
    return parse(
        '''
        @R.function
        def noparams() -> R.Tensor((2,), dtype="int32"):
            z = R.zeros((2,), "int32")
            return z

        @R.function
        def main(x: R.Tensor(dtype="float32", ndim=2), s: R.Shape(ndim=2), c: R.Tensor((), dtype="bool")) -> R.Tuple(R.Tensor(dtype="float32", ndim=2), R.Object):
            R.func_attr({"nested": {"a": [1, 2.5, "s"], "b": {"c": True}}, "neg": -3, "f": 1e-07})
            cls = Module
            with R.dataflow():
                y = R.zeros(s, "float32")
                sh = R.shape_of(x)
                z = R.reshape(x, sh)
                w = R.match_cast(z, R.Tensor((4, 4), dtype="float32"))
                R.output(y, w)
            if c:
                r = (y, w)
            else:
                r = (w, y)
            a = r[0]
            o: R.Object = a
            k = cls.noparams()
            return (a, o)
        '''
    )


@case("relax_call_inplace_grad", stages=("built", "vm"))
def _():
    return parse(
        '''
        @T.prim_func(private=True, s_tir=True)
        def f(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"tirx.noalias": True})
            for i in range(T.int64(4)):
                with T.sblock("b"):
                    vi = T.axis.spatial(T.int64(4), i)
                    T.reads(a[vi])
                    T.writes(b[vi])
                    b[vi] = a[vi] * T.float32(2.0)

        @R.function
        def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
            cls = Module
            a = R.call_inplace_packed("my.inplace", x, y, inplace_indices=[0], sinfo_args=(R.Tensor((4,), dtype="float32"),))
            b = R.call_tir_with_grad(cls.f, (x,), out_sinfo=R.Tensor((4,), dtype="float32"), te_grad_name="f_grad", te_grad_kwargs={"k": 1})
            c = R.call_pure_packed("my.pure", a, b, sinfo_args=(R.Tensor((4,), dtype="float32"),))
            return (c, b)
        '''
    )


# ---------------------------------------------------------------------------------------
# Hand-written TIR


@case("tir_hand_written_forms", stages=("built",))
def _():
    return parse(
        '''
        @T.prim_func(private=True, s_tir=True)
        def loops(a: T.Buffer((T.int64(16), T.int64(16)), "float32"), b: T.Buffer((T.int64(16), T.int64(16)), "float32")):
            T.func_attr({"op_pattern": 4, "tirx.noalias": True})
            # with T.sblock("root"):
            t = T.sblock_alloc_buffer((T.int64(16), T.int64(16)), scope="shared")
            for i in T.parallel(T.int64(16)):
                for j in T.vectorized(T.int64(16)):
                    with T.sblock("p"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(a[vi, vj])
                        T.writes(t[vi, vj])
                        t[vi, vj] = T.if_then_else(a[vi, vj] > T.float32(0.0), a[vi, vj], T.float32(0.0))
            for i in T.unroll(T.int64(16)):
                for j in range(T.int64(2), T.int64(16)):
                    with T.sblock("q"):
                        vi = T.axis.spatial(T.int64(16), i)
                        vj = T.axis.spatial((T.int64(2), T.int64(16)), j)
                        T.where(i < T.int64(15))
                        T.reads(t[vi, vj - T.int64(2):vj])
                        T.writes(b[vi, vj])
                        T.sblock_attr({"meta": 1, "name": "q"})
                        b[vi, vj] = T.Select(vi % T.int64(2) == T.int64(0), t[vi, vj - T.int64(1)], T.max(t[vi, vj - T.int64(2)], T.float32(-1.0))) + T.sqrt(T.float32(2.0))
            for k in T.serial(T.int64(4), annotations={"pragma_auto_unroll_max_step": 16}):
                with T.sblock("r"):
                    vk = T.axis.opaque(T.int64(4), k)
                    T.reads()
                    T.writes(b[vk, T.int64(0)])
                    b[vk, T.int64(0)] = T.float32(1.0) / T.float32(3.0)

        @T.prim_func(private=True, s_tir=True)
        def reduce(a: T.Buffer((T.int64(8), T.int64(8)), "float16"), r: T.Buffer((T.int64(8),), "float32")):
            T.func_attr({"op_pattern": 3, "tirx.noalias": True})
            for i, k in T.grid(T.int64(8), T.int64(8)):
                with T.sblock("sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(a[vi, vk])
                    T.writes(r[vi])
                    with T.init():
                        r[vi] = T.float32(0.0)
                    r[vi] = r[vi] + T.Cast("float32", a[vi, vk]) * T.float32(0.125)

        @T.prim_func(private=True, s_tir=True)
        def misc(a: T.Buffer((T.int64(4),), "int32"), b: T.Buffer((T.int64(4),), "int32")):
            T.func_attr({"tirx.noalias": True})
            for i in range(T.int64(4)):
                with T.sblock("m"):
                    vi = T.axis.spatial(T.int64(4), i)
                    T.reads(a[vi])
                    T.writes(b[vi])
                    b[vi] = T.shift_left(a[vi], 1) + T.bitwise_and(a[vi], 3) + T.truncdiv(a[vi], 2) + T.truncmod(a[vi], 3) + a[vi] // 5 + a[vi] % 7 + T.min(a[vi], 0) - (a[vi] - 1) * (a[vi] + 2)

        @R.function
        def main(a: R.Tensor((16, 16), dtype="float32"), h: R.Tensor((8, 8), dtype="float16"), i: R.Tensor((4,), dtype="int32")) -> R.Tuple(R.Tensor((16, 16), dtype="float32"), R.Tensor((8,), dtype="float32"), R.Tensor((4,), dtype="int32")):
            cls = Module
            with R.dataflow():
                b = R.call_tir(cls.loops, (a,), out_sinfo=R.Tensor((16, 16), dtype="float32"))
                r = R.call_tir(cls.reduce, (h,), out_sinfo=R.Tensor((8,), dtype="float32"))
                m = R.call_tir(cls.misc, (i,), out_sinfo=R.Tensor((4,), dtype="int32"))
                R.output(b, r, m)
            return (b, r, m)
        '''
    )


# ---------------------------------------------------------------------------------------
# Tensor expressions (BlockBuilder.emit_te) and the nn frontend


@case("te_topi_ops", stages=("built", "fused"))
def _():
    from tvm import te, topi

    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", TensorSI([1, 4, 16, 16], "float32"))
    w = relax.Var("w", TensorSI([8, 4, 3, 3], "float32"))
    s = relax.Var("s", TensorSI([n, 32], "float16"))
    with bb.function("main", [x, w, s]):
        with bb.dataflow():
            c = bb.emit_te(topi.nn.conv2d_nchw, x, w, 1, 1, 1)
            r = bb.emit_te(topi.nn.relu, c)
            p = bb.emit_te(topi.nn.pool2d, r, [2, 2], [2, 2], [1, 1], [0, 0, 0, 0], "max")
            t = bb.emit_te(topi.transpose, p, [0, 2, 3, 1])
            sm = bb.emit_te(topi.nn.softmax, s, axis=1)
            cat = bb.emit_te(topi.concatenate, [sm, sm], axis=0)
            cs = bb.emit_te(topi.cumsum, s, axis=1)
            gt = bb.emit_te(topi.greater, s, cs)
            wh = bb.emit_te(topi.where, gt, s, cs)
            gv = bb.emit_output(relax.Tuple([t, cat, wh]))
        bb.emit_func_output(gv)
    return bb.get()


@case("te_custom_compute", stages=("built", "fused", "vm"))
def _():
    from tvm import te

    def masked_rowmax(a, b):
        k = te.reduce_axis((0, a.shape[1]), name="k")
        m = te.compute(
            (a.shape[0],),
            lambda i: te.max(tir.if_then_else(b[i, k] > 0.5, a[i, k], tir.min_value("float32")), axis=k),
            name="masked_max",
        )
        return te.compute(a.shape, lambda i, j: te.exp(a[i, j] - m[i]), name="shifted")

    def argmax_pair(a):
        k = te.reduce_axis((0, a.shape[1]), name="k")

        def fcombine(x, y):
            lhs = tir.Select(x[1] >= y[1], x[0], y[0])
            rhs = tir.Select(x[1] >= y[1], x[1], y[1])
            return lhs, rhs

        def fidentity(t0, t1):
            return tir.const(-1, t0), tir.min_value(t1)

        reducer = te.comm_reducer(fcombine, fidentity, name="argmax")
        idx, val = te.compute(
            (a.shape[0],), lambda i: reducer((k.var.astype("int32"), a[i, k]), axis=k), name="argmax"
        )
        return [idx, val]

    def bitops(a):
        return te.compute(
            a.shape,
            lambda i, j: tir.Cast("float32", (tir.Cast("int32", a[i, j]) << 2) % 7 | 1) + tir.sqrt(te.abs(a[i, j])),
            name="bits",
        )

    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    a = relax.Var("a", TensorSI([n, 16], "float32"))
    b = relax.Var("b", TensorSI([n, 16], "float32"))
    with bb.function("main", [a, b]):
        with bb.dataflow():
            y = bb.emit_te(masked_rowmax, a, b, primfunc_name_hint="masked_softmax_num")
            z = bb.emit_te(argmax_pair, y, primfunc_name_hint="argmax_pair")
            u = bb.emit_te(bitops, a)
            gv = bb.emit_output(relax.Tuple([y, z, u]))
        bb.emit_func_output(gv)
    return bb.get()


@case("te_extern_packed", stages=("built", "vm"))
def _():
    from tvm import te

    def ext(a):
        return te.extern(
            a.shape,
            [a],
            lambda ins, outs: tir.call_packed("my.packed_kernel", ins[0], outs[0], 1.5),
            name="ext_out",
            dtype="float32",
        )

    bb = relax.BlockBuilder()
    a = relax.Var("a", TensorSI([8, 8], "float32"))
    with bb.function("main", [a]):
        with bb.dataflow():
            y = bb.emit_te(ext, a, primfunc_name_hint="call_ext")
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    return bb.get()


def nn_export(model, spec, debug=False):
    mod, _ = model.export_tvm(spec=spec, debug=debug)
    return mod


@case("nn_frontend_mlp", stages=("built", "fused", "vm"))
def _():
    from tvm.relax.frontend import nn

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 16, bias=False, dtype="float16")
            self.ln = nn.LayerNorm(32)
            self.emb = nn.Embedding(100, 16)

        def forward(self, x: nn.Tensor, ids: nn.Tensor):
            e = self.emb(ids)
            h = self.fc1(x + e)
            h = nn.silu(self.ln(h))
            h = self.fc2(h.astype("float16"))
            return nn.softmax(h.astype("float32"), axis=-1)

    spec = {"forward": {"x": nn.spec.Tensor(["n", 16], "float32"), "ids": nn.spec.Tensor(["n"], "int32")}}
    return nn_export(MLP(), spec)


@case("nn_frontend_attention_debug", stages=("built",))
def _():
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    # `op.print_` records its caller's file and line in the text; calling it from code
    # compiled under a fixed name keeps the corpus independent of this file's path.
    scope = {"op": op}
    exec(compile("def debug_print(t):\n    op.print_(t)\n", "nn_model.py", "exec"), scope)
    debug_print = scope["debug_print"]

    class Attn(nn.Module):
        def __init__(self):
            self.qkv = nn.Linear(64, 192, bias=False)
            self.norm = nn.RMSNorm(64, axes=-1, bias=False)
            self.conv = nn.Conv2D(4, 8, 3, padding=1)
            self.gn = nn.GroupNorm(2, 8)

        def forward(self, x: nn.Tensor, img: nn.Tensor):
            b, s, _ = x.shape
            h = self.norm(x)
            qkv = op.reshape(self.qkv(h), (b, s, 3, 4, 16))
            q, k, v = op.split(qkv, 3, axis=2)
            q = op.permute_dims(op.squeeze(q, 2), [0, 2, 1, 3])
            k = op.permute_dims(op.squeeze(k, 2), [0, 2, 3, 1])
            v = op.permute_dims(op.squeeze(v, 2), [0, 2, 1, 3])
            att = op.softmax(op.matmul(q, k) * 0.25, axis=-1)
            o = op.reshape(op.permute_dims(op.matmul(att, v), [0, 2, 1, 3]), (b, s, 64))
            debug_print(o)
            y = self.gn(self.conv(img))
            return o, op.maximum(y, op.zeros(y.shape, "float32"))

    spec = {"forward": {"x": nn.spec.Tensor([1, "s", 64], "float32"), "img": nn.spec.Tensor([1, 4, 8, 8], "float32")}}
    return nn_export(Attn(), spec, debug=True)


@case("nn_frontend_te_op", stages=("built", "fused"))
def _():
    from tvm import te
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    class M(nn.Module):
        def forward(self, x: nn.Tensor):
            y = op.tensor_expr_op(lambda t: te.compute(t.shape, lambda i, j: t[i, j] * t[i, j], name="sq"), "square_te", [x])
            z = op.take(y, op.ones((2,), "int32"), axis=0)
            return op.concat([z, z], dim=0)

    spec = {"forward": {"x": nn.spec.Tensor(["n", 8], "float32")}}
    return nn_export(M(), spec)


# ---------------------------------------------------------------------------------------
# GPU schedules (dlight)

for name, params, lines in [
    ("gpu_matmul", 'x: R.Tensor((1, "n", 256), dtype="float16"), w: R.Tensor((256, 512), dtype="float16")', ["R.matmul(x, w)"]),
    ("gpu_gemv", 'x: R.Tensor((1, 1, 1024), dtype="float16"), w: R.Tensor((4096, 1024), dtype="float16")', ["R.matmul(x, R.permute_dims(w))"]),
    ("gpu_softmax", 'x: R.Tensor((4, "n"), dtype="float32")', ["R.nn.softmax(x)"]),
    ("gpu_rms_norm", 'x: R.Tensor((1, "n", 4096), dtype="float16"), w: R.Tensor((4096,), dtype="float16")', ["R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-05)"]),
    ("gpu_layer_norm", 'x: R.Tensor(("n", 768), dtype="float32"), g: R.Tensor((768,), dtype="float32"), b: R.Tensor((768,), dtype="float32")', ["R.nn.layer_norm(x, g, b, axes=[-1])"]),
    ("gpu_elementwise", 'x: R.Tensor(("n", 128), dtype="float16"), y: R.Tensor((128,), dtype="float16")', ["R.nn.silu(R.add(x, y))"]),
    ("gpu_reduce_sum", 'x: R.Tensor((32, "n"), dtype="float32")', ["R.sum(x, axis=[1])"]),
    ("gpu_transpose_take", 'x: R.Tensor((32000, 128), dtype="float16"), i: R.Tensor(("n",), dtype="int32")', ["R.take(x, i, axis=0)"]),
]:
    ops_case(name, params, lines, stages=("dlight",))

for name, params, lines, stages in [
    ("gpu_fused_mlp", 'x: R.Tensor((1, "n", 128), dtype="float16"), w: R.Tensor((128, 256), dtype="float16"), b: R.Tensor((256,), dtype="float16")', ["R.nn.gelu(R.add(R.matmul(x, w), b))"], ("dlight_fused",)),
    ("gpu_fused_norm_scale", 'x: R.Tensor(("n", 512), dtype="float32"), w: R.Tensor((512,), dtype="float32")', ["R.multiply(R.nn.rms_norm(x, w), R.const(2.0, 'float32'))", "R.argmax(x, axis=1)"], ("dlight_fused",)),
    ("gpu_batch_matmul_int", 'a: R.Tensor((4, 32, 64), dtype="int8"), b: R.Tensor((4, 64, 16), dtype="int8")', ['R.matmul(a, b, out_dtype="int32")'], ("dlight",)),
    ("gpu_conv2d", 'x: R.Tensor((1, 16, 32, 32), dtype="float16"), w: R.Tensor((32, 16, 3, 3), dtype="float16")', ["R.nn.conv2d(x, w, padding=1)"], ("dlight",)),
    ("gpu_softmax_targets", 'x: R.Tensor((8, "n"), dtype="float16"), y: R.Tensor((8, 1024), dtype="float32")', ["R.nn.softmax(x)", "R.sum(y, axis=[1], keepdims=True)", "R.exp(y)"], ("dlight_metal", "dlight_rocm", "dlight_vulkan")),
]:
    ops_case(name, params, lines, stages=stages)


# ---------------------------------------------------------------------------------------
# Lowered TIR

ops_case(
    "lowered_add_exp",
    'x: R.Tensor(("n", 16), dtype="float32"), y: R.Tensor((16,), dtype="float32")',
    ["R.exp(R.add(x, y))", "R.sum(x, axis=[1])"],
    stages=("lowered",),
)


# ---------------------------------------------------------------------------------------
# Driver


CUDA = {"kind": "cuda", "arch": "sm_80"}
GPU_TARGETS = {"metal": {"kind": "metal"}, "rocm": {"kind": "rocm", "mcpu": "gfx90a"}, "vulkan": {"kind": "vulkan"}}


def dlight(mod, target):
    """The dlight default GPU schedule (Matmul, GEMV, Reduction, GeneralReduction, Fallback)."""
    try:
        import tvm.s_tir.dlight as dl
    except ImportError:  # older releases
        import tvm.dlight as dl
    with tvm.target.Target(target):
        rules = [dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback()]
        return dl.ApplyDefaultSchedule(*rules)(mod).script()


def ordered_shape_funcs(mod):
    """Sorts the stores of VMShapeLower's `shape_func` PrimFuncs by heap slot.

    TVM emits them in an order that changes from process to process (each store reads
    only slots filled before the call, so any order is valid); sorting them in the IR,
    before TVM prints, makes the corpus deterministic.
    """
    for gv, f in list(mod.functions.items()):
        if not (isinstance(f, tir.PrimFunc) and gv.name_hint.startswith("shape_func")):
            continue
        body = f.body
        if not isinstance(body, tir.SeqStmt) or not all(isinstance(st, tir.BufferStore) for st in body.seq):
            continue
        stores = sorted(body.seq, key=lambda st: [int(i) for i in st.indices])
        mod[gv] = f.with_body(tir.SeqStmt(stores))
    return mod


def stage_modules(mod, stages):
    """Yields (stage, text) for each requested stage that TVM can run."""
    cache = {}

    def fused():
        if "fused" not in cache:
            cache["fused"] = relax.get_pipeline("zero")(mod)
        return cache["fused"]

    def lowerable():
        """The fused module, or the legalized one where TVM cannot fuse."""
        try:
            return fused()
        except Exception:  # noqa: BLE001
            return relax.transform.LegalizeOps()(mod)

    def lower_seq(upto):
        seq = [
            relax.transform.RewriteDataflowReshape(),
            relax.transform.ToNonDataflow(),
            relax.transform.RemovePurityChecking(),
            relax.transform.CallTIRRewrite(),
            relax.transform.StaticPlanBlockMemory(),
            relax.transform.LowerAllocTensor(),
            relax.transform.KillAfterLastUse(),
        ]
        return tvm.transform.Sequential(seq[:upto])(lowerable())

    for stage in stages:
        try:
            if isinstance(stage, tuple):
                stage, fn = stage
                out = fn(mod)
            elif stage == "built":
                out = mod.script()
            elif stage == "main":
                out = mod["main"].script()
            elif stage == "legalized":
                out = relax.transform.LegalizeOps()(mod).script()
            elif stage == "fused":
                out = fused().script()
            elif stage == "vm":
                with tvm.target.Target("llvm"):
                    out = ordered_shape_funcs(relax.get_pipeline("default_build")(lowerable())).script()
            elif stage == "callrewrite":
                out = lower_seq(4)["main"].script()
            elif stage == "planned":
                out = lower_seq(5)["main"].script()
            elif stage == "killed":
                out = lower_seq(7)["main"].script()
            elif stage == "dlight":
                out = dlight(relax.transform.LegalizeOps()(mod), CUDA)
            elif stage == "dlight_fused":
                out = dlight(fused(), CUDA)
            elif stage.startswith("dlight_"):
                out = dlight(relax.transform.LegalizeOps()(mod), GPU_TARGETS[stage[len("dlight_"):]])
            elif stage == "lowered":
                legal = relax.transform.AttachGlobalSymbol()(relax.transform.LegalizeOps()(mod))
                prims = tvm.IRModule({gv: f for gv, f in legal.functions.items() if isinstance(f, tir.PrimFunc)})
                pipeline = tvm.tirx.get_tir_pipeline("default")
                if isinstance(pipeline, tuple):  # (pipeline, host passes, device passes)
                    pipeline = pipeline[0]
                target = tvm.target.Target("llvm")
                target = target.with_host(target)
                prims = tvm.tirx.transform.BindTarget(target)(prims)
                with target:
                    out = pipeline(prims).script()
            else:
                raise ValueError(stage)
        except Exception as e:  # noqa: BLE001 - a stage TVM cannot run is skipped
            msg = str(e).strip().splitlines()
            print(f"skip {stage}: {msg[-1] if msg else type(e).__name__}", file=sys.stderr)
            continue
        yield stage, out


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    out_dir = argv[0]
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        if old.endswith(".rlx"):
            os.remove(os.path.join(out_dir, old))
    count = 0
    for name, build, stages, only025 in CASES:
        if only025 and HEAD:
            continue
        try:
            mod = build()
        except Exception as e:  # noqa: BLE001
            print(f"FAILED to build {name}: {e}", file=sys.stderr)
            continue
        for stage, text in stage_modules(mod, stages):
            with open(os.path.join(out_dir, f"{name}.{stage}.rlx"), "w", encoding="utf-8") as f:
                f.write(text.rstrip("\n") + "\n")
            count += 1
    print(f"wrote {count} files to {out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
