//! Pre-tokenizer splitting as llama.cpp's `unicode_regex_split` does it.
//!
//! A pre-tokenizer is a list of patterns applied in turn: each pattern splits every
//! piece the previous ones left into its matches and the text between them (which
//! stays a piece of its own). llama.cpp runs a pattern that uses the classes
//! `\p{N}`, `\p{L}`, `\p{P}`, `\p{M}` or `\p{S}` on a *collapsed* text: ASCII stays as it
//! is, other whitespace becomes `\v`, and every other code point becomes one stand-in
//! character for its class, while `\p{X}` becomes a set of that stand-in and the ASCII
//! members of the class. Its hand-written splitters for the GPT-2, Llama 3 and Qwen 2
//! patterns implement the same classes. A pattern without those classes runs on the
//! code points, non-ASCII whitespace again replaced by `\v`.
//!
//! Here the same transformation is applied and the patterns run on `fancy-regex`
//! (leftmost-first backtracking with look-around, as C++'s ECMAScript `std::regex`).
//! The stand-ins are private-use characters, which the transformation never leaves in
//! the text otherwise.

use crate::Error;
use crate::unicode::{Class, class_of};
use fancy_regex::Regex;

/// The stand-ins of the collapsed text, and the ASCII members llama.cpp adds to each
/// class in a collapsed pattern (its `k_ucat_map`; note that `~` is not among the
/// symbols there, although Unicode calls it one).
const CLASSES: [(&str, char, &str); 5] = [
    (r"\p{N}", '\u{E001}', "0-9"),
    (r"\p{L}", '\u{E002}', "A-Za-z"),
    (r"\p{P}", '\u{E003}', r"!-#%-*,-/:;?@\[-\]_\{\}"),
    (r"\p{M}", '\u{E004}', ""),
    (r"\p{S}", '\u{E005}', r"\$\+<=>\^`\|"),
];

/// The stand-in of code points of no class in `CLASSES`.
const OTHER: char = '\u{E000}';

/// One compiled pattern.
#[derive(Debug)]
struct Pattern {
    /// The pattern as llama.cpp writes it, for error messages.
    source: String,
    regex: Regex,
    /// Whether it runs on the collapsed text.
    collapsed: bool,
}

/// A compiled pre-tokenizer: its patterns, in order.
#[derive(Debug)]
pub(crate) struct Splitter {
    patterns: Vec<Pattern>,
}

/// A transformed copy of the text with one character per input character, and the
/// byte offset of every character (plus the end).
struct Transformed {
    text: String,
    offsets: Vec<usize>,
}

impl Transformed {
    fn new(chars: &[char], map: impl Fn(char) -> char) -> Transformed {
        let mut text = String::with_capacity(chars.len());
        let mut offsets = Vec::with_capacity(chars.len() + 1);
        for &c in chars {
            offsets.push(text.len());
            text.push(map(c));
        }
        offsets.push(text.len());
        Transformed { text, offsets }
    }

    /// The character index of a byte offset that is a character boundary.
    fn char_index(&self, byte: usize) -> usize {
        self.offsets.partition_point(|&o| o < byte)
    }
}

fn collapse(c: char) -> char {
    if c.is_ascii() {
        return c;
    }
    if c.is_whitespace() {
        return '\u{0B}';
    }
    let stand_in = |i: usize| CLASSES[i].1;
    match class_of(c) {
        Class::Number => stand_in(0),
        Class::Letter => stand_in(1),
        Class::Punctuation => stand_in(2),
        Class::Mark => stand_in(3),
        Class::Symbol => stand_in(4),
        Class::Other => OTHER,
    }
}

fn widen(c: char) -> char {
    if !c.is_ascii() && c.is_whitespace() { '\u{0B}' } else { c }
}

/// Whether llama.cpp runs `pattern` on the collapsed text.
fn uses_classes(pattern: &str) -> bool {
    CLASSES.iter().any(|(class, _, _)| pattern.contains(class))
}

