//! `--verify-diagnostics`: checks the diagnostics a run produces against
//! `# expected-error {{...}}` comments in the input, in the manner of MLIR.
//!
//! A directive is `expected-error`, `expected-warning`, `expected-note` or
//! `expected-remark`, optionally followed by `@+N`, `@-N`, `@above` or `@below` (the line
//! it refers to, relative to the comment's line; default: the same line), then the
//! message in `{{...}}`, matched as a substring. Every produced diagnostic must be
//! expected and every expected one produced, with the same severity.

use relax_ir::Span;
use relax_ir::diag::{Diagnostic, Severity};

use crate::source::SourceFile;

/// One expected diagnostic.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// Severity.
    pub severity: Severity,
    /// 0-based line it refers to.
    pub line: usize,
    /// Substring of the message.
    pub message: String,
    /// Where the directive is written.
    pub span: Span,
}

/// Reads the directives of `text[start..end]` (a chunk of `file`).
pub fn collect(file: &SourceFile, start: usize, end: usize) -> Result<Vec<Expected>, Diagnostic> {
    let mut out = Vec::new();
    let first = file.line_index(start);
    let last = file.line_index(end.saturating_sub(1).max(start));
    for li in first..=last {
        let range = file.line_range(li);
        let line = &file.text[range.clone()];
        let Some(hash) = line.find('#') else { continue };
        let mut rest = &line[hash..];
        let mut offset = range.start + hash;
        while let Some(pos) = rest.find("expected-") {
            let dir_start = offset + pos;
            let after = &rest[pos + "expected-".len()..];
            let (severity, len) = if after.starts_with("error") {
                (Severity::Error, 5)
            } else if after.starts_with("warning") {
                (Severity::Warning, 7)
            } else if after.starts_with("note") {
                (Severity::Note, 4)
            } else if after.starts_with("remark") {
                (Severity::Remark, 6)
            } else {
                rest = after;
                offset = dir_start + "expected-".len();
                continue;
            };
            let mut tail = &after[len..];
            let mut target = li as i64;
            if let Some(t) = tail.strip_prefix('@') {
                let n_end = t.find(|c: char| c.is_whitespace() || c == '{').unwrap_or(t.len());
                let spec = &t[..n_end];
                target = match spec {
                    "above" => li as i64 - 1,
                    "below" => li as i64 + 1,
                    _ => match spec.parse::<i64>() {
                        Ok(n) => li as i64 + n,
                        Err(_) => {
                            let sp = Span::new(dir_start as u32, (dir_start + 9 + len + n_end + 1) as u32);
                            return Err(Diagnostic::error(sp, format!("invalid line offset `@{spec}`")));
                        }
                    },
                };
                tail = &t[n_end..];
            }
            let tail_trim = tail.trim_start();
            let Some(body) = tail_trim.strip_prefix("{{") else {
                let sp = Span::new(dir_start as u32, (dir_start + 9 + len) as u32);
                return Err(Diagnostic::error(sp, "expected `{{` after the directive"));
            };
            let Some(close) = body.find("}}") else {
                let sp = Span::new(dir_start as u32, (dir_start + 9 + len) as u32);
                return Err(Diagnostic::error(sp, "unterminated `{{`"));
            };
            if target < 0 || target as usize >= file.line_count() {
                let sp = Span::new(dir_start as u32, (dir_start + 9 + len) as u32);
                return Err(Diagnostic::error(sp, "the directive refers to a line outside the file"));
            }
            out.push(Expected {
                severity,
                line: target as usize,
                message: body[..close].to_string(),
                span: Span::new(dir_start as u32, (dir_start + 9 + len) as u32),
            });
            let consumed = (body.as_ptr() as usize - rest.as_ptr() as usize) + close + 2;
            offset += consumed;
            rest = &rest[consumed..];
        }
    }
    Ok(out)
}

/// Matches produced diagnostics against the expected ones; returns the mismatches as
/// diagnostics to report (empty when everything matched).
pub fn check(file: &SourceFile, expected: &[Expected], produced: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut used = vec![false; expected.len()];
    let mut problems = Vec::new();
    for d in produced {
        let line = if d.span.is_none() { usize::MAX } else { file.line_index(d.span.start as usize) };
        let hit = expected
            .iter()
            .enumerate()
            .find(|(i, e)| !used[*i] && e.severity == d.severity && e.line == line && d.message.contains(&e.message));
        match hit {
            Some((i, _)) => used[i] = true,
            None => {
                let mut p = Diagnostic::error(d.span, format!("unexpected {}: {}", d.severity.as_str(), d.message));
                p.label = d.label.clone();
                problems.push(p);
            }
        }
    }
    for (e, u) in expected.iter().zip(used) {
        if !u {
            problems.push(Diagnostic::error(
                e.span,
                format!("expected {} \"{}\" was not produced", e.severity.as_str(), e.message),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_directives() {
        let text = "x\n# expected-error@+1 {{bad thing}}\ny  # expected-warning {{w}}\n# expected-note@-4 {{n}}\n";
        let f = SourceFile::new("t", text);
        assert!(collect(&f, 0, text.len()).is_err(), "@-4 from line 3 is outside the file");
        let text = "x\n# expected-error@+1 {{bad thing}}\ny  # expected-warning {{w}}\n";
        let f = SourceFile::new("t", text);
        let e = collect(&f, 0, text.len()).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].line, e[0].message.as_str()), (2, "bad thing"));
        assert_eq!((e[1].line, e[1].severity), (2, Severity::Warning));
        let d = Diagnostic::error(Span::new(text.find("y  ").unwrap() as u32, 0), "a bad thing happened");
        let w = Diagnostic::warning(Span::new(text.find("y  ").unwrap() as u32, 0), "w!");
        assert!(check(&f, &e, &[d.clone(), w]).is_empty());
        assert_eq!(check(&f, &e, &[d]).len(), 1);
    }
}
