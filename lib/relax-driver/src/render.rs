//! Rendering diagnostics with codespan-reporting, in the form `cli.md` requires:
//!
//! ```text
//! test.rlx:3:9: error: unknown op `R.foo`
//!   │
//! 3 │     y = R.foo(x)
//!   │         ^^^^^ not in the op table
//!   │
//!   = note: ...
//! ```
//!
//! The header carries the locus (`FILE:LINE:COL:`) in front of the severity, which
//! codespan's stock views do not do, so the view is assembled from codespan's public
//! `term::Renderer` pieces. Very long lines are cut to a window around the label.

use std::io::Write;

use codespan_reporting::diagnostic::Severity as CsSev;
use codespan_reporting::diagnostic::{LabelStyle, Severity as CsSeverity};
use codespan_reporting::term::termcolor::Ansi;
use codespan_reporting::term::{Config, GeneralWriteResult, Renderer, WriteStyle};
use relax_ir::diag::{Diagnostic, Severity};

use crate::source::{SourceFile, floor_char_boundary};

/// Longest source line shown whole; longer lines show a window around the label.
const MAX_SHOWN_LINE: usize = 240;

fn severity(s: Severity) -> CsSeverity {
    match s {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note | Severity::Remark => CsSeverity::Note,
    }
}

/// Renders diagnostics to text.
pub fn render_all(file: &SourceFile, diags: &[Diagnostic], color: bool) -> String {
    let mut out = Vec::new();
    for d in diags {
        let _ = render(&mut out, file, d, color);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A writer without styles.
struct Plain<W: Write>(W);

impl<W: Write> Write for Plain<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> WriteStyle for Plain<W> {
    fn set_header(&mut self, _: CsSev) -> GeneralWriteResult {
        Ok(())
    }
    fn set_header_message(&mut self) -> GeneralWriteResult {
        Ok(())
    }
    fn set_line_number(&mut self) -> GeneralWriteResult {
        Ok(())
    }
    fn set_note_bullet(&mut self) -> GeneralWriteResult {
        Ok(())
    }
    fn set_source_border(&mut self) -> GeneralWriteResult {
        Ok(())
    }
    fn set_label(&mut self, _: CsSev, _: LabelStyle) -> GeneralWriteResult {
        Ok(())
    }
    fn reset(&mut self) -> GeneralWriteResult {
        Ok(())
    }
}

/// Renders one diagnostic.
pub fn render(out: &mut Vec<u8>, file: &SourceFile, d: &Diagnostic, color: bool) -> std::io::Result<()> {
    if color {
        // codespan styles any `WriteColor` with its default colors.
        let mut w = Ansi::new(&mut *out);
        render_with(&mut w, file, d)
    } else {
        let mut w = Plain(&mut *out);
        render_with(&mut w, file, d)
    }
}

fn render_with(w: &mut dyn WriteStyle, file: &SourceFile, d: &Diagnostic) -> std::io::Result<()> {
    let config = Config::default();
    let sev = severity(d.severity);
    let err = |e: codespan_reporting::files::Error| std::io::Error::other(e.to_string());
    if d.span.is_none() {
        let mut r = Renderer::new(w, &config);
        let msg = format!("{}: {}", file.name, d.message);
        // No location: `FILE: error: message`.
        r.render_header(None, sev, None, &msg).map_err(err)?;
        for n in &d.notes {
            r.render_snippet_note(0, n).map_err(err)?;
        }
        return Ok(());
    }
    let start = (d.span.start as usize).min(file.text.len());
    let (line, col) = file.location(start);
    // codespan's `Locus` is not public: write `FILE:LINE:COL: ` before the header.
    write!(w, "{}:{line}:{col}: ", file.name)?;
    let mut r = Renderer::new(w, &config);
    r.render_header(None, sev, None, &d.message).map_err(err)?;
    // The primary line and any secondary label lines, in order.
    let mut labels: Vec<(usize, usize, usize, LabelStyle, &str)> = Vec::new();
    let all = std::iter::once((d.span, LabelStyle::Primary, d.label.as_str()))
        .chain(d.secondary.iter().map(|(s, m)| (*s, LabelStyle::Secondary, m.as_str())));
    for (span, style, msg) in all {
        if span.is_none() {
            continue;
        }
        let s = (span.start as usize).min(file.text.len());
        let e = (span.end as usize).clamp(s, file.text.len());
        labels.push((file.line_index(s), s, e, style, msg));
    }
    labels.sort_by_key(|l| (l.0, l.1));
    let max_line = labels.iter().map(|l| l.0 + 1).max().unwrap_or(1);
    let pad = max_line.to_string().len();
    r.render_snippet_empty(pad, sev, 0, &[]).map_err(err)?;
    let mut i = 0;
    let mut prev_line: Option<usize> = None;
    while i < labels.len() {
        let li = labels[i].0;
        if prev_line.is_some_and(|p| li > p + 1) {
            r.render_snippet_break(pad, sev, 0, &[]).map_err(err)?;
        }
        prev_line = Some(li);
        let range = file.line_range(li);
        let (shown, offset) = window(&file.text[range.clone()], labels[i].1.saturating_sub(range.start));
        let mut singles = Vec::new();
        while i < labels.len() && labels[i].0 == li {
            let (_, s, e, style, msg) = labels[i];
            let ls = (s - range.start).saturating_sub(offset).min(shown.len());
            let le = (e.min(range.end) - range.start).saturating_sub(offset).clamp(ls, shown.len());
            let ls = floor_char_boundary(&shown, ls);
            let le = floor_char_boundary(&shown, le).max(ls);
            singles.push((style, ls..le, msg));
            i += 1;
        }
        r.render_snippet_source(pad, li + 1, &shown, sev, &singles, 0, &[]).map_err(err)?;
    }
    r.render_snippet_empty(pad, sev, 0, &[]).map_err(err)?;
    for n in &d.notes {
        r.render_snippet_note(pad, n).map_err(err)?;
    }
    Ok(())
}

/// A window of a long line around byte `at`: the shown text and the byte offset it
/// starts at.
fn window(line: &str, at: usize) -> (String, usize) {
    if line.len() <= MAX_SHOWN_LINE {
        return (line.to_string(), 0);
    }
    let start = floor_char_boundary(line, at.saturating_sub(MAX_SHOWN_LINE / 2));
    let end = floor_char_boundary(line, (start + MAX_SHOWN_LINE).min(line.len()));
    let mut s = String::new();
    let mut offset = start;
    if start > 0 {
        s.push_str("...");
        // The "..." prefix shifts label columns by three bytes.
        offset = start.saturating_sub(3);
    }
    s.push_str(&line[start..end]);
    if end < line.len() {
        s.push_str("...");
    }
    (s, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_locus_then_snippet() {
        let f = SourceFile::new("t.rlx", "a = 1\nb = R.foo(x)\n");
        let d = Diagnostic::error(relax_ir::Span::new(10, 15), "unknown op `R.foo`").with_label("here");
        let text = render_all(&f, &[d], false);
        assert!(text.starts_with("t.rlx:2:5: error: unknown op `R.foo`\n"), "{text}");
        assert!(text.contains("2 │ b = R.foo(x)"), "{text}");
        assert!(text.contains("^^^^^ here"), "{text}");
    }

    #[test]
    fn long_lines_are_windowed() {
        let line = "x".repeat(5_000_000);
        let f = SourceFile::new("t.rlx", format!("{line}\n"));
        let d = Diagnostic::error(relax_ir::Span::new(4_000_000, 4_000_001), "bad");
        let text = render_all(&f, &[d], false);
        assert!(text.len() < 2_000, "{}", text.len());
        assert!(text.starts_with("t.rlx:1:4000001: error: bad"));
    }
}
