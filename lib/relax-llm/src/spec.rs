//! What a model is: its architecture, sizes and weight tensors ([`ModelSpec`]).
//!
//! The spec is everything the emitter needs and nothing about where the numbers come
//! from: `crate::gguf` fills it from a GGUF file's metadata and tensor table, tests
//! build it by hand.

use std::fmt;

/// The architectures the emitter writes. They differ only in small ways: Qwen2 adds
/// biases to the query, key and value projections and rotates the two halves of a head
/// (NeoX style) where Llama rotates adjacent pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Llama 1/2/3, TinyLlama, Mistral and the other `general.architecture = llama` models.
    Llama,
    /// Qwen2 and Qwen2.5.
    Qwen2,
}

impl Arch {
    /// The name in `general.architecture`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
        }
    }
    /// The architectures, for error messages.
    pub const ALL: [Arch; 2] = [Arch::Llama, Arch::Qwen2];
}

/// How a head's dims are paired for the rotation (ggml's rope modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeStyle {
    /// Dims `2i` and `2i + 1` (ggml's `LLAMA_ROPE_TYPE_NORM`, Llama's GGUF layout).
    Interleaved,
    /// Dims `i` and `i + n_rot / 2` (`LLAMA_ROPE_TYPE_NEOX`, Qwen2).
    Halves,
}

/// Rotary position embedding: dims `i` of the rotated part turn by
/// `pos * freq_scale * base^(-2i / dims) / factor_i`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rope {
    /// How dims are paired.
    pub style: RopeStyle,
    /// How many dims of a head rotate (the first ones); the rest pass through.
    pub dims: usize,
    /// The frequency base (`rope.freq_base`, 10000 unless the file says otherwise).
    pub base: f64,
    /// Linear position scaling (`1 / rope.scaling.factor` for `linear` scaling, else 1).
    pub freq_scale: f64,
    /// One divisor per rotated pair (Llama 3's `rope_freqs.weight`, `[dims / 2]`),
    /// when the model has them.
    pub freq_factors: Option<Weight>,
}

/// The storage type of a weight tensor (a subset of ggml's types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WeightType {
    /// 32-bit floats.
    F32,
    /// IEEE half floats.
    F16,
    /// bfloat16.
    BF16,
    /// Blocks of 32: an f16 scale and 32 signed bytes.
    Q8_0,
    /// Blocks of 32: an f16 scale and 32 4-bit values, offset by 8.
    Q4_0,
    /// Super-blocks of 256: f16 scale and min, 8 sub-blocks with 6-bit scales and mins,
    /// 4-bit values.
    Q4K,
    /// Super-blocks of 256: an f16 scale, 16 signed 8-bit sub-block scales, 6-bit values.
    Q6K,
}

impl WeightType {
    /// ggml's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            WeightType::F32 => "F32",
            WeightType::F16 => "F16",
            WeightType::BF16 => "BF16",
            WeightType::Q8_0 => "Q8_0",
            WeightType::Q4_0 => "Q4_0",
            WeightType::Q4K => "Q4_K",
            WeightType::Q6K => "Q6_K",
        }
    }
    /// Elements per block (1 for the float types).
    pub fn block_elems(self) -> usize {
        match self {
            WeightType::F32 | WeightType::F16 | WeightType::BF16 => 1,
            WeightType::Q8_0 | WeightType::Q4_0 => 32,
            WeightType::Q4K | WeightType::Q6K => 256,
        }
    }
    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            WeightType::F32 => 4,
            WeightType::F16 | WeightType::BF16 => 2,
            WeightType::Q8_0 => 34,
            WeightType::Q4_0 => 18,
            WeightType::Q4K => 144,
            WeightType::Q6K => 210,
        }
    }
    /// True for the block-quantized types (stored as bytes and decoded by a kernel).
    pub fn is_quantized(self) -> bool {
        self.block_elems() > 1
    }
    /// The bytes of a row of `k` elements (`k` a multiple of the block size).
    pub fn row_bytes(self, k: usize) -> usize {
        k / self.block_elems() * self.block_bytes()
    }
}

