//! Small specs for tests and examples: any size, any weight type, either architecture.

use crate::spec::{Arch, CacheType, LayerWeights, ModelSpec, Rope, RopeStyle, Weight, WeightType};

/// The sizes of a model to make with [`spec`].
#[derive(Clone, Debug)]
pub struct Sizes {
    /// Architecture.
    pub arch: Arch,
    /// Layers.
    pub layers: usize,
    /// Hidden size.
    pub n_embd: usize,
    /// Query heads.
    pub n_head: usize,
    /// Key/value heads.
    pub n_head_kv: usize,
    /// MLP size.
    pub n_ff: usize,
    /// Vocabulary.
    pub n_vocab: usize,
    /// Context.
    pub n_ctx: usize,
}

/// A spec with the tensor names of a GGUF file: the matrices of type `ty`, the vectors
/// float32, output head separate (or tied).
pub fn spec(s: &Sizes, ty: WeightType, tied: bool) -> ModelSpec {
    let hd = s.n_embd / s.n_head;
    let w = |name: String, ty: WeightType, dims: Vec<usize>| Weight { name, ty, dims };
    let layers = (0..s.layers)
        .map(|i| {
            let p = |t: &str| format!("blk.{i}.{t}");
            let bias = |t: &str, n: usize| (s.arch == Arch::Qwen2).then(|| w(p(t), WeightType::F32, vec![n]));
            LayerWeights {
                attn_norm: w(p("attn_norm.weight"), WeightType::F32, vec![s.n_embd]),
                wq: w(p("attn_q.weight"), ty, vec![s.n_head * hd, s.n_embd]),
                wk: w(p("attn_k.weight"), ty, vec![s.n_head_kv * hd, s.n_embd]),
                wv: w(p("attn_v.weight"), ty, vec![s.n_head_kv * hd, s.n_embd]),
                bq: bias("attn_q.bias", s.n_head * hd),
                bk: bias("attn_k.bias", s.n_head_kv * hd),
                bv: bias("attn_v.bias", s.n_head_kv * hd),
                wo: w(p("attn_output.weight"), ty, vec![s.n_embd, s.n_head * hd]),
                ffn_norm: w(p("ffn_norm.weight"), WeightType::F32, vec![s.n_embd]),
                gate: w(p("ffn_gate.weight"), ty, vec![s.n_ff, s.n_embd]),
                up: w(p("ffn_up.weight"), ty, vec![s.n_ff, s.n_embd]),
                down: w(p("ffn_down.weight"), ty, vec![s.n_embd, s.n_ff]),
            }
        })
        .collect();
    let token_embd = w("token_embd.weight".into(), ty, vec![s.n_vocab, s.n_embd]);
    let output = if tied { token_embd.clone() } else { w("output.weight".into(), ty, vec![s.n_vocab, s.n_embd]) };
    ModelSpec {
        arch: s.arch,
        n_embd: s.n_embd,
        n_head: s.n_head,
        n_head_kv: s.n_head_kv,
        head_dim: hd,
        n_ff: s.n_ff,
        n_vocab: s.n_vocab,
        n_ctx: s.n_ctx,
        cache_type: CacheType::default(),
        rms_eps: 1e-5,
        rope: Rope {
            style: if s.arch == Arch::Qwen2 { RopeStyle::Halves } else { RopeStyle::Interleaved },
            dims: hd,
            base: 10000.0,
            freq_scale: 1.0,
            freq_factors: None,
        },
        token_embd,
        layers,
        output_norm: w("output_norm.weight".into(), WeightType::F32, vec![s.n_embd]),
        output,
    }
}
