//! The random model generator: a Llama (or Qwen2) model with random weights, llama.cpp's
//! tensor names, shapes, order and type mixture, its hyper-parameters as llama.cpp's
//! converter writes them, and a synthetic vocabulary ([`vocab`]). The same configuration
//! and seed give the same bytes.
//!
//! ```no_run
//! let config = relax_gguf::ModelConfig::tiny();
//! relax_gguf::generate::write_model_file(&config, "tiny.gguf")?;
//! # Ok::<(), relax_gguf::GgufError>(())
//! ```

mod mixture;
mod model;
mod rng;
pub mod vocab;

pub use mixture::{FileType, assign_types, use_more_bits};
pub use model::{plan, tensor_data, write_model, write_model_file, writer};
pub use vocab::VocabKind;

use crate::error::{GgufError, Result};

/// The model architecture (`general.architecture`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// `llama`: Llama 2 / 3, TinyLlama, Mistral.
    Llama,
    /// `qwen2`: Llama's structure with biases on the q, k and v projections.
    Qwen2,
}

impl Architecture {
    /// The name in `general.architecture` and in the keys' prefix.
    pub fn name(self) -> &'static str {
        match self {
            Architecture::Llama => "llama",
            Architecture::Qwen2 => "qwen2",
        }
    }
}

/// RoPE frequency scaling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RopeScaling {
    /// Positions divided by `factor`: `{arch}.rope.scaling.type = "linear"` and
    /// `{arch}.rope.scaling.factor`.
    Linear {
        /// The scaling factor.
        factor: f32,
    },
    /// Llama 3.1's per-frequency scaling: stored, as llama.cpp's converter does, as the F32
    /// tensor `rope_freqs.weight` of `head_dim / 2` factors that divide each frequency.
    Llama3 {
        /// `factor` (8 for Llama 3.1).
        factor: f32,
        /// `low_freq_factor` (1).
        low_freq_factor: f32,
        /// `high_freq_factor` (4).
        high_freq_factor: f32,
        /// `original_max_position_embeddings` (8192).
        original_context: u32,
    },
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    /// The architecture.
    pub architecture: Architecture,
    /// `general.name`.
    pub name: String,
    /// Transformer blocks (`block_count`).
    pub n_layers: u32,
    /// Hidden size (`embedding_length`).
    pub n_embd: u32,
    /// Attention heads (`attention.head_count`).
    pub n_head: u32,
    /// Key-value heads (`attention.head_count_kv`); fewer than `n_head` is grouped-query
    /// attention.
    pub n_head_kv: u32,
    /// Feed-forward size (`feed_forward_length`).
    pub n_ff: u32,
    /// Vocabulary size.
    pub n_vocab: u32,
    /// Context length (`context_length`).
    pub n_ctx: u32,
    /// RoPE base frequency (`rope.freq_base`).
    pub rope_theta: f32,
    /// RMS norm epsilon (`attention.layer_norm_rms_epsilon`).
    pub rms_eps: f32,
    /// Optional RoPE scaling.
    pub rope_scaling: Option<RopeScaling>,
    /// Whether q, k and v have biases (`blk.N.attn_{q,k,v}.bias`; Qwen2 has them).
    pub qkv_bias: bool,
    /// Whether the output projection is the token embedding (no `output.weight`).
    pub tie_embeddings: bool,
    /// The file type: which tensors get which ggml type.
    pub file_type: FileType,
    /// The vocabulary.
    pub vocab: VocabKind,
    /// The random seed.
    pub seed: u64,
}

impl ModelConfig {
    /// A test-sized Llama: 2 layers, hidden 256, 4 heads of 64 (2 key-value heads), feed-
    /// forward 512, 512 SentencePiece tokens, Q4_K_M (so every supported quantized type
    /// but Q4_0 and Q8_0 appears). A few hundred kilobytes.
    pub fn tiny() -> ModelConfig {
        ModelConfig {
            architecture: Architecture::Llama,
            name: "relax-tiny".into(),
            n_layers: 2,
            n_embd: 256,
            n_head: 4,
            n_head_kv: 2,
            n_ff: 512,
            n_vocab: 512,
            n_ctx: 256,
            rope_theta: 10000.0,
            rms_eps: 1e-5,
            rope_scaling: None,
            qkv_bias: false,
            tie_embeddings: false,
            file_type: FileType::Q4_K_M,
            vocab: VocabKind::SentencePiece,
            seed: 0,
        }
    }

