//! The simplification inference applies where TVM calls `Analyzer::Simplify`: operands
//! are simplified bottom-up, `min`/`max` and conditionals whose outcome is provable are
//! resolved, and integer expressions are rebuilt from their canonical form.

use std::collections::HashMap;

use crate::arith::Analyzer;
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::intrinsic::Intrinsic;
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};

pub(crate) use crate::arith::build::binary as bin;

/// TVM's `if_then_else(cond, t, f)`: a constant condition picks its branch.
pub(crate) fn if_then_else(pool: &mut Pool, cond: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr {
    if let PrimExprData::Int(_, v) = *pool.prim(cond) {
        return if v != 0 { t } else { f };
    }
    let (t, f) = pool.match_types(t, f).unwrap_or((t, f));
    let dtype = pool.dtype(t);
    pool.raw(PrimExprData::Call { dtype, op: Intrinsic::IfThenElse.into(), args: vec![cond, t, f] })
}

/// TVM's `ceildiv(a, b)` for integers: `(a + b - 1) // b`, folded.
pub(crate) fn ceildiv(pool: &mut Pool, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let s = bin(pool, BinOp::Add, a, b);
    let one = pool.int(pool.dtype(s), 1);
    let s = bin(pool, BinOp::Sub, s, one);
    bin(pool, BinOp::FloorDiv, s, b)
}

/// A simplified expression with the same value (TVM's `Analyzer::Simplify`, for the
/// integer expressions of shapes).
pub fn simplify(an: &Analyzer, pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    let mut memo = HashMap::new();
    let r = rewrite(an, pool, e, &mut memo, 0);
    finish(an, pool, r)
}

fn finish(an: &Analyzer, pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    let t = pool.dtype(e);
    if t.is_int() && t.lanes <= 1 { an.simplify(pool, e) } else { e }
}

/// Deeper expressions are left as they are (shape expressions are never this deep).
const MAX_DEPTH: u32 = 64;

fn rewrite(
    an: &Analyzer,
    pool: &mut Pool,
    e: PrimExpr,
    memo: &mut HashMap<PrimExpr, PrimExpr>,
    depth: u32,
) -> PrimExpr {
    if depth > MAX_DEPTH {
        return e;
    }
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    let data = pool.prim(e).clone();
    let r = match data {
        PrimExprData::Bin(op, a, b) => {
            let na = rewrite(an, pool, a, memo, depth + 1);
            let nb = rewrite(an, pool, b, memo, depth + 1);
            match op {
                BinOp::Min | BinOp::Max if pool.dtype(na).is_int() && pool.dtype(nb).is_int() => {
                    let (na, nb) = (finish(an, pool, na), finish(an, pool, nb));
                    minmax(an, pool, op, na, nb)
                }
                // `a - min(b, c)` is `max(a - b, a - c)` (and `a - max(b, c)` a `min`):
                // worth it when one side simplifies to a constant (`n - min(1, n)` is
                // `max(n - 1, 0)`).
                BinOp::Sub if pool.dtype(na).is_int() => {
                    if let PrimExprData::Bin(inner @ (BinOp::Min | BinOp::Max), b1, b2) = *pool.prim(nb) {
                        let x = bin(pool, BinOp::Sub, na, b1);
                        let x = finish(an, pool, x);
                        let y = bin(pool, BinOp::Sub, na, b2);
                        let y = finish(an, pool, y);
                        if pool.as_int(x).is_some() || pool.as_int(y).is_some() {
                            let outer = if inner == BinOp::Min { BinOp::Max } else { BinOp::Min };
                            return memo_insert(memo, e, minmax(an, pool, outer, x, y));
                        }
                    }
                    if (na, nb) == (a, b) { e } else { bin(pool, op, na, nb) }
                }
                _ if op.is_compare() && pool.dtype(na).is_int() && pool.dtype(nb).is_int() => {
                    let c = bin(pool, op, na, nb);
                    if an.prove(pool, c) {
                        pool.bool_const(true)
                    } else if an.disprove(pool, c) {
                        pool.bool_const(false)
                    } else {
                        c
                    }
                }
                _ if (na, nb) == (a, b) => e,
                _ => bin(pool, op, na, nb),
            }
        }
        PrimExprData::Not(a) => {
            let na = rewrite(an, pool, a, memo, depth + 1);
            if na == a { e } else { pool.not(na) }
        }
        PrimExprData::Cast(t, a) => {
            let na = rewrite(an, pool, a, memo, depth + 1);
            if na == a { e } else { pool.cast(t, na) }
        }
        _ if is_conditional(pool, e) => {
            let (c, t, f) = conditional_parts(pool, e).expect("a conditional has three parts");
            let nc = rewrite(an, pool, c, memo, depth + 1);
            if an.prove(pool, nc) {
                rewrite(an, pool, t, memo, depth + 1)
            } else if an.disprove(pool, nc) {
                rewrite(an, pool, f, memo, depth + 1)
            } else {
                let nc = match *pool.prim(nc) {
                    PrimExprData::Bin(op, x, y) if op.is_compare() => compare(an, pool, op, x, y),
                    _ => nc,
                };
                let nt = rewrite(an, pool, t, memo, depth + 1);
                let nt = finish(an, pool, nt);
                let nf = rewrite(an, pool, f, memo, depth + 1);
                let nf = finish(an, pool, nf);
                match data {
                    PrimExprData::Select(..) => pool.raw(PrimExprData::Select(nc, nt, nf)),
                    _ => if_then_else(pool, nc, nt, nf),
                }
            }
        }
        _ => e,
    };
    memo.insert(e, r);
    r
}

fn memo_insert(memo: &mut HashMap<PrimExpr, PrimExpr>, e: PrimExpr, r: PrimExpr) -> PrimExpr {
    memo.insert(e, r);
    r
}

/// `min(a, b)` / `max(a, b)` of simplified operands: resolved when one side is provably
/// the smaller (larger), constants merged into a nested `min`/`max` with a constant
/// (`max(max(x, 0), 0)` is `max(x, 0)`), else built as is.
fn minmax(an: &Analyzer, pool: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let a_le_b = le(an, pool, a, b, 0);
    let b_le_a = le(an, pool, b, a, 0);
    match (op, a_le_b, b_le_a) {
        (BinOp::Min, true, _) | (BinOp::Max, _, true) => return a,
        (BinOp::Min, _, true) | (BinOp::Max, true, _) => return b,
        _ => {}
    }
    if let Some(c2) = pool.as_int(b)
        && let PrimExprData::Bin(inner, x, c1) = *pool.prim(a)
        && inner == op
        && let Some(c1) = pool.as_int(c1)
    {
        let c = if op == BinOp::Min { c1.min(c2) } else { c1.max(c2) };
        let c = pool.int(pool.dtype(x), c);
        return minmax(an, pool, op, x, c);
    }
    bin(pool, op, a, b)
}

/// `x <= y` for every value, looking into `min` and `max` on either side:
/// `max(a, b) <= y` when both `a <= y` and `b <= y`, `min(a, b) <= y` when either is.
fn le(an: &Analyzer, pool: &Pool, x: PrimExpr, y: PrimExpr, depth: u32) -> bool {
    if an.prove_le(pool, x, y) {
        return true;
    }
    if depth > 4 {
        return false;
    }
    if let PrimExprData::Bin(op @ (BinOp::Min | BinOp::Max), a, b) = *pool.prim(x) {
        let (l, r) = (le(an, pool, a, y, depth + 1), le(an, pool, b, y, depth + 1));
        if (op == BinOp::Max && l && r) || (op == BinOp::Min && (l || r)) {
            return true;
        }
    }
    if let PrimExprData::Bin(op @ (BinOp::Min | BinOp::Max), a, b) = *pool.prim(y) {
        let (l, r) = (le(an, pool, x, a, depth + 1), le(an, pool, x, b, depth + 1));
        if (op == BinOp::Min && l && r) || (op == BinOp::Max && (l || r)) {
            return true;
        }
    }
    false
}

/// A comparison of integers with the constant moved to the right when the rest has only
/// positive coefficients (`m - 1 < 0` is `m < 1`), as TVM's rewrite simplifier writes it.
fn compare(an: &Analyzer, pool: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let (ta, tb) = (pool.dtype(a), pool.dtype(b));
    if ta.is_int() && tb.is_int() && ta.lanes <= 1 {
        let d = an.canonical(pool, a).checked_sub(&an.canonical(pool, b));
        if let Some(mut d) = d
            && !d.terms.is_empty()
            && d.terms.values().all(|&c| c > 0)
        {
            let k = d.konst;
            d.konst = 0;
            let lhs = crate::arith::build::from_sum(pool, &d, ta);
            let rhs = pool.int(ta, -k);
            return bin(pool, op, lhs, rhs);
        }
    }
    bin(pool, op, a, b)
}

fn is_conditional(pool: &Pool, e: PrimExpr) -> bool {
    match pool.prim(e) {
        PrimExprData::Select(..) => true,
        PrimExprData::Call { op, args, .. } => op.is(Intrinsic::IfThenElse) && args.len() == 3,
        _ => false,
    }
}

fn conditional_parts(pool: &Pool, e: PrimExpr) -> Option<(PrimExpr, PrimExpr, PrimExpr)> {
    match pool.prim(e) {
        PrimExprData::Select(c, t, f) => Some((*c, *t, *f)),
        PrimExprData::Call { args, .. } if args.len() == 3 => Some((args[0], args[1], args[2])),
        _ => None,
    }
}

/// The `int64` form of a shape value: integer constants of other widths are recast,
/// as TVM does when it substitutes into shapes.
pub(crate) fn as_index(pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    if let PrimExprData::Int(t, v) = *pool.prim(e)
        && t != DataType::INT64
        && t.is_int()
    {
        return pool.i64(v);
    }
    e
}
