//! The fingerprint of a Relax function (for sharing fused functions): signature, then
//! every sequence's blocks and bindings, expressions in full.

use std::fmt::Write;

use relax_entity::EntityRef;

use super::PoolWriter;
use crate::entities::{Expr, Seq};
use crate::relax::{BindingKind, ExprData, RelaxFunction};

/// The name-free structure of a Relax function.
pub fn relax_function(f: &RelaxFunction) -> String {
    let dataflow = |v| f.vars[v].dataflow;
    let mut w = RelaxWriter { f, w: PoolWriter::new(&f.pool, None, &dataflow) };
    let _ = write!(w.w.out, "pure={} attrs={:?};", f.func.pure, f.func.attrs);
    for &p in &f.func.params {
        w.w.var(p);
        w.w.push(":");
        w.w.ty(f.vars[p].ty);
        w.w.push(",");
    }
    w.w.push("->");
    w.w.ty(f.func.ret);
    w.w.push("|");
    w.seq(f.func.body);
    w.w.out
}

struct RelaxWriter<'a> {
    f: &'a RelaxFunction,
    w: PoolWriter<'a>,
}

impl RelaxWriter<'_> {
    fn seq(&mut self, s: Seq) {
        let f = self.f;
        let s = f.seq(s);
        for &b in &s.blocks {
            let blk = &f.blocks[b];
            let _ = write!(self.w.out, "[{}", if blk.dataflow { "df" } else { "" });
            for bd in &blk.bindings {
                self.w.var(bd.var);
                self.w.push(":");
                self.w.ty(f.vars[bd.var].ty);
                if let BindingKind::MatchCast(t) = bd.kind {
                    self.w.push("~");
                    self.w.ty(t);
                }
                self.w.push("=");
                self.expr(bd.value);
                self.w.push(";");
            }
            self.w.push("]");
        }
        self.expr(s.body);
    }

    fn expr(&mut self, e: Expr) {
        let f = self.f;
        let w = &mut self.w;
        match &f.exprs[e] {
            ExprData::Var(v) => w.var(*v),
            ExprData::Global(g) => {
                let _ = write!(w.out, "G{}", g.index());
            }
            ExprData::Op(op) => {
                let _ = write!(w.out, "Op{}", op.name());
            }
            ExprData::ExternFunc(s) => {
                let _ = write!(w.out, "X{s:?}");
            }
            ExprData::Call(c) => {
                w.push("Call(");
                self.expr(c.callee);
                for &a in f.list(c.args) {
                    self.w.push(",");
                    self.expr(a);
                }
                let _ = write!(self.w.out, ";{:?};", c.attrs);
                for &t in &c.sinfo_args {
                    self.w.ty(t);
                    self.w.push(",");
                }
                self.w.push(")");
            }
            ExprData::Tuple(fields) => {
                w.push("Tup(");
                for &x in f.list(fields) {
                    self.expr(x);
                    self.w.push(",");
                }
                self.w.push(")");
            }
            ExprData::GetItem { tuple, index } => {
                self.expr(*tuple);
                let _ = write!(self.w.out, "[{index}]");
            }
            ExprData::Shape(dims) => {
                w.push("Shape(");
                for &d in dims {
                    self.w.prim(d);
                    self.w.push(",");
                }
                self.w.push(")");
            }
            ExprData::Prim(p) => {
                w.push("Prim(");
                w.prim(*p);
                w.push(")");
            }
            ExprData::Str(s) => {
                let _ = write!(w.out, "Str{s:?}");
            }
            ExprData::DType(t) => {
                let _ = write!(w.out, "DT{t}");
            }
            ExprData::Const(c) => {
                let _ = write!(w.out, "K{}", c.index());
            }
            ExprData::If { cond, then_branch, else_branch } => {
                w.push("If(");
                self.expr(*cond);
                self.seq(*then_branch);
                self.seq(*else_branch);
                self.w.push(")");
            }
            ExprData::Function(node) => {
                w.push("Fn(");
                for &p in &node.params {
                    self.w.var(p);
                    self.w.push(":");
                    self.w.ty(f.vars[p].ty);
                }
                self.w.ty(node.ret);
                self.seq(node.body);
                self.w.push(")");
            }
        }
    }
}
