//! Q8_0: blocks of 32 weights, each an f16 scale `d` and 32 signed bytes `q`; a weight is
//! `q · d`.
//!
//! ```text
//! bytes 0..2   d   (f16)
//! bytes 2..34  qs  (i8 × 32)
//! ```

use super::{read_f16, write_f16};

/// Weights per block.
pub const QK: usize = 32;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 2 + QK;

/// ggml's `dequantize_row_q8_0` for one block.
pub fn dequantize_block(b: &[u8], y: &mut [f32]) {
    let d = read_f16(b, 0);
    for j in 0..QK {
        y[j] = f32::from(b[2 + j] as i8) * d;
    }
}

/// ggml's `quantize_row_q8_0_ref` for one block: `d = max|x| / 127`, `q = round(x / d)`.
pub fn quantize_block(x: &[f32], b: &mut [u8]) {
    let mut amax = 0f32;
    for &v in &x[..QK] {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    write_f16(b, 0, d);
    for j in 0..QK {
        b[2 + j] = ((x[j] * id).round() as i8) as u8;
    }
}
