//! The generated model's tensors (names, `ne` shapes, order, types), metadata and random
//! data.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use super::mixture::assign_types;
use super::rng::Rng;
use super::vocab::vocab_metadata;
use super::{ModelConfig, RopeScaling};
use crate::error::Result;
use crate::quant::quantize_into;
use crate::value::Value;
use crate::writer::{GgufWriter, TensorSpec, write_to_path};

/// `general.quantization_version`: the version of ggml's quantized block formats
/// (`GGML_QNT_VERSION`).
pub const QUANTIZATION_VERSION: u32 = 2;

/// llama.cpp's order of tensors in a quantized file (`weight_name_comparer`): tensors
/// outside the blocks first, then block by block, by name within each.
fn order_key(name: &str) -> (i64, &str) {
    let layer =
        name.strip_prefix("blk.").and_then(|r| r.split('.').next()).and_then(|n| n.parse::<i64>().ok()).unwrap_or(-1);
    (layer, name)
}

/// The tensors of `config`'s model in file order, with their ggml dims and types:
/// `token_embd.weight` `[n_embd, n_vocab]`, `output_norm.weight` `[n_embd]`,
/// `output.weight` `[n_embd, n_vocab]` (unless tied), `rope_freqs.weight` `[head_dim/2]`
/// (llama3 scaling), and per block `attn_norm` `[n_embd]`, `attn_q` `[n_embd, n_head·hd]`,
/// `attn_k` / `attn_v` `[n_embd, n_head_kv·hd]`, `attn_output` `[n_head·hd, n_embd]`,
/// optional `attn_{q,k,v}.bias`, `ffn_norm` `[n_embd]`, `ffn_gate` / `ffn_up`
/// `[n_embd, n_ff]`, `ffn_down` `[n_ff, n_embd]`.
pub fn plan(config: &ModelConfig) -> Result<Vec<TensorSpec>> {
    config.validate()?;
    let c = config;
    let (e, v, ff) = (u64::from(c.n_embd), u64::from(c.n_vocab), u64::from(c.n_ff));
    let hd = u64::from(c.head_dim());
    let (q, kv) = (u64::from(c.n_head) * hd, u64::from(c.n_head_kv) * hd);
    let mut list: Vec<(String, Vec<u64>)> =
        vec![("token_embd.weight".into(), vec![e, v]), ("output_norm.weight".into(), vec![e])];
    if !c.tie_embeddings {
        list.push(("output.weight".into(), vec![e, v]));
    }
    if matches!(c.rope_scaling, Some(RopeScaling::Llama3 { .. })) {
        list.push(("rope_freqs.weight".into(), vec![hd / 2]));
    }
    for i in 0..c.n_layers {
        let mut t = |name: &str, dims: Vec<u64>| list.push((format!("blk.{i}.{name}"), dims));
        t("attn_norm.weight", vec![e]);
        t("attn_q.weight", vec![e, q]);
        t("attn_k.weight", vec![e, kv]);
        t("attn_v.weight", vec![e, kv]);
        t("attn_output.weight", vec![q, e]);
        if c.qkv_bias {
            t("attn_q.bias", vec![q]);
            t("attn_k.bias", vec![kv]);
            t("attn_v.bias", vec![kv]);
        }
        t("ffn_norm.weight", vec![e]);
        t("ffn_gate.weight", vec![e, ff]);
        t("ffn_up.weight", vec![e, ff]);
        t("ffn_down.weight", vec![ff, e]);
    }
    list.sort_by(|a, b| order_key(&a.0).cmp(&order_key(&b.0)));
    let types = assign_types(c.file_type, &list)?;
    Ok(list.into_iter().zip(types).map(|((name, dims), ggml_type)| TensorSpec { name, dims, ggml_type }).collect())
}

/// A [`GgufWriter`] holding `config`'s metadata and declaring its tensors (without data).
pub fn writer(config: &ModelConfig) -> Result<GgufWriter> {
    let specs = plan(config)?;
    let c = config;
    let a = c.architecture.name();
    let mut w = GgufWriter::new();
    let mut md: Vec<(String, Value)> = vec![
        ("general.architecture".into(), a.into()),
        ("general.type".into(), "model".into()),
        ("general.name".into(), c.name.as_str().into()),
        (format!("{a}.block_count"), c.n_layers.into()),
        (format!("{a}.context_length"), c.n_ctx.into()),
        (format!("{a}.embedding_length"), c.n_embd.into()),
        (format!("{a}.feed_forward_length"), c.n_ff.into()),
        (format!("{a}.attention.head_count"), c.n_head.into()),
        (format!("{a}.attention.head_count_kv"), c.n_head_kv.into()),
        (format!("{a}.rope.freq_base"), c.rope_theta.into()),
        (format!("{a}.attention.layer_norm_rms_epsilon"), c.rms_eps.into()),
        ("general.file_type".into(), c.file_type.id().into()),
        (format!("{a}.vocab_size"), c.n_vocab.into()),
        (format!("{a}.rope.dimension_count"), c.head_dim().into()),
    ];
    if let Some(RopeScaling::Linear { factor }) = c.rope_scaling {
        md.push((format!("{a}.rope.scaling.type"), "linear".into()));
        md.push((format!("{a}.rope.scaling.factor"), factor.into()));
    }
    md.push(("general.quantization_version".into(), QUANTIZATION_VERSION.into()));
    md.extend(vocab_metadata(c.vocab, a, c.n_vocab)?);
    for (k, v) in md {
        w.add(k, v)?;
    }
    for s in specs {
        w.declare_tensor(s.name, &s.dims, s.ggml_type)?;
    }
    Ok(w)
}

