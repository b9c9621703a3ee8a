//! Q4_K: super-blocks of 256 weights in 8 sub-blocks of 32. Each sub-block has a 6-bit
//! scale `sc` and a 6-bit minimum `m`; the super-block has f16 factors `d` and `dmin`. A
//! weight is `d·sc · q - dmin·m` with a 4-bit `q`.
//!
//! ```text
//! bytes 0..2     d       (f16)
//! bytes 2..4     dmin    (f16)
//! bytes 4..16    scales  (12 bytes: the 8 scales and 8 minimums, 6 bits each; see get_scale_min)
//! bytes 16..144  qs      (128 bytes: for each 64 weights, 32 bytes whose low nibbles are
//!                         weights 0..32 and high nibbles weights 32..64)
//! ```

use super::{nearest_int, read_f16, write_f16};

/// Weights per super-block.
pub const QK_K: usize = 256;
/// Bytes per super-block.
pub const BLOCK_BYTES: usize = 2 + 2 + 12 + QK_K / 2;

/// Sub-block `j`'s 6-bit scale and minimum from the 12 packed bytes (ggml's
/// `get_scale_min_k4`): sub-blocks 0..4 use the low 6 bits of bytes `j` and `j + 4`; 4..8
/// take their low 4 bits from byte `j + 4` and their top 2 bits from the spare top bits of
/// bytes `j - 4` (scale) and `j` (minimum).
#[inline]
pub fn get_scale_min(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

/// ggml's `dequantize_row_q4_K` for one super-block.
pub fn dequantize_block(b: &[u8], y: &mut [f32]) {
    let d = read_f16(b, 0);
    let min = read_f16(b, 2);
    let scales = &b[4..16];
    for (k, (q, y)) in b[16..BLOCK_BYTES].chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
        let (sc, m) = get_scale_min(2 * k, scales);
        let (d1, m1) = (d * f32::from(sc), min * f32::from(m));
        let (sc, m) = get_scale_min(2 * k + 1, scales);
        let (d2, m2) = (d * f32::from(sc), min * f32::from(m));
        for l in 0..32 {
            y[l] = d1 * f32::from(q[l] & 0x0f) - m1;
            y[l + 32] = d2 * f32::from(q[l] >> 4) - m2;
        }
    }
}

/// ggml's `make_qkx2_quants`: fits `x ≈ scale · L - min` with `L` in `0..=nmax`,
/// minimizing the `w`-weighted squared error over a sweep of `nstep + 1` trial scales.
/// Returns `(scale, min)` (the minimum as a non-negative offset) and fills `l`.
fn make_qkx2_quants(x: &[f32], w: &[f32], nmax: i32, l: &mut [u8], rmin: f32, rdelta: f32, nstep: i32) -> (f32, f32) {
    let n = x.len();
    let (mut min, mut max) = (x[0], x[0]);
    let mut sum_w = w[0];
    let mut sum_x = sum_w * x[0];
    for i in 1..n {
        if x[i] < min {
            min = x[i];
        }
        if x[i] > max {
            max = x[i];
        }
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if min > 0.0 {
        min = 0.0;
    }
    if max == min {
        l[..n].fill(0);
        return (0.0, -min);
    }
    let clamp = |v: i32| v.clamp(0, nmax) as u8;
    let mut iscale = nmax as f32 / (max - min);
    let mut scale = 1.0 / iscale;
    let mut best = 0f32;
    for i in 0..n {
        l[i] = clamp(nearest_int(iscale * (x[i] - min)));
        let diff = scale * f32::from(l[i]) + min - x[i];
        best += w[i] * (diff * diff);
    }
    let mut aux = [0u8; 32];
    for is in 0..=nstep {
        iscale = (rmin + rdelta * is as f32 + nmax as f32) / (max - min);
        let (mut sum_l, mut sum_l2, mut sum_xl) = (0f32, 0f32, 0f32);
        for i in 0..n {
            aux[i] = clamp(nearest_int(iscale * (x[i] - min)));
            let li = f32::from(aux[i]);
            sum_l += w[i] * li;
            sum_l2 += w[i] * li * li;
            sum_xl += w[i] * li * x[i];
        }
        let det = sum_w * sum_l2 - sum_l * sum_l;
        if det > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut err = 0f32;
            for i in 0..n {
                let diff = this_scale * f32::from(aux[i]) + this_min - x[i];
                err += w[i] * (diff * diff);
            }
            if err < best {
                l[..n].copy_from_slice(&aux[..n]);
                best = err;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// ggml's `quantize_row_q4_K_ref` for one super-block.
pub fn quantize_block(x: &[f32], b: &mut [u8]) {
    let mut l = [0u8; QK_K];
    let mut weights = [0f32; 32];
    let mut scales = [0f32; 8];
    let mut mins = [0f32; 8];
    let (mut max_scale, mut max_min) = (0f32, 0f32);
    for j in 0..QK_K / 32 {
        let xs = &x[32 * j..32 * j + 32];
        let mut sum_x2 = 0f32;
        for &v in xs {
            sum_x2 += v * v;
        }
        let av_x = (sum_x2 / 32.0).sqrt();
        for (w, &v) in weights.iter_mut().zip(xs) {
            *w = av_x + v.abs();
        }
        (scales[j], mins[j]) = make_qkx2_quants(xs, &weights, 15, &mut l[32 * j..32 * j + 32], -1.0, 0.1, 20);
        if scales[j] > max_scale {
            max_scale = scales[j];
        }
        if mins[j] > max_min {
            max_min = mins[j];
        }
    }
    let inv_scale = if max_scale > 0.0 { 63.0 / max_scale } else { 0.0 };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    let packed = &mut b[4..16];
    for j in 0..QK_K / 32 {
        // ggml stores nearest_int's result in a uint8_t (mod 256) before clamping.
        let ls = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        let lm = (nearest_int(inv_min * mins[j]) as u8).min(63);
        if j < 4 {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = (ls & 0x0f) | ((lm & 0x0f) << 4);
            packed[j - 4] |= (ls >> 4) << 6;
            packed[j] |= (lm >> 4) << 6;
        }
    }
    write_f16(b, 0, max_scale / 63.0);
    write_f16(b, 2, max_min / 63.0);
    let (d_all, dmin_all) = (read_f16(b, 0), read_f16(b, 2));
    for j in 0..QK_K / 32 {
        let (sc, m) = get_scale_min(j, &b[4..16]);
        let d = d_all * f32::from(sc);
        if d == 0.0 {
            continue;
        }
        let dm = dmin_all * f32::from(m);
        for ii in 0..32 {
            l[32 * j + ii] = nearest_int((x[32 * j + ii] + dm) / d).clamp(0, 15) as u8;
        }
    }
    for (k, q) in b[16..BLOCK_BYTES].chunks_exact_mut(32).enumerate() {
        for i in 0..32 {
            q[i] = l[64 * k + i] | (l[64 * k + i + 32] << 4);
        }
    }
}
