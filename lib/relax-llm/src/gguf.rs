//! The [`ModelSpec`] of a GGUF file: its metadata (`general.architecture` and the
//! architecture's keys, with llama.cpp's defaults) and its tensor table.
//!
//! Every problem is an error that names the key or tensor: an unknown architecture
//! (with the nearest known one), a missing key or tensor, a tensor type relax does not
//! read, a shape that disagrees with the metadata, an unsupported RoPE scaling.

use relax_gguf::{GgmlType, GgufFile, Metadata, TensorInfo};

use crate::spec::{Arch, CacheType, LayerWeights, ModelSpec, Rope, RopeStyle, Weight, WeightType};

/// The default context when the file allows more: the KV cache is sized for this many
/// positions unless the caller asks for another number (llama.cpp's default).
pub const DEFAULT_CONTEXT: usize = 4096;

/// The spec of the model in `file`, with a KV cache of `n_ctx` positions (at most the
/// model's trained context; `None`: that context, capped at [`DEFAULT_CONTEXT`]).
pub fn spec_from_gguf(file: &GgufFile, n_ctx: Option<usize>) -> Result<ModelSpec, String> {
    let md = file.metadata();
    let arch_name = md.get_str("general.architecture").map_err(|e| e.to_string())?;
    let arch = Arch::ALL.into_iter().find(|a| a.name() == arch_name).ok_or_else(|| {
        let known: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
        let hint = relax_ir::diag::suggest(arch_name, known.iter().copied())
            .map_or(String::new(), |s| format!("; did you mean `{s}`?"));
        format!(
            "metadata key `general.architecture` is `{arch_name}`, an architecture relax does not import (it imports {}){hint}",
            known.join(", ")
        )
    })?;
    let a = arch.name();
    let key = |k: &str| format!("{a}.{k}");
    let err = |e: relax_gguf::GgufError| e.to_string();
    let n_layer = md.get_usize(&key("block_count")).map_err(err)?;
    let n_embd = md.get_usize(&key("embedding_length")).map_err(err)?;
    let n_ff = md.get_usize(&key("feed_forward_length")).map_err(err)?;
    let n_head = md.get_usize(&key("attention.head_count")).map_err(err)?;
    let n_head_kv = md.get_usize_opt(&key("attention.head_count_kv")).map_err(err)?.unwrap_or(n_head);
    let trained_ctx = md.get_usize(&key("context_length")).map_err(err)?;
    let rms_eps = f64::from(md.get_f32(&key("attention.layer_norm_rms_epsilon")).map_err(err)?);
    if n_head == 0 {
        return Err(format!("metadata key `{}` is 0", key("attention.head_count")));
    }
    let head_dim = md.get_usize_opt(&key("attention.key_length")).map_err(err)?.unwrap_or(n_embd / n_head);
    if let Some(v) = md.get_usize_opt(&key("attention.value_length")).map_err(err)?
        && v != head_dim
    {
        return Err(format!(
            "metadata keys `{}` ({head_dim}) and `{}` ({v}) differ: relax imports models whose keys and values have one head size",
            key("attention.key_length"),
            key("attention.value_length")
        ));
    }
    let rope = rope(md, arch, &key, head_dim, file)?;
    let n_ctx = match n_ctx {
        Some(0) => return Err("a context of 0 positions".to_string()),
        Some(n) if n > trained_ctx => {
            return Err(format!(
                "a context of {n} positions is longer than the model's ({} = {trained_ctx})",
                key("context_length")
            ));
        }
        Some(n) => n,
        None => trained_ctx.min(DEFAULT_CONTEXT),
    };

    let tensor = |name: &str| -> Result<Weight, String> {
        let info = file.tensor(name).map_err(err)?;
        weight(info)
    };
    let optional = |name: &str| -> Result<Option<Weight>, String> {
        match file.get_tensor(name) {
            Some(info) => weight(info).map(Some),
            None => Ok(None),
        }
    };
    let token_embd = tensor("token_embd.weight")?;
    let n_vocab = token_embd.dims.first().copied().unwrap_or(0);
    let mut layers = Vec::with_capacity(n_layer);
    for i in 0..n_layer {
        let t = |s: &str| tensor(&format!("blk.{i}.{s}"));
        let o = |s: &str| optional(&format!("blk.{i}.{s}"));
        layers.push(LayerWeights {
            attn_norm: t("attn_norm.weight")?,
            wq: t("attn_q.weight")?,
            wk: t("attn_k.weight")?,
            wv: t("attn_v.weight")?,
            bq: o("attn_q.bias")?,
            bk: o("attn_k.bias")?,
            bv: o("attn_v.bias")?,
            wo: t("attn_output.weight")?,
            ffn_norm: t("ffn_norm.weight")?,
            gate: t("ffn_gate.weight")?,
            up: t("ffn_up.weight")?,
            down: t("ffn_down.weight")?,
        });
    }
    let output_norm = tensor("output_norm.weight")?;
    let output = optional("output.weight")?.unwrap_or_else(|| token_embd.clone());
    let spec = ModelSpec {
        arch,
        n_embd,
        n_head,
        n_head_kv,
        head_dim,
        n_ff,
        n_vocab,
        n_ctx,
        cache_type: CacheType::default(),
        rms_eps,
        rope,
        token_embd,
        layers,
        output_norm,
        output,
    };
    spec.validate()?;
    Ok(spec)
}

