//! Verifier errors: what is wrong, on which entity, and where that entity was written.
//!
//! An error names its function ([`VerifyError::global`]) and the most specific entity it is
//! about. Spans are looked up only when the error is rendered: first in the function's side
//! tables, then at the enclosing binding or statement, then at the function itself.

use std::fmt;

use relax_entity::EntityRef;

use crate::diag::Diagnostic;
use crate::entities::{Block, Buffer, Expr, Global, Stmt, SymVar, Var};
use crate::module::{Func, Module};
use crate::relax::{ExprData, RelaxFunction};
use crate::span::Span;
use crate::tir::PrimFunc;

/// The IR entity a verifier error is about. Handles belong to the function named by
/// [`VerifyError::global`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entity {
    /// The module as a whole.
    Module,
    /// The function as a whole.
    Function,
    /// A Relax variable.
    Var(Var),
    /// A Relax expression.
    Expr(Expr),
    /// A Relax binding block.
    Block(Block),
    /// A TIR statement.
    Stmt(Stmt),
    /// A TIR buffer.
    Buffer(Buffer),
    /// A TIR or symbolic variable.
    SymVar(SymVar),
}

/// One well-formedness violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The function the error is in; `None` for module-level errors.
    pub global: Option<Global>,
    /// The entity the error is about.
    pub entity: Entity,
    /// The message: lowercase, no final period, entities named in backquotes.
    pub message: String,
    /// Extra explanations, printed after the snippet.
    pub notes: Vec<String>,
}

impl VerifyError {
    /// An error about `entity` of function `global`.
    pub fn new(global: Option<Global>, entity: Entity, message: impl Into<String>) -> VerifyError {
        VerifyError { global, entity, message: message.into(), notes: Vec::new() }
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> VerifyError {
        self.notes.push(note.into());
        self
    }

    /// The source span of the entity: its own span from the function's side tables, else
    /// the span of the enclosing binding or statement, else the function's, else the
    /// module's ([`Span::NONE`] when nothing is known). Never panics, even on dangling
    /// handles.
    pub fn span(&self, m: &Module) -> Span {
        let Some(g) = self.global else { return m.span };
        let Some(data) = m.globals.get(g) else { return m.span };
        let span = match &data.func {
            Func::Relax(f) => relax_span(f, self.entity),
            Func::Prim(f) => tir_span(f, self.entity),
            _ => Span::NONE,
        };
        if span.is_none() { m.span } else { span }
    }

    /// The diagnostic for this error, with its span looked up in `m`.
    pub fn to_diagnostic(&self, m: &Module) -> Diagnostic {
        let mut d = Diagnostic::error(self.span(m), self.message.clone());
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VerifyError {}

fn first_known(spans: impl IntoIterator<Item = Span>) -> Span {
    spans.into_iter().find(|s| !s.is_none()).unwrap_or(Span::NONE)
}

fn relax_span(f: &RelaxFunction, entity: Entity) -> Span {
    let sp = &f.spans;
    match entity {
        Entity::Var(v) => first_known([*sp.vars.get(v), sp.func]),
        Entity::Expr(e) => {
            let own = *sp.exprs.get(e);
            if !own.is_none() {
                return own;
            }
            let enclosing = enclosing_binding_var(f, e).map(|v| *sp.vars.get(v)).unwrap_or(Span::NONE);
            first_known([enclosing, sp.func])
        }
        Entity::Block(b) => {
            let first = f.blocks.get(b).and_then(|bd| bd.bindings.first()).map(|bd| *sp.vars.get(bd.var));
            first_known([*sp.blocks.get(b), first.unwrap_or(Span::NONE), sp.func])
        }
        _ => sp.func,
    }
}

/// The variable of the binding whose value contains `target` (searched through calls,
/// tuples and item accesses; `if` conditions and branch results count for the `if`).
fn enclosing_binding_var(f: &RelaxFunction, target: Expr) -> Option<Var> {
    let mut seen = vec![false; f.exprs.len()];
    for bd in f.blocks.values().flat_map(|b| b.bindings.iter()) {
        let mut stack = vec![bd.value];
        while let Some(e) = stack.pop() {
            if e == target {
                return Some(bd.var);
            }
            let Some(data) = f.exprs.get(e) else { continue };
            if std::mem::replace(&mut seen[e.index()], true) {
                continue;
            }
            // The IR may be broken here (this finds where to report an error): bad list
            // and sequence handles are skipped.
            match data {
                ExprData::Call(c) => {
                    stack.push(c.callee);
                    stack.extend(f.lists.get(c.args).unwrap_or_default());
                }
                ExprData::Tuple(fields) => stack.extend(f.lists.get(*fields).unwrap_or_default()),
                ExprData::GetItem { tuple, .. } => stack.push(*tuple),
                ExprData::If { cond, then_branch, else_branch } => {
                    stack.push(*cond);
                    stack.extend([then_branch, else_branch].into_iter().filter_map(|&s| f.seqs.get(s)).map(|s| s.body));
                }
                _ => {}
            }
        }
    }
    None
}

fn tir_span(f: &PrimFunc, entity: Entity) -> Span {
    let sp = &f.spans;
    match entity {
        Entity::Stmt(s) => {
            let own = *sp.stmts.get(s);
            if !own.is_none() {
                return own;
            }
            let parents = stmt_parents(f);
            let mut cur = s;
            let mut steps = 0;
            while let Some(&Some(p)) = parents.get(cur.index()) {
                let span = *sp.stmts.get(p);
                if !span.is_none() {
                    return span;
                }
                cur = p;
                steps += 1;
                if steps > parents.len() {
                    break;
                }
            }
            sp.func
        }
        Entity::Buffer(b) => first_known([*sp.buffers.get(b), sp.func]),
        Entity::SymVar(v) => first_known([*sp.vars.get(v), sp.func]),
        _ => sp.func,
    }
}

/// The parent of each statement reachable from the body (first parent found).
fn stmt_parents(f: &PrimFunc) -> Vec<Option<Stmt>> {
    let mut parents: Vec<Option<Stmt>> = vec![None; f.stmts.len()];
    let mut seen = vec![false; f.stmts.len()];
    let mut stack = vec![f.body];
    while let Some(s) = stack.pop() {
        let Some(data) = f.stmts.get(s) else { continue };
        if std::mem::replace(&mut seen[s.index()], true) {
            continue;
        }
        for k in data.children() {
            if let Some(slot) = parents.get_mut(k.index())
                && slot.is_none()
                && k != f.body
            {
                *slot = Some(s);
            }
            stack.push(k);
        }
    }
    parents
}
