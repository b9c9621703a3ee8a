//! Rounding doubles to half precision (float16, bfloat16) without external crates.

/// Rounds `v` to the nearest float16 value (ties to even), returned as a double.
pub fn f16_round(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let a = v.abs();
    if a >= 65520.0 {
        return f64::INFINITY.copysign(v);
    }
    // Spacing of float16 numbers around `a`: 2^(e - 10) for normals, 2^-24 for subnormals.
    let e = a.log2().floor() as i32;
    let quantum = if e < -14 { 2f64.powi(-24) } else { 2f64.powi(e - 10) };
    round_half_even(a / quantum) * quantum * v.signum()
}

/// Rounds `v` to the nearest bfloat16 value (ties to even), returned as a double.
pub fn bf16_round(v: f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let f = v as f32;
    let bits = f.to_bits();
    let lsb = (bits >> 16) & 1;
    let rounded = bits.wrapping_add(0x7fff + lsb) & 0xffff_0000;
    f64::from(f32::from_bits(rounded))
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 { r - x.signum() } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_rounding() {
        assert_eq!(f16_round(1.0), 1.0);
        assert_eq!(f16_round(0.1), 0.0999755859375);
        assert_eq!(f16_round(65504.0), 65504.0);
        assert_eq!(f16_round(1e6), f64::INFINITY);
        assert_eq!(bf16_round(1.0), 1.0);
        assert_eq!(bf16_round(0.1), 0.10009765625);
    }
}
