//! `EraseToWellDefined(type, var_map)` (`algorithms.md` §9.4): substitute mapped
//! variables, simplify what changed, and drop any shape or prim value that still
//! mentions a variable the target scope does not define. A tensor keeps its dtype and
//! rank, a shape its rank, a prim value its dtype.

use std::collections::HashMap;

use crate::arith::Analyzer;
use crate::entities::{PrimExpr, SymVar, Ty, Var};
use crate::pool::Pool;
use crate::prim::PrimExprData;
use crate::relax::RelaxFunction;
use crate::ty::{TensorShape, TyData};

use super::simplify::{as_index, bin, simplify};

/// What the variables of a type stand for.
#[derive(Clone, Debug, Default)]
pub struct VarMap {
    /// Symbolic variables and their values.
    pub syms: HashMap<SymVar, PrimExpr>,
    /// `R.Shape`-typed Relax variables (used as tensor shapes) and the shapes they stand
    /// for.
    pub shapes: HashMap<Var, TensorShape>,
}

/// Erases a type of `pool` in place: mapped variables are substituted (and the changed
/// dims simplified); a shape or value mentioning a symbolic variable for which `defined`
/// is false is dropped, and so is a tensor shape that is an unmapped shape variable for
/// which `defined_var` is false.
pub fn erase_to_well_defined(
    pool: &mut Pool,
    t: Ty,
    map: &VarMap,
    defined: &dyn Fn(SymVar) -> bool,
    defined_var: &dyn Fn(Var) -> bool,
    an: &Analyzer,
) -> Ty {
    let mut cx = Eraser { from: None, map, defined, defined_var, an };
    cx.ty(pool, t)
}

/// Copies a type of another function's pool into `to`, substituting through `map`; a
/// shape or value mentioning an unmapped variable (symbolic or shape variable) is
/// dropped, as everything of the other function is undefined here.
pub(crate) fn transfer(from: &Pool, t: Ty, to: &mut Pool, map: &VarMap, an: &Analyzer) -> Ty {
    let mut cx = Eraser { from: Some(from), map, defined: &|_| false, defined_var: &|_| false, an };
    cx.ty(to, t)
}

struct Eraser<'a> {
    /// The pool the type comes from, when it is not the target pool.
    from: Option<&'a Pool>,
    map: &'a VarMap,
    defined: &'a dyn Fn(SymVar) -> bool,
    defined_var: &'a dyn Fn(Var) -> bool,
    an: &'a Analyzer,
}

impl Eraser<'_> {
    fn ty_data(&self, to: &Pool, t: Ty) -> TyData {
        match self.from {
            Some(p) => p.ty(t).clone(),
            None => to.ty(t).clone(),
        }
    }

    fn prim_data(&self, to: &Pool, e: PrimExpr) -> PrimExprData {
        match self.from {
            Some(p) => p.prim(e).clone(),
            None => to.prim(e).clone(),
        }
    }

    fn ty(&mut self, to: &mut Pool, t: Ty) -> Ty {
        let data = match self.ty_data(to, t) {
            TyData::Object => TyData::Object,
            TyData::Prim { dtype, value } => TyData::Prim { dtype, value: value.and_then(|v| self.dim(to, v)) },
            TyData::Shape { values, ndim } => {
                let values = values.and_then(|vs| vs.iter().map(|&v| self.dim(to, v)).collect());
                TyData::Shape { values, ndim }
            }
            TyData::Tensor { shape, dtype, ndim, vdevice } => {
                let shape = match shape {
                    TensorShape::Dims(d) => match d.iter().map(|&v| self.dim(to, v)).collect() {
                        Some(d) => TensorShape::Dims(d),
                        None => TensorShape::Unknown,
                    },
                    TensorShape::Var(v) => match self.map.shapes.get(&v) {
                        Some(s) => s.clone(),
                        None if self.from.is_none() && (self.defined_var)(v) => TensorShape::Var(v),
                        None => TensorShape::Unknown,
                    },
                    TensorShape::Unknown => TensorShape::Unknown,
                };
                TyData::Tensor { shape, dtype, ndim, vdevice }
            }
            TyData::Tuple(fields) => TyData::Tuple(fields.iter().map(|&f| self.ty(to, f)).collect()),
            // Function types are well-defined by construction (their variables are
            // defined by their own parameters); they are only copied.
            TyData::Callable { params, ret, pure } => {
                if self.from.is_none() {
                    return t;
                }
                TyData::Callable {
                    params: params.map(|ps| ps.iter().map(|&p| self.ty(to, p)).collect()),
                    ret: self.ty(to, ret),
                    pure,
                }
            }
        };
        to.intern_ty(data)
    }

    /// A dim or prim value after substitution, or `None` when it mentions an undefined
    /// variable. Changed values are simplified.
    fn dim(&mut self, to: &mut Pool, e: PrimExpr) -> Option<PrimExpr> {
        let mut changed = false;
        let r = self.subst(to, e, &mut changed)?;
        if !changed && self.from.is_none() {
            return Some(e);
        }
        let r = as_index(to, r);
        Some(if changed { simplify(self.an, to, r) } else { r })
    }

    fn subst(&mut self, to: &mut Pool, e: PrimExpr, changed: &mut bool) -> Option<PrimExpr> {
        let data = self.prim_data(to, e);
        Some(match data {
            PrimExprData::Var(v) => match self.map.syms.get(&v) {
                Some(&img) => {
                    *changed = true;
                    img
                }
                None if self.from.is_none() && (self.defined)(v) => e,
                None => return None,
            },
            PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) => {
                if self.from.is_none() {
                    e
                } else {
                    to.raw(data)
                }
            }
            PrimExprData::Bin(op, a, b) => {
                let na = self.subst(to, a, changed)?;
                let nb = self.subst(to, b, changed)?;
                if self.from.is_none() && (na, nb) == (a, b) { e } else { bin(to, op, na, nb) }
            }
            PrimExprData::Not(a) => {
                let na = self.subst(to, a, changed)?;
                to.not(na)
            }
            PrimExprData::Cast(t, a) => {
                let na = self.subst(to, a, changed)?;
                to.cast(t, na)
            }
            PrimExprData::Select(c, t, f) => {
                let c = self.subst(to, c, changed)?;
                let t = self.subst(to, t, changed)?;
                let f = self.subst(to, f, changed)?;
                to.raw(PrimExprData::Select(c, t, f))
            }
            PrimExprData::Call { dtype, op, args } => {
                let args = args.iter().map(|&a| self.subst(to, a, changed)).collect::<Option<Vec<_>>>()?;
                to.raw(PrimExprData::Call { dtype, op, args })
            }
            // Loads, lets and vectors do not occur in Relax types.
            _ => return None,
        })
    }
}

/// The result type a function without a declared one gets from its body's type `t`:
/// symbolic variables the parameters' types define stay, everything else the body
/// defines (variables bound by `match_cast`, shape variables used as tensor shapes) is
/// erased, as TVM does for `R.function` results.
pub fn erase_to_signature(f: &mut RelaxFunction, t: Ty, params: &[Var], an: &Analyzer) -> Ty {
    let mut defined: Vec<SymVar> = Vec::new();
    for &p in params {
        let pt = f.vars[p].ty;
        f.pool.ty_vars(pt, &mut defined);
    }
    erase_to_well_defined(&mut f.pool, t, &VarMap::default(), &|v| defined.contains(&v), &|_| false, an)
}
