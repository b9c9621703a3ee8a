//! Elementwise kernels: unary ops, binary broadcasting ops, `where`, `clip`, `astype`,
//! and the elementwise activations (`relu`, `leakyrelu`, `silu`, `gelu`, `gelu_tanh`).
//!
//! Each scalar rule is the one TOPI's compute uses (see `relax-transform`'s
//! `legalize/elementwise.rs`, `binary.rs` and `nn.rs`), evaluated with the TIR
//! interpreter's scalar semantics.

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType, Intrinsic};

use super::{Kernel, KernelArgs};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::tir::intrinsic;
use crate::value::{Tensor, Value, numel, shape_text};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::ABS
        | ops::ACOS
        | ops::ACOSH
        | ops::ASIN
        | ops::ASINH
        | ops::ATAN
        | ops::ATANH
        | ops::COS
        | ops::COSH
        | ops::EXP
        | ops::SIN
        | ops::SINH
        | ops::TAN
        | ops::TANH
        | ops::SIGMOID
        | ops::CEIL
        | ops::FLOOR
        | ops::TRUNC
        | ops::ROUND
        | ops::ISNAN
        | ops::ISINF
        | ops::ISFINITE
        | ops::LOG
        | ops::SQRT
        | ops::RSQRT
        | ops::NEGATIVE
        | ops::LOGICAL_NOT
        | ops::BITWISE_NOT
        | ops::SIGN
        | ops::SQUARE
        | ops::ERF
        | ops::NN_RELU
        | ops::NN_SILU
        | ops::NN_GELU
        | ops::NN_GELU_TANH => unary,
        ops::NN_LEAKYRELU => leakyrelu,
        ops::ADD
        | ops::SUBTRACT
        | ops::MULTIPLY
        | ops::DIVIDE
        | ops::FLOOR_DIVIDE
        | ops::MOD
        | ops::FLOOR_MOD
        | ops::POWER
        | ops::ATAN2
        | ops::LOG_ADD_EXP
        | ops::MAXIMUM
        | ops::MINIMUM
        | ops::EQUAL
        | ops::NOT_EQUAL
        | ops::LESS
        | ops::LESS_EQUAL
        | ops::GREATER
        | ops::GREATER_EQUAL
        | ops::LOGICAL_AND
        | ops::LOGICAL_OR
        | ops::LOGICAL_XOR
        | ops::BITWISE_AND
        | ops::BITWISE_OR
        | ops::BITWISE_XOR
        | ops::LEFT_SHIFT
        | ops::RIGHT_SHIFT => binary_op,
        ops::WHERE => where_op,
        ops::CLIP => clip,
        ops::ASTYPE | ops::WRAP_PARAM => astype,
        _ => return None,
    })
}

