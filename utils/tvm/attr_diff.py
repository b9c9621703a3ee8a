"""Compares the op attributes (and defaulted Relax arguments) relax stores with the ones
TVM's Python op constructors store.

usage: python attr_diff.py [--relax-opt PATH] [-q] [--emit FILE.rlx] [FILTER ...]

TVM's op wrappers normalise shorthand attributes before the C++ constructors store them
(`strides=2` becomes `[2, 2]` for conv2d, `padding=1` becomes `[1, 1, 1, 1]`, an omitted
`out_layout` becomes the data layout, ...), and fill in Relax arguments left out
(`R.triu(x)` is `R.triu(x, R.prim_value(0))`, `R.arange(4)` starts at 0). For each
case of the table below (an op call written with shorthand or omitted attributes or
arguments), a one-binding module is parsed and printed by TVM
(`tvm.script.from_source(text).script()`) and by `relax-opt`, and the two texts must be
identical. FILTER keeps the cases whose call contains one of the given strings.

With `--emit FILE.rlx`, the cases TVM accepts are also written as a lit test (one module
per case, `# -----` separated; CHECK lines are TVM's printed call), the way
`test/Parser/op-attrs.rlx` was made.

Needs a Python with apache-tvm 0.25:
`~/.cache/relax-peers/tvm025/bin/python utils/tvm/attr_diff.py`.
Exit status 1 when any case differs or only one side rejects it.
"""
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from infer_diff import DEFAULT_RELAX_OPT, run_relax, run_tvm  # noqa: E402

import tvm  # noqa: E402

F = "float32"
X1 = f'x: R.Tensor((1, 4, 16), dtype="{F}")'
X2 = f'x: R.Tensor((1, 4, 16, 16), dtype="{F}")'
X3 = f'x: R.Tensor((1, 4, 8, 8, 8), dtype="{F}")'
W1 = f'w: R.Tensor((4, 4, 3), dtype="{F}")'
W2 = f'w: R.Tensor((4, 4, 3, 3), dtype="{F}")'
W3 = f'w: R.Tensor((4, 4, 3, 3, 3), dtype="{F}")'
V2 = f'x: R.Tensor((2, 3), dtype="{F}")'
V3 = f'x: R.Tensor((2, 1, 3), dtype="{F}")'
ROIS = f'r: R.Tensor((2, 5), dtype="{F}")'
THETA = f'x: R.Tensor((1, 2, 3), dtype="{F}")'

