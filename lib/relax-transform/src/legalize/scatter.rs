//! `scatter_elements` (`legalize_ops/manipulate.py`; TOPI's `scatter_elements.py`).
//!
//! TOPI writes the kernel with the IR builder (`te.extern`, named
//! `scatter_elements.generic`), and so does this legalization (an extern stage of the
//! [`Te`] builder): one opaque block holding
//!
//! 1. a copy of the data into the output, over the flat element index;
//! 2. for every position `(i, j)` of the indices before and after `axis` (fused), and
//!    every `k` along `axis` in order: `index1 = i * (len * after) + k * after + j` into
//!    the indices and updates, the index read there (plus the axis extent when
//!    negative), `index2 = i * (extent * after_data) + j + index * after_data` into the
//!    output, which becomes `f(out[index2], updates[index1])` for the reduction `update`,
//!    `add`, `mul`, `mean` (`(a + b) / 2`), `min` or `max`.
//!
//! Flat offsets are those of TOPI's pointers, turned into buffer indices by dividing by
//! the row-major strides. The loops are serial (TOPI's are parallel; the updates of one
//! `(i, j)` happen in order either way, and different `(i, j)` never collide). The text
//! differs from TVM's, whose index arithmetic comes from its flattening passes; the
//! numbers are the same.
//!
//! `slice_scatter(x, src, start, end, step, axis)` (constant `start`, `end`, `step` and
//! dim) becomes TOPI's chain over the positions of `axis`: a mask (`T_full`, then
//! `T_greater_equal`, `T_less` and the step's `T_floor_mod` / `T_equal`, each joined by a
//! `T_logical_and`), reshaped and broadcast to `x`'s shape, the source position of every
//! output position (`(i - start + step - 1) // step`, clipped), `T_take` of `src` there,
//! and `T_where` choosing it under the mask. A slice that covers the whole axis (TOPI's
//! `identity`) is not legalized. Two differences from TVM's text, not its numbers: the
//! source position is clipped to `src`'s extent rather than the dim (TOPI's `T_take`
//! reads past `src` at positions the mask drops; the interpreter checks every access),
//! and `T_arange` prints `v_ax0` where TVM keeps the cast of its int32 index,
//! `T.Cast("int64", v_ax0)`.

use relax_ir::op::{OpId, ops};
use std::rc::Rc;

use relax_ir::prim::BinOp;
use relax_ir::tir::{ForKind, StmtData};
use relax_ir::{Attrs, DataType, PrimExpr, PrimExprData};

use super::binary::{broadcast, broadcast_op, broadcast_shape, input_index};
use super::cx::{Cx, Operand, norm_axis};
use super::manipulate::reshape;
use super::te::Axes;
use super::te::Te;
use super::{Legalize, Lowered};

/// The legalization of a scatter op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::SCATTER_ELEMENTS => scatter_elements,
        ops::SLICE_SCATTER => slice_scatter,
        _ => return None,
    })
}

/// Buffer indices of a flat row-major offset into a buffer of `shape`.
fn unravel(te: &mut Te, flat: PrimExpr, shape: &[PrimExpr]) -> Vec<PrimExpr> {
    let n = shape.len();
    let mut strides = vec![te.i64(1); n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = te.mul(strides[d + 1], shape[d + 1]);
    }
    (0..n)
        .map(|d| {
            let q = if n == 1 { flat } else { te.floordiv(flat, strides[d]) };
            if d == 0 { q } else { te.floormod(q, shape[d]) }
        })
        .collect()
}

fn product(te: &mut Te, dims: &[PrimExpr]) -> PrimExpr {
    let mut p = te.i64(1);
    for &d in dims {
        p = te.mul(p, d);
    }
    p
}

fn serial(
    te: &mut Te,
    name: &str,
    extent: PrimExpr,
    body: impl FnOnce(&mut Te, PrimExpr) -> relax_ir::Stmt,
) -> StmtData {
    let var = te.var(name, DataType::INT64);
    let v = te.pool.var_ref(var);
    let body = body(te, v);
    let min = te.i64(0);
    StmtData::For { var, min, extent, kind: ForKind::Serial, thread: None, step: None, annotations: Attrs::new(), body }
}

