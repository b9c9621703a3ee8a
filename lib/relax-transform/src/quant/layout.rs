//! The block-quantized weight types relax computes with, and their block layouts.
//!
//! A quantized matrix of `n` rows of `k` elements is stored as ggml stores it: each row
//! cut into blocks of [`QuantType::block_elems`] consecutive elements, each block
//! [`QuantType::block_bytes`] bytes, so the packed matrix is `(n, k / block_elems *
//! block_bytes)` `uint8` (`docs/gguf.md` has the byte layouts). The types and sizes are
//! ggml's (`GGML_QUANT_SIZES`); `relax-gguf` holds the (de)quantizers, this crate only
//! the layouts and the decode kernels ([`super::decode`]), so it needs no file-format
//! dependency.

use std::fmt;

/// A block-quantized weight type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantType {
    /// Blocks of 32: an f16 scale and 32 signed bytes.
    Q8_0,
    /// Blocks of 32: an f16 scale and 32 4-bit values, offset by 8.
    Q4_0,
    /// Super-blocks of 256: f16 scale and min, 8 sub-blocks with 6-bit scales and mins,
    /// 4-bit values.
    Q4K,
    /// Super-blocks of 256: an f16 scale, 16 signed 8-bit sub-block scales, 6-bit values.
    Q6K,
}

impl QuantType {
    /// Every type, in ggml's id order.
    pub const ALL: [QuantType; 4] = [QuantType::Q4_0, QuantType::Q8_0, QuantType::Q4K, QuantType::Q6K];

    /// The lower-case name (`q4_0`, `q4_k`): kernel names, pass options, attributes.
    pub fn name(self) -> &'static str {
        match self {
            QuantType::Q8_0 => "q8_0",
            QuantType::Q4_0 => "q4_0",
            QuantType::Q4K => "q4_k",
            QuantType::Q6K => "q6_k",
        }
    }

    /// ggml's name (`Q4_0`, `Q4_K`).
    pub fn ggml_name(self) -> &'static str {
        match self {
            QuantType::Q8_0 => "Q8_0",
            QuantType::Q4_0 => "Q4_0",
            QuantType::Q4K => "Q4_K",
            QuantType::Q6K => "Q6_K",
        }
    }

    /// The type named `name`, in either case (`q4_0`, `Q4_K`).
    pub fn from_name(name: &str) -> Option<QuantType> {
        QuantType::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Elements per block.
    pub fn block_elems(self) -> usize {
        match self {
            QuantType::Q8_0 | QuantType::Q4_0 => 32,
            QuantType::Q4K | QuantType::Q6K => 256,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            QuantType::Q8_0 => 34,
            QuantType::Q4_0 => 18,
            QuantType::Q4K => 144,
            QuantType::Q6K => 210,
        }
    }

    /// The bytes of a row of `k` elements; `None` unless `k` is a positive multiple of
    /// the block size.
    pub fn row_bytes(self, k: usize) -> Option<usize> {
        (k > 0 && k % self.block_elems() == 0).then(|| k / self.block_elems() * self.block_bytes())
    }
}

impl fmt::Display for QuantType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        assert_eq!(QuantType::Q4_0.row_bytes(64), Some(36));
        assert_eq!(QuantType::Q8_0.row_bytes(32), Some(34));
        assert_eq!(QuantType::Q4K.row_bytes(512), Some(288));
        assert_eq!(QuantType::Q6K.row_bytes(256), Some(210));
        assert_eq!(QuantType::Q4K.row_bytes(128), None);
        assert_eq!(QuantType::Q4_0.row_bytes(0), None);
        assert_eq!(QuantType::Q4_0.row_bytes(33), None);
    }

    #[test]
    fn names() {
        for t in QuantType::ALL {
            assert_eq!(QuantType::from_name(t.name()), Some(t));
            assert_eq!(QuantType::from_name(t.ggml_name()), Some(t));
            assert_eq!(t.to_string(), t.name());
        }
        assert_eq!(QuantType::from_name("q5_k"), None);
    }
}
