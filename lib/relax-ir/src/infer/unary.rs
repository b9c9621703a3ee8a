//! Unary elementwise ops: the result has the input's type (TVM's `InferStructInfoUnary`),
//! with a float dtype required where the op is only defined on floats; the checks
//! (`isnan`, ...) give `bool`; `astype` and `wrap_param` change the dtype; `clip` takes
//! its input's type; `quantize` / `dequantize` give the input's shape in `out_dtype`.

use crate::dtype::DataType;
use crate::entities::Ty;
use crate::ty::TyData;

use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a unary op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::ACOS
        | ops::ACOSH
        | ops::ASIN
        | ops::ASINH
        | ops::ATAN
        | ops::ATANH
        | ops::COS
        | ops::COSH
        | ops::EXP
        | ops::LOG
        | ops::RSQRT
        | ops::SIGMOID
        | ops::SIN
        | ops::SINH
        | ops::SQRT
        | ops::TAN
        | ops::TANH
        | ops::ERF => float_arith,
        ops::ABS
        | ops::BITWISE_NOT
        | ops::CEIL
        | ops::FLOOR
        | ops::LOGICAL_NOT
        | ops::NEGATIVE
        | ops::ROUND
        | ops::SIGN
        | ops::SQUARE
        | ops::TRUNC => arith,
        ops::ISFINITE | ops::ISINF | ops::ISNAN => check,
        ops::CLIP => clip,
        ops::ASTYPE | ops::WRAP_PARAM => astype,
        ops::QUANTIZE | ops::DEQUANTIZE => qdq,
        _ => return None,
    }))
}

/// The input's type, with a new dtype when `dtype` is given.
pub(super) fn unary(cx: &mut OpCx<'_>, require_float: bool, dtype: Option<DataType>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if require_float && !x.dtype.is_void() && !x.dtype.is_float() {
        return Err(cx.err(format!(
            "expects a floating-point tensor, but was given `{}` of dtype `{}`",
            cx.show(x.ty),
            x.dtype
        )));
    }
    // A vdevice given by `sinfo_args` (a customisation pass's choice) wins.
    let vdevice = match cx.call.sinfo_args.first().map(|&t| cx.f.pool.ty(t).clone()) {
        Some(TyData::Tensor { vdevice: Some(v), .. }) => Some(v),
        _ => x.vdevice.clone(),
    };
    let dtype = dtype.unwrap_or(x.dtype);
    if dtype == x.dtype && vdevice == x.vdevice {
        return Ok(x.ty);
    }
    Ok(cx.tensor(x.shape, dtype, x.ndim, vdevice))
}

fn float_arith(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    unary(cx, true, None)
}

fn arith(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    unary(cx, false, None)
}

fn check(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    unary(cx, false, Some(DataType::BOOL))
}

fn clip(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    Ok(cx.arg_ty(0))
}

fn astype(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let dtype = match cx.attr_str("dtype").and_then(DataType::parse) {
        Some(t) => t,
        None => return Err(cx.err("needs a `dtype`")),
    };
    Ok(cx.tensor(x.shape, dtype, x.ndim, x.vdevice))
}

fn qdq(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let quantize = cx.id == crate::op::ops::QUANTIZE;
    let out = cx.attr_dtype("out_dtype").unwrap_or(if quantize { DataType::INT8 } else { DataType::FLOAT32 });
    let ok = if quantize {
        matches!(out.to_string().as_str(), "int8" | "uint8" | "int16" | "uint16" | "float8_e4m3fn" | "float8_e5m2")
    } else {
        matches!(out.to_string().as_str(), "float16" | "float32")
    };
    if !ok {
        return Err(cx.err(format!("does not support the output dtype `{out}`")));
    }
    let x = cx.tensor_arg(0)?;
    let scale = cx.tensor_arg(1)?;
    let zp = cx.tensor_arg(2)?;
    if x.dtype.is_void() || scale.dtype.is_void() || zp.dtype.is_void() {
        return Ok(cx.tensor(x.shape, DataType::VOID, x.ndim, x.vdevice));
    }
    if !x.unknown_ndim() && x.ndim > 0 {
        let axis = cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(-1))?;
        for (p, name) in [(&scale, "scale"), (&zp, "zero_point")] {
            if let (Some(pd), Some(xd)) = (p.dims(), x.dims())
                && pd.len() == 1
                && cx.as_int(pd[0]) != Some(1)
                && cx.prove_not_equal(pd[0], xd[axis])
            {
                return Err(cx.err(format!(
                    "`{name}` has {} values for dim {axis} of length {} of {}",
                    cx.qp(pd[0]),
                    cx.qp(xd[axis]),
                    cx.q(x.ty)
                )));
            }
        }
    }
    Ok(cx.tensor(x.shape, out, x.ndim, x.vdevice))
}
