//! ggml's reference dequantizers and quantizers for the types relax supports, bit for bit.
//!
//! Each type's module holds the block layout, `dequantize_block` (ggml's
//! `dequantize_row_*` for one block) and, for the quantized types, `quantize_block`
//! (ggml's `quantize_row_*_ref`: the quantizer llama.cpp's `llama-quantize` uses when it is
//! given no importance matrix). [`dequantize`] and [`quantize`] run them over a whole row or
//! tensor, in parallel over blocks for large inputs (blocks are independent, so the result
//! does not depend on the thread count).
//!
//! The arithmetic is IEEE single precision, operation by operation in ggml's order, with
//! no fused multiply-adds; a C build of ggml that lets the compiler contract `a*b + c` into
//! an FMA can differ from it (and from itself on another machine) in rare last-bit cases.

pub mod float;
pub mod q4_0;
pub mod q4_k;
pub mod q6_k;
pub mod q8_0;

use rayon::prelude::*;

use crate::error::{ErrorKind, GgufError, Result};
use crate::types::GgmlType;

pub use float::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// ggml's `nearest_int`: round to nearest, ties to even, for `|x| <= 4194303`, by adding
/// 1.5 · 2²³ and reading the mantissa bits.
#[inline]
pub(crate) fn nearest_int(x: f32) -> i32 {
    let v = x + 12582912.0;
    (v.to_bits() & 0x007f_ffff) as i32 - 0x0040_0000
}

/// Inputs at least this long run in parallel over blocks.
const PARALLEL_MIN: usize = 1 << 16;

fn unsupported(ty: GgmlType, what: &str) -> GgufError {
    GgufError::new(ErrorKind::UnsupportedType, format!("relax does not {what} {ty}"))
}

/// Checks that `n` elements of `ty` take `bytes` bytes; returns the block count.
fn check_sizes(ty: GgmlType, n: usize, bytes: usize) -> Result<usize> {
    let bs = ty.block_size();
    if n % bs != 0 {
        return Err(GgufError::invalid(format!("{n} {ty} elements are not a whole number of blocks of {bs}")));
    }
    let blocks = n / bs;
    if blocks.checked_mul(ty.type_size()) != Some(bytes) {
        return Err(GgufError::invalid(format!(
            "{n} {ty} elements take {} bytes, not {bytes}",
            blocks as u128 * ty.type_size() as u128
        )));
    }
    Ok(blocks)
}

/// Runs `f` over matching chunks of `src` and `dst`, in parallel when the input is large.
fn for_blocks<S: Sync, D: Send>(src: &[S], s: usize, dst: &mut [D], d: usize, f: impl Fn(&[S], &mut [D]) + Sync) {
    if src.len().max(dst.len() * 4) >= PARALLEL_MIN {
        src.par_chunks_exact(s).zip(dst.par_chunks_exact_mut(d)).with_min_len(64).for_each(|(a, b)| f(a, b));
    } else {
        src.chunks_exact(s).zip(dst.chunks_exact_mut(d)).for_each(|(a, b)| f(a, b));
    }
}

