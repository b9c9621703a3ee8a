//! TVM's `Analyzer::Simplify` for the expressions that legalization builds: a port of
//! the canonical simplifier (`arith/canonical_simplify.cc`) for integer index arithmetic,
//! plus the rewrite rules of `rewrite_simplify.cc` that TOPI's compute bodies meet.
//!
//! `te.create_prim_func` simplifies every loop range and every compute body with a fresh
//! analyzer that knows no variable ranges, so the only facts used here are constants and
//! the ranges of `x % c` and `x // c`. `simplify` runs canonical, rewrite, canonical, as
//! `Analyzer::Simplify(e, steps=2)` does.
//!
//! The canonical form of an index expression is a sum of *split* terms
//! `((index % upper) // lower) * scale` plus a constant; terms keep their first-occurrence
//! order, stable-sorted by descending scale, and print positive terms first
//! (`x * 4 + y - 2`), exactly as TVM normalizes them.
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

mod canonical;
mod rewrite;

use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::prim_build::floor_div;
use relax_ir::{DataType, Pool, PrimExpr};

/// The upper factor of a split with no modulus.
const INF: i64 = i64::MAX;

/// Division flavour of a split term (TVM orders truncating before flooring).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum DivMode {
    Trunc,
    Floor,
}

/// `((index % upper) // lower) * scale`.
#[derive(Clone, Debug)]
struct Split {
    index: PrimExpr,
    lower: i64,
    upper: i64,
    scale: i64,
    mode: DivMode,
    dtype: DataType,
}

/// `Σ args + base`.
#[derive(Clone, Debug)]
struct SumE {
    args: Vec<Split>,
    base: i64,
    dtype: DataType,
}

/// A value during canonical simplification.
#[derive(Clone, Debug)]
enum C {
    E(PrimExpr),
    Split(Split),
    Sum(SumE),
}

/// TVM's `Analyzer::Simplify` (canonical, rewrite, canonical).
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

/// A constant integer interval; `None` bounds are infinite.
#[derive(Clone, Copy, Debug)]
struct Bound {
    lo: Option<i64>,
    hi: Option<i64>,
}

impl Bound {
    const ALL: Bound = Bound { lo: None, hi: None };
    fn point(v: i64) -> Bound {
        Bound { lo: Some(v), hi: Some(v) }
    }
}

struct Simplifier<'p> {
    pool: &'p mut Pool,
}

