//! The hand-written kernels of the decoder: the KV cache writes and attention.
//!
//! The KV cache is two tensors of the model's cache type (float16 by default, as in
//! llama.cpp, or float32), allocated once by `prefill` and passed from step to step: the keys `(layers, n_head_kv, head_dim, ctx)`, transposed so that the keys of
//! consecutive positions are contiguous for each dim, and the values `(layers, n_head_kv,
//! ctx, head_dim)`. `ctx` is the context rounded up to a whole number of [`CHUNK`]s. A
//! step writes its keys and values at positions `past .. past + n` of its layer in place
//! (`k_write`, `v_write`, called with `R.call_tir_inplace`), and attention reads positions
//! `0 .. past + n` straight from the cache: nothing is copied, so a step's cost grows with
//! the context only through attention's reads. A float16 cache rounds keys and values when
//! they are written and widens them exactly to float32 where attention reads them.
//!
//! `attention` is causal grouped-query attention with an online softmax (the
//! FlashAttention recurrence). One task per (query position, key/value head) computes the
//! `group` query heads that share the head together, walking the cached positions in
//! chunks of [`CHUNK`]: the chunk's scores for all heads of the group (`q . k`, the
//! positions of a chunk in the vector lanes, which the transposed key layout makes
//! contiguous loads), their exponentials (a polynomial, [`exp_stmts`], so they vectorize
//! and the interpreter computes the same bits), the running max and sum rescaled once per
//! chunk, and the values accumulated with the head dim in the lanes. Each key and value
//! is read once per task and stays in the L1 cache for the whole group. Both kernels
//! assert that the positions fit the context, so a step past it is an error, never an
//! access out of bounds.

use super::text::i64_lit;
use crate::spec::{CacheType, ModelSpec};

/// Cached positions per attention chunk.
pub const CHUNK: usize = 32;

/// The positions the cache tensors hold: the context rounded up to whole chunks (the
/// positions past the context are never written and never weigh in the softmax).
pub fn cache_positions(m: &ModelSpec) -> usize {
    m.n_ctx.div_ceil(CHUNK) * CHUNK
}

/// The key cache's dims.
pub fn k_cache_dims(m: &ModelSpec) -> [usize; 4] {
    [m.layers.len(), m.n_head_kv, m.head_dim, cache_positions(m)]
}

/// The value cache's dims.
pub fn v_cache_dims(m: &ModelSpec) -> [usize; 4] {
    [m.layers.len(), m.n_head_kv, cache_positions(m), m.head_dim]
}

fn lits(d: &[usize]) -> String {
    d.iter().map(|&d| i64_lit(d)).collect::<Vec<_>>().join(", ")
}

/// `value` converted to `to` when the cache is float16 (rounded on the way in, widened on
/// the way out); the value itself for a float32 cache.
fn convert(m: &ModelSpec, to: &str, value: &str) -> String {
    match m.cache_type {
        CacheType::F32 => value.to_string(),
        CacheType::F16 => format!("T.Cast(\"{to}\", {value})"),
    }
}

/// The assertion that `past + n` positions fit the context.
fn fits(m: &ModelSpec) -> String {
    format!(
        r#"        assert past + n <= {ctx}, "the context holds {ctx_n} positions: this step would pass its end"
        assert layer < {l}, "layer index out of range""#,
        ctx = i64_lit(m.n_ctx),
        ctx_n = m.n_ctx,
        l = i64_lit(m.layers.len())
    )
}

/// `k_write(k_cache, k, layer, past)` or `v_write(v_cache, v, layer, past)`: positions
/// `past .. past + n` of `layer`.
pub fn cache_write(m: &ModelSpec, keys: bool) -> String {
    let (kvh, d) = (i64_lit(m.n_head_kv), i64_lit(m.head_dim));
    let (name, dims, target) = if keys {
        ("k_write", k_cache_dims(m), "cache[layer, vh, ve, past + vs]")
    } else {
        ("v_write", v_cache_dims(m), "cache[layer, vh, past + vs, ve]")
    };
    format!(
        r#"    @T.prim_func(private=True)
    def {name}(var_cache: T.handle, var_x: T.handle, layer: T.int64, past: T.int64):
        T.func_attr({{"tir.noalias": True}})
        n = T.int64()
        cache = T.match_buffer(var_cache, ({dims}), "{dtype}")
        x = T.match_buffer(var_x, (n, {kvh}, {d}))
{fits}
        for s, h, e in T.grid(n, {kvh}, {d}):
            with T.block("{name}"):
                vs, vh, ve = T.axis.remap("SSS", [s, h, e])
                {target} = {value}
"#,
        dims = lits(&dims),
        dtype = m.cache_type.dtype(),
        value = convert(m, "float16", "x[vs, vh, ve]"),
        fits = fits(m),
    )
}

/// Statements that set `out[t]` to `exp(x)` for each `t` of `range(lanes)`, where `x` is
/// an expression of `t` at most 0: Cephes' `expf` (range reduction by `ln 2` in two parts,
/// a degree-5 polynomial, the power of two built in the exponent bits), within 2 ulp of
/// the exact value for `x >= -87`; smaller `x` gives `exp(-87)`. Written in TIR
/// arithmetic, it vectorizes, and the interpreter computes the same bits as the JIT.
fn exp_stmts(indent: &str, lanes: &str, x: &str, out: &str) -> String {
    let f = |v: f64| format!("T.float32({v:?})");
    format!(
        "{indent}for t in range({lanes}):\n\
         {indent}    ex_x[t] = T.max({x}, {lo})\n\
         {indent}    ex_n[t] = T.round(ex_x[t] * {log2e})\n\
         {indent}    ex_r[t] = ex_x[t] - ex_n[t] * {c1} + ex_n[t] * {c2}\n\
         {indent}    {out} = (((((({p0} * ex_r[t] + {p1}) * ex_r[t] + {p2}) * ex_r[t] + {p3}) * ex_r[t] + {p4}) * ex_r[t] + {p5}) * (ex_r[t] * ex_r[t]) + ex_r[t] + {one}) * T.reinterpret(\"float32\", T.shift_left(T.Cast(\"int32\", ex_n[t]) + 127, 23))\n",
        lo = f(-87.0),
        log2e = f(std::f64::consts::LOG2_E),
        c1 = f(0.693359375),
        c2 = f(2.12194440e-4),
        p0 = f(1.9875691500e-4),
        p1 = f(1.3981999507e-3),
        p2 = f(8.3334519073e-3),
        p3 = f(4.1665795894e-2),
        p4 = f(1.6666665459e-1),
        p5 = f(5.0000001201e-1),
        one = f(1.0),
    )
}

