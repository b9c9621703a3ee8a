//! The Relax functions `prefill` and `decode`: one forward step of the decoder over `n`
//! new positions after `past` cached ones.
//!
//! Both are the same graph: token embedding (`R.take`), per layer RMSNorm, the query,
//! key and value projections (`R.matmul` with the transposed weight, plus Qwen2's
//! biases), rotary embedding in plain Relax ops (the angles computed once per step from
//! `R.arange` positions, the rotation by `split`, `multiply`, `subtract`, `add`, `concat`),
//! the cache write and attention kernels, the output projection and residual, RMSNorm,
//! SwiGLU (`silu(gate) * up`, then `down`) and residual; then the final norm and LM head
//! on the last position only, and the greedy next token (`argmax`).
//!
//! `prefill` runs `seq_len` prompt positions on a fresh cache (`R.zeros`); `decode` runs
//! one position after `past_len` cached ones; `extend` runs `seq_len` positions after
//! `past_len` cached ones (the rest of a long prompt, in chunks, as llama.cpp's
//! micro-batches: activations sized by the chunk, not the prompt). A weight enters as what the file stores:
//! float32 as it is, float16/bfloat16 through `R.astype`, a quantized one through the
//! `call_tir` of its decode kernel ([`super::dequant`]).

use std::collections::BTreeMap;

use super::text::{Block, dims, float, shape, tensor};
use super::{dequant, kernels};
use crate::spec::{ModelSpec, RopeStyle, Weight, WeightType};

/// What differs between the three functions.
struct Step {
    name: &'static str,
    /// New positions: `seq_len` or `1`.
    n: &'static str,
    /// Cached positions before the step: `0` or `past_len`.
    past: &'static str,
}

const PREFILL: Step = Step { name: "prefill", n: "seq_len", past: "0" };
const DECODE: Step = Step { name: "decode", n: "1", past: "past_len" };
const EXTEND: Step = Step { name: "extend", n: "seq_len", past: "past_len" };

/// Writes one function's body, collecting the decode kernels it calls.
struct Writer<'a> {
    m: &'a ModelSpec,
    b: Block,
    kernels: &'a mut BTreeMap<String, String>,
    n: String,
}

