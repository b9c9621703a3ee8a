//! Binary broadcasting ops (TVM's `InferStructInfoBroadcast`): arithmetic keeps the
//! operands' dtype, comparisons give `bool`; operands may be tensors or scalars
//! (`R.Prim`), a scalar counting as a tensor of shape `(1,)`.
//!
//! Broadcasting aligns dims from the right: a literal 1 takes the other dim; provably
//! equal dims take the left one; two different constants are an error; anything else
//! makes the shape unknown (rank and dtype kept). The leading dims of the longer shape
//! are copied.
//!
//! `ewise_fma(a, b, c)` needs three tensors of one shape and dtype.

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty};
use crate::ty::{TensorShape, TyData, VDevice};

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a binary op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::ADD
        | ops::SUBTRACT
        | ops::MULTIPLY
        | ops::DIVIDE
        | ops::POWER
        | ops::MAXIMUM
        | ops::MINIMUM
        | ops::FLOOR_DIVIDE
        | ops::MOD
        | ops::FLOOR_MOD
        | ops::ATAN2
        | ops::LOG_ADD_EXP
        | ops::LOGICAL_AND
        | ops::LOGICAL_OR
        | ops::LOGICAL_XOR
        | ops::BITWISE_AND
        | ops::BITWISE_OR
        | ops::BITWISE_XOR
        | ops::LEFT_SHIFT
        | ops::RIGHT_SHIFT => arith,
        ops::EQUAL | ops::NOT_EQUAL | ops::LESS | ops::LESS_EQUAL | ops::GREATER | ops::GREATER_EQUAL => compare,
        ops::EWISE_FMA => ewise_fma,
        _ => return None,
    }))
}

/// The outcome of broadcasting two shapes.
pub(super) enum Broadcast {
    /// The broadcast shape.
    Shape(Vec<PrimExpr>),
    /// Not provable either way.
    Unknown,
}

/// Broadcasts `a` with `b`; `what` names the two operands' types for the error of two
/// different constant dims.
pub(super) fn broadcast(
    cx: &OpCx<'_>,
    a: &[PrimExpr],
    b: &[PrimExpr],
    what: (Ty, Ty),
) -> Result<Broadcast, InferError> {
    let (na, nb) = (a.len(), b.len());
    let mut out: Vec<PrimExpr> = Vec::with_capacity(na.max(nb));
    for i in 1..=na.min(nb) {
        let (d0, d1) = (a[na - i], b[nb - i]);
        let (c0, c1) = (cx.as_int(d0), cx.as_int(d1));
        if c0 == Some(1) {
            out.push(d1);
        } else if c1 == Some(1) || cx.prove_equal(d0, d1) {
            out.push(d0);
        } else if let (Some(x), Some(y)) = (c0, c1)
            && x != y
        {
            return Err(cx.err(format!(
                "cannot broadcast dims `{x}` and `{y}` of {} and {}",
                cx.q(what.0),
                cx.q(what.1)
            )));
        } else {
            return Ok(Broadcast::Unknown);
        }
    }
    let longer = if na > nb { a } else { b };
    for i in (na.min(nb) + 1)..=na.max(nb) {
        out.push(longer[longer.len() - i]);
    }
    out.reverse();
    Ok(Broadcast::Shape(out))
}

/// The element dtype of a binary op's operands (TVM's `InferBinaryArithOpOutDtype`):
/// unknown if either is unknown; different dtypes are an error unless one is `bool`.
pub(super) fn arith_dtype(cx: &OpCx<'_>, a: (Ty, DataType), b: (Ty, DataType)) -> Result<DataType, InferError> {
    if a.1.is_void() || b.1.is_void() {
        return Ok(DataType::VOID);
    }
    if a.1 != b.1 && !a.1.is_bool() && !b.1.is_bool() {
        return Err(cx.err(format!(
            "operands have different dtypes `{}` and `{}`: {} and {}",
            a.1,
            b.1,
            cx.q(a.0),
            cx.q(b.0)
        )));
    }
    Ok(a.1)
}

/// The vdevice of a binary op's result: either side's when only one has one; both must
/// agree otherwise.
pub(super) fn binary_vdevice(
    cx: &OpCx<'_>,
    a: (Ty, Option<VDevice>),
    b: (Ty, Option<VDevice>),
) -> Result<Option<VDevice>, InferError> {
    if let Some(&t) = cx.call.sinfo_args.first()
        && let TyData::Tensor { vdevice, .. } = cx.f.pool.ty(t)
    {
        return Ok(vdevice.clone());
    }
    match (a.1, b.1) {
        (None, v) | (v, None) => Ok(v),
        (Some(x), Some(y)) if x == y => Ok(Some(x)),
        (Some(x), Some(y)) => Err(cx.err(format!(
            "operands are on different devices `{}:{}:{}` and `{}:{}:{}`: {} and {}",
            x.kind,
            x.index,
            x.scope,
            y.kind,
            y.index,
            y.scope,
            cx.q(a.0),
            cx.q(b.0)
        ))),
    }
}

