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
use relax_ir::diag::{Diagnostic, Severity, printable};

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
    let start = out.len();
    let r = if color {
        // codespan styles any `WriteColor` with its default colors.
        let mut w = Ansi::new(&mut *out);
        render_with(&mut w, file, d)
    } else {
        let mut w = Plain(&mut *out);
        render_with(&mut w, file, d)
    };
    if d.severity == Severity::Remark {
        // codespan has no remark severity: remarks render as notes, renamed in the header.
        let end = out[start..].iter().position(|&b| b == b'\n').map_or(out.len(), |p| start + p);
        if let Some(p) = out[start..end].windows(4).position(|w| w == b"note") {
            out.splice(start + p..start + p + 4, b"remark".iter().copied());
        }
    }
    r
}

fn render_with(w: &mut dyn WriteStyle, file: &SourceFile, d: &Diagnostic) -> std::io::Result<()> {
    let config = Config::default();
    let sev = severity(d.severity);
    let err = |e: codespan_reporting::files::Error| std::io::Error::other(e.to_string());
    let message = printable(&d.message);
    if d.span.is_none() {
        let mut r = Renderer::new(w, &config);
        let msg = format!("{}: {message}", file.name);
        // No location: `FILE: error: message`.
        r.render_header(None, sev, None, &msg).map_err(err)?;
        for n in &d.notes {
            r.render_snippet_note(0, &printable(n)).map_err(err)?;
        }
        return Ok(());
    }
    let start = (d.span.start as usize).min(file.text.len());
    let (line, col) = file.location(start);
    // codespan's `Locus` is not public: write `FILE:LINE:COL: ` before the header.
    write!(w, "{}:{line}:{col}: ", file.name)?;
    let mut r = Renderer::new(w, &config);
    r.render_header(None, sev, None, &message).map_err(err)?;
    // The primary line and any secondary label lines, in order.
    let mut labels: Vec<(usize, usize, usize, LabelStyle, &str)> = Vec::new();
    let label = printable(&d.label);
    let secondary: Vec<(relax_ir::Span, String)> = d.secondary.iter().map(|(s, m)| (*s, printable(m))).collect();
    let all = std::iter::once((d.span, LabelStyle::Primary, label.as_str()))
        .chain(secondary.iter().map(|(s, m)| (*s, LabelStyle::Secondary, m.as_str())));
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
        let (raw, offset) = window(&file.text[range.clone()], labels[i].1.saturating_sub(range.start));
        let mut shown = visible(&raw);
        let mut singles = Vec::new();
        while i < labels.len() && labels[i].0 == li {
            let (_, s, e, style, msg) = labels[i];
            let ls = (s - range.start).saturating_sub(offset).min(raw.len());
            let le = (e.min(range.end) - range.start).saturating_sub(offset).clamp(ls, raw.len());
            let ls = floor_char_boundary(&raw, ls);
            let le = floor_char_boundary(&raw, le).max(ls);
            let (ls, le) = (visible_offset(&raw, ls), visible_offset(&raw, le));
            singles.push((style, caret_range(&mut shown, ls, le), msg));
            i += 1;
        }
        r.render_snippet_source(pad, li + 1, &shown, sev, &singles, 0, &[]).map_err(err)?;
    }
    r.render_snippet_empty(pad, sev, 0, &[]).map_err(err)?;
    for n in &d.notes {
        r.render_snippet_note(pad, &printable(n)).map_err(err)?;
    }
    Ok(())
}

/// The range a label underlines in the shown line: an empty span (an error at the end of
/// the input, a missing token) underlines the character at its position, or a blank added
/// after the line's end, so that it still gets a caret.
fn caret_range(shown: &mut String, ls: usize, le: usize) -> std::ops::Range<usize> {
    if ls < le {
        return ls..le;
    }
    match shown.get(ls..).and_then(|rest| rest.chars().next()) {
        Some(c) => ls..ls + c.len_utf8(),
        None => {
            while shown.len() <= ls {
                shown.push(' ');
            }
            ls..ls + 1
        }
    }
}

/// A source line as shown: control characters other than tabs become Unicode control
/// pictures (`\0` shows as `␀`), so that they are visible, have a width for the caret,
/// and do not reach the terminal.
fn visible(line: &str) -> String {
    line.chars().map(control_picture).collect()
}

fn control_picture(c: char) -> char {
    match c {
        '\t' => c,
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\x7f' => '\u{2421}',
        _ if c.is_control() => '\u{fffd}',
        _ => c,
    }
}

/// The offset in `visible(line)` of byte `at` of `line` (a char boundary).
fn visible_offset(line: &str, at: usize) -> usize {
    line[..at].chars().map(|c| control_picture(c).len_utf8()).sum()
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
    fn control_characters_are_escaped_and_shown() {
        let f = SourceFile::new("t.rlx", "x = \"a\u{1b}[31mb\"\0 q\n");
        let d = Diagnostic::error(relax_ir::Span::new(12, 13), "unknown dtype `a\u{1b}[31m\nb`").with_label("here");
        let text = render_all(&f, &[d], false);
        assert!(text.starts_with("t.rlx:1:13: error: unknown dtype `a\\u{1b}[31m\\nb`\n"), "{text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\0'), "{text:?}");
        assert!(text.contains("1 │ x = \"a\u{241b}[31mb\"\u{2400} q"), "{text}");
        assert!(text.contains("│             ^ here"), "{text}");
    }

    #[test]
    fn empty_spans_get_a_caret() {
        // At the end of the input (after the last character of its line) and before a
        // character in the middle of a line.
        let f = SourceFile::new("t.rlx", "class Mo");
        let d = Diagnostic::error(relax_ir::Span::new(8, 8), "expected `:`, found end of file");
        let text = render_all(&f, &[d], false);
        assert!(text.starts_with("t.rlx:1:9: error: expected `:`"), "{text}");
        assert!(text.contains("│         ^"), "{text}");
        let f = SourceFile::new("t.rlx", "a = (1 2)\n");
        let d = Diagnostic::error(relax_ir::Span::new(7, 7), "expected `,`").with_label("here");
        let text = render_all(&f, &[d], false);
        assert!(text.contains("│        ^ here"), "{text}");
    }

    #[test]
    fn long_messages_are_cut() {
        let f = SourceFile::new("t.rlx", "x\n");
        let d = Diagnostic::error(relax_ir::Span::new(0, 1), format!("undefined variable `{}`", "a".repeat(10_000)));
        let text = render_all(&f, &[d], false);
        assert!(text.len() < 2_000 && text.contains("aaa..."), "{}", text.len());
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
