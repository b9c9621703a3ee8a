//! The seeded random numbers of the quantized-kernel tests (`quant_decode.rs`,
//! `dequant_matmul.rs`): xorshift64*, so a failure reproduces from its seed.

#![allow(dead_code, reason = "each includer uses a different part")]

/// xorshift64*.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A random byte.
    pub fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    /// Roughly normal (a sum of four uniforms), times `scale`.
    pub fn normal(&mut self, scale: f32) -> f32 {
        let s: f32 = (0..4).map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5).sum();
        s * scale
    }
}
