#!/usr/bin/env python3
"""Kernel benchmark of the fused dequant-matmul schedule (docs/codegen.md).

Usage: utils/bench/dequant_matmul.py [--bin DIR] [--types q4_0,q8_0,q4_k,q6_k,f16,f32]
                                     [--shapes 5632x2048,2048x2048] [--rows 1,16,512]
                                     [--copies C] [--repeat N] [--membw GBS]

For each weight type, weight shape N x K (N output features, K inputs: ffn 5632 x 2048
and attention 2048 x 2048 of TinyLlama) and row count M, it writes a module whose `main`
multiplies one activation (M, K) by C distinct weights (default 8, so that the weights
do not fit in the last-level cache) exactly as an imported GGUF model does:
`R.matmul(x, R.permute_dims(decode(w), axes=[1, 0]))` with relax-llm's decode kernels
(taken from `relax-translate --import-gguf` of a generated one-layer model),
`R.astype(w, "float32")` for F16 and the weight itself for F32; compiles it with
`relax-opt --legalize-ops --annotate-tir-op-pattern --fold-constant
--fuse-ops=matmul-operands=true --fuse-tir --schedule-cpu=vector-bits=B` (B from
`--vector-bits`, default 512: the host's with AVX-512), and runs `relax-run --engine
jit --repeat N --seed 1`. It prints the median time in compiled kernels per matmul, the
weight bytes read per second (M = 1: GB/s; against `--membw`, a measured read bandwidth,
when given) and GFLOP/s (2 M N K per matmul).

Needs a release build: `cargo build --release -p relax-run -p relax-opt -p relax-translate
-p relax-gguf-tool`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# type -> (GGUF file type that holds it, bytes per block, values per block)
TYPES = {
    "q4_0": ("q4_0", 18, 32),
    "q8_0": ("q8_0", 34, 32),
    "q4_k": ("q4_k_m", 144, 256),
    "q6_k": ("q6_k", 210, 256),
    "f16": (None, 2, 1),
    "f32": (None, 4, 1),
}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return r


def decode_kernels(b, tmp, ty, k):
    """The text of relax-llm's `decode_<ty>_<k>` kernel."""
    gguf_type, _, _ = TYPES[ty]
    path = os.path.join(tmp, f"{gguf_type}_{k}.gguf")
    if not os.path.exists(path):
        run([os.path.join(b, "relax-gguf"), "gen", "--preset", "tiny", "--layers", "1", "--hidden", str(k),
             "--ffn", str(k), "--heads", "4", "--vocab", "512", "--ctx", "64", "--type", gguf_type, "-o", path])
    text = run([os.path.join(b, "relax-translate"), "--import-gguf", path]).stdout
    name = f"decode_{ty}_{k}"
    m = re.search(r"(    @T\.prim_func\([^)]*\)\n    def " + name + r"\(.*?)(?=\n    @|\Z)", text, re.S)
    if not m:
        sys.exit(f"no {name} in the imported module")
    return m.group(1).rstrip() + "\n"


def module(b, tmp, ty, n, k, m, copies):
    _, bb, be = TYPES[ty]
    rows = "m" if m > 1 else "1"
    lines = ["@I.ir_module", "class Module:"]
    if ty in ("f16", "f32"):
        wty = f'R.Tensor(({n}, {k}), "{"float16" if ty == "f16" else "float32"}")'
    else:
        wty = f'R.Tensor(({n}, {k // be * bb}), "uint8")'
        lines.append(decode_kernels(b, tmp, ty, k))
    params = ", ".join(f"w{i}: {wty}" for i in range(copies))
    ret = ", ".join([f'R.Tensor(({rows}, {n}), "float32")'] * copies)
    lines += ["    @R.function",
              f'    def main(x: R.Tensor(({rows}, {k}), "float32"), {params}) -> R.Tuple({ret}):',
              "        m = T.int64()" if m > 1 else "        R.func_attr({})",
              "        with R.dataflow():"]
    outs = []
    for i in range(copies):
        if ty == "f32":
            src = f"w{i}"
        elif ty == "f16":
            lines.append(f'            d{i} = R.astype(w{i}, "float32")')
            src = f"d{i}"
        else:
            lines.append(f'            d{i} = R.call_tir(cls.decode_{ty}_{k}, (w{i},), '
                         f'out_sinfo=R.Tensor(({n}, {k}), "float32"))')
            src = f"d{i}"
        lines.append(f"            y{i} = R.matmul(x, R.permute_dims({src}, axes=[1, 0]))")
        outs.append(f"y{i}")
    lines += [f"            R.output({', '.join(outs)})", f"        return ({', '.join(outs)})", ""]
    return "\n".join(lines).replace("        R.func_attr({})\n", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--types", default="q4_0,q8_0,q4_k,q6_k,f16,f32")
    ap.add_argument("--shapes", default="5632x2048,2048x2048")
    ap.add_argument("--rows", default="1")
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--vector-bits", type=int, default=512, help="schedule-cpu's vector-bits (the host's)")
    ap.add_argument("--membw", type=float, default=None, help="a measured read bandwidth in GB/s")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for ty in args.types.split(","):
            _, bb, be = TYPES[ty]
            for shape in args.shapes.split(","):
                n, k = (int(v) for v in shape.split("x"))
                for m in (int(v) for v in args.rows.split(",")):
                    src = os.path.join(tmp, "mm.rlx")
                    with open(src, "w") as f:
                        f.write(module(args.bin, tmp, ty, n, k, m, args.copies))
                    opt = os.path.join(tmp, "mm_s.rlx")
                    run([os.path.join(args.bin, "relax-opt"), src, "--legalize-ops", "--annotate-tir-op-pattern",
                         "--fold-constant", "--fuse-ops=matmul-operands=true", "--fuse-tir", f"--schedule-cpu=vector-bits={args.vector_bits}",
                         "-o", opt])
                    cmd = [os.path.join(args.bin, "relax-run"), opt, "--engine", "jit", "--seed", "1",
                           "--repeat", str(args.repeat)]
                    if m > 1:
                        cmd += ["--sym", f"m={m}"]
                    r = run(cmd)
                    km = re.search(r"median time in compiled kernels: ([0-9.]+) ms", r.stderr)
                    if not km:
                        sys.exit(f"no kernel time in relax-run's output:\n{r.stderr}")
                    t = float(km.group(1)) / 1e3 / args.copies
                    wbytes = n * k // be * bb
                    gbs = wbytes / t / 1e9
                    gflops = 2 * m * n * k / t / 1e9
                    extra = f"  {gbs / args.membw:5.2f} of {args.membw} GB/s" if args.membw and m == 1 else ""
                    print(f"{ty:5} {n:5}x{k:<5} M={m:<4} {t * 1e3:8.3f} ms  {gbs:7.2f} GB/s of weights  "
                          f"{gflops:7.1f} GFLOP/s{extra}", flush=True)


if __name__ == "__main__":
    main()
