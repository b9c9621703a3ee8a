//! Creation ops: `full`, `ones`, `zeros` (the given shape), the `*_like` ops (the
//! input's type, optionally with a new dtype), `arange` (length
//! `ceil((end - start) / step)`, simplified), `tril` / `triu` (the input's type).

use crate::dtype::DataType;
use crate::entities::Ty;
use crate::intrinsic::Intrinsic;
use crate::prim::{BinOp, PrimExprData};
use crate::ty::TyData;

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a creation op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::FULL => full,
        ops::ONES | ops::ZEROS => ones_zeros,
        ops::FULL_LIKE => full_like,
        ops::ONES_LIKE | ops::ZEROS_LIKE => like,
        ops::ARANGE => arange,
        ops::TRIL | ops::TRIU => tril_triu,
        ops::EYE => eye,
        ops::EYE_LIKE => eye_like,
        ops::HAMMING_WINDOW => hamming_window,
        _ => return None,
    }))
}

fn full(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ndim = cx.shape_arg_ndim(0)?;
    let fill = cx.tensor_arg(1)?;
    if fill.ndim != 0 {
        return Err(cx.err(format!("expects a scalar (rank 0) fill value, but was given {}", cx.q(fill.ty))));
    }
    let dtype = cx.attr_dtype("dtype").unwrap_or(fill.dtype);
    let shape = cx.shape_arg_as_shape(0);
    Ok(cx.tensor(shape, dtype, ndim, fill.vdevice))
}

fn ones_zeros(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ndim = cx.shape_arg_ndim(0)?;
    let Some(dtype) = cx.attr_dtype("dtype") else { return Err(cx.err("needs a `dtype`")) };
    let shape = cx.shape_arg_as_shape(0);
    Ok(cx.tensor(shape, dtype, ndim, None))
}

fn full_like(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let fill = cx.tensor_arg(1)?;
    if fill.ndim != 0 {
        return Err(cx.err(format!("expects a scalar (rank 0) fill value, but was given {}", cx.q(fill.ty))));
    }
    with_dtype(cx, x.ty)
}

fn like(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    with_dtype(cx, x.ty)
}

/// `t` with the `dtype` attribute's dtype, when given.
fn with_dtype(cx: &mut OpCx<'_>, t: Ty) -> Result<Ty, InferError> {
    let Some(dtype) = cx.attr_dtype("dtype") else { return Ok(t) };
    match cx.f.pool.ty(t).clone() {
        TyData::Tensor { shape, ndim, vdevice, .. } => Ok(cx.tensor(shape, dtype, ndim, vdevice)),
        _ => Ok(t),
    }
}

fn arange(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let mut vals = Vec::with_capacity(3);
    for i in 0..3 {
        match cx.prim_arg(i) {
            Some(v) => vals.push(v),
            None => {
                let t = cx.arg_ty(i);
                // A scalar of unknown value: the length is unknown.
                if let TyData::Prim { .. } = cx.f.pool.ty(t) {
                    let dtype = arange_dtype(cx, &[]);
                    return Ok(cx.tensor_ndim(dtype, 1, None));
                }
                return Err(cx.err(format!("expects a scalar for `{}`, but was given {}", cx.arg_name(i), cx.q(t))));
            }
        }
    }
    let dtype = arange_dtype(cx, &vals);
    let (start, end, step) = (vals[0], vals[1], vals[2]);
    let all_int = vals.iter().all(|&v| cx.f.pool.dtype(v).is_signed_int());
    let n = if all_int {
        // floordiv(end - start + step - 1, step)
        let d = cx.bin(BinOp::Sub, end, start);
        let d = cx.bin(BinOp::Add, d, step);
        let one = cx.f.pool.int(cx.f.pool.dtype(d), 1);
        let d = cx.bin(BinOp::Sub, d, one);
        cx.bin(BinOp::FloorDiv, d, step)
    } else {
        // int64(ceil(float32(end - start) / step))
        let d = cx.bin(BinOp::Sub, end, start);
        let d = cx.f.pool.cast(DataType::FLOAT32, d);
        let q = cx.bin(BinOp::Div, d, step);
        let c = match *cx.f.pool.prim(q) {
            PrimExprData::Float(t, f) => cx.f.pool.float(t, f.get().ceil()),
            _ => {
                let t = cx.f.pool.dtype(q);
                cx.f.pool.raw(PrimExprData::Call { dtype: t, op: Intrinsic::Ceil.into(), args: vec![q] })
            }
        };
        cx.f.pool.cast(DataType::INT64, c)
    };
    let n = cx.simplify(n);
    let n = super::simplify::as_index(&mut cx.f.pool, n);
    Ok(cx.tensor_dims(vec![n], dtype, None))
}

/// The dtype attribute, or as TVM's Python `arange` picks it: `int64` when every bound
/// is an integer, else `float32`.
fn arange_dtype(cx: &OpCx<'_>, vals: &[crate::entities::PrimExpr]) -> DataType {
    if let Some(t) = cx.attr_dtype("dtype") {
        return t;
    }
    if !vals.is_empty() && vals.iter().all(|&v| cx.f.pool.dtype(v).is_signed_int()) {
        DataType::INT64
    } else {
        DataType::FLOAT32
    }
}

fn tril_triu(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let k = cx.arg_ty(1);
    if !matches!(cx.f.pool.ty(k), TyData::Prim { .. }) {
        return Err(cx.err(format!("expects a scalar for `k`, but was given {}", cx.q(k))));
    }
    if !x.unknown_ndim() && x.ndim < 2 {
        return Err(cx.err(format!("expects a tensor of rank at least 2, but was given {}", cx.q(x.ty))));
    }
    Ok(x.ty)
}

fn eye(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let (Some(n), Some(m)) = (cx.prim_arg(0), cx.prim_arg(1)) else {
        return Err(cx.err("expects scalar values for `n` and `m`"));
    };
    let dtype = cx.attr_dtype("dtype").unwrap_or(DataType::FLOAT32);
    let (n, m) = (super::simplify::as_index(&mut cx.f.pool, n), super::simplify::as_index(&mut cx.f.pool, m));
    Ok(cx.tensor_dims(vec![n, m], dtype, None))
}

fn eye_like(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.ndim != 2 && x.ndim != -1 {
        return Err(cx.err(format!("expects a 2-d tensor, but was given {}", cx.q(x.ty))));
    }
    let dtype = cx.attr_dtype("dtype").unwrap_or(x.dtype);
    Ok(cx.tensor(x.shape, dtype, x.ndim, x.vdevice))
}

fn hamming_window(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let Some(dtype) = cx.attr_dtype("dtype") else { return Err(cx.err("needs a `dtype`")) };
    if dtype.is_int() {
        return Err(cx.err(format!("expects a floating-point dtype, but was given `{dtype}`")));
    }
    let Some(w) = cx.prim_arg(0) else { return Err(cx.err("expects a scalar `window_size`")) };
    let one = cx.f.pool.int(cx.f.pool.dtype(w), 1);
    if cx.an.prove_lt(&cx.f.pool, w, one) {
        return Err(cx.err(format!("the window size {} is less than 1", cx.qp(w))));
    }
    let w = cx.simplify(w);
    let w = super::simplify::as_index(&mut cx.f.pool, w);
    Ok(cx.tensor_dims(vec![w], dtype, None))
}