/// Dequantizes `data`, holding `out.len()` elements of `ty`, into `out`.
pub fn dequantize(ty: GgmlType, data: &[u8], out: &mut [f32]) -> Result<()> {
    check_sizes(ty, out.len(), data.len())?;
    let bytes = ty.type_size();
    match ty {
        GgmlType::F32 => for_blocks(data, 4, out, 1, |b, o| o[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        GgmlType::F16 => for_blocks(data, 2, out, 1, |b, o| o[0] = f16_to_f32(u16::from_le_bytes([b[0], b[1]]))),
        GgmlType::BF16 => for_blocks(data, 2, out, 1, |b, o| o[0] = bf16_to_f32(u16::from_le_bytes([b[0], b[1]]))),
        GgmlType::Q8_0 => for_blocks(data, bytes, out, q8_0::QK, q8_0::dequantize_block),
        GgmlType::Q4_0 => for_blocks(data, bytes, out, q4_0::QK, q4_0::dequantize_block),
        GgmlType::Q4_K => for_blocks(data, bytes, out, q4_k::QK_K, q4_k::dequantize_block),
        GgmlType::Q6_K => for_blocks(data, bytes, out, q6_k::QK_K, q6_k::dequantize_block),
        other => return Err(unsupported(other, "dequantize")),
    }
    Ok(())
}

/// Dequantizes `n` elements of `ty` from `data` into a new vector.
pub fn dequantize_to_vec(ty: GgmlType, data: &[u8], n: usize) -> Result<Vec<f32>> {
    check_sizes(ty, n, data.len())?;
    let mut out = vec![0f32; n];
    dequantize(ty, data, &mut out)?;
    Ok(out)
}

/// Quantizes `values` to `ty` into `out`, which must be exactly the right size, with
/// ggml's reference quantizer (round to nearest even for F16 and BF16).
pub fn quantize_into(ty: GgmlType, values: &[f32], out: &mut [u8]) -> Result<()> {
    check_sizes(ty, values.len(), out.len())?;
    let bytes = ty.type_size();
    match ty {
        GgmlType::F32 => for_blocks(values, 1, out, 4, |v, o| o.copy_from_slice(&v[0].to_le_bytes())),
        GgmlType::F16 => for_blocks(values, 1, out, 2, |v, o| o.copy_from_slice(&f32_to_f16(v[0]).to_le_bytes())),
        GgmlType::BF16 => for_blocks(values, 1, out, 2, |v, o| o.copy_from_slice(&f32_to_bf16(v[0]).to_le_bytes())),
        GgmlType::Q8_0 => for_blocks(values, q8_0::QK, out, bytes, q8_0::quantize_block),
        GgmlType::Q4_0 => for_blocks(values, q4_0::QK, out, bytes, q4_0::quantize_block),
        GgmlType::Q4_K => for_blocks(values, q4_k::QK_K, out, bytes, q4_k::quantize_block),
        GgmlType::Q6_K => for_blocks(values, q6_k::QK_K, out, bytes, q6_k::quantize_block),
        other => return Err(unsupported(other, "quantize to")),
    }
    Ok(())
}

/// Quantizes `values` to `ty` into a new vector (see [`quantize_into`]).
pub fn quantize(ty: GgmlType, values: &[f32]) -> Result<Vec<u8>> {
    if !ty.is_supported() {
        return Err(unsupported(ty, "quantize to"));
    }
    let bs = ty.block_size();
    if values.len() % bs != 0 {
        return Err(GgufError::invalid(format!(
            "{} values are not a whole number of {ty} blocks of {bs}",
            values.len()
        )));
    }
    let mut out = vec![0u8; values.len() / bs * ty.type_size()];
    quantize_into(ty, values, &mut out)?;
    Ok(out)
}

/// Reads the little-endian f16 at `b[i..i + 2]` as f32.
#[inline]
pub(crate) fn read_f16(b: &[u8], i: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[i], b[i + 1]]))
}

/// Rounds `x` to f16 and writes it little-endian at `b[i..i + 2]`.
#[inline]
pub(crate) fn write_f16(b: &mut [u8], i: usize, x: f32) {
    b[i..i + 2].copy_from_slice(&f32_to_f16(x).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_int_rounds_half_to_even() {
        assert_eq!(nearest_int(0.5), 0);
        assert_eq!(nearest_int(1.5), 2);
        assert_eq!(nearest_int(2.5), 2);
        assert_eq!(nearest_int(-0.5), 0);
        assert_eq!(nearest_int(-1.5), -2);
        assert_eq!(nearest_int(-7.4), -7);
        assert_eq!(nearest_int(31.6), 32);
    }

    #[test]
    fn sizes_are_checked() {
        assert!(quantize(GgmlType::Q4_K, &[0.0; 100]).is_err());
        assert!(dequantize_to_vec(GgmlType::Q8_0, &[0; 33], 32).is_err());
        let e = quantize(GgmlType::Q5_K, &[0.0; 256]).unwrap_err();
        assert_eq!(e.to_string(), "relax does not quantize to Q5_K");
    }
}
