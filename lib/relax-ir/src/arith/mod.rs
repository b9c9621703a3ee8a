//! Symbolic integer arithmetic: the one simplifier of TIR integer expressions, with the
//! bounds and proofs behind it, for the expressions of shapes and indices
//! (`algorithms.md` §10).
//!
//! The simplifier has two modes, which differ only in the form they write:
//!
//! * **Normal form** ([`Analyzer::simplify`]): the expression rebuilt from its canonical
//!   [`Sum`], terms ordered by variable (`n * 4 + m - 1`). It uses the analyzer's facts
//!   (shape variables are non-negative, attributes and loop ranges bound others) and
//!   decides equalities, so it backs the proofs as well. Type inference
//!   ([`crate::infer::simplify`] adds its `min`/`max` and conditional rules on top), the
//!   passes' symbolic checks and memory planning use it.
//! * **TVM mode** ([`tvm::simplify`]): TVM's `Analyzer::Simplify` as
//!   `te.create_prim_func` runs it, a port of TVM's canonical simplifier (sums of split
//!   terms in first-occurrence order) and of the rewrite rules TOPI's bodies meet, with
//!   no facts about variables. Legalization uses it, so that kernels print exactly as
//!   TVM's.
//!
//! Both build with TVM's folding constructors ([`build::binary`]) and bound with one
//! interval arithmetic ([`Interval`]). They are not one algorithm because their outputs
//! are compared with different texts: TVM mode's order is TVM's (`m + n` stays `m + n`),
//! normal form's order is the variables' (`n + m` when `n` is declared first), and TVM
//! mode deliberately proves less (it knows no variable ranges and treats `x * y` as
//! opaque), as TVM does on a fresh analyzer.
//!
//! Normal-form mode in detail:
//!
//! * [`canonical`]: a [`Sum`] of monomials with integer coefficients plus a constant; a
//!   monomial is a product of atoms, an atom a variable, a `floordiv`/`floormod` by a
//!   positive constant of a canonical sum, or an opaque expression (`min`, `max`, loads,
//!   calls, divisions by non-constants). Like terms gather, so `(x*4 + y) - (y + 4*x)`
//!   is the constant 0. [`build`] writes a sum back as an expression.
//! * [`bounds`]: constant intervals for every expression, from the variables' ranges.
//!   Shape variables are non-negative unless told otherwise; attributes and loop ranges
//!   tighten them.
//! * Floor division and modulo by a constant `c` split off the terms whose coefficients
//!   `c` divides: `(c*A + R) // c = A + R // c` and `(c*A + R) % c = R % c`, and `R // c`
//!   is 0 (`R % c` is `R`) when `0 <= R < c` is provable. So `n * 4 // 4 = n` and
//!   `(x * 4 + y) // 4 = x` when `0 <= y < 4`. Nested divisions combine:
//!   `(x // a) // b = x // (a*b)`; exact monomial division gives `(x*y) // y = x`.
//! * [`Analyzer::prove_equal`] simplifies `a - b` and tests for 0; [`Analyzer::prove_le`]
//!   and [`Analyzer::prove_lt`] use the lower bound of `b - a`.
//!
//! Every operation is exact: simplification never changes the value of an expression
//! under any assignment of its variables that respects their bounds.

pub mod bounds;
pub mod build;
pub mod canonical;
pub mod interval;
pub mod tvm;

use std::collections::HashMap;

use crate::dtype::DataType;
use crate::entities::{PrimExpr, SymVar};
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData};

pub use canonical::{Atom, Sum};
pub use interval::Interval;

/// Facts about variables, and the operations that use them.
#[derive(Clone, Debug)]
pub struct Analyzer {
    /// Known ranges of variables (inclusive).
    pub var_bounds: HashMap<SymVar, Interval>,
    /// Range assumed for a variable without an entry: shape variables are non-negative.
    pub default_bound: Interval,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new()
    }
}

