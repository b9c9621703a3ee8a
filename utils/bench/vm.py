#!/usr/bin/env python3
"""Per-call time of the Relax level: one decode step of the Llama decoder block
(`bench.py`'s `llama` case: test/Transform/fuse-ops/llama.rlx scaled to hidden 512, 8
heads of 64, MLP 1024, n = 1 over a KV cache of m = 256) run by `relax-run --engine jit`
with the Relax level on the VM (`--relax-exec=vm`, docs/executable.md) and in the tree
interpreter (`--relax-exec=interp`), the kernels being the same compiled code.

    python3 utils/bench/vm.py [--relax-run PATH] [--repeat N] [--runs R] [--threads N]

Each run is one `relax-run --repeat N` process per side; it reports the median call and
the median time inside compiled kernels, and the difference is what the Relax level
costs per call (bindings, checks, allocation, argument binding). The table shows the
best of `--runs` runs of each side (a shared machine's noise only adds time). Needs a
release build: `cargo build --release -p relax-run`.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relax-run", default=os.path.join(ROOT, "target", "release", "relax-run"))
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
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
                t = run_side(args.relax_run, module, paths, side, args.repeat, args.threads)
                if side not in best or t[0] < best[side][0]:
                    best[side] = t
        outs = {s: sorted(os.listdir(os.path.join(tmp, "out-" + s))) for s in best}
        for name in outs["vm"]:
            a = np.load(os.path.join(tmp, "out-vm", name))
            b = np.load(os.path.join(tmp, "out-interp", name))
            if not np.array_equal(a, b):
                sys.exit(f"the VM and the interpreter differ in {name}")
    kernels = best["vm"][2]
    print(f"llama block decode step (n=1, m=256, hidden 512), {kernels} kernels, best of {args.runs} x "
          f"median of {args.repeat} calls")
    print(f"{'Relax level':<12} {'call ms':>9} {'kernels ms':>11} {'overhead ms':>12}")
    for side in ("vm", "interp"):
        call, kern, _ = best[side]
        print(f"{side:<12} {call * 1e3:9.3f} {kern * 1e3:11.3f} {(call - kern) * 1e3:12.3f}")
    ov = {s: best[s][0] - best[s][1] for s in best}
    print(f"VM / interpreter: call time {best['vm'][0] / best['interp'][0]:.2f}, "
          f"Relax-level overhead {ov['vm'] / max(ov['interp'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