fn scatter_elements(cx: &mut Cx) -> Option<Lowered> {
    let reduction = cx.attr("reduction").and_then(|v| v.as_str()).unwrap_or("update").to_string();
    if !["update", "add", "mul", "mean", "min", "max"].contains(&reduction.as_str()) {
        return None;
    }
    let axis = cx.attr_int("axis").unwrap_or(0);
    let (x, ind, upd) = (cx.tensor(0)?, cx.tensor(1)?, cx.tensor(2)?);
    let te = &mut cx.te;
    let (dshape, ishape) = (te.shape(x), te.shape(ind));
    let n = dshape.len();
    let axis = norm_axis(axis, n)?;
    if ishape.len() != n || te.shape(upd) != ishape || te.dtype(upd) != te.dtype(x) || !te.dtype(ind).is_int() {
        return None;
    }
    let dtype = te.dtype(x);
    let build = move |te: &mut Te, stmts: &mut super::te::emit::PrimaryStmts, out: relax_ir::Buffer| {
        let full = product(te, &dshape);
        let after = product(te, &dshape[axis + 1..]);
        let before_stride = te.mul(dshape[axis], after);
        let ind_before = product(te, &ishape[..axis]);
        let ind_after = product(te, &ishape[axis + 1..]);
        let ind_len = ishape[axis];
        let ind_before_stride = te.mul(ind_len, ind_after);
        let idt = te.dtype(ind);
        let copy = serial(te, "v", full, |te, v| {
            let at = unravel(te, v, &dshape);
            let value = te.load(x, &at);
            stmts.push(StmtData::Store { buffer: out, indices: at, value })
        });
        let copy = stmts.push(copy);
        let fused_extent = te.mul(ind_before, ind_after);
        let scatter = serial(te, "fused", fused_extent, |te, fused| {
            let i = te.floordiv(fused, ind_after);
            let j = te.floormod(fused, ind_after);
            let a = te.mul(i, ind_before_stride);
            let pre1 = te.add(a, j);
            let b = te.mul(i, before_stride);
            let pre2 = te.add(b, j);
            let inner = serial(te, "k", ind_len, |te, k| {
                let o = te.mul(k, ind_after);
                let index1 = te.add(pre1, o);
                let at1 = unravel(te, index1, &ishape);
                let kn = te.load(ind, &at1);
                let zero = te.const_i(idt, 0);
                let neg = te.bin(BinOp::Lt, kn, zero);
                let range = te.cast(idt, dshape[axis]);
                let wrapped = te.add(kn, range);
                let shifted = te.select(neg, wrapped, kn);
                let shifted = te.cast(DataType::INT64, shifted);
                let o2 = te.mul(shifted, after);
                let index2 = te.add(pre2, o2);
                let at2 = unravel(te, index2, &dshape);
                let u = te.load(upd, &at1);
                let cur = te.pool.raw(PrimExprData::Load { dtype, buffer: out, indices: at2.clone() });
                let value = match reduction.as_str() {
                    "add" => te.add(cur, u),
                    "mul" => te.mul(cur, u),
                    "mean" => {
                        let s = te.add(cur, u);
                        let two = te.const_i(dtype, 2);
                        te.bin(BinOp::Div, s, two)
                    }
                    "min" => te.bin(BinOp::Min, cur, u),
                    "max" => te.bin(BinOp::Max, cur, u),
                    _ => u,
                };
                stmts.push(StmtData::Store { buffer: out, indices: at2, value })
            });
            stmts.push(inner)
        });
        let scatter = stmts.push(scatter);
        stmts.push(StmtData::Seq(vec![copy, scatter]))
    };
    let dshape_out = cx.te.shape(x);
    let t = cx.te.extern_stage("scatter_elements.generic", dshape_out, dtype, vec![x, ind, upd], Rc::new(build));
    Lowered::one("scatter_elements", t)
}

