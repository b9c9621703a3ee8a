//! TVM mode of the simplifier: TVM's `Analyzer::Simplify` as `te.create_prim_func` runs
//! it on the loop ranges and compute bodies that legalization builds, so that a legalized
//! kernel prints exactly as TVM's. It ports the canonical simplifier
//! (`arith/canonical_simplify.cc`) for integer index arithmetic, plus the rules of
//! `rewrite_simplify.cc` that TOPI's compute bodies meet.
//!
//! `te.create_prim_func` simplifies with a fresh analyzer that knows no variable ranges,
//! so the only facts used here are constants and the ranges of `x % c` and `x // c`
//! ([`bound`]: TVM's `ConstIntBound`, node by node, on the shared [`Interval`]). `simplify`
//! runs canonical, rewrite, canonical, as `Analyzer::Simplify(e, steps=2)` does.
//!
//! The canonical form of an index expression is a sum of *split* terms
//! `((index % upper) // lower) * scale` plus a constant ([`split`]); terms keep their
//! first-occurrence order, stable-sorted by descending scale, and print positive terms
//! first (`x * 4 + y - 2`), exactly as TVM normalizes them. This order is what
//! distinguishes TVM mode from the normal-form mode of [`super::Analyzer::simplify`],
//! whose sums are ordered by variable.
//!
//! * [`canonical`]: the canonical simplifier proper;
//! * [`rewrite`]: the rewrite rules implemented: constant folding and identities;
//!   `a >= b` → `b <= a`, `a > b` → `b < a`, `a <= b` as `not (b < a)`; `not` pushed
//!   through comparisons, `and`, `or`; the `<` rules moving constants to one side and
//!   merging constant offsets; `x != 0` → `0 < x` for non-negative `x`; `x - min(y, x)`
//!   and the other `min`/`max` differences, `min(x + y, z) - x` → `min(y, z - x)`;
//!   `floordiv(floordiv(x, c1), c2)` → `floordiv(x, c1 * c2)`;
//!   `floormod(x * c1 + y, c2)` reductions;
//!   `select`/`if_then_else` with a constant condition or equal branches; `min(x, x)`.
//!   Anything else is rebuilt from its simplified operands.
//!
//! Not ported: the rules TOPI's bodies have not needed so far (most of the rewrite
//! simplifier's ~800 patterns), modular-set and bound-propagation facts beyond constants,
//! `ProdDivSimplify` for `truncmod`. A difference from TVM shows up as a difference in
//! `utils/tvm/legalize_diff.py`.
//!
//! [`Interval`]: super::Interval

mod bound;
mod canonical;
mod rewrite;
mod split;
#[cfg(test)]
mod tests;

use super::build;
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::pool::Pool;
use crate::prim::BinOp;

/// TVM's `Analyzer::Simplify` with a fresh analyzer (canonical, rewrite, canonical).
pub fn simplify(pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    let mut s = Simplifier { pool };
    let a = s.visit(e);
    if s.pool.as_int(a).is_some() {
        return a;
    }
    let b = s.rewrite_pass(a);
    if s.pool.as_int(b).is_some() {
        return b;
    }
    s.visit(b)
}

/// True for the scalar integer types TVM treats as index types.
fn is_index(t: DataType) -> bool {
    t.is_int() && t.lanes <= 1 && (t.bits == 32 || t.bits == 64)
}

/// Greatest common divisor that treats 0 as neutral.
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The simplifier's state: the pool it reads and builds in.
struct Simplifier<'p> {
    pool: &'p mut Pool,
}

impl Simplifier<'_> {
    fn bin(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        build::binary(self.pool, op, a, b)
    }

    fn konst(&mut self, dtype: DataType, v: i64) -> PrimExpr {
        self.pool.int(dtype, v)
    }
}
