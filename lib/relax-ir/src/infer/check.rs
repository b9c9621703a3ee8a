//! `BaseCheck(base, derived)` (`algorithms.md` §9.2): whether every value of type
//! `derived` is a value of type `base`, and if not, how badly the check fails.

use std::collections::HashMap;

use crate::arith::Analyzer;
use crate::entities::{PrimExpr, Ty};
use crate::pool::Pool;
use crate::ty::{TensorShape, TyData};

/// The outcome of [`base_check`], from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckLevel {
    /// `derived` is provably a subtype of `base`.
    Pass,
    /// Only symbolic facts could not be proved (accepted; checked at run time).
    FailL2,
    /// `derived` is statically less precise than `base` (an `R.Object` where a tensor
    /// is expected, an unknown dtype or rank where one is required).
    FailL1,
    /// Incompatible.
    FailL0,
}

impl CheckLevel {
    /// The worse of two results.
    pub fn combine(self, other: CheckLevel) -> CheckLevel {
        self.max(other)
    }
}

/// Checks that `derived` (a type of `pool_b`) is a subtype of `base` (a type of
/// `pool_a`). Types of different pools are compared after copying both into a scratch
/// pool, where the variables of the two functions are distinct.
pub fn base_check(pool_a: &Pool, a: Ty, pool_b: &Pool, b: Ty, an: &Analyzer) -> CheckLevel {
    if std::ptr::eq(pool_a, pool_b) {
        return Checker { pool: pool_a, an }.check(a, b);
    }
    let mut scratch = Pool::new();
    let a = scratch.import_ty(pool_a, a, &mut HashMap::new());
    let b = scratch.import_ty(pool_b, b, &mut HashMap::new());
    Checker { pool: &scratch, an }.check(a, b)
}

/// A checker over one pool, with a hook for comparing dims (call derivation binds
/// variables instead).
pub(crate) struct Checker<'a> {
    pub pool: &'a Pool,
    pub an: &'a Analyzer,
}

impl Checker<'_> {
    /// `BaseCheck(base, derived)`.
    pub fn check(&self, base: Ty, derived: Ty) -> CheckLevel {
        check_with(self.pool, base, self.pool, derived, &mut |a, b| self.prim(a, b), &mut |_, _| None)
    }

    /// Dims and prim values: equal constants pass, different constants fail, otherwise
    /// a proof decides between pass and L2.
    pub fn prim(&self, a: PrimExpr, b: PrimExpr) -> CheckLevel {
        prim_check(self.pool, self.an, a, b)
    }
}

/// Compares two dims or prim values of one pool.
pub(crate) fn prim_check(pool: &Pool, an: &Analyzer, a: PrimExpr, b: PrimExpr) -> CheckLevel {
    if a == b {
        return CheckLevel::Pass;
    }
    if let (Some(x), Some(y)) = (pool.as_int(a), pool.as_int(b)) {
        return if x == y { CheckLevel::Pass } else { CheckLevel::FailL0 };
    }
    if an.prove_equal(pool, a, b) { CheckLevel::Pass } else { CheckLevel::FailL2 }
}

