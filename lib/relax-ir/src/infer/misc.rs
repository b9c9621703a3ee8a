//! Everything else: shape ops (`shape_of`, `tensor_to_shape`, `shape_to_tensor`),
//! calls typed by their `sinfo_args` (`call_tir` and friends, packed calls), closures,
//! effects (`print`, `assert_op`, kills: the empty tuple), and the memory and VM ops of
//! lowered code; `size`, vdevice hints, `grad.*` markers, collective communication
//! (`ccl.*`) and tensor inspection (`inspect.*`).

use crate::dtype::DataType;
use crate::entities::{Expr, Ty};
use crate::relax::ExprData;
use crate::ty::{TensorShape, TyData};

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a shape, call, closure, effect or memory op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(match id {
        ops::CALL_TIR
        | ops::CALL_TIR_INPLACE
        | ops::CALL_TIR_WITH_GRAD
        | ops::CALL_DPS_PACKED
        | ops::CALL_PURE_PACKED
        | ops::CALL_INPLACE_PACKED => Rule::SinfoArgs,
        _ => Rule::Infer(match id {
            ops::SHAPE_OF => shape_of,
            ops::TENSOR_TO_SHAPE => tensor_to_shape,
            ops::SHAPE_TO_TENSOR => shape_to_tensor,
            ops::CALL_BUILTIN_WITH_CTX => call_builtin_with_ctx,
            ops::INVOKE_CLOSURE | ops::INVOKE_PURE_CLOSURE => invoke_closure,
            ops::MAKE_CLOSURE | ops::NULL_VALUE | ops::MEMORY_ALLOC_STORAGE | ops::VM_ALLOC_STORAGE => object,
            ops::PRINT
            | ops::MEMORY_KILL_STORAGE
            | ops::MEMORY_KILL_TENSOR
            | ops::VM_KILL_OBJECT
            | ops::VM_CALL_TIR_DYN => void,
            ops::ASSERT_OP => assert_op,
            ops::BUILTIN_ALLOC_TENSOR => |cx| alloc_tensor(cx, 0, 1),
            ops::MEMORY_ALLOC_TENSOR => |cx| alloc_tensor(cx, 2, 3),
            ops::VM_ALLOC_TENSOR => vm_alloc_tensor,
            ops::BUILTIN_STOP_LIFT_PARAMS => |cx| super::unary::unary(cx, false, None),
            ops::MEMORY_VIEW => view,
            ops::MEMORY_ENSURE_ZERO_OFFSET => |cx| Ok(cx.arg_ty(0)),
            ops::SIZE => size,
            ops::TO_VDEVICE => to_vdevice,
            ops::HINT_ON_DEVICE => |cx| Ok(cx.tensor_arg(0)?.ty),
            ops::GRAD_NO_GRAD | ops::GRAD_START_CHECKPOINT | ops::GRAD_END_CHECKPOINT => |cx| Ok(cx.arg_ty(0)),
            ops::CCL_ALLREDUCE | ops::CCL_BROADCAST_FROM_WORKER0 => |cx| Ok(cx.tensor_arg(0)?.ty),
            ops::CCL_ALLGATHER => allgather,
            ops::CCL_SCATTER_FROM_WORKER0 => scatter_from_worker0,
            ops::INSPECT_TENSOR_DTYPE_CODE | ops::INSPECT_TENSOR_DTYPE_BITS => {
                |cx| inspect(cx, DataType::new(crate::dtype::TypeCode::UInt, 8))
            }
            ops::INSPECT_TENSOR_DTYPE_LANES => |cx| inspect(cx, DataType::new(crate::dtype::TypeCode::UInt, 16)),
            ops::INSPECT_TENSOR_NDIM => |cx| inspect(cx, DataType::INT32),
            ops::INSPECT_TENSOR_SHAPE_I
            | ops::INSPECT_TENSOR_STRIDE_I
            | ops::INSPECT_TENSOR_BYTE_OFFSET
            | ops::INSPECT_TENSOR_ELEM_OFFSET => |cx| inspect(cx, DataType::INT64),
            _ => return None,
        }),
    })
}

fn object(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    Ok(cx.mk(TyData::Object))
}

fn void(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    Ok(cx.mk(TyData::void()))
}

fn shape_of(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    Ok(match &x.shape {
        _ if x.unknown_ndim() => cx.mk(TyData::Shape { values: None, ndim: -1 }),
        TensorShape::Dims(d) => cx.mk(TyData::shape(d.clone())),
        _ => cx.mk(TyData::Shape { values: None, ndim: x.ndim }),
    })
}

fn tensor_to_shape(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.ndim != 1 {
        return Err(cx.err(format!("expects a 1-d tensor, but was given {}", cx.q(x.ty))));
    }
    let ndim = x.dims().and_then(|d| cx.as_int(d[0])).map_or(-1, |n| n as i32);
    Ok(cx.mk(TyData::Shape { values: None, ndim }))
}

fn shape_to_tensor(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ndim = cx.shape_arg_ndim(0)?;
    let n = cx.i64(i64::from(ndim));
    Ok(cx.tensor_dims(vec![n], DataType::INT64, None))
}