impl fmt::Display for WeightType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A weight tensor: its name in the file, type and dims (row-major, outermost first:
/// a projection from `k` to `n` features is `[n, k]`, each row one output's weights).
#[derive(Clone, Debug, PartialEq)]
pub struct Weight {
    /// The name in the file (`blk.0.attn_q.weight`).
    pub name: String,
    /// The storage type.
    pub ty: WeightType,
    /// Dims, outermost first.
    pub dims: Vec<usize>,
}

impl Weight {
    /// The Relax parameter name ([`crate::param_name`]).
    pub fn param(&self) -> String {
        crate::param_name(&self.name)
    }
}

/// The weights of one transformer layer.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerWeights {
    /// RMSNorm before attention, `[n_embd]`.
    pub attn_norm: Weight,
    /// Query projection, `[n_head * head_dim, n_embd]`.
    pub wq: Weight,
    /// Key projection, `[n_head_kv * head_dim, n_embd]`.
    pub wk: Weight,
    /// Value projection, `[n_head_kv * head_dim, n_embd]`.
    pub wv: Weight,
    /// Query, key and value biases (Qwen2).
    pub bq: Option<Weight>,
    /// Key bias.
    pub bk: Option<Weight>,
    /// Value bias.
    pub bv: Option<Weight>,
    /// Attention output projection, `[n_embd, n_head * head_dim]`.
    pub wo: Weight,
    /// RMSNorm before the MLP, `[n_embd]`.
    pub ffn_norm: Weight,
    /// SwiGLU gate, `[n_ff, n_embd]`.
    pub gate: Weight,
    /// SwiGLU up projection, `[n_ff, n_embd]`.
    pub up: Weight,
    /// MLP down projection, `[n_embd, n_ff]`.
    pub down: Weight,
}

/// The element type of the KV cache (llama.cpp's `--cache-type-k` / `--cache-type-v`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheType {
    /// Half precision, as llama.cpp keeps it by default: half the memory and half the
    /// bytes attention reads; keys and values are rounded to float16 when written.
    #[default]
    F16,
    /// Single precision: the values as computed.
    F32,
}

impl CacheType {
    /// Every type, by name.
    pub const ALL: [(&'static str, CacheType); 2] = [("f16", CacheType::F16), ("f32", CacheType::F32)];

    /// The type named `s` (`f16`, `f32`).
    pub fn parse(s: &str) -> Result<CacheType, String> {
        if let Some(&(_, t)) = Self::ALL.iter().find(|(n, _)| *n == s) {
            return Ok(t);
        }
        let hint = match relax_ir::diag::suggest(s, Self::ALL.iter().map(|(n, _)| *n)) {
            Some(h) => format!("; did you mean `{h}`?"),
            None => String::new(),
        };
        Err(format!("unknown KV cache type `{s}` (expected f16 or f32){hint}"))
    }

    /// The TVMScript dtype.
    pub fn dtype(self) -> &'static str {
        match self {
            CacheType::F16 => "float16",
            CacheType::F32 => "float32",
        }
    }
}

/// A decoder-only transformer of the Llama family.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    /// The architecture.
    pub arch: Arch,
    /// Hidden size.
    pub n_embd: usize,
    /// Query heads.
    pub n_head: usize,
    /// Key/value heads (grouped-query attention when fewer than `n_head`).
    pub n_head_kv: usize,
    /// Dims per head.
    pub head_dim: usize,
    /// MLP inner size.
    pub n_ff: usize,
    /// Vocabulary size.
    pub n_vocab: usize,
    /// Positions the KV cache holds: the longest prompt plus generated tokens.
    pub n_ctx: usize,
    /// The KV cache's element type.
    pub cache_type: CacheType,
    /// RMSNorm epsilon.
    pub rms_eps: f64,
    /// Rotary embedding.
    pub rope: Rope,
    /// Token embedding, `[n_vocab, n_embd]`.
    pub token_embd: Weight,
    /// The layers.
    pub layers: Vec<LayerWeights>,
    /// The final RMSNorm, `[n_embd]`.
    pub output_norm: Weight,
    /// The LM head, `[n_vocab, n_embd]`; the token embedding when it is tied.
    pub output: Weight,
}

