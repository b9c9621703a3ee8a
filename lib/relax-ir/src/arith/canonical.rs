//! The canonical form of integer expressions: a sum of monomials with integer
//! coefficients, plus a constant.

use std::collections::BTreeMap;

use super::Analyzer;
use super::bounds::sum_bound;
use crate::entities::{PrimExpr, SymVar};
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};
use crate::prim_build::{floor_div, floor_mod};

/// A factor of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// A variable.
    Var(SymVar),
    /// `floordiv(sum, c)` with `c > 1`.
    FloorDiv(Box<Sum>, i64),
    /// `floormod(sum, c)` with `c > 1`.
    FloorMod(Box<Sum>, i64),
    /// Anything else, kept as the expression itself.
    Opaque(PrimExpr),
}

/// A product of atoms, sorted; the empty monomial is never stored (it is the constant).
pub type Monomial = Vec<Atom>;

/// `Σ coefficient × monomial + constant`. Zero coefficients are never stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sum {
    /// Monomials and their coefficients.
    pub terms: BTreeMap<Monomial, i64>,
    /// The constant term.
    pub konst: i64,
}

/// The most terms a product may expand into before it is kept opaque.
const MAX_TERMS: usize = 64;

impl Sum {
    /// A constant.
    pub fn constant(c: i64) -> Sum {
        Sum { terms: BTreeMap::new(), konst: c }
    }
    /// `1 × atom`.
    pub fn atom(a: Atom) -> Sum {
        let mut terms = BTreeMap::new();
        terms.insert(vec![a], 1);
        Sum { terms, konst: 0 }
    }
    /// True for the constant 0.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.konst == 0
    }
    /// The value when constant.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.konst)
    }
    /// The single atom of `1 × atom + 0`.
    pub fn as_atom(&self) -> Option<&Atom> {
        if self.konst != 0 || self.terms.len() != 1 {
            return None;
        }
        let (m, &c) = self.terms.iter().next()?;
        (c == 1 && m.len() == 1).then(|| &m[0])
    }
    fn add_term(&mut self, m: Monomial, c: i64) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        if m.is_empty() {
            self.konst = self.konst.checked_add(c)?;
            return Some(());
        }
        let slot = self.terms.entry(m).or_insert(0);
        *slot = slot.checked_add(c)?;
        if *slot == 0 {
            self.terms.retain(|_, v| *v != 0);
        }
        Some(())
    }
    /// `self + other`, or `None` on overflow.
    pub fn checked_add(&self, other: &Sum) -> Option<Sum> {
        let mut r = self.clone();
        r.konst = r.konst.checked_add(other.konst)?;
        for (m, &c) in &other.terms {
            r.add_term(m.clone(), c)?;
        }
        Some(merge_divmod(r))
    }
    /// `self × k`, or `None` on overflow.
    pub fn checked_scale(&self, k: i64) -> Option<Sum> {
        if k == 0 {
            return Some(Sum::default());
        }
        let mut r = Sum { terms: BTreeMap::new(), konst: self.konst.checked_mul(k)? };
        for (m, &c) in &self.terms {
            r.terms.insert(m.clone(), c.checked_mul(k)?);
        }
        Some(r)
    }
    /// `self × other`, or `None` on overflow or when the product has too many terms.
    pub fn checked_mul(&self, other: &Sum) -> Option<Sum> {
        if let Some(k) = other.as_const() {
            return self.checked_scale(k);
        }
        if let Some(k) = self.as_const() {
            return other.checked_scale(k);
        }
        let mut r = Sum::constant(self.konst.checked_mul(other.konst)?);
        for (m, &c) in &self.terms {
            r.add_term(m.clone(), c.checked_mul(other.konst)?)?;
        }
        for (m, &c) in &other.terms {
            r.add_term(m.clone(), c.checked_mul(self.konst)?)?;
        }
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &other.terms {
                let mut m: Monomial = ma.iter().chain(mb.iter()).cloned().collect();
                m.sort();
                r.add_term(m, ca.checked_mul(cb)?)?;
                if r.terms.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(merge_divmod(r))
    }
    /// `self - other`, or `None` on overflow.
    pub fn checked_sub(&self, other: &Sum) -> Option<Sum> {
        self.checked_add(&other.checked_scale(-1)?)
    }
}

