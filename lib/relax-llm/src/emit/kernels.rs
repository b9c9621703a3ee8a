//! The hand-written kernels of the decoder: the KV cache write and attention.
//!
//! The KV cache is one float32 tensor `(layers, 2, n_ctx, n_head_kv, head_dim)` (keys,
//! then values, of every layer), allocated once by `prefill` and passed from step to
//! step. A step writes its keys and values at rows `past .. past + n` of its layer in
//! place (`kv_write`, called with `R.call_tir_inplace`), and attention reads rows
//! `0 .. past + n` straight from the cache: nothing is copied, so a step's cost grows
//! with the context only through attention's reads.
//!
//! `attention` is causal grouped-query attention with an online softmax (the
//! FlashAttention recurrence): one task per (query position, key/value head) computes
//! the `group` query heads that share the head together, walking the cached positions in
//! chunks of [`CHUNK`] so each key and value row is read once per task and stays in the
//! L1 cache for the whole group; a chunk's scores are exponentiated once, and the running
//! sums are rescaled once per chunk. Both kernels assert that the positions fit the
//! cache, so a step past the context is an error, never a write out of bounds.

use super::text::i64_lit;
use crate::spec::ModelSpec;

/// Cached positions per attention chunk.
pub const CHUNK: usize = 32;

/// The cache's dims as TIR literals.
fn cache_dims(m: &ModelSpec) -> String {
    [m.layers.len(), 2, m.n_ctx, m.n_head_kv, m.head_dim].iter().map(|&d| i64_lit(d)).collect::<Vec<_>>().join(", ")
}

/// The assertion that `past + n` positions fit the cache.
fn fits(m: &ModelSpec) -> String {
    format!(
        r#"        assert past + n <= {ctx}, "the KV cache holds {ctx_n} positions: a step at position past + n is past the end of the context"
        assert layer < {l}, "layer index out of range""#,
        ctx = i64_lit(m.n_ctx),
        ctx_n = m.n_ctx,
        l = i64_lit(m.layers.len())
    )
}

/// `kv_write(cache, k, v, layer, past)`: rows `past .. past + n` of `layer`.
pub fn kv_write(m: &ModelSpec) -> String {
    let (kvh, d) = (i64_lit(m.n_head_kv), i64_lit(m.head_dim));
    format!(
        r#"    @T.prim_func(private=True)
    def kv_write(var_cache: T.handle, var_k: T.handle, var_v: T.handle, layer: T.int64, past: T.int64):
        T.func_attr({{"tir.noalias": True}})
        n = T.int64()
        cache = T.match_buffer(var_cache, ({dims}))
        k = T.match_buffer(var_k, (n, {kvh}, {d}))
        v = T.match_buffer(var_v, (n, {kvh}, {d}))
{fits}
        for s, h, e in T.grid(n, {kvh}, {d}):
            with T.block("kv_write"):
                vs, vh, ve = T.axis.remap("SSS", [s, h, e])
                cache[layer, T.int64(0), past + vs, vh, ve] = k[vs, vh, ve]
                cache[layer, T.int64(1), past + vs, vh, ve] = v[vs, vh, ve]
"#,
        dims = cache_dims(m),
        fits = fits(m),
    )
}

/// `attention(q, cache, layer, past) -> out`, `q` and `out` of shape `(n, n_head, head_dim)`.
pub fn attention(m: &ModelSpec) -> String {
    let g = m.group();
    let (h, kvh, d) = (i64_lit(m.n_head), i64_lit(m.n_head_kv), i64_lit(m.head_dim));
    let (gl, ch) = (i64_lit(g), i64_lit(CHUNK));
    let scale = 1.0 / (m.head_dim as f64).sqrt();
    let body = format!(
        r#"    @T.prim_func(private=True)
    def attention(var_q: T.handle, var_cache: T.handle, var_out: T.handle, layer: T.int64, past: T.int64):
        T.func_attr({{"tir.noalias": True, "tir.is_scheduled": True}})
        n = T.int64()
        q = T.match_buffer(var_q, (n, {h}, {d}))
        cache = T.match_buffer(var_cache, ({dims}))
        out = T.match_buffer(var_out, (n, {h}, {d}))
{fits}
        for task in T.parallel(n * {kvh}):
            with T.block("attend"):
                vt = T.axis.spatial(n * {kvh}, task)
                T.reads(q[POS, HEAD0:HEAD0 + {gl}, T.int64(0):{d}], cache[layer, T.int64(0):T.int64(2), T.int64(0):past + POS + T.int64(1), KVHEAD, T.int64(0):{d}])
                T.writes(out[POS, HEAD0:HEAD0 + {gl}, T.int64(0):{d}])
                acc = T.alloc_buffer(({gl}, {d}), scope="local")
                score = T.alloc_buffer(({gl}, {ch}), scope="local")
                run_max = T.alloc_buffer(({gl},), scope="local")
                chunk_max = T.alloc_buffer(({gl},), scope="local")
                total = T.alloc_buffer(({gl},), scope="local")
                for g, e in T.grid({gl}, {d}):
                    acc[g, e] = T.float32(0.0)
                for g in range({gl}):
                    run_max[g] = T.float32(-3.4028234663852886e+38)
                    total[g] = T.float32(0.0)
                for c in range((past + POS + {ch}) // {ch}):
                    for g, t in T.grid({gl}, {ch}):
                        score[g, t] = T.float32(-3.4028234663852886e+38)
                        if c * {ch} + t <= past + POS:
                            score[g, t] = T.float32(0.0)
                            for e in range({d}):
                                score[g, t] = score[g, t] + q[POS, HEAD0 + g, e] * cache[layer, T.int64(0), c * {ch} + t, KVHEAD, e]
                            score[g, t] = score[g, t] * T.float32({scale:?})
                    for g in range({gl}):
                        chunk_max[g] = run_max[g]
                        for t in range({ch}):
                            chunk_max[g] = T.max(chunk_max[g], score[g, t])
                        total[g] = total[g] * T.exp(run_max[g] - chunk_max[g])
                        for e in range({d}):
                            acc[g, e] = acc[g, e] * T.exp(run_max[g] - chunk_max[g])
                        for t in range({ch}):
                            score[g, t] = T.exp(score[g, t] - chunk_max[g])
                            total[g] = total[g] + score[g, t]
                        run_max[g] = chunk_max[g]
                    for t in range({ch}):
                        if c * {ch} + t <= past + POS:
                            for g, e in T.grid({gl}, {d}):
                                acc[g, e] = acc[g, e] + score[g, t] * cache[layer, T.int64(1), c * {ch} + t, KVHEAD, e]
                for g, e in T.grid({gl}, {d}):
                    out[POS, HEAD0 + g, e] = acc[g, e] / total[g]
"#,
        dims = cache_dims(m),
        fits = fits(m),
    );
    body.replace("POS", &format!("vt // {kvh}"))
        .replace("KVHEAD", &format!("vt % {kvh}"))
        .replace("HEAD0", &format!("vt % {kvh} * {gl}"))
}
