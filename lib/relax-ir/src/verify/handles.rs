//! Check 1: every handle stored in the IR is in range of the arena it indexes, interned
//! TIR expressions and types refer only to earlier entries of their pool, and the Relax
//! expression and TIR statement graphs have no cycles.
//!
//! Later checks index arenas directly, so they only run on functions this check accepts.

use relax_entity::EntityRef;

use crate::entities::{Buffer, Expr, Global, PrimExpr, Seq, Stmt, SymVar, Ty, Var};
use crate::module::{ExternFunc, Module};
use crate::op::{OPS, OpRef};
use crate::pool::Pool;
use crate::prim::PrimExprData;
use crate::relax::{BindingKind, ExprData, ExprList, FunctionNode, RelaxFunction};
use crate::tir::{AttrNode, BufferRegion, PrimFunc, StmtData};
use crate::ty::{TensorShape, TyData};

use super::error::{Entity, VerifyError};

const FOREIGN: &str =
    "handles index the arenas of their own function; a handle taken from another function means nothing here";

/// Collects handle errors of one function.
struct Cx<'a> {
    g: Global,
    fname: &'a str,
    out: &'a mut Vec<VerifyError>,
    ok: bool,
}

impl Cx<'_> {
    fn err(&mut self, entity: Entity, message: String) {
        self.ok = false;
        self.out.push(VerifyError::new(Some(self.g), entity, message).with_note(FOREIGN));
    }

    /// Checks that an operand list lies within the function's list pool.
    fn list(&mut self, at: Entity, owner: &str, f: &RelaxFunction, l: ExprList) -> Vec<Expr> {
        match f.lists.get(l) {
            Some(items) => items.to_vec(),
            None => {
                let (fname, n) = (self.fname, f.lists.capacity_used());
                self.err(
                    at,
                    format!("{owner} refers to operand list `{l:?}`, which is out of range (function `{fname}` has {n} list slots)"),
                );
                Vec::new()
            }
        }
    }

    fn range<K: EntityRef + std::fmt::Debug>(&mut self, at: Entity, owner: &str, k: K, len: usize, what: &str) {
        if k.index() >= len {
            let fname = self.fname;
            let things = if len == 1 { what.to_string() } else { format!("{what}s") };
            self.err(
                at,
                format!(
                    "{owner} refers to {what} `{k:?}`, which is out of range (function `{fname}` has {len} {things})"
                ),
            );
        }
    }
}

/// Checks the handles of a Relax function; true when all are valid and there is no cycle.
pub(super) fn check_relax(m: &Module, g: Global, fname: &str, f: &RelaxFunction, out: &mut Vec<VerifyError>) -> bool {
    let mut cx = Cx { g, fname, out, ok: true };
    check_pool(&mut cx, &f.pool, Some(f.vars.len()), None);
    let (nv, ne, nb, nt) = (f.vars.len(), f.exprs.len(), f.blocks.len(), f.pool.tys.len());
    let ns = f.seqs.len();
    for (s, d) in f.seqs.iter() {
        let owner = format!("sequence `{s:?}`");
        for &b in &d.blocks {
            cx.range(Entity::Function, &owner, b, nb, "block");
        }
        cx.range(Entity::Function, &owner, d.body, ne, "expression");
    }
    for (v, d) in f.vars.iter() {
        cx.range(Entity::Var(v), &format!("the type of variable `{v:?}`"), d.ty, nt, "type");
    }
    for (e, d) in f.exprs.iter() {
        let at = Entity::Expr(e);
        let owner = format!("expression `{e:?}`");
        let mut exprs: Vec<Expr> = Vec::new();
        match d {
            ExprData::Var(v) => cx.range(at, &owner, *v, nv, "variable"),
            ExprData::Global(gl) => {
                let n = m.globals.len();
                cx.range(at, &owner, *gl, n, "global")
            }
            ExprData::Op(OpRef::Known(id)) if usize::from(id.0) >= OPS.len() => {
                cx.err(at, format!("{owner} refers to operator {}, which is out of range of the op table", id.0))
            }
            ExprData::Op(_) | ExprData::ExternFunc(_) | ExprData::Str(_) | ExprData::DType(_) => {}
            ExprData::Call(c) => {
                exprs.push(c.callee);
                exprs.extend(cx.list(at, &owner, f, c.args));
                for &t in &c.sinfo_args {
                    cx.range(at, &owner, t, nt, "type");
                }
            }
            ExprData::Tuple(fields) => exprs.extend(cx.list(at, &owner, f, *fields)),
            ExprData::GetItem { tuple, .. } => exprs.push(*tuple),
            ExprData::Shape(dims) => {
                for &p in dims {
                    cx.range(at, &owner, p, f.pool.prims.len(), "tir expression");
                }
            }
            ExprData::Prim(p) => cx.range(at, &owner, *p, f.pool.prims.len(), "tir expression"),
            ExprData::Const(c) => {
                let n = m.constants.len();
                cx.range(at, &owner, *c, n, "constant")
            }
            ExprData::If { cond, then_branch, else_branch } => {
                exprs.push(*cond);
                cx.range(at, &owner, *then_branch, ns, "sequence");
                cx.range(at, &owner, *else_branch, ns, "sequence");
            }
            ExprData::Function(node) => fn_handles(&mut cx, at, &owner, node, nv, ns, nt),
        }
        for x in exprs {
            cx.range(at, &owner, x, ne, "expression");
        }
    }
    for e in f.exprs.keys() {
        if let Some(t) = *f.expr_ty.get(e) {
            cx.range(Entity::Expr(e), &format!("the type of expression `{e:?}`"), t, nt, "type");
        }
    }
    for (b, d) in f.blocks.iter() {
        let at = Entity::Block(b);
        let owner = format!("a binding of block `{b:?}`");
        for bd in &d.bindings {
            cx.range(at, &owner, bd.var, nv, "variable");
            cx.range(at, &owner, bd.value, ne, "expression");
            if let BindingKind::MatchCast(t) = bd.kind {
                cx.range(at, &owner, t, nt, "type");
            }
        }
    }
    fn_handles(&mut cx, Entity::Function, &format!("function `{fname}`"), &f.func, nv, ns, nt);
    if cx.ok {
        relax_cycles(&mut cx, f);
    }
    cx.ok
}

