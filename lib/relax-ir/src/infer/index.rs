//! Indexing: `take` (`x.shape[:axis] + indices.shape + x.shape[axis+1:]`),
//! `strided_slice` (per axis the slice length, clamped into range unless
//! `assume_inbound`), `dynamic_strided_slice` (rank only).

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;
use crate::ty::{TensorShape, TyData};

use super::cx::OpCx;
use super::simplify::{ceildiv, if_then_else};
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of an indexing op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::TAKE => take,
        ops::STRIDED_SLICE => strided_slice,
        ops::DYNAMIC_STRIDED_SLICE => dynamic_strided_slice,
        _ => return None,
    }))
}

fn take(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let it = cx.arg_ty(1);
    let (idx_dtype, idx_ndim, idx_dims) = match cx.f.pool.ty(it).clone() {
        TyData::Tensor { shape, dtype, ndim, .. } => {
            let dims = match shape {
                TensorShape::Dims(d) => Some(d),
                _ => None,
            };
            (dtype, ndim, dims)
        }
        TyData::Prim { dtype, .. } => (dtype, 0, Some(Vec::new())),
        _ => {
            return Err(cx.err(format!("expects a tensor or a scalar for `indices`, but was given {}", cx.q(it))));
        }
    };
    if !idx_dtype.is_void() && !idx_dtype.is_int() {
        return Err(cx.err(format!("expects integer indices, but was given {}", cx.q(it))));
    }
    let axis = cx.attr_int("axis");
    if axis.is_none() && x.ndim != 1 {
        return Err(cx.err(format!("without an axis, expects a 1-d tensor, but was given {}", cx.q(x.ty))));
    }
    if x.unknown_ndim() || idx_ndim < 0 {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    let axis = match axis {
        Some(a) => cx.axis(x.ndim, a)?,
        None => 0,
    };
    let (Some(d), Some(id)) = (x.dims().map(<[PrimExpr]>::to_vec), idx_dims) else {
        return Ok(cx.tensor_ndim(x.dtype, idx_ndim + x.ndim - 1, x.vdevice));
    };
    let mut dims = Vec::with_capacity(d.len() + id.len());
    for (i, &di) in d.iter().enumerate() {
        if i == axis {
            dims.extend(id.iter().copied());
        } else {
            dims.push(di);
        }
    }
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

fn strided_slice(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let dt = cx.arg_ty(0);
    let Some(x) = cx.tensor_info(dt) else {
        if matches!(cx.f.pool.ty(dt), TyData::Object) {
            return Ok(cx.tensor_ndim(DataType::VOID, -1, None));
        }
        return Err(cx.err(format!("expects a tensor for `x`, but was given {}", cx.q(dt))));
    };
    let unknown = |cx: &mut OpCx<'_>| cx.tensor_ndim(x.dtype, x.ndim, x.vdevice.clone());
    if !x.has_shape() {
        return Ok(unknown(cx));
    }
    let Some(axes) = cx.prim_tuple_arg(1) else { return Ok(unknown(cx)) };
    let axes: Option<Vec<i64>> = axes.iter().map(|&a| cx.as_int(a)).collect();
    let Some(axes) = axes else { return Ok(unknown(cx)) };
    let Some(begin) = cx.prim_tuple_arg(2) else { return Ok(unknown(cx)) };
    let Some(end) = cx.prim_tuple_arg(3) else { return Ok(unknown(cx)) };
    let strides = if cx.call.args.len() > 4 {
        match cx.prim_tuple_arg(4) {
            Some(s) => s,
            None => return Ok(unknown(cx)),
        }
    } else {
        let one = cx.i64(1);
        vec![one; axes.len()]
    };
    for (what, n) in [("begin", begin.len()), ("end", end.len()), ("strides", strides.len())] {
        if n != axes.len() {
            return Err(cx.err(format!("{} axes were given but {n} `{what}` values", axes.len())));
        }
    }
    for (what, vals) in [("begin", &begin), ("end", &end), ("strides", &strides)] {
        if let Some(&v) = vals.iter().find(|&&v| !cx.f.pool.dtype(v).is_int()) {
            let dt = cx.f.pool.dtype(v);
            return Err(cx.err(format!("`{what}` values must be integers, but one has dtype `{dt}`")));
        }
    }
    let Some(values) = x.values.clone() else {
        if axes.is_empty() {
            return Ok(cx.tensor(x.shape.clone(), x.dtype, x.ndim, x.vdevice.clone()));
        }
        return Ok(unknown(cx));
    };
    let axes = cx.axes(x.ndim, &axes)?;
    let inbound = cx.attr_bool("assume_inbound", false);
    let mut dims = values;
    for (i, &axis) in axes.iter().enumerate() {
        let len = length(cx, begin[i], end[i], strides[i], dims[axis], inbound);
        dims[axis] = cx.simplify(len);
    }
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

/// TOPI's `GetLength(begin, end, stride, extent, assume_inbound)`.
fn length(
    cx: &mut OpCx<'_>,
    begin: PrimExpr,
    end: PrimExpr,
    stride: PrimExpr,
    extent: PrimExpr,
    inbound: bool,
) -> PrimExpr {
    if inbound {
        let d = cx.bin(BinOp::Sub, end, begin);
        return ceildiv(&mut cx.f.pool, d, stride);
    }
    let b = canonicalize_index(cx, begin, extent, stride);
    let e = canonicalize_index(cx, end, extent, stride);
    let zero = cx.f.pool.int(cx.f.pool.dtype(stride), 0);
    let neg = cx.bin(BinOp::Lt, stride, zero);
    let d_neg = cx.bin(BinOp::Sub, b, e);
    let ns = cx.f.pool.neg(stride);
    let l_neg = ceildiv(&mut cx.f.pool, d_neg, ns);
    let d_pos = cx.bin(BinOp::Sub, e, b);
    let l_pos = ceildiv(&mut cx.f.pool, d_pos, stride);
    if_then_else(&mut cx.f.pool, neg, l_neg, l_pos)
}

/// TOPI's `CanonicalizeIndex`: negative indices count from the end, then the index is
/// clamped into `[0, extent]` (`[-1, extent - 1]` for negative strides).
fn canonicalize_index(cx: &mut OpCx<'_>, index: PrimExpr, extent: PrimExpr, stride: PrimExpr) -> PrimExpr {
    if let (Some(i), Some(n), Some(s)) = (cx.as_int(index), cx.as_int(extent), cx.as_int(stride)) {
        // Dims and indices are any int64: wrap as TVM's C++ does, never overflow.
        let (lo, hi) = if s < 0 { (-1, n.wrapping_sub(1)) } else { (0, n) };
        let i = if i < 0 { i.wrapping_add(n) } else { i };
        return cx.i64(i.max(lo).min(hi));
    }
    if let (Some(a), Some(b)) = (cx.f.pool.as_var(index), cx.f.pool.as_var(extent))
        && cx.f.pool.vars[a].name == cx.f.pool.vars[b].name
    {
        return index;
    }
    let zero = cx.f.pool.int(cx.f.pool.dtype(stride), 0);
    let neg = cx.bin(BinOp::Lt, stride, zero);
    let m1 = cx.f.pool.int(DataType::INT32, -1);
    let z32 = cx.f.pool.int(DataType::INT32, 0);
    let lo = if_then_else(&mut cx.f.pool, neg, m1, z32);
    let one = cx.f.pool.int(DataType::INT32, 1);
    let em1 = cx.bin(BinOp::Sub, extent, one);
    let hi = if_then_else(&mut cx.f.pool, neg, em1, extent);
    let index = match cx.as_int(index) {
        Some(v) if v >= 0 => index,
        _ => {
            let z = cx.f.pool.int(cx.f.pool.dtype(index), 0);
            let is_neg = cx.bin(BinOp::Lt, index, z);
            let wrapped = cx.bin(BinOp::Add, index, extent);
            if_then_else(&mut cx.f.pool, is_neg, wrapped, index)
        }
    };
    let m = cx.bin(BinOp::Max, index, lo);
    cx.bin(BinOp::Min, m, hi)
}

fn dynamic_strided_slice(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    for i in 1..4 {
        let t = cx.tensor_arg(i)?;
        if t.ndim != 1 {
            return Err(cx.err(format!("expects a 1-d tensor for `{}`, but was given {}", cx.arg_name(i), cx.q(t.ty))));
        }
        if let Some(d) = t.dims()
            && let Some(n) = cx.as_int(d[0])
            && n != i64::from(x.ndim)
        {
            return Err(cx.err(format!("`{}` has {n} values for {} of rank {}", cx.arg_name(i), cx.q(x.ty), x.ndim)));
        }
    }
    Ok(cx.tensor_ndim(x.dtype, x.ndim, x.vdevice))
}