/// `attention(q, k_cache, v_cache, layer, past) -> out`, `q` and `out` of shape
/// `(n, n_head, head_dim)`.
pub fn attention(m: &ModelSpec) -> String {
    let g = m.group();
    let (h, kvh, d) = (i64_lit(m.n_head), i64_lit(m.n_head_kv), i64_lit(m.head_dim));
    let (gl, ch) = (i64_lit(g), i64_lit(CHUNK));
    let scale = 1.0 / (m.head_dim as f64).sqrt();
    let big = "T.float32(-3.4028234663852886e+38)";
    let body = format!(
        r#"    @T.prim_func(private=True)
    def attention(var_q: T.handle, k_cache: T.Buffer(({kdims}), "{dtype}"), v_cache: T.Buffer(({vdims}), "{dtype}"), var_out: T.handle, layer: T.int64, past: T.int64):
        T.func_attr({{"tir.noalias": True, "tir.is_scheduled": True}})
        n = T.int64()
        q = T.match_buffer(var_q, (n, {h}, {d}))
        out = T.match_buffer(var_out, (n, {h}, {d}))
{fits}
        for task in T.parallel(n * {kvh}):
            with T.block("attend"):
                vt = T.axis.spatial(n * {kvh}, task)
                T.reads(q[POS, HEAD0:HEAD0 + {gl}, T.int64(0):{d}], k_cache[layer, KVHEAD, T.int64(0):{d}, T.int64(0):{cpos}], v_cache[layer, KVHEAD, T.int64(0):{cpos}, T.int64(0):{d}])
                T.writes(out[POS, HEAD0:HEAD0 + {gl}, T.int64(0):{d}])
                acc = T.alloc_buffer(({gl}, {d}), scope="local")
                score = T.alloc_buffer(({gl}, {ch}), scope="local")
                run_max = T.alloc_buffer(({gl},), scope="local")
                chunk_max = T.alloc_buffer(({gl},), scope="local")
                corr = T.alloc_buffer(({gl},), scope="local")
                total = T.alloc_buffer(({gl},), scope="local")
                ex_x = T.alloc_buffer(({ch},), scope="local")
                ex_n = T.alloc_buffer(({ch},), scope="local")
                ex_r = T.alloc_buffer(({ch},), scope="local")
                for g, e in T.grid({gl}, {d}):
                    acc[g, e] = T.float32(0.0)
                for g in range({gl}):
                    run_max[g] = {big}
                    total[g] = T.float32(0.0)
                for c in range((past + POS + {ch}) // {ch}):
                    for g, t in T.grid({gl}, {ch}):
                        score[g, t] = T.float32(0.0)
                    for g, e, t in T.grid({gl}, {d}, {ch}):
                        score[g, t] = score[g, t] + q[POS, HEAD0 + g, e] * {kread}
                    for g, t in T.grid({gl}, {ch}):
                        score[g, t] = T.Select(c * {ch} + t <= past + POS, score[g, t] * T.float32({scale:?}), {big})
                    for g in range({gl}):
                        chunk_max[g] = run_max[g]
                        for t in range({ch}):
                            chunk_max[g] = T.max(chunk_max[g], score[g, t])
{exp_corr}                        total[g] = total[g] * corr[g]
                        for e in range({d}):
                            acc[g, e] = acc[g, e] * corr[g]
{exp_p}                        for t in range({ch}):
                            score[g, t] = T.Select(c * {ch} + t <= past + POS, score[g, t], T.float32(0.0))
                        for t in range({ch}):
                            total[g] = total[g] + score[g, t]
                        run_max[g] = chunk_max[g]
                    for g, t, e in T.grid({gl}, {ch}, {d}):
                        acc[g, e] = acc[g, e] + score[g, t] * {vread}
                for g, e in T.grid({gl}, {d}):
                    out[POS, HEAD0 + g, e] = acc[g, e] / total[g]
"#,
        kdims = lits(&k_cache_dims(m)),
        dtype = m.cache_type.dtype(),
        kread = convert(m, "float32", &format!("k_cache[layer, KVHEAD, e, c * {ch} + t]")),
        vread = convert(m, "float32", &format!("v_cache[layer, KVHEAD, c * {ch} + t, e]")),
        vdims = lits(&v_cache_dims(m)),
        cpos = i64_lit(cache_positions(m)),
        fits = fits(m),
        exp_corr = exp_stmts("                        ", "T.int64(1)", "run_max[g] - chunk_max[g]", "corr[g]"),
        exp_p = exp_stmts("                        ", &ch, "score[g, t] - chunk_max[g]", "score[g, t]"),
    );
    body.replace("POS", &format!("vt // {kvh}"))
        .replace("KVHEAD", &format!("vt % {kvh}"))
        .replace("HEAD0", &format!("vt % {kvh} * {gl}"))
}
