//! Constant intervals: the range each integer expression can take.

use super::Analyzer;
use super::canonical::{Atom, Sum};
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};

/// An inclusive range; `None` is unbounded on that side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Least value, or `None` for minus infinity.
    pub lo: Option<i64>,
    /// Greatest value, or `None` for plus infinity.
    pub hi: Option<i64>,
}

impl Interval {
    /// `[lo, hi]`.
    pub fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo: Some(lo), hi: Some(hi) }
    }
    /// A single value.
    pub fn point(v: i64) -> Interval {
        Interval::new(v, v)
    }
    /// `[0, +inf)`.
    pub fn non_negative() -> Interval {
        Interval { lo: Some(0), hi: None }
    }
    /// `(-inf, +inf)`.
    pub fn everything() -> Interval {
        Interval { lo: None, hi: None }
    }
    /// `[lo, +inf)`.
    pub fn at_least(lo: i64) -> Interval {
        Interval { lo: Some(lo), hi: None }
    }
    /// The sum of two ranges.
    pub fn plus(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.zip(o.lo).and_then(|(a, b)| a.checked_add(b)),
            hi: self.hi.zip(o.hi).and_then(|(a, b)| a.checked_add(b)),
        }
    }
    /// The range of `k × x`.
    pub fn scale(self, k: i64) -> Interval {
        let m = |v: Option<i64>| v.and_then(|v| v.checked_mul(k));
        if k >= 0 { Interval { lo: m(self.lo), hi: m(self.hi) } } else { Interval { lo: m(self.hi), hi: m(self.lo) } }
    }
    /// The range of a product.
    pub fn times(self, o: Interval) -> Interval {
        // Corner products with infinities handled by sign.
        let corners = [(self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi)];
        let mut lo = Some(i64::MAX);
        let mut hi = Some(i64::MIN);
        for (a, b) in corners {
            let (a_sign, b_sign) = (sign(a, self), sign(b, o));
            match (a, b) {
                (Some(x), Some(y)) => match x.checked_mul(y) {
                    Some(p) => {
                        lo = lo.map(|l| l.min(p));
                        hi = hi.map(|h| h.max(p));
                    }
                    None => return Interval::everything(),
                },
                _ => {
                    // One factor is infinite: the product is infinite with the sign of the
                    // product of signs, unless the other factor is zero.
                    let s = a_sign * b_sign;
                    if s > 0 {
                        hi = None;
                    } else if s < 0 {
                        lo = None;
                    }
                }
            }
        }
        Interval { lo, hi }
    }
    /// The smallest range holding both.
    pub fn union(self, o: Interval) -> Interval {
        Interval { lo: self.lo.zip(o.lo).map(|(a, b)| a.min(b)), hi: self.hi.zip(o.hi).map(|(a, b)| a.max(b)) }
    }
}

/// The sign of a bound value: infinite bounds take the sign of their side.
fn sign(v: Option<i64>, iv: Interval) -> i64 {
    match v {
        Some(x) => x.signum(),
        None if v == iv.hi && iv.hi.is_none() => 1,
        None => -1,
    }
}

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
        Atom::FloorDiv(s, c) => {
            let iv = sum_bound(an, pool, s);
            Interval {
                lo: iv.lo.map(|l| crate::prim_build::floor_div(l, *c)),
                hi: iv.hi.map(|h| crate::prim_build::floor_div(h, *c)),
            }
        }
        Atom::FloorMod(s, c) => {
            let iv = sum_bound(an, pool, s);
            if iv.lo.is_some_and(|l| l >= 0) && iv.hi.is_some_and(|h| h < *c) { iv } else { Interval::new(0, c - 1) }
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
        PrimExprData::Bin(BinOp::Min, a, b) => {
            let (x, y) = (sub(*a), sub(*b));
            Interval { lo: x.lo.zip(y.lo).map(|(p, q)| p.min(q)), hi: min_opt(x.hi, y.hi) }
        }
        PrimExprData::Bin(BinOp::Max, a, b) => {
            let (x, y) = (sub(*a), sub(*b));
            Interval { lo: max_opt(x.lo, y.lo), hi: x.hi.zip(y.hi).map(|(p, q)| p.max(q)) }
        }
        PrimExprData::Select(_, t, f) => sub(*t).union(sub(*f)),
        PrimExprData::Cast(_, a) if pool.dtype(*a).is_int() => sub(*a),
        PrimExprData::Call { op, args, .. } if op == "tir.if_then_else" && args.len() == 3 => {
            sub(args[1]).union(sub(args[2]))
        }
        _ => dtype_range(pool.dtype(e)),
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

/// The range of values of an integer type.
pub fn dtype_range(t: crate::dtype::DataType) -> Interval {
    if t.is_bool() {
        return Interval::new(0, 1);
    }
    let bits = u32::from(t.bits);
    if !t.is_int() || bits >= 64 || bits == 0 {
        return if t.is_uint() { Interval::non_negative() } else { Interval::everything() };
    }
    if t.is_uint() {
        Interval::new(0, (1i64 << bits) - 1)
    } else {
        Interval::new(-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    }
}
