//! TIR intrinsics: the closed set of TIR ops ([`Intrinsic`], as naga's `MathFunction`)
//! that the TIR evaluator, the LLVM, NVPTX and SPIR-V code generators, legalization and
//! the simplifiers implement, and [`TirOp`], the op of a TIR call node.
//!
//! A call in TVM's text names any op of TVM's registry (`T.exp`, `T.ptx.mma`,
//! `T.tvm_struct_get`). The ops of [`Intrinsic`] are the ones this project gives a
//! meaning to; every other op is kept by name ([`TirOp::Other`]) so that text printed by
//! TVM reads and prints back, and an engine that meets one reports it as unsupported. The
//! prefix TVM puts on op names (`tir.` in 0.25's registry, `tirx.` in 0.27's) is not part
//! of an intrinsic's identity.

use std::borrow::Cow;

/// Declares the intrinsics: `Variant = "name"` (the op name without its `tir.` prefix).
macro_rules! intrinsics {
    ($($(#[$doc:meta])* $v:ident = $name:literal,)*) => {
        /// A TIR intrinsic the project implements.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Intrinsic {
            $($(#[$doc])* $v,)*
        }

        impl Intrinsic {
            /// Every intrinsic.
            pub const ALL: &'static [Intrinsic] = &[$(Intrinsic::$v,)*];

            /// The op name without its prefix (`exp`, `if_then_else`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Intrinsic::$v => $name,)*
                }
            }

            /// The intrinsic named `short` (without prefix).
            pub fn from_name(short: &str) -> Option<Intrinsic> {
                match short {
                    $($name => Some(Intrinsic::$v),)*
                    _ => None,
                }
            }
        }
    };
}

intrinsics! {
    /// `|x|` of a float (`fabs`).
    Fabs = "fabs",
    /// `|x|`.
    Abs = "abs",
    /// `e^x`.
    Exp = "exp",
    /// `2^x`.
    Exp2 = "exp2",
    /// `10^x`.
    Exp10 = "exp10",
    /// `e^x - 1`.
    Expm1 = "expm1",
    /// Natural logarithm.
    Log = "log",
    /// Base-2 logarithm.
    Log2 = "log2",
    /// Base-10 logarithm.
    Log10 = "log10",
    /// `ln(1 + x)`.
    Log1p = "log1p",
    /// Square root.
    Sqrt = "sqrt",
    /// `1 / sqrt(x)`.
    Rsqrt = "rsqrt",
    /// `1 / (1 + e^-x)`.
    Sigmoid = "sigmoid",
    /// Hyperbolic tangent.
    Tanh = "tanh",
    /// The error function.
    Erf = "erf",
    /// Round down.
    Floor = "floor",
    /// Round up.
    Ceil = "ceil",
    /// Round half to even (TVM's `round` lowers to `nearbyint`).
    Round = "round",
    /// Round half to even.
    Nearbyint = "nearbyint",
    /// Round toward zero.
    Trunc = "trunc",
    /// Sine.
    Sin = "sin",
    /// Cosine.
    Cos = "cos",
    /// Tangent.
    Tan = "tan",
    /// Arc sine.
    Asin = "asin",
    /// Arc cosine.
    Acos = "acos",
    /// Arc tangent.
    Atan = "atan",
    /// Hyperbolic sine.
    Sinh = "sinh",
    /// Hyperbolic cosine.
    Cosh = "cosh",
    /// Inverse hyperbolic sine.
    Asinh = "asinh",
    /// Inverse hyperbolic cosine.
    Acosh = "acosh",
    /// Inverse hyperbolic tangent.
    Atanh = "atanh",
    /// True for NaN.
    Isnan = "isnan",
    /// True for an infinity.
    Isinf = "isinf",
    /// True for a finite value (and any integer).
    Isfinite = "isfinite",
    /// Number of set bits.
    Popcount = "popcount",
    /// `x^y`.
    Pow = "pow",
    /// `atan(y / x)` with the quadrant.
    Atan2 = "atan2",
    /// Float remainder.
    Fmod = "fmod",
    /// `x` with the sign of `y`.
    Copysign = "copysign",
    /// `sqrt(x^2 + y^2)`.
    Hypot = "hypot",
    /// The next float after `x` toward `y`.
    Nextafter = "nextafter",
    /// `x * 2^e`.
    Ldexp = "ldexp",
    /// Bitwise and.
    BitwiseAnd = "bitwise_and",
    /// Bitwise or.
    BitwiseOr = "bitwise_or",
    /// Bitwise exclusive or.
    BitwiseXor = "bitwise_xor",
    /// Bitwise not.
    BitwiseNot = "bitwise_not",
    /// `x << y`.
    ShiftLeft = "shift_left",
    /// `x >> y` (arithmetic for signed types).
    ShiftRight = "shift_right",
    /// `cond ? a : b`, evaluating only the chosen side.
    IfThenElse = "if_then_else",
    /// A branch hint: the value of its argument.
    Likely = "likely",
    /// An assumption: the value of its argument.
    Assume = "assume",
    /// The bits of the argument read as the call's dtype.
    Reinterpret = "reinterpret",
    /// `return` of a scalar PrimFunc.
    Ret = "ret",
    /// A storage barrier (`__syncthreads` on GPUs).
    TvmStorageSync = "tvm_storage_sync",
    /// A call of a C function by name (first argument).
    CallExtern = "call_extern",
    /// A call of a pure C function by name (first argument).
    CallPureExtern = "call_pure_extern",
}

/// The op of a TIR call node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TirOp {
    /// An intrinsic the project implements.
    Intrinsic(Intrinsic),
    /// Any other op, by its full name as written (`tir.tvm_struct_get`, `tirx.ptx_mma`).
    Other(String),
}

