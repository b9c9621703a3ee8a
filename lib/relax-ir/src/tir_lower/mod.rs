//! Lowered TIR: PrimFuncs without blocks, the only form the TIR interpreter and the code
//! generators run (`docs/design.md`, "Lowered TIR"). The `lower-tir` pass wraps
//! [`lower_prim_func`]; the tools, `fold-constant`'s evaluator and the interpreter's
//! legalization fallback call it ([`lower_module`]) directly, which is why it lives in
//! the IR crate, below both the passes and the TIR evaluator.
//!
//! Each block statement is replaced in place (it keeps its handle and source span, and
//! every statement made for it gets the block's span, so run-time errors are reported
//! at the lines they were reported at before):
//!
//! ```text
//! with T.sblock("sum"):                     vi: T.let[T.int64] = i
//!     vi, vk = T.axis.remap("SR", [i, k])   vk: T.let[T.int64] = k
//!     with T.init():                    =>  if vk == T.int64(0):
//!         out[vi] = T.float32(0.0)              out[vi] = T.float32(0.0)
//!     out[vi] = out[vi] + x[vi, vk]         out[vi] = out[vi] + x[vi, vk]
//! ```
//!
//! * iteration variables are bound by `let` to their bindings, outermost first (each
//!   binding evaluated once, cast to the variable's type, as blocks did);
//! * `T.where(p)` becomes `if p:` around the rest, so nothing else runs when it is false;
//! * the block's buffers become `T.alloc_buffer` statements (`Allocate`), which every
//!   consumer fills with zeros, as block allocations always were;
//! * `T.match_buffer` regions become `T.decl_buffer` views of the source ([`match_buffer`]);
//! * `T.init()` runs under `if` when every reduction iteration variable equals the start
//!   of its domain (TVM's semantics); without reduction variables it runs every time;
//! * the root block (no iteration variables) keeps only its allocations.
//!
//! Block names, `T.reads`/`T.writes` and block annotations are dropped. Buffers are not
//! flattened: the interpreter checks every index against its dimension and the code
//! generators compute addresses from per-dimension indices and strides themselves
//! (`docs/design.md` says why). The result verifies, prints and parses back.

mod match_buffer;

use crate::DataType;
use crate::diag::Diagnostic;
use crate::entities::{Buffer, PrimExpr, Stmt, SymVar};
use crate::module::{Func, Module};
use crate::prim::{BinOp, PrimExprData};
use crate::tir::{AttrNode, BlockNode, IterKind, IterVar, PrimFunc, StmtData};

/// True when `f` has a block statement (it is not lowered TIR yet).
pub fn has_blocks(f: &PrimFunc) -> bool {
    first_block(f).is_some()
}

/// The first block statement of `f`, if any.
pub fn first_block(f: &PrimFunc) -> Option<Stmt> {
    let mut found = None;
    f.walk(f.body, |s, d| {
        if found.is_none() && matches!(d, StmtData::Block(_)) {
            found = Some(s);
        }
    });
    found
}

/// Lowers every live PrimFunc of `m` that has blocks; returns whether anything changed.
/// A function that cannot be lowered is left as it is and reported.
pub fn lower_module(m: &mut Module) -> Result<bool, Vec<Diagnostic>> {
    let mut changed = false;
    let mut errors = Vec::new();
    let globals: Vec<_> = m.live().map(|(g, _)| g).collect();
    for g in globals {
        let name = m.globals[g].name.clone();
        if let Func::Prim(f) = &mut m.globals[g].func {
            match lower_prim_func(&name, f) {
                Ok(c) => changed |= c,
                Err(d) => errors.push(d),
            }
        }
    }
    if errors.is_empty() { Ok(changed) } else { Err(errors) }
}

/// Lowers the blocks of the PrimFunc `f` (named `name` in messages); returns whether it
/// had any. On error `f` is unchanged.
pub fn lower_prim_func(name: &str, f: &mut PrimFunc) -> Result<bool, Diagnostic> {
    let mut blocks = Vec::new();
    f.walk(f.body, |s, d| {
        if matches!(d, StmtData::Block(_)) {
            blocks.push(s);
        }
    });
    if blocks.is_empty() {
        return Ok(false);
    }
    let mut out = f.clone();
    let mut defined = defined_vars(f);
    for s in blocks {
        lower_block(name, &mut out, s, &mut defined)?;
    }
    *f = out;
    Ok(true)
}

/// A statement that scopes the rest of a lowered block.
enum Wrap {
    Let(SymVar, PrimExpr),
    If(PrimExpr),
    Assert(PrimExpr, String),
    Allocate(Buffer),
    Decl(Buffer),
}

impl Wrap {
    fn around(self, f: &mut PrimFunc, body: Stmt) -> StmtData {
        match self {
            Wrap::Let(var, value) => StmtData::Let { var, value, body },
            Wrap::If(cond) => StmtData::If { cond, then_branch: body, else_branch: None },
            Wrap::Assert(cond, msg) => {
                let message = f.pool.raw(PrimExprData::Str(msg));
                StmtData::Assert { cond, message, body }
            }
            Wrap::Allocate(buffer) => StmtData::Allocate { buffer, body },
            Wrap::Decl(buffer) => StmtData::DeclBuffer { buffer, body },
        }
    }
}

