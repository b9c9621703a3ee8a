//! The fingerprint of a PrimFunc (for sharing legalized kernels): signature, buffers,
//! then the statement tree in full (block names do not count).

use std::fmt::Write;

use super::PoolWriter;
use crate::attrs::AttrValue;
use crate::entities::{Buffer, Stmt};
use crate::tir::{AttrNode, PrimFunc, StmtData};

/// The name-free structure of a PrimFunc.
pub fn prim_func(f: &PrimFunc) -> String {
    let no_dataflow = |_| false;
    let mut w = TirWriter { f, w: PoolWriter::new(&f.pool, Some(&f.buffers), &no_dataflow) };
    let _ = write!(w.w.out, "ret={} s_tir={} persistent={} attrs={:?};", f.ret, f.s_tir, f.persistent, f.attrs);
    for &p in &f.params {
        w.w.sym(p);
        match f.param_buffer(p) {
            Some(b) => {
                w.w.push("->");
                w.w.buffer(b);
            }
            None => w.w.push(","),
        }
    }
    w.w.push("|");
    w.stmt(f.body);
    w.w.out
}

struct TirWriter<'a> {
    f: &'a PrimFunc,
    w: PoolWriter<'a>,
}

impl TirWriter<'_> {
    fn stmt(&mut self, s: Stmt) {
        let f = self.f;
        let w = &mut self.w;
        match &f.stmts[s] {
            StmtData::Seq(v) => {
                w.push("Seq[");
                for &x in v {
                    self.stmt(x);
                    self.w.push(";");
                }
                self.w.push("]");
            }
            StmtData::For { var, min, extent, kind, thread, step, annotations, body } => {
                w.push("For(");
                w.sym(*var);
                w.prim(*min);
                w.push(",");
                w.prim(*extent);
                let _ = write!(w.out, ",{kind:?},{thread:?},{annotations:?},");
                if let Some(st) = step {
                    w.prim(*st);
                }
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::Block(b) => {
                w.push("Block(");
                for iv in &b.iter_vars {
                    w.sym(iv.var);
                    let _ = write!(w.out, ":{:?}:", iv.kind);
                    w.prim(iv.dom.min);
                    w.push(",");
                    w.prim(iv.dom.extent);
                    w.push("=");
                    w.prim(iv.binding);
                    w.push(";");
                }
                if let Some(p) = b.predicate {
                    w.push("where");
                    w.prim(p);
                }
                for (tag, regions) in [("R", &b.reads), ("W", &b.writes)] {
                    w.push(tag);
                    for r in regions {
                        w.buffer(r.buffer);
                        for rg in &r.region {
                            w.prim(rg.min);
                            w.push(":");
                            w.prim(rg.extent);
                            w.push(",");
                        }
                    }
                }
                // Buffers named by annotations print as their number here.
                let mut named = Vec::new();
                for (_, v) in b.annotations.iter() {
                    v.for_each_buffer(&mut |x| named.push(x));
                }
                for x in named {
                    w.buffer(x);
                }
                let bufs = &w.bufs;
                let canon: Vec<(&str, AttrValue)> = b
                    .annotations
                    .iter()
                    .map(|(k, v)| (k, v.map_buffers(&mut |x| <Buffer as relax_entity::EntityRef>::new(bufs[&x]))))
                    .collect();
                let _ = write!(w.out, "{canon:?}");
                for &a in &b.alloc_buffers {
                    w.push("alloc");
                    w.buffer(a);
                }
                for mb in &b.match_buffers {
                    w.push("mb");
                    w.buffer(mb.buffer);
                    w.buffer(mb.source.buffer);
                    for rg in &mb.source.region {
                        w.prim(rg.min);
                        w.prim(rg.extent);
                    }
                }
                if let Some(i) = b.init {
                    w.push("init");
                    self.stmt(i);
                }
                self.stmt(b.body);
                self.w.push(")");
            }
            StmtData::Store { buffer, indices, value } => {
                w.push("St(");
                w.buffer(*buffer);
                for &i in indices {
                    w.push(",");
                    w.prim(i);
                }
                w.push("=");
                w.prim(*value);
                w.push(")");
            }
            StmtData::If { cond, then_branch, else_branch } => {
                w.push("If(");
                w.prim(*cond);
                self.stmt(*then_branch);
                if let Some(e) = else_branch {
                    self.w.push("else");
                    self.stmt(*e);
                }
                self.w.push(")");
            }
            StmtData::While { cond, body } => {
                w.push("While(");
                w.prim(*cond);
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::Let { var, value, body } => {
                w.push("LetS(");
                w.sym(*var);
                w.prim(*value);
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::Evaluate(e) => {
                w.push("Ev(");
                w.prim(*e);
                w.push(")");
            }
            StmtData::Assert { cond, message, body } => {
                w.push("Assert(");
                w.prim(*cond);
                w.prim(*message);
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::Attr { node, key, value, body } => {
                w.push("Attr(");
                match node {
                    AttrNode::Buffer(b) => w.buffer(*b),
                    AttrNode::Expr(e) => w.prim(*e),
                    AttrNode::Str(s) => w.push(s),
                }
                let _ = write!(w.out, ",{key:?},");
                w.prim(*value);
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::DeclBuffer { buffer, body } => {
                w.push("Decl(");
                w.buffer(*buffer);
                self.stmt(*body);
                self.w.push(")");
            }
            StmtData::Allocate { buffer, body } => {
                w.push("Alloc(");
                w.buffer(*buffer);
                self.stmt(*body);
                self.w.push(")");
            }
        }
    }
}