impl ModelSpec {
    /// Query heads per key/value head.
    pub fn group(&self) -> usize {
        self.n_head / self.n_head_kv
    }
    /// Every weight, each once, in the order of the file's usual layout.
    pub fn weights(&self) -> Vec<&Weight> {
        let mut out = vec![&self.token_embd];
        out.extend(self.rope.freq_factors.as_ref());
        for l in &self.layers {
            out.push(&l.attn_norm);
            out.push(&l.wq);
            out.extend(l.bq.as_ref());
            out.push(&l.wk);
            out.extend(l.bk.as_ref());
            out.push(&l.wv);
            out.extend(l.bv.as_ref());
            out.push(&l.wo);
            out.push(&l.ffn_norm);
            out.push(&l.gate);
            out.push(&l.up);
            out.push(&l.down);
        }
        out.push(&self.output_norm);
        if self.output.name != self.token_embd.name {
            out.push(&self.output);
        }
        out
    }
    /// Checks that the sizes agree with each other and with the weights' dims; the
    /// message names the tensor or size at fault.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("n_embd", self.n_embd),
            ("n_head", self.n_head),
            ("n_head_kv", self.n_head_kv),
            ("head_dim", self.head_dim),
            ("n_ff", self.n_ff),
            ("n_vocab", self.n_vocab),
            ("n_ctx", self.n_ctx),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(format!("{name} is 0"));
            }
        }
        if self.layers.is_empty() {
            return Err("the model has no layers".to_string());
        }
        if self.n_head % self.n_head_kv != 0 {
            return Err(format!(
                "{} query heads cannot be shared evenly by {} key/value heads",
                self.n_head, self.n_head_kv
            ));
        }
        if self.rope.dims == 0 || self.rope.dims > self.head_dim || self.rope.dims % 2 != 0 {
            return Err(format!(
                "the rotary dims ({}) must be even and at most the head dim ({})",
                self.rope.dims, self.head_dim
            ));
        }
        let (e, q, kv) = (self.n_embd, self.n_head * self.head_dim, self.n_head_kv * self.head_dim);
        let expect = |w: &Weight, dims: &[usize]| -> Result<(), String> {
            if w.dims != dims {
                return Err(format!("tensor `{}` has shape {:?}; the model's sizes need {:?}", w.name, w.dims, dims));
            }
            if w.ty.is_quantized() {
                let k = *dims.last().unwrap_or(&0);
                if dims.len() != 2 || k % w.ty.block_elems() != 0 {
                    return Err(format!(
                        "tensor `{}` of type {} needs rows of a multiple of {} elements, not {:?}",
                        w.name,
                        w.ty,
                        w.ty.block_elems(),
                        dims
                    ));
                }
            }
            Ok(())
        };
        let vector = |w: &Weight, n: usize| -> Result<(), String> {
            expect(w, &[n])?;
            if w.ty.is_quantized() {
                return Err(format!("tensor `{}` is a vector of type {}: expected a float type", w.name, w.ty));
            }
            Ok(())
        };
        expect(&self.token_embd, &[self.n_vocab, e])?;
        for l in &self.layers {
            vector(&l.attn_norm, e)?;
            expect(&l.wq, &[q, e])?;
            expect(&l.wk, &[kv, e])?;
            expect(&l.wv, &[kv, e])?;
            for (b, n) in [(&l.bq, q), (&l.bk, kv), (&l.bv, kv)] {
                if let Some(b) = b {
                    vector(b, n)?;
                }
            }
            expect(&l.wo, &[e, q])?;
            vector(&l.ffn_norm, e)?;
            expect(&l.gate, &[self.n_ff, e])?;
            expect(&l.up, &[self.n_ff, e])?;
            expect(&l.down, &[e, self.n_ff])?;
        }
        if let Some(f) = &self.rope.freq_factors {
            vector(f, self.rope.dims / 2)?;
        }
        vector(&self.output_norm, e)?;
        expect(&self.output, &[self.n_vocab, e])?;
        let mut seen = std::collections::HashMap::new();
        for w in self.weights() {
            if let Some(other) = seen.insert(w.param(), &w.name)
                && other != &w.name
            {
                return Err(format!("tensors `{other}` and `{}` would both be parameter `{}`", w.name, w.param()));
            }
        }
        Ok(())
    }
}
