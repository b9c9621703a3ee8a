//! `rewrite-dataflow-reshape`: kernels that only reshape become `R.reshape` again, as
//! TVM's `RewriteDataflowReshape` (`algorithms.md` §4), so that memory planning sees a
//! view of the input instead of a copy into a new allocation.
//!
//! `lv = R.call_tir(f, args, out_sinfo=R.Tensor(S, dtype))` becomes
//! `lv = R.reshape(a, R.shape(S))` when
//!
//! * the binding is in a dataflow block and binds a dataflow variable (a block output
//!   is never rewritten);
//! * `f` reads exactly one of its tensor arguments, `a`;
//! * `f` has the reshape pattern (`analysis::reshape_pattern`);
//! * `a` has the output's dtype, both ranks are known and the element counts are
//!   provably equal.

use relax_ir::arith::Analyzer;
use relax_ir::ops;
use relax_ir::{
    BinOp, Buffer, Expr, ExprData, Func, Module, PrimExpr, PrimExprData, PrimFunc, RelaxFunction, StmtData, TyData,
};

use crate::analysis::reshape_pattern::has_reshape_pattern;
use crate::emit;
use crate::walk::all_blocks;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "rewrite-dataflow-reshape" {
        summary: "turn call_tir of reshape kernels inside dataflow blocks back into R.reshape views",
        run: |f, cx| Ok(rewrite_dataflow_reshape(cx.module(), f)),
    }
}

/// Runs the pass on the Relax function `f`, whose kernels are PrimFuncs of `m`; returns
/// true if it changed anything.
pub fn rewrite_dataflow_reshape(m: &Module, f: &mut RelaxFunction) -> bool {
    let plan = plan(m, f);
    if plan.is_empty() {
        return false;
    }
    {
        for (value, arg, dims) in plan {
            let Some(ty) = f.ty_of(value) else { continue };
            let shape = emit::shape(f, dims.clone());
            let arg = match f.exprs[arg].clone() {
                ExprData::Var(v) => f.use_var(v),
                data => {
                    let t = f.ty_of(arg);
                    f.add_expr(data, t)
                }
            };
            let call = emit::call_op(f, ops::RESHAPE, vec![arg, shape], Vec::new(), ty);
            f.exprs[value] = f.exprs[call].clone();
        }
    }
    true
}

/// The rewrites to make: (binding value, the reshaped argument, the result dims).
fn plan(m: &Module, f: &RelaxFunction) -> Vec<(Expr, Expr, Vec<PrimExpr>)> {
    let mut out = Vec::new();
    for (_, b) in all_blocks(f) {
        if !f.blocks[b].dataflow {
            continue;
        }
        for bd in &f.blocks[b].bindings {
            if !f.vars[bd.var].dataflow {
                continue;
            }
            if let Some((arg, dims)) = reshape_of(m, f, bd.value) {
                out.push((bd.value, arg, dims));
            }
        }
    }
    out
}

/// When `value` is a `call_tir` of a reshape kernel: its reshaped argument and the
/// result's dims.
fn reshape_of(m: &Module, f: &RelaxFunction, value: Expr) -> Option<(Expr, Vec<PrimExpr>)> {
    let ExprData::Call(call) = &f.exprs[value] else { return None };
    if f.callee_op(call) != Some(ops::CALL_TIR) || call.args.len() < 2 {
        return None;
    }
    let ExprData::Global(g) = f.exprs[f.list(call.args)[0]] else { return None };
    let Func::Prim(pf) = &m.globals.get(g)?.func else { return None };
    let ExprData::Tuple(fields) = &f.exprs[f.list(call.args)[1]] else { return None };
    let used: Vec<usize> = (0..fields.len()).filter(|&i| param_buffer_used(pf, i)).collect();
    let [i] = used[..] else { return None };
    let arg = f.list(fields)[i];
    if !has_reshape_pattern(pf) {
        return None;
    }
    let (TyData::Tensor { dtype: din, .. }, TyData::Tensor { dtype: dout, .. }) =
        (f.pool.ty(f.ty_of(arg)?), f.pool.ty(f.ty_of(value)?))
    else {
        return None;
    };
    if din.is_void() || din != dout {
        return None;
    }
    let in_dims = f.pool.ty(f.ty_of(arg)?).dims()?.to_vec();
    let out_dims = f.pool.ty(f.ty_of(value)?).dims()?.to_vec();
    let mut pool = f.pool.clone();
    let (a, b) = (product(&mut pool, &in_dims)?, product(&mut pool, &out_dims)?);
    Analyzer::new().prove_equal(&pool, a, b).then_some((arg, out_dims))
}

/// The element count, `d0 * d1 * ...` (1 for a scalar).
fn product(pool: &mut relax_ir::Pool, dims: &[PrimExpr]) -> Option<PrimExpr> {
    let mut it = dims.iter();
    let mut acc = match it.next() {
        Some(&d) => d,
        None => pool.i64(1),
    };
    for &d in it {
        acc = pool.binary(BinOp::Mul, acc, d).ok()?;
    }
    Some(acc)
}

/// True when the buffer of parameter `i` is read or written in the body.
fn param_buffer_used(pf: &PrimFunc, i: usize) -> bool {
    let Some(&p) = pf.params.get(i) else { return false };
    let Some(buf) = pf.param_buffer(p) else { return false };
    let mut used = false;
    pf.walk(pf.body, |_, s| match s {
        StmtData::Store { buffer, indices, value } => {
            used |= *buffer == buf;
            used |= indices.iter().chain(std::iter::once(value)).any(|&e| loads(pf, e, buf));
        }
        StmtData::Evaluate(e) => used |= loads(pf, *e, buf),
        StmtData::If { cond, .. } | StmtData::While { cond, .. } => used |= loads(pf, *cond, buf),
        StmtData::Let { value, .. } => used |= loads(pf, *value, buf),
        _ => {}
    });
    used
}

/// True when `e` loads from `buf`.
fn loads(pf: &PrimFunc, e: PrimExpr, buf: Buffer) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let PrimExprData::Load { buffer, .. } = pf.pool.prim(x)
            && *buffer == buf
        {
            return true;
        }
        pf.pool.for_each_operand(x, |o| stack.push(o));
    }
    false
}