# (parameters, call): the call's result is the function's result.
CASES = [
    # Convolutions: ints become tuples of the spatial rank, padding becomes 2 * rank.
    ((X1, W1), "R.nn.conv1d(x, w)"),
    ((X1, W1), "R.nn.conv1d(x, w, strides=2, padding=1, dilation=1)"),
    ((X1, W1), "R.nn.conv1d(x, w, padding=[1])"),
    ((X1, W1), "R.nn.conv1d(x, w, padding=(1, 2), out_layout=\"NCW\")"),
    ((X2, W2), "R.nn.conv2d(x, w)"),
    ((X2, W2), "R.nn.conv2d(x, w, strides=2)"),
    ((X2, W2), "R.nn.conv2d(x, w, strides=2, padding=1, dilation=1)"),
    ((X2, W2), "R.nn.conv2d(x, w, strides=[2], padding=[1], dilation=[1])"),
    ((X2, W2), "R.nn.conv2d(x, w, padding=(1, 2))"),
    ((X2, W2), "R.nn.conv2d(x, w, padding=[1, 2, 3, 0], groups=1, out_dtype=\"float32\")"),
    ((X3, W3), "R.nn.conv3d(x, w)"),
    ((X3, W3), "R.nn.conv3d(x, w, strides=2, padding=1, dilation=1)"),
    ((X3, W3), "R.nn.conv3d(x, w, strides=[2], padding=[1], dilation=[1])"),
    ((X3, W3), "R.nn.conv3d(x, w, padding=(1, 2, 0))"),
    ((X1, W1), "R.nn.conv1d_transpose(x, w)"),
    ((X1, W1), "R.nn.conv1d_transpose(x, w, strides=2, padding=1, output_padding=1, dilation=1)"),
    ((X2, W2), "R.nn.conv2d_transpose(x, w)"),
    ((X2, W2), "R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1, dilation=1)"),
    ((X2, W2), "R.nn.conv2d_transpose(x, w, strides=[2], padding=(1, 0), output_padding=[1])"),
    ((X3, W3), "R.nn.conv3d_transpose(x, w)"),
    ((X3, W3), "R.nn.conv3d_transpose(x, w, strides=2, padding=1, output_padding=1, dilation=1)"),
    ((X3, W3), "R.nn.conv3d_transpose(x, w, strides=[2], padding=(1, 0, 1), output_padding=[1])"),
    # Pools.
    ((X1,), "R.nn.max_pool1d(x)"),
    ((X1,), "R.nn.max_pool1d(x, pool_size=3, strides=2, padding=1, dilation=1)"),
    ((X1,), "R.nn.max_pool1d(x, pool_size=[3], padding=[1])"),
    ((X1,), "R.nn.avg_pool1d(x, 2)"),
    ((X1,), "R.nn.avg_pool1d(x, pool_size=3, strides=2, padding=(1, 0))"),
    ((X2,), "R.nn.max_pool2d(x)"),
    ((X2,), "R.nn.max_pool2d(x, pool_size=3, strides=2, padding=1, dilation=1)"),
    ((X2,), "R.nn.max_pool2d(x, pool_size=[3], strides=[2], padding=[1], dilation=[1])"),
    ((X2,), "R.nn.max_pool2d(x, (3, 3), padding=(1, 0), layout=\"NCHW\")"),
    ((X2,), "R.nn.avg_pool2d(x)"),
    ((X2,), "R.nn.avg_pool2d(x, pool_size=2, strides=2, count_include_pad=True)"),
    ((X3,), "R.nn.max_pool3d(x)"),
    ((X3,), "R.nn.max_pool3d(x, pool_size=2, strides=2, padding=1, dilation=1)"),
    ((X3,), "R.nn.max_pool3d(x, pool_size=[2], padding=(1, 0, 1))"),
    ((X3,), "R.nn.avg_pool3d(x)"),
    ((X3,), "R.nn.avg_pool3d(x, pool_size=2, strides=2, padding=[1])"),
    ((X1,), "R.nn.adaptive_avg_pool1d(x)"),
    ((X1,), "R.nn.adaptive_avg_pool1d(x, 4)"),
    ((X1,), "R.nn.adaptive_avg_pool1d(x, [4])"),
    ((X2,), "R.nn.adaptive_avg_pool2d(x)"),
    ((X2,), "R.nn.adaptive_avg_pool2d(x, 4)"),
    ((X2,), "R.nn.adaptive_avg_pool2d(x, [4])"),
    ((X2,), "R.nn.adaptive_avg_pool2d(x, (4, 2), out_layout=\"NCHW\")"),
    ((X3,), "R.nn.adaptive_avg_pool3d(x)"),
    ((X3,), "R.nn.adaptive_avg_pool3d(x, 2)"),
    # (`R.nn.adaptive_avg_pool3d(x, [2])` is left out: TVM 0.25's constructor repeats a
    # one-element output_size only once and rejects it; relax stores [2, 2, 2].)
    # Lengths TVM's constructors reject.
    ((X2, W2), "R.nn.conv2d(x, w, strides=[1, 2, 3])"),
    ((X2, W2), "R.nn.conv2d(x, w, padding=[1, 2, 3])"),
    ((X1, W1), "R.nn.conv1d(x, w, strides=[1, 1])"),
    ((X3,), "R.nn.max_pool3d(x, padding=[1, 1])"),
    # Axis forms.
    ((V2,), "R.sum(x, 1)"),
    ((V2,), "R.mean(x, axis=[0, 1], keepdims=True)"),
    ((V2,), "R.max(x)"),
    ((V2,), "R.variance(x, -1)"),
    ((V2,), "R.median(x, 1)"),
    ((V3,), "R.squeeze(x, 1)"),
    ((V3,), "R.squeeze(x)"),
    ((V2,), "R.expand_dims(x, -1)"),
    ((V2,), "R.tile(x, 2)"),
    ((V2,), "R.tile(x, (2, 1))"),
    ((V2,), "R.permute_dims(x)"),
    ((V2,), "R.split(x, 3, axis=1)"),
    ((V2,), "R.split(x, [1, 2], axis=1)"),
    # Omitted attributes take the Python signature's defaults.
    ((V2,), "R.nn.softmax(x)"),
    ((V2,), "R.nn.log_softmax(x)"),
    ((V2,), "R.nn.leakyrelu(x)"),
    ((V2,), "R.nn.softplus(x)"),
    ((V2,), "R.nn.dropout(x)"),
    ((V2, 'g: R.Tensor((3,), dtype="float32")', 'b: R.Tensor((3,), dtype="float32")'), "R.nn.layer_norm(x, g, b, -1)"),
    ((V2, 'g: R.Tensor((3,), dtype="float32")'), "R.nn.rms_norm(x, g)"),
    ((X2, 'g: R.Tensor((4,), dtype="float32")', 'b: R.Tensor((4,), dtype="float32")'), "R.nn.group_norm(x, g, b, 2, 1, [2, 3])"),
    ((X2, 'g: R.Tensor((4,), dtype="float32")', 'b: R.Tensor((4,), dtype="float32")'), "R.nn.instance_norm(x, g, b, 1, [2, 3])"),
    ((X2, 'g: R.Tensor((4,), dtype="float32")'), "R.nn.batch_norm(x, g, g, g, g, 1)"),
    ((X2,), "R.nn.pad(x, [0, 0, 0, 0, 1, 1, 1, 1])"),
    ((X2,), "R.nn.pixel_shuffle(x, 2)"),
    ((X2, 'a: R.Tensor((4,), dtype="float32")'), "R.nn.prelu(x, a)"),
    ((V2,), "R.cumsum(x)"),
    ((V2,), "R.cumprod(x, 1)"),
    ((V2,), "R.sort(x)"),
    ((V2,), "R.argsort(x)"),
    ((V2,), "R.topk(x)"),
    ((V2,), "R.argmax(x)"),
    ((V2,), "R.repeat(x, 2)"),
    ((V2,), "R.flip(x, 1)"),
    ((V2,), "R.concat([x, x])"),
    ((V2,), "R.stack([x, x])"),
    ((V2,), "R.zeros_like(x)"),
    ((V2,), "R.astype(x, \"float16\")"),
    ((V2, 'y: R.Tensor((3, 2), dtype="float32")'), "R.matmul(x, y)"),
    ((V2,), "R.triu(x, 1)"),
    ((V2,), "R.eye_like(x, 0)"),
    ((V2,), "R.zeros((2, 3), \"float32\")"),
    ((V2,), "R.arange(0, 4, 1)"),
    ((V2,), "R.arange(0.0, 4.0, 1.0)"),
    # Relax arguments left out take the wrapper's default (`k=0`, `m=n`, `arange(end)`).
    ((V2,), "R.triu(x)"),
    ((V2,), "R.tril(x)"),
    ((V2,), "R.triu(x, True)"),
    ((V2,), "R.eye_like(x)"),
    ((V2,), "R.eye(3)"),
    ((V2,), "R.eye(3, k=1)"),
    ((V2,), "R.arange(4)"),
    ((V2,), "R.arange(1, 4)"),
    ((V2,), "R.arange(2.0)"),
    ((V2,), "R.arange(4, step=2)"),
    ((V2,), "R.arange(start=4)"),
    ((V2,), "R.arange(end=4)"),
    ((V2,), "R.unique(x)"),
    ((V2,), "R.unique(x, False, True)"),
    ((V2,), "R.unique(x, axis=1)"),
    ((V2,), "R.clip(x, False, 1)"),
    # Image and vision ops.
    ((X2,), "R.image.resize2d(x, 8)"),
    ((X2,), "R.image.resize2d(x, (8, 4))"),
    ((X2,), "R.image.resize2d(x, [8])"),
    ((X2,), "R.image.resize2d(x, (8, 8), roi=0.5)"),
    ((X2,), "R.image.resize2d(x, (8, 8), roi=[0, 0, 1, 1], method=\"nearest_neighbor\")"),
    ((X3,), "R.image.resize3d(x, 4)"),
    ((X3,), "R.image.resize3d(x, [4])"),
    ((X3,), "R.image.resize3d(x, (4, 4, 2), roi=0.25)"),
    ((THETA,), "R.image.affine_grid(x, 8)"),
    ((THETA,), "R.image.affine_grid(x, (8, 4))"),
    ((X2, ROIS), "R.vision.roi_align(x, r, 2, 0.5)"),
    ((X2, ROIS), "R.vision.roi_align(x, r, pooled_size=(2, 3), spatial_scale=1.0, mode=\"max\")"),
    ((X2, ROIS), "R.vision.roi_pool(x, r, 2, 0.5)"),
]


