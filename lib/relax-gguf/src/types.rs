//! ggml's tensor types: every type id a GGUF file may name, with its block size and the
//! bytes of one block, and which of them relax reads as numbers (`GgmlType::is_supported`).
//!
//! The table follows `enum ggml_type` in ggml's `ggml.h` and `GGML_QUANT_SIZES` in
//! gguf-py's `constants.py`. Ids 4, 5, 31–33 and 36–38 were removed from ggml; a file
//! that uses them is rejected with the old name in the message.

use std::fmt;

/// A ggml tensor type, by its name in ggml (`GGML_TYPE_<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[expect(non_camel_case_types, reason = "the variants carry ggml's own type names (Q4_K, IQ2_XXS)")]
pub enum GgmlType {
    /// 32-bit IEEE float.
    F32,
    /// 16-bit IEEE float.
    F16,
    /// 32 weights: an f16 scale and 16 bytes of 4-bit quants.
    Q4_0,
    /// 32 weights: f16 scale and minimum, 16 bytes of 4-bit quants.
    Q4_1,
    /// 32 weights: f16 scale, 4 bytes of high bits, 16 bytes of low nibbles.
    Q5_0,
    /// 32 weights: f16 scale and minimum, high bits, low nibbles.
    Q5_1,
    /// 32 weights: an f16 scale and 32 signed bytes.
    Q8_0,
    /// 32 weights: f32 scale and sum, 32 signed bytes (activations only).
    Q8_1,
    /// 256-weight super-block of 2-bit quants.
    Q2_K,
    /// 256-weight super-block of 3-bit quants.
    Q3_K,
    /// 256-weight super-block: f16 scale and minimum, 12 bytes of 6-bit sub-block
    /// scales and minimums, 128 bytes of 4-bit quants.
    Q4_K,
    /// 256-weight super-block of 5-bit quants.
    Q5_K,
    /// 256-weight super-block: 128 bytes of low nibbles, 64 bytes of high 2-bit pairs,
    /// 16 signed 8-bit scales, an f16 scale.
    Q6_K,
    /// 256-weight super-block of 8-bit quants (activations only).
    Q8_K,
    /// i-quant, 2.06 bits per weight.
    IQ2_XXS,
    /// i-quant, 2.31 bits per weight.
    IQ2_XS,
    /// i-quant, 3.06 bits per weight.
    IQ3_XXS,
    /// i-quant, 1.56 bits per weight.
    IQ1_S,
    /// non-linear 4-bit quants in blocks of 32.
    IQ4_NL,
    /// i-quant, 3.44 bits per weight.
    IQ3_S,
    /// i-quant, 2.5 bits per weight.
    IQ2_S,
    /// non-linear 4-bit quants in super-blocks of 256.
    IQ4_XS,
    /// 8-bit integer.
    I8,
    /// 16-bit integer.
    I16,
    /// 32-bit integer.
    I32,
    /// 64-bit integer.
    I64,
    /// 64-bit IEEE float.
    F64,
    /// i-quant, 1.75 bits per weight.
    IQ1_M,
    /// bfloat16.
    BF16,
    /// ternary quants, 1.69 bits per weight.
    TQ1_0,
    /// ternary quants, 2.06 bits per weight.
    TQ2_0,
    /// OCP microscaling FP4: an E8M0 exponent and 16 bytes of E2M1 pairs per 32 weights.
    MXFP4,
    /// NVIDIA FP4: four E4M3 scales and 32 bytes of E2M1 pairs per 64 weights.
    NVFP4,
    /// 1-bit signs with an f16 scale per 128 weights.
    Q1_0,
    /// 2-bit quants with an f16 scale per 64 weights.
    Q2_0,
}

