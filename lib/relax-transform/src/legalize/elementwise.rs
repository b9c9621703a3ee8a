//! Unary elementwise ops (`legalize_ops/unary.py`, `datatype.py`; TOPI's `math.py`,
//! `elemwise.h`).
//!
//! Most are `te.compute(x.shape, lambda *i: te.<f>(x(*i)))`: a stage named `compute`
//! over `i0, i1, ...`, in a PrimFunc named `tir_<op>` (`erf` and `cast` keep their
//! names). The exceptions, as in TOPI:
//! * `logical_not`, `bitwise_not`, `sign`: C++ computes `T_<op>` over `ax0, ...`;
//! * `square` is `x * x`, TOPI's broadcast `multiply` (`T_multiply`);
//! * `negative` is Python's `-x`, i.e. `x * -1`;
//! * `log`, `sqrt`, `rsqrt` of an integer tensor first cast it to `float32` (a stage
//!   of its own);
//! * `erf` of `float16` computes in `float32` (three stages);
//! * `abs`, `floor`, `ceil`, `round`, `trunc`, `isnan`, `isinf`, `isfinite` follow
//!   `tirx/op/op.cc`: integer inputs are passed through or give constants, `abs` of an
//!   integer is `T.Select(0 <= x, x, 0 - x)`;
//! * `clip(x, lo, hi)` is `T.max(T.min(x, T.Cast(hi)), T.Cast(lo))`.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::{DataType, PrimExpr};

use super::cx::Cx;
use super::te::{Axes, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of a unary op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::ABS => |cx| intrin(cx, "tir_abs", abs),
        ops::ACOS => |cx| call(cx, "tir_acos", Intrinsic::Acos),
        ops::ACOSH => |cx| call(cx, "tir_acosh", Intrinsic::Acosh),
        ops::ASIN => |cx| call(cx, "tir_asin", Intrinsic::Asin),
        ops::ASINH => |cx| call(cx, "tir_asinh", Intrinsic::Asinh),
        ops::ATAN => |cx| call(cx, "tir_atan", Intrinsic::Atan),
        ops::ATANH => |cx| call(cx, "tir_atanh", Intrinsic::Atanh),
        ops::COS => |cx| call(cx, "tir_cos", Intrinsic::Cos),
        ops::COSH => |cx| call(cx, "tir_cosh", Intrinsic::Cosh),
        ops::EXP => |cx| call(cx, "tir_exp", Intrinsic::Exp),
        ops::SIN => |cx| call(cx, "tir_sin", Intrinsic::Sin),
        ops::SINH => |cx| call(cx, "tir_sinh", Intrinsic::Sinh),
        ops::TAN => |cx| call(cx, "tir_tan", Intrinsic::Tan),
        ops::TANH => |cx| call(cx, "tir_tanh", Intrinsic::Tanh),
        ops::SIGMOID => |cx| call(cx, "tir_sigmoid", Intrinsic::Sigmoid),
        ops::CEIL => |cx| intrin(cx, "tir_ceil", |te, x| float_only(te, x, Intrinsic::Ceil)),
        ops::FLOOR => |cx| intrin(cx, "tir_floor", |te, x| float_only(te, x, Intrinsic::Floor)),
        ops::TRUNC => |cx| intrin(cx, "tir_trunc", |te, x| float_only(te, x, Intrinsic::Trunc)),
        ops::ROUND => |cx| intrin(cx, "tir_round", |te, x| float_only(te, x, Intrinsic::Nearbyint)),
        ops::ISNAN => |cx| intrin(cx, "tir_isnan", isnan),
        ops::ISINF => |cx| intrin(cx, "tir_isinf", isinf),
        ops::ISFINITE => |cx| {
            intrin(cx, "tir_isfinite", |te, x| {
                let inf = isinf(te, x);
                let a = te.pool.not(inf);
                let nan = isnan(te, x);
                let b = te.pool.not(nan);
                te.bin(BinOp::And, a, b)
            })
        },
        ops::LOG => |cx| float_call(cx, "tir_log", Intrinsic::Log),
        ops::SQRT => |cx| float_call(cx, "tir_sqrt", Intrinsic::Sqrt),
        ops::RSQRT => |cx| float_call(cx, "tir_rsqrt", Intrinsic::Rsqrt),
        ops::NEGATIVE => |cx| {
            intrin(cx, "tir_negative", |te, x| {
                let t = te.pool.dtype(x);
                let m1 = te.const_i(t, -1);
                te.mul(x, m1)
            })
        },
        ops::LOGICAL_NOT => |cx| {
            let x = cx.tensor(0)?;
            let shape = cx.te.shape(x);
            let y = cx.te.compute("T_logical_not", shape, Axes::Ax, |te, i| {
                let v = te.load(x, i);
                te.pool.not(v)
            });
            Lowered::one("tir_logical_not", y)
        },
        ops::BITWISE_NOT => |cx| {
            let x = cx.tensor(0)?;
            let shape = cx.te.shape(x);
            let y = cx.te.compute("T_bitwise_not", shape, Axes::Ax, |te, i| {
                let v = te.load(x, i);
                te.call(Intrinsic::BitwiseNot, &[v])
            });
            Lowered::one("tir_bitwise_not", y)
        },
        ops::SIGN => |cx| {
            let x = cx.tensor(0)?;
            let shape = cx.te.shape(x);
            let y = cx.te.compute("T_sign", shape, Axes::Ax, |te, i| {
                let v = te.load(x, i);
                sign(te, v)
            });
            Lowered::one("tir_sign", y)
        },
        ops::SQUARE => |cx| {
            let x = cx.tensor(0)?;
            let shape = cx.te.shape(x);
            let y = cx.te.compute("T_multiply", shape, Axes::Ax, |te, i| {
                let a = te.load(x, i);
                let b = te.load(x, i);
                te.mul(a, b)
            });
            Lowered::one("tir_square", y)
        },
        ops::CLIP => clip,
        ops::ERF => erf,
        ops::ASTYPE => astype,
        _ => return None,
    })
}

