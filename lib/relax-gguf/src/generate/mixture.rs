//! Which ggml type each tensor gets: llama.cpp's file types (`llama_ftype`) and the
//! per-tensor rule of `llama_tensor_get_type` in `src/llama-quant.cpp`, for the file types
//! the generator writes and the tensors of a Llama / Qwen2 model without experts.

use crate::error::{GgufError, Result};
use crate::types::GgmlType;

/// A whole-file type, as llama.cpp's `llama_ftype` (stored as `general.file_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[expect(non_camel_case_types, reason = "the variants carry llama.cpp's names (Q4_K_M)")]
pub enum FileType {
    /// Every tensor F32 (`LLAMA_FTYPE_ALL_F32`, 0).
    F32,
    /// Matrices F16, vectors F32 (`MOSTLY_F16`, 1).
    F16,
    /// Matrices BF16, vectors F32 (`MOSTLY_BF16`, 32).
    BF16,
    /// Matrices Q8_0 (`MOSTLY_Q8_0`, 7).
    Q8_0,
    /// Matrices Q4_0, `output.weight` Q6_K (`MOSTLY_Q4_0`, 2).
    Q4_0,
    /// Matrices Q6_K (`MOSTLY_Q6_K`, 18).
    Q6_K,
    /// Matrices Q4_K; `output.weight`, and `attn_v` / `ffn_down` of some layers, Q6_K
    /// (`MOSTLY_Q4_K_M`, 15).
    Q4_K_M,
}

impl FileType {
    /// Every file type the generator writes.
    pub const ALL: [FileType; 7] = [
        FileType::F32,
        FileType::F16,
        FileType::BF16,
        FileType::Q8_0,
        FileType::Q4_0,
        FileType::Q6_K,
        FileType::Q4_K_M,
    ];

    /// llama.cpp's `llama_ftype` value.
    pub fn id(self) -> u32 {
        match self {
            FileType::F32 => 0,
            FileType::F16 => 1,
            FileType::Q4_0 => 2,
            FileType::Q8_0 => 7,
            FileType::Q4_K_M => 15,
            FileType::Q6_K => 18,
            FileType::BF16 => 32,
        }
    }