/// `c × floordiv(X, c) + floormod(X, c)` is `X`: folds such pairs (with any common factor).
fn merge_divmod(mut s: Sum) -> Sum {
    loop {
        let mut found: Option<(Monomial, Monomial, Sum, i64)> = None;
        for (m, &k) in &s.terms {
            let [Atom::FloorMod(x, c)] = m.as_slice() else { continue };
            let div_mono = vec![Atom::FloorDiv(x.clone(), *c)];
            if let Some(kc) = k.checked_mul(*c)
                && s.terms.get(&div_mono) == Some(&kc)
            {
                found = Some((m.clone(), div_mono, (**x).clone(), k));
                break;
            }
        }
        let Some((mod_m, div_m, x, k)) = found else { return s };
        s.terms.remove(&mod_m);
        s.terms.remove(&div_m);
        match x.checked_scale(k).and_then(|kx| {
            let mut t = s.clone();
            t.konst = t.konst.checked_add(kx.konst)?;
            for (m, &c) in &kx.terms {
                t.add_term(m.clone(), c)?;
            }
            Some(t)
        }) {
            Some(t) => s = t,
            None => return s,
        }
    }
}

/// The canonical form of `e`.
pub fn to_sum(an: &Analyzer, pool: &Pool, e: PrimExpr) -> Sum {
    let mut memo = std::collections::HashMap::new();
    to_sum_memo(an, pool, e, &mut memo)
}

fn opaque(e: PrimExpr) -> Sum {
    Sum::atom(Atom::Opaque(e))
}

fn to_sum_memo(an: &Analyzer, pool: &Pool, e: PrimExpr, memo: &mut std::collections::HashMap<PrimExpr, Sum>) -> Sum {
    if let Some(s) = memo.get(&e) {
        return s.clone();
    }
    let r: Sum = match pool.prim(e) {
        PrimExprData::Int(t, v) if t.is_int() => Sum::constant(*v),
        PrimExprData::Var(v) if pool.vars[*v].dtype.is_int() => Sum::atom(Atom::Var(*v)),
        PrimExprData::Cast(t, a) if t.is_int() && pool.dtype(*a).is_int() && t.bits >= pool.dtype(*a).bits => {
            to_sum_memo(an, pool, *a, memo)
        }
        PrimExprData::Bin(op, a, b) if pool.dtype(e).is_int() => {
            let (a, b) = (*a, *b);
            let sa = to_sum_memo(an, pool, a, memo);
            let sb = to_sum_memo(an, pool, b, memo);
            match op {
                BinOp::Add => sa.checked_add(&sb).unwrap_or_else(|| opaque(e)),
                BinOp::Sub => sb.checked_scale(-1).and_then(|n| sa.checked_add(&n)).unwrap_or_else(|| opaque(e)),
                BinOp::Mul => sa.checked_mul(&sb).unwrap_or_else(|| opaque(e)),
                BinOp::FloorDiv => divide(an, pool, sa, &sb).unwrap_or_else(|| opaque(e)),
                BinOp::FloorMod => modulo(an, pool, sa, &sb).unwrap_or_else(|| opaque(e)),
                BinOp::Div | BinOp::Mod => {
                    // Truncating division agrees with floor division on non-negative operands.
                    let nonneg = |s: &Sum| sum_bound(an, pool, s).lo.is_some_and(|l| l >= 0);
                    let pos = |s: &Sum| sum_bound(an, pool, s).lo.is_some_and(|l| l >= 1);
                    if nonneg(&sa) && pos(&sb) {
                        let r = if *op == BinOp::Div { divide(an, pool, sa, &sb) } else { modulo(an, pool, sa, &sb) };
                        r.unwrap_or_else(|| opaque(e))
                    } else {
                        opaque(e)
                    }
                }
                BinOp::Min | BinOp::Max => {
                    let Some(d) = sb.checked_sub(&sa) else { return opaque(e) };
                    let iv = sum_bound(an, pool, &d);
                    let a_le_b = iv.lo.is_some_and(|l| l >= 0);
                    let b_le_a = iv.hi.is_some_and(|h| h <= 0);
                    match (op, a_le_b, b_le_a) {
                        (BinOp::Min, true, _) | (BinOp::Max, _, true) => sa,
                        (BinOp::Min, _, true) | (BinOp::Max, true, _) => sb,
                        _ => opaque(e),
                    }
                }
                _ => opaque(e),
            }
        }
        _ => opaque(e),
    };
    memo.insert(e, r.clone());
    r
}

/// `s // d`, when it can be expressed in canonical form.
fn divide(an: &Analyzer, pool: &Pool, s: Sum, d: &Sum) -> Option<Sum> {
    if let Some(c) = d.as_const() {
        return if c > 0 { Some(floordiv_const(an, pool, s, c)) } else { None };
    }
    exact_quotient(&s, d)
}

/// `s % d`, when it can be expressed in canonical form.
fn modulo(an: &Analyzer, pool: &Pool, s: Sum, d: &Sum) -> Option<Sum> {
    if let Some(c) = d.as_const() {
        return if c > 0 { Some(floormod_const(an, pool, s, c)) } else { None };
    }
    exact_quotient(&s, d).map(|_| Sum::default())
}

