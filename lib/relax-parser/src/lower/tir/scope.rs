//! The state of one PrimFunc being lowered: its arenas, the name scopes, the open loops
//! and blocks, and the [`PrimScope`] implementation that TIR expressions resolve through.
//!
//! Names resolve innermost scope first (`text-format.md` §12.2). A new scope opens for
//! every loop body, block body, `T.init()` and `if`/`while` branch; `let` variables and
//! buffers declared by lowered-TIR statements live in the scope they appear in (their
//! IR scope is the rest of that statement list). Reusing a name in a new scope creates
//! a distinct variable.

use std::collections::{HashMap, HashSet};

use relax_entity::PrimaryMap;
use relax_ir::attrs::Attrs;
use relax_ir::{Buffer, BufferData, DataType, Pool, PrimExpr, PrimExprData, Stmt, StmtData, SymVar, TirSpans};

use super::super::module::ModuleCx;
use super::super::prim_expr::{PrimName, PrimScope};
use super::super::{Diags, LResult, Reported, sp};
use super::blocks::OpenBlock;
use crate::ast;

/// What a name means in a PrimFunc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// A scalar or handle variable.
    Var(SymVar),
    /// A buffer.
    Buffer(Buffer),
}

/// A loop that encloses the statement being lowered (for `T.axis.remap`).
#[derive(Clone, Copy, Debug)]
pub(super) struct LoopInfo {
    /// The loop variable.
    pub var: SymVar,
    /// Its first value.
    pub min: PrimExpr,
    /// Its trip count.
    pub extent: PrimExpr,
}

/// Where a statement list sits: it decides which header statements are allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SeqCtx {
    /// The function body: `T.func_attr`, `T.match_buffer` of a parameter, root
    /// allocations.
    Function,
    /// Directly inside a block: `T.axis.*`, `T.reads`, `T.init()`, block allocations...
    Block,
    /// Anywhere else (loop bodies, branches, `T.init()` bodies).
    Other,
}

/// The PrimFunc under construction.
pub(super) struct TirCx<'a, 'd> {
    /// Module-wide state (diagnostics, dialect).
    pub cx: &'a mut ModuleCx<'d>,
    /// Variables and expressions.
    pub pool: Pool,
    /// Buffers.
    pub buffers: PrimaryMap<Buffer, BufferData>,
    /// Statements.
    pub stmts: PrimaryMap<Stmt, StmtData>,
    /// Source spans.
    pub spans: TirSpans,
    /// Parameters in order.
    pub params: Vec<SymVar>,
    /// Handle parameter → buffer.
    pub buffer_map: Vec<(SymVar, Buffer)>,
    /// The parameters as a set (filled when the signature is read), and the handles of
    /// `buffer_map`: membership tests stay constant-time for functions with thousands of
    /// parameters.
    pub param_set: HashSet<SymVar>,
    /// See `param_set`.
    pub bound_handles: HashSet<SymVar>,
    /// Function attributes read so far.
    pub attrs: Attrs,
    /// Name scopes, innermost last; the first is the function scope.
    pub frames: Vec<HashMap<String, Entry>>,
    /// Function-level declarations (`n = T.int64()`) found before lowering, by name.
    pub decls: HashMap<String, DataType>,
    /// The loops enclosing the current statement, outermost first.
    pub loops: Vec<LoopInfo>,
    /// The blocks being lowered, innermost last.
    pub blocks: Vec<OpenBlock>,
    /// Function-level `T.sblock_alloc_buffer`s (they go to the root block).
    pub root_allocs: Vec<Buffer>,
    /// Buffers whose accesses count when reads/writes are computed for a block (TVM's
    /// `buffer_var_map`): the buffer map, root allocations and allocations of enclosing
    /// blocks.
    pub region_buffers: HashSet<Buffer>,
    /// The function uses the classic spelling (`T.alloc_buffer` is a block allocation).
    pub classic: bool,
    /// An error was reported while lowering this function.
    pub failed: bool,
    /// PEP 695 type parameters (`def f[n](...)`), treated like HEAD TypeVars.
    pub type_params: Vec<String>,
}

impl<'a, 'd> TirCx<'a, 'd> {
    /// A fresh context.
    pub fn new(cx: &'a mut ModuleCx<'d>, classic: bool) -> TirCx<'a, 'd> {
        TirCx {
            cx,
            pool: Pool::new(),
            buffers: PrimaryMap::new(),
            stmts: PrimaryMap::new(),
            spans: TirSpans::default(),
            params: Vec::new(),
            buffer_map: Vec::new(),
            param_set: HashSet::new(),
            bound_handles: HashSet::new(),
            attrs: Attrs::new(),
            frames: vec![HashMap::new()],
            decls: HashMap::new(),
            loops: Vec::new(),
            blocks: Vec::new(),
            root_allocs: Vec::new(),
            region_buffers: HashSet::new(),
            classic,
            failed: false,
            type_params: Vec::new(),
        }
    }

    /// True for a HEAD TypeVar of the module or a type parameter of the function: a name
    /// that becomes a new `int64` variable of this function on first use.
    pub fn is_typevar(&self, name: &str) -> bool {
        self.cx.dialect.is_typevar(name) || self.type_params.iter().any(|t| t == name)
    }

    /// Reports an error and marks the function as failed.
    pub fn err(&mut self, span: ast::Span, message: impl Into<String>) -> Reported {
        self.failed = true;
        self.cx.diags.error(span, message)
    }

    /// Opens a name scope.
    pub fn push_frame(&mut self) {
        self.frames.push(HashMap::new());
    }

