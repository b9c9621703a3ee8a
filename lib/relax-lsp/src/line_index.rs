//! Byte offsets ↔ LSP positions.
//!
//! The IR and the parser speak byte offsets into the UTF-8 text; LSP speaks zero-based
//! lines and columns counted in UTF-16 code units (the protocol's default position
//! encoding, the only one every client supports). A [`LineIndex`] converts both ways,
//! clamping anything out of range instead of failing: a client may send a position past
//! the end of a line or of the document.

use lsp_types::{Position, Range};
use relax_ir::span::LineStarts;

/// A text and its line starts, for converting offsets and positions.
#[derive(Clone, Debug)]
pub struct LineIndex {
    text: String,
    lines: LineStarts,
}

impl LineIndex {
    /// The index of `text` (a copy is kept).
    pub fn new(text: &str) -> LineIndex {
        LineIndex { text: text.to_string(), lines: LineStarts::new(text) }
    }

    /// The text the index was built from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The position of byte `offset` (clamped to the text and moved back to a character
    /// boundary).
    pub fn position(&self, offset: usize) -> Position {
        let (line, before) = self.lines.line_prefix(&self.text, offset);
        let character: usize = before.chars().map(char::len_utf16).sum();
        Position::new(to_u32(line), to_u32(character))
    }

    /// The range of the byte span `start..end`.
    pub fn range(&self, start: usize, end: usize) -> Range {
        let end = end.max(start);
        Range::new(self.position(start), self.position(end))
    }

    /// The range of an IR span ([`relax_ir::Span::NONE`] maps to the start of the text).
    pub fn span_range(&self, span: relax_ir::Span) -> Range {
        if span.is_none() {
            return Range::new(Position::new(0, 0), Position::new(0, 0));
        }
        self.range(span.start as usize, span.end as usize)
    }

    /// The byte offset of a position. A column past the end of its line is the line's end
    /// (before its terminator); a line past the end of the text is the end of the text; a
    /// column inside a surrogate pair is the start of that character.
    pub fn offset(&self, pos: Position) -> usize {
        let line = self.lines.line_range(&self.text, pos.line as usize);
        let mut units = 0usize;
        for (i, c) in self.text[line.clone()].char_indices() {
            let next = units + c.len_utf16();
            if next > pos.character as usize {
                return line.start + i;
            }
            units = next;
        }
        line.end
    }

    /// The range covering the whole text.
    pub fn full_range(&self) -> Range {
        self.range(0, self.text.len())
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        let idx = LineIndex::new("ab\n# é𝄞x\n");
        assert_eq!(idx.position(0), Position::new(0, 0));
        assert_eq!(idx.position(3), Position::new(1, 0));
        // `é` is 2 bytes, 1 unit; `𝄞` is 4 bytes, 2 units.
        assert_eq!(idx.position(3 + 2 + 2 + 4), Position::new(1, 5));
        assert_eq!(idx.offset(Position::new(1, 5)), 3 + 2 + 2 + 4);
        // Inside the surrogate pair: the start of the character.
        assert_eq!(idx.offset(Position::new(1, 4)), 3 + 2 + 2);
        // Past the end of a line, of the text.
        assert_eq!(idx.offset(Position::new(0, 99)), 2);
        assert_eq!(idx.offset(Position::new(9, 0)), idx.text().len());
        // Inside a multi-byte character.
        assert_eq!(idx.position(3 + 3), Position::new(1, 2));
    }

    #[test]
    fn crlf_line_end_is_not_a_column() {
        let idx = LineIndex::new("ab\r\ncd");
        assert_eq!(idx.offset(Position::new(0, 9)), 2);
        assert_eq!(idx.position(4), Position::new(1, 0));
    }
}