    /// The name llama-quantize uses (`Q4_K_M`).
    pub fn name(self) -> &'static str {
        match self {
            FileType::F32 => "F32",
            FileType::F16 => "F16",
            FileType::BF16 => "BF16",
            FileType::Q8_0 => "Q8_0",
            FileType::Q4_0 => "Q4_0",
            FileType::Q6_K => "Q6_K",
            FileType::Q4_K_M => "Q4_K_M",
        }
    }

    /// The file type named `name` (case-insensitive: `q4_k_m`).
    pub fn from_name(name: &str) -> Option<FileType> {
        Self::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The type most matrices get (llama-quantize's `default_type`).
    pub fn base_type(self) -> GgmlType {
        match self {
            FileType::F32 => GgmlType::F32,
            FileType::F16 => GgmlType::F16,
            FileType::BF16 => GgmlType::BF16,
            FileType::Q8_0 => GgmlType::Q8_0,
            FileType::Q4_0 => GgmlType::Q4_0,
            FileType::Q6_K => GgmlType::Q6_K,
            FileType::Q4_K_M => GgmlType::Q4_K,
        }
    }

    fn is_quantized(self) -> bool {
        self.base_type().is_quantized()
    }
}

/// llama.cpp's `use_more_bits`: the first and last eighth of the layers, and every third
/// layer in between, get more bits.
pub fn use_more_bits(i_layer: i64, n_layers: i64) -> bool {
    i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2
}

/// The ggml type of each tensor `(name, dims)`, given in llama-quantize's order (by layer,
/// then by name): vectors stay F32; matrices get `ftype`'s base type, adjusted as
/// `llama_tensor_get_type` does. An error where llama.cpp would fall back to a type relax
/// does not support, or would itself fail.
pub fn assign_types(ftype: FileType, tensors: &[(String, Vec<u64>)]) -> Result<Vec<GgmlType>> {
    let has_output = tensors.iter().any(|(n, _)| n == "output.weight");
    let n_attn_v = tensors.iter().filter(|(n, _)| n.contains("attn_v.weight")).count() as i64;
    let n_ffn_down = tensors.iter().filter(|(n, _)| n.contains("ffn_down")).count() as i64;
    let (mut i_attn_v, mut i_ffn_down) = (0i64, 0i64);
    let mut out = Vec::with_capacity(tensors.len());
    for (name, dims) in tensors {
        if dims.len() < 2 {
            out.push(GgmlType::F32);
            continue;
        }
        let base = ftype.base_type();
        if !ftype.is_quantized() {
            out.push(base);
            continue;
        }
        let ne0 = dims[0];
        let mut ty = base;
        if name == "output.weight" || (!has_output && name == "token_embd.weight") {
            if ne0 % base.block_size() as u64 != 0 {
                ty = GgmlType::Q8_0;
            } else if ty != GgmlType::Q8_0 {
                ty = GgmlType::Q6_K;
            }
        } else if name.contains("attn_v.weight") {
            if ftype == FileType::Q4_K_M && use_more_bits(i_attn_v, n_attn_v) {
                ty = GgmlType::Q6_K;
            }
            i_attn_v += 1;
        } else if name.contains("ffn_down") {
            if ftype == FileType::Q4_K_M && use_more_bits(i_ffn_down, n_ffn_down) {
                ty = GgmlType::Q6_K;
            }
            i_ffn_down += 1;
        }
        if ne0 % ty.block_size() as u64 != 0 {
            let fallback = match ty {
                GgmlType::Q6_K => GgmlType::Q8_0,
                GgmlType::Q4_K => {
                    return Err(GgufError::invalid(format!(
                        "{}: tensor `{name}` has rows of {ne0}, not a multiple of 256; llama.cpp would \
                         fall back to Q5_0, which relax does not support (use sizes that are multiples of 256)",
                        ftype.name()
                    )));
                }
                _ => {
                    return Err(GgufError::invalid(format!(
                        "{}: tensor `{name}` has rows of {ne0}, not a multiple of {}'s block size {}",
                        ftype.name(),
                        ty,
                        ty.block_size()
                    )));
                }
            };
            ty = if ne0 % fallback.block_size() as u64 == 0 { fallback } else { GgmlType::F16 };
        }
        out.push(ty);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer_tensors(n: usize, embd: u64) -> Vec<(String, Vec<u64>)> {
        let mut v = vec![
            ("output.weight".to_string(), vec![embd, 1000]),
            ("output_norm.weight".to_string(), vec![embd]),
            ("token_embd.weight".to_string(), vec![embd, 1000]),
        ];
        for i in 0..n {
            for t in ["attn_v.weight", "ffn_down.weight", "attn_q.weight", "attn_norm.weight"] {
                let dims = if t.ends_with("norm.weight") { vec![embd] } else { vec![embd, embd] };
                v.push((format!("blk.{i}.{t}"), dims));
            }
        }
        v
    }

    #[test]
    fn q4_k_m_of_22_layers() {
        // TinyLlama's 22 layers: n/8 = 2 and 7n/8 = 19, so layers 0, 1, 19, 20, 21 and
        // every third layer from 4 get Q6_K attn_v and ffn_down.
        let more: Vec<i64> = (0..22).filter(|&i| use_more_bits(i, 22)).collect();
        assert_eq!(more, [0, 1, 4, 7, 10, 13, 16, 19, 20, 21]);
        let t = layer_tensors(22, 256);
        let types = assign_types(FileType::Q4_K_M, &t).unwrap();
        let of = |name: &str| types[t.iter().position(|(n, _)| n == name).unwrap()];
        assert_eq!(of("output.weight"), GgmlType::Q6_K);
        assert_eq!(of("token_embd.weight"), GgmlType::Q4_K);
        assert_eq!(of("output_norm.weight"), GgmlType::F32);
        assert_eq!(of("blk.4.attn_v.weight"), GgmlType::Q6_K);
        assert_eq!(of("blk.5.attn_v.weight"), GgmlType::Q4_K);
        assert_eq!(of("blk.21.ffn_down.weight"), GgmlType::Q6_K);
        assert_eq!(of("blk.3.ffn_down.weight"), GgmlType::Q4_K);
        assert_eq!(of("blk.4.attn_q.weight"), GgmlType::Q4_K);
    }

    #[test]
    fn output_rules_and_fallbacks() {
        let t = layer_tensors(1, 64);
        let q40 = assign_types(FileType::Q4_0, &t).unwrap();
        assert_eq!(q40[0], GgmlType::Q8_0); // rows of 64 are not whole Q6_K blocks
        assert_eq!(assign_types(FileType::Q8_0, &t).unwrap()[0], GgmlType::Q8_0);
        let q6 = assign_types(FileType::Q6_K, &t).unwrap();
        assert!(q6.iter().zip(&t).all(|(ty, (_, d))| *ty == if d.len() < 2 { GgmlType::F32 } else { GgmlType::Q8_0 }));
        assert!(assign_types(FileType::Q4_K_M, &t).is_err());
        assert!(assign_types(FileType::F16, &t).unwrap().iter().all(|t| matches!(t, GgmlType::F16 | GgmlType::F32)));
        let big = layer_tensors(1, 256);
        assert_eq!(assign_types(FileType::Q4_0, &big).unwrap()[0], GgmlType::Q6_K);
    }
}
