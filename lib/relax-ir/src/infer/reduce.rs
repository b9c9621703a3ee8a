//! Reductions and scans: `sum`, `mean`, `max`, `min`, `prod`, `std`, `variance` (the
//! reduced axes removed, or kept as 1 with `keepdims`), `argmax` / `argmin` (`int64`),
//! `cumsum` / `cumprod` (the input's shape, flattened without an axis), `median`.

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a reduction or scan.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::SUM | ops::MEAN | ops::MAX | ops::MIN | ops::PROD | ops::STD | ops::VARIANCE => statistical,
        ops::ARGMAX | ops::ARGMIN => arg_reduce,
        ops::CUMSUM | ops::CUMPROD => scan,
        ops::MEDIAN => median,
        _ => return None,
    }))
}

/// The result of reducing `axes` (all when `None`) of the argument, with `dtype`.
fn reduce(
    cx: &mut OpCx<'_>,
    axes: Option<Vec<i64>>,
    keepdims: bool,
    dtype: Option<DataType>,
) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let dtype = dtype.unwrap_or(x.dtype);
    let axes_nn = match &axes {
        Some(a) if !x.unknown_ndim() => cx.axes(x.ndim, a)?,
        _ => Vec::new(),
    };
    let out_ndim = if keepdims {
        x.ndim
    } else if axes.is_none() {
        0
    } else if x.unknown_ndim() {
        -1
    } else {
        x.ndim - axes_nn.len() as i32
    };
    let one = cx.i64(1);
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        if axes.is_none() && keepdims && out_ndim >= 0 {
            return Ok(cx.tensor_dims(vec![one; out_ndim as usize], dtype, x.vdevice));
        }
        if out_ndim == 0 {
            return Ok(cx.tensor_dims(Vec::new(), dtype, x.vdevice));
        }
        return Ok(cx.tensor_ndim(dtype, out_ndim, x.vdevice));
    };
    let mut dims = Vec::with_capacity(out_ndim.max(0) as usize);
    for (i, &di) in d.iter().enumerate() {
        if axes.is_some() && !axes_nn.contains(&i) {
            dims.push(di);
        } else if keepdims {
            dims.push(one);
        }
    }
    Ok(cx.tensor_dims(dims, dtype, x.vdevice))
}

fn statistical(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let axes = cx.attr_ints("axis");
    let keepdims = cx.attr_bool("keepdims", false);
    reduce(cx, axes, keepdims, None)
}

fn arg_reduce(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let axis = cx.attr_int("axis");
    let keepdims = cx.attr_bool("keepdims", false);
    reduce(cx, axis.map(|a| vec![a]), keepdims, Some(DataType::INT64))
}

fn scan(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let dtype = cx.attr_dtype("dtype").unwrap_or(x.dtype);
    if cx.attr_int("axis").is_none() {
        return match x.dims().map(<[PrimExpr]>::to_vec) {
            Some(d) => {
                // `1 * d0 * d1 * ...`, folded.
                let mut p = cx.i64(1);
                for v in d {
                    p = cx.bin(BinOp::Mul, p, v);
                }
                Ok(cx.tensor_dims(vec![p], dtype, x.vdevice))
            }
            None => Ok(cx.tensor_ndim(dtype, x.ndim, x.vdevice)),
        };
    }
    Ok(cx.tensor(x.shape, dtype, x.ndim, x.vdevice))
}

/// `median`: the reduced values, and their indices when reducing over one axis.
fn median(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let axes = cx.attr_ints("axis");
    let keepdims = cx.attr_bool("keepdims", false);
    let values = reduce(cx, axes.clone(), keepdims, None)?;
    let one_axis = axes.as_ref().is_some_and(|a| a.len() == 1);
    if !one_axis {
        return Ok(values);
    }
    let indices = match cx.f.pool.ty(values).clone() {
        crate::ty::TyData::Tensor { shape, ndim, vdevice, .. } => cx.tensor(shape, DataType::INT64, ndim, vdevice),
        _ => values,
    };
    Ok(cx.mk(crate::ty::TyData::Tuple(vec![values, indices])))
}
