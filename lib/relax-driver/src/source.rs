//! Source files as the driver sees them: a name, the text, and line starts for turning
//! byte offsets into `LINE:COL`.

/// One input text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name printed in diagnostics (`test.rlx`, `<stdin>`, `<after legalize-ops>`).
    pub name: String,
    /// The text.
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A file from its name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        SourceFile { name: name.into(), text, line_starts }
    }
    /// The 0-based line containing byte `offset` (clamped to the text).
    pub fn line_index(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }
    /// The byte range of line `index`, without its line terminator.
    pub fn line_range(&self, index: usize) -> std::ops::Range<usize> {
        let start = self.line_starts.get(index).copied().unwrap_or(self.text.len());
        let mut end = self.line_starts.get(index + 1).map_or(self.text.len(), |&e| e.saturating_sub(1));
        if end > start && self.text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        start..end.max(start)
    }
    /// 1-based line and column (in characters) of byte `offset`.
    pub fn location(&self, offset: usize) -> (usize, usize) {
        let line = self.line_index(offset);
        let start = self.line_starts[line];
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()).max(start));
        let col = self.text[start..offset].chars().count() + 1;
        (line + 1, col)
    }
    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// The largest char boundary not after `i`.
pub fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One chunk of `--split-input-file` input.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// The chunk's text, with every other chunk blanked out so that byte offsets (and
    /// therefore line numbers) stay those of the whole file.
    pub text: String,
    /// First byte of the chunk in the file.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// True for a split marker line: `# -----` (dump headers `# ----- IR Dump ... -----`
/// also start with it).
pub fn is_split_marker(line: &str) -> bool {
    line.trim_end().starts_with("# -----")
}

/// Splits a file at `# -----` lines.
pub fn split_input(text: &str) -> Vec<Chunk> {
    let mut bounds = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if is_split_marker(line) {
            bounds.push((start, pos));
            start = pos + line.len();
        }
        pos += line.len();
    }
    bounds.push((start, text.len()));
    bounds
        .into_iter()
        .map(|(s, e)| {
            let mut blanked = String::with_capacity(text.len());
            for (i, c) in text.char_indices() {
                if (s..e).contains(&i) || c == '\n' {
                    blanked.push(c);
                } else {
                    // Keep byte offsets: a blank of the same byte length.
                    blanked.extend(std::iter::repeat_n(' ', c.len_utf8()));
                }
            }
            Chunk { text: blanked, start: s, end: e }
        })
        .collect()
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

    #[test]
    fn splits_keep_offsets() {
        let text = "a\n# -----\nbb\n# ----- IR Dump After x -----\nc";
        let chunks = split_input(text);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[1].text.len(), text.len());
        assert_eq!(chunks[1].text.trim(), "bb");
        assert_eq!(&text[chunks[1].start..chunks[1].end], "bb\n");
    }
}
