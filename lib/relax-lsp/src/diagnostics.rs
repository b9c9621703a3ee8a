//! relax diagnostics as LSP diagnostics.
//!
//! The message is exactly the one `relax-opt` prints after `FILE:LINE:COL: error: ` (control
//! characters escaped, cut at 1,000 characters: `relax_ir::diag::printable`, which
//! `relax-driver`'s renderer uses too). The
//! primary span is the range; the primary label, secondary labels and notes become related
//! information, so every piece of the CLI's snippet reaches the editor.

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri};
use relax_ir::diag::printable;
use relax_ir::{Diagnostic, Severity};

use crate::line_index::LineIndex;

/// The `source` field of every diagnostic.
pub const SOURCE: &str = "relax";

/// Converts one diagnostic of the document `uri`.
pub fn to_lsp(uri: &Uri, lines: &LineIndex, d: &Diagnostic) -> lsp_types::Diagnostic {
    let range = lines.span_range(d.span);
    let here =
        |message: String| DiagnosticRelatedInformation { location: Location { uri: uri.clone(), range }, message };
    let mut related = Vec::new();
    if !d.label.is_empty() {
        related.push(here(printable(&d.label)));
    }
    for (span, label) in &d.secondary {
        if span.is_none() {
            continue;
        }
        let message = if label.is_empty() { "related location".to_string() } else { printable(label) };
        related.push(DiagnosticRelatedInformation {
            location: Location { uri: uri.clone(), range: lines.span_range(*span) },
            message,
        });
    }
    for n in &d.notes {
        related.push(here(format!("note: {}", printable(n))));
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(severity(d.severity)),
        code: None::<NumberOrString>,
        code_description: None,
        source: Some(SOURCE.to_string()),
        message: printable(&d.message),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

/// The LSP severity of a relax severity.
pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Note => DiagnosticSeverity::INFORMATION,
        Severity::Remark => DiagnosticSeverity::HINT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_the_clis() {
        let uri: Uri = "file:///t.rlx".parse().unwrap();
        let lines = LineIndex::new("a = 1\nb = R.foo(x)\n");
        let d = Diagnostic::error(relax_ir::Span::new(10, 15), "unknown op `R.foo`\n")
            .with_label("here")
            .with_secondary(relax_ir::Span::new(0, 1), "defined here")
            .with_note("a note");
        let l = to_lsp(&uri, &lines, &d);
        assert_eq!(l.message, "unknown op `R.foo`\\n");
        assert_eq!(l.range, lsp_types::Range::new(lsp_types::Position::new(1, 4), lsp_types::Position::new(1, 9)));
        let related = l.related_information.unwrap();
        assert_eq!(related.len(), 3);
        assert_eq!(related[1].message, "defined here");
        assert_eq!(related[1].location.range.start, lsp_types::Position::new(0, 0));
        assert_eq!(related[2].message, "note: a note");
    }
}
