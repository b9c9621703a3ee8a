//! Loop-invariant code motion out of the lanes loop: the parts of a weight's decode that
//! do not depend on the lane (a block's scale, a sub-block's 6-bit scale and minimum,
//! which Q4_K picks with `T.if_then_else`) are computed once per block into local
//! scalars, so that the lanes loop is one basic block of straight-line arithmetic that
//! LLVM vectorizes (a conditional inside it would be a branch per lane). Each hoisted
//! expression is evaluated exactly as before, once instead of once per lane.

use std::collections::HashMap;

use relax_ir::{Buffer, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::local;

/// The hoisted part of an expression.
pub(in crate::schedule_cpu) struct Hoisted {
    /// The stores that compute the invariants, to run before the lanes loop.
    pub stores: Vec<Stmt>,
    /// Their local buffers (one element each).
    pub buffers: Vec<Buffer>,
    /// The expression reading them.
    pub expr: PrimExpr,
}

/// Moves the maximal subexpressions of `e` that mention none of `vars` and read memory
/// (a load or a call) into local scalars named after `name`.
pub(in crate::schedule_cpu) fn hoist(f: &mut PrimFunc, e: PrimExpr, vars: &[SymVar], name: &str) -> Hoisted {
    let mut h = Hoisted { stores: Vec::new(), buffers: Vec::new(), expr: e };
    let mut memo = HashMap::new();
    h.expr = go(f, e, vars, name, &mut h, &mut memo);
    h
}

fn depends(f: &PrimFunc, e: PrimExpr, vars: &[SymVar]) -> bool {
    f.pool.free_vars(e).iter().any(|v| vars.contains(v))
}

/// True when `e` reads memory or calls something (worth a register of its own).
fn worth(f: &PrimFunc, e: PrimExpr) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if matches!(f.pool.prim(x), PrimExprData::Load { .. } | PrimExprData::Call { .. }) {
            return true;
        }
        f.pool.for_each_operand(x, |o| stack.push(o));
    }
    false
}

fn go(
    f: &mut PrimFunc,
    e: PrimExpr,
    vars: &[SymVar],
    name: &str,
    h: &mut Hoisted,
    memo: &mut HashMap<PrimExpr, PrimExpr>,
) -> PrimExpr {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    let r = if !depends(f, e, vars) {
        let dt = f.pool.dtype(e);
        if worth(f, e) && dt.lanes == 1 && !matches!(f.pool.prim(e), PrimExprData::Let { .. }) {
            let buf = local(f, &format!("{name}_{}", h.buffers.len()), dt, &[1]);
            let z = f.pool.i64(0);
            h.stores.push(f.stmts.push(StmtData::Store { buffer: buf, indices: vec![z], value: e }));
            h.buffers.push(buf);
            f.pool.raw(PrimExprData::Load { dtype: dt, buffer: buf, indices: vec![z] })
        } else {
            e
        }
    } else if matches!(f.pool.prim(e), PrimExprData::Let { .. }) {
        e
    } else {
        let mut ops = Vec::new();
        f.pool.for_each_operand(e, |o| ops.push(o));
        let new: Vec<PrimExpr> = ops.iter().map(|&o| go(f, o, vars, name, h, memo)).collect();
        if new == ops { e } else { super::ksplit::with_operands(&mut f.pool, e, new) }
    };
    memo.insert(e, r);
    r
}
