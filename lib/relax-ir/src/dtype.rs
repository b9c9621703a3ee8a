//! Scalar and vector data types (`float32`, `int64`, `bool`, `float16x4`, `handle`, `void`).
//!
//! The text form is TVM's: a type code, a bit width, and an optional `xLANES` suffix.
//! `void` means "unknown" for Relax tensors and "no value" for TIR function results.

use std::fmt;

/// The kind of a scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    /// Signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// IEEE float.
    Float,
    /// bfloat16.
    BFloat,
    /// Boolean (one bit, stored in a byte).
    Bool,
    /// Opaque pointer.
    Handle,
    /// No type / unknown dtype.
    Void,
    /// 8-bit float with 4 exponent bits, 3 mantissa bits, finite-only NaN encoding.
    Float8E4M3FN,
    /// 8-bit float with 5 exponent bits, 2 mantissa bits.
    Float8E5M2,
    /// 4-bit float with 2 exponent bits and 1 mantissa bit.
    Float4E2M1FN,
}

/// A data type: code, bit width and vector lanes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataType {
    /// The kind.
    pub code: TypeCode,
    /// Bits per lane.
    pub bits: u16,
    /// Vector lanes (1 for scalars).
    pub lanes: u16,
}

impl DataType {
    /// A scalar type.
    pub const fn new(code: TypeCode, bits: u16) -> DataType {
        DataType { code, bits, lanes: 1 }
    }
    /// `int32`, the default type of integer literals.
    pub const INT32: DataType = DataType::new(TypeCode::Int, 32);
    /// `int64`, the type of shape dims.
    pub const INT64: DataType = DataType::new(TypeCode::Int, 64);
    /// `int8`.
    pub const INT8: DataType = DataType::new(TypeCode::Int, 8);
    /// `int16`.
    pub const INT16: DataType = DataType::new(TypeCode::Int, 16);
    /// `uint8`.
    pub const UINT8: DataType = DataType::new(TypeCode::UInt, 8);
    /// `float16`.
    pub const FLOAT16: DataType = DataType::new(TypeCode::Float, 16);
    /// `float32`, the default type of float literals.
    pub const FLOAT32: DataType = DataType::new(TypeCode::Float, 32);
    /// `float64`.
    pub const FLOAT64: DataType = DataType::new(TypeCode::Float, 64);
    /// `bfloat16`.
    pub const BFLOAT16: DataType = DataType::new(TypeCode::BFloat, 16);
    /// `bool`.
    pub const BOOL: DataType = DataType::new(TypeCode::Bool, 1);
    /// `handle`.
    pub const HANDLE: DataType = DataType::new(TypeCode::Handle, 64);
    /// `void`.
    pub const VOID: DataType = DataType { code: TypeCode::Void, bits: 0, lanes: 0 };

