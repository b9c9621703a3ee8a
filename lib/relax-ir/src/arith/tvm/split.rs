//! Split terms and their sums, the canonical simplifier's data (`SplitExprNode`,
//! `SumExprNode`), and their normal forms: how a sum is written back as an expression
//! (positive terms, a positive constant, negative terms, a negative constant) and how
//! any expression is viewed as a split or a sum.

use super::Simplifier;
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::prim::BinOp;

/// The upper factor of a split with no modulus.
pub(super) const INF: i64 = i64::MAX;

/// Division flavour of a split term (TVM orders truncating before flooring).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum DivMode {
    Trunc,
    Floor,
}

/// `((index % upper) // lower) * scale`.
#[derive(Clone, Debug)]
pub(super) struct Split {
    pub(super) index: PrimExpr,
    pub(super) lower: i64,
    pub(super) upper: i64,
    pub(super) scale: i64,
    pub(super) mode: DivMode,
    pub(super) dtype: DataType,
}

/// `Σ args + base`.
#[derive(Clone, Debug)]
pub(super) struct SumE {
    pub(super) args: Vec<Split>,
    pub(super) base: i64,
    pub(super) dtype: DataType,
}

/// A value during canonical simplification.
#[derive(Clone, Debug)]
pub(super) enum C {
    E(PrimExpr),
    Split(Split),
    Sum(SumE),
}

impl Simplifier<'_> {
    /// `SplitExprNode::NormalizeWithScale`: `((index % upper) // lower) * scale * sscale`.
    pub(super) fn split_normalize(&mut self, s: &Split, sscale: i64) -> PrimExpr {
        let dtype = s.dtype;
        if s.scale == 0 {
            return self.konst(dtype, 0);
        }
        let mut res = s.index;
        if s.upper != INF {
            let u = self.konst(dtype, s.upper);
            res = self.bin(mod_op(s.mode), res, u);
        }
        if s.lower != 1 {
            let l = self.konst(dtype, s.lower);
            res = self.bin(div_op(s.mode), res, l);
        }
        let total = sscale.wrapping_mul(s.scale);
        if total != 1 {
            let k = self.konst(dtype, total);
            res = self.bin(BinOp::Mul, res, k);
        }
        res
    }

    /// `SumExprNode::Normalize`: merged and sorted terms, positive ones first; a positive
    /// constant follows them, a negative one comes last.
    pub(super) fn sum_normalize(&mut self, s: &SumE) -> PrimExpr {
        if s.args.is_empty() {
            return self.konst(s.dtype, s.base);
        }
        let args = simplify_splits(s.args.clone());
        let dtype = s.dtype;
        let is_min = if dtype.bits == 64 { s.base == i64::MIN } else { s.base == -(1i64 << (dtype.bits - 1)) };
        let mut res = self.konst(dtype, 0);
        for a in args.iter().filter(|a| a.scale > 0) {
            let x = self.split_normalize(a, 1);
            res = self.bin(BinOp::Add, res, x);
        }
        if s.base > 0 || is_min {
            let k = self.konst(dtype, s.base);
            res = self.bin(BinOp::Add, res, k);
        }
        for a in args.iter().filter(|a| a.scale < 0) {
            let x = self.split_normalize(a, -1);
            res = self.bin(BinOp::Sub, res, x);
        }
        if s.base < 0 && !is_min {
            let k = self.konst(dtype, -s.base);
            res = self.bin(BinOp::Sub, res, k);
        }
        res
    }

    /// The expression a canonical value stands for.
    pub(super) fn normalize(&mut self, c: &C) -> PrimExpr {
        match c {
            C::E(e) => *e,
            C::Split(s) => self.split_normalize(s, 1),
            C::Sum(s) => self.sum_normalize(s),
        }
    }

    /// `ToSplitExpr`: a value as one split term.
    pub(super) fn split_of(&mut self, c: C) -> Split {
        match c {
            C::Split(s) => s,
            C::Sum(s) if s.base == 0 && s.args.len() == 1 => s.args.into_iter().next().expect("one arg"),
            other => {
                let e = self.normalize(&other);
                Split { index: e, lower: 1, upper: INF, scale: 1, mode: DivMode::Trunc, dtype: self.pool.dtype(e) }
            }
        }
    }

    /// `ToSumExpr`: a value as a sum.
    pub(super) fn sum_of(&mut self, c: C) -> SumE {
        if let C::E(e) = &c
            && let Some(v) = self.pool.as_int(*e)
        {
            return SumE { args: Vec::new(), base: v, dtype: self.pool.dtype(*e) };
        }
        match c {
            C::Sum(s) => s,
            other => {
                let s = self.split_of(other);
                SumE { dtype: s.dtype, args: vec![s], base: 0 }
            }
        }
    }

    /// `ConvertDivMode`: a split term in the given division flavour.
    pub(super) fn convert_div_mode(&mut self, s: Split, mode: DivMode) -> Split {
        if s.mode == mode {
            return s;
        }
        if compatible(&s, mode) {
            return Split { mode, ..s };
        }
        let e = self.split_normalize(&s, 1);
        let s = self.split_of(C::E(e));
        Split { mode, ..s }
    }
}

pub(super) fn mod_op(m: DivMode) -> BinOp {
    match m {
        DivMode::Floor => BinOp::FloorMod,
        DivMode::Trunc => BinOp::Mod,
    }
}

pub(super) fn div_op(m: DivMode) -> BinOp {
    match m {
        DivMode::Floor => BinOp::FloorDiv,
        DivMode::Trunc => BinOp::Div,
    }
}

pub(super) fn compatible(s: &Split, mode: DivMode) -> bool {
    s.mode == mode || (s.lower == 1 && s.upper == INF)
}

pub(super) fn divide_by(s: &mut SumE, c: i64) {
    s.base /= c;
    for a in &mut s.args {
        a.scale /= c;
    }
}

/// `SumExprNode::AddToSelf(SplitExpr, scale)`: keeps terms of equal index together,
/// sorted by descending lower factor.
pub(super) fn add_split(sum: &mut SumE, mut other: Split, scale: i64) {
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

pub(super) fn add_sum(sum: &mut SumE, other: &SumE, scale: i64) {
    for a in &other.args {
        add_split(sum, a.clone(), scale);
    }
    sum.base += other.base * scale;
}

/// `SimplifySplitExprs`: merges split terms, then stable-sorts by descending scale,
/// lower factor, upper factor and division mode.
pub(super) fn simplify_splits(mut args: Vec<Split>) -> Vec<Split> {
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
