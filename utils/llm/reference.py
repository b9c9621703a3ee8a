#!/usr/bin/env python3
"""A numpy reference of the Llama-family decoder that relax-llm writes (docs/llm.md).

Reads a GGUF file with the `gguf` package (its reader and reference dequantizers),
runs the prompt and greedy generation in float64 with a plain growing KV cache (its keys
and values rounded to float16 as they are stored, as relax's and llama.cpp's default
cache keeps them, unless --cache-type f32), and
writes the generated token ids (stdout, comma-separated) and, with --logits-out, the
logits of every generated token as a (steps, vocab) float32 .npy, the same outputs as
`relax-run --generate`. With --q8-activations, the activations of a matrix product with
a Q4_0 or Q8_0 weight are first rounded to 8 bits per block of 32 (ggml's
`quantize_row_q8_0`: `round(x * 127 / amax)`, the scale `amax / 127` as a half float),
as llama.cpp does and as relax's LLM pipeline does (`quantize-activations`) in the decode
steps and the LM head, where a matmul has one activation row; the prompt's own matmuls
stay float. It is written from the model's definition (ggml's operations in
llama.cpp's graph for `llama` and `qwen2`), not from relax's module, so the two check
each other.

    reference.py model.gguf --prompt 1,2,3 --max-new-tokens 8 [--logits-out L.npy]
                 [--cache-type f16|f32] [--q8-activations]
"""
import argparse
import sys

import numpy as np


def field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    v = f.parts[f.data[0]]
    if len(f.types) and f.types[0] == 8:  # string
        return bytes(v).decode()
    return v[0].item() if hasattr(v, "__len__") and len(v) == 1 else v


