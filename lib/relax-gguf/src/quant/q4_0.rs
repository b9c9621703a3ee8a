//! Q4_0: blocks of 32 weights, each an f16 scale `d` and 16 bytes of 4-bit quants; a
//! weight is `(q - 8) · d`. Byte `j` holds weight `j` in its low nibble and weight
//! `j + 16` in its high nibble.
//!
//! ```text
//! bytes 0..2   d   (f16)
//! bytes 2..18  qs  (u8 × 16: low nibble weight j, high nibble weight j + 16)
//! ```

use super::{read_f16, write_f16};

/// Weights per block.
pub const QK: usize = 32;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 2 + QK / 2;

/// ggml's `dequantize_row_q4_0` for one block.
pub fn dequantize_block(b: &[u8], y: &mut [f32]) {
    let d = read_f16(b, 0);
    for j in 0..QK / 2 {
        let q = b[2 + j];
        y[j] = (i32::from(q & 0x0f) - 8) as f32 * d;
        y[j + QK / 2] = (i32::from(q >> 4) - 8) as f32 * d;
    }
}

/// ggml's `quantize_row_q4_0_ref` for one block: the value of largest magnitude `max`
/// (the first one, on ties) maps to -8, `d = max / -8`.
pub fn quantize_block(x: &[f32], b: &mut [u8]) {
    let mut amax = 0f32;
    let mut max = 0f32;
    for &v in &x[..QK] {
        if amax < v.abs() {
            amax = v.abs();
            max = v;
        }
    }
    let d = max / -8.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    write_f16(b, 0, d);
    let q = |v: f32| ((v * id + 8.5) as i8).min(15) as u8;
    for j in 0..QK / 2 {
        b[2 + j] = q(x[j]) | (q(x[j + QK / 2]) << 4);
    }
}
