//! The per-function pool of TIR variables, interned TIR expressions and interned types.
//!
//! Every Relax function and every PrimFunc owns one pool; handles from one pool mean
//! nothing in another. Copying between functions goes through [`Pool::import_prim`] and
//! [`Pool::import_ty`], which translate handles and may rename variables.

use std::collections::HashMap;

use relax_entity::{PrimaryMap, UniqueArena};

use crate::dtype::DataType;
use crate::entities::{PrimExpr, SymVar, Ty};
use crate::prim::{PrimExprData, SymVarData};
use crate::ty::{TensorShape, TyData};

/// Variables, expressions and types of one function.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    /// TIR variables (symbolic dims, loop/block vars, handles, scalar params).
    pub vars: PrimaryMap<SymVar, SymVarData>,
    /// Interned TIR expressions.
    pub prims: UniqueArena<PrimExpr, PrimExprData>,
    /// Interned Relax types.
    pub tys: UniqueArena<Ty, TyData>,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool::default()
    }

    /// A fresh variable.
    pub fn new_var(&mut self, name: impl Into<String>, dtype: DataType) -> SymVar {
        self.vars.push(SymVarData::new(name, dtype))
    }

    /// The payload of an expression.
    pub fn prim(&self, e: PrimExpr) -> &PrimExprData {
        &self.prims[e]
    }

    /// The payload of a type.
    pub fn ty(&self, t: Ty) -> &TyData {
        &self.tys[t]
    }

    /// Interns a type.
    pub fn intern_ty(&mut self, t: TyData) -> Ty {
        self.tys.intern(t)
    }

    /// Interns an expression exactly as given (no folding).
    pub fn raw(&mut self, e: PrimExprData) -> PrimExpr {
        self.prims.intern(e)
    }

    /// The constant value of an integer literal.
    pub fn as_int(&self, e: PrimExpr) -> Option<i64> {
        match self.prims[e] {
            PrimExprData::Int(_, v) => Some(v),
            _ => None,
        }
    }

    /// The variable of a bare variable expression.
    pub fn as_var(&self, e: PrimExpr) -> Option<SymVar> {
        match self.prims[e] {
            PrimExprData::Var(v) => Some(v),
            _ => None,
        }
    }

    /// The type of an expression's value.
    pub fn dtype(&self, e: PrimExpr) -> DataType {
        // Follow the operand that determines the type iteratively: long operator chains
        // must not recurse.
        let mut e = e;
        let mut compare_lanes: Option<u16> = None;
        loop {
            let next = match &self.prims[e] {
                PrimExprData::Bin(op, a, _) if op.is_compare() || op.is_logical() => {
                    compare_lanes.get_or_insert(0);
                    *a
                }
                PrimExprData::Bin(_, a, _) | PrimExprData::Not(a) => *a,
                PrimExprData::Select(_, t, _) => *t,
                PrimExprData::Let { body, .. } => *body,
                _ => break,
            };
            e = next;
        }
        let t = self.leaf_dtype(e);
        match compare_lanes {
            Some(_) => DataType::BOOL.with_lanes(t.lanes.max(1)),
            None => t,
        }
    }

    fn leaf_dtype(&self, e: PrimExpr) -> DataType {
        match &self.prims[e] {
            PrimExprData::Int(t, _) | PrimExprData::Float(t, _) => *t,
            PrimExprData::Str(_) => DataType::HANDLE,
            PrimExprData::Var(v) => self.vars[*v].dtype,
            PrimExprData::Load { dtype, .. } => *dtype,
            PrimExprData::Bin(..) | PrimExprData::Not(_) | PrimExprData::Select(..) | PrimExprData::Let { .. } => {
                unreachable!("followed by `dtype`")
            }
            PrimExprData::Cast(t, _) => *t,
            PrimExprData::Call { dtype, .. } => *dtype,
            PrimExprData::Ramp { base, lanes, .. } => self.dtype(*base).with_lanes(*lanes),
            PrimExprData::Broadcast { value, lanes } => self.dtype(*value).with_lanes(*lanes),
        }
    }

    /// Calls `f` on each direct operand of `e` ([`PrimExprData::for_each_operand`]).
    pub fn for_each_operand(&self, e: PrimExpr, f: impl FnMut(PrimExpr)) {
        self.prims[e].for_each_operand(f)
    }

    /// The variables `e` mentions, in first-occurrence order (left to right), without
    /// duplicates. Variables bound by a `Let` inside `e` are included.
    pub fn free_vars(&self, e: PrimExpr) -> Vec<SymVar> {
        let mut out = Vec::new();
        self.collect_vars(e, &mut out);
        out
    }

    /// Appends the variables of `e` not yet in `out`, in first-occurrence order.
    pub fn collect_vars(&self, e: PrimExpr, out: &mut Vec<SymVar>) {
        // Iterative pre-order walk: deep expressions must not overflow the stack.
        let mut stack = vec![e];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            if let PrimExprData::Var(v) = self.prims[e] {
                if !out.contains(&v) {
                    out.push(v);
                }
                continue;
            }
            let mut ops = Vec::new();
            self.for_each_operand(e, |o| ops.push(o));
            stack.extend(ops.into_iter().rev());
        }
    }

    /// The variables mentioned by a type (dims, prim values, nested types), in
    /// first-occurrence order.
    pub fn ty_vars(&self, t: Ty, out: &mut Vec<SymVar>) {
        match &self.tys[t] {
            TyData::Object => {}
            TyData::Prim { value, .. } => {
                if let Some(v) = value {
                    self.collect_vars(*v, out);
                }
            }
            TyData::Shape { values, .. } => {
                for &d in values.iter().flatten() {
                    self.collect_vars(d, out);
                }
            }
            TyData::Tensor { shape, .. } => {
                if let TensorShape::Dims(d) = shape {
                    for &d in d {
                        self.collect_vars(d, out);
                    }
                }
            }
            TyData::Tuple(fields) => {
                for &f in fields {
                    self.ty_vars(f, out);
                }
            }
            TyData::Callable { params, ret, .. } => {
                for &p in params.iter().flatten() {
                    self.ty_vars(p, out);
                }
                self.ty_vars(*ret, out);
            }
        }
    }

    /// Copies `e` from another pool into this one. Variables found in `map` are replaced
    /// by their image; others are created fresh (same name and dtype) and recorded in `map`.
    /// Buffer handles inside loads are kept as they are: the caller remaps them if needed.
    pub fn import_prim(&mut self, from: &Pool, e: PrimExpr, map: &mut HashMap<SymVar, PrimExpr>) -> PrimExpr {
        let data = match from.prim(e) {
            PrimExprData::Var(v) => {
                if let Some(&img) = map.get(v) {
                    return img;
                }
                let nv = self.vars.push(from.vars[*v].clone());
                let img = self.raw(PrimExprData::Var(nv));
                map.insert(*v, img);
                return img;
            }
            PrimExprData::Let { var, value, body } => {
                let value = self.import_prim(from, *value, map);
                let nv = self.vars.push(from.vars[*var].clone());
                let img = self.raw(PrimExprData::Var(nv));
                map.insert(*var, img);
                PrimExprData::Let { var: nv, value, body: self.import_prim(from, *body, map) }
            }
            d => d.map_operands(|o| self.import_prim(from, o, map)),
        };
        self.raw(data)
    }

    /// Copies a type from another pool (see [`Pool::import_prim`]). A tensor whose shape
    /// is a Relax shape variable cannot be translated and keeps only rank and dtype.
    pub fn import_ty(&mut self, from: &Pool, t: Ty, map: &mut HashMap<SymVar, PrimExpr>) -> Ty {
        let data = match from.ty(t).clone() {
            TyData::Object => TyData::Object,
            TyData::Prim { dtype, value } => {
                TyData::Prim { dtype, value: value.map(|v| self.import_prim(from, v, map)) }
            }
            TyData::Shape { values, ndim } => TyData::Shape {
                values: values.map(|vs| vs.iter().map(|&v| self.import_prim(from, v, map)).collect()),
                ndim,
            },
            TyData::Tensor { shape, dtype, ndim, vdevice } => {
                let shape = match shape {
                    TensorShape::Dims(d) => {
                        TensorShape::Dims(d.iter().map(|&v| self.import_prim(from, v, map)).collect())
                    }
                    TensorShape::Unknown | TensorShape::Var(_) => TensorShape::Unknown,
                };
                TyData::Tensor { shape, dtype, ndim, vdevice }
            }
            TyData::Tuple(fields) => TyData::Tuple(fields.iter().map(|&f| self.import_ty(from, f, map)).collect()),
            TyData::Callable { params, ret, pure } => TyData::Callable {
                params: params.map(|ps| ps.iter().map(|&p| self.import_ty(from, p, map)).collect()),
                ret: self.import_ty(from, ret, map),
                pure,
            },
        };
        self.intern_ty(data)
    }
}