/// Replaces the block at `s` by its lowered form.
fn lower_block(name: &str, f: &mut PrimFunc, s: Stmt, defined: &mut [bool]) -> Result<(), Diagnostic> {
    let StmtData::Block(b) = f.stmts[s].clone() else { return Ok(()) };
    let BlockNode { iter_vars, predicate, alloc_buffers, match_buffers, init, body, .. } = *b;
    let span = *f.spans.stmts.get(s);
    let mut wraps: Vec<Wrap> = Vec::new();
    for iv in &iter_vars {
        let dt = f.pool.vars[iv.var].dtype;
        wraps.push(Wrap::Let(iv.var, f.pool.cast(dt, iv.binding)));
    }
    wraps.extend(predicate.map(Wrap::If));
    wraps.extend(alloc_buffers.iter().map(|&a| Wrap::Allocate(a)));
    for mb in &match_buffers {
        let lowered = match_buffer::lower(f, mb, defined)
            .map_err(|msg| Diagnostic::error(span, format!("PrimFunc `{name}`: {msg}")))?;
        wraps.extend(lowered);
    }
    let mut inner = match init {
        Some(init) => {
            let guard = match init_condition(f, &iter_vars) {
                Some(cond) => add(f, StmtData::If { cond, then_branch: init, else_branch: None }, s),
                None => init,
            };
            Some(StmtData::Seq(vec![guard, body]))
        }
        None => None,
    };
    for w in wraps.into_iter().rev() {
        let h = match inner.take() {
            Some(d) => add(f, d, s),
            None => body,
        };
        inner = Some(w.around(f, h));
    }
    f.stmts[s] = inner.unwrap_or_else(|| StmtData::Seq(vec![body]));
    Ok(())
}

/// Adds a statement with the span of `like`.
fn add(f: &mut PrimFunc, d: StmtData, like: Stmt) -> Stmt {
    let span = *f.spans.stmts.get(like);
    let h = f.stmts.push(d);
    f.spans.stmts.set(h, span);
    h
}

/// `v0 == min0 and v1 == min1 ...` over the reduction iteration variables; `None` when
/// there are none (the init always runs).
fn init_condition(f: &mut PrimFunc, iter_vars: &[IterVar]) -> Option<PrimExpr> {
    let mut cond = None;
    for iv in iter_vars.iter().filter(|iv| iv.kind == IterKind::Reduce) {
        let v = f.pool.var_ref(iv.var);
        let eq = compare(f, BinOp::Eq, v, iv.dom.min);
        cond = Some(match cond {
            None => eq,
            Some(c) => {
                f.pool.binary(BinOp::And, c, eq).unwrap_or_else(|_| f.pool.raw(PrimExprData::Bin(BinOp::And, c, eq)))
            }
        });
    }
    cond
}

/// `a op b` with TVM's type matching, comparing as `int64` when the types do not match.
pub(crate) fn compare(f: &mut PrimFunc, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    match f.pool.binary(op, a, b) {
        Ok(e) => e,
        Err(_) => {
            let (a, b) = (f.pool.cast(DataType::INT64, a), f.pool.cast(DataType::INT64, b));
            f.pool.raw(PrimExprData::Bin(op, a, b))
        }
    }
}

/// Variables with a definition of their own (parameters, buffer-map fields, loop,
/// iteration, `let` and thread variables, buffer data pointers), by index: a variable of
/// a matched buffer that is none of these is bound by the match.
fn defined_vars(f: &PrimFunc) -> Vec<bool> {
    let mut d = vec![false; f.pool.vars.len()];
    let mark = |d: &mut Vec<bool>, v: SymVar| {
        if let Some(x) = d.get_mut(relax_entity::EntityRef::index(v)) {
            *x = true;
        }
    };
    for &p in &f.params {
        mark(&mut d, p);
    }
    for &(_, b) in &f.buffer_map {
        let bd = &f.buffers[b];
        mark(&mut d, bd.data);
        for &e in bd.shape.iter().chain(&bd.strides).chain(bd.elem_offset.iter()) {
            if let Some(v) = f.pool.as_var(e) {
                mark(&mut d, v);
            }
        }
    }
    f.walk(f.body, |_, s| match s {
        StmtData::For { var, .. } | StmtData::Let { var, .. } => mark(&mut d, *var),
        StmtData::Block(b) => {
            for iv in &b.iter_vars {
                mark(&mut d, iv.var);
            }
            for &a in &b.alloc_buffers {
                mark(&mut d, f.buffers[a].data);
            }
        }
        StmtData::Attr { node: AttrNode::Expr(e), .. } => {
            if let Some(v) = f.pool.as_var(*e) {
                mark(&mut d, v);
            }
        }
        StmtData::DeclBuffer { buffer, .. } | StmtData::Allocate { buffer, .. } => {
            mark(&mut d, f.buffers[*buffer].data)
        }
        _ => {}
    });
    d
}