impl TirOp {
    /// The op of a full name (`tir.exp`, `tirx.exp`): an intrinsic when the name without
    /// its prefix is one.
    pub fn from_name(full: &str) -> TirOp {
        let short = full.strip_prefix("tirx.").or_else(|| full.strip_prefix("tir.")).unwrap_or(full);
        match Intrinsic::from_name(short) {
            Some(i) => TirOp::Intrinsic(i),
            None => TirOp::Other(full.to_string()),
        }
    }

    /// The full name (`tir.exp` for an intrinsic).
    pub fn name(&self) -> Cow<'_, str> {
        match self {
            TirOp::Intrinsic(i) => Cow::Owned(format!("tir.{}", i.name())),
            TirOp::Other(n) => Cow::Borrowed(n),
        }
    }

    /// The name without its `tir.` / `tirx.` prefix (`exp`).
    pub fn short_name(&self) -> &str {
        match self {
            TirOp::Intrinsic(i) => i.name(),
            TirOp::Other(n) => n.strip_prefix("tirx.").or_else(|| n.strip_prefix("tir.")).unwrap_or(n),
        }
    }

    /// The intrinsic, when the op is one.
    pub fn intrinsic(&self) -> Option<Intrinsic> {
        match self {
            TirOp::Intrinsic(i) => Some(*i),
            TirOp::Other(_) => None,
        }
    }

    /// True when the op is the intrinsic `i`.
    pub fn is(&self, i: Intrinsic) -> bool {
        *self == TirOp::Intrinsic(i)
    }
}

impl From<Intrinsic> for TirOp {
    fn from(i: Intrinsic) -> TirOp {
        TirOp::Intrinsic(i)
    }
}

impl std::fmt::Display for Intrinsic {
    /// The op name without prefix (`exp`), as `T.exp` spells it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for TirOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &i in Intrinsic::ALL {
            assert_eq!(Intrinsic::from_name(i.name()), Some(i));
            assert_eq!(TirOp::from_name(&format!("tir.{}", i.name())), TirOp::Intrinsic(i));
            assert_eq!(TirOp::from_name(&format!("tirx.{}", i.name())), TirOp::Intrinsic(i));
        }
        assert_eq!(TirOp::from_name("tir.tvm_struct_get"), TirOp::Other("tir.tvm_struct_get".into()));
        assert_eq!(TirOp::from_name("tirx.ptx_mma").short_name(), "ptx_mma");
        assert_eq!(TirOp::from(Intrinsic::Exp).name(), "tir.exp");
    }
}