    /// The same type with `lanes` lanes.
    pub fn with_lanes(self, lanes: u16) -> DataType {
        DataType { lanes, ..self }
    }
    /// The scalar type of one lane.
    pub fn element(self) -> DataType {
        if self.is_void() { self } else { self.with_lanes(1) }
    }
    /// True for `void`.
    pub fn is_void(self) -> bool {
        self.code == TypeCode::Void
    }
    /// True for signed or unsigned integers (not bool).
    pub fn is_int(self) -> bool {
        matches!(self.code, TypeCode::Int | TypeCode::UInt)
    }
    /// True for signed integers.
    pub fn is_signed_int(self) -> bool {
        self.code == TypeCode::Int
    }
    /// True for unsigned integers.
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    /// The type both operands of a binary operator are computed in when their types
    /// differ (raw TIR nodes may mix them; TVM's constructors never do): the float one if
    /// either is a float, else the wider (the first on a tie). The evaluator and the code
    /// generators share this rule.
    pub fn common(self, other: DataType) -> DataType {
        if self == other {
            return self;
        }
        match (self.is_float(), other.is_float()) {
            (true, false) => self,
            (false, true) => other,
            _ => {
                if other.bits > self.bits {
                    other
                } else {
                    self
                }
            }
        }
    }
    /// True for every floating-point kind.
    pub fn is_float(self) -> bool {
        matches!(
            self.code,
            TypeCode::Float | TypeCode::BFloat | TypeCode::Float8E4M3FN | TypeCode::Float8E5M2 | TypeCode::Float4E2M1FN
        )
    }
    /// True for `bool`.
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::Bool
    }
    /// True for `handle`.
    pub fn is_handle(self) -> bool {
        self.code == TypeCode::Handle
    }
    /// True when the type has more than one lane.
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// Bytes one element occupies in memory (bool takes a byte; sub-byte types round up).
    pub fn bytes(self) -> u64 {
        let bits = if self.is_bool() { 8 } else { u64::from(self.bits) };
        (bits * u64::from(self.lanes.max(1))).div_ceil(8)
    }

    /// The scalar dtypes by name, for "did you mean" notes.
    pub const NAMES: &'static [&'static str] = &[
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "float8_e4m3fn",
        "float8_e5m2",
        "float4_e2m1fn",
        "handle",
    ];

    /// True when `s` is spelled like a dtype (`int46`, `float31`, `uint7x4`) whether or
    /// not [`DataType::parse`] accepts it.
    pub fn looks_like_dtype(s: &str) -> bool {
        let base = s.split_once('x').map_or(s, |(b, _)| b);
        ["uint", "int", "bfloat", "float"].iter().any(|p| {
            base.strip_prefix(p).is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
        })
    }

    /// The dtype name closest to the unknown `s`, for a "did you mean" note.
    pub fn suggest(s: &str) -> Option<&'static str> {
        crate::diag::suggest(s, Self::NAMES.iter().copied())
    }

    /// Parses TVM's spelling (`"float32"`, `"int64x4"`, `"bool"`, `"void"`, `"handle"`,
    /// `"bfloat16"`, `"float8_e4m3fn"`). Returns `None` for anything else.
    pub fn parse(s: &str) -> Option<DataType> {
        let (base, lanes) = match s.rfind('x') {
            Some(i)
                if i + 1 < s.len()
                    && s[i + 1..].bytes().all(|b| b.is_ascii_digit())
                    && s[..i].bytes().last().is_some_and(|b| b.is_ascii_digit()) =>
            {
                let lanes: u16 = s[i + 1..].parse().ok()?;
                if lanes == 0 {
                    return None;
                }
                (&s[..i], lanes)
            }
            _ => (s, 1),
        };
        let scalar = match base {
            "bool" => DataType::BOOL,
            "void" => return if lanes == 1 { Some(DataType::VOID) } else { None },
            "handle" => DataType::HANDLE,
            "float8_e4m3fn" => DataType::new(TypeCode::Float8E4M3FN, 8),
            "float8_e5m2" => DataType::new(TypeCode::Float8E5M2, 8),
            "float4_e2m1fn" => DataType::new(TypeCode::Float4E2M1FN, 4),
            _ => {
                let (code, digits) = if let Some(d) = base.strip_prefix("uint") {
                    (TypeCode::UInt, d)
                } else if let Some(d) = base.strip_prefix("int") {
                    (TypeCode::Int, d)
                } else if let Some(d) = base.strip_prefix("bfloat") {
                    (TypeCode::BFloat, d)
                } else if let Some(d) = base.strip_prefix("float") {
                    (TypeCode::Float, d)
                } else {
                    return None;
                };
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let bits: u16 = digits.parse().ok()?;
                let ok = match code {
                    TypeCode::Int | TypeCode::UInt => matches!(bits, 1 | 4 | 8 | 16 | 32 | 64),
                    TypeCode::Float => matches!(bits, 16 | 32 | 64),
                    TypeCode::BFloat => bits == 16,
                    _ => false,
                };
                if !ok {
                    return None;
                }
                DataType::new(code, bits)
            }
        };
        Some(scalar.with_lanes(lanes))
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            TypeCode::Void => return f.write_str("void"),
            TypeCode::Bool => f.write_str("bool")?,
            TypeCode::Handle => f.write_str("handle")?,
            TypeCode::Int => write!(f, "int{}", self.bits)?,
            TypeCode::UInt => write!(f, "uint{}", self.bits)?,
            TypeCode::Float => write!(f, "float{}", self.bits)?,
            TypeCode::BFloat => write!(f, "bfloat{}", self.bits)?,
            TypeCode::Float8E4M3FN => f.write_str("float8_e4m3fn")?,
            TypeCode::Float8E5M2 => f.write_str("float8_e5m2")?,
            TypeCode::Float4E2M1FN => f.write_str("float4_e2m1fn")?,
        }
        if self.lanes > 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "float32",
            "float16",
            "bfloat16",
            "float64",
            "int8",
            "int32",
            "int64",
            "uint8",
            "bool",
            "void",
            "handle",
            "float32x4",
            "int64x2",
            "float8_e4m3fn",
            "uint1",
        ] {
            let t = DataType::parse(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(t.to_string(), s);
        }
    }

    #[test]
    fn rejects_nonsense() {
        for s in ["", "float", "float7", "int3", "x4", "float32x", "float32x0", "tensor", "intx4"] {
            assert!(DataType::parse(s).is_none(), "{s}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(DataType::BOOL.bytes(), 1);
        assert_eq!(DataType::FLOAT16.bytes(), 2);
        assert_eq!(DataType::FLOAT32.with_lanes(4).bytes(), 16);
    }
}
