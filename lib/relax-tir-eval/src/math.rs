//! The math functions of TIR intrinsics (`tir.exp`, `tir.erf`, `tir.pow`, ...) on
//! scalars, shared by the TIR interpreter and the reference kernels so both compute the
//! same numbers.
//!
//! A float function computes at the precision of its type (see [`crate::scalar`]):
//! `f64` for float64, `f32` for the others (then rounded to the type). `round` and
//! `nearbyint` round half to even, as numpy and LLVM's `nearbyint` do. `erf` comes from
//! the `libm` crate (the standard library has none).

use relax_ir::{DataType, Intrinsic};

use crate::scalar::{Scalar, float_op1, float_op2};

/// A unary float intrinsic applied at the precision of `dt`. `None` for intrinsics that
/// are not unary float functions.
///
/// `rsqrt` and `sigmoid` are the compositions TVM's LLVM lowering uses (`1 / sqrt(x)`,
/// `1 / (1 + exp(-x))`), each step rounded to the type, as half types compute them; so is
/// `tanh` of float16/bfloat16 (float32/float64 use the accurate `tanh`).
pub fn float_unary(name: Intrinsic, dt: DataType, x: f64) -> Option<Scalar> {
    let step = |v: Scalar| Scalar::Float(v.as_f64(), dt);
    match name {
        Intrinsic::Rsqrt => {
            let s = step(float_op1(dt, x, f32::sqrt, f64::sqrt));
            return Some(float_op2(dt, 1.0, s.as_f64(), |a, b| a / b, |a, b| a / b));
        }
        Intrinsic::Sigmoid => {
            let e = step(float_op1(dt, -x, f32::exp, f64::exp));
            let d = step(float_op2(dt, 1.0, e.as_f64(), |a, b| a + b, |a, b| a + b));
            return Some(float_op2(dt, 1.0, d.as_f64(), |a, b| a / b, |a, b| a / b));
        }
        Intrinsic::Tanh if dt.bits < 32 => {
            // TVM's LLVM lowering: Select(x >= 0, (1 - e^-2x) / (1 + e^-2x), (e^2x - 1) / (e^2x + 1)).
            let add = |a: f64, b: f64| step(float_op2(dt, a, b, |p, q| p + q, |p, q| p + q)).as_f64();
            let sub = |a: f64, b: f64| step(float_op2(dt, a, b, |p, q| p - q, |p, q| p - q)).as_f64();
            let div = |a: f64, b: f64| float_op2(dt, a, b, |p, q| p / q, |p, q| p / q);
            let exp = |a: f64| step(float_op1(dt, a, f32::exp, f64::exp)).as_f64();
            let mul = |a: f64, b: f64| step(float_op2(dt, a, b, |p, q| p * q, |p, q| p * q)).as_f64();
            return Some(if x >= 0.0 {
                let e = exp(mul(-2.0, x));
                div(sub(1.0, e), add(1.0, e))
            } else {
                let e = exp(mul(2.0, x));
                div(sub(e, 1.0), add(e, 1.0))
            });
        }
        _ => {}
    }
    type F32 = fn(f32) -> f32;
    type F64 = fn(f64) -> f64;
    let (f32op, f64op): (F32, F64) = match name {
        Intrinsic::Exp => (f32::exp, f64::exp),
        Intrinsic::Exp2 => (f32::exp2, f64::exp2),
        Intrinsic::Exp10 => (|x| 10f32.powf(x), |x| 10f64.powf(x)),
        Intrinsic::Expm1 => (f32::exp_m1, f64::exp_m1),
        Intrinsic::Log => (f32::ln, f64::ln),
        Intrinsic::Log2 => (f32::log2, f64::log2),
        Intrinsic::Log10 => (f32::log10, f64::log10),
        Intrinsic::Log1p => (f32::ln_1p, f64::ln_1p),
        Intrinsic::Sqrt => (f32::sqrt, f64::sqrt),
        Intrinsic::Tanh => (f32::tanh, f64::tanh),
        Intrinsic::Erf => (libm::erff, libm::erf),
        Intrinsic::Fabs | Intrinsic::Abs => (f32::abs, f64::abs),
        Intrinsic::Floor => (f32::floor, f64::floor),
        Intrinsic::Ceil => (f32::ceil, f64::ceil),
        Intrinsic::Round | Intrinsic::Nearbyint => (f32::round_ties_even, f64::round_ties_even),
        Intrinsic::Trunc => (f32::trunc, f64::trunc),
        Intrinsic::Sin => (f32::sin, f64::sin),
        Intrinsic::Cos => (f32::cos, f64::cos),
        Intrinsic::Tan => (f32::tan, f64::tan),
        Intrinsic::Asin => (f32::asin, f64::asin),
        Intrinsic::Acos => (f32::acos, f64::acos),
        Intrinsic::Atan => (f32::atan, f64::atan),
        Intrinsic::Sinh => (f32::sinh, f64::sinh),
        Intrinsic::Cosh => (f32::cosh, f64::cosh),
        Intrinsic::Asinh => (f32::asinh, f64::asinh),
        Intrinsic::Acosh => (f32::acosh, f64::acosh),
        Intrinsic::Atanh => (f32::atanh, f64::atanh),
        _ => return None,
    };
    Some(float_op1(dt, x, f32op, f64op))
}

/// A binary float intrinsic applied at the precision of `dt`.
pub fn float_binary(name: Intrinsic, dt: DataType, a: f64, b: f64) -> Option<Scalar> {
    type F32 = fn(f32, f32) -> f32;
    type F64 = fn(f64, f64) -> f64;
    let (f32op, f64op): (F32, F64) = match name {
        Intrinsic::Pow => (f32::powf, f64::powf),
        Intrinsic::Atan2 => (f32::atan2, f64::atan2),
        Intrinsic::Fmod => (|a, b| a % b, |a, b| a % b),
        Intrinsic::Copysign => (f32::copysign, f64::copysign),
        Intrinsic::Hypot => (f32::hypot, f64::hypot),
        Intrinsic::Nextafter => (libm::nextafterf, libm::nextafter),
        Intrinsic::Ldexp => (|a, b| a * 2f32.powi(b as i32), |a, b| a * 2f64.powi(b as i32)),
        _ => return None,
    };
    Some(float_op2(dt, a, b, f32op, f64op))
}

/// Bitwise and shift intrinsics on integers of type `dt` (`bitwise_and`, `shift_left`, ...).
pub fn int_binary(name: Intrinsic, a: Scalar, b: Scalar) -> Option<Scalar> {
    let dt = a.dtype();
    let (x, y) = (a.as_i128(), b.as_i128());
    let r = match name {
        Intrinsic::BitwiseAnd => x & y,
        Intrinsic::BitwiseOr => x | y,
        Intrinsic::BitwiseXor => x ^ y,
        Intrinsic::ShiftLeft => {
            if !(0..64).contains(&y) {
                0
            } else {
                x << y
            }
        }
        Intrinsic::ShiftRight => {
            if !(0..64).contains(&y) {
                if x < 0 { -1 } else { 0 }
            } else {
                x >> y
            }
        }
        _ => return None,
    };
    Some(Scalar::int(dt, r as i64))
}

/// Float classification: `isnan`, `isinf`, `isfinite`.
pub fn float_class(name: Intrinsic, x: f64) -> Option<bool> {
    Some(match name {
        Intrinsic::Isnan => x.is_nan(),
        Intrinsic::Isinf => x.is_infinite(),
        Intrinsic::Isfinite => x.is_finite(),
        _ => return None,
    })
}
