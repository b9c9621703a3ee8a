//! Check 4, PrimFuncs: parameters and the buffer map, scoping of variables and buffers,
//! blocks (root block, unique names, iteration variables and their bindings), and index
//! counts of stores, loads and regions.
//!
//! The statement tree is walked with an explicit work stack (lowered TIR nests thousands of
//! `let`/`assert` statements), keeping a visible state per variable and per buffer and a
//! trail of definitions to close when their scope ends.

use std::collections::HashMap;

use relax_entity::EntityRef;

use crate::entities::{Buffer, Global, PrimExpr, Stmt, SymVar};
use crate::prim::PrimExprData;
use crate::tir::{AttrNode, BlockNode, BufferRegion, PrimFunc, StmtData};

use super::error::{Entity, VerifyError};
use super::facts::PrimScan;
use super::handles::stmt_children;
use super::names;

/// How a TIR variable was (last) defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Not defined.
    None,
    /// A function parameter.
    Param,
    /// The first bare occurrence of a dim in a matched buffer's shape.
    BufferDim,
    /// A loop variable.
    Loop,
    /// An iteration variable of the block.
    Iter(Stmt),
    /// A `let` variable.
    Let,
    /// A buffer's data pointer.
    Data,
    /// A thread variable of a `thread_extent` attribute.
    Thread,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Undefined,
    Visible,
    Closed,
}

/// Where a use happens, for messages.
#[derive(Clone, Copy, Debug)]
enum Ctx {
    Plain,
    /// The binding of iteration variable `iter` of block `block`.
    Binding {
        block: Stmt,
        iter: SymVar,
    },
}

enum Work {
    Stmt(Stmt),
    Close { syms: usize, bufs: usize },
    ExitBlock,
}

struct TirChecker<'a> {
    g: Global,
    f: &'a PrimFunc,
    fname: &'a str,
    out: &'a mut Vec<VerifyError>,
    scan: PrimScan,
    sstate: Vec<St>,
    kind: Vec<Kind>,
    ever: Vec<bool>,
    anywhere: Vec<bool>,
    loop_depth: Vec<u32>,
    sym_trail: Vec<SymVar>,
    bstate: Vec<St>,
    buf_trail: Vec<Buffer>,
    buf_anywhere: Vec<bool>,
    load_checked: Vec<bool>,
    block_depth: u32,
    block_stack: Vec<Stmt>,
    block_names: HashMap<&'a str, Stmt>,
    seen: Vec<bool>,
    n_blocks: usize,
}

/// Runs the PrimFunc rules on a function whose handles are valid.
pub(super) fn check_prim_function(g: Global, fname: &str, f: &PrimFunc, out: &mut Vec<VerifyError>) {
    let nsv = f.pool.vars.len();
    let mut cx = TirChecker {
        g,
        f,
        fname,
        out,
        scan: PrimScan::new(&f.pool),
        sstate: vec![St::Undefined; nsv],
        kind: vec![Kind::None; nsv],
        ever: vec![false; nsv],
        anywhere: vec![false; nsv],
        loop_depth: vec![u32::MAX; nsv],
        sym_trail: Vec::new(),
        bstate: vec![St::Undefined; f.buffers.len()],
        buf_trail: Vec::new(),
        buf_anywhere: vec![false; f.buffers.len()],
        load_checked: vec![false; f.pool.prims.len()],
        block_depth: 0,
        block_stack: Vec::new(),
        block_names: HashMap::new(),
        seen: vec![false; f.stmts.len()],
        n_blocks: 0,
    };
    cx.find_definitions();
    cx.signature();
    cx.walk();
    if f.s_tir && cx.n_blocks > 0 && f.root_block().is_none() {
        cx.err(Entity::Function, format!("PrimFunc `{fname}` has blocks outside a root block")).notes.push(
            "schedulable TIR (`s_tir=True`) wraps the whole body in the root block `T.sblock(\"root\")`".to_string(),
        );
    }
}

fn block_of(f: &PrimFunc, s: Stmt) -> Option<&BlockNode> {
    match &f.stmts[s] {
        StmtData::Block(b) => Some(b),
        _ => None,
    }
}

impl<'a> TirChecker<'a> {
    fn err(&mut self, entity: Entity, message: String) -> &mut VerifyError {
        self.out.push(VerifyError::new(Some(self.g), entity, message));
        let n = self.out.len();
        &mut self.out[n - 1]
    }

    fn sym(&self, v: SymVar) -> String {
        names::sym(&self.f.pool, v)
    }

