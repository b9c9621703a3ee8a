#!/usr/bin/env python3
"""Writes the weights of examples/llama/model.rlx as DIR/<name>.npy (float32).

    python3 examples/llama/make_weights.py DIR [--seed 0]

The weights are drawn from numpy's legacy ``RandomState`` (its stream is fixed across
numpy releases), in the order of ``names()``, so a seed always gives the same files:

* ``embed`` (vocab, hidden): standard normal;
* ``lK_attn_norm``, ``lK_mlp_norm``, ``final_norm`` (hidden,): 1 + 0.1 * normal;
* every projection (in, out): normal / sqrt(in), so activations keep their scale:
  ``lK_wqkv`` (hidden, (heads + 2 * kv_heads) * head_dim; columns q heads, k heads,
  v heads), ``lK_wo``, ``lK_w_gate_up`` (hidden, 2 * intermediate; gate columns first),
  ``lK_w_down``, ``lm_head`` (hidden, vocab).

The files take 6.8 MB, so they are generated (in well under a second) rather than
shipped; ``utils/demo.sh`` and the tests run this script. ``CONFIG`` is the model's
configuration, shared with ``reference.py``.
"""

import argparse
import os
import sys

import numpy as np

CONFIG = {
    "layers": 2,
    "hidden": 256,
    "heads": 4,
    "kv_heads": 2,
    "head_dim": 64,
    "intermediate": 512,
    "vocab": 1000,
    "rope_theta": 10000.0,
    "eps": 1e-5,
    "max_context": 256,
}


def shapes(cfg=CONFIG):
    """(name, shape) of every weight, in the order they are drawn."""
    h, i = cfg["hidden"], cfg["intermediate"]
    qkv = (cfg["heads"] + 2 * cfg["kv_heads"]) * cfg["head_dim"]
    out = [("embed", (cfg["vocab"], h))]
    for layer in range(cfg["layers"]):
        p = f"l{layer}_"
        out += [
            (p + "attn_norm", (h,)),
            (p + "wqkv", (h, qkv)),
            (p + "wo", (cfg["heads"] * cfg["head_dim"], h)),
            (p + "mlp_norm", (h,)),
            (p + "w_gate_up", (h, 2 * i)),
            (p + "w_down", (i, h)),
        ]
    out += [("final_norm", (h,)), ("lm_head", (h, cfg["vocab"]))]
    return out


def make_weights(seed=0, cfg=CONFIG):
    """The weights as a dict name -> float32 array."""
    rng = np.random.RandomState(seed)
    weights = {}
    for name, shape in shapes(cfg):
        x = rng.standard_normal(shape)
        if name == "embed":
            w = x
        elif name.endswith("norm"):
            w = 1.0 + 0.1 * x
        else:
            w = x / np.sqrt(shape[0])
        weights[name] = w.astype(np.float32)
    return weights


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="output folder (created if missing)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    total = 0
    for name, w in make_weights(args.seed).items():
        np.save(os.path.join(args.dir, name + ".npy"), w)
        total += w.nbytes
    print(f"wrote {len(shapes())} weights ({total / 1e6:.1f} MB) to {args.dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
