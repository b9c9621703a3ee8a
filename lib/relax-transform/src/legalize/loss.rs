//! Losses (`legalize_ops/nn.py`; TOPI's C++ `nn.h` `nll_loss`).
//!
//! * `nn.cross_entropy_with_logits(x, y)` becomes `cross_entropy_with_logits`:
//!   `-sum(x * y) / x.shape[0]` (`T_multiply`, `T_multiply_red`, `T_multiply_1` for the
//!   negation as `* -1`, `T_divide`; no division for 1-d inputs).
//! * `nn.nll_loss(predictions, targets, weights)` becomes `nll_loss`: per target
//!   position `-predictions[n, t, ...] * weights[t]`, or zero where `t` is
//!   `ignore_index` (`nll_loss`), then by `reduction`: `none`, `sum` (`nll_loss_red`),
//!   or `mean`, the sum divided by the sum of the weights of the positions not ignored
//!   (`T_divide`). Without weights, a `T_full` of ones stands in for them (PrimFunc
//!   `nll_loss_without_weight`, after TVM's Python helper).

use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr};

use super::binary::{broadcast, broadcast_op};
use super::cx::{Cx, Operand};
use super::reduce::comm_reduce;
use super::te::{Axes, CombinerKind, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of a loss op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_CROSS_ENTROPY_WITH_LOGITS => cross_entropy,
        ops::NN_NLL_LOSS => nll_loss,
        _ => return None,
    })
}

fn cross_entropy(cx: &mut Cx) -> Option<Lowered> {
    let (x, y) = (cx.tensor(0)?, cx.tensor(1)?);
    let te = &mut cx.te;
    let shape = te.shape(x);
    let prod = broadcast(te, "T_multiply", x, y, |te, a, b| te.mul(a, b));
    let axes: Vec<usize> = (0..te.ndim(prod)).collect();
    let s = comm_reduce(te, prod, &axes, false, CombinerKind::Sum);
    let dtype = te.dtype(s);
    let minus = te.const_f(dtype, -1.0);
    let neg = broadcast_op(te, "T_multiply", Operand::Tensor(s), Operand::Scalar(minus), |te, a, b| te.mul(a, b))?;
    if shape.len() <= 1 {
        return Lowered::one("cross_entropy_with_logits", neg);
    }
    let out = broadcast_op(te, "T_divide", Operand::Tensor(neg), Operand::Scalar(shape[0]), |te, a, b| {
        te.bin(BinOp::Div, a, b)
    })?;
    Lowered::one("cross_entropy_with_logits", out)
}

/// `Select(t != ignore_index, value, 0)` over the targets' shape, named `nll_loss`.
fn per_target(
    te: &mut Te,
    targets: Tensor,
    ignore: i64,
    dtype: DataType,
    f: impl Fn(&mut Te, PrimExpr, &[PrimExpr]) -> PrimExpr,
) -> Tensor {
    let shape = te.shape(targets);
    te.compute("nll_loss", shape, Axes::Ax, |te, idx| {
        let c = te.load(targets, idx);
        let ct = te.pool.dtype(c);
        let ig = te.const_i(ct, ignore);
        let keep = te.bin(BinOp::Ne, c, ig);
        let v = f(te, c, idx);
        let zero = te.const_i(dtype, 0);
        te.select(keep, v, zero)
    })
}

fn nll_loss(cx: &mut Cx) -> Option<Lowered> {
    let reduction = cx.attr("reduction").and_then(|v| v.as_str()).unwrap_or("mean").to_string();
    let ignore = cx.attr_int("ignore_index").unwrap_or(-100);
    let with_weights = cx.nargs() > 2;
    let (pred, targets) = (cx.tensor(0)?, cx.tensor(1)?);
    let weights = if with_weights { Some(cx.tensor(2)?) } else { None };
    let te = &mut cx.te;
    let ps = te.shape(pred);
    let dtype = te.dtype(pred);
    if ps.is_empty() || !matches!(reduction.as_str(), "mean" | "sum" | "none") {
        return None;
    }
    // `bb.call_te` names the PrimFunc after the Python function it calls.
    let func = if with_weights { "nll_loss" } else { "nll_loss_without_weight" };
    let weights = match weights {
        Some(w) => w,
        None => {
            let c = if ps.len() > 1 { ps[1] } else { ps[0] };
            te.compute("T_full", vec![c], Axes::Ax, |te, _| te.const_f(dtype, 1.0))
        }
    };
    let losses = per_target(te, targets, ignore, dtype, |te, c, idx| {
        let mut at = Vec::with_capacity(idx.len() + 1);
        if ps.len() == 1 {
            at.push(c);
        } else {
            at.push(idx[0]);
            at.push(c);
            at.extend_from_slice(&idx[1..]);
        }
        let p = te.load(pred, &at);
        let neg = te.pool.neg(p);
        let w = te.load(weights, &[c]);
        te.mul(neg, w)
    });
    if ps.len() == 1 {
        // No batch: a scalar loss, divided by its weight for `mean`.
        if reduction != "mean" {
            return Lowered::one(func, losses);
        }
        let w = per_target(te, targets, ignore, dtype, |te, c, _| te.load(weights, &[c]));
        let out = broadcast(te, "T_divide", losses, w, |te, a, b| te.bin(BinOp::Div, a, b));
        return Lowered::one(func, out);
    }
    let all: Vec<usize> = (0..te.ndim(losses)).collect();
    match reduction.as_str() {
        "none" => Lowered::one(func, losses),
        "sum" => {
            let s = comm_reduce(te, losses, &all, false, CombinerKind::Sum);
            Lowered::one(func, s)
        }
        _ => {
            let w = per_target(te, targets, ignore, dtype, |te, c, _| te.load(weights, &[c]));
            let s = comm_reduce(te, losses, &all, false, CombinerKind::Sum);
            let sw = comm_reduce(te, w, &all, false, CombinerKind::Sum);
            let out = broadcast(te, "T_divide", s, sw, |te, a, b| te.bin(BinOp::Div, a, b));
            Lowered::one(func, out)
        }
    }
}
