//! The quantizers and dequantizers against ggml's reference C code, bit for bit.
//!
//! `inputs()` makes 1000 blocks of 256 values in ten kinds (normal, uniform, outliers,
//! zeros, constants, one dominant value, all positive, all negative, sparse, repeated
//! values with ties) at nine scales from 1e-6 to 100. The expected FNV-1a hashes are those
//! of ggml's `quantize_row_*_ref` output and of `dequantize_row_*` of it, from
//! `ggml/src/ggml-quants.c` compiled with `gcc -O2 -ffp-contract=off` (no fused
//! multiply-adds: the way ggml-base is built for x86-64, where the reference functions
//! live) and run on these inputs. To regenerate: `RELAX_GGUF_WRITE_VECTORS=in.bin cargo
//! test -p relax-gguf --test reference_vectors` writes the inputs as raw little-endian f32.

use relax_gguf::{GgmlType, dequantize_to_vec, quantize};

/// The inputs: a xorshift64 stream, values built with f64 arithmetic and rounded to f32.
fn inputs() -> Vec<f32> {
    struct Xs(u64);
    impl Xs {
        fn u(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / 9007199254740992.0
        }
        fn n(&mut self) -> f64 {
            (self.u() + self.u() + self.u() + self.u() - 2.0) * 1.7320508
        }
    }
    const SCALES: [f64; 9] = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0];
    let mut r = Xs(88172645463325252);
    let mut x = Vec::with_capacity(1000 * 256);
    for b in 0..1000 {
        let sc = SCALES[(b / 10) % 9];
        for i in 0..256 {
            let v = match b % 10 {
                0 => r.n() * sc,
                1 => (r.u() * 2.0 - 1.0) * sc,
                2 => {
                    if r.u() < 0.1 {
                        r.n() * sc * 10.0
                    } else {
                        r.n() * sc * 0.1
                    }
                }
                3 => 0.0,
                4 => sc,
                5 => {
                    if i % 32 == 0 {
                        -sc
                    } else {
                        r.n() * sc * 0.01
                    }
                }
                6 => r.u() * sc,
                7 => -r.u() * sc,
                8 => {
                    if r.u() < 0.5 {
                        0.0
                    } else {
                        r.n() * sc
                    }
                }
                _ => (r.n() * 8.0).trunc() * sc,
            };
            x.push(v as f32);
        }
    }
    x
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// `(type, hash of the quantized bytes, hash of their dequantized f32 bytes)` from ggml.
const EXPECTED: [(GgmlType, u64, u64); 4] = [
    (GgmlType::Q4_0, 0x6c812471f8c5d807, 0x1e5b7937beaabfdf),
    (GgmlType::Q8_0, 0x979029e28b6d63ba, 0xbce58478086d5b1b),
    (GgmlType::Q4_K, 0x5db52e24df54cb6d, 0x2090ec338a94bc31),
    (GgmlType::Q6_K, 0x19603f8c7b161a2c, 0x0f81a1554e8057f4),
];

#[test]
fn bit_identical_to_ggml_reference() {
    let x = inputs();
    if let Some(path) = std::env::var_os("RELAX_GGUF_WRITE_VECTORS") {
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).unwrap();
    }
    for (ty, q_hash, dq_hash) in EXPECTED {
        let q = quantize(ty, &x).unwrap();
        let dq = dequantize_to_vec(ty, &q, x.len()).unwrap();
        let dq_bytes: Vec<u8> = dq.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            (format!("{:016x}", fnv(&q)), format!("{:016x}", fnv(&dq_bytes))),
            (format!("{q_hash:016x}"), format!("{dq_hash:016x}")),
            "{ty}"
        );
    }
}