/// `(type, id, block size in weights, bytes per block)` for every current ggml type.
const TABLE: &[(GgmlType, u32, usize, usize)] = {
    use GgmlType::*;
    const QK_K: usize = 256;
    &[
        (F32, 0, 1, 4),
        (F16, 1, 1, 2),
        (Q4_0, 2, 32, 2 + 16),
        (Q4_1, 3, 32, 2 + 2 + 16),
        (Q5_0, 6, 32, 2 + 4 + 16),
        (Q5_1, 7, 32, 2 + 2 + 4 + 16),
        (Q8_0, 8, 32, 2 + 32),
        (Q8_1, 9, 32, 4 + 4 + 32),
        (Q2_K, 10, QK_K, 2 + 2 + QK_K / 16 + QK_K / 4),
        (Q3_K, 11, QK_K, 2 + QK_K / 4 + QK_K / 8 + 12),
        (Q4_K, 12, QK_K, 2 + 2 + QK_K / 2 + 12),
        (Q5_K, 13, QK_K, 2 + 2 + QK_K / 2 + QK_K / 8 + 12),
        (Q6_K, 14, QK_K, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16),
        (Q8_K, 15, QK_K, 4 + QK_K + QK_K / 8),
        (IQ2_XXS, 16, QK_K, 2 + QK_K / 4),
        (IQ2_XS, 17, QK_K, 2 + QK_K / 4 + QK_K / 32),
        (IQ3_XXS, 18, QK_K, 2 + QK_K / 4 + QK_K / 8),
        (IQ1_S, 19, QK_K, 2 + QK_K / 8 + QK_K / 16),
        (IQ4_NL, 20, 32, 2 + 16),
        (IQ3_S, 21, QK_K, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4),
        (IQ2_S, 22, QK_K, 2 + QK_K / 4 + QK_K / 16),
        (IQ4_XS, 23, QK_K, 2 + 2 + QK_K / 2 + QK_K / 64),
        (I8, 24, 1, 1),
        (I16, 25, 1, 2),
        (I32, 26, 1, 4),
        (I64, 27, 1, 8),
        (F64, 28, 1, 8),
        (IQ1_M, 29, QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32),
        (BF16, 30, 1, 2),
        (TQ1_0, 34, QK_K, 2 + 4 * 13),
        (TQ2_0, 35, QK_K, 2 + 64),
        (MXFP4, 39, 32, 1 + 16),
        (NVFP4, 40, 64, 4 + 32),
        (Q1_0, 41, 128, 2 + 16),
        (Q2_0, 42, 64, 2 + 16),
    ]
};

/// Type ids ggml once had and removed, with their old names.
const REMOVED: &[(u32, &str)] = &[
    (4, "Q4_2"),
    (5, "Q4_3"),
    (31, "Q4_0_4_4"),
    (32, "Q4_0_4_8"),
    (33, "Q4_0_8_8"),
    (36, "IQ4_NL_4_4"),
    (37, "IQ4_NL_4_8"),
    (38, "IQ4_NL_8_8"),
];

/// The types relax reads and writes as numbers: [`crate::dequantize`] and
/// [`crate::quantize`] accept exactly these.
pub const SUPPORTED_TYPES: &[GgmlType] =
    &[GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K];

impl GgmlType {
    /// Every current ggml type, in id order.
    pub fn all() -> impl Iterator<Item = GgmlType> {
        TABLE.iter().map(|e| e.0)
    }

