//! Run-time errors: a message, the source span it is about (when the IR came from text)
//! and notes (the call stack, hints).

use relax_ir::{Diagnostic, Span};

/// A run-time error.
#[derive(Clone, Debug, PartialEq)]
pub struct RunError {
    /// What went wrong (lowercase, no final period).
    pub message: String,
    /// Where, in the module's source text; [`Span::NONE`] when not known.
    pub span: Span,
    /// Notes printed after the message.
    pub notes: Vec<String>,
}

/// The result of running something.
pub type RunResult<T> = Result<T, RunError>;

impl RunError {
    /// An error without a location.
    pub fn new(message: impl Into<String>) -> RunError {
        RunError { message: message.into(), span: Span::NONE, notes: Vec::new() }
    }
    /// An error at a span.
    pub fn at(span: Span, message: impl Into<String>) -> RunError {
        RunError { message: message.into(), span, notes: Vec::new() }
    }
    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> RunError {
        self.notes.push(note.into());
        self
    }
    /// Sets the span when it has none yet.
    pub fn or_at(mut self, span: Span) -> RunError {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
    /// The diagnostic to render.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.span, self.message.clone());
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}