    fn block_name(&self, s: Stmt) -> String {
        block_of(self.f, s).map_or_else(|| format!("{s:?}"), |b| b.name.clone())
    }

    fn bare(&self, e: PrimExpr) -> Option<SymVar> {
        self.f.pool.as_var(e)
    }

    /// Marks what some statement or the signature defines, so that messages can tell
    /// "defined later" from "never defined".
    fn find_definitions(&mut self) {
        let f = self.f;
        for &p in &f.params {
            self.anywhere[p.index()] = true;
        }
        for &(_, b) in &f.buffer_map {
            self.mark_buffer(b, true);
        }
        let mut seen = vec![false; f.stmts.len()];
        let mut stack = vec![f.body];
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut seen[s.index()], true) {
                continue;
            }
            match &f.stmts[s] {
                StmtData::For { var, .. } | StmtData::Let { var, .. } => self.anywhere[var.index()] = true,
                StmtData::Block(b) => {
                    for iv in &b.iter_vars {
                        self.anywhere[iv.var.index()] = true;
                    }
                    for &ab in &b.alloc_buffers {
                        self.mark_buffer(ab, false);
                    }
                    for mb in &b.match_buffers {
                        self.mark_buffer(mb.buffer, true);
                    }
                }
                StmtData::Attr { node: AttrNode::Expr(e), key, .. } if is_thread_attr(key) => {
                    if let Some(v) = self.bare(*e) {
                        self.anywhere[v.index()] = true;
                    }
                }
                StmtData::DeclBuffer { buffer, .. } | StmtData::Allocate { buffer, .. } => {
                    self.mark_buffer(*buffer, false)
                }
                _ => {}
            }
            stmt_children(f, s, &mut stack);
        }
    }

    fn mark_buffer(&mut self, b: Buffer, matched: bool) {
        let d = &self.f.buffers[b];
        self.buf_anywhere[b.index()] = true;
        self.anywhere[d.data.index()] = true;
        if matched {
            for &e in d.shape.iter().chain(d.strides.iter()).chain(d.elem_offset.iter()) {
                if let Some(v) = self.bare(e) {
                    self.anywhere[v.index()] = true;
                }
            }
        }
    }

    /// Parameters and the buffer map.
    fn signature(&mut self) {
        let f = self.f;
        let fname = self.fname;
        for &p in &f.params {
            if self.sstate[p.index()] == St::Visible {
                let pn = self.sym(p);
                self.err(Entity::SymVar(p), format!("parameter `{pn}` is listed more than once"));
                continue;
            }
            self.define(p, Kind::Param, Entity::SymVar(p));
        }
        let mut is_param = vec![false; f.pool.vars.len()];
        for &p in &f.params {
            is_param[p.index()] = true;
        }
        let mut param_bound = vec![false; f.pool.vars.len()];
        let mut buf_bound = vec![false; f.buffers.len()];
        for &(p, b) in &f.buffer_map {
            let (pn, bn) = (self.sym(p), names::buffer(f, b));
            if !is_param[p.index()] {
                self.err(
                    Entity::Buffer(b),
                    format!("buffer `{bn}` is bound to `{pn}`, which is not a parameter of `{fname}`"),
                );
            } else if !f.pool.vars[p].dtype.is_handle() {
                let dt = f.pool.vars[p].dtype;
                self.err(
                    Entity::Buffer(b),
                    format!("expected a `handle` parameter for buffer `{bn}`, found `{pn}` of type `{dt}`"),
                );
            }
            if std::mem::replace(&mut param_bound[p.index()], true) {
                self.err(Entity::Buffer(b), format!("parameter `{pn}` is bound to more than one buffer"));
            }
            if std::mem::replace(&mut buf_bound[b.index()], true) {
                self.err(Entity::Buffer(b), format!("buffer `{bn}` is bound to more than one parameter"));
            }
        }
        // A buffer of the map defines its data pointer and, at the first bare occurrence,
        // the variables of its shape, strides and offset; only then are the others used.
        for &(_, b) in &f.buffer_map {
            self.define_lenient(f.buffers[b].data, Kind::Data);
            self.define_bare_dims(b);
        }
        for &(_, b) in &f.buffer_map {
            if self.bstate[b.index()] == St::Visible {
                continue;
            }
            self.use_buffer_exprs(b, Entity::Buffer(b));
            self.bstate[b.index()] = St::Visible;
            self.buf_trail.push(b);
        }
    }

    fn define_bare_dims(&mut self, b: Buffer) {
        let d = &self.f.buffers[b];
        for &e in d.shape.iter().chain(d.strides.iter()).chain(d.elem_offset.iter()) {
            if let Some(v) = self.bare(e) {
                self.define_lenient(v, Kind::BufferDim);
            }
        }
    }

    fn use_buffer_exprs(&mut self, b: Buffer, at: Entity) {
        let d = &self.f.buffers[b];
        for &e in d.shape.iter().chain(d.strides.iter()).chain(d.elem_offset.iter()) {
            self.use_prim(e, at, Ctx::Plain);
        }
    }

    /// Defines `v`; a second definition (nested or not) is an error.
    fn define(&mut self, v: SymVar, kind: Kind, at: Entity) {
        let i = v.index();
        if self.sstate[i] == St::Visible || self.ever[i] {
            let vn = self.sym(v);
            self.err(at, format!("variable `{vn}` is defined more than once"))
                .notes
                .push("every loop, block iteration and `let` defines a fresh variable".to_string());
            if self.sstate[i] == St::Visible {
                return;
            }
        }
        self.set_defined(v, kind);
    }

    /// Defines `v` unless it is visible (implicit definitions: buffer dims and data
    /// pointers, thread variables).
    fn define_lenient(&mut self, v: SymVar, kind: Kind) {
        if self.sstate[v.index()] != St::Visible {
            self.set_defined(v, kind);
        }
    }

    fn set_defined(&mut self, v: SymVar, kind: Kind) {
        let i = v.index();
        self.sstate[i] = St::Visible;
        self.ever[i] = true;
        self.kind[i] = kind;
        self.loop_depth[i] = if kind == Kind::Loop { self.block_depth } else { u32::MAX };
        self.sym_trail.push(v);
    }

    fn declare_buffer(&mut self, b: Buffer, at: Entity) {
        if self.bstate[b.index()] == St::Visible {
            let bn = names::buffer(self.f, b);
            self.err(at, format!("buffer `{bn}` is declared more than once"));
            return;
        }
        self.bstate[b.index()] = St::Visible;
        self.buf_trail.push(b);
    }

    fn marks(&self) -> Work {
        Work::Close { syms: self.sym_trail.len(), bufs: self.buf_trail.len() }
    }

    fn close(&mut self, syms: usize, bufs: usize) {
        while self.sym_trail.len() > syms {
            if let Some(v) = self.sym_trail.pop() {
                self.sstate[v.index()] = St::Closed;
            }
        }
        while self.buf_trail.len() > bufs {
            if let Some(b) = self.buf_trail.pop() {
                self.bstate[b.index()] = St::Closed;
            }
        }
    }

    /// Checks every variable and buffer `e` uses.
    fn use_prim(&mut self, e: PrimExpr, at: Entity, ctx: Ctx) {
        let facts = self.scan.facts(&self.f.pool, e);
        for &v in &facts.vars {
            self.use_sym(v, at, ctx);
        }
        for &ld in &facts.loads {
            if let PrimExprData::Load { buffer, indices, .. } = self.f.pool.prim(ld) {
                self.use_buffer(*buffer, at);
                if !std::mem::replace(&mut self.load_checked[ld.index()], true) {
                    self.check_rank(*buffer, indices.len(), at);
                }
            }
        }
    }

    fn check_rank(&mut self, b: Buffer, found: usize, at: Entity) {
        let rank = self.f.buffers[b].shape.len();
        if found != rank {
            let bn = names::buffer(self.f, b);
            let what = if rank == 1 { "index" } else { "indices" };
            self.err(at, format!("expected {rank} {what} for buffer `{bn}`, found {found}"));
        }
    }

    fn use_sym(&mut self, v: SymVar, at: Entity, ctx: Ctx) {
        let i = v.index();
        match self.sstate[i] {
            St::Visible => {
                if self.loop_depth[i] < self.block_depth {
                    let vn = self.sym(v);
                    let bn = self.block_stack.last().map(|&s| self.block_name(s)).unwrap_or_default();
                    self.err(at, format!("loop variable `{vn}` is used inside block `{bn}`, which does not bind it"))
                        .notes
                        .push("inside a block with iteration variables, loop variables are reached only through the block's bindings".to_string());
                }
            }
            St::Closed => {
                let vn = self.sym(v);
                let msg = match (self.kind[i], ctx) {
                    (Kind::Loop, _) => format!("loop variable `{vn}` is used outside its loop"),
                    (Kind::Iter(owner), Ctx::Binding { block, iter }) => format!(
                        "the binding of `{}` in block `{}` uses block iteration variable `{vn}` of block `{}`",
                        self.sym(iter),
                        self.block_name(block),
                        self.block_name(owner)
                    ),
                    (Kind::Iter(owner), Ctx::Plain) => format!(
                        "block iteration variable `{vn}` of block `{}` is used outside that block",
                        self.block_name(owner)
                    ),
                    (Kind::Let, _) => format!("variable `{vn}` is used outside its `let` scope"),
                    _ => format!("variable `{vn}` is used outside its scope"),
                };
                self.err(at, msg);
            }
            St::Undefined => {
                let vn = self.sym(v);
                if self.anywhere[i] {
                    self.err(at, format!("variable `{vn}` is used before it is defined"));
                } else {
                    let fname = self.fname;
                    self.err(at, format!("variable `{vn}` is not defined in function `{fname}`"));
                }
            }
        }
    }

    fn use_buffer(&mut self, b: Buffer, at: Entity) {
        let bn = names::buffer(self.f, b);
        match self.bstate[b.index()] {
            St::Visible => {}
            St::Closed => {
                self.err(at, format!("buffer `{bn}` is used outside its scope"));
            }
            St::Undefined if self.buf_anywhere[b.index()] => {
                self.err(at, format!("buffer `{bn}` is used before it is declared"));
            }
            St::Undefined => {
                let fname = self.fname;
                self.err(at, format!("buffer `{bn}` is not declared in function `{fname}`"))
                    .notes
                    .push("buffers come from the buffer map, `T.sblock_alloc_buffer`, `T.match_buffer`, `T.decl_buffer` or `T.alloc_buffer`".to_string());
            }
        }
    }

    fn use_region(&mut self, r: &BufferRegion, block: Stmt, what: &str) {
        let at = Entity::Stmt(block);
        self.use_buffer(r.buffer, at);
        let rank = self.f.buffers[r.buffer].shape.len();
        if r.region.len() != rank {
            let (bn, n, blk) = (names::buffer(self.f, r.buffer), r.region.len(), self.block_name(block));
            let ranges = if rank == 1 { "range" } else { "ranges" };
            self.err(at, format!("expected {rank} {ranges} for buffer `{bn}` in `{what}` of block `{blk}`, found {n}"));
        }
        for rg in &r.region {
            self.use_prim(rg.min, at, Ctx::Plain);
            self.use_prim(rg.extent, at, Ctx::Plain);
        }
    }

    fn walk(&mut self) {
        let mut work = vec![Work::Stmt(self.f.body)];
        while let Some(w) = work.pop() {
            match w {
                Work::Stmt(s) => self.visit(s, &mut work),
                Work::Close { syms, bufs } => self.close(syms, bufs),
                Work::ExitBlock => {
                    self.block_depth = self.block_depth.saturating_sub(1);
                    self.block_stack.pop();
                }
            }
        }
    }

    fn visit(&mut self, s: Stmt, work: &mut Vec<Work>) {
        let f = self.f;
        let data = &f.stmts[s];
        let at = Entity::Stmt(s);
        if std::mem::replace(&mut self.seen[s.index()], true) {
            let defines = matches!(
                data,
                StmtData::For { .. }
                    | StmtData::Block(_)
                    | StmtData::Let { .. }
                    | StmtData::DeclBuffer { .. }
                    | StmtData::Allocate { .. }
            );
            if defines {
                self.err(at, format!("statement `{s:?}` appears in more than one place"))
                    .notes
                    .push("the variables or buffers it defines would be defined twice".to_string());
            }
            return;
        }
        match data {
            StmtData::Seq(v) => work.extend(v.iter().rev().map(|&x| Work::Stmt(x))),
            StmtData::For { var, min, extent, step, body, .. } => {
                self.use_prim(*min, at, Ctx::Plain);
                self.use_prim(*extent, at, Ctx::Plain);
                if let Some(st) = step {
                    self.use_prim(*st, at, Ctx::Plain);
                }
                work.push(self.marks());
                self.define(*var, Kind::Loop, at);
                work.push(Work::Stmt(*body));
            }
            StmtData::Block(b) => self.enter_block(s, b, work),
            StmtData::Store { buffer, indices, value } => {
                self.use_buffer(*buffer, at);
                self.check_rank(*buffer, indices.len(), at);
                for &i in indices {
                    self.use_prim(i, at, Ctx::Plain);
                }
                self.use_prim(*value, at, Ctx::Plain);
            }
            StmtData::If { cond, then_branch, else_branch } => {
                self.use_prim(*cond, at, Ctx::Plain);
                if let Some(e) = else_branch {
                    work.push(Work::Stmt(*e));
                }
                work.push(Work::Stmt(*then_branch));
            }
            StmtData::While { cond, body } => {
                self.use_prim(*cond, at, Ctx::Plain);
                work.push(Work::Stmt(*body));
            }
            StmtData::Let { var, value, body } => {
                self.use_prim(*value, at, Ctx::Plain);
                work.push(self.marks());
                self.define(*var, Kind::Let, at);
                work.push(Work::Stmt(*body));
            }
            StmtData::Evaluate(e) => self.use_prim(*e, at, Ctx::Plain),
            StmtData::Assert { cond, message, body } => {
                self.use_prim(*cond, at, Ctx::Plain);
                self.use_prim(*message, at, Ctx::Plain);
                work.push(Work::Stmt(*body));
            }
            StmtData::Attr { node, key, value, body } => {
                self.use_prim(*value, at, Ctx::Plain);
                match node {
                    AttrNode::Expr(e) if is_thread_attr(key) && self.bare(*e).is_some() => {
                        work.push(self.marks());
                        if let Some(v) = self.bare(*e) {
                            self.define_lenient(v, Kind::Thread);
                        }
                    }
                    AttrNode::Expr(e) => self.use_prim(*e, at, Ctx::Plain),
                    // A buffer named by an attribute may be declared later (lowered TIR
                    // writes `T.attr(x, "storage_alignment", 64)` before `T.decl_buffer`).
                    AttrNode::Buffer(_) | AttrNode::Str(_) => {}
                }
                work.push(Work::Stmt(*body));
            }
            StmtData::DeclBuffer { buffer, body } | StmtData::Allocate { buffer, body } => {
                self.use_buffer_exprs(*buffer, at);
                work.push(self.marks());
                self.define_lenient(f.buffers[*buffer].data, Kind::Data);
                self.declare_buffer(*buffer, at);
                work.push(Work::Stmt(*body));
            }
        }
    }

    fn enter_block(&mut self, s: Stmt, b: &'a BlockNode, work: &mut Vec<Work>) {
        let at = Entity::Stmt(s);
        self.n_blocks += 1;
        if let Some(&first) = self.block_names.get(b.name.as_str()) {
            let name = &b.name;
            self.err(at, format!("block name `{name}` is used more than once"))
                .notes
                .push(format!("block names are unique within a PrimFunc; the first is statement `{first:?}`"));
        } else {
            self.block_names.insert(b.name.as_str(), s);
        }
        // The realization: predicate, domains and bindings see the enclosing scope only.
        if let Some(p) = b.predicate {
            self.use_prim(p, at, Ctx::Plain);
        }
        for iv in &b.iter_vars {
            self.use_prim(iv.dom.min, at, Ctx::Plain);
            self.use_prim(iv.dom.extent, at, Ctx::Plain);
            self.use_prim(iv.binding, at, Ctx::Binding { block: s, iter: iv.var });
        }
        // The block itself.
        work.push(self.marks());
        if !b.iter_vars.is_empty() {
            self.block_depth += 1;
            self.block_stack.push(s);
            work.push(Work::ExitBlock);
        }
        for iv in &b.iter_vars {
            self.define(iv.var, Kind::Iter(s), at);
        }
        for &ab in &b.alloc_buffers {
            self.use_buffer_exprs(ab, Entity::Buffer(ab));
            self.define_lenient(self.f.buffers[ab].data, Kind::Data);
            self.declare_buffer(ab, Entity::Buffer(ab));
        }
        for mb in &b.match_buffers {
            self.use_region(&mb.source, s, "T.match_buffer");
            self.define_bare_dims(mb.buffer);
            self.use_buffer_exprs(mb.buffer, Entity::Buffer(mb.buffer));
            self.define_lenient(self.f.buffers[mb.buffer].data, Kind::Data);
            self.declare_buffer(mb.buffer, Entity::Buffer(mb.buffer));
        }
        for r in &b.reads {
            self.use_region(r, s, "T.reads");
        }
        for r in &b.writes {
            self.use_region(r, s, "T.writes");
        }
        // Buffers named by annotations (`layout_free_placeholders`) must be in scope.
        let mut named = Vec::new();
        for (_, v) in b.annotations.iter() {
            v.for_each_buffer(&mut |x| named.push(x));
        }
        for x in named {
            self.use_buffer(x, Entity::Stmt(s));
        }
        work.push(Work::Stmt(b.body));
        if let Some(init) = b.init {
            work.push(Work::Stmt(init));
        }
    }
}

fn is_thread_attr(key: &str) -> bool {
    key == "thread_extent" || key == "virtual_thread"
}
