//! Errors of code generation: a message and, where one is known, the span of the
//! statement or function that could not be compiled.

use relax_ir::{Diagnostic, PrimFunc, Span, tir_lower};

/// Why a PrimFunc could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodegenError {
    /// What went wrong, lowercase, without a final period.
    pub message: String,
    /// Where (the statement, or the function's `def` line); `Span::NONE` when unknown.
    pub span: Span,
}

impl CodegenError {
    /// An error without a location.
    pub fn new(message: impl Into<String>) -> CodegenError {
        CodegenError { message: message.into(), span: Span::NONE }
    }
    /// Sets the span if none is set yet.
    pub fn or_at(mut self, span: Span) -> CodegenError {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
    /// The error as a diagnostic.
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::error(self.span, self.message.clone())
    }
}

impl std::fmt::Display for CodegenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CodegenError {}

/// The internal error of a code generator given a PrimFunc with blocks.
pub(crate) fn not_lowered(name: &str) -> CodegenError {
    CodegenError::new(format!(
        "internal error: `{name}` still has blocks; the code generators take lowered TIR only (`lower-tir`, `relax_ir::tir_lower`)"
    ))
}

/// [`not_lowered`] at the first block of `f`, if it has one.
pub(crate) fn require_lowered(name: &str, f: &PrimFunc) -> Result<(), CodegenError> {
    match tir_lower::first_block(f) {
        Some(s) => Err(not_lowered(name).or_at(f.spans.stmts[s])),
        None => Ok(()),
    }
}