    /// TinyLlama 1.1B's configuration: 22 layers, hidden 2048, 32 heads, 4 key-value heads,
    /// feed-forward 5632, 32000 SentencePiece tokens, context 2048, Q4_K_M.
    pub fn tinyllama() -> ModelConfig {
        ModelConfig {
            name: "relax-tinyllama".into(),
            n_layers: 22,
            n_embd: 2048,
            n_head: 32,
            n_head_kv: 4,
            n_ff: 5632,
            n_vocab: 32000,
            n_ctx: 2048,
            ..ModelConfig::tiny()
        }
    }

    /// A test-sized Qwen2: [`Self::tiny`] with q/k/v biases, a gpt2 vocabulary, tied
    /// embeddings and theta 1e6.
    pub fn tiny_qwen2() -> ModelConfig {
        ModelConfig {
            architecture: Architecture::Qwen2,
            name: "relax-tiny-qwen2".into(),
            rope_theta: 1_000_000.0,
            rms_eps: 1e-6,
            qkv_bias: true,
            tie_embeddings: true,
            vocab: VocabKind::Bpe,
            ..ModelConfig::tiny()
        }
    }

    /// The preset named `name`: `tiny`, `tinyllama` or `tiny-qwen2`.
    pub fn preset(name: &str) -> Option<ModelConfig> {
        match name {
            "tiny" => Some(ModelConfig::tiny()),
            "tinyllama" => Some(ModelConfig::tinyllama()),
            "tiny-qwen2" => Some(ModelConfig::tiny_qwen2()),
            _ => None,
        }
    }

    /// The presets' names.
    pub const PRESETS: [&'static str; 3] = ["tiny", "tinyllama", "tiny-qwen2"];

    /// The size of one attention head (`n_embd / n_head`).
    pub fn head_dim(&self) -> u32 {
        self.n_embd / self.n_head.max(1)
    }

    /// Checks that the sizes fit together; the error says which do not.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(GgufError::invalid(m));
        for (what, v) in [
            ("layers", self.n_layers),
            ("hidden size", self.n_embd),
            ("heads", self.n_head),
            ("key-value heads", self.n_head_kv),
            ("feed-forward size", self.n_ff),
            ("context length", self.n_ctx),
        ] {
            if v == 0 {
                return bad(format!("the number of {what} must be at least 1"));
            }
        }
        if self.n_embd % self.n_head != 0 {
            return bad(format!("the hidden size {} is not a multiple of the {} heads", self.n_embd, self.n_head));
        }
        if self.n_head % self.n_head_kv != 0 {
            return bad(format!(
                "the {} heads are not a multiple of the {} key-value heads",
                self.n_head, self.n_head_kv
            ));
        }
        if self.head_dim() % 2 != 0 {
            return bad(format!("the head size {} is odd; RoPE rotates pairs", self.head_dim()));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 0.0) {
            return bad(format!("the RoPE base {} must be positive", self.rope_theta));
        }
        if !(self.rms_eps.is_finite() && self.rms_eps > 0.0) {
            return bad(format!("the RMS norm epsilon {} must be positive", self.rms_eps));
        }
        match self.rope_scaling {
            Some(RopeScaling::Linear { factor }) if !(factor.is_finite() && factor > 0.0) => {
                bad(format!("the RoPE scaling factor {factor} must be positive"))
            }
            Some(RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_context }) => {
                if !(factor > 0.0
                    && low_freq_factor > 0.0
                    && high_freq_factor > low_freq_factor
                    && original_context > 0)
                {
                    bad("llama3 RoPE scaling needs factor > 0, 0 < low_freq_factor < high_freq_factor and an original context".into())
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        for name in ModelConfig::PRESETS {
            ModelConfig::preset(name).unwrap().validate().unwrap();
        }
        let c = ModelConfig { n_head: 3, ..ModelConfig::tiny() };
        assert_eq!(c.validate().unwrap_err().to_string(), "the hidden size 256 is not a multiple of the 3 heads");
        let c = ModelConfig { n_head_kv: 3, ..ModelConfig::tiny() };
        assert!(c.validate().is_err());
    }
}