/// `te.compute(x.shape, lambda *i: f(x(*i)))` named `compute`.
fn intrin(cx: &mut Cx, name: &str, f: fn(&mut Te, PrimExpr) -> PrimExpr) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let y = map(&mut cx.te, x, f);
    Lowered::one(name, y)
}

fn map(te: &mut Te, x: Tensor, f: impl FnOnce(&mut Te, PrimExpr) -> PrimExpr) -> Tensor {
    let shape = te.shape(x);
    te.compute("compute", shape, Axes::I, |te, i| {
        let v = te.load(x, i);
        f(te, v)
    })
}

/// A float intrinsic `T.<op>(x)`.
fn call(cx: &mut Cx, name: &str, op: Intrinsic) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let y = map(&mut cx.te, x, |te, v| te.call(op, &[v]));
    Lowered::one(name, y)
}

/// `log`, `sqrt`, `rsqrt`: integer inputs are first cast to `float32`.
fn float_call(cx: &mut Cx, name: &str, op: Intrinsic) -> Option<Lowered> {
    let mut x = cx.tensor(0)?;
    if !cx.te.dtype(x).is_float() {
        x = map(&mut cx.te, x, |te, v| te.cast(DataType::FLOAT32, v));
    }
    let y = map(&mut cx.te, x, |te, v| te.call(op, &[v]));
    Lowered::one(name, y)
}

/// `floor`, `ceil`, `round`, `trunc`: the identity on integers.
fn float_only(te: &mut Te, x: PrimExpr, op: Intrinsic) -> PrimExpr {
    let t = te.pool.dtype(x);
    if t.is_int() || t.is_bool() {
        return x;
    }
    te.call(op, &[x])
}

