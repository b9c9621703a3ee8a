//! FileCheck-style messages: `file:line:col: error: …`, the line, and a caret under the column.

/// A named text with a line index, for turning byte offsets into messages.
pub struct Source<'a> {
    /// The name printed in messages (`<stdin>` or a path).
    pub name: &'a str,
    /// The (canonicalised) text.
    pub text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    /// Indexes `text` by line.
    pub fn new(name: &'a str, text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { name, text, line_starts }
    }

    /// The 1-based line and column of byte offset `off`.
    pub fn line_col(&self, off: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= off);
        (line, off - self.line_starts[line - 1] + 1)
    }

    /// The text of 1-based line `line`, without its newline.
    pub fn line_text(&self, line: usize) -> &'a str {
        let start = self.line_starts[line - 1];
        let end = self.text[start..].find('\n').map_or(self.text.len(), |i| start + i);
        &self.text[start..end]
    }

    /// Renders `name:line:col: kind: message`, the line and a caret at `off`.
    pub fn render(&self, off: usize, kind: &str, message: &str) -> String {
        let off = off.min(self.text.len());
        let (line, col) = self.line_col(off);
        let text = self.line_text(line);
        let pad: String = text.bytes().take(col - 1).map(|b| if b == b'\t' { '\t' } else { ' ' }).collect();
        format!("{}:{line}:{col}: {kind}: {message}\n{text}\n{pad}^\n", self.name)
    }
}

/// FileCheck's whitespace canonicalisation: drops the `\r` of `\r\n`, and unless `strict`,
/// turns each run of spaces and tabs into one space.
pub fn canonicalize(text: &str, strict: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if strict || (c != ' ' && c != '\t') {
            out.push(c);
            continue;
        }
        out.push(' ');
        while matches!(chars.peek(), Some(' ' | '\t')) {
            chars.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let s = Source::new("f", "ab\ncd\n");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(4), (2, 2));
        assert_eq!(s.line_col(6), (3, 1));
        assert_eq!(s.line_text(2), "cd");
        assert_eq!(s.render(4, "error", "x"), "f:2:2: error: x\ncd\n ^\n");
    }

    #[test]
    fn canonical_whitespace() {
        assert_eq!(canonicalize("a \t b\r\nc", false), "a b\nc");
        assert_eq!(canonicalize("a \t b\r\nc", true), "a \t b\nc");
    }
}
