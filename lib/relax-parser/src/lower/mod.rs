//! Lowering: the syntax tree of a TVMScript file becomes a [`relax_ir::Module`].
//!
//! Two phases, so that functions may refer to each other before they are defined:
//!
//! 1. [`module`] scans the class body: it registers every function by name and kind,
//!    evaluates every Relax signature (parameter and return types, with their symbolic
//!    variables), and reads module attributes, global infos and extern functions.
//! 2. The bodies are lowered in file order: [`relax`] for Relax functions (ANF, types,
//!    blocks) and [`tir`] for PrimFuncs (buffers, loops, blocks).
//!
//! Names of the `I.`, `R.` and `T.` namespaces and the spellings of the dialects TVM
//! prints (classic, 0.25, 0.26, 0.27 — `text-format.md` §2, §14) are resolved through
//! tables here; the grammar knows none of them.
//!
//! Errors are collected: a bad statement is reported and skipped, a bad function is
//! reported and left out, and lowering continues so one run reports many errors.

pub(crate) mod attrs;
pub(crate) mod dialect;
pub(crate) mod metadata;
pub(crate) mod metadata_json;
pub(crate) mod module;
pub(crate) mod prim_expr;
pub(crate) mod relax;
pub(crate) mod tir;

use relax_ir::diag::Diagnostic;
use relax_ir::{Module, Span};

use crate::ast;

/// The result of lowering one statement or expression: the diagnostic is already
/// recorded when `Err(Reported)` is returned.
pub(crate) type LResult<T> = Result<T, Reported>;

/// Marker: an error was reported to the diagnostics list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reported;

/// Converts a syntax-tree span.
pub(crate) fn sp(s: ast::Span) -> Span {
    Span::new(s.start, s.end)
}

/// Collected diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Diags {
    pub list: Vec<Diagnostic>,
}

/// The most errors one file reports before lowering gives up.
pub(crate) const MAX_ERRORS: usize = 100;

impl Diags {
    /// Records an error and returns the marker.
    pub fn error(&mut self, span: ast::Span, message: impl Into<String>) -> Reported {
        self.push(Diagnostic::error(sp(span), message))
    }
    /// Records a diagnostic (dropping it past [`MAX_ERRORS`]).
    pub fn push(&mut self, d: Diagnostic) -> Reported {
        if self.list.len() < MAX_ERRORS {
            self.list.push(d);
        }
        Reported
    }
    /// True when an error was recorded.
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(Diagnostic::is_error)
    }
    /// True when lowering should stop.
    pub fn full(&self) -> bool {
        self.list.len() >= MAX_ERRORS
    }
}

/// Lowers a parsed file. Returns the module when there were no errors.
pub(crate) fn lower_file(file: &ast::File) -> (Option<Module>, Vec<Diagnostic>) {
    let mut diags = Diags::default();
    let module = module::lower_module(file, &mut diags);
    let mut list = diags.list;
    list.sort_by_key(|d| d.span);
    if list.iter().any(Diagnostic::is_error) { (None, list) } else { (module, list) }
}