fn fn_handles(cx: &mut Cx<'_>, at: Entity, owner: &str, node: &FunctionNode, nv: usize, ns: usize, nt: usize) {
    for &p in &node.params {
        cx.range(at, owner, p, nv, "variable");
    }
    cx.range(at, owner, node.ret, nt, "type");
    cx.range(at, owner, node.body, ns, "sequence");
}

/// The sub-expressions of `e` (for a cycle search): operands, and the binding values and
/// results of nested sequences.
pub(super) fn expr_children(f: &RelaxFunction, e: Expr, out: &mut Vec<Expr>) {
    let d = &f.exprs[e];
    d.for_each_operand(&f.lists, |x| out.push(x));
    for s in d.nested_seqs() {
        seq_children(f, s, out);
    }
}

/// The binding values and the result of a sequence.
pub(super) fn seq_children(f: &RelaxFunction, seq: Seq, out: &mut Vec<Expr>) {
    let seq = &f.seqs[seq];
    for &b in &seq.blocks {
        out.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
    }
    out.push(seq.body);
}

fn relax_cycles(cx: &mut Cx<'_>, f: &RelaxFunction) {
    let mut roots = Vec::new();
    seq_children(f, f.func.body, &mut roots);
    let found = find_cycle(f.exprs.len(), &roots, |e: Expr, out| expr_children(f, e, out));
    if let Some(e) = found {
        cx.err(Entity::Expr(e), format!("expression `{e:?}` contains itself"));
    }
}

/// Depth-first search for a cycle among nodes reachable from `roots`; returns a node on it.
fn find_cycle<K: EntityRef>(n: usize, roots: &[K], mut children: impl FnMut(K, &mut Vec<K>)) -> Option<K> {
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut color = vec![0u8; n];
    let mut kids: Vec<K> = Vec::new();
    // (node, first child in `kids`, next child to visit)
    let mut stack: Vec<(K, usize, usize)> = Vec::new();
    for &r in roots {
        if color[r.index()] != 0 {
            continue;
        }
        color[r.index()] = 1;
        let start = kids.len();
        children(r, &mut kids);
        stack.push((r, start, start));
        while let Some(&(node, start, next)) = stack.last() {
            if next < kids.len() {
                let c = kids[next];
                if let Some(top) = stack.last_mut() {
                    top.2 += 1;
                }
                match color[c.index()] {
                    0 => {
                        color[c.index()] = 1;
                        let s = kids.len();
                        children(c, &mut kids);
                        stack.push((c, s, s));
                    }
                    1 => return Some(c),
                    _ => {}
                }
            } else {
                color[node.index()] = 2;
                kids.truncate(start);
                stack.pop();
            }
        }
    }
    None
}

