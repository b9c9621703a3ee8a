//! The span table of printed text: where each IR entity landed in the text, and the
//! (uniquified) name it was printed with.
//!
//! IR built by a pass has no source span. A diagnostic about it is rendered against the
//! printed text instead (as a virtual file such as `<after legalize-ops>`), and names the
//! entities by the names the printer gave them.

use std::collections::BTreeMap;

use crate::entities::{Block, Buffer, Expr, Global, Stmt, SymVar, Var};
use crate::span::Span;

/// An entity whose printed text has a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpanKey {
    /// The `def` line of a function (from `def` to the final `:`), or the
    /// `name = R.ExternFunc(...)` line of an extern function.
    Def(Global),
    /// A Relax parameter (`x: R.Tensor(...)`) or the whole binding statement of a variable
    /// (for a local function, its `def` line).
    Var(Global, Var),
    /// A Relax expression (binding values, call arguments, tuple fields, ...).
    Expr(Global, Expr),
    /// The `with R.dataflow():` line of a dataflow block.
    Block(Global, Block),
    /// A TIR statement, from its first line to the end of its last line.
    Stmt(Global, Stmt),
    /// Where a TIR buffer is declared: its parameter, `T.match_buffer`,
    /// `T.sblock_alloc_buffer`, or `T.decl_buffer` statement.
    Buffer(Global, Buffer),
    /// Where a TIR variable is defined: a parameter, a `for` line, a block axis line, a
    /// declaration `n = T.int64()` (Relax or TIR), or the buffer statement that binds it.
    SymVar(Global, SymVar),
}

/// An entity that has a printed name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameKey {
    /// A Relax variable.
    Var(Global, Var),
    /// A TIR variable (symbolic dim, loop/block var, handle, scalar parameter).
    SymVar(Global, SymVar),
    /// A TIR buffer.
    Buffer(Global, Buffer),
}

/// Spans and printed names of one printed text. Iteration is in key order, so nothing
/// depends on hash order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanMap {
    spans: BTreeMap<SpanKey, Span>,
    names: BTreeMap<NameKey, String>,
}

impl SpanMap {
    /// An empty map.
    pub fn new() -> SpanMap {
        SpanMap::default()
    }
    /// Records the span of `key` unless one is already recorded (the first print wins).
    pub fn insert_span(&mut self, key: SpanKey, span: Span) {
        self.spans.entry(key).or_insert(span);
    }
    /// Records the printed name of `key` unless one is already recorded.
    pub fn insert_name(&mut self, key: NameKey, name: &str) {
        self.names.entry(key).or_insert_with(|| name.to_string());
    }
    /// The span of an entity.
    pub fn get(&self, key: SpanKey) -> Option<Span> {
        self.spans.get(&key).copied()
    }
    /// The span of a function's `def` line.
    pub fn def_span(&self, g: Global) -> Option<Span> {
        self.get(SpanKey::Def(g))
    }
    /// The span of a Relax parameter or binding.
    pub fn var_span(&self, g: Global, v: Var) -> Option<Span> {
        self.get(SpanKey::Var(g, v))
    }
    /// The span of a Relax expression.
    pub fn expr_span(&self, g: Global, e: Expr) -> Option<Span> {
        self.get(SpanKey::Expr(g, e))
    }
    /// The span of a `with R.dataflow():` line.
    pub fn block_span(&self, g: Global, b: Block) -> Option<Span> {
        self.get(SpanKey::Block(g, b))
    }
    /// The span of a TIR statement.
    pub fn stmt_span(&self, g: Global, s: Stmt) -> Option<Span> {
        self.get(SpanKey::Stmt(g, s))
    }
    /// The span of a buffer's declaration.
    pub fn buffer_span(&self, g: Global, b: Buffer) -> Option<Span> {
        self.get(SpanKey::Buffer(g, b))
    }
    /// The span of a TIR variable's definition.
    pub fn sym_var_span(&self, g: Global, v: SymVar) -> Option<Span> {
        self.get(SpanKey::SymVar(g, v))
    }
    /// The printed name of an entity.
    pub fn name(&self, key: NameKey) -> Option<&str> {
        self.names.get(&key).map(String::as_str)
    }
    /// The printed name of a Relax variable.
    pub fn var_name(&self, g: Global, v: Var) -> Option<&str> {
        self.name(NameKey::Var(g, v))
    }
    /// The printed name of a TIR variable.
    pub fn sym_var_name(&self, g: Global, v: SymVar) -> Option<&str> {
        self.name(NameKey::SymVar(g, v))
    }
    /// The printed name of a buffer.
    pub fn buffer_name(&self, g: Global, b: Buffer) -> Option<&str> {
        self.name(NameKey::Buffer(g, b))
    }
    /// All spans, in key order.
    pub fn spans(&self) -> impl Iterator<Item = (SpanKey, Span)> + '_ {
        self.spans.iter().map(|(k, s)| (*k, *s))
    }
    /// All printed names, in key order.
    pub fn names(&self) -> impl Iterator<Item = (NameKey, &str)> + '_ {
        self.names.iter().map(|(k, s)| (*k, s.as_str()))
    }
}