    /// Closes the innermost name scope.
    pub fn pop_frame(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
        }
    }

    /// Binds `name` in the innermost scope.
    pub fn bind(&mut self, name: &str, entry: Entry) {
        self.frames.last_mut().expect("the function scope is always open").insert(name.to_string(), entry);
    }

    /// What `name` means here, innermost scope first.
    pub fn entry(&self, name: &str) -> Option<Entry> {
        self.frames.iter().rev().find_map(|f| f.get(name).copied())
    }

    /// A new variable bound to `name` in the innermost scope.
    pub fn define_var(&mut self, name: &str, dtype: DataType, span: ast::Span) -> SymVar {
        let v = self.pool.new_var(name, dtype);
        self.spans.vars.set(v, sp(span));
        self.bind(name, Entry::Var(v));
        v
    }

    /// A new variable bound to `name` in the function scope (symbolic dims).
    pub fn define_function_var(&mut self, name: &str, dtype: DataType, span: ast::Span) -> SymVar {
        let v = self.pool.new_var(name, dtype);
        self.spans.vars.set(v, sp(span));
        self.frames[0].insert(name.to_string(), Entry::Var(v));
        v
    }

    /// Adds a buffer and binds its name in the innermost scope.
    pub fn define_buffer(&mut self, data: BufferData, span: ast::Span) -> Buffer {
        let name = data.name.clone();
        let b = self.buffers.push(data);
        self.spans.buffers.set(b, sp(span));
        self.bind(&name, Entry::Buffer(b));
        b
    }

    /// Adds a statement with its span.
    pub fn add_stmt(&mut self, data: StmtData, span: relax_ir::Span) -> Stmt {
        let s = self.stmts.push(data);
        self.spans.stmts.set(s, span);
        s
    }

    /// The span covering a list of statements.
    pub fn span_of(&self, stmts: &[Stmt]) -> relax_ir::Span {
        stmts.iter().fold(relax_ir::Span::NONE, |acc, &s| acc.to(*self.spans.stmts.get(s)))
    }

    /// The body of a compound statement: the statement itself when there is one, a `Seq`
    /// for several, `T.evaluate(0)` for none (as TVM's `SeqStmt::Flatten`).
    pub fn seq(&mut self, mut stmts: Vec<Stmt>, fallback: ast::Span) -> Stmt {
        match stmts.len() {
            0 => {
                let zero = self.pool.int(DataType::INT32, 0);
                self.add_stmt(StmtData::Evaluate(zero), sp(fallback))
            }
            1 => stmts.pop().expect("one statement"),
            _ => {
                let span = self.span_of(&stmts);
                self.add_stmt(StmtData::Seq(stmts), span)
            }
        }
    }

    /// The rest of a statement list that a scoping statement (`let`, `assert`,
    /// `T.attr`, `T.decl_buffer`) covers: like [`TirCx::seq`], but an empty rest is an
    /// empty `Seq`, which prints as nothing.
    pub fn rest_seq(&mut self, mut stmts: Vec<Stmt>, at: relax_ir::Span) -> Stmt {
        match stmts.len() {
            0 => self.add_stmt(StmtData::Seq(Vec::new()), at),
            1 => stmts.pop().expect("one statement"),
            _ => {
                let span = self.span_of(&stmts);
                self.add_stmt(StmtData::Seq(stmts), span)
            }
        }
    }

    /// True when `s` is or contains a block.
    pub fn contains_block(&self, s: Stmt) -> bool {
        let mut stack = vec![s];
        while let Some(s) = stack.pop() {
            let d = &self.stmts[s];
            if matches!(d, StmtData::Block(_)) {
                return true;
            }
            d.for_each_child(|c| stack.push(c));
        }
        false
    }

    /// The variable of a bare variable expression.
    pub fn as_var(&self, e: PrimExpr) -> Option<SymVar> {
        match self.pool.prim(e) {
            PrimExprData::Var(v) => Some(*v),
            _ => None,
        }
    }

    /// Looks `name` up as a buffer, reporting what it is otherwise.
    pub fn buffer_named(&mut self, name: &str, span: ast::Span) -> LResult<Buffer> {
        match self.entry(name) {
            Some(Entry::Buffer(b)) => Ok(b),
            Some(Entry::Var(_)) => Err(self.err(span, format!("`{name}` is not a buffer"))),
            None => Err(self.err(span, format!("undefined buffer `{name}`"))),
        }
    }
}

/// Names resolve through the scopes; a TypeVar becomes a variable on first use.
impl PrimScope for TirCx<'_, '_> {
    fn pool(&mut self) -> &mut Pool {
        &mut self.pool
    }
    fn diags(&mut self) -> &mut Diags {
        self.cx.diags
    }
    fn lookup(&mut self, name: &str) -> Option<PrimName> {
        match self.entry(name) {
            Some(Entry::Var(v)) => Some(PrimName::Var(v)),
            Some(Entry::Buffer(b)) => Some(PrimName::Buffer(b)),
            None if self.is_typevar(name) => {
                // A HEAD TypeVar: a separate variable in every function that uses it.
                let dtype = self.decls.get(name).copied().unwrap_or(DataType::INT64);
                let v = self.pool.new_var(name, dtype);
                self.frames[0].insert(name.to_string(), Entry::Var(v));
                Some(PrimName::Var(v))
            }
            None => None,
        }
    }
    fn buffer_info(&self, b: Buffer) -> (DataType, usize) {
        let d = &self.buffers[b];
        (d.dtype, d.shape.len())
    }
    fn attribute(&mut self, e: &ast::Expr) -> Option<LResult<PrimExpr>> {
        super::exprs::attribute(self, e)
    }
}