/// A float constant of type `dt` (rounded to it).
fn fconst(dt: DataType, v: f64) -> Scalar {
    Scalar::float(dt, v)
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

fn call1(name: Intrinsic, x: Scalar) -> RunResult<Scalar> {
    intrinsic(name, x.dtype(), &[x]).ok_or_else(|| RunError::new(format!("`{}` of {}", name.name(), x.dtype())))
}

/// The TIR intrinsic a unary math op computes (its TOPI compute is one call of it).
const fn math_intrinsic(id: OpId) -> Option<Intrinsic> {
    Some(match id {
        ops::ACOS => Intrinsic::Acos,
        ops::ACOSH => Intrinsic::Acosh,
        ops::ASIN => Intrinsic::Asin,
        ops::ASINH => Intrinsic::Asinh,
        ops::ATAN => Intrinsic::Atan,
        ops::ATANH => Intrinsic::Atanh,
        ops::CEIL => Intrinsic::Ceil,
        ops::COS => Intrinsic::Cos,
        ops::COSH => Intrinsic::Cosh,
        ops::ERF => Intrinsic::Erf,
        ops::EXP => Intrinsic::Exp,
        ops::FLOOR => Intrinsic::Floor,
        ops::LOG => Intrinsic::Log,
        ops::RSQRT => Intrinsic::Rsqrt,
        ops::SIGMOID => Intrinsic::Sigmoid,
        ops::SIN => Intrinsic::Sin,
        ops::SINH => Intrinsic::Sinh,
        ops::SQRT => Intrinsic::Sqrt,
        ops::TAN => Intrinsic::Tan,
        ops::TANH => Intrinsic::Tanh,
        ops::TRUNC => Intrinsic::Trunc,
        _ => return None,
    })
}

/// `call1` of the intrinsic of a unary math op.
fn math1(op: OpId, x: Scalar) -> RunResult<Scalar> {
    let i = math_intrinsic(op).ok_or_else(|| RunError::new(format!("unknown unary op `{}`", op.name())))?;
    call1(i, x)
}

/// The scalar rule of a unary op.
pub fn unary_rule(name: OpId, x: Scalar) -> RunResult<Scalar> {
    let t = x.dtype();
    Ok(match name {
        ops::ABS if t.is_uint() || t.is_bool() => x,
        ops::ABS if t.is_int() => {
            if x.as_i64() >= 0 {
                x
            } else {
                Scalar::int(t, x.as_i64().wrapping_neg())
            }
        }
        ops::ABS => call1(Intrinsic::Fabs, x)?,
        ops::CEIL | ops::FLOOR | ops::TRUNC | ops::ROUND if !t.is_float() => x,
        ops::ROUND => call1(Intrinsic::Nearbyint, x)?,
        ops::ISNAN | ops::ISINF | ops::ISFINITE => {
            let v = x.as_f64();
            Scalar::bool(match name {
                ops::ISNAN => t.is_float() && v.is_nan(),
                ops::ISINF => t.is_float() && v.is_infinite(),
                _ => !t.is_float() || v.is_finite(),
            })
        }
        ops::LOG | ops::SQRT | ops::RSQRT if !t.is_float() => math1(name, x.cast(DataType::FLOAT32))?,
        ops::NEGATIVE => bin(BinOp::Mul, x, Scalar::int(t, -1))?,
        ops::LOGICAL_NOT => Scalar::bool(!x.is_true()),
        ops::BITWISE_NOT => Scalar::int(t, !x.as_i64()),
        ops::SIGN => {
            let z = Scalar::int(t, 0);
            if bin(BinOp::Gt, x, z)?.is_true() {
                Scalar::int(t, 1)
            } else if bin(BinOp::Lt, x, z)?.is_true() {
                Scalar::int(t, -1)
            } else {
                z
            }
        }
        ops::SQUARE => bin(BinOp::Mul, x, x)?,
        ops::NN_RELU => bin(BinOp::Max, x, Scalar::int(t, 0))?,
        ops::NN_SILU => bin(BinOp::Mul, x, call1(Intrinsic::Sigmoid, x)?)?,
        ops::NN_GELU => {
            let a = bin(BinOp::Mul, x, fconst(t, 0.5f64.sqrt()))?;
            let e = call1(Intrinsic::Erf, a)?;
            let eh = bin(BinOp::Mul, e, fconst(t, 0.5))?;
            let s = bin(BinOp::Add, fconst(t, 0.5), eh)?;
            bin(BinOp::Mul, x, s)?
        }
        ops::NN_GELU_TANH => {
            let a = bin(BinOp::Mul, fconst(t, 0.5), x)?;
            let b = bin(BinOp::Mul, fconst(t, (2.0 / std::f64::consts::PI).sqrt()), x)?;
            let c = bin(BinOp::Mul, fconst(t, 0.044715), x)?;
            let d = bin(BinOp::Mul, c, x)?;
            let e = bin(BinOp::Add, Scalar::int(t, 1), d)?;
            let f = bin(BinOp::Mul, b, e)?;
            let g = call1(Intrinsic::Tanh, f)?;
            let h = bin(BinOp::Add, fconst(t, 1.0), g)?;
            bin(BinOp::Mul, a, h)?
        }
        other => math1(other, x)?,
    })
}

/// Applies `f` to every element; the result has dtype `out`.
pub fn map(x: &Tensor, out: DataType, mut f: impl FnMut(Scalar) -> RunResult<Scalar>) -> RunResult<Tensor> {
    let vals = x.scalars();
    let mut res = Vec::with_capacity(vals.len());
    for v in vals {
        res.push(f(v)?);
    }
    Ok(Tensor::from_scalars(&x.shape, out, res))
}

fn unary(k: &KernelArgs<'_>) -> RunResult<Value> {
    let name = k.op;
    let x = k.tensor(0)?;
    let out = match name {
        ops::ISNAN | ops::ISINF | ops::ISFINITE | ops::LOGICAL_NOT => DataType::BOOL,
        ops::LOG | ops::SQRT | ops::RSQRT if !x.dtype.is_float() => DataType::FLOAT32,
        _ => x.dtype,
    };
    Ok(Value::Tensor(map(x, out, |v| unary_rule(name, v))?))
}

fn leakyrelu(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let alpha = k.attr_f64("alpha").unwrap_or(0.01);
    let t = x.dtype;
    Ok(Value::Tensor(map(x, t, |v| {
        if bin(BinOp::Gt, v, Scalar::int(DataType::INT32, 0))?.is_true() {
            Ok(v)
        } else {
            bin(BinOp::Mul, v, fconst(t, alpha))
        }
    })?))
}

/// numpy's broadcast of two shapes.
pub fn broadcast_shape(a: &[i64], b: &[i64]) -> RunResult<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(RunError::new(format!("shapes {} and {} do not broadcast", shape_text(a), shape_text(b))));
        };
    }
    Ok(out)
}

