//! Source spans: byte ranges into the text a module was parsed from.
//!
//! Spans never live inside IR nodes; they sit in per-function side tables
//! ([`crate::relax::RelaxSpans`], [`crate::tir::TirSpans`]). Lines and columns are computed
//! only when a diagnostic is rendered (by the driver, or the language server), from the
//! [`LineStarts`] of the text.

/// A half-open byte range `start..end` into the source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span of IR that did not come from text (built by a pass).
    pub const NONE: Span = Span { start: u32::MAX, end: u32::MAX };

    /// A span from byte offsets.
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    /// True for [`Span::NONE`].
    pub fn is_none(self) -> bool {
        self == Span::NONE
    }
    /// The smallest span covering both (a missing side is ignored).
    pub fn to(self, other: Span) -> Span {
        if self.is_none() {
            return other;
        }
        if other.is_none() {
            return self;
        }
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

impl Default for Span {
    fn default() -> Self {
        Span::NONE
    }
}

/// The line starts of a text, for turning byte offsets into lines and columns.
///
/// It holds no copy of the text: the methods that need it take the text it was built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineStarts {
    starts: Vec<usize>,
    len: usize,
}

impl LineStarts {
    /// The line starts of `text` (lines end at `\n`).
    pub fn new(text: &str) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineStarts { starts, len: text.len() }
    }

    /// The number of lines (one more than the number of `\n`).
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line containing byte `offset` (clamped to the text).
    pub fn line(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        self.starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    /// The byte range of line `index` of `text`, without its terminator (`\n` or `\r\n`);
    /// the empty range at the end of the text for a line past the end.
    pub fn line_range(&self, text: &str, index: usize) -> std::ops::Range<usize> {
        let start = self.starts.get(index).copied().unwrap_or(text.len());
        let mut end = self.starts.get(index + 1).map_or(text.len(), |&e| e.saturating_sub(1));
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end.max(start)
    }

    /// The 0-based line of byte `offset` of `text` and the text of that line before it (the
    /// offset clamped to the text and moved back to a character boundary): columns in
    /// characters or in UTF-16 units are counted on it.
    pub fn line_prefix<'t>(&self, text: &'t str, offset: usize) -> (usize, &'t str) {
        let offset = floor_char_boundary(text, offset);
        let line = self.line(offset);
        let start = self.starts[line].min(offset);
        (line, &text[start..offset])
    }
}

/// The largest char boundary of `s` not after `i` (clamped to `s`).
pub fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_prefixes() {
        let text = "ab\r\ncdé\nx";
        let lines = LineStarts::new(text);
        assert_eq!(lines.count(), 3);
        assert_eq!(lines.line_range(text, 0), 0..2);
        assert_eq!(lines.line_range(text, 1), 4..8);
        assert_eq!(lines.line_range(text, 7), text.len()..text.len());
        assert_eq!(lines.line(100), 2);
        // Inside `é`: back to its first byte.
        assert_eq!(lines.line_prefix(text, 7), (1, "cd"));
        assert_eq!(lines.line_prefix(text, 100), (2, "x"));
    }
}
