//! Copying a kernel's statements into the fused PrimFunc (TVM's `RenewDefs` followed by
//! `FuseTIRBufferSubstitutor`).
//!
//! Every definition of the kernel (loop, block and `let` variables, allocated and
//! matched buffers) gets a fresh copy in the target, so that two calls of one kernel do
//! not collide. Uses of the kernel's parameters are replaced: parameter buffers by the
//! buffers of the fused function (inputs, intermediates, outputs), symbolic variables by
//! the expressions the symbolic matcher bound them to. Expressions are rebuilt exactly
//! (no folding), as TVM's substitution does. The read and write regions of each block
//! keep one region per buffer (the first), since two parameters may now be one buffer.
//! Buffers named by loop and block annotations (`layout_free_placeholders`) are remapped like the
//! buffers of the body, so that they name the fused function's buffers.

use std::collections::HashMap;

use relax_ir::prim::PrimExprData;
use relax_ir::tir::{AttrNode, BlockNode, BufferRegion, IterVar, MatchBufferRegion, PrimFunc, StmtData};
use relax_ir::{Attrs, Buffer, BufferData, PrimExpr, Range, Stmt, SymVar, SymVarData};

/// Copies from one kernel into the target.
pub struct Copier<'a> {
    /// The kernel.
    pub from: &'a PrimFunc,
    /// Kernel variable → target expression.
    pub vars: HashMap<SymVar, PrimExpr>,
    /// Kernel buffer → target buffer.
    pub buffers: HashMap<Buffer, Buffer>,
    /// Kernel variables used but neither mapped nor defined in the kernel's body.
    pub unbound: Vec<SymVar>,
    memo: HashMap<PrimExpr, PrimExpr>,
}

impl<'a> Copier<'a> {
    /// A copier with the given maps.
    pub fn new(from: &'a PrimFunc, vars: HashMap<SymVar, PrimExpr>, buffers: HashMap<Buffer, Buffer>) -> Copier<'a> {
        Copier { from, vars, buffers, unbound: Vec::new(), memo: HashMap::new() }
    }

    /// A fresh target variable for the kernel variable `v` (a definition).
    fn define(&mut self, to: &mut PrimFunc, v: SymVar) -> SymVar {
        let nv = to.pool.vars.push(self.from.pool.vars[v].clone());
        let e = to.pool.raw(PrimExprData::Var(nv));
        self.vars.insert(v, e);
        nv
    }

    /// Copies an expression.
    pub fn expr(&mut self, to: &mut PrimFunc, e: PrimExpr) -> PrimExpr {
        if let Some(&r) = self.memo.get(&e) {
            return r;
        }
        let pool = &self.from.pool;
        let data = match pool.prim(e).clone() {
            PrimExprData::Var(v) => {
                let r = match self.vars.get(&v) {
                    Some(&r) => r,
                    None => {
                        if !self.unbound.contains(&v) {
                            self.unbound.push(v);
                        }
                        let nv = self.define(to, v);
                        to.pool.raw(PrimExprData::Var(nv))
                    }
                };
                return r;
            }
            d @ (PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_)) => d,
            PrimExprData::Load { dtype, buffer, indices } => PrimExprData::Load {
                dtype,
                buffer: self.buffer_use(to, buffer),
                indices: indices.iter().map(|&i| self.expr(to, i)).collect(),
            },
            PrimExprData::Bin(op, a, b) => PrimExprData::Bin(op, self.expr(to, a), self.expr(to, b)),
            PrimExprData::Not(a) => PrimExprData::Not(self.expr(to, a)),
            PrimExprData::Cast(t, a) => PrimExprData::Cast(t, self.expr(to, a)),
            PrimExprData::Select(c, t, f) => PrimExprData::Select(self.expr(to, c), self.expr(to, t), self.expr(to, f)),
            PrimExprData::Call { dtype, op, args } => {
                PrimExprData::Call { dtype, op, args: args.iter().map(|&a| self.expr(to, a)).collect() }
            }
            PrimExprData::Let { var, value, body } => {
                let value = self.expr(to, value);
                let nv = self.define(to, var);
                let body = self.expr(to, body);
                PrimExprData::Let { var: nv, value, body }
            }
            PrimExprData::Ramp { base, stride, lanes } => {
                PrimExprData::Ramp { base: self.expr(to, base), stride: self.expr(to, stride), lanes }
            }
            PrimExprData::Broadcast { value, lanes } => PrimExprData::Broadcast { value: self.expr(to, value), lanes },
        };
        let r = to.pool.raw(data);
        if !matches!(self.from.pool.prim(e), PrimExprData::Let { .. }) {
            self.memo.insert(e, r);
        }
        r
    }

