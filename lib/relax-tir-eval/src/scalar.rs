//! Typed scalars and their arithmetic, with the exact semantics of each dtype.
//!
//! * Integers are kept in an `i64` (a `uint64` above `i64::MAX` keeps its bits) and wrap
//!   around at their type's width after every operation. Division and modulo come in the
//!   truncating (`T.Div`, `T.truncmod`) and the flooring (`//`, `%`) kinds; dividing by
//!   zero is an error.
//! * `float64` computes in `f64`. `float32`, `float16` and `bfloat16` compute in `f32`,
//!   as LLVM does on a CPU (half types are promoted to `f32` for each operation), and the
//!   result is rounded to the type (ties to even). A float value is always exactly
//!   representable in its type.
//! * `bool` is an integer 0 or 1 (stored as a byte).

use relax_ir::prim::wrap_int;
use relax_ir::{BinOp, DataType, TypeCode};

/// A scalar value with its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// An integer or bool of the given type (uint64 keeps its bits).
    Int(i64, DataType),
    /// A float of the given type, exactly representable in it.
    Float(f64, DataType),
}

/// True for the float types the interpreter computes with.
pub fn is_supported_float(dt: DataType) -> bool {
    matches!((dt.code, dt.bits), (TypeCode::Float, 16 | 32 | 64) | (TypeCode::BFloat, 16))
}

/// True for the element types tensors may have in the interpreter.
pub fn is_supported_dtype(dt: DataType) -> bool {
    dt.lanes == 1
        && (is_supported_float(dt)
            || dt.is_bool()
            || (dt.is_int() && matches!(dt.bits, 8 | 16 | 32 | 64))
            || (dt.is_int() && dt.bits == 1))
}

/// Rounds a double to the nearest value of a float type (ties to even).
pub fn round_float(dt: DataType, v: f64) -> f64 {
    match (dt.code, dt.bits) {
        (TypeCode::Float, 32) => f64::from(v as f32),
        (TypeCode::Float, 16) => half::f16::from_f64(v).to_f64(),
        (TypeCode::BFloat, 16) => half::bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

impl Scalar {
    /// An integer of type `dt`, wrapped to its width.
    pub fn int(dt: DataType, v: i64) -> Scalar {
        if dt.is_float() {
            return Scalar::float(dt, v as f64);
        }
        Scalar::Int(wrap_int(dt, v), dt)
    }
    /// A float of type `dt`, rounded to it (for an integer type: converted).
    pub fn float(dt: DataType, v: f64) -> Scalar {
        if dt.is_float() { Scalar::Float(round_float(dt, v), dt) } else { Scalar::Int(0, dt).cast_from_f64(v) }
    }
    /// A bool.
    pub fn bool(b: bool) -> Scalar {
        Scalar::Int(i64::from(b), DataType::BOOL)
    }
    /// A value of type `dt` given as a double (rounded for floats, truncated for integers).
    pub fn from_f64(dt: DataType, v: f64) -> Scalar {
        Scalar::float(dt, v)
    }
    /// The type.
    pub fn dtype(self) -> DataType {
        match self {
            Scalar::Int(_, t) | Scalar::Float(_, t) => t,
        }
    }
    /// True for floats.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float(..))
    }
    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Float(v, _) => v,
            Scalar::Int(v, t) if t.is_uint() && t.bits == 64 => v as u64 as f64,
            Scalar::Int(v, _) => v as f64,
        }
    }
    /// The value as a wide integer (floats truncate toward zero, saturating).
    pub fn as_i128(self) -> i128 {
        match self {
            Scalar::Float(v, _) => {
                if v.is_nan() {
                    0
                } else {
                    v.trunc().clamp(-1.8e19, 1.8e19) as i128
                }
            }
            Scalar::Int(v, t) if t.is_uint() && t.bits == 64 => i128::from(v as u64),
            Scalar::Int(v, _) => i128::from(v),
        }
    }
    /// The value as an `i64` (an index or a shape dim).
    pub fn as_i64(self) -> i64 {
        self.as_i128() as i64
    }
    /// Truthiness: non-zero.
    pub fn is_true(self) -> bool {
        match self {
            Scalar::Float(v, _) => v != 0.0,
            Scalar::Int(v, _) => v != 0,
        }
    }
    fn cast_from_f64(self, v: f64) -> Scalar {
        let dt = self.dtype();
        if dt.is_bool() {
            return Scalar::bool(v != 0.0);
        }
        if v.is_nan() {
            return Scalar::Int(0, dt);
        }
        // Truncate toward zero; out-of-range values saturate before wrapping.
        let t = v.trunc().clamp(-1.8e19, 1.8e19) as i128;
        Scalar::Int(wrap_i128(dt, t), dt)
    }
    /// Converts to another type: integers wrap, floats round to nearest (ties to even),
    /// floats to integers truncate toward zero, anything to bool tests for non-zero.
    pub fn cast(self, to: DataType) -> Scalar {
        if to == self.dtype() {
            return self;
        }
        if to.is_bool() {
            return Scalar::bool(self.is_true());
        }
        if to.is_float() {
            return Scalar::Float(round_float(to, self.as_f64()), to);
        }
        match self {
            Scalar::Float(v, _) => Scalar::Int(0, to).cast_from_f64(v),
            Scalar::Int(..) => Scalar::Int(wrap_i128(to, self.as_i128()), to),
        }
    }
}

/// Wraps a wide integer to the width of `dt`.
pub fn wrap_i128(dt: DataType, v: i128) -> i64 {
    wrap_int(dt, v as i64)
}