def load(path):
    import gguf

    r = gguf.GGUFReader(path)
    arch = field(r, "general.architecture")
    if arch not in ("llama", "qwen2"):
        sys.exit(f"reference.py: unsupported architecture {arch!r}")
    cfg = {
        "arch": arch,
        "n_layer": int(field(r, f"{arch}.block_count")),
        "n_embd": int(field(r, f"{arch}.embedding_length")),
        "n_head": int(field(r, f"{arch}.attention.head_count")),
        "n_head_kv": int(field(r, f"{arch}.attention.head_count_kv", field(r, f"{arch}.attention.head_count"))),
        "eps": float(field(r, f"{arch}.attention.layer_norm_rms_epsilon", 1e-5)),
        "base": float(field(r, f"{arch}.rope.freq_base", 10000.0)),
    }
    cfg["head_dim"] = int(field(r, f"{arch}.attention.key_length", cfg["n_embd"] // cfg["n_head"]))
    cfg["n_rot"] = int(field(r, f"{arch}.rope.dimension_count", cfg["head_dim"]))
    scaling = field(r, f"{arch}.rope.scaling.type", "none")
    factor = float(field(r, f"{arch}.rope.scaling.factor", 1.0) or 1.0)
    cfg["freq_scale"] = 1.0 / factor if scaling == "linear" and factor > 0 else 1.0
    weights = {}
    q8_types = set()
    for t in r.tensors:
        if int(t.tensor_type) in (2, 8):  # GGML_TYPE_Q4_0, GGML_TYPE_Q8_0
            q8_types.add(t.name)
        shape = [int(x) for x in reversed(t.shape.tolist())]  # outermost first
        data = gguf.quants.dequantize(t.data, t.tensor_type)
        weights[t.name] = np.asarray(data, dtype=np.float64).reshape(shape)
    cfg["q8_types"] = q8_types
    return cfg, weights


def q8(x):
    """`x` (float32 values) rounded as ggml's quantize_row_q8_0 does, dequantized."""
    n, k = x.shape
    xb = x.astype(np.float32).reshape(n, k // 32, 32)
    amax = np.abs(xb).max(axis=-1, keepdims=True)
    safe = np.where(amax != 0, amax, np.float32(1))
    iscale = np.where(amax != 0, np.float32(127) / safe, np.float32(0)).astype(np.float32)
    q = np.rint(xb * iscale).astype(np.float64)
    d = (amax / np.float32(127)).astype(np.float16).astype(np.float64)
    return (q * d).reshape(n, k)


def matmul(cfg, x, w, name, quantized):
    """`x @ w[name].T`, the activations rounded to 8 bits first when `quantized` and
    the weight is Q4_0 or Q8_0."""
    if quantized and name in cfg["q8_types"]:
        x = q8(x)
    return x @ w[name].T


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, pos, cfg, factors):
    """x: (n, heads, head_dim); pos: (n,)."""
    r = cfg["n_rot"]
    i = np.arange(0, r, 2, dtype=np.float64)
    inv = cfg["freq_scale"] * cfg["base"] ** (-i / r)
    if factors is not None:
        inv = inv / factors
    ang = pos[:, None, None] * inv[None, None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = x.copy()
    if cfg["arch"] == "qwen2":  # halves (NeoX)
        a, b = x[..., : r // 2], x[..., r // 2 : r]
        out[..., : r // 2] = a * c - b * s
        out[..., r // 2 : r] = a * s + b * c
    else:  # adjacent pairs
        a, b = x[..., 0:r:2], x[..., 1:r:2]
        out[..., 0:r:2] = a * c - b * s
        out[..., 1:r:2] = a * s + b * c
    return out


def forward(cfg, w, tokens, cache, past, cache_dtype, q8_step=False):
    """Runs positions past..past+n; cache[layer] = (K, V) lists grown in place. With
    `q8_step` every Q4_0 / Q8_0 matmul rounds its activations to 8 bits; the LM head
    does when `cfg["q8_head"]`."""
    def mm(x, name):
        return matmul(cfg, x, w, name, q8_step)

    n = len(tokens)
    h, kvh, hd = cfg["n_head"], cfg["n_head_kv"], cfg["head_dim"]
    x = w["token_embd.weight"][tokens]
    pos = np.arange(past, past + n, dtype=np.float64)
    factors = w.get("rope_freqs.weight")
    for l in range(cfg["n_layer"]):
        p = f"blk.{l}."
        hn = rms_norm(x, w[p + "attn_norm.weight"], cfg["eps"])
        q = mm(hn, p + "attn_q.weight") + w.get(p + "attn_q.bias", 0.0)
        k = mm(hn, p + "attn_k.weight") + w.get(p + "attn_k.bias", 0.0)
        v = mm(hn, p + "attn_v.weight") + w.get(p + "attn_v.bias", 0.0)
        q = rope(q.reshape(n, h, hd), pos, cfg, factors)
        k = rope(k.reshape(n, kvh, hd), pos, cfg, factors)
        v = v.reshape(n, kvh, hd)
        # The cache stores the keys and values in its own precision.
        k = k.astype(cache_dtype).astype(np.float64)
        v = v.astype(cache_dtype).astype(np.float64)
        K, V = cache[l]
        K = np.concatenate([K, k]) if K is not None else k
        V = np.concatenate([V, v]) if V is not None else v
        cache[l] = (K, V)
        g = h // kvh
        out = np.empty((n, h, hd))
        for s in range(n):
            t = past + s + 1
            for head in range(h):
                sc = K[:t, head // g] @ q[s, head] / np.sqrt(hd)
                e = np.exp(sc - sc.max())
                out[s, head] = (e / e.sum()) @ V[:t, head // g]
        x = x + mm(out.reshape(n, h * hd), p + "attn_output.weight")
        hn = rms_norm(x, w[p + "ffn_norm.weight"], cfg["eps"])
        gate = mm(hn, p + "ffn_gate.weight")
        up = mm(hn, p + "ffn_up.weight")
        act = gate / (1.0 + np.exp(-gate)) * up
        x = x + mm(act, p + "ffn_down.weight")
    last = rms_norm(x[-1:], w["output_norm.weight"], cfg["eps"])
    head = "output.weight" if "output.weight" in w else "token_embd.weight"
    return matmul(cfg, last, w, head, cfg["q8_head"])[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=8)
    ap.add_argument("--logits-out")
    ap.add_argument("--cache-type", choices=["f16", "f32"], default="f16")
    ap.add_argument("--q8-activations", action="store_true")
    a = ap.parse_args()
    cfg, w = load(a.model)
    cfg["q8_head"] = a.q8_activations
    tokens = [int(t) for t in a.prompt.split(",")]
    cache = [(None, None)] * cfg["n_layer"]
    cache_dtype = np.float16 if a.cache_type == "f16" else np.float32
    logits = forward(cfg, w, np.array(tokens), cache, 0, cache_dtype)
    past = len(tokens)
    out, rows = [], []
    while True:
        nxt = int(np.argmax(logits))
        out.append(nxt)
        rows.append(logits.astype(np.float32))
        if len(out) == a.max_new_tokens:
            break
        logits = forward(cfg, w, np.array([nxt]), cache, past, cache_dtype, a.q8_activations)
        past += 1
    print(",".join(map(str, out)))
    if a.logits_out:
        np.save(a.logits_out, np.stack(rows))


if __name__ == "__main__":
    main()
