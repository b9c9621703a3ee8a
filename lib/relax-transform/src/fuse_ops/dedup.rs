//! Structural identity of Relax functions, for sharing fused functions.
//!
//! TVM's `BlockBuilder::AddFunction` reuses a structurally equal function of the module:
//! two groups that compute the same thing on the same kernels share one function.
//! [`fingerprint`] writes a function as a string in which variables (Relax and symbolic)
//! are numbered by first occurrence, so two functions have the same fingerprint exactly
//! when they are equal up to renaming; globals and constants are compared by identity.

use std::collections::HashMap;
use std::fmt::Write;

use relax_ir::{
    BindingKind, Expr, ExprData, PrimExpr, PrimExprData, RelaxFunction, Seq, SymVar, TensorShape, Ty, TyData, Var,
};

/// The name-free structure of a Relax function.
pub fn fingerprint(f: &RelaxFunction) -> String {
    let mut w = Writer { f, vars: HashMap::new(), syms: HashMap::new(), out: String::new() };
    let _ = write!(w.out, "pure={} attrs={:?};", f.func.pure, f.func.attrs);
    for &p in &f.func.params {
        w.var(p);
        w.out.push(':');
        w.ty(f.vars[p].ty);
        w.out.push(',');
    }
    w.out.push_str("->");
    w.ty(f.func.ret);
    w.out.push('|');
    w.seq(f.func.body);
    w.out
}

struct Writer<'a> {
    f: &'a RelaxFunction,
    vars: HashMap<Var, usize>,
    syms: HashMap<SymVar, usize>,
    out: String,
}