/// `pattern` with every `\p{X}` of `CLASSES` replaced by its stand-in and ASCII
/// members, bracketed unless already inside a bracket expression.
fn collapse_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut inside = false;
    let mut prev: Option<char> = None;
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if let Some((class, stand_in, ascii)) = CLASSES.iter().find(|(class, _, _)| rest.starts_with(class)) {
            if !inside {
                out.push('[');
            }
            out.push(*stand_in);
            out.push_str(ascii);
            if !inside {
                out.push(']');
            }
            rest = &rest[class.len()..];
            prev = Some('}');
            continue;
        }
        if c == '[' && prev != Some('\\') {
            inside = true;
        } else if c == ']' && inside && prev != Some('\\') {
            inside = false;
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

impl Splitter {
    /// Compiles the patterns of a pre-tokenizer.
    pub(crate) fn new(patterns: &[&str]) -> Result<Splitter, Error> {
        let patterns = patterns
            .iter()
            .map(|&pattern| {
                let collapsed = uses_classes(pattern);
                let source = if collapsed { collapse_pattern(pattern) } else { pattern.to_string() };
                let regex = Regex::new(&source)
                    .map_err(|e| Error::Regex { pattern: pattern.to_string(), message: e.to_string() })?;
                Ok(Pattern { source: pattern.to_string(), regex, collapsed })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Splitter { patterns })
    }

    /// Splits `text` into the pre-tokenizer's words, in order; they concatenate to
    /// `text`.
    pub(crate) fn split<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, Error> {
        let chars: Vec<char> = text.chars().collect();
        let mut collapsed: Option<Transformed> = None;
        let mut wide: Option<Transformed> = None;
        // Piece lengths in characters.
        let mut lengths = vec![chars.len()];
        for pattern in &self.patterns {
            let transformed = if pattern.collapsed {
                collapsed.get_or_insert_with(|| Transformed::new(&chars, collapse))
            } else {
                wide.get_or_insert_with(|| Transformed::new(&chars, widen))
            };
            let mut next = Vec::with_capacity(lengths.len());
            let mut start = 0;
            for &len in &lengths {
                let base = transformed.offsets[start];
                let piece = &transformed.text[base..transformed.offsets[start + len]];
                let mut done = start;
                for found in pattern.regex.find_iter(piece) {
                    let found =
                        found.map_err(|e| Error::Regex { pattern: pattern.source.clone(), message: e.to_string() })?;
                    if found.start() == found.end() {
                        continue;
                    }
                    let first = transformed.char_index(base + found.start());
                    let last = transformed.char_index(base + found.end());
                    if first > done {
                        next.push(first - done);
                    }
                    next.push(last - first);
                    done = last;
                }
                if start + len > done {
                    next.push(start + len - done);
                }
                start += len;
            }
            lengths = next;
        }
        let mut byte_offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        byte_offsets.push(text.len());
        let mut words = Vec::with_capacity(lengths.len());
        let mut start = 0;
        for len in lengths {
            if len > 0 {
                words.push(&text[byte_offsets[start]..byte_offsets[start + len]]);
            }
            start += len;
        }
        Ok(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PreTokenizer;
    use crate::pretok::preset_for;
    use proptest::prelude::*;

    fn split(pre: &str, text: &str) -> Vec<String> {
        let kind = preset_for(Some(pre)).unwrap().kind;
        let splitter = Splitter::new(&kind.patterns()).unwrap();
        splitter.split(text).unwrap().into_iter().map(String::from).collect()
    }

    #[test]
    fn llama3_words() {
        assert_eq!(
            split("llama-bpe", "Hello world's 12345 !!\n\n  x"),
            ["Hello", " world", "'s", " ", "123", "45", " !!\n\n", " ", " x"]
        );
        // Non-ASCII letters are letters, non-ASCII spaces are spaces.
        assert_eq!(split("llama-bpe", "Grüße\u{3000}世界"), ["Grüße", "\u{3000}世界"]);
    }

    #[test]
    fn qwen2_single_digits_and_default_triples() {
        assert_eq!(split("qwen2", "a 2024"), ["a", " ", "2", "0", "2", "4"]);
        // default: punctuation runs, GPT-2's pattern, digit runs, then triples from the left.
        assert_eq!(split("default", "x=12345, y"), ["x", "=", "123", "45", ",", " y"]);
    }

    #[test]
    fn gpt2_whitespace_runs() {
        assert_eq!(split("gpt-2", "a   b\t\tc  "), ["a", "  ", " b", "\t", "\t", "c", "  "]);
    }

    #[test]
    fn collapsed_patterns() {
        assert_eq!(collapse_pattern(r"\p{N}{1,3}"), "[\u{E001}0-9]{1,3}");
        assert_eq!(collapse_pattern(r"[^\s\p{L}]"), "[^\\s\u{E002}A-Za-z]");
        assert_eq!(collapse_pattern(r"\[\p{M}]"), "\\[[\u{E004}]]");
    }

    /// One splitter per pre-tokenizer kind.
    fn all_splitters() -> &'static [(PreTokenizer, Splitter)] {
        static ALL: std::sync::OnceLock<Vec<(PreTokenizer, Splitter)>> = std::sync::OnceLock::new();
        ALL.get_or_init(|| {
            let mut kinds: Vec<PreTokenizer> = Vec::new();
            for name in PreTokenizer::NAMES {
                let kind = preset_for(Some(name)).unwrap().kind;
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            kinds.into_iter().map(|k| (k, Splitter::new(&k.patterns()).unwrap())).collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every pre-tokenizer's words concatenate to the text, none empty.
        #[test]
        fn words_cover_the_text(text in "\\PC{0,40}|[ \t\r\n\u{a0}\u{3000}a-zA-Z0-9'.,!?é中😀]{0,40}") {
            for (kind, splitter) in all_splitters() {
                let words = splitter.split(&text).unwrap();
                prop_assert_eq!(words.concat(), text.clone(), "pre-tokenizer {:?}", kind);
                prop_assert!(words.iter().all(|w| !w.is_empty()));
            }
        }
    }
}