impl Writer<'_> {
    /// `w` as a float32 matrix (or vector) for use in the graph.
    fn float_weight(&mut self, w: &Weight, rows: Option<&str>, src: &str, prefix: &str) -> String {
        match w.ty {
            WeightType::F32 => src.to_string(),
            WeightType::F16 | WeightType::BF16 => {
                self.b.bind(format!("{prefix}_f32"), format!("R.astype({src}, dtype=\"float32\")"))
            }
            ty => {
                let k = *w.dims.last().expect("a quantized weight is a matrix");
                let kernel = dequant::kernel_name(ty, k);
                self.kernels.entry(kernel.clone()).or_insert_with(|| dequant::kernel(ty, k));
                let rows = rows.map_or_else(|| w.dims[0].to_string(), str::to_string);
                self.b.bind(
                    format!("{prefix}_f32"),
                    format!(
                        "R.call_tir(cls.{kernel}, ({src},), out_sinfo={})",
                        tensor(&[rows, k.to_string()], "float32")
                    ),
                )
            }
        }
    }

    /// `x @ w^T` for a `[out, in]` weight `w`: `(n, in) -> (n, out)`.
    fn linear(&mut self, x: &str, w: &Weight, out: &str) -> String {
        let wf = self.float_weight(w, None, &w.param(), out);
        let wt = self.b.bind(format!("{out}_wt"), format!("R.permute_dims({wf}, axes=[1, 0])"));
        self.b.bind(out, format!("R.matmul({x}, {wt})"))
    }

    /// `x @ w^T + bias`.
    fn linear_bias(&mut self, x: &str, w: &Weight, bias: Option<&Weight>, out: &str) -> String {
        match bias {
            None => self.linear(x, w, out),
            Some(b) => {
                let y = self.linear(x, w, &format!("{out}_nobias"));
                let bf = self.float_weight(b, None, &b.param(), &format!("{out}_bias"));
                self.b.bind(out, format!("R.add({y}, {bf})"))
            }
        }
    }

    fn rms_norm(&mut self, x: &str, w: &Weight, out: &str) -> String {
        let wf = self.float_weight(w, None, &w.param(), out);
        self.b.bind(out, format!("R.nn.rms_norm({x}, {wf}, axes=[-1], epsilon={})", float(self.m.rms_eps)))
    }

    /// Rotates the first `rope.dims` dims of each head of `x: (n, heads, head_dim)`.
    fn rope(&mut self, x: &str, heads: usize, cos: &str, sin: &str, out: &str) -> String {
        let (r, d, n) = (self.m.rope.dims, self.m.head_dim, self.n.clone());
        let (rot, pass) = if r < d {
            let parts = self.b.bind(format!("{out}_parts"), format!("R.split({x}, indices_or_sections=[{r}], axis=2)"));
            (
                self.b.bind(format!("{out}_rot"), format!("{parts}[0]")),
                Some(self.b.bind(format!("{out}_pass"), format!("{parts}[1]"))),
            )
        } else {
            (x.to_string(), None)
        };
        let rotated = match self.m.rope.style {
            RopeStyle::Interleaved => {
                let pairs = self.b.bind(
                    format!("{out}_pairs"),
                    format!(
                        "R.reshape({rot}, {})",
                        shape(&[n.clone(), heads.to_string(), (r / 2).to_string(), "2".into()])
                    ),
                );
                let xs = self.b.bind(format!("{out}_xs"), format!("R.split({pairs}, indices_or_sections=2, axis=3)"));
                let (a, b) = self.rotate(&xs, cos, sin, out);
                let cat = self.b.bind(format!("{out}_cat"), format!("R.concat(({a}, {b}), axis=3)"));
                let name = if pass.is_some() { format!("{out}_r") } else { out.to_string() };
                self.b.bind(name, format!("R.reshape({cat}, {})", shape(&[n, heads.to_string(), r.to_string()])))
            }
            RopeStyle::Halves => {
                let xs = self.b.bind(format!("{out}_xs"), format!("R.split({rot}, indices_or_sections=2, axis=2)"));
                let (a, b) = self.rotate(&xs, cos, sin, out);
                let name = if pass.is_some() { format!("{out}_r") } else { out.to_string() };
                self.b.bind(name, format!("R.concat(({a}, {b}), axis=2)"))
            }
        };
        match pass {
            Some(p) => self.b.bind(out, format!("R.concat(({rotated}, {p}), axis=2)")),
            None => rotated,
        }
    }

    /// `(x0 cos - x1 sin, x0 sin + x1 cos)` of the two halves in the tuple `xs`.
    fn rotate(&mut self, xs: &str, cos: &str, sin: &str, out: &str) -> (String, String) {
        let x0 = self.b.bind(format!("{out}_x0"), format!("{xs}[0]"));
        let x1 = self.b.bind(format!("{out}_x1"), format!("{xs}[1]"));
        let x0c = self.b.bind(format!("{out}_x0c"), format!("R.multiply({x0}, {cos})"));
        let x1s = self.b.bind(format!("{out}_x1s"), format!("R.multiply({x1}, {sin})"));
        let x0s = self.b.bind(format!("{out}_x0s"), format!("R.multiply({x0}, {sin})"));
        let x1c = self.b.bind(format!("{out}_x1c"), format!("R.multiply({x1}, {cos})"));
        let a = self.b.bind(format!("{out}_a"), format!("R.subtract({x0c}, {x1s})"));
        let b = self.b.bind(format!("{out}_b"), format!("R.add({x0s}, {x1c})"));
        (a, b)
    }
}

/// The key cache's type.
fn k_cache_type(m: &ModelSpec) -> String {
    tensor(&dims(&kernels::k_cache_dims(m)), m.cache_type.dtype())
}

/// The value cache's type.
fn v_cache_type(m: &ModelSpec) -> String {
    tensor(&dims(&kernels::v_cache_dims(m)), m.cache_type.dtype())
}