/// The structural walk of `BaseCheck` of `base` (a type of `pa`) against `derived` (a
/// type of `pb`). `prim(base_dim, derived_dim)` compares dims and prim values;
/// `shape_var(base, derived)` may decide the comparison of a tensor shape that is a shape
/// variable (returning `None` falls back to the default rule).
pub(crate) fn check_with(
    pa: &Pool,
    base: Ty,
    pb: &Pool,
    derived: Ty,
    prim: &mut dyn FnMut(PrimExpr, PrimExpr) -> CheckLevel,
    shape_var: &mut dyn FnMut(&TensorShape, &TensorShape) -> Option<CheckLevel>,
) -> CheckLevel {
    use CheckLevel::*;
    if std::ptr::eq(pa, pb) && base == derived {
        return Pass;
    }
    let (bd, dd) = (pa.ty(base), pb.ty(derived));
    let other_kind = |dd: &TyData| if matches!(dd, TyData::Object) { FailL1 } else { FailL0 };
    match bd {
        TyData::Object => Pass,
        TyData::Prim { dtype, value } => {
            let TyData::Prim { dtype: d2, value: v2 } = dd else { return other_kind(dd) };
            if dtype != d2 {
                return FailL0;
            }
            match (value, v2) {
                (None, _) => Pass,
                (Some(_), None) => FailL2,
                (Some(a), Some(b)) => prim(*a, *b),
            }
        }
        TyData::Shape { values, ndim } => {
            let TyData::Shape { values: v2, ndim: n2 } = dd else { return other_kind(dd) };
            if *ndim < 0 {
                return Pass;
            }
            if ndim != n2 {
                return if *n2 < 0 { FailL1 } else { FailL0 };
            }
            match (values, v2) {
                (None, _) => Pass,
                (Some(_), None) => FailL2,
                (Some(a), Some(b)) => dims_check(a, b, prim),
            }
        }
        TyData::Tensor { shape, dtype, ndim, vdevice } => {
            let TyData::Tensor { shape: s2, dtype: t2, ndim: n2, vdevice: vd2 } = dd else {
                return other_kind(dd);
            };
            if !dtype.is_void() && dtype != t2 {
                return if t2.is_void() { FailL1 } else { FailL0 };
            }
            if *ndim >= 0 && ndim != n2 {
                return if *n2 < 0 { FailL1 } else { FailL0 };
            }
            match (vdevice, vd2) {
                (Some(_), None) => return FailL1,
                (Some(a), Some(b)) if a != b => return FailL0,
                _ => {}
            }
            if let Some(r) = shape_var(shape, s2) {
                return r;
            }
            match (shape, s2) {
                (TensorShape::Unknown, _) => Pass,
                (_, TensorShape::Unknown) => FailL2,
                (TensorShape::Dims(a), TensorShape::Dims(b)) => dims_check(a, b, prim),
                (TensorShape::Var(a), TensorShape::Var(b)) if std::ptr::eq(pa, pb) && a == b => Pass,
                _ => FailL2,
            }
        }
        TyData::Tuple(fields) => {
            let TyData::Tuple(f2) = dd else { return other_kind(dd) };
            if fields.len() != f2.len() {
                return FailL0;
            }
            let (fields, f2) = (fields.clone(), f2.clone());
            let mut r = Pass;
            for (&a, &b) in fields.iter().zip(&f2) {
                r = r.combine(check_with(pa, a, pb, b, prim, shape_var));
                if r == FailL0 {
                    return r;
                }
            }
            r
        }
        TyData::Callable { params, ret, pure } => {
            let TyData::Callable { params: p2, ret: r2, pure: pure2 } = dd else { return other_kind(dd) };
            if *pure && !pure2 {
                return FailL0;
            }
            let (params, ret, p2, r2) = (params.clone(), *ret, p2.clone(), *r2);
            let Some(params) = params else {
                return check_with(pa, ret, pb, r2, prim, shape_var);
            };
            let Some(p2) = p2 else { return FailL2 };
            if params.len() != p2.len() {
                return FailL0;
            }
            // Parameters are compared without binding anything; L1 there counts as L2.
            let mut pr = Pass;
            let plain = &mut |a: PrimExpr, b: PrimExpr| {
                if std::ptr::eq(pa, pb) && a == b {
                    Pass
                } else if let (Some(x), Some(y)) = (pa.as_int(a), pb.as_int(b)) {
                    if x == y { Pass } else { FailL0 }
                } else {
                    FailL2
                }
            };
            for (&a, &b) in params.iter().zip(&p2) {
                pr = pr.combine(check_with(pa, a, pb, b, plain, &mut |_, _| None));
                if pr == FailL0 {
                    return pr;
                }
            }
            if pr == FailL1 {
                pr = FailL2;
            }
            pr.combine(check_with(pa, ret, pb, r2, prim, shape_var))
        }
    }
}

fn dims_check(a: &[PrimExpr], b: &[PrimExpr], prim: &mut dyn FnMut(PrimExpr, PrimExpr) -> CheckLevel) -> CheckLevel {
    if a.len() != b.len() {
        return CheckLevel::FailL0;
    }
    let mut r = CheckLevel::Pass;
    for (&x, &y) in a.iter().zip(b) {
        r = r.combine(prim(x, y));
        if r == CheckLevel::FailL0 {
            return r;
        }
    }
    r
}