impl Simplifier<'_> {
    fn bin(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.pool.binary(op, a, b).unwrap_or_else(|_| self.pool.raw(PrimExprData::Bin(op, a, b)))
    }

    fn konst(&mut self, dtype: DataType, v: i64) -> PrimExpr {
        self.pool.int(dtype, v)
    }

    // ---------------------------------------------------------------- bounds

    /// TVM's `const_int_bound` for the cases index simplification needs.
    fn bound(&self, e: PrimExpr) -> Bound {
        match self.pool.prim(e).clone() {
            PrimExprData::Int(t, v) if !t.is_bool() => Bound::point(v),
            PrimExprData::Int(_, v) => Bound::point(v),
            PrimExprData::Bin(op, a, b) => {
                let (x, y) = (self.bound(a), self.bound(b));
                let add = |p: Option<i64>, q: Option<i64>| p.zip(q).and_then(|(p, q)| p.checked_add(q));
                let sub = |p: Option<i64>, q: Option<i64>| p.zip(q).and_then(|(p, q)| p.checked_sub(q));
                match op {
                    BinOp::Add => Bound { lo: add(x.lo, y.lo), hi: add(x.hi, y.hi) },
                    BinOp::Sub => Bound { lo: sub(x.lo, y.hi), hi: sub(x.hi, y.lo) },
                    BinOp::Mul => match (y.lo, y.hi) {
                        (Some(c), Some(d)) if c == d && c >= 0 => {
                            Bound { lo: x.lo.and_then(|l| l.checked_mul(c)), hi: x.hi.and_then(|h| h.checked_mul(c)) }
                        }
                        _ => Bound::ALL,
                    },
                    BinOp::FloorDiv => match (y.lo, y.hi) {
                        (Some(c), Some(d)) if c == d && c > 0 => {
                            Bound { lo: x.lo.map(|l| floor_div(l, c)), hi: x.hi.map(|h| floor_div(h, c)) }
                        }
                        _ => Bound::ALL,
                    },
                    BinOp::FloorMod => match y.hi {
                        Some(c) if y.lo.is_some_and(|l| l > 0) => {
                            if x.lo.is_some_and(|l| l >= 0) {
                                Bound { lo: Some(0), hi: Some(x.hi.map_or(c - 1, |h| h.min(c - 1))) }
                            } else {
                                Bound { lo: Some(0), hi: Some(c - 1) }
                            }
                        }
                        _ => Bound::ALL,
                    },
                    BinOp::Min => Bound { lo: x.lo.zip(y.lo).map(|(p, q)| p.min(q)), hi: max_opt(x.hi, y.hi, true) },
                    BinOp::Max => Bound { lo: max_opt(x.lo, y.lo, false), hi: x.hi.zip(y.hi).map(|(p, q)| p.max(q)) },
                    _ => Bound::ALL,
                }
            }
            PrimExprData::Select(_, t, f) => {
                let (x, y) = (self.bound(t), self.bound(f));
                Bound { lo: x.lo.zip(y.lo).map(|(p, q)| p.min(q)), hi: x.hi.zip(y.hi).map(|(p, q)| p.max(q)) }
            }
            PrimExprData::Cast(t, v) => {
                let b = self.bound(v);
                if t.bits >= self.pool.dtype(v).bits { b } else { dtype_bound(t) }
            }
            _ => dtype_bound(self.pool.dtype(e)),
        }
    }

    fn can_prove_ge0(&self, e: PrimExpr) -> bool {
        self.bound(e).lo.is_some_and(|l| l >= 0)
    }

    /// `TryCompare(e, c) == kLT`.
    fn provably_lt(&self, e: PrimExpr, c: i64) -> bool {
        self.bound(e).hi.is_some_and(|h| h < c)
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>, upper: bool) -> Option<i64> {
    match (a, b) {
        (Some(p), Some(q)) => Some(p.max(q)),
        _ if upper => None,
        (Some(p), None) | (None, Some(p)) => Some(p),
        (None, None) => None,
    }
}

/// The value range of a dtype.
fn dtype_bound(t: DataType) -> Bound {
    if t.is_bool() {
        return Bound { lo: Some(0), hi: Some(1) };
    }
    if t.is_uint() {
        let hi = if t.bits >= 63 { None } else { Some((1i64 << t.bits) - 1) };
        return Bound { lo: Some(0), hi };
    }
    if t.is_int() && t.bits < 64 {
        let h = (1i64 << (t.bits - 1)) - 1;
        return Bound { lo: Some(-h - 1), hi: Some(h) };
    }
    Bound::ALL
}

fn mod_op(m: DivMode) -> BinOp {
    match m {
        DivMode::Floor => BinOp::FloorMod,
        DivMode::Trunc => BinOp::Mod,
    }
}

fn div_op(m: DivMode) -> BinOp {
    match m {
        DivMode::Floor => BinOp::FloorDiv,
        DivMode::Trunc => BinOp::Div,
    }
}

fn compatible(s: &Split, mode: DivMode) -> bool {
    s.mode == mode || (s.lower == 1 && s.upper == INF)
}

fn divide_by(s: &mut SumE, c: i64) {
    s.base /= c;
    for a in &mut s.args {
        a.scale /= c;
    }
}

/// `SumExprNode::AddToSelf(SplitExpr, scale)`: keeps terms of equal index together,
/// sorted by descending lower factor.
fn add_split(sum: &mut SumE, mut other: Split, scale: i64) {
    if other.scale == 0 {
        return;
    }
    let start = sum.args.iter().position(|a| a.index == other.index).unwrap_or(sum.args.len());
    for j in start..sum.args.len() {
        let a = &sum.args[j];
        if a.index != other.index || other.lower > a.lower {
            other.scale *= scale;
            sum.args.insert(j, other);
            return;
        }
        if other.lower == a.lower && other.upper == a.upper && compatible(&other, a.mode) {
            sum.args[j].scale += other.scale * scale;
            return;
        }
    }
    other.scale *= scale;
    sum.args.push(other);
}

fn add_sum(sum: &mut SumE, other: &SumE, scale: i64) {
    for a in &other.args {
        add_split(sum, a.clone(), scale);
    }
    sum.base += other.base * scale;
}

