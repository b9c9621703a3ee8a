//! The generator's deterministic random numbers: SplitMix64 streams, one per tensor row,
//! and approximately normal values made with additions and multiplications only (the sum
//! of four uniforms, Irwin–Hall), so that the same seed gives the same bytes on every
//! platform and for any thread count.

/// A SplitMix64 stream.
pub(crate) struct Rng(u64);

impl Rng {
    /// The stream for row `row` of the tensor named `name`, under `seed`.
    pub(crate) fn for_row(seed: u64, name: &str, row: u64) -> Rng {
        // FNV-1a of the name, mixed with the seed and the row.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut r = Rng(seed ^ h.rotate_left(17));
        let mixed = r.next_u64() ^ row.wrapping_mul(0xd6e8_feb8_6659_fd93);
        Rng(mixed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Approximately standard normal: (u₁ + u₂ + u₃ + u₄ - 2) · √3, in `(-2√3, 2√3)`.
    pub(crate) fn normal(&mut self) -> f32 {
        let s = self.uniform() + self.uniform() + self.uniform() + self.uniform();
        ((s - 2.0) * 1.732_050_807_568_877_2) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_roughly_normal() {
        let mut r = Rng::for_row(0, "blk.0.attn_q.weight", 3);
        let first = r.next_u64();
        assert_eq!(first, Rng::for_row(0, "blk.0.attn_q.weight", 3).next_u64());
        assert_ne!(first, Rng::for_row(0, "blk.0.attn_q.weight", 4).next_u64());
        assert_ne!(first, Rng::for_row(1, "blk.0.attn_q.weight", 3).next_u64());
        let xs: Vec<f64> = (0..20000).map(|_| f64::from(r.normal())).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.05, "{var}");
    }
}