/// One of the two functions.
fn function(m: &ModelSpec, step: &Step, kernels: &mut BTreeMap<String, String>) -> String {
    let mut w = Writer { m, b: Block::default(), kernels, n: step.n.to_string() };
    let n = step.n;
    let past = step.past;
    let end = if past == "0" { n.to_string() } else { format!("{past} + {n}") };
    let (h, kvh, hd) = (m.n_head, m.n_head_kv, m.head_dim);

    // Embedding.
    let emb = &m.token_embd;
    let x = if emb.ty.is_quantized() {
        let rows = w.b.bind("embd_rows", format!("R.take({}, tokens, axis=0, mode=\"clip\")", emb.param()));
        w.float_weight(emb, Some(n), &rows, "embd")
    } else {
        let rows = w.b.bind("embd_rows", format!("R.take({}, tokens, axis=0, mode=\"clip\")", emb.param()));
        w.float_weight(emb, None, &rows, "embd")
    };

    // Rotary angles of the step's positions.
    let r = m.rope.dims;
    let pos = w.b.bind(
        "pos",
        format!("R.arange(R.prim_value({past}), R.prim_value({end}), R.prim_value(1), dtype=\"float32\")"),
    );
    let idx = w
        .b
        .bind("rope_idx", format!("R.arange(R.prim_value(0), R.prim_value({r}), R.prim_value(2), dtype=\"float32\")"));
    let expo = w.b.bind("rope_exp", format!("R.divide({idx}, R.const({}, \"float32\"))", float(-(r as f64))));
    let mut inv = w.b.bind("inv_freq", format!("R.power(R.const({}, \"float32\"), {expo})", float(m.rope.base)));
    if m.rope.freq_scale != 1.0 {
        inv = w
            .b
            .bind("inv_freq_scaled", format!("R.multiply({inv}, R.const({}, \"float32\"))", float(m.rope.freq_scale)));
    }
    if let Some(ff) = &m.rope.freq_factors {
        let f = w.float_weight(ff, None, &ff.param(), "rope_factors");
        inv = w.b.bind("inv_freq_factored", format!("R.divide({inv}, {f})"));
    }
    let pos2 = w.b.bind("pos2", format!("R.expand_dims({pos}, axis=[1])"));
    let freqs = w.b.bind("freqs", format!("R.multiply({pos2}, {inv})"));
    let cos = w.b.bind("cos_t", format!("R.cos({freqs})"));
    let sin = w.b.bind("sin_t", format!("R.sin({freqs})"));
    let rope_shape = match m.rope.style {
        RopeStyle::Interleaved => vec![n.to_string(), "1".into(), (r / 2).to_string(), "1".into()],
        RopeStyle::Halves => vec![n.to_string(), "1".into(), (r / 2).to_string()],
    };
    let cos = w.b.bind("cos", format!("R.reshape({cos}, {})", shape(&rope_shape)));
    let sin = w.b.bind("sin", format!("R.reshape({sin}, {})", shape(&rope_shape)));

    let (mut kc, mut vc) = if past == "0" {
        (
            w.b.bind(
                "k_init",
                format!("R.zeros({}, dtype=\"{}\")", shape(&dims(&kernels::k_cache_dims(m))), m.cache_type.dtype()),
            ),
            w.b.bind(
                "v_init",
                format!("R.zeros({}, dtype=\"{}\")", shape(&dims(&kernels::v_cache_dims(m))), m.cache_type.dtype()),
            ),
        )
    } else {
        ("k_cache".to_string(), "v_cache".to_string())
    };
    let mut x = x;
    for (i, l) in m.layers.iter().enumerate() {
        let p = format!("l{i}");
        let hn = w.rms_norm(&x, &l.attn_norm, &format!("{p}_attn_in"));
        let q = w.linear_bias(&hn, &l.wq, l.bq.as_ref(), &format!("{p}_q"));
        let k = w.linear_bias(&hn, &l.wk, l.bk.as_ref(), &format!("{p}_k"));
        let v = w.linear_bias(&hn, &l.wv, l.bv.as_ref(), &format!("{p}_v"));
        let q3 = w
            .b
            .bind(format!("{p}_q3"), format!("R.reshape({q}, {})", shape(&[n.into(), h.to_string(), hd.to_string()])));
        let k3 = w.b.bind(
            format!("{p}_k3"),
            format!("R.reshape({k}, {})", shape(&[n.into(), kvh.to_string(), hd.to_string()])),
        );
        let v3 = w.b.bind(
            format!("{p}_v3"),
            format!("R.reshape({v}, {})", shape(&[n.into(), kvh.to_string(), hd.to_string()])),
        );
        let qr = w.rope(&q3, h, &cos, &sin, &format!("{p}_q_rope"));
        let kr = w.rope(&k3, kvh, &cos, &sin, &format!("{p}_k_rope"));
        kc = w.b.bind(
            format!("{p}_kc"),
            format!(
                "R.call_tir_inplace(cls.k_write, ({kc}, {kr}), inplace_indices=[0], out_sinfo={}, tir_vars=R.shape([{i}, {past}]))",
                k_cache_type(m)
            ),
        );
        vc = w.b.bind(
            format!("{p}_vc"),
            format!(
                "R.call_tir_inplace(cls.v_write, ({vc}, {v3}), inplace_indices=[0], out_sinfo={}, tir_vars=R.shape([{i}, {past}]))",
                v_cache_type(m)
            ),
        );
        let att = w.b.bind(
            format!("{p}_att"),
            format!(
                "R.call_tir(cls.attention, ({qr}, {kc}, {vc}), out_sinfo={}, tir_vars=R.shape([{i}, {past}]))",
                tensor(&[n.into(), h.to_string(), hd.to_string()], "float32")
            ),
        );
        let att2 =
            w.b.bind(format!("{p}_att2"), format!("R.reshape({att}, {})", shape(&[n.into(), (h * hd).to_string()])));
        let o = w.linear(&att2, &l.wo, &format!("{p}_o"));
        let xa = w.b.bind(format!("{p}_x_att"), format!("R.add({x}, {o})"));
        let hn2 = w.rms_norm(&xa, &l.ffn_norm, &format!("{p}_ffn_in"));
        let gate = w.linear(&hn2, &l.gate, &format!("{p}_gate"));
        let up = w.linear(&hn2, &l.up, &format!("{p}_up"));
        let act = w.b.bind(format!("{p}_silu"), format!("R.nn.silu({gate})"));
        let glu = w.b.bind(format!("{p}_glu"), format!("R.multiply({act}, {up})"));
        let down = w.linear(&glu, &l.down, &format!("{p}_down"));
        x = w.b.bind(format!("{p}_out"), format!("R.add({xa}, {down})"));
    }

    // The last position only.
    let last = if n == "1" {
        x
    } else {
        w.b.bind(
            "last",
            format!(
                "R.strided_slice({x}, (R.prim_value(0),), (R.prim_value({n} - 1),), (R.prim_value({n}),), assume_inbound=True)"
            ),
        )
    };
    let hf = w.rms_norm(&last, &m.output_norm, "final");
    let logits = w.linear(&hf, &m.output, "logits");
    let next = w.b.bind("next_i", format!("R.argmax({logits}, axis=-1, keepdims=False)"));
    let next = w.b.bind("next_token", format!("R.astype({next}, dtype=\"int32\")"));
    let len = w.b.bind("cache_len_out", format!("R.shape([{end}])"));
    let result = w.b.bind("result", format!("({next}, {logits}, {kc}, {vc}, {len})"));

    // Signature.
    let mut params =
        vec![format!("tokens: {}", tensor(&[if n == "1" { "1".into() } else { format!("\"{n}\"") }], "int32"))];
    for wt in m.weights() {
        params.push(format!("{}: {}", wt.param(), param_type(wt)));
    }
    let mut sym = Vec::new();
    let mut bounds = Vec::new();
    if n != "1" {
        sym.push("seq_len");
        bounds.push(format!("\"seq_len\": {}", m.n_ctx));
    }
    if past != "0" {
        params.push(format!("k_cache: {}", k_cache_type(m)));
        params.push(format!("v_cache: {}", v_cache_type(m)));
        params.push("cache_len: R.Shape([\"past_len\"])".to_string());
        sym.push("past_len");
        bounds.push(format!("\"past_len\": {}", m.n_ctx - 1));
    }
    let bound = bounds.join(", ");
    let end_sig = if past == "0" { format!("\"{n}\"") } else { format!("\"{past} + {n}\"") };
    let ret = format!(
        "R.Tuple({}, {}, {}, {}, R.Shape([{end_sig}]))",
        tensor(&["1".into()], "int32"),
        tensor(&dims(&[1, m.n_vocab]), "float32"),
        k_cache_type(m),
        v_cache_type(m)
    );
    let mut out = String::new();
    out.push_str("    @R.function\n");
    out.push_str(&format!("    def {}({}) -> {ret}:\n", step.name, params.join(", ")));
    for s in sym {
        out.push_str(&format!("        {s} = T.int64()\n"));
    }
    out.push_str(&format!("        R.func_attr({{\"tir_var_upper_bound\": {{{bound}}}}})\n"));
    out.push_str("        cls = Module\n");
    out.push_str("        with R.dataflow():\n");
    out.push_str(&w.b.render(12));
    out.push_str(&format!("            R.output({result})\n"));
    out.push_str(&format!("        return {result}\n"));
    out
}

/// The type of the parameter holding `w`.
pub fn param_type(w: &Weight) -> String {
    match w.ty {
        WeightType::F32 => tensor(&dims(&w.dims), "float32"),
        WeightType::F16 => tensor(&dims(&w.dims), "float16"),
        WeightType::BF16 => tensor(&dims(&w.dims), "bfloat16"),
        ty => {
            let k = *w.dims.last().expect("a quantized weight is a matrix");
            tensor(&dims(&[w.dims[0], ty.row_bytes(k)]), "uint8")
        }
    }
}

/// `prefill`, `decode` and `extend`, and the decode kernels they call (name → text).
pub fn functions(m: &ModelSpec) -> (Vec<String>, BTreeMap<String, String>) {
    let mut kernels = BTreeMap::new();
    let funcs = [PREFILL, DECODE, EXTEND].iter().map(|s| function(m, s, &mut kernels)).collect();
    (funcs, kernels)
}
