//! The normal-form mode's bounds: the constant range of a canonical sum, from the
//! analyzer's variable ranges, and of the opaque atoms inside it.

use super::Analyzer;
use super::canonical::{Atom, Sum};
use super::interval::Interval;
use crate::intrinsic::Intrinsic;
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};

/// The range of a canonical sum.
pub fn sum_bound(an: &Analyzer, pool: &Pool, s: &Sum) -> Interval {
    let mut acc = Interval::point(s.konst);
    for (m, &c) in &s.terms {
        let mut prod = Interval::point(1);
        // x * x is never negative.
        let square = m.len() == 2 && m[0] == m[1];
        for a in m {
            prod = prod.times(atom_bound(an, pool, a));
        }
        if square && prod.lo.is_none_or(|l| l < 0) {
            prod.lo = Some(0);
        }
        acc = acc.plus(prod.scale(c));
        if acc.lo.is_none() && acc.hi.is_none() {
            return acc;
        }
    }
    acc
}

fn atom_bound(an: &Analyzer, pool: &Pool, a: &Atom) -> Interval {
    match a {
        Atom::Var(v) => an.var_bound(*v),
        Atom::FloorDiv(s, c) => sum_bound(an, pool, s).floordiv_const(*c),
        Atom::FloorMod(s, c) => {
            let iv = sum_bound(an, pool, s);
            if iv.is_non_negative() && iv.is_below(*c) { iv } else { Interval::new(0, c - 1) }
        }
        Atom::Opaque(e) => expr_bound(an, pool, *e, 0),
    }
}

/// The range of an expression that is not in canonical form (min, max, select, casts).
fn expr_bound(an: &Analyzer, pool: &Pool, e: crate::entities::PrimExpr, depth: u32) -> Interval {
    if depth > 64 {
        return Interval::everything();
    }
    let sub = |x| {
        let s = super::canonical::to_sum(an, pool, x);
        if let Some(Atom::Opaque(inner)) = s.as_atom()
            && *inner == x
        {
            expr_bound(an, pool, x, depth + 1)
        } else {
            sum_bound(an, pool, &s)
        }
    };
    match pool.prim(e) {
        PrimExprData::Int(_, v) => Interval::point(*v),
        PrimExprData::Bin(BinOp::Min, a, b) => sub(*a).min(sub(*b)),
        PrimExprData::Bin(BinOp::Max, a, b) => sub(*a).max(sub(*b)),
        PrimExprData::Select(_, t, f) => sub(*t).union(sub(*f)),
        PrimExprData::Cast(_, a) if pool.dtype(*a).is_int() => sub(*a),
        PrimExprData::Call { op, args, .. } if op.is(Intrinsic::IfThenElse) && args.len() == 3 => {
            sub(args[1]).union(sub(args[2]))
        }
        _ => Interval::of_dtype(pool.dtype(e)),
    }
}