/// Checks the handles of a PrimFunc; true when all are valid and there is no cycle.
pub(super) fn check_prim(g: Global, fname: &str, f: &PrimFunc, out: &mut Vec<VerifyError>) -> bool {
    let mut cx = Cx { g, fname, out, ok: true };
    check_pool(&mut cx, &f.pool, None, Some(f.buffers.len()));
    let (nsv, np, ns, nbuf) = (f.pool.vars.len(), f.pool.prims.len(), f.stmts.len(), f.buffers.len());
    for (b, d) in f.buffers.iter() {
        let at = Entity::Buffer(b);
        let owner = format!("buffer `{b:?}`");
        cx.range(at, &owner, d.data, nsv, "variable");
        for &p in d.shape.iter().chain(d.strides.iter()).chain(d.elem_offset.iter()) {
            cx.range(at, &owner, p, np, "tir expression");
        }
    }
    for (s, d) in f.stmts.iter() {
        let at = Entity::Stmt(s);
        let owner = format!("statement `{s:?}`");
        let mut prims: Vec<PrimExpr> = Vec::new();
        let mut syms: Vec<SymVar> = Vec::new();
        let mut stmts: Vec<Stmt> = Vec::new();
        let mut bufs: Vec<Buffer> = Vec::new();
        let region = |r: &BufferRegion, prims: &mut Vec<PrimExpr>, bufs: &mut Vec<Buffer>| {
            bufs.push(r.buffer);
            for rg in &r.region {
                prims.extend([rg.min, rg.extent]);
            }
        };
        match d {
            StmtData::Seq(v) => stmts.extend(v.iter().copied()),
            StmtData::For { var, min, extent, step, body, .. } => {
                syms.push(*var);
                prims.extend([*min, *extent]);
                prims.extend(*step);
                stmts.push(*body);
            }
            StmtData::Block(b) => {
                for iv in &b.iter_vars {
                    syms.push(iv.var);
                    prims.extend([iv.dom.min, iv.dom.extent, iv.binding]);
                }
                prims.extend(b.predicate);
                for r in b.reads.iter().chain(b.writes.iter()) {
                    region(r, &mut prims, &mut bufs);
                }
                bufs.extend(b.alloc_buffers.iter().copied());
                for (_, v) in b.annotations.iter() {
                    v.for_each_buffer(&mut |x| bufs.push(x));
                }
                for mb in &b.match_buffers {
                    bufs.push(mb.buffer);
                    region(&mb.source, &mut prims, &mut bufs);
                }
                stmts.extend(b.init);
                stmts.push(b.body);
            }
            StmtData::Store { buffer, indices, value } => {
                bufs.push(*buffer);
                prims.extend(indices.iter().copied());
                prims.push(*value);
            }
            StmtData::If { cond, then_branch, else_branch } => {
                prims.push(*cond);
                stmts.push(*then_branch);
                stmts.extend(*else_branch);
            }
            StmtData::While { cond, body } => {
                prims.push(*cond);
                stmts.push(*body);
            }
            StmtData::Let { var, value, body } => {
                syms.push(*var);
                prims.push(*value);
                stmts.push(*body);
            }
            StmtData::Evaluate(e) => prims.push(*e),
            StmtData::Assert { cond, message, body } => {
                prims.extend([*cond, *message]);
                stmts.push(*body);
            }
            StmtData::Attr { node, value, body, .. } => {
                match node {
                    AttrNode::Buffer(b) => bufs.push(*b),
                    AttrNode::Expr(e) => prims.push(*e),
                    AttrNode::Str(_) => {}
                }
                prims.push(*value);
                stmts.push(*body);
            }
            StmtData::DeclBuffer { buffer, body } | StmtData::Allocate { buffer, body } => {
                bufs.push(*buffer);
                stmts.push(*body);
            }
        }
        for p in prims {
            cx.range(at, &owner, p, np, "tir expression");
        }
        for v in syms {
            cx.range(at, &owner, v, nsv, "variable");
        }
        for x in stmts {
            cx.range(at, &owner, x, ns, "statement");
        }
        for b in bufs {
            cx.range(at, &owner, b, nbuf, "buffer");
        }
    }
    let owner = format!("function `{fname}`");
    for &p in &f.params {
        cx.range(Entity::Function, &owner, p, nsv, "variable");
    }
    for &(p, b) in &f.buffer_map {
        cx.range(Entity::Function, &owner, p, nsv, "variable");
        cx.range(Entity::Function, &owner, b, nbuf, "buffer");
    }
    cx.range(Entity::Function, &owner, f.body, ns, "statement");
    if cx.ok {
        let found = find_cycle(ns, &[f.body], |s: Stmt, out| stmt_children(f, s, out));
        if let Some(s) = found {
            cx.err(Entity::Stmt(s), format!("statement `{s:?}` contains itself"));
        }
    }
    cx.ok
}

