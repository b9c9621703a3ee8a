//! Output buffers with span records, and the `# from tvm.script import ...` header.
//!
//! Text is built line by line. A [`Line`] or [`Buf`] keeps the spans of entities written
//! into it relative to its own start; appending one buffer to another shifts them. This
//! lets the printer build pieces out of order (a function's declarations are collected
//! while its body is printed) and splice them together at the end.

use super::span_map::SpanKey;

/// A span record relative to the start of its buffer.
pub(crate) type SpanRec = (SpanKey, u32, u32);

/// One line being built (without indentation or newline).
#[derive(Clone, Debug, Default)]
pub(crate) struct Line {
    /// The text.
    pub text: String,
    /// Spans relative to the start of `text`.
    pub spans: Vec<SpanRec>,
}

impl Line {
    pub fn new() -> Line {
        Line::default()
    }
    pub fn from(s: impl Into<String>) -> Line {
        Line { text: s.into(), spans: Vec::new() }
    }
    /// The current end offset.
    pub fn pos(&self) -> u32 {
        offset(self.text.len())
    }
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
    }
    /// Records `key` from `start` to the current end.
    pub fn mark(&mut self, key: SpanKey, start: u32) {
        let end = self.pos();
        self.spans.push((key, start, end));
    }
    /// Appends another line, shifting its spans.
    pub fn append(&mut self, other: Line) {
        let base = self.pos();
        self.text.push_str(&other.text);
        self.spans.extend(other.spans.into_iter().map(|(k, s, e)| (k, s + base, e + base)));
    }
}

/// Several lines, each ending in `\n`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Buf {
    pub text: String,
    pub spans: Vec<SpanRec>,
}

impl Buf {
    pub fn new() -> Buf {
        Buf::default()
    }
    pub fn pos(&self) -> u32 {
        offset(self.text.len())
    }
    /// Writes `indent` spaces, the line and a newline.
    pub fn line(&mut self, indent: usize, line: Line) {
        for _ in 0..indent {
            self.text.push(' ');
        }
        let base = self.pos();
        self.text.push_str(&line.text);
        self.text.push('\n');
        self.spans.extend(line.spans.into_iter().map(|(k, s, e)| (k, s + base, e + base)));
    }
    /// Writes a plain line.
    pub fn str_line(&mut self, indent: usize, s: &str) {
        for _ in 0..indent {
            self.text.push(' ');
        }
        self.text.push_str(s);
        self.text.push('\n');
    }
    /// Writes an empty line.
    pub fn blank(&mut self) {
        self.text.push('\n');
    }
    /// Appends another buffer, shifting its spans.
    pub fn append(&mut self, other: Buf) {
        let base = self.pos();
        self.text.push_str(&other.text);
        self.spans.extend(other.spans.into_iter().map(|(k, s, e)| (k, s + base, e + base)));
    }
    /// Records `key` from `start` (an earlier [`Buf::pos`], at the start of a line's
    /// indentation) to the end of the last line written, skipping the indentation.
    pub fn mark_lines(&mut self, key: SpanKey, start: u32) {
        let bytes = self.text.as_bytes();
        let mut s = start as usize;
        while s < bytes.len() && bytes[s] == b' ' {
            s += 1;
        }
        let mut e = bytes.len();
        if e > s && bytes[e - 1] == b'\n' {
            e -= 1;
        }
        self.spans.push((key, offset(s), offset(e.max(s))));
    }
}

fn offset(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Which script prefixes a text uses (`I.`, `T.`, `R.`), as TVM's `ir_usage`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub ir: bool,
    pub tir: bool,
    pub relax: bool,
}

impl Usage {
    /// Adds the prefixes used by `text`: an `I.`, `T.` or `R.` that starts an identifier
    /// path, outside string literals and comments.
    pub fn scan(&mut self, text: &str) {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'"' | b'\'' => {
                    let q = b[i];
                    i += 1;
                    while i < b.len() && b[i] != q && b[i] != b'\n' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                b'#' => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                c @ (b'I' | b'T' | b'R') => {
                    let prev_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
                    if prev_ok && b.get(i + 1) == Some(&b'.') {
                        match c {
                            b'I' => self.ir = true,
                            b'T' => self.tir = true,
                            _ => self.relax = true,
                        }
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }
    pub fn union(self, o: Usage) -> Usage {
        Usage { ir: self.ir || o.ir, tir: self.tir || o.tir, relax: self.relax || o.relax }
    }
    pub fn any(self) -> bool {
        self.ir || self.tir || self.relax
    }
    /// The header comment lines, in TVM's order.
    pub fn header_lines(self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.ir {
            v.push("# from tvm.script import ir as I");
        }
        if self.tir {
            v.push("# from tvm.script import tirx as T");
            v.push("# from tvm.tirx.layout import Axis");
        }
        if self.relax {
            v.push("# from tvm.script import relax as R");
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_skips_strings_and_comments() {
        let mut u = Usage::default();
        u.scan("x = R.str(\"T.int64 I.x\")  # T.foo\n");
        assert_eq!(u, Usage { ir: false, tir: false, relax: true });
        u.scan("n = T.int64()\n");
        assert!(u.tir);
        let mut v = Usage::default();
        v.scan("cls.R.x AT.b");
        assert!(!v.any());
    }
}