/// `tvm.tirx.abs`.
fn abs(te: &mut Te, x: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    if t.is_uint() {
        return x;
    }
    if t.is_int() {
        let zero = te.const_i(t, 0);
        let c = te.bin(BinOp::Ge, x, zero);
        let n = te.pool.neg(x);
        return te.select(c, x, n);
    }
    te.call(Intrinsic::Fabs, &[x])
}

/// `tvm.tirx.isnan`.
fn isnan(te: &mut Te, x: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    if !t.is_float() {
        return te.pool.bool_const(false);
    }
    let arg = if t.bits == 16 { te.cast(DataType::FLOAT32, x) } else { x };
    te.call_typed(DataType::BOOL, Intrinsic::Isnan, &[arg])
}

/// `tvm.tirx.isinf`: `abs(x) == inf and not isnan(x)`.
fn isinf(te: &mut Te, x: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    if !t.is_float() {
        return te.pool.bool_const(false);
    }
    let a = abs(te, x);
    let inf = te.pool.float(t, f64::INFINITY);
    let eq = te.bin(BinOp::Eq, a, inf);
    let nan = isnan(te, x);
    let not_nan = te.pool.not(nan);
    te.bin(BinOp::And, eq, not_nan)
}

/// TOPI's `sign`: `Select(x > 0, 1, Select(x < 0, -1, 0))`.
fn sign(te: &mut Te, x: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    let zero = te.const_i(t, 0);
    let one = te.const_i(t, 1);
    let minus_one = te.const_i(t, -1);
    let lt = te.bin(BinOp::Lt, x, zero);
    let inner = te.select(lt, minus_one, zero);
    let gt = te.bin(BinOp::Gt, x, zero);
    te.select(gt, one, inner)
}

fn clip(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let lo = cx.prim(1)?;
    let hi = cx.prim(2)?;
    let shape = cx.te.shape(x);
    let y = cx.te.compute("compute", shape, Axes::I, |te, i| {
        let v = te.load(x, i);
        let t = te.pool.dtype(v);
        let hi = te.pool.raw(PrimExprData::Cast(t, hi));
        let lo = te.pool.raw(PrimExprData::Cast(t, lo));
        let m = te.bin(BinOp::Min, v, hi);
        te.bin(BinOp::Max, m, lo)
    });
    Lowered::one("tir_clip", y)
}

fn erf(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    if cx.te.dtype(x) == DataType::FLOAT16 {
        let a = map(&mut cx.te, x, |te, v| te.cast(DataType::FLOAT32, v));
        let b = map(&mut cx.te, a, |te, v| te.call(Intrinsic::Erf, &[v]));
        let c = map(&mut cx.te, b, |te, v| te.cast(DataType::FLOAT16, v));
        return Lowered::one("erf", c);
    }
    let y = map(&mut cx.te, x, |te, v| te.call(Intrinsic::Erf, &[v]));
    Lowered::one("erf", y)
}

/// `relax.const(v, dtype)`: a scalar constant (what `astype` of a scalar constant gives).
pub fn scalar_constant(v: f64, dtype: DataType) -> Option<relax_ir::ConstData> {
    let bytes: Vec<u8> = match (dtype.code, dtype.bits) {
        (relax_ir::TypeCode::Float, 32) => (v as f32).to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Float, 64) => v.to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Int, 8) => (v as i8).to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Int, 16) => (v as i16).to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Int, 32) => (v as i32).to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Int, 64) => (v as i64).to_le_bytes().to_vec(),
        (relax_ir::TypeCode::Bool, _) => vec![u8::from(v != 0.0)],
        _ => return None,
    };
    Some(relax_ir::ConstData { dtype, shape: Some(Vec::new()), payload: relax_ir::ConstPayload::Data(bytes) })
}

fn astype(cx: &mut Cx) -> Option<Lowered> {
    let dtype = cx.attr_dtype("dtype")?;
    let x = cx.tensor(0)?;
    let y = map(&mut cx.te, x, |te, v| te.cast(dtype, v));
    Lowered::one("cast", y)
}
