//! Q6_K: super-blocks of 256 weights in 16 sub-blocks of 16. Each sub-block has a signed
//! 8-bit scale `sc`; the super-block an f16 factor `d`. A weight is `d·sc · (q - 32)` with
//! a 6-bit `q` split into a low nibble (in `ql`) and two high bits (in `qh`).
//!
//! ```text
//! bytes 0..128    ql      for each 128 weights, 64 bytes: byte l holds the low nibbles of
//!                         weights l (low) and l+64 (high); byte l+32 those of l+32 and l+96
//! bytes 128..192  qh      for each 128 weights, 32 bytes: byte l holds the high bit pairs
//!                         of weights l, l+32, l+64, l+96 (bits 0-1, 2-3, 4-5, 6-7)
//! bytes 192..208  scales  (i8 × 16)
//! bytes 208..210  d       (f16)
//! ```

use super::{nearest_int, read_f16, write_f16};

/// Weights per super-block.
pub const QK_K: usize = 256;
/// Bytes per super-block.
pub const BLOCK_BYTES: usize = QK_K / 2 + QK_K / 4 + QK_K / 16 + 2;

const QH: usize = 128;
const SCALES: usize = 192;
const D: usize = 208;

/// ggml's `dequantize_row_q6_K` for one super-block.
pub fn dequantize_block(b: &[u8], y: &mut [f32]) {
    let d = read_f16(b, D);
    for h in 0..2 {
        let ql = &b[64 * h..64 * h + 64];
        let qh = &b[QH + 32 * h..QH + 32 * h + 32];
        let sc = |k: usize| f32::from(b[SCALES + 8 * h + k] as i8);
        let y = &mut y[128 * h..128 * h + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = i32::from((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) - 32;
            let q2 = i32::from((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            let q3 = i32::from((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            let q4 = i32::from((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * sc(is) * q1 as f32;
            y[l + 32] = d * sc(is + 2) * q2 as f32;
            y[l + 64] = d * sc(is + 4) * q3 as f32;
            y[l + 96] = d * sc(is + 6) * q4 as f32;
        }
    }
}

/// ggml's `make_qx_quants` with `rmse_type = 1` and no importance weights: fits
/// `x ≈ scale · (L - nmax)` with `L` in `0..2·nmax`, trying 19 scales around `-nmax / max`
/// and keeping the one with the least `x²`-weighted squared error. Fills `l`.
fn make_qx_quants(x: &[f32], nmax: i32, l: &mut [u8]) -> f32 {
    let (mut max, mut amax) = (0f32, 0f32);
    for &v in x {
        if v.abs() > amax {
            amax = v.abs();
            max = v;
        }
    }
    if amax < 1e-15 {
        l.fill(0);
        return 0.0;
    }
    let q = |iscale: f32, v: f32| nearest_int(iscale * v).clamp(-nmax, nmax - 1);
    let sums = |iscale: f32| {
        let (mut sumlx, mut suml2) = (0f32, 0f32);
        for &v in x {
            let li = q(iscale, v) as f32;
            let w = v * v;
            sumlx += w * v * li;
            suml2 += w * li * li;
        }
        (sumlx, suml2)
    };
    let iscale = -(nmax as f32) / max;
    for (li, &v) in l.iter_mut().zip(x) {
        *li = (q(iscale, v) + nmax) as u8;
    }
    let (sumlx, suml2) = sums(iscale);
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;
    for is in -9..=9 {
        if is == 0 {
            continue;
        }
        let iscale = -(nmax as f32 + 0.1 * is as f32) / max;
        let (sumlx, suml2) = sums(iscale);
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for (li, &v) in l.iter_mut().zip(x) {
                *li = (q(iscale, v) + nmax) as u8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// ggml's `quantize_row_q6_K_ref` for one super-block.
pub fn quantize_block(x: &[f32], b: &mut [u8]) {
    let mut l = [0u8; QK_K];
    let mut scales = [0f32; QK_K / 16];
    let (mut max_scale, mut max_abs_scale) = (0f32, 0f32);
    for ib in 0..QK_K / 16 {
        let scale = make_qx_quants(&x[16 * ib..16 * ib + 16], 32, &mut l[16 * ib..16 * ib + 16]);
        scales[ib] = scale;
        if scale.abs() > max_abs_scale {
            max_abs_scale = scale.abs();
            max_scale = scale;
        }
    }
    if max_abs_scale < 1e-15 {
        b[..BLOCK_BYTES].fill(0);
        return;
    }
    let iscale = -128.0 / max_scale;
    write_f16(b, D, 1.0 / iscale);
    for ib in 0..QK_K / 16 {
        // ggml stores min(127, nearest_int(..)) in an int8_t.
        b[SCALES + ib] = nearest_int(iscale * scales[ib]).min(127) as i8 as u8;
    }
    let d_all = read_f16(b, D);
    for j in 0..QK_K / 16 {
        let d = d_all * f32::from(b[SCALES + j] as i8);
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            l[16 * j + ii] = (nearest_int(x[16 * j + ii] / d).clamp(-32, 31) + 32) as u8;
        }
    }
    for h in 0..2 {
        let l = &l[128 * h..128 * h + 128];
        for i in 0..32 {
            b[64 * h + i] = (l[i] & 0x0f) | ((l[i + 64] & 0x0f) << 4);
            b[64 * h + i + 32] = (l[i + 32] & 0x0f) | ((l[i + 96] & 0x0f) << 4);
            b[QH + 32 * h + i] =
                (l[i] >> 4) | ((l[i + 32] >> 4) << 2) | ((l[i + 64] >> 4) << 4) | ((l[i + 96] >> 4) << 6);
        }
    }
}
