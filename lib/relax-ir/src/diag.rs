//! Diagnostics: the one error value every phase produces (lexer, parser, lowering,
//! verifier, passes), rendered late by the driver with codespan-reporting (and by the
//! language server as LSP diagnostics); [`printable`] is how both show its text;
//! [`suggest`] finds the "did you mean" of a misspelled name.
//!
//! A diagnostic carries byte spans into the source text, never line numbers. IR built by a
//! pass has no source span; such diagnostics are rendered against the printed text of the
//! module (see the printer's span table).
//!
//! Messages are lowercase with no final period, in the form ``expected `X`, found `Y` ``,
//! and name entities by their printed names.

use crate::span::Span;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Processing failed.
    Error,
    /// Suspicious but accepted.
    Warning,
    /// Extra information attached to an earlier diagnostic.
    Note,
    /// An optimization remark.
    Remark,
}

impl Severity {
    /// The word printed in the header (`error`, `warning`, `note`, `remark`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        }
    }
}

/// A message about a place in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// The message.
    pub message: String,
    /// The primary location ([`Span::NONE`] when there is none).
    pub span: Span,
    /// The text under the primary caret (may be empty).
    pub label: String,
    /// Secondary locations with their labels.
    pub secondary: Vec<(Span, String)>,
    /// Notes printed after the snippet.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, span, message)
    }
    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, span, message)
    }
    /// A remark at `span`.
    pub fn remark(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Remark, span, message)
    }
    /// A diagnostic of any severity.
    pub fn new(severity: Severity, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    /// Sets the primary label.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }
    /// Adds a secondary location.
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }
    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.severity.as_str(), self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// Longest message, label or note shown whole, in characters: a message quoting a 5 MB
/// identifier is cut.
pub const MAX_MESSAGE: usize = 1000;

/// A message, label or note as shown (by the driver and the language server alike):
/// control characters escaped (a message quoting the source must not break the one-line
/// header or send escape sequences to a terminal), cut to [`MAX_MESSAGE`] characters.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4 * MAX_MESSAGE));
    for (i, c) in s.chars().enumerate() {
        if i == MAX_MESSAGE {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The candidate closest to `name` for a "did you mean": edit distance (with adjacent
/// transpositions, `mian` → `main`, counting as one edit) at most a
/// third of its length and at most 3 (ties go to the candidate first in byte order).
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.len() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for cand in candidates {
        if name.len().abs_diff(cand.len()) > limit {
            continue;
        }
        let d = strsim::osa_distance(name, cand);
        if d <= limit && best.is_none_or(|(bd, bc)| (d, cand) < (bd, bc)) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names() {
        let names = ["max-depth", "fuse", "main"];
        assert_eq!(suggest("max-dpth", names), Some("max-depth"));
        assert_eq!(suggest("mian", names), Some("main"));
        assert_eq!(suggest("zzzzzz", names), None);
    }

    #[test]
    fn printable_escapes_and_cuts() {
        assert_eq!(printable("a\u{1b}[1m\nb"), "a\\u{1b}[1m\\nb");
        let long = printable(&"é".repeat(MAX_MESSAGE + 5));
        assert_eq!(long.chars().count(), MAX_MESSAGE + 3);
        assert!(long.ends_with("é..."));
    }
}
