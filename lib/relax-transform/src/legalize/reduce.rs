//! Reductions (`legalize_ops/statistical.py`, `search.py`; TOPI's `reduction.h`).
//!
//! * `sum`, `max`, `min`, `prod`: TOPI's `CommReduce`, a stage named after the input
//!   (`x_red`) over `ax0, ...` with reduction axes `k<dim>`; `keepdims` keeps the
//!   reduced dims as 1. A 0-d input is copied (`identity`).
//! * `mean`: the sum divided by the product of the reduced dims (`T_divide`).
//! * `variance`: `mean((x - mean(x, keepdims=True))^2)`; `std` its `sqrt`.
//! * `collapse_sum_like`, `collapse_sum_to`: TOPI's `collapse_sum`, the sum over the
//!   dims that broadcasting to the input's shape would have added.
//! * [`arg_reduce`] (`argmax`, `argmin`, see [`super::search`]): TOPI's `CommReduceIdx`,
//!   a two-value reduction `<x>_red_temp` (index, value) followed by the copy of the
//!   index (`<x>_red`).

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::{DataType, PrimExpr};

use super::binary::{Rule, broadcast};
use super::cx::{Cx, norm_axis};
use super::te::{Axes, CombinerKind, RAxis, Reduce, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of a reduction (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::SUM => |cx| simple(cx, CombinerKind::Sum, "sum"),
        ops::MAX => |cx| simple(cx, CombinerKind::Max, "max"),
        ops::MIN => |cx| simple(cx, CombinerKind::Min, "min"),
        ops::PROD => |cx| simple(cx, CombinerKind::Prod, "prod"),
        ops::MEAN => |cx| {
            let (x, axes, keep) = args(cx)?;
            let t = mean(&mut cx.te, x, &axes, keep)?;
            Lowered::one("mean", t)
        },
        ops::VARIANCE => |cx| {
            let (x, axes, keep) = args(cx)?;
            let t = variance(&mut cx.te, x, &axes, keep)?;
            Lowered::one("variance", t)
        },
        ops::COLLAPSE_SUM_LIKE => |cx| {
            let dims = cx.arg_ty(1)?.dims()?.to_vec();
            let target: Vec<PrimExpr> = dims.iter().map(|&d| cx.import(d)).collect();
            for &d in &target {
                cx.te.note_extra(d);
            }
            collapse_sum(cx, target)
        },
        ops::COLLAPSE_SUM_TO => |cx| {
            let target = cx.shape(1)?;
            collapse_sum(cx, target)
        },
        ops::STD => |cx| {
            let (x, axes, keep) = args(cx)?;
            let v = variance(&mut cx.te, x, &axes, keep)?;
            let shape = cx.te.shape(v);
            let t = cx.te.compute("compute", shape, Axes::I, |te, i| {
                let l = te.load(v, i);
                te.call(Intrinsic::Sqrt, &[l])
            });
            Lowered::one("std", t)
        },
        _ => return None,
    })
}

/// The input, the reduced axes (sorted, unique; all when `axis` is `None`) and
/// `keepdims`.
fn args(cx: &mut Cx) -> Option<(Tensor, Vec<usize>, bool)> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    let mut axes: Vec<usize> = match cx.attr_ints("axis") {
        Some(a) => a.iter().map(|&v| norm_axis(v, ndim)).collect::<Option<_>>()?,
        None => (0..ndim).collect(),
    };
    axes.sort_unstable();
    axes.dedup();
    Some((x, axes, cx.attr_bool("keepdims").unwrap_or(false)))
}

fn target_shape(te: &mut Te, x: Tensor, axes: &[usize], keep: bool) -> Vec<PrimExpr> {
    let shape = te.shape(x);
    let mut out = Vec::new();
    for (i, &d) in shape.iter().enumerate() {
        if axes.contains(&i) {
            if keep {
                out.push(te.i64(1));
            }
        } else {
            out.push(d);
        }
    }
    out
}

/// TOPI's `CommReduce`.
pub fn comm_reduce(te: &mut Te, x: Tensor, axes: &[usize], keep: bool, kind: CombinerKind) -> Tensor {
    comm_reduce_1d(te, x, axes, keep, false, kind)
}

/// TOPI's `CommReduce` with `atleast1d`: a reduction to a scalar has shape `(1,)`.
pub fn comm_reduce_1d(
    te: &mut Te,
    x: Tensor,
    axes: &[usize],
    keep: bool,
    atleast1d: bool,
    kind: CombinerKind,
) -> Tensor {
    let shape = te.shape(x);
    let xname = te.buffers[te.buffer(x)].name.clone();
    let name = format!("{xname}_red");
    if shape.is_empty() {
        return te.compute(&name, Vec::new(), Axes::Ax, |te, _| te.load(x, &[]));
    }
    let mut target = target_shape(te, x, axes, keep);
    if target.is_empty() && atleast1d {
        target.push(te.i64(1));
    }
    let squeeze: Vec<usize> = if keep { Vec::new() } else { axes.to_vec() };
    do_comm_reduce(te, x, &name, target, axes, &squeeze, kind)
}

