//! Quantization (`legalize_ops/qdq.py`).
//!
//! * `quantize(x, scale, zp)` becomes `quantize`, one compute `quantized`:
//!   `clip(round(x / scale) + zp)` cast to `out_dtype` (no rounding for a float
//!   `out_dtype`), clipped to the type's range;
//! * `dequantize(x, scale, zp)` becomes `dequantize`, one compute `dequantized`:
//!   `(x - zp) * scale` with the subtraction in int32 (float32 for float data) and the
//!   product in float32, clipped to the range of an `out_dtype` other than float32.
//!
//! `scale` and `zp` are read per position along `axis`, or once when they are scalar
//! constants or tensors of ones (`_is_singleton_qparam`).

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr};

use super::cx::{Cx, Operand, norm_axis};
use super::te::emit::{max_value, min_value};
use super::te::{Axes, Te};
use super::{Legalize, Lowered};

/// The legalization of a quantization op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::QUANTIZE => |cx| qdq(cx, true),
        ops::DEQUANTIZE => |cx| qdq(cx, false),
        _ => return None,
    })
}

/// `clip_cast`: `max(min(v, max_value(t)), min_value(t))` cast to `t`.
fn clip_cast(te: &mut Te, v: PrimExpr, t: DataType) -> PrimExpr {
    let hi = max_value(&mut te.pool, t);
    let m = te.bin(BinOp::Min, v, hi);
    let lo = min_value(&mut te.pool, t);
    let m = te.bin(BinOp::Max, m, lo);
    te.cast(t, m)
}

/// The value of a quantization parameter at the output position `idx`.
fn param(te: &mut Te, p: Operand, idx: &[PrimExpr], axis: usize) -> PrimExpr {
    match p {
        Operand::Scalar(s) => s,
        Operand::Tensor(t) => {
            let shape = te.shape(t);
            if shape.iter().all(|&d| te.pool.as_int(d) == Some(1)) {
                let zeros: Vec<PrimExpr> = shape.iter().map(|_| te.i64(0)).collect();
                te.load(t, &zeros)
            } else {
                te.load(t, &[idx[axis]])
            }
        }
    }
}

fn qdq(cx: &mut Cx, quantize: bool) -> Option<Lowered> {
    let out_dtype = cx.attr_dtype("out_dtype")?;
    let axis = cx.attr_int("axis").unwrap_or(-1);
    let x = cx.tensor(0)?;
    let scale = cx.operand(1)?;
    let zp = cx.operand(2)?;
    let te = &mut cx.te;
    let shape = te.shape(x);
    let axis = norm_axis(axis, shape.len())?;
    for p in [scale, zp] {
        if let Operand::Tensor(t) = p {
            let s = te.shape(t);
            let singleton = s.iter().all(|&d| te.pool.as_int(d) == Some(1));
            if !singleton && s.len() != 1 {
                return None;
            }
        }
    }
    let data_dtype = te.dtype(x);
    let (name, func) = if quantize { ("quantized", "quantize") } else { ("dequantized", "dequantize") };
    let t = te.compute(name, shape, Axes::I, |te, idx| {
        let s = param(te, scale, idx, axis);
        let z = param(te, zp, idx, axis);
        let v = te.load(x, idx);
        if quantize {
            let scaled = te.bin(BinOp::Div, v, s);
            let r = if out_dtype.is_int() { te.call(Intrinsic::Round, &[scaled]) } else { scaled };
            let r = te.add(r, z);
            clip_cast(te, r, out_dtype)
        } else {
            let dt = if data_dtype.is_float() { DataType::FLOAT32 } else { DataType::INT32 };
            let v = te.cast(dt, v);
            let sub = te.sub(v, z);
            let s = te.cast(DataType::FLOAT32, s);
            let out = te.mul(sub, s);
            if out_dtype == DataType::FLOAT32 { out } else { clip_cast(te, out, out_dtype) }
        }
    });
    Lowered::one(func, t)
}