    fn range(&mut self, to: &mut PrimFunc, r: Range) -> Range {
        Range { min: self.expr(to, r.min), extent: self.expr(to, r.extent) }
    }

    /// The target buffer of a buffer use (a buffer defined nowhere in the kernel's body
    /// gets a copy, as a use of a parameter would be an error).
    fn buffer_use(&mut self, to: &mut PrimFunc, b: Buffer) -> Buffer {
        match self.buffers.get(&b) {
            Some(&nb) => nb,
            None => self.buffer_def(to, b, None),
        }
    }

    /// A fresh copy of the kernel buffer `b` (a definition), named `name` or as `b`.
    pub fn buffer_def(&mut self, to: &mut PrimFunc, b: Buffer, name: Option<String>) -> Buffer {
        let d = self.from.buffers[b].clone();
        let data_var = self.from.pool.vars[d.data].clone();
        let data = to.pool.vars.push(SymVarData { name: name.clone().unwrap_or(data_var.name), ..data_var });
        let data_e = to.pool.raw(PrimExprData::Var(data));
        self.vars.insert(d.data, data_e);
        let nd = BufferData {
            name: name.unwrap_or(d.name),
            data,
            dtype: d.dtype,
            shape: d.shape.iter().map(|&x| self.expr(to, x)).collect(),
            strides: d.strides.iter().map(|&x| self.expr(to, x)).collect(),
            elem_offset: d.elem_offset.map(|x| self.expr(to, x)),
            scope: d.scope,
            align: d.align,
            offset_factor: d.offset_factor,
            buffer_type: d.buffer_type,
            axis_separators: d.axis_separators,
        };
        let nb = to.buffers.push(nd);
        self.buffers.insert(b, nb);
        nb
    }

    fn region(&mut self, to: &mut PrimFunc, r: &BufferRegion) -> BufferRegion {
        BufferRegion {
            buffer: self.buffer_use(to, r.buffer),
            region: r.region.iter().map(|&x| self.range(to, x)).collect(),
        }
    }