/// TOPI's `DoCommReduce`: reduces `axes` of `x` into `target`; a reduced axis not in
/// `squeeze` keeps its (size-1) position in the output.
fn do_comm_reduce(
    te: &mut Te,
    x: Tensor,
    name: &str,
    target: Vec<PrimExpr>,
    axes: &[usize],
    squeeze: &[usize],
    kind: CombinerKind,
) -> Tensor {
    let shape = te.shape(x);
    te.compute_reduce(name, target, Axes::Ax, |te, idx| {
        let raxes: Vec<(RAxis, PrimExpr)> = axes.iter().map(|&i| te.reduce_axis(&format!("k{i}"), shape[i])).collect();
        let mut eval = Vec::new();
        let (mut arg, mut red) = (0, 0);
        for i in 0..shape.len() {
            if axes.contains(&i) {
                eval.push(raxes[red].1);
                red += 1;
                if !squeeze.contains(&i) {
                    arg += 1;
                }
            } else {
                eval.push(idx[arg]);
                arg += 1;
            }
        }
        let source = te.load(x, &eval);
        Reduce { kind, sources: vec![source], axes: raxes.iter().map(|r| r.0).collect() }
    })[0]
}

/// TOPI's `collapse_sum`: sums `x` down to `target` (the reverse of broadcasting).
fn collapse_sum(cx: &mut Cx, target: Vec<PrimExpr>) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let ishape = te.shape(x);
    let (isize, osize) = (ishape.len(), target.len());
    if isize < osize {
        return None;
    }
    let one = te.pool.int(DataType::INT32, 1);
    let mut reduce = Vec::new();
    let mut squeeze = Vec::new();
    let mut o = osize as i64 - 1;
    for i in (0..isize).rev() {
        if o >= 0 && super::binary::equal_check(te, ishape[i], target[o as usize]) {
            o -= 1;
            continue;
        }
        reduce.push(i);
        if o < 0 {
            squeeze.push(i);
        } else if super::binary::equal_check(te, one, target[o as usize]) {
            o -= 1;
        }
    }
    if reduce.is_empty() {
        let t = te.compute("tensor", ishape, Axes::Ax, |te, i| te.load(x, i));
        return Lowered::one("collapse_sum", t);
    }
    reduce.reverse();
    squeeze.reverse();
    let name = format!("{}_red", te.buffers[te.buffer(x)].name);
    let t = do_comm_reduce(te, x, &name, target, &reduce, &squeeze, CombinerKind::Sum);
    Lowered::one("collapse_sum", t)
}

fn simple(cx: &mut Cx, kind: CombinerKind, name: &str) -> Option<Lowered> {
    let (x, axes, keep) = args(cx)?;
    if kind == CombinerKind::Prod && cx.te.dtype(x).is_bool() {
        return None;
    }
    let t = comm_reduce(&mut cx.te, x, &axes, keep, kind);
    Lowered::one(name, t)
}

/// `_te_mean`: the sum divided by the product of the reduced dims.
fn mean(te: &mut Te, x: Tensor, axes: &[usize], keep: bool) -> Option<Tensor> {
    let shape = te.shape(x);
    let mut prod = te.pool.int(DataType::INT32, 1);
    for &a in axes {
        prod = te.mul(prod, shape[a]);
    }
    let s = comm_reduce(te, x, axes, keep, CombinerKind::Sum);
    let sshape = te.shape(s);
    Some(te.compute("T_divide", sshape, Axes::Ax, |te, i| {
        let v = te.load(s, i);
        te.bin(relax_ir::prim::BinOp::Div, v, prod)
    }))
}

/// `_te_variance`.
fn variance(te: &mut Te, x: Tensor, axes: &[usize], keep: bool) -> Option<Tensor> {
    let m = mean(te, x, axes, true)?;
    let sub: Rule = |te, a, b| te.sub(a, b);
    let dev = broadcast(te, "T_subtract", x, m, sub);
    let mul: Rule = |te, a, b| te.mul(a, b);
    let sq = broadcast(te, "T_multiply", dev, dev, mul);
    mean(te, sq, axes, keep)
}

/// TOPI's `CommReduceIdx` for `argmax`/`argmin`.
pub fn arg_reduce(cx: &mut Cx, kind: CombinerKind, name: &str) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    if ndim == 0 {
        return None;
    }
    let axes: Vec<usize> = match cx.attr_int("axis") {
        Some(a) => vec![norm_axis(a, ndim)?],
        None => (0..ndim).collect(),
    };
    let keep = cx.attr_bool("keepdims").unwrap_or(false);
    let te = &mut cx.te;
    let shape = te.shape(x);
    let xname = te.buffers[te.buffer(x)].name.clone();
    let target = target_shape(te, x, &axes, keep);
    let temp = te.compute_reduce(&format!("{xname}_red_temp"), target.clone(), Axes::Ax, |te, idx| {
        let raxes: Vec<(RAxis, PrimExpr)> = axes.iter().map(|&i| te.reduce_axis(&format!("k{i}"), shape[i])).collect();
        let mut eval = Vec::new();
        let mut red_vars = Vec::new();
        let (mut arg, mut red) = (0, 0);
        for i in 0..shape.len() {
            if axes.contains(&i) {
                eval.push(raxes[red].1);
                red_vars.push(raxes[red].1);
                red += 1;
            } else if !keep {
                eval.push(idx[arg]);
                arg += 1;
            } else {
                eval.push(idx[i]);
            }
        }
        // RavelIndex of the reduction variables over the reduced dims.
        let mut flat = red_vars[0];
        for (j, &v) in red_vars.iter().enumerate().skip(1) {
            let m = te.mul(flat, shape[axes[j]]);
            flat = te.add(m, v);
        }
        let val = te.load(x, &eval);
        Reduce { kind, sources: vec![flat, val], axes: raxes.iter().map(|r| r.0).collect() }
    });
    let idx_t = temp[0];
    let t = te.compute(&format!("{xname}_red"), target, Axes::Ax, |te, i| te.load(idx_t, i));
    Lowered::one(name, t)
}
