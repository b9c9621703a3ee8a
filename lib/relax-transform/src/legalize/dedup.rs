//! Structural identity of PrimFuncs, for sharing legalized kernels.
//!
//! TVM's `BlockBuilder::AddFunction` reuses a structurally equal function of the module:
//! names of variables, buffers and blocks do not matter (`SEqHashIgnore`), everything
//! else does. [`fingerprint`] writes a PrimFunc as a string in which every variable and
//! buffer is replaced by the number of its first occurrence, so two PrimFuncs have the
//! same fingerprint exactly when they are equal up to renaming.

use std::collections::HashMap;
use std::fmt::Write;

use relax_entity::EntityRef;
use relax_ir::prim::PrimExprData;
use relax_ir::tir::{AttrNode, PrimFunc, StmtData};
use relax_ir::{Buffer, PrimExpr, Stmt, SymVar};

/// The name-free structure of a PrimFunc.
pub fn fingerprint(f: &PrimFunc) -> String {
    let mut w = Writer { f, vars: HashMap::new(), bufs: HashMap::new(), out: String::new() };
    let _ = write!(w.out, "ret={} s_tir={} persistent={} attrs={:?};", f.ret, f.s_tir, f.persistent, f.attrs);
    for &p in &f.params {
        w.var(p);
        match f.param_buffer(p) {
            Some(b) => {
                w.out.push_str("->");
                w.buffer(b);
            }
            None => w.out.push(','),
        }
    }
    w.out.push('|');
    w.stmt(f.body);
    w.out
}

struct Writer<'a> {
    f: &'a PrimFunc,
    vars: HashMap<SymVar, usize>,
    bufs: HashMap<Buffer, usize>,
    out: String,
}

