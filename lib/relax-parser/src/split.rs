//! `--split-input-file` input: one text holding several independent files, separated by
//! `# -----` marker lines (the convention of `relax-opt --split-input-file`, also followed
//! by the language server so that it reports the same diagnostics).
//!
//! Each chunk is handed to the parser as the whole text with every other chunk blanked
//! out (same byte length, newlines kept), so that the byte offsets in its diagnostics, and
//! therefore their lines and columns, are those of the whole text.

/// One chunk of a split text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The chunk's text, with every other chunk blanked out so that byte offsets (and
    /// therefore line numbers) stay those of the whole file.
    pub text: String,
    /// First byte of the chunk in the file.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// True for a split marker line: `# -----` at column 0 (dump headers
/// `# ----- IR Dump ... -----` also start with it).
pub fn is_split_marker(line: &str) -> bool {
    line.trim_end().starts_with("# -----")
}

/// Splits a text at `# -----` lines; a text without markers is one chunk, itself.
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
    if bounds.len() == 1 {
        return vec![Chunk { text: text.to_string(), start: 0, end: text.len() }];
    }
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
    fn splits_keep_offsets() {
        let text = "a\n# -----\nbé\n# ----- IR Dump After x -----\nc";
        let chunks = split_input(text);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.text.len() == text.len()));
        assert_eq!(chunks[1].text.trim(), "bé");
        assert_eq!(&text[chunks[1].start..chunks[1].end], "bé\n");
        assert_eq!(chunks[2].text.lines().count(), text.lines().count());
    }

    #[test]
    fn no_marker_is_one_chunk() {
        assert_eq!(split_input("x\n# ---\n"), vec![Chunk { text: "x\n# ---\n".into(), start: 0, end: 8 }]);
    }
}