/// Applies a float operation at the precision of `dt`: `f64` for float64, `f32` (then
/// rounded to the type) for the others.
pub fn float_op2(dt: DataType, a: f64, b: f64, f32op: fn(f32, f32) -> f32, f64op: fn(f64, f64) -> f64) -> Scalar {
    if dt.bits == 64 {
        Scalar::Float(f64op(a, b), dt)
    } else {
        Scalar::Float(round_float(dt, f64::from(f32op(a as f32, b as f32))), dt)
    }
}

/// Applies a unary float function at the precision of `dt` (see [`float_op2`]).
pub fn float_op1(dt: DataType, a: f64, f32op: fn(f32) -> f32, f64op: fn(f64) -> f64) -> Scalar {
    if dt.bits == 64 {
        Scalar::Float(f64op(a), dt)
    } else {
        Scalar::Float(round_float(dt, f64::from(f32op(a as f32))), dt)
    }
}

/// A comparison `op` (`Eq` ... `Ge`) of two numbers of the same kind.
fn compare<T: PartialOrd>(op: BinOp, x: T, y: T) -> bool {
    match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        _ => x >= y,
    }
}

/// Evaluates a binary operator of TIR on two scalars.
pub fn binary(op: BinOp, a: Scalar, b: Scalar) -> Result<Scalar, String> {
    let dt = a.dtype().common(b.dtype());
    let (a, b) = (a.cast(dt), b.cast(dt));
    if op.is_logical() {
        let r = match op {
            BinOp::And => a.is_true() && b.is_true(),
            _ => a.is_true() || b.is_true(),
        };
        return Ok(Scalar::bool(r));
    }
    if dt.is_float() {
        let (x, y) = (a.as_f64(), b.as_f64());
        if op.is_compare() {
            return Ok(Scalar::bool(compare(op, x, y)));
        }
        return Ok(match op {
            BinOp::Add => float_op2(dt, x, y, |p, q| p + q, |p, q| p + q),
            BinOp::Sub => float_op2(dt, x, y, |p, q| p - q, |p, q| p - q),
            BinOp::Mul => float_op2(dt, x, y, |p, q| p * q, |p, q| p * q),
            BinOp::Div => float_op2(dt, x, y, |p, q| p / q, |p, q| p / q),
            BinOp::Mod => float_op2(dt, x, y, |p, q| p % q, |p, q| p % q),
            BinOp::FloorDiv => float_op2(dt, x, y, |p, q| (p / q).floor(), |p, q| (p / q).floor()),
            BinOp::FloorMod => float_op2(dt, x, y, |p, q| p - (p / q).floor() * q, |p, q| p - (p / q).floor() * q),
            BinOp::Min => Scalar::Float(if x < y { x } else { y }, dt),
            _ => Scalar::Float(if x > y { x } else { y }, dt),
        });
    }
    let (x, y) = (a.as_i128(), b.as_i128());
    if op.is_compare() {
        return Ok(Scalar::bool(compare(op, x, y)));
    }
    let divisor = |y: i128| if y == 0 { Err("integer division by zero".to_string()) } else { Ok(y) };
    let r: i128 = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => x.wrapping_div(divisor(y)?),
        BinOp::Mod => x.wrapping_rem(divisor(y)?),
        BinOp::FloorDiv => x.div_euclid(divisor(y)?) - i128::from(y < 0 && x.rem_euclid(y) != 0),
        BinOp::FloorMod => {
            let d = divisor(y)?;
            let q = x.div_euclid(d) - i128::from(d < 0 && x.rem_euclid(d) != 0);
            x - q * d
        }
        BinOp::Min => x.min(y),
        _ => x.max(y),
    };
    Ok(Scalar::Int(wrap_i128(dt, r), dt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_semantics() {
        let i8v = |v| Scalar::int(DataType::INT8, v);
        assert_eq!(binary(BinOp::Add, i8v(127), i8v(1)).unwrap(), i8v(-128));
        let i = |v| Scalar::int(DataType::INT64, v);
        assert_eq!(binary(BinOp::FloorDiv, i(-7), i(2)).unwrap(), i(-4));
        assert_eq!(binary(BinOp::FloorMod, i(-7), i(2)).unwrap(), i(1));
        assert_eq!(binary(BinOp::FloorDiv, i(7), i(-2)).unwrap(), i(-4));
        assert_eq!(binary(BinOp::FloorMod, i(7), i(-2)).unwrap(), i(-1));
        assert_eq!(binary(BinOp::Div, i(-7), i(2)).unwrap(), i(-3));
        assert_eq!(binary(BinOp::Mod, i(-7), i(2)).unwrap(), i(-1));
        assert!(binary(BinOp::Div, i(1), i(0)).is_err());
        let u8v = |v| Scalar::int(DataType::UINT8, v);
        assert_eq!(binary(BinOp::Sub, u8v(0), u8v(1)).unwrap(), u8v(255));
        assert_eq!(binary(BinOp::Lt, u8v(200), u8v(100)).unwrap(), Scalar::bool(false));
    }

    #[test]
    fn float_semantics() {
        let h = |v| Scalar::float(DataType::FLOAT16, v);
        assert_eq!(h(0.1).as_f64(), 0.0999755859375);
        assert_eq!(binary(BinOp::Add, h(65504.0), h(65504.0)).unwrap().as_f64(), f64::INFINITY);
        let f = |v| Scalar::float(DataType::FLOAT32, v);
        assert_eq!(binary(BinOp::Add, f(0.1), f(0.2)).unwrap().as_f64(), f64::from(0.1f32 + 0.2f32));
        assert_eq!(f(2.5).cast(DataType::INT32), Scalar::int(DataType::INT32, 2));
        assert_eq!(f(-2.5).cast(DataType::INT32), Scalar::int(DataType::INT32, -2));
        assert_eq!(Scalar::int(DataType::INT32, 300).cast(DataType::INT8), Scalar::int(DataType::INT8, 44));
    }
}
