#!/usr/bin/env python3
"""Per-call time of the Relax level on the VM (`relax-run --engine jit --relax-exec=vm`,
docs/executable.md) against the tree interpreter (`--relax-exec=interp`), the kernels
being the same compiled code:

* `block`: one decode step of the Llama decoder block (`bench.py`'s `llama` case:
  test/Transform/fuse-ops/llama.rlx scaled to hidden 512, 8 heads of 64, MLP 1024, n = 1
  over a KV cache of m = 256), `relax-run --repeat N`: the median call and the median
  time inside compiled kernels; their difference is what the Relax level costs per call
  (bindings, checks, allocation, argument binding);
* `generate`: the decode steps of the example Llama model (examples/llama, 43 kernel
  launches a step, docs/llama.md) through `relax-run --generate` after `llama.py`'s
  relax-opt pipeline: the median step.

    python3 utils/bench/vm.py [--bin DIR] [--repeat N] [--runs R] [--threads N]
                              [--tokens T] [--only block|generate]

Each figure is the best of `--runs` processes per side (a shared machine's noise only
adds time), the sides alternating; the results of both sides must be equal. Needs a
release build: `cargo build --release -p relax-run -p relax-opt`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import bench  # noqa: E402
import llama  # noqa: E402


def run_side(relax_run, module, paths, exec_kind, repeat, threads):
    """(median call s, median kernel s, kernels) of one relax-run process."""
    cmd = [relax_run, module, "--entry", "decoder_block", "--engine", "jit", "--relax-exec", exec_kind,
           "--repeat", str(repeat), "--sym", "n=1", "--sym", "m=256", "--output-dir",
           os.path.join(os.path.dirname(paths[0]), "out-" + exec_kind)]
    if threads:
        cmd += ["--threads", str(threads)]
    for p in paths:
        cmd += ["--input", p]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"relax-run failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")
    call = re.search(r"median time of \d+ runs: ([0-9.]+) ms", r.stderr)
    kern = re.search(r"median time in compiled kernels: ([0-9.]+) ms", r.stderr)
    ready = re.search(r"jit: (\d+) kernels ready", r.stderr)
    if not (call and kern and ready):
        sys.exit(f"no timing in relax-run's output:\n{r.stderr[-2000:]}")
    return float(call.group(1)) / 1e3, float(kern.group(1)) / 1e3, int(ready.group(1))


def bench_block(args):
    with tempfile.TemporaryDirectory() as tmp:
        module = bench.llama_module(tmp)
        h, nh, d, f = (bench.LLAMA[k] for k in ("hidden", "heads", "head_dim", "ffn"))
        n, m = 1, 256
        rng = np.random.default_rng(4)
        r = lambda *s: (rng.standard_normal(s, dtype=np.float32) * np.float32(0.1))  # noqa: E731
        inputs = [r(1, n, h), r(1, m, nh, d), r(1, m, nh, d), r(n, d), r(n, d), r(h) + 1, r(h, 3 * h), r(h, h),
                  r(h) + 1, r(h, 2 * f), r(f, h)]
        paths = bench.save_inputs(inputs, tmp, "in")
        best = {}
        for _ in range(args.runs):
            for side in ("vm", "interp"):
                t = run_side(os.path.join(args.bin, "relax-run"), module, paths, side, args.repeat, args.threads)
                if side not in best or t[0] < best[side][0]:
                    best[side] = t
        for name in sorted(os.listdir(os.path.join(tmp, "out-vm"))):
            a = np.load(os.path.join(tmp, "out-vm", name))
            b = np.load(os.path.join(tmp, "out-interp", name))
            if not np.array_equal(a, b):
                sys.exit(f"the VM and the interpreter differ in {name}")
    print(f"block: llama decoder block decode step (n=1, m=256, hidden 512), {best['vm'][2]} kernels, "
          f"best of {args.runs} x median of {args.repeat} calls")
    print(f"{'Relax level':<12} {'call ms':>9} {'kernels ms':>11} {'overhead ms':>12}")
    for side in ("vm", "interp"):
        call, kern, _ = best[side]
        print(f"{side:<12} {call * 1e3:9.3f} {kern * 1e3:11.3f} {(call - kern) * 1e3:12.3f}")
    ov = {s: best[s][0] - best[s][1] for s in best}
    print(f"VM / interpreter: call time {best['vm'][0] / best['interp'][0]:.2f}, "
          f"Relax-level overhead {ov['vm'] / max(ov['interp'], 1e-9):.2f}")


def bench_generate(args):
    with tempfile.TemporaryDirectory() as tmp:
        wdir = os.path.join(tmp, "weights")
        os.makedirs(wdir)
        for name, w in llama.make_weights(0).items():
            np.save(os.path.join(wdir, name + ".npy"), w)
        compiled = os.path.join(tmp, "model.opt.rlx")
        subprocess.run([os.path.join(args.bin, "relax-opt"), os.path.join(ROOT, "examples", "llama", "model.rlx"),
                        *llama.PASSES, "-o", compiled], check=True)
        prompt = ",".join(str((7 * i + 1) % 1000) for i in range(16))
        best, tokens = {}, {}
        for _ in range(args.runs):
            for side in ("vm", "interp"):
                cmd = [os.path.join(args.bin, "relax-run"), compiled, "--engine", "jit", "--relax-exec", side,
                       "--generate", "--weights-dir", wdir, "--prompt", prompt, "--max-new-tokens", str(args.tokens)]
                if args.threads:
                    cmd += ["--threads", str(args.threads)]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"relax-run failed ({' '.join(cmd)}):\n{p.stderr[-2000:]}")
                med = float(re.search(r"median step ([0-9.]+) ms", p.stderr).group(1)) / 1e3
                best[side] = min(best.get(side, med), med)
                tokens[side] = p.stdout.strip()
        if tokens["vm"] != tokens["interp"]:
            sys.exit("the VM and the interpreter generated different tokens")
    print(f"generate: examples/llama decode step (43 kernel launches), {args.tokens} new tokens, "
          f"best of {args.runs} runs of the median step")
    for side in ("vm", "interp"):
        print(f"{side:<12} {best[side] * 1e3:9.3f} ms")
    print(f"VM / interpreter: step time {best['vm'] / best['interp']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--only", choices=["block", "generate"], default=None)
    args = ap.parse_args()
    if args.only in (None, "block"):
        bench_block(args)
    if args.only in (None, "generate"):
        bench_generate(args)


if __name__ == "__main__":
    main()
