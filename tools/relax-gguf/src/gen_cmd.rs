//! `relax-gguf gen`: a model configuration from a preset and flags, written as a GGUF file.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use relax_gguf::generate::{Architecture, plan, write_model_file};
use relax_gguf::{FileType, ModelConfig, RopeScaling, VocabKind};

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Start from a preset: tiny (the default), tinyllama or tiny-qwen2.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Architecture: llama or qwen2 (qwen2 also turns on q/k/v biases, tied embeddings and
    /// a gpt2 vocabulary unless other flags say otherwise).
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
    /// Transformer blocks.
    #[arg(long, value_name = "N")]
    layers: Option<u32>,
    /// Hidden size.
    #[arg(long, value_name = "N")]
    hidden: Option<u32>,
    /// Attention heads.
    #[arg(long, value_name = "N")]
    heads: Option<u32>,
    /// Key-value heads (grouped-query attention when fewer than --heads).
    #[arg(long = "kv-heads", value_name = "N")]
    kv_heads: Option<u32>,
    /// Feed-forward size.
    #[arg(long, value_name = "N")]
    ffn: Option<u32>,
    /// Vocabulary size.
    #[arg(long, value_name = "N")]
    vocab: Option<u32>,
    /// Context length.
    #[arg(long, value_name = "N")]
    ctx: Option<u32>,
    /// RoPE base frequency.
    #[arg(long = "rope-theta", value_name = "F")]
    rope_theta: Option<f32>,
    /// RMS norm epsilon.
    #[arg(long = "rms-eps", value_name = "F")]
    rms_eps: Option<f32>,
    /// RoPE scaling: linear:FACTOR, or llama3:FACTOR[:LOW:HIGH:ORIGINAL_CTX] (defaults 1, 4, 8192).
    #[arg(long = "rope-scaling", value_name = "SPEC")]
    rope_scaling: Option<String>,
    /// Biases on the q, k and v projections.
    #[arg(long = "qkv-bias")]
    qkv_bias: bool,
    /// No output.weight: the output projection is token_embd.weight.
    #[arg(long = "tie-embeddings")]
    tie_embeddings: bool,
    /// Vocabulary kind: llama (SentencePiece with scores) or gpt2 (byte-level BPE with merges).
    #[arg(long, value_name = "KIND")]
    tokenizer: Option<String>,
    /// File type: f32, f16, bf16, q8_0, q4_0, q6_k or q4_k_m (llama.cpp's mixture).
    #[arg(long = "type", value_name = "TYPE")]
    file_type: Option<String>,
    /// Random seed.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// general.name.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The file to write.
    #[arg(short = 'o', value_name = "OUT", required = true)]
    output: PathBuf,
}

fn parse_rope_scaling(spec: &str) -> Result<RopeScaling, String> {
    let bad = || format!("invalid value `{spec}` for `--rope-scaling` (linear:FACTOR or llama3:FACTOR[:LOW:HIGH:CTX])");
    let (kind, rest) = spec.split_once(':').ok_or_else(bad)?;
    let nums: Vec<&str> = rest.split(':').collect();
    let f = |s: &str| s.parse::<f32>().map_err(|_| bad());
    match (kind, nums.as_slice()) {
        ("linear", [factor]) => Ok(RopeScaling::Linear { factor: f(factor)? }),
        ("llama3", [factor]) => Ok(RopeScaling::Llama3 {
            factor: f(factor)?,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_context: 8192,
        }),
        ("llama3", [factor, low, high, ctx]) => Ok(RopeScaling::Llama3 {
            factor: f(factor)?,
            low_freq_factor: f(low)?,
            high_freq_factor: f(high)?,
            original_context: ctx.parse().map_err(|_| bad())?,
        }),
        _ => Err(bad()),
    }
}

/// The configuration the flags describe.
fn config(a: &GenArgs) -> Result<ModelConfig, String> {
    let preset = a.preset.as_deref().unwrap_or("tiny");
    let mut c = ModelConfig::preset(preset)
        .ok_or_else(|| format!("unknown preset `{preset}` (presets: {})", ModelConfig::PRESETS.join(", ")))?;
    match a.arch.as_deref() {
        None => {}
        Some("llama") => c.architecture = Architecture::Llama,
        Some("qwen2") => {
            c.architecture = Architecture::Qwen2;
            c.qkv_bias = true;
            c.tie_embeddings = true;
            c.vocab = VocabKind::Bpe;
        }
        Some(other) => return Err(format!("unknown architecture `{other}` (llama, qwen2)")),
    }
    let set = |dst: &mut u32, v: Option<u32>| {
        if let Some(v) = v {
            *dst = v;
        }
    };
    set(&mut c.n_layers, a.layers);
    set(&mut c.n_embd, a.hidden);
    set(&mut c.n_head, a.heads);
    set(&mut c.n_head_kv, a.kv_heads);
    set(&mut c.n_ff, a.ffn);
    set(&mut c.n_vocab, a.vocab);
    set(&mut c.n_ctx, a.ctx);
    if a.heads.is_some() && a.kv_heads.is_none() {
        c.n_head_kv = c.n_head;
    }
    c.rope_theta = a.rope_theta.unwrap_or(c.rope_theta);
    c.rms_eps = a.rms_eps.unwrap_or(c.rms_eps);
    if let Some(spec) = &a.rope_scaling {
        c.rope_scaling = Some(parse_rope_scaling(spec)?);
    }
    c.qkv_bias |= a.qkv_bias;
    c.tie_embeddings |= a.tie_embeddings;
    match a.tokenizer.as_deref() {
        None => {}
        Some("llama") => c.vocab = VocabKind::SentencePiece,
        Some("gpt2") => c.vocab = VocabKind::Bpe,
        Some(other) => return Err(format!("unknown tokenizer `{other}` (llama, gpt2)")),
    }
    if let Some(t) = &a.file_type {
        c.file_type = FileType::from_name(t).ok_or_else(|| {
            let names: Vec<String> = FileType::ALL.iter().map(|t| t.name().to_lowercase()).collect();
            format!("unknown file type `{t}` ({})", names.join(", "))
        })?;
    }
    c.seed = a.seed.unwrap_or(c.seed);
    if let Some(n) = &a.name {
        c.name = n.clone();
    }
    Ok(c)
}

pub fn run(a: GenArgs, stdout: &mut dyn Write) -> Result<(), String> {
    let c = config(&a)?;
    let specs = plan(&c).map_err(|e| e.to_string())?;
    let bytes: u64 = specs.iter().map(|s| s.n_bytes()).sum();
    write_model_file(&c, &a.output).map_err(|e| e.to_string())?;
    let _ = writeln!(
        stdout,
        "wrote {}: {} {}, {} layers, hidden {}, {} tensors, {:.1} MiB of weights",
        a.output.display(),
        c.architecture.name(),
        c.file_type.name(),
        c.n_layers,
        c.n_embd,
        specs.len(),
        bytes as f64 / (1 << 20) as f64
    );
    Ok(())
}