/// The direct sub-statements of `s`, in execution order.
pub(super) fn stmt_children(f: &PrimFunc, s: Stmt, out: &mut Vec<Stmt>) {
    f.stmts[s].for_each_child(|c| out.push(c));
}

/// Checks the handles of an extern function's type.
pub(super) fn check_extern(g: Global, fname: &str, e: &ExternFunc, out: &mut Vec<VerifyError>) -> bool {
    let mut cx = Cx { g, fname, out, ok: true };
    check_pool(&mut cx, &e.pool, None, None);
    if let Some(t) = e.ty {
        let n = e.pool.tys.len();
        cx.range(Entity::Function, &format!("extern function `{fname}`"), t, n, "type");
    }
    cx.ok
}

/// Checks a pool: variables of expressions, operands earlier than their users, buffers of
/// loads (`n_buffers`, `None` when the owner has none), Relax variables of tensor shapes
/// (`n_vars`, `None` when the owner has none).
fn check_pool(cx: &mut Cx<'_>, pool: &Pool, n_vars: Option<usize>, n_buffers: Option<usize>) {
    let nsv = pool.vars.len();
    let np = pool.prims.len();
    for (e, d) in pool.prims.iter() {
        let at = Entity::Function;
        let owner = format!("tir expression `{e:?}`");
        match d {
            PrimExprData::Var(v) => cx.range(at, &owner, *v, nsv, "variable"),
            PrimExprData::Let { var, .. } => cx.range(at, &owner, *var, nsv, "variable"),
            PrimExprData::Load { buffer, .. } => match n_buffers {
                Some(n) => cx.range(at, &owner, *buffer, n, "buffer"),
                None => cx.err(at, format!("{owner} loads from buffer `{buffer:?}`, but this function has no buffers")),
            },
            _ => {}
        }
        let mut ops = Vec::new();
        pool.for_each_operand(e, |o| ops.push(o));
        for o in ops {
            earlier(cx, &owner, o, e, np, "tir expression");
        }
    }
    let nt = pool.tys.len();
    for (t, d) in pool.tys.iter() {
        let at = Entity::Function;
        let owner = format!("type `{t:?}`");
        let mut prims: Vec<PrimExpr> = Vec::new();
        let mut tys: Vec<Ty> = Vec::new();
        match d {
            TyData::Object => {}
            TyData::Prim { value, .. } => prims.extend(*value),
            TyData::Shape { values, .. } => prims.extend(values.iter().flatten().copied()),
            TyData::Tensor { shape, .. } => match shape {
                TensorShape::Dims(ds) => prims.extend(ds.iter().copied()),
                TensorShape::Var(v) => var_in_type(cx, &owner, *v, n_vars),
                TensorShape::Unknown => {}
            },
            TyData::Tuple(fields) => tys.extend(fields.iter().copied()),
            TyData::Callable { params, ret, .. } => {
                tys.extend(params.iter().flatten().copied());
                tys.push(*ret);
            }
        }
        for p in prims {
            cx.range(at, &owner, p, np, "tir expression");
        }
        for x in tys {
            earlier(cx, &owner, x, t, nt, "type");
        }
    }
}

fn var_in_type(cx: &mut Cx<'_>, owner: &str, v: Var, n_vars: Option<usize>) {
    match n_vars {
        Some(n) => cx.range(Entity::Function, owner, v, n, "variable"),
        None => {
            cx.err(Entity::Function, format!("{owner} refers to Relax variable `{v:?}`, but this function has none"))
        }
    }
}

/// An interned entry may only refer to entries interned before it.
fn earlier<K: EntityRef + std::fmt::Debug>(cx: &mut Cx<'_>, owner: &str, k: K, user: K, len: usize, what: &str) {
    if k.index() >= len {
        cx.range(Entity::Function, owner, k, len, what);
    } else if k.index() >= user.index() {
        cx.err(
            Entity::Function,
            format!("{owner} refers to the later {what} `{k:?}`; interned entries may only refer to earlier ones"),
        );
    }
}