/// Strides (in elements) of `shape` read as a broadcast to rank `ndim`: 0 on broadcast dims.
pub fn broadcast_strides(shape: &[i64], ndim: usize) -> Vec<i64> {
    let st = crate::value::row_major_strides(shape);
    let mut out = vec![0; ndim];
    for (i, (&d, &s)) in shape.iter().zip(&st).enumerate() {
        let j = ndim - shape.len() + i;
        out[j] = if d == 1 { 0 } else { s };
    }
    out
}

/// Calls `f(out_flat, offsets)` for every element of `shape` in row-major order, where
/// `offsets[k]` is the flat element index into operand `k` with the given strides.
pub fn for_each(
    shape: &[i64],
    strides: &[Vec<i64>],
    mut f: impl FnMut(usize, &[usize]) -> RunResult<()>,
) -> RunResult<()> {
    let n = numel(shape);
    let nd = shape.len();
    let mut idx = vec![0i64; nd];
    let mut offs = vec![0usize; strides.len()];
    for flat in 0..n {
        for (k, s) in strides.iter().enumerate() {
            offs[k] = idx.iter().zip(s).map(|(&i, &st)| i * st).sum::<i64>() as usize;
        }
        f(flat, &offs)?;
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(())
}

/// The scalar rule of a binary op.
pub fn binary_rule(name: OpId, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    let int = !a.dtype().is_float();
    Ok(match name {
        ops::ADD => bin(BinOp::Add, a, b)?,
        ops::SUBTRACT => bin(BinOp::Sub, a, b)?,
        ops::MULTIPLY => bin(BinOp::Mul, a, b)?,
        ops::DIVIDE => bin(BinOp::Div, a, b)?,
        ops::FLOOR_DIVIDE if int => bin(BinOp::FloorDiv, a, b)?,
        ops::FLOOR_DIVIDE => call1(Intrinsic::Floor, bin(BinOp::Div, a, b)?)?,
        ops::MOD => bin(BinOp::Mod, a, b)?,
        ops::FLOOR_MOD if int => bin(BinOp::FloorMod, a, b)?,
        ops::FLOOR_MOD => {
            let q = call1(Intrinsic::Floor, bin(BinOp::Div, a, b)?)?;
            bin(BinOp::Sub, a, bin(BinOp::Mul, q, b)?)?
        }
        ops::POWER | ops::ATAN2 => {
            let op = if name == ops::POWER { Intrinsic::Pow } else { Intrinsic::Atan2 };
            intrinsic(op, a.dtype(), &[a, b])
                .ok_or_else(|| RunError::new(format!("`{}` of {}", op.name(), a.dtype())))?
        }
        ops::LOG_ADD_EXP => {
            call1(Intrinsic::Log, bin(BinOp::Add, call1(Intrinsic::Exp, a)?, call1(Intrinsic::Exp, b)?)?)?
        }
        ops::MAXIMUM => bin(BinOp::Max, a, b)?,
        ops::MINIMUM => bin(BinOp::Min, a, b)?,
        ops::EQUAL => bin(BinOp::Eq, a, b)?,
        ops::NOT_EQUAL => bin(BinOp::Ne, a, b)?,
        ops::LESS => bin(BinOp::Lt, a, b)?,
        ops::LESS_EQUAL => bin(BinOp::Le, a, b)?,
        ops::GREATER => bin(BinOp::Gt, a, b)?,
        ops::GREATER_EQUAL => bin(BinOp::Ge, a, b)?,
        ops::LOGICAL_AND => bin(BinOp::And, a, b)?,
        ops::LOGICAL_OR => bin(BinOp::Or, a, b)?,
        ops::LOGICAL_XOR | ops::BITWISE_XOR => int_op(Intrinsic::BitwiseXor, a, b)?,
        ops::BITWISE_AND => int_op(Intrinsic::BitwiseAnd, a, b)?,
        ops::BITWISE_OR => int_op(Intrinsic::BitwiseOr, a, b)?,
        ops::LEFT_SHIFT => int_op(Intrinsic::ShiftLeft, a, b)?,
        ops::RIGHT_SHIFT => int_op(Intrinsic::ShiftRight, a, b)?,
        other => return Err(RunError::new(format!("unknown binary op `{}`", other.name()))),
    })
}

fn int_op(name: Intrinsic, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    crate::math::int_binary(name, a, b.cast(a.dtype()))
        .ok_or_else(|| RunError::new(format!("`{}` of {}", name.name(), a.dtype())))
}

/// Broadcasts `f` over two tensors.
pub fn broadcast2(
    a: &Tensor,
    b: &Tensor,
    out: DataType,
    mut f: impl FnMut(Scalar, Scalar) -> RunResult<Scalar>,
) -> RunResult<Tensor> {
    let shape = broadcast_shape(&a.shape, &b.shape)?;
    let (va, vb) = (a.scalars(), b.scalars());
    let st = vec![broadcast_strides(&a.shape, shape.len()), broadcast_strides(&b.shape, shape.len())];
    let mut res = Vec::with_capacity(numel(&shape));
    for_each(&shape, &st, |_, o| {
        res.push(f(va[o[0]], vb[o[1]])?);
        Ok(())
    })?;
    Ok(Tensor::from_scalars(&shape, out, res))
}

fn binary_op(k: &KernelArgs<'_>) -> RunResult<Value> {
    let name = k.op;
    // A `R.prim_value` operand (`b * 2.0` in TVMScript) is a 0-d tensor, as TVM's
    // legalization takes it.
    let prim = |i: usize| match k.args.get(i) {
        Some(Value::Prim(s)) => Some(Tensor::from_scalars(&[], s.dtype(), [*s])),
        _ => None,
    };
    let (pa, pb) = (prim(0), prim(1));
    let a = match &pa {
        Some(t) => t,
        None => k.tensor(0)?,
    };
    let b = match &pb {
        Some(t) => t,
        None => k.tensor(1)?,
    };
    // The result's dtype is the tensor operand's when the other is a prim value.
    let a_dtype = if pa.is_some() && pb.is_none() { b.dtype } else { a.dtype };
    let compare = matches!(
        name,
        ops::EQUAL
            | ops::NOT_EQUAL
            | ops::LESS
            | ops::LESS_EQUAL
            | ops::GREATER
            | ops::GREATER_EQUAL
            | ops::LOGICAL_AND
            | ops::LOGICAL_OR
    );
    let out = if compare { DataType::BOOL } else { a_dtype };
    Ok(Value::Tensor(broadcast2(a, b, out, |x, y| binary_rule(name, x, y))?))
}

fn where_op(k: &KernelArgs<'_>) -> RunResult<Value> {
    let c = k.tensor(0)?;
    let a = k.tensor(1)?;
    let b = k.tensor(2)?;
    let s1 = broadcast_shape(&c.shape, &a.shape)?;
    let shape = broadcast_shape(&s1, &b.shape)?;
    let n = shape.len();
    let (vc, va, vb) = (c.scalars(), a.scalars(), b.scalars());
    let st = vec![broadcast_strides(&c.shape, n), broadcast_strides(&a.shape, n), broadcast_strides(&b.shape, n)];
    let mut res = Vec::with_capacity(numel(&shape));
    for_each(&shape, &st, |_, o| {
        res.push(if vc[o[0]].is_true() { va[o[1]] } else { vb[o[2]] });
        Ok(())
    })?;
    Ok(Value::Tensor(Tensor::from_scalars(&shape, a.dtype, res)))
}

fn clip(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let lo = k.scalar(1)?;
    let hi = k.scalar(2)?;
    let t = x.dtype;
    Ok(Value::Tensor(map(x, t, |v| bin(BinOp::Max, bin(BinOp::Min, v, hi.cast(t))?, lo.cast(t)))?))
}

fn astype(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let dt = k.attr_dtype("dtype").or(k.out_dtype()).unwrap_or(DataType::FLOAT32);
    Ok(Value::Tensor(map(x, dt, |v| Ok(v.cast(dt)))?))
}
