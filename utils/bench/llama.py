#!/usr/bin/env python3
"""Benchmark of the Llama example (docs/llama.md): prefill time and decode speed of
relax (the demo's relax-opt pipeline, then relax-run --generate on the JIT) against the
numpy reference (examples/llama/reference.py, in this process) and, where it is
installed, TVM 0.27's default CPU build of the same model text (utils/bench/llama_tvm.py).

    python3 utils/bench/llama.py [--bin target/release] [--prompt-len 16] [--tokens 32]
                                 [--runs 5] [--tvm-python PATH] [--interp]

Build the tools first (``cargo build --release``). Each engine generates ``--tokens``
tokens after a prompt of ``--prompt-len`` tokens, ``--runs`` times; the table shows the
best run's prefill time and the best run's median decode step (best of runs, to damp
the noise of a shared machine), and whether the tokens equal numpy's. Build and JIT
compile times are not part of any figure. ``--tvm-python`` defaults to
``~/.cache/relax-peers/tvm027/bin/python``; TVM is skipped, with a note, when it is
missing. ``--interp`` adds relax's reference interpreter on the model as written.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "examples", "llama"))
from make_weights import make_weights  # noqa: E402
from reference import Model  # noqa: E402

PASSES = [
    "--legalize-ops", "--annotate-tir-op-pattern", "--fold-constant", "--fuse-ops", "--fuse-tir",
    "--schedule-cpu", "--plan-memory", "--lower-alloc-tensor", "--kill-after-last-use",
]


def relax_runs(binary, model, wdir, prompt, tokens, runs, engine):
    """[(tokens, prefill s, [median step s])] parsed from relax-run's report."""
    out = []
    for _ in range(runs):
        p = subprocess.run(
            [binary, model, "--engine", engine, "--generate", "--weights-dir", wdir,
             "--prompt", ",".join(map(str, prompt)), "--max-new-tokens", str(tokens)],
            capture_output=True, text=True, check=True)
        pre = re.search(r"prefill: \d+ prompt tokens in ([0-9.]+) ms", p.stderr)
        med = re.search(r"median step ([0-9.]+) ms", p.stderr)
        out.append((p.stdout.strip(), float(pre.group(1)) / 1e3, float(med.group(1)) / 1e3 if med else None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR", "target"), "release"))
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tvm-python", default=os.path.expanduser("~/.cache/relax-peers/tvm027/bin/python"))
    ap.add_argument("--interp", action="store_true")
    args = ap.parse_args()

    work = os.path.join(ROOT, "target", "llama-bench")
    wdir = os.path.join(work, "weights")
    os.makedirs(wdir, exist_ok=True)
    weights = make_weights(0)
    for name, w in weights.items():
        np.save(os.path.join(wdir, name + ".npy"), w)
    model = os.path.join(ROOT, "examples", "llama", "model.rlx")
    compiled = os.path.join(work, "model.opt.rlx")
    subprocess.run([os.path.join(args.bin, "relax-opt"), model, *PASSES, "-o", compiled], check=True)
    prompt = [(7 * i + 1) % 1000 for i in range(args.prompt_len)]

    rows = []  # (engine, tokens, prefill s, median step s)
    ref = Model(weights)
    best = None
    for _ in range(args.runs):
        toks, _, pre, steps = ref.generate(prompt, args.tokens)
        med = sorted(steps)[len(steps) // 2] if steps else None
        best = (toks, pre, med) if best is None else (toks, min(best[1], pre), min(best[2], med))
    ref_tokens = ",".join(map(str, best[0]))
    rows.append(("numpy reference", ref_tokens, best[1], best[2]))

    t0 = time.perf_counter()
    jit = relax_runs(os.path.join(args.bin, "relax-run"), compiled, wdir, prompt, args.tokens, args.runs, "jit")
    wall = (time.perf_counter() - t0) / args.runs
    rows.append(("relax JIT", jit[0][0], min(r[1] for r in jit), min(r[2] for r in jit)))
    notes = [f"relax-run --engine jit: {wall:.1f} s per run including the JIT compile"]
    if args.interp:
        it = relax_runs(os.path.join(args.bin, "relax-run"), model, wdir, prompt, args.tokens, 1, "interp")
        rows.append(("relax interpreter", it[0][0], it[0][1], it[0][2]))

    if os.path.exists(args.tvm_python):
        p = subprocess.run(
            [args.tvm_python, os.path.join(ROOT, "utils", "bench", "llama_tvm.py"), model, wdir,
             ",".join(map(str, prompt)), str(args.tokens), str(args.runs)],
            capture_output=True, text=True)
        if p.returncode == 0:
            r = json.loads(p.stdout.strip().splitlines()[-1])
            pre = min(x["prefill"] for x in r["runs"])
            med = min(sorted(x["steps"])[len(x["steps"]) // 2] for x in r["runs"])
            rows.append((f"TVM {r['version']} (llvm, default pipeline)", ",".join(map(str, r["tokens"])), pre, med))
            notes.append(f"TVM build: {r['build']:.1f} s")
        else:
            notes.append(f"TVM failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    else:
        notes.append(f"TVM skipped: no {args.tvm_python}")

    numpy_step = rows[0][3]
    print(f"prompt {args.prompt_len} tokens, {args.tokens} new tokens, best of {args.runs} runs, "
          f"{os.cpu_count()} CPUs")
    print()
    print("| engine | prefill (ms) | decode step, median (ms) | decode tokens/s | step vs numpy | tokens = numpy |")
    print("|---|---:|---:|---:|---:|---|")
    for name, toks, pre, med in rows:
        print(f"| {name} | {pre * 1e3:.2f} | {med * 1e3:.3f} | {1 / med:.0f} | {med / numpy_step:.2f}x | "
              f"{'yes' if toks == ref_tokens else 'NO'} |")
    print()
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
