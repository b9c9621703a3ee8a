//! Source files as the driver sees them: a name, the text, and line starts for turning
//! byte offsets into `LINE:COL` (the line arithmetic is `relax_ir::span`'s, the
//! `--split-input-file` splitting `relax_parser::split`'s, shared with the language server).

use relax_ir::span::LineStarts;
pub use relax_ir::span::floor_char_boundary;
pub use relax_parser::split::{Chunk, split_input};

/// One input text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name printed in diagnostics (`test.rlx`, `<stdin>`, `<after legalize-ops>`).
    pub name: String,
    /// The text.
    pub text: String,
    lines: LineStarts,
}

impl SourceFile {
    /// A file from its name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let lines = LineStarts::new(&text);
        SourceFile { name: name.into(), text, lines }
    }
    /// The 0-based line containing byte `offset` (clamped to the text).
    pub fn line_index(&self, offset: usize) -> usize {
        self.lines.line(offset)
    }
    /// The byte range of line `index`, without its line terminator.
    pub fn line_range(&self, index: usize) -> std::ops::Range<usize> {
        self.lines.line_range(&self.text, index)
    }
    /// 1-based line and column (in characters) of byte `offset`.
    pub fn location(&self, offset: usize) -> (usize, usize) {
        let (line, before) = self.lines.line_prefix(&self.text, offset);
        (line + 1, before.chars().count() + 1)
    }
    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.lines.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        let f = SourceFile::new("t", "ab\ncdé\nx");
        assert_eq!(f.location(0), (1, 1));
        assert_eq!(f.location(4), (2, 2));
        assert_eq!(f.location(8), (3, 1));
        assert_eq!(f.line_range(1), 3..7);
        assert_eq!(f.location(100), (3, 2));
    }
}
