//! The 16-bit float formats: IEEE half (F16) and bfloat16 (BF16), as ggml converts them
//! (`GGML_FP16_TO_FP32`, `GGML_FP32_TO_FP16`, `ggml_compute_fp32_to_bf16`): widening is
//! exact, narrowing rounds to nearest, ties to even.

/// The f16 with bits `h` as f32 (exact).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// `x` rounded to f16 (to nearest, ties to even; overflow gives infinity).
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// The bfloat16 with bits `h` as f32 (exact).
#[inline]
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `x` rounded to bfloat16 as ggml does: to nearest, ties to even; a NaN stays a quiet NaN.
#[inline]
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if u & 0x7fff_ffff > 0x7f80_0000 {
        return ((u >> 16) | 64) as u16;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_f16_round_trips() {
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h);
            if x.is_nan() {
                assert!(f16_to_f32(f32_to_f16(x)).is_nan());
            } else {
                assert_eq!(f32_to_f16(x), h, "{h:#06x}");
            }
            let b = bf16_to_f32(h);
            if b.is_nan() {
                assert!(bf16_to_f32(f32_to_bf16(b)).is_nan());
            } else {
                assert_eq!(f32_to_bf16(b), h, "{h:#06x}");
            }
        }
    }

    #[test]
    fn narrowing_rounds_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and the next f16: ties go to the even 1.
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_bf16(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001);
    }
}