/// `SimplifySplitExprs`: merges split terms, then stable-sorts by descending scale,
/// lower factor, upper factor and division mode.
fn simplify_splits(mut args: Vec<Split>) -> Vec<Split> {
    for i in 0..args.len() {
        if args[i].scale == 0 {
            continue;
        }
        for j in i + 1..args.len() {
            let (l, r) = (args[i].clone(), args[j].clone());
            if l.index != r.index || l.upper < r.lower {
                break;
            }
            if l.upper == r.upper && l.lower == r.lower && compatible(&l, r.mode) {
                args[j].scale += l.scale;
                args[i].scale = 0;
            } else if l.lower == r.upper
                && r.scale != 0
                && l.scale % r.scale == 0
                && l.lower == (l.scale / r.scale) * r.lower
                && compatible(&l, r.mode)
            {
                args[j].upper = l.upper;
                args[i].scale = 0;
                break;
            }
        }
    }
    args.sort_by(|l, r| {
        r.scale.cmp(&l.scale).then(r.lower.cmp(&l.lower)).then(r.upper.cmp(&l.upper)).then(r.mode.cmp(&l.mode))
    });
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_ir::Pool;

    fn setup() -> (Pool, PrimExpr, PrimExpr, PrimExpr) {
        let mut p = Pool::new();
        let x = p.new_var("x", DataType::INT64);
        let y = p.new_var("y", DataType::INT64);
        let n = p.new_var("n", DataType::INT64);
        let (x, y, n) = (p.var_ref(x), p.var_ref(y), p.var_ref(n));
        (p, x, y, n)
    }

    fn b(p: &mut Pool, op: BinOp, a: PrimExpr, c: PrimExpr) -> PrimExpr {
        p.binary(op, a, c).unwrap()
    }

    #[test]
    fn linear_forms_follow_tvm() {
        let (mut p, x, y, n) = setup();
        // 4 * n => n * 4
        let four = p.i64(4);
        let e = b(&mut p, BinOp::Mul, four, n);
        let s = simplify(&mut p, e);
        let want = b(&mut p, BinOp::Mul, n, four);
        assert_eq!(s, want);
        // (x * 4 + y) // 4 => y // 4 + x
        let x4 = b(&mut p, BinOp::Mul, x, four);
        let sum = b(&mut p, BinOp::Add, x4, y);
        let d = b(&mut p, BinOp::FloorDiv, sum, four);
        let s = simplify(&mut p, d);
        let yd = b(&mut p, BinOp::FloorDiv, y, four);
        let want = b(&mut p, BinOp::Add, yd, x);
        assert_eq!(s, want);
        // x // 4 * 4 + x % 4 => x
        let xd = b(&mut p, BinOp::FloorDiv, x, four);
        let xd4 = b(&mut p, BinOp::Mul, xd, four);
        let xm = b(&mut p, BinOp::FloorMod, x, four);
        let e = b(&mut p, BinOp::Add, xd4, xm);
        assert_eq!(simplify(&mut p, e), x);
        // (x - 5) % 3 => (x + 1) % 3
        let five = p.i64(5);
        let three = p.i64(3);
        let one = p.i64(1);
        let xm5 = b(&mut p, BinOp::Sub, x, five);
        let e = b(&mut p, BinOp::FloorMod, xm5, three);
        let xp1 = b(&mut p, BinOp::Add, x, one);
        let want = b(&mut p, BinOp::FloorMod, xp1, three);
        assert_eq!(simplify(&mut p, e), want);
    }

    #[test]
    fn comparisons_are_swapped() {
        let (mut p, x, _, _) = setup();
        let zero = p.i64(0);
        let e = b(&mut p, BinOp::Ge, x, zero);
        let want = b(&mut p, BinOp::Le, zero, x);
        assert_eq!(simplify(&mut p, e), want);
        // x + 1 < 5 => x < 4
        let one = p.i64(1);
        let five = p.i64(5);
        let four = p.i64(4);
        let x1 = b(&mut p, BinOp::Add, x, one);
        let e = b(&mut p, BinOp::Lt, x1, five);
        let want = b(&mut p, BinOp::Lt, x, four);
        assert_eq!(simplify(&mut p, e), want);
    }
}