/// Llama 3's RoPE factors as llama.cpp's converter computes them (`generate_extra_tensors`).
fn llama3_rope_factors(config: &ModelConfig) -> Vec<f32> {
    let Some(RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_context }) = config.rope_scaling
    else {
        return Vec::new();
    };
    let (factor, low, high) = (f64::from(factor), f64::from(low_freq_factor), f64::from(high_freq_factor));
    let old = f64::from(original_context);
    let dim = config.head_dim();
    let (low_wavelen, high_wavelen) = (old / low, old / high);
    (0..dim / 2)
        .map(|i| {
            let freq = 1.0 / f64::from(config.rope_theta).powf(f64::from(2 * i) / f64::from(dim));
            let wavelen = 2.0 * std::f64::consts::PI / freq;
            let f = if wavelen < high_wavelen {
                1.0
            } else if wavelen > low_wavelen {
                factor
            } else {
                let smooth = (old / wavelen - low) / (high - low);
                1.0 / ((1.0 - smooth) / factor + smooth)
            };
            f as f32
        })
        .collect()
}

/// The bytes of tensor `spec` of `config`'s model: normal values of standard deviation
/// 0.02 (mean 1 for norm weights), one random stream per row, quantized row by row with
/// ggml's reference quantizers. Rows are generated in parallel; the bytes do not depend on
/// the thread count.
pub fn tensor_data(config: &ModelConfig, spec: &TensorSpec) -> Result<Vec<u8>> {
    let ty = spec.ggml_type;
    if spec.name == "rope_freqs.weight" {
        return crate::quant::quantize(ty, &llama3_rope_factors(config));
    }
    let row = spec.dims.first().copied().unwrap_or(1) as usize;
    let rows = spec.n_elements() as usize / row.max(1);
    let row_bytes = ty.bytes_for(row as u64).unwrap_or(0) as usize;
    let mut out = vec![0u8; rows * row_bytes];
    if row_bytes == 0 {
        return Ok(out);
    }
    let mean = if spec.name.ends_with("norm.weight") { 1.0 } else { 0.0 };
    out.par_chunks_mut(row_bytes).enumerate().try_for_each(|(r, chunk)| {
        let mut rng = Rng::for_row(config.seed, &spec.name, r as u64);
        let values: Vec<f32> = (0..row).map(|_| mean + 0.02 * rng.normal()).collect();
        quantize_into(ty, &values, chunk)
    })?;
    Ok(out)
}

/// Writes `config`'s model to `out`, one tensor at a time.
pub fn write_model(config: &ModelConfig, out: impl Write) -> Result<()> {
    writer(config)?.write_with(out, |spec| tensor_data(config, spec))
}

/// Writes `config`'s model to the file `path` (through a temporary file renamed into
/// place).
pub fn write_model_file(config: &ModelConfig, path: impl AsRef<Path>) -> Result<()> {
    let w = writer(config)?;
    write_to_path(path.as_ref(), |f| w.write_with(f, |spec| tensor_data(config, spec)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GgmlType;

    #[test]
    fn llama_cpp_order_and_shapes() {
        let c = ModelConfig { n_layers: 11, ..ModelConfig::tiny() };
        let specs = plan(&c).unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(&names[..3], ["output.weight", "output_norm.weight", "token_embd.weight"]);
        assert_eq!(names[3], "blk.0.attn_k.weight");
        assert_eq!(names[names.len() - 1], "blk.10.ffn_up.weight");
        let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(pos("blk.9.ffn_up.weight") < pos("blk.10.attn_k.weight"));
        let q = &specs[pos("blk.0.attn_q.weight")];
        assert_eq!((q.dims.clone(), q.ggml_type), (vec![256, 256], GgmlType::Q4_K));
        assert_eq!(specs[pos("blk.0.attn_k.weight")].dims, [256, 128]);
        assert_eq!(specs[pos("blk.0.attn_output.weight")].dims, [256, 256]);
        assert_eq!(specs[pos("blk.0.ffn_down.weight")].dims, [512, 256]);
        assert_eq!(specs[pos("blk.0.ffn_down.weight")].ggml_type, GgmlType::Q6_K);
        assert_eq!(specs[pos("token_embd.weight")].dims, [256, 512]);
    }

    #[test]
    fn llama3_factors_match_the_converter() {
        let c = ModelConfig {
            n_embd: 4096,
            n_head: 32,
            rope_theta: 500000.0,
            rope_scaling: Some(RopeScaling::Llama3 {
                factor: 8.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_context: 8192,
            }),
            ..ModelConfig::tiny()
        };
        let f = llama3_rope_factors(&c);
        assert_eq!(f.len(), 64);
        assert_eq!(f[0], 1.0);
        assert_eq!(f[63], 8.0);
        assert!(f.windows(2).all(|w| w[0] <= w[1]));
    }
}