    fn entry(self) -> &'static (GgmlType, u32, usize, usize) {
        // The table lists every variant (checked by a test), in declaration order.
        &TABLE[self as usize]
    }

    /// The type with ggml id `id`, if it is a current ggml type.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        TABLE.iter().find(|e| e.1 == id).map(|e| e.0)
    }

    /// The old name of a type id ggml has removed (`31` is `Q4_0_4_4`).
    pub fn removed_name(id: u32) -> Option<&'static str> {
        REMOVED.iter().find(|e| e.0 == id).map(|e| e.1)
    }

    /// The type named `name` as ggml spells it (`Q4_K`, `F16`, `BF16`), case-insensitive.
    pub fn from_name(name: &str) -> Option<GgmlType> {
        Self::all().find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// ggml's id of the type, as stored in a GGUF tensor info.
    pub fn id(self) -> u32 {
        self.entry().1
    }

    /// ggml's name of the type (`Q4_K`).
    pub fn name(self) -> &'static str {
        use GgmlType::*;
        match self {
            F32 => "F32",
            F16 => "F16",
            Q4_0 => "Q4_0",
            Q4_1 => "Q4_1",
            Q5_0 => "Q5_0",
            Q5_1 => "Q5_1",
            Q8_0 => "Q8_0",
            Q8_1 => "Q8_1",
            Q2_K => "Q2_K",
            Q3_K => "Q3_K",
            Q4_K => "Q4_K",
            Q5_K => "Q5_K",
            Q6_K => "Q6_K",
            Q8_K => "Q8_K",
            IQ2_XXS => "IQ2_XXS",
            IQ2_XS => "IQ2_XS",
            IQ3_XXS => "IQ3_XXS",
            IQ1_S => "IQ1_S",
            IQ4_NL => "IQ4_NL",
            IQ3_S => "IQ3_S",
            IQ2_S => "IQ2_S",
            IQ4_XS => "IQ4_XS",
            I8 => "I8",
            I16 => "I16",
            I32 => "I32",
            I64 => "I64",
            F64 => "F64",
            IQ1_M => "IQ1_M",
            BF16 => "BF16",
            TQ1_0 => "TQ1_0",
            TQ2_0 => "TQ2_0",
            MXFP4 => "MXFP4",
            NVFP4 => "NVFP4",
            Q1_0 => "Q1_0",
            Q2_0 => "Q2_0",
        }
    }

    /// Weights per block (1 for the plain number types, 32 or 256 for quantized ones).
    pub fn block_size(self) -> usize {
        self.entry().2
    }

    /// Bytes of one block.
    pub fn type_size(self) -> usize {
        self.entry().3
    }

    /// Whether relax reads and writes the type as numbers (see [`SUPPORTED_TYPES`]).
    pub fn is_supported(self) -> bool {
        SUPPORTED_TYPES.contains(&self)
    }

    /// Whether the type stores weights in blocks of more than one.
    pub fn is_quantized(self) -> bool {
        self.block_size() > 1
    }

    /// Bytes of `n` consecutive weights, or `None` when `n` is not a whole number of
    /// blocks or the size overflows.
    pub fn bytes_for(self, n: u64) -> Option<u64> {
        let bs = self.block_size() as u64;
        if n % bs != 0 {
            return None;
        }
        (n / bs).checked_mul(self.type_size() as u64)
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order_and_complete() {
        for (i, e) in TABLE.iter().enumerate() {
            assert_eq!(e.0 as usize, i, "{}", e.0);
            assert_eq!(GgmlType::from_id(e.1), Some(e.0));
            assert_eq!(GgmlType::from_name(e.0.name()), Some(e.0));
            assert!(GgmlType::removed_name(e.1).is_none());
        }
        assert_eq!(TABLE.len(), GgmlType::Q2_0 as usize + 1);
    }

    #[test]
    fn block_layouts() {
        assert_eq!((GgmlType::Q4_0.block_size(), GgmlType::Q4_0.type_size()), (32, 18));
        assert_eq!((GgmlType::Q8_0.block_size(), GgmlType::Q8_0.type_size()), (32, 34));
        assert_eq!((GgmlType::Q4_K.block_size(), GgmlType::Q4_K.type_size()), (256, 144));
        assert_eq!((GgmlType::Q6_K.block_size(), GgmlType::Q6_K.type_size()), (256, 210));
        assert_eq!(GgmlType::Q4_K.bytes_for(512), Some(288));
        assert_eq!(GgmlType::Q4_K.bytes_for(100), None);
        assert_eq!(GgmlType::from_name("q4_k"), Some(GgmlType::Q4_K));
        assert_eq!(GgmlType::removed_name(31), Some("Q4_0_4_4"));
    }
}