def module(params, call):
    return (
        "@I.ir_module\nclass Module:\n    @R.function\n"
        f"    def main({', '.join(params)}):\n"
        f"        gv = {call}\n        return gv\n"
    )


def called_line(text):
    """TVM's printed binding of `gv` (the CHECK line of an emitted test)."""
    for l in text.splitlines():
        if l.strip().startswith("gv:"):
            return l.strip()
    return None


def main(argv):
    relax_opt = DEFAULT_RELAX_OPT
    quiet = False
    emit = None
    filters = []
    it = iter(argv)
    for a in it:
        if a == "--relax-opt":
            relax_opt = next(it)
        elif a == "--emit":
            emit = next(it)
        elif a == "-q":
            quiet = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            filters.append(a)
    counts = {}
    bad = 0
    emitted = []
    for params, call in CASES:
        if filters and not any(f in call for f in filters):
            continue
        src = module(params, call)
        t_ok, theirs = run_tvm(src)
        r_ok, ours = run_relax(relax_opt, src)
        if t_ok and r_ok:
            verdict = "same" if theirs == ours else "DIFFERENT"
        elif not t_ok and not r_ok:
            verdict = "both reject"
        else:
            verdict = "relax rejects" if t_ok else "tvm rejects"
        counts[verdict] = counts.get(verdict, 0) + 1
        if t_ok and emit:
            emitted.append((src, called_line(theirs)))
        if quiet and verdict in ("same", "both reject"):
            continue
        print(f"{call}: {verdict}")
        if verdict == "DIFFERENT":
            bad += 1
            diff = difflib.unified_diff(theirs.splitlines(), ours.splitlines(), "tvm", "relax", lineterm="", n=0)
            print("\n".join("    " + d for d in diff if not d.startswith(("---", "+++"))))
        elif verdict != "same":
            if verdict != "both reject":
                bad += 1
            print("    tvm:   " + (theirs if not t_ok else "accepts"))
            print("    relax: " + (ours.splitlines()[0] if not r_ok and ours else "accepts"))
    if emit:
        write_lit(emit, emitted)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"tvm {tvm.__version__}: {summary}")
    return 1 if bad else 0


def write_lit(path, emitted):
    out = [
        "# Op attributes written in shorthand or left out are stored the way TVM 0.25's Python",
        "# op constructors store them (ints become tuples of the op's spatial rank, padding",
        "# has 2 * rank entries, out_layout defaults to the data layout, ...); Relax arguments",
        "# left out take the wrappers' defaults (`R.triu(x)` has `k=0`). Each CHECK line",
        "# is TVM's printed text of the same module (utils/tvm/attr_diff.py --emit).",
        "# RUN: relax-opt --split-input-file %s | FileCheck %s",
    ]
    for i, (src, line) in enumerate(emitted):
        if i:
            out.append("# -----")
        out.append(f"# CHECK: {line}")
        out.extend(src.rstrip("\n").splitlines())
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
