//! From canonical form back to an expression (normal-form mode), with TVM's folding
//! constructors ([`binary`], which TVM mode builds with too).
//!
//! Terms come out in the canonical order (variables in creation order, then divisions,
//! then opaque atoms), positive terms before negative ones, the constant last:
//! `n * 4 + m - 1`.

use super::canonical::{Atom, Monomial, Sum};
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};

/// Builds `s` as an expression of type `dtype`.
pub fn from_sum(pool: &mut Pool, s: &Sum, dtype: DataType) -> PrimExpr {
    let mut acc: Option<PrimExpr> = None;
    let mut terms: Vec<(&Monomial, i64)> = s.terms.iter().map(|(m, &c)| (m, c)).collect();
    terms.sort_by_key(|&(_, c)| c < 0);
    for (m, c) in terms {
        let mono = monomial(pool, m, dtype);
        let mag = c.unsigned_abs();
        let term = if mag == 1 {
            mono
        } else {
            let k = pool.int(dtype, mag as i64);
            binary(pool, BinOp::Mul, mono, k)
        };
        acc = Some(match (acc, c < 0) {
            (None, false) => term,
            (None, true) => {
                let zero = pool.int(dtype, 0);
                binary(pool, BinOp::Sub, zero, term)
            }
            (Some(a), false) => binary(pool, BinOp::Add, a, term),
            (Some(a), true) => binary(pool, BinOp::Sub, a, term),
        });
    }
    match acc {
        None => pool.int(dtype, s.konst),
        Some(a) if s.konst == 0 => a,
        Some(a) => {
            let k = pool.int(dtype, s.konst.unsigned_abs() as i64);
            binary(pool, if s.konst > 0 { BinOp::Add } else { BinOp::Sub }, a, k)
        }
    }
}

/// TVM's operator constructor for `op` ([`Pool::binary`]: match types, fold); operands
/// whose types cannot be matched are combined as written. Both simplifier modes build
/// their results with it.
pub fn binary(pool: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    pool.binary(op, a, b).unwrap_or_else(|_| pool.raw(PrimExprData::Bin(op, a, b)))
}

fn monomial(pool: &mut Pool, m: &Monomial, dtype: DataType) -> PrimExpr {
    let mut acc: Option<PrimExpr> = None;
    for a in m {
        let x = atom(pool, a, dtype);
        acc = Some(match acc {
            None => x,
            Some(p) => binary(pool, BinOp::Mul, p, x),
        });
    }
    acc.unwrap_or_else(|| pool.int(dtype, 1))
}

fn atom(pool: &mut Pool, a: &Atom, dtype: DataType) -> PrimExpr {
    let e = match a {
        Atom::Var(v) => pool.var_ref(*v),
        Atom::FloorDiv(s, c) => {
            let x = from_sum(pool, s, dtype);
            let k = pool.int(dtype, *c);
            binary(pool, BinOp::FloorDiv, x, k)
        }
        Atom::FloorMod(s, c) => {
            let x = from_sum(pool, s, dtype);
            let k = pool.int(dtype, *c);
            binary(pool, BinOp::FloorMod, x, k)
        }
        Atom::Opaque(e) => *e,
    };
    pool.cast(dtype, e)
}