impl Writer<'_> {
    fn var(&mut self, v: SymVar) {
        let n = self.vars.len();
        let id = *self.vars.entry(v).or_insert(n);
        let d = &self.f.pool.vars[v];
        let _ = write!(self.out, "v{id}:{}:{:?}", d.dtype, d.pointer);
    }

    fn buffer(&mut self, b: Buffer) {
        if let Some(&id) = self.bufs.get(&b) {
            let _ = write!(self.out, "b{id}");
            return;
        }
        let id = self.bufs.len();
        self.bufs.insert(b, id);
        let d = &self.f.buffers[b];
        let _ = write!(self.out, "b{id}{{{}:", d.dtype);
        self.var(d.data);
        self.out.push('[');
        for &s in &d.shape {
            self.expr(s);
            self.out.push(',');
        }
        self.out.push_str("][");
        for &s in &d.strides {
            self.expr(s);
            self.out.push(',');
        }
        self.out.push(']');
        if let Some(o) = d.elem_offset {
            self.expr(o);
        }
        let _ = write!(
            self.out,
            ";{};{:?};{:?};{:?};{:?}}}",
            d.scope, d.align, d.offset_factor, d.buffer_type, d.axis_separators
        );
    }

    fn expr(&mut self, e: PrimExpr) {
        match self.f.pool.prim(e).clone() {
            PrimExprData::Var(v) => self.var(v),
            PrimExprData::Load { dtype, buffer, indices } => {
                let _ = write!(self.out, "L{dtype}(");
                self.buffer(buffer);
                for i in indices {
                    self.out.push(',');
                    self.expr(i);
                }
                self.out.push(')');
            }
            PrimExprData::Let { var, value, body } => {
                self.out.push_str("Let(");
                self.var(var);
                self.expr(value);
                self.expr(body);
                self.out.push(')');
            }
            other => {
                // Leaves and operators: the payload's own text, with operands in order.
                let tag = match &other {
                    PrimExprData::Int(t, v) => format!("I{t}:{v}"),
                    PrimExprData::Float(t, v) => format!("F{t}:{:x}", v.0),
                    PrimExprData::Str(s) => format!("S{s:?}"),
                    PrimExprData::Bin(op, ..) => format!("B{op:?}"),
                    PrimExprData::Not(_) => "Not".into(),
                    PrimExprData::Cast(t, _) => format!("C{t}"),
                    PrimExprData::Select(..) => "Sel".into(),
                    PrimExprData::Call { dtype, op, .. } => format!("Call{dtype}:{op}"),
                    PrimExprData::Ramp { lanes, .. } => format!("Ramp{lanes}"),
                    PrimExprData::Broadcast { lanes, .. } => format!("Bc{lanes}"),
                    _ => String::new(),
                };
                self.out.push_str(&tag);
                self.out.push('(');
                let mut kids = Vec::new();
                self.f.pool.for_each_operand(e, |k| kids.push(k));
                for k in kids {
                    self.expr(k);
                    self.out.push(',');
                }
                self.out.push(')');
            }
        }
    }

    fn stmt(&mut self, s: Stmt) {
        match self.f.stmts[s].clone() {
            StmtData::Seq(v) => {
                self.out.push_str("Seq[");
                for x in v {
                    self.stmt(x);
                    self.out.push(';');
                }
                self.out.push(']');
            }
            StmtData::For { var, min, extent, kind, thread, step, annotations, body } => {
                self.out.push_str("For(");
                self.var(var);
                self.expr(min);
                self.out.push(',');
                self.expr(extent);
                let _ = write!(self.out, ",{kind:?},{thread:?},{annotations:?},");
                if let Some(st) = step {
                    self.expr(st);
                }
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::Block(b) => {
                self.out.push_str("Block(");
                for iv in &b.iter_vars {
                    self.var(iv.var);
                    let _ = write!(self.out, ":{:?}:", iv.kind);
                    self.expr(iv.dom.min);
                    self.out.push(',');
                    self.expr(iv.dom.extent);
                    self.out.push('=');
                    self.expr(iv.binding);
                    self.out.push(';');
                }
                if let Some(p) = b.predicate {
                    self.out.push_str("where");
                    self.expr(p);
                }
                for (tag, regions) in [("R", &b.reads), ("W", &b.writes)] {
                    self.out.push_str(tag);
                    for r in regions {
                        self.buffer(r.buffer);
                        for rg in &r.region {
                            self.expr(rg.min);
                            self.out.push(':');
                            self.expr(rg.extent);
                            self.out.push(',');
                        }
                    }
                }
                // Buffers named by annotations print as their number here.
                let mut named = Vec::new();
                for (_, v) in b.annotations.iter() {
                    v.for_each_buffer(&mut |x| named.push(x));
                }
                for x in named {
                    self.buffer(x);
                }
                let bufs = &self.bufs;
                let canon: Vec<(&str, relax_ir::AttrValue)> =
                    b.annotations.iter().map(|(k, v)| (k, v.map_buffers(&mut |x| Buffer::new(bufs[&x])))).collect();
                let _ = write!(self.out, "{canon:?}");
                for &a in &b.alloc_buffers {
                    self.out.push_str("alloc");
                    self.buffer(a);
                }
                for mb in &b.match_buffers {
                    self.out.push_str("mb");
                    self.buffer(mb.buffer);
                    self.buffer(mb.source.buffer);
                    for rg in &mb.source.region {
                        self.expr(rg.min);
                        self.expr(rg.extent);
                    }
                }
                if let Some(i) = b.init {
                    self.out.push_str("init");
                    self.stmt(i);
                }
                self.stmt(b.body);
                self.out.push(')');
            }
            StmtData::Store { buffer, indices, value } => {
                self.out.push_str("St(");
                self.buffer(buffer);
                for i in indices {
                    self.out.push(',');
                    self.expr(i);
                }
                self.out.push('=');
                self.expr(value);
                self.out.push(')');
            }
            StmtData::If { cond, then_branch, else_branch } => {
                self.out.push_str("If(");
                self.expr(cond);
                self.stmt(then_branch);
                if let Some(e) = else_branch {
                    self.out.push_str("else");
                    self.stmt(e);
                }
                self.out.push(')');
            }
            StmtData::While { cond, body } => {
                self.out.push_str("While(");
                self.expr(cond);
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::Let { var, value, body } => {
                self.out.push_str("LetS(");
                self.var(var);
                self.expr(value);
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::Evaluate(e) => {
                self.out.push_str("Ev(");
                self.expr(e);
                self.out.push(')');
            }
            StmtData::Assert { cond, message, body } => {
                self.out.push_str("Assert(");
                self.expr(cond);
                self.expr(message);
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::Attr { node, key, value, body } => {
                self.out.push_str("Attr(");
                match node {
                    AttrNode::Buffer(b) => self.buffer(b),
                    AttrNode::Expr(e) => self.expr(e),
                    AttrNode::Str(s) => self.out.push_str(&s),
                }
                let _ = write!(self.out, ",{key:?},");
                self.expr(value);
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::DeclBuffer { buffer, body } => {
                self.out.push_str("Decl(");
                self.buffer(buffer);
                self.stmt(body);
                self.out.push(')');
            }
            StmtData::Allocate { buffer, body } => {
                self.out.push_str("Alloc(");
                self.buffer(buffer);
                self.stmt(body);
                self.out.push(')');
            }
        }
    }
}