/// An operand of a binary op: a tensor, or a scalar (rank 1, shape `(1,)`).
struct Operand {
    ty: Ty,
    dtype: DataType,
    ndim: i32,
    shape: TensorShape,
    values: Option<Vec<PrimExpr>>,
    vdevice: Option<VDevice>,
    scalar: bool,
}

fn operand(cx: &mut OpCx<'_>, i: usize) -> Result<Operand, InferError> {
    let t = cx.arg_ty(i);
    if let Some(ti) = cx.tensor_info(t) {
        return Ok(Operand {
            ty: t,
            dtype: ti.dtype,
            ndim: ti.ndim,
            shape: ti.shape,
            values: ti.values,
            vdevice: ti.vdevice,
            scalar: false,
        });
    }
    if let TyData::Prim { dtype, .. } = cx.f.pool.ty(t).clone() {
        let one = cx.i64(1);
        return Ok(Operand {
            ty: t,
            dtype,
            ndim: 1,
            shape: TensorShape::Unknown,
            values: Some(vec![one]),
            vdevice: None,
            scalar: true,
        });
    }
    Err(cx.err(format!("expects a tensor or a scalar for `{}`, but was given {}", cx.arg_name(i), cx.q(t))))
}

fn arith(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    infer(cx, false)
}

fn compare(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    infer(cx, true)
}

fn infer(cx: &mut OpCx<'_>, compare: bool) -> Result<Ty, InferError> {
    let a = operand(cx, 0)?;
    let b = operand(cx, 1)?;
    let dtype = if compare { DataType::BOOL } else { arith_dtype(cx, (a.ty, a.dtype), (b.ty, b.dtype))? };
    if a.scalar && b.scalar {
        return Ok(cx.mk(TyData::Prim { dtype, value: None }));
    }
    let vdevice = binary_vdevice(cx, (a.ty, a.vdevice.clone()), (b.ty, b.vdevice.clone()))?;
    let ndim = if a.ndim < 0 || b.ndim < 0 { -1 } else { a.ndim.max(b.ndim) };
    if let (Some(x), Some(y)) = (&a.values, &b.values)
        && let Broadcast::Shape(s) = broadcast(cx, x, y, (a.ty, b.ty))?
    {
        return Ok(cx.tensor(TensorShape::Dims(s), dtype, ndim, vdevice));
    }
    if let (TensorShape::Var(x), TensorShape::Var(y)) = (&a.shape, &b.shape)
        && x == y
    {
        return Ok(cx.tensor(a.shape.clone(), dtype, ndim, vdevice));
    }
    Ok(cx.tensor_ndim(dtype, ndim, vdevice))
}

fn ewise_fma(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ts = [cx.tensor_arg(0)?, cx.tensor_arg(1)?, cx.tensor_arg(2)?];
    let mut ndim = -1;
    for t in &ts {
        if t.ndim >= 0 {
            if ndim >= 0 && t.ndim != ndim {
                return Err(cx.err(format!(
                    "the operands have different ranks: {} and {}",
                    cx.q(ts[0].ty),
                    cx.q(t.ty)
                )));
            }
            ndim = t.ndim;
        }
    }
    let dtype = if ts.iter().any(|t| t.dtype.is_void()) {
        DataType::VOID
    } else if ts.iter().any(|t| t.dtype != ts[0].dtype) {
        return Err(cx.err(format!(
            "the operands have different dtypes `{}`, `{}` and `{}`",
            ts[0].dtype, ts[1].dtype, ts[2].dtype
        )));
    } else {
        ts[0].dtype
    };
    let mut vdevice: Option<VDevice> = None;
    for t in &ts {
        if let Some(v) = &t.vdevice {
            match &vdevice {
                None => vdevice = Some(v.clone()),
                Some(w) if w != v => {
                    vdevice = None;
                    break;
                }
                _ => {}
            }
        }
    }
    if let (Some(a), Some(b), Some(c)) = (ts[0].dims(), ts[1].dims(), ts[2].dims()) {
        let (a, b, c) = (a.to_vec(), b.to_vec(), c.to_vec());
        for i in 0..a.len() {
            if !(cx.prove_equal(a[i], b[i]) && cx.prove_equal(b[i], c[i])) {
                return Err(cx.err(format!(
                    "the operands must have the same shape: {}, {} and {}",
                    cx.q(ts[0].ty),
                    cx.q(ts[1].ty),
                    cx.q(ts[2].ty)
                )));
            }
        }
        return Ok(cx.tensor_dims(a, dtype, vdevice));
    }
    if let (TensorShape::Var(x), TensorShape::Var(y), TensorShape::Var(z)) = (&ts[0].shape, &ts[1].shape, &ts[2].shape)
        && x == y
        && y == z
    {
        return Ok(cx.tensor(ts[0].shape.clone(), dtype, ndim, vdevice));
    }
    Ok(cx.tensor_ndim(dtype, ndim, vdevice))
}