    /// Copies a statement.
    pub fn stmt(&mut self, to: &mut PrimFunc, s: Stmt) -> Stmt {
        let data = match self.from.stmts[s].clone() {
            StmtData::Seq(v) => StmtData::Seq(v.iter().map(|&x| self.stmt(to, x)).collect()),
            StmtData::For { var, min, extent, kind, thread, step, annotations, body } => {
                let min = self.expr(to, min);
                let extent = self.expr(to, extent);
                let step = step.map(|x| self.expr(to, x));
                let nv = self.define(to, var);
                let body = self.stmt(to, body);
                let annotations = self.annotations(to, &annotations);
                StmtData::For { var: nv, min, extent, kind, thread, step, annotations, body }
            }
            StmtData::Block(b) => StmtData::Block(Box::new(self.block(to, &b))),
            StmtData::Store { buffer, indices, value } => {
                let value = self.expr(to, value);
                StmtData::Store {
                    buffer: self.buffer_use(to, buffer),
                    indices: indices.iter().map(|&i| self.expr(to, i)).collect(),
                    value,
                }
            }
            StmtData::If { cond, then_branch, else_branch } => StmtData::If {
                cond: self.expr(to, cond),
                then_branch: self.stmt(to, then_branch),
                else_branch: else_branch.map(|e| self.stmt(to, e)),
            },
            StmtData::While { cond, body } => StmtData::While { cond: self.expr(to, cond), body: self.stmt(to, body) },
            StmtData::Let { var, value, body } => {
                let value = self.expr(to, value);
                let nv = self.define(to, var);
                StmtData::Let { var: nv, value, body: self.stmt(to, body) }
            }
            StmtData::Evaluate(e) => StmtData::Evaluate(self.expr(to, e)),
            StmtData::Assert { cond, message, body } => StmtData::Assert {
                cond: self.expr(to, cond),
                message: self.expr(to, message),
                body: self.stmt(to, body),
            },
            StmtData::Attr { node, key, value, body } => {
                let node = match node {
                    AttrNode::Buffer(b) => AttrNode::Buffer(self.buffer_use(to, b)),
                    AttrNode::Expr(e) => AttrNode::Expr(self.expr(to, e)),
                    AttrNode::Str(s) => AttrNode::Str(s),
                };
                StmtData::Attr { node, key, value: self.expr(to, value), body: self.stmt(to, body) }
            }
            StmtData::DeclBuffer { buffer, body } => {
                let nb = self.buffer_def(to, buffer, None);
                StmtData::DeclBuffer { buffer: nb, body: self.stmt(to, body) }
            }
            StmtData::Allocate { buffer, body } => {
                let nb = self.buffer_def(to, buffer, None);
                StmtData::Allocate { buffer: nb, body: self.stmt(to, body) }
            }
        };
        to.stmts.push(data)
    }

    /// Copies loop or block annotations: the buffers they name are uses.
    fn annotations(&mut self, to: &mut PrimFunc, a: &Attrs) -> Attrs {
        Attrs(a.iter().map(|(k, v)| (k.to_string(), v.map_buffers(&mut |x| self.buffer_use(to, x)))).collect())
    }

    fn block(&mut self, to: &mut PrimFunc, b: &BlockNode) -> BlockNode {
        let iter_vars: Vec<IterVar> = b
            .iter_vars
            .iter()
            .map(|iv| {
                let dom = self.range(to, iv.dom);
                let binding = self.expr(to, iv.binding);
                IterVar { var: iv.var, dom, kind: iv.kind, binding }
            })
            .collect();
        let iter_vars = iter_vars
            .into_iter()
            .map(|iv| {
                let nv = self.define(to, iv.var);
                IterVar { var: nv, ..iv }
            })
            .collect();
        let alloc_buffers = b.alloc_buffers.iter().map(|&x| self.buffer_def(to, x, None)).collect();
        let match_buffers = b
            .match_buffers
            .iter()
            .map(|mb| {
                let source = self.region(to, &mb.source);
                let buffer = self.buffer_def(to, mb.buffer, None);
                MatchBufferRegion { buffer, source }
            })
            .collect();
        let reads = union_regions(b.reads.iter().map(|r| self.region(to, r)).collect());
        let writes = union_regions(b.writes.iter().map(|r| self.region(to, r)).collect());
        // Buffers named by annotations (`layout_free_placeholders`) are uses, remapped
        // as the body's are, after the block's own buffers are defined.
        let annotations = self.annotations(to, &b.annotations);
        let predicate = b.predicate.map(|p| self.expr(to, p));
        let init = b.init.map(|i| self.stmt(to, i));
        let body = self.stmt(to, b.body);
        BlockNode {
            name: b.name.clone(),
            iter_vars,
            predicate,
            reads,
            writes,
            annotations,
            alloc_buffers,
            match_buffers,
            init,
            body,
        }
    }
}

/// `UnionAccessRegion`: one region per buffer, the first.
fn union_regions(regions: Vec<BufferRegion>) -> Vec<BufferRegion> {
    let mut out: Vec<BufferRegion> = Vec::with_capacity(regions.len());
    for r in regions {
        if !out.iter().any(|x| x.buffer == r.buffer) {
            out.push(r);
        }
    }
    out
}
