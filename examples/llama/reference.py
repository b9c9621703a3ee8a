#!/usr/bin/env python3
"""The model of examples/llama/model.rlx in numpy (float32): the reference for its tokens,
logits and speed.

    python3 examples/llama/reference.py [--weights-dir DIR | --seed 0] --prompt 1,2,3 \\
        [--max-new-tokens 32] [--logits-out PATH.npy]

It prints what ``relax-run model.rlx --generate`` prints: the new token ids,
comma-separated, on standard output, then the prefill and decode times on standard
error. ``prefill`` gives the first new token, each further token is one ``decode`` step
against the KV cache, which grows by one row per step (``np.concatenate``, as the
model's ``R.concat``). Without ``--weights-dir`` the weights come from
``make_weights.make_weights(seed)``.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_weights import CONFIG, make_weights, shapes  # noqa: E402

F32 = np.float32


def load_weights(folder):
    return {name: np.load(os.path.join(folder, name + ".npy")) for name, _ in shapes()}


class Model:
    """prefill / decode with an explicit KV cache, as the two Relax functions."""

    def __init__(self, w, cfg=CONFIG):
        self.w, self.cfg = w, cfg
        d = cfg["head_dim"]
        self.inv_freq = np.power(F32(cfg["rope_theta"]), np.arange(0, d, 2, dtype=F32) / F32(-d)).astype(F32)

    def rms_norm(self, x, weight):
        ms = np.mean(x * x, axis=-1, keepdims=True, dtype=F32)
        return (x / np.sqrt(ms + F32(self.cfg["eps"]))) * weight

    def rope_tables(self, start, n):
        pos = np.arange(start, start + n, dtype=F32)
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = np.concatenate([freqs, freqs], axis=-1)
        return np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]

    @staticmethod
    def rope(x, cos, sin):
        half = x.shape[-1] // 2
        rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        return x * cos + rot * sin

    def forward(self, tokens, cache, start):
        """tokens: (s,) ids at positions start.., cache: per layer (k, v) of (start, kv_heads,
        head_dim) or None. Returns (logits of the last position, new cache)."""
        cfg, w = self.cfg, self.w
        nh, nkv, d, inter = cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["intermediate"]
        s = len(tokens)
        x = w["embed"][tokens]
        cos, sin = self.rope_tables(start, s)
        new_cache = []
        for layer in range(cfg["layers"]):
            p = f"l{layer}_"
            h = self.rms_norm(x, w[p + "attn_norm"])
            qkv = (h @ w[p + "wqkv"]).reshape(s, nh + 2 * nkv, d)
            q, k, v = qkv[:, :nh], qkv[:, nh : nh + nkv], qkv[:, nh + nkv :]
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            if cache is not None:
                k = np.concatenate([cache[layer][0], k], axis=0)
                v = np.concatenate([cache[layer][1], v], axis=0)
            new_cache.append((k, v))
            rep = nh // nkv
            kr, vr = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
            scores = np.matmul(q.transpose(1, 0, 2), kr.transpose(1, 2, 0)) * F32(1.0 / np.sqrt(d))
            if s > 1:
                qpos = np.arange(start, start + s)[:, None]
                kpos = np.arange(0, start + s)[None, :]
                scores = np.where(kpos <= qpos, scores, F32(-1e9))
            scores = scores - scores.max(axis=-1, keepdims=True)
            e = np.exp(scores)
            probs = e / e.sum(axis=-1, keepdims=True)
            ctx = np.matmul(probs, vr.transpose(1, 0, 2)).transpose(1, 0, 2).reshape(s, nh * d)
            x = x + ctx @ w[p + "wo"]
            h = self.rms_norm(x, w[p + "mlp_norm"])
            gu = h @ w[p + "w_gate_up"]
            g, u = gu[:, :inter], gu[:, inter:]
            act = g / (F32(1.0) + np.exp(-g)) * u
            x = x + act @ w[p + "w_down"]
        hf = self.rms_norm(x[-1:], w["final_norm"])
        return (hf @ w["lm_head"])[0], new_cache

    def generate(self, prompt, max_new_tokens):
        """(new tokens, their logits, prefill seconds, decode step seconds)."""
        t0 = time.perf_counter()
        logits, cache = self.forward(np.asarray(prompt), None, 0)
        prefill = time.perf_counter() - t0
        tokens, rows, steps = [int(np.argmax(logits))], [logits], []
        while len(tokens) < max_new_tokens:
            t0 = time.perf_counter()
            logits, cache = self.forward(np.asarray(tokens[-1:]), cache, len(prompt) + len(tokens) - 1)
            steps.append(time.perf_counter() - t0)
            tokens.append(int(np.argmax(logits)))
            rows.append(logits)
        return tokens, np.stack(rows), prefill, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights-dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--logits-out")
    args = ap.parse_args()
    w = load_weights(args.weights_dir) if args.weights_dir else make_weights(args.seed)
    prompt = [int(t) for t in args.prompt.split(",")]
    tokens, logits, prefill, steps = Model(w).generate(prompt, args.max_new_tokens)
    print(",".join(str(t) for t in tokens))
    print(f"reference: prefill: {len(prompt)} prompt tokens in {prefill * 1e3:.3f} ms", file=sys.stderr)
    if steps:
        total = sum(steps)
        med = sorted(steps)[len(steps) // 2]
        print(
            f"reference: decode: {len(steps)} tokens in {total * 1e3:.3f} ms "
            f"({len(steps) / total:.1f} tokens/s, median step {med * 1e3:.3f} ms)",
            file=sys.stderr,
        )
    if args.logits_out:
        np.save(args.logits_out, logits.astype(F32))


if __name__ == "__main__":
    main()