/// `s / d` when `d` is one monomial (with a non-zero coefficient) that divides every term
/// of `s` exactly and `s` has no constant: `(x*y) // y = x`, `(x*c1) // (x*c2) = c1/c2`.
fn exact_quotient(s: &Sum, d: &Sum) -> Option<Sum> {
    if d.konst != 0 || d.terms.len() != 1 || s.konst != 0 || s.terms.is_empty() {
        return None;
    }
    let (dm, &dc) = d.terms.iter().next()?;
    let mut q = Sum::default();
    for (m, &c) in &s.terms {
        if c % dc != 0 {
            return None;
        }
        let mut rest = m.clone();
        for a in dm {
            let i = rest.iter().position(|x| x == a)?;
            rest.remove(i);
        }
        q.add_term(rest, c / dc)?;
    }
    Some(q)
}

/// Splits `s` into `c × exact + rest`, where `c` divides no coefficient of `rest` and
/// `0 <= rest.konst < c`.
fn split(s: &Sum, c: i64) -> (Sum, Sum) {
    let mut exact = Sum::constant(floor_div(s.konst, c));
    let mut rest = Sum::constant(floor_mod(s.konst, c));
    for (m, &k) in &s.terms {
        if k % c == 0 {
            exact.terms.insert(m.clone(), k / c);
        } else {
            rest.terms.insert(m.clone(), k);
        }
    }
    (exact, rest)
}

fn in_range(an: &Analyzer, pool: &Pool, s: &Sum, c: i64) -> bool {
    let iv = sum_bound(an, pool, s);
    iv.lo.is_some_and(|l| l >= 0) && iv.hi.is_some_and(|h| h < c)
}

/// `s // c` for a constant `c > 0`.
pub fn floordiv_const(an: &Analyzer, pool: &Pool, s: Sum, c: i64) -> Sum {
    if c == 1 {
        return s;
    }
    let (exact, rest) = split(&s, c);
    if rest.is_zero() || in_range(an, pool, &rest, c) {
        return exact;
    }
    let tail = match rest.as_atom() {
        // (x // a) // b = x // (a * b)
        Some(Atom::FloorDiv(inner, a)) => match a.checked_mul(c) {
            Some(ac) => Sum::atom(Atom::FloorDiv(inner.clone(), ac)),
            None => Sum::atom(Atom::FloorDiv(Box::new(rest.clone()), c)),
        },
        _ => match strip_mod(&rest, c) {
            // (x - x % c) // c = x // c
            Some(x) => Sum::atom(Atom::FloorDiv(Box::new(x), c)),
            None => Sum::atom(Atom::FloorDiv(Box::new(rest), c)),
        },
    };
    exact.checked_add(&tail).unwrap_or(tail)
}

/// When `rest = x - x % c` for some `x`, returns `x`.
fn strip_mod(rest: &Sum, c: i64) -> Option<Sum> {
    for (m, &k) in &rest.terms {
        if k != -1 {
            continue;
        }
        let [Atom::FloorMod(x, c2)] = m.as_slice() else { continue };
        if *c2 != c {
            continue;
        }
        let mut without = rest.clone();
        without.terms.remove(m);
        if &without == x.as_ref() {
            return Some(without);
        }
    }
    None
}

/// `s % c` for a constant `c > 0`.
pub fn floormod_const(an: &Analyzer, pool: &Pool, s: Sum, c: i64) -> Sum {
    if c == 1 {
        return Sum::default();
    }
    let (_, rest) = split(&s, c);
    if rest.is_zero() {
        return rest;
    }
    if in_range(an, pool, &rest, c) {
        return rest;
    }
    if let Some(Atom::FloorMod(inner, c1)) = rest.as_atom()
        && c1 % c == 0
    {
        // (x % (k*c)) % c = x % c
        return Sum::atom(Atom::FloorMod(inner.clone(), c));
    }
    Sum::atom(Atom::FloorMod(Box::new(rest), c))
}

/// Rewrites `k*c × (X // c)` as `k × (X - X % c)`: the same value, whose bounds are often
/// tighter (`(n + 63) // 64 * 64 - n` is `63 - (n + 63) % 64`, so at least 0).
pub fn expand_divs(s: &Sum) -> Option<Sum> {
    let mut out = Sum::constant(s.konst);
    let mut changed = false;
    for (m, &k) in &s.terms {
        if let [Atom::FloorDiv(x, c)] = m.as_slice()
            && k % c == 0
        {
            let f = k / c;
            let modterm = Sum::atom(Atom::FloorMod(x.clone(), *c));
            let repl = x.checked_sub(&modterm)?.checked_scale(f)?;
            out = out.checked_add(&repl)?;
            changed = true;
        } else {
            out.add_term(m.clone(), k)?;
        }
    }
    changed.then_some(out)
}
