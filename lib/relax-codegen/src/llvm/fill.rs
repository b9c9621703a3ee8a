//! Allocations whose zero-fill can be left out: lowered TIR zero-fills every allocation
//! (the interpreter does), but when the first thing the allocation's scope does is a
//! loop nest that stores every element without reading the buffer, no zero is ever
//! read, and the fill (a `memset` of up to a packed panel's 256 KiB per parallel
//! iteration) is wasted.

use relax_ir::{Buffer, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData};

/// True when `body`, the scope of allocation `b`, starts with a perfect loop nest (loops
/// from 0 without a step) whose only statement stores `b` at the loop variables, in
/// order, each loop running over `b`'s dim, from a value and indices that do not read
/// `b`.
pub(super) fn overwritten_first(f: &PrimFunc, b: Buffer, body: Stmt) -> bool {
    let mut at = body;
    while let StmtData::Seq(v) = &f.stmts[at] {
        match v.first() {
            Some(&s) => at = s,
            None => return false,
        }
    }
    let mut loops = Vec::new();
    loop {
        match &f.stmts[at] {
            StmtData::For { var, min, extent, step: None, body, .. } if f.pool.as_int(*min) == Some(0) => {
                loops.push((*var, *extent));
                at = *body;
            }
            StmtData::Seq(v) if v.len() == 1 => at = v[0],
            _ => break,
        }
    }
    let StmtData::Store { buffer, indices, value } = &f.stmts[at] else { return false };
    let shape = &f.buffer(b).shape;
    *buffer == b
        && indices.len() == loops.len()
        && shape.len() == loops.len()
        && indices.iter().zip(&loops).zip(shape).all(|((&i, &(v, ext)), &d)| {
            f.pool.as_var(i) == Some(v) && (ext == d || f.pool.as_int(ext).is_some_and(|x| f.pool.as_int(d) == Some(x)))
        })
        && !reads(f, *value, b)
}

/// True when `e` loads from `b`.
fn reads(f: &PrimFunc, e: PrimExpr, b: Buffer) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, .. } = f.pool.prim(e)
            && *buffer == b
        {
            return true;
        }
        f.pool.for_each_operand(e, |o| stack.push(o));
    }
    false
}