/// The rotary embedding the metadata describes.
fn rope(
    md: &Metadata,
    arch: Arch,
    key: &dyn Fn(&str) -> String,
    head_dim: usize,
    file: &GgufFile,
) -> Result<Rope, String> {
    let err = |e: relax_gguf::GgufError| e.to_string();
    let dims = md.get_usize_opt(&key("rope.dimension_count")).map_err(err)?.unwrap_or(head_dim);
    let base = md.get_f32_opt(&key("rope.freq_base")).map_err(err)?.map_or(10000.0, f64::from);
    // llama.cpp's reading: the factor (or the older `rope.scale_linear`) divides the
    // positions whatever the type says, and only `yarn` and `longrope` need more.
    let scaling = md.get_str_opt(&key("rope.scaling.type")).map_err(err)?.unwrap_or("none");
    if !matches!(scaling, "none" | "linear") {
        return Err(format!(
            "metadata key `{}` is `{scaling}`: relax imports RoPE without scaling or with linear scaling",
            key("rope.scaling.type")
        ));
    }
    let factor = match md.get_f32_opt(&key("rope.scaling.factor")).map_err(err)? {
        Some(f) => f64::from(f),
        None => md.get_f32_opt(&key("rope.scale_linear")).map_err(err)?.map_or(0.0, f64::from),
    };
    if !factor.is_finite() || factor < 0.0 {
        return Err(format!("metadata key `{}` is {factor}: expected a positive factor", key("rope.scaling.factor")));
    }
    let freq_scale = if factor == 0.0 { 1.0 } else { 1.0 / factor };
    let freq_factors = match file.get_tensor("rope_freqs.weight") {
        Some(info) => Some(weight(info)?),
        None => None,
    };
    let style = match arch {
        Arch::Llama => RopeStyle::Interleaved,
        Arch::Qwen2 => RopeStyle::Halves,
    };
    Ok(Rope { style, dims, base, freq_scale, freq_factors })
}

/// The weight of a tensor info: its type must be one relax reads.
fn weight(info: &TensorInfo) -> Result<Weight, String> {
    info.check_supported().map_err(|e| e.to_string())?;
    let ty = match info.ggml_type {
        GgmlType::F32 => WeightType::F32,
        GgmlType::F16 => WeightType::F16,
        GgmlType::BF16 => WeightType::BF16,
        GgmlType::Q8_0 => WeightType::Q8_0,
        GgmlType::Q4_0 => WeightType::Q4_0,
        GgmlType::Q4_K => WeightType::Q4K,
        GgmlType::Q6_K => WeightType::Q6K,
        other => return Err(format!("tensor `{}` has type {other}, which relax does not support", info.name)),
    };
    let dims = info.shape().into_iter().map(|d| usize::try_from(d).unwrap_or(usize::MAX)).collect();
    Ok(Weight { name: info.name.clone(), ty, dims })
}