fn call_builtin_with_ctx(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    Ok(match cx.call.sinfo_args.first() {
        Some(&t) => t,
        None => cx.mk(TyData::void()),
    })
}

fn invoke_closure(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let sinfo = cx.call.sinfo_args.clone();
    Ok(super::sinfo_result(cx.f, &sinfo))
}

fn assert_op(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let t = cx.arg_ty(0);
    let ok = match cx.f.pool.ty(t) {
        TyData::Prim { dtype, .. } => dtype.is_bool(),
        TyData::Tensor { dtype, ndim, .. } => (dtype.is_bool() || dtype.is_void()) && (*ndim == 0 || *ndim == -1),
        TyData::Object => true,
        _ => false,
    };
    if !ok {
        return Err(cx.err(format!("expects a `bool` scalar condition, but was given {}", cx.q(t))));
    }
    void(cx)
}

/// The dtype written as a `R.dtype(...)` argument.
fn dtype_arg(cx: &OpCx<'_>, a: Option<Expr>) -> DataType {
    match a.map(|a| &cx.f.exprs[a]) {
        Some(ExprData::DType(t)) => *t,
        _ => DataType::VOID,
    }
}

/// `R.Tensor(shape, dtype)` from a shape argument and a dtype argument.
fn alloc_tensor(cx: &mut OpCx<'_>, shape: usize, dtype: usize) -> Result<Ty, InferError> {
    let dt = dtype_arg(cx, cx.arg(dtype));
    let ndim = match cx.arg_data(shape) {
        TyData::Shape { ndim, .. } => ndim,
        _ => -1,
    };
    let s = cx.shape_arg_as_shape(shape);
    Ok(cx.tensor(s, dt, ndim, None))
}

fn view(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let n = cx.call.args.len();
    let is_void = |cx: &mut OpCx<'_>, i: usize| i >= n || cx.arg_data(i).is_void();
    let (shape, ndim) = if is_void(cx, 1) {
        match &x.values {
            Some(v) => (TensorShape::Dims(v.clone()), v.len() as i32),
            None => (TensorShape::Unknown, x.ndim),
        }
    } else {
        let nd = cx.shape_arg_ndim(1)?;
        match cx.shape_arg_values(1) {
            Some(v) => (TensorShape::Dims(v), nd),
            None => (TensorShape::Unknown, nd),
        }
    };
    let dtype = if is_void(cx, 2) {
        x.dtype
    } else {
        match cx.arg(2).map(|a| cx.f.exprs[a].clone()) {
            Some(ExprData::DType(t)) => t,
            _ => DataType::VOID,
        }
    };
    Ok(cx.tensor(shape, dtype, ndim, x.vdevice))
}

fn size(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    cx.tensor_arg(0)?;
    Ok(cx.tensor_dims(Vec::new(), DataType::INT64, None))
}

fn to_vdevice(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let vdevice = cx.attr_str("dst_vdevice").and_then(|s| {
        let mut parts = s.splitn(3, ':');
        let kind = parts.next()?.to_string();
        let index = parts.next()?.parse().ok()?;
        let scope = parts.next().unwrap_or("global").to_string();
        Some(crate::ty::VDevice { kind, index, scope })
    });
    Ok(cx.tensor(x.shape, x.dtype, x.ndim, vdevice))
}

fn allgather(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let Some(mut d) = x.values.clone() else { return Ok(x.ty) };
    if d.is_empty() {
        return Ok(x.ty);
    }
    let k = cx.i64(cx.attr_int("num_workers").unwrap_or(1));
    d[0] = cx.bin(crate::prim::BinOp::Mul, d[0], k);
    Ok(cx.tensor_dims(d, x.dtype, x.vdevice))
}

fn scatter_from_worker0(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let Some(mut d) = x.values.clone() else {
        return Err(cx.err(format!("expects a tensor of known shape, but was given {}", cx.q(x.ty))));
    };
    let n = cx.attr_int("num_workers").unwrap_or(1);
    let axis = cx.axis(d.len() as i32, cx.attr_int("axis").unwrap_or(0))?;
    if let Some(len) = cx.as_int(d[axis])
        && n != 0
        && len.wrapping_rem(n) != 0
    {
        return Err(cx.err(format!("dim {axis} of {} ({len}) is not divisible by {n} workers", cx.q(x.ty))));
    }
    let k = cx.i64(n);
    d[axis] = cx.bin(crate::prim::BinOp::Div, d[axis], k);
    Ok(cx.tensor_dims(d, x.dtype, x.vdevice))
}

fn inspect(cx: &mut OpCx<'_>, dtype: DataType) -> Result<Ty, InferError> {
    cx.tensor_arg(0)?;
    Ok(cx.mk(TyData::Prim { dtype, value: None }))
}

/// `vm.alloc_tensor`: unlike the other allocations, a shape variable gives its known
/// values, or only its rank.
fn vm_alloc_tensor(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let dt = dtype_arg(cx, cx.arg(3));
    if let Some(d) = cx.shape_arg_values(2) {
        return Ok(cx.tensor_dims(d, dt, None));
    }
    let ndim = match cx.arg_data(2) {
        TyData::Shape { ndim, .. } => ndim,
        _ => -1,
    };
    Ok(cx.tensor_ndim(dt, ndim, None))
}
