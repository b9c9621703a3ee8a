//! TVM mode's constant bounds: TVM's `ConstIntBound` node by node, for the cases index
//! simplification needs, on the shared [`Interval`] arithmetic. A fresh analyzer knows
//! no variable ranges, so a variable ranges over its type.
//!
//! The rules are the port's, kept as they are because the printed kernels depend on
//! them: a product is bounded only when its right operand is a non-negative constant,
//! `min(a, b)` by the hull of both ranges, `x % c` by `[0, c - 1]` (or below `x`'s upper
//! bound when `x` is non-negative), a narrowing cast by its type.

use super::Simplifier;
use crate::arith::Interval;
use crate::entities::PrimExpr;
use crate::prim::{BinOp, PrimExprData};

impl Simplifier<'_> {
    /// The constant range of `e`.
    pub(super) fn bound(&self, e: PrimExpr) -> Interval {
        match self.pool.prim(e) {
            PrimExprData::Int(_, v) => Interval::point(*v),
            &PrimExprData::Bin(op, a, b) => {
                let (x, y) = (self.bound(a), self.bound(b));
                match op {
                    BinOp::Add => x.plus(y),
                    BinOp::Sub => x.minus(y),
                    BinOp::Mul => match y.as_point() {
                        Some(c) if c >= 0 => x.scale(c),
                        _ => Interval::everything(),
                    },
                    BinOp::FloorDiv => match y.as_point() {
                        Some(c) if c > 0 => x.floordiv_const(c),
                        _ => Interval::everything(),
                    },
                    BinOp::FloorMod => match y.hi {
                        Some(c) if y.lo.is_some_and(|l| l > 0) => {
                            let hi = if x.is_non_negative() { x.hi.map_or(c - 1, |h| h.min(c - 1)) } else { c - 1 };
                            Interval::new(0, hi)
                        }
                        _ => Interval::everything(),
                    },
                    BinOp::Min => x.union(y),
                    BinOp::Max => x.max(y),
                    _ => Interval::everything(),
                }
            }
            &PrimExprData::Select(_, t, f) => self.bound(t).union(self.bound(f)),
            &PrimExprData::Cast(t, v) => {
                if t.bits >= self.pool.dtype(v).bits {
                    self.bound(v)
                } else {
                    Interval::of_dtype(t)
                }
            }
            _ => Interval::of_dtype(self.pool.dtype(e)),
        }
    }

    /// True when `e >= 0` is provable from constant bounds.
    pub(super) fn can_prove_ge0(&self, e: PrimExpr) -> bool {
        self.bound(e).is_non_negative()
    }

    /// `TryCompare(e, c) == kLT`.
    pub(super) fn provably_lt(&self, e: PrimExpr, c: i64) -> bool {
        self.bound(e).is_below(c)
    }
}