impl Analyzer {
    /// An analyzer where every variable is non-negative (Relax shape variables).
    pub fn new() -> Analyzer {
        Analyzer { var_bounds: HashMap::new(), default_bound: Interval::non_negative() }
    }
    /// An analyzer that assumes nothing about variables.
    pub fn unbounded() -> Analyzer {
        Analyzer { var_bounds: HashMap::new(), default_bound: Interval::everything() }
    }
    /// Records `lo <= v <= hi`.
    pub fn bind(&mut self, v: SymVar, iv: Interval) {
        self.var_bounds.insert(v, iv);
    }
    /// The range of a variable.
    pub fn var_bound(&self, v: SymVar) -> Interval {
        self.var_bounds.get(&v).copied().unwrap_or(self.default_bound)
    }
    /// The canonical form of an integer expression.
    pub fn canonical(&self, pool: &Pool, e: PrimExpr) -> Sum {
        canonical::to_sum(self, pool, e)
    }
    /// The simplifier in normal-form mode: a simplified expression with the same value.
    /// Integer expressions are rebuilt from their canonical form; others (floats,
    /// booleans) are returned unchanged, their integer sub-expressions untouched. For
    /// TVM's printed form use [`tvm::simplify`].
    pub fn simplify(&self, pool: &mut Pool, e: PrimExpr) -> PrimExpr {
        let dtype = pool.dtype(e);
        if !dtype.is_int() || dtype.lanes > 1 {
            return e;
        }
        let s = self.canonical(pool, e);
        build::from_sum(pool, &s, dtype)
    }
    /// The constant range of an integer expression.
    pub fn bound(&self, pool: &Pool, e: PrimExpr) -> Interval {
        let s = self.canonical(pool, e);
        bounds::sum_bound(self, pool, &s)
    }
    /// The constant value of an expression, when it simplifies to one.
    pub fn as_const(&self, pool: &Pool, e: PrimExpr) -> Option<i64> {
        if let Some(v) = pool.as_int(e) {
            return Some(v);
        }
        if !pool.dtype(e).is_int() {
            return None;
        }
        self.canonical(pool, e).as_const()
    }
    /// True when `a == b` for every assignment (both integer expressions).
    pub fn prove_equal(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> bool {
        if a == b {
            return true;
        }
        if let (Some(x), Some(y)) = (pool.as_int(a), pool.as_int(b)) {
            return x == y;
        }
        if !(pool.dtype(a).is_int() && pool.dtype(b).is_int()) {
            return false;
        }
        self.canonical(pool, a).checked_sub(&self.canonical(pool, b)).is_some_and(|d| d.is_zero())
    }
    /// True when `a != b` for every assignment.
    pub fn prove_not_equal(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> bool {
        if !(pool.dtype(a).is_int() && pool.dtype(b).is_int()) {
            return false;
        }
        let Some(d) = self.canonical(pool, a).checked_sub(&self.canonical(pool, b)) else { return false };
        let iv = bounds::sum_bound(self, pool, &d);
        iv.lo.is_some_and(|l| l > 0) || iv.hi.is_some_and(|h| h < 0)
    }
    /// True when `a <= b` for every assignment.
    pub fn prove_le(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> bool {
        self.diff_lower_bound(pool, a, b).is_some_and(|lo| lo >= 0)
    }
    /// True when `a < b` for every assignment.
    pub fn prove_lt(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> bool {
        self.diff_lower_bound(pool, a, b).is_some_and(|lo| lo >= 1)
    }
    /// True when `a >= b` for every assignment.
    pub fn prove_ge(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> bool {
        self.prove_le(pool, b, a)
    }
    /// The lower bound of `b - a`.
    fn diff_lower_bound(&self, pool: &Pool, a: PrimExpr, b: PrimExpr) -> Option<i64> {
        if !(pool.dtype(a).is_int() && pool.dtype(b).is_int()) {
            return None;
        }
        let d = self.canonical(pool, b).checked_sub(&self.canonical(pool, a))?;
        let lo = bounds::sum_bound(self, pool, &d).lo;
        let lo2 = canonical::expand_divs(&d).and_then(|x| bounds::sum_bound(self, pool, &x).lo);
        lo.max(lo2)
    }
    /// True when the boolean expression `cond` holds for every assignment (comparisons,
    /// `and`, `or`, `not` of integer expressions; constants).
    pub fn prove(&self, pool: &Pool, cond: PrimExpr) -> bool {
        match pool.prim(cond) {
            PrimExprData::Int(t, v) if t.is_bool() || t.is_int() => *v != 0,
            PrimExprData::Bin(op, a, b) => {
                let (a, b) = (*a, *b);
                match op {
                    BinOp::Eq => self.prove_equal(pool, a, b),
                    BinOp::Ne => self.prove_not_equal(pool, a, b),
                    BinOp::Lt => self.prove_lt(pool, a, b),
                    BinOp::Le => self.prove_le(pool, a, b),
                    BinOp::Gt => self.prove_lt(pool, b, a),
                    BinOp::Ge => self.prove_le(pool, b, a),
                    BinOp::And => self.prove(pool, a) && self.prove(pool, b),
                    BinOp::Or => self.prove(pool, a) || self.prove(pool, b),
                    _ => false,
                }
            }
            PrimExprData::Not(a) => self.disprove(pool, *a),
            _ => false,
        }
    }
    /// True when the boolean expression `cond` is false for every assignment.
    pub fn disprove(&self, pool: &Pool, cond: PrimExpr) -> bool {
        match pool.prim(cond) {
            PrimExprData::Int(t, v) if t.is_bool() || t.is_int() => *v == 0,
            PrimExprData::Bin(op, a, b) => {
                let (a, b) = (*a, *b);
                match op {
                    BinOp::Eq => self.prove_not_equal(pool, a, b),
                    BinOp::Ne => self.prove_equal(pool, a, b),
                    BinOp::Lt => self.prove_le(pool, b, a),
                    BinOp::Le => self.prove_lt(pool, b, a),
                    BinOp::Gt => self.prove_le(pool, a, b),
                    BinOp::Ge => self.prove_lt(pool, a, b),
                    BinOp::And => self.disprove(pool, a) || self.disprove(pool, b),
                    BinOp::Or => self.disprove(pool, a) && self.disprove(pool, b),
                    _ => false,
                }
            }
            PrimExprData::Not(a) => self.prove(pool, *a),
            _ => false,
        }
    }
}

/// Replaces variables by expressions, rebuilding with TVM's folding constructors.
pub fn substitute(pool: &mut Pool, e: PrimExpr, map: &HashMap<SymVar, PrimExpr>) -> PrimExpr {
    if map.is_empty() {
        return e;
    }
    let mut memo: HashMap<PrimExpr, PrimExpr> = HashMap::new();
    substitute_memo(pool, e, map, &mut memo)
}

fn substitute_memo(
    pool: &mut Pool,
    e: PrimExpr,
    map: &HashMap<SymVar, PrimExpr>,
    memo: &mut HashMap<PrimExpr, PrimExpr>,
) -> PrimExpr {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    let data = pool.prim(e).clone();
    let mut sub = |pool: &mut Pool, x: PrimExpr| substitute_memo(pool, x, map, memo);
    let r = match data {
        PrimExprData::Var(v) => map.get(&v).copied().unwrap_or(e),
        PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) => e,
        PrimExprData::Bin(op, a, b) => {
            let (na, nb) = (sub(pool, a), sub(pool, b));
            if (na, nb) == (a, b) { e } else { build::binary(pool, op, na, nb) }
        }
        PrimExprData::Not(a) => {
            let na = sub(pool, a);
            if na == a { e } else { pool.not(na) }
        }
        PrimExprData::Cast(t, a) => {
            let na = sub(pool, a);
            if na == a { e } else { pool.cast(t, na) }
        }
        PrimExprData::Select(c, t, f) => {
            let (nc, nt, nf) = (sub(pool, c), sub(pool, t), sub(pool, f));
            pool.raw(PrimExprData::Select(nc, nt, nf))
        }
        PrimExprData::Load { dtype, buffer, indices } => {
            let indices = indices.iter().map(|&i| sub(pool, i)).collect();
            pool.raw(PrimExprData::Load { dtype, buffer, indices })
        }
        PrimExprData::Call { dtype, op, args } => {
            let args = args.iter().map(|&a| sub(pool, a)).collect();
            pool.raw(PrimExprData::Call { dtype, op, args })
        }
        PrimExprData::Let { var, value, body } => {
            let value = sub(pool, value);
            let body = sub(pool, body);
            pool.raw(PrimExprData::Let { var, value, body })
        }
        PrimExprData::Ramp { base, stride, lanes } => {
            let (base, stride) = (sub(pool, base), sub(pool, stride));
            pool.raw(PrimExprData::Ramp { base, stride, lanes })
        }
        PrimExprData::Broadcast { value, lanes } => {
            let value = sub(pool, value);
            pool.raw(PrimExprData::Broadcast { value, lanes })
        }
    };
    memo.insert(e, r);
    r
}

/// The dtype of integer expressions built by the analyzer when none is given.
pub const INDEX: DataType = DataType::INT64;

#[cfg(test)]
mod tests;