fn slice_scatter(cx: &mut Cx) -> Option<Lowered> {
    let axis = cx.attr_int("axis").unwrap_or(0);
    let (x, src) = (cx.tensor(0)?, cx.tensor(1)?);
    let (start, end, step) = (cx.prim(2)?, cx.prim(3)?, cx.prim(4)?);
    let te = &mut cx.te;
    let (xs, ss) = (te.shape(x), te.shape(src));
    let axis = norm_axis(axis, xs.len())?;
    let dim = te.pool.as_int(xs[axis])?;
    let (b, e, st) = (te.pool.as_int(start)?, te.pool.as_int(end)?, te.pool.as_int(step)?);
    if (b == 0 && e == dim && st == 1) || st < 1 || ss.len() != xs.len() {
        return None;
    }
    let len = xs[axis];
    let mut mask = te.compute("T_full", vec![len], Axes::Ax, |te, _| te.const_i(DataType::BOOL, 1));
    // TOPI's int32 arange index, cast to int64 (the cast stays after widening).
    let idx =
        te.compute("T_arange", vec![len], Axes::Ax, |te, i| te.pool.raw(PrimExprData::Cast(DataType::INT64, i[0])));
    let and = |te: &mut Te, a, b| broadcast(te, "T_logical_and", a, b, |te, x, y| te.bin(BinOp::And, x, y));
    if b != 0 {
        let ge = broadcast_op(te, "T_greater_equal", Operand::Tensor(idx), Operand::Scalar(start), |te, x, y| {
            te.bin(BinOp::Ge, x, y)
        })?;
        mask = and(te, mask, ge);
    }
    if e != dim {
        let lt =
            broadcast_op(te, "T_less", Operand::Tensor(idx), Operand::Scalar(end), |te, x, y| te.bin(BinOp::Lt, x, y))?;
        mask = and(te, mask, lt);
    }
    if st != 1 {
        let d = broadcast_op(te, "T_subtract", Operand::Tensor(idx), Operand::Scalar(start), |te, x, y| te.sub(x, y))?;
        let m =
            broadcast_op(te, "T_floor_mod", Operand::Tensor(d), Operand::Scalar(step), |te, x, y| te.floormod(x, y))?;
        let zero = te.const_i(DataType::INT64, 0);
        let eq =
            broadcast_op(te, "T_equal", Operand::Tensor(m), Operand::Scalar(zero), |te, x, y| te.bin(BinOp::Eq, x, y))?;
        mask = and(te, mask, eq);
    }
    let mut mshape: Vec<PrimExpr> = xs.iter().map(|_| te.i64(1)).collect();
    mshape[axis] = len;
    let reshaped = reshape(te, mask, mshape.clone());
    let d = broadcast_op(te, "T_subtract", Operand::Tensor(idx), Operand::Scalar(start), |te, x, y| te.sub(x, y))?;
    let sm1 = te.const_i(DataType::INT64, st - 1);
    let pre = broadcast_op(te, "T_add", Operand::Tensor(d), Operand::Scalar(sm1), |te, x, y| te.add(x, y))?;
    let div =
        broadcast_op(te, "T_floor_divide", Operand::Tensor(pre), Operand::Scalar(step), |te, x, y| te.floordiv(x, y))?;
    // TOPI clips to the dim; positions past `src` are masked out, but `T_take` would read
    // them, so the clip stops at `src`'s extent (TVM reads past it unchecked).
    let src_len = te.pool.as_int(ss[axis]).map_or(dim, |n| n.min(dim));
    let clipped = te.compute("compute", vec![len], Axes::I, |te, i| {
        let v = te.load(div, i);
        let hi = te.const_i(DataType::INT64, src_len - 1);
        let m = te.bin(BinOp::Min, v, hi);
        let zero = te.const_i(DataType::INT64, 0);
        te.bin(BinOp::Max, m, zero)
    });
    let mut tshape = ss.clone();
    tshape[axis] = len;
    let taken = te.compute("T_take", tshape, Axes::Ax, |te, i| {
        let mut at = i.to_vec();
        at[axis] = te.load(clipped, &[i[axis]]);
        te.load(src, &at)
    });
    let (_, _, uses) = broadcast_shape(te, &xs, &mshape);
    let expanded = te.compute("T_broadcast_to", xs.clone(), Axes::Ax, |te, i| {
        let ix = input_index(te, i, &uses, mshape.len());
        te.load(reshaped, &ix)
    });
    let t = te.compute("T_where", xs, Axes::Ax, |te, i| {
        let c = te.load(expanded, i);
        let zero = te.pool.int(DataType::INT32, 0);
        let cond = te.bin(BinOp::Ne, c, zero);
        let a = te.load(taken, i);
        let b = te.load(x, i);
        te.select(cond, a, b)
    });
    Lowered::one("slice_scatter", t)
}