impl Writer<'_> {
    fn var(&mut self, v: Var) {
        let n = self.vars.len();
        let id = *self.vars.entry(v).or_insert(n);
        let _ = write!(self.out, "v{id}{}", if self.f.vars[v].dataflow { "d" } else { "" });
    }

    fn sym(&mut self, v: SymVar) {
        let n = self.syms.len();
        let id = *self.syms.entry(v).or_insert(n);
        let _ = write!(self.out, "s{id}:{}", self.f.pool.vars[v].dtype);
    }

    fn prim(&mut self, e: PrimExpr) {
        let pool = &self.f.pool;
        match pool.prim(e).clone() {
            PrimExprData::Var(v) => self.sym(v),
            PrimExprData::Int(t, v) => {
                let _ = write!(self.out, "I{t}:{v}");
            }
            PrimExprData::Float(t, v) => {
                let _ = write!(self.out, "F{t}:{:x}", v.0);
            }
            PrimExprData::Str(s) => {
                let _ = write!(self.out, "S{s:?}");
            }
            other => {
                let tag = match &other {
                    PrimExprData::Bin(op, ..) => format!("B{op:?}"),
                    PrimExprData::Not(_) => "Not".into(),
                    PrimExprData::Cast(t, _) => format!("C{t}"),
                    PrimExprData::Select(..) => "Sel".into(),
                    PrimExprData::Call { dtype, op, .. } => format!("Call{dtype}:{op}"),
                    PrimExprData::Load { dtype, .. } => format!("L{dtype}"),
                    PrimExprData::Let { .. } => "Let".into(),
                    PrimExprData::Ramp { lanes, .. } => format!("Ramp{lanes}"),
                    PrimExprData::Broadcast { lanes, .. } => format!("Bc{lanes}"),
                    _ => String::new(),
                };
                self.out.push_str(&tag);
                self.out.push('(');
                let mut kids = Vec::new();
                pool.for_each_operand(e, |k| kids.push(k));
                for k in kids {
                    self.prim(k);
                    self.out.push(',');
                }
                self.out.push(')');
            }
        }
    }

    fn ty(&mut self, t: Ty) {
        match self.f.pool.ty(t).clone() {
            TyData::Object => self.out.push('O'),
            TyData::Prim { dtype, value } => {
                let _ = write!(self.out, "P{dtype}(");
                if let Some(v) = value {
                    self.prim(v);
                }
                self.out.push(')');
            }
            TyData::Shape { values, ndim } => {
                let _ = write!(self.out, "Sh{ndim}(");
                for v in values.into_iter().flatten() {
                    self.prim(v);
                    self.out.push(',');
                }
                self.out.push(')');
            }
            TyData::Tensor { shape, dtype, ndim, vdevice } => {
                let _ = write!(self.out, "T{dtype}:{ndim}:{vdevice:?}(");
                match shape {
                    TensorShape::Dims(d) => {
                        for v in d {
                            self.prim(v);
                            self.out.push(',');
                        }
                    }
                    TensorShape::Var(v) => {
                        self.out.push('@');
                        self.var(v);
                    }
                    TensorShape::Unknown => self.out.push('?'),
                }
                self.out.push(')');
            }
            TyData::Tuple(fields) => {
                self.out.push_str("Tu(");
                for x in fields {
                    self.ty(x);
                    self.out.push(',');
                }
                self.out.push(')');
            }
            TyData::Callable { params, ret, pure } => {
                let _ = write!(self.out, "Fn{pure}(");
                for p in params.into_iter().flatten() {
                    self.ty(p);
                    self.out.push(',');
                }
                self.out.push_str("->");
                self.ty(ret);
                self.out.push(')');
            }
        }
    }

    fn seq(&mut self, s: Seq) {
        let s = self.f.seq(s);
        for &b in &s.blocks {
            let blk = &self.f.blocks[b];
            let _ = write!(self.out, "[{}", if blk.dataflow { "df" } else { "" });
            for bd in &blk.bindings {
                self.var(bd.var);
                self.out.push(':');
                self.ty(self.f.vars[bd.var].ty);
                if let BindingKind::MatchCast(t) = bd.kind {
                    self.out.push('~');
                    self.ty(t);
                }
                self.out.push('=');
                self.expr(bd.value);
                self.out.push(';');
            }
            self.out.push(']');
        }
        self.expr(s.body);
    }

    fn expr(&mut self, e: Expr) {
        match self.f.exprs[e].clone() {
            ExprData::Var(v) => self.var(v),
            ExprData::Global(g) => {
                let _ = write!(self.out, "G{}", relax_entity::EntityRef::index(g));
            }
            ExprData::Op(op) => {
                let _ = write!(self.out, "Op{}", op.name());
            }
            ExprData::ExternFunc(s) => {
                let _ = write!(self.out, "X{s:?}");
            }
            ExprData::Call(c) => {
                self.out.push_str("Call(");
                self.expr(c.callee);
                for &a in self.f.list(c.args) {
                    self.out.push(',');
                    self.expr(a);
                }
                let _ = write!(self.out, ";{:?};", c.attrs);
                for t in c.sinfo_args {
                    self.ty(t);
                    self.out.push(',');
                }
                self.out.push(')');
            }
            ExprData::Tuple(fields) => {
                self.out.push_str("Tup(");
                for &x in self.f.list(fields) {
                    self.expr(x);
                    self.out.push(',');
                }
                self.out.push(')');
            }
            ExprData::GetItem { tuple, index } => {
                self.expr(tuple);
                let _ = write!(self.out, "[{index}]");
            }
            ExprData::Shape(dims) => {
                self.out.push_str("Shape(");
                for d in dims {
                    self.prim(d);
                    self.out.push(',');
                }
                self.out.push(')');
            }
            ExprData::Prim(p) => {
                self.out.push_str("Prim(");
                self.prim(p);
                self.out.push(')');
            }
            ExprData::Str(s) => {
                let _ = write!(self.out, "Str{s:?}");
            }
            ExprData::DType(t) => {
                let _ = write!(self.out, "DT{t}");
            }
            ExprData::Const(c) => {
                let _ = write!(self.out, "K{}", relax_entity::EntityRef::index(c));
            }
            ExprData::If { cond, then_branch, else_branch } => {
                self.out.push_str("If(");
                self.expr(cond);
                self.seq(then_branch);
                self.seq(else_branch);
                self.out.push(')');
            }
            ExprData::Function(node) => {
                self.out.push_str("Fn(");
                for p in &node.params {
                    self.var(*p);
                    self.out.push(':');
                    self.ty(self.f.vars[*p].ty);
                }
                self.ty(node.ret);
                self.seq(node.body);
                self.out.push(')');
            }
        }
    }
}
