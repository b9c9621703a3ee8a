//! SentencePiece BPE as llama.cpp runs it (`llm_tokenizer_spm_session`): the text,
//! spaces written as `▁`, starts as one symbol per character; the adjacent pair whose
//! concatenation is the token of highest score is merged (the leftmost on ties) until
//! no pair is a token; a symbol that is not a token falls back to its bytes' tokens.

use crate::Error;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What the SPM merge loop needs from the vocabulary.
pub(crate) trait SpmVocab {
    /// The id of the token with exactly this text.
    fn id_of(&self, text: &[u8]) -> Option<u32>;
    /// The score of a token.
    fn score(&self, id: u32) -> f32;
}

/// A run of the text: `start..start + len`, linked to its neighbours.
#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

/// A candidate merge of two adjacent symbols.
#[derive(Debug, Clone, Copy)]
struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    len: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Bigram {}

impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bigram {
    /// The best bigram is the greatest: highest score, then leftmost.
    fn cmp(&self, other: &Self) -> Ordering {
        // Scores are never NaN (the tokenizer rejects such vocabularies).
        self.score.partial_cmp(&other.score).unwrap_or(Ordering::Equal).then(other.left.cmp(&self.left))
    }
}

/// The byte-fallback token of `byte`: `<0xXX>`, or else the byte itself as a token.
pub(crate) fn byte_token(vocab: &impl SpmVocab, byte: u8) -> Result<u32, Error> {
    let hex = format!("<0x{byte:02X}>");
    vocab.id_of(hex.as_bytes()).or_else(|| vocab.id_of(&[byte])).ok_or(Error::NoByteToken { byte })
}

/// Tokenizes `text` (already escaped: spaces as `▁`), appending to `out`.
pub(crate) fn tokenize(vocab: &impl SpmVocab, text: &str, out: &mut Vec<u32>) -> Result<(), Error> {
    let bytes = text.as_bytes();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    for (i, (start, c)) in text.char_indices().enumerate() {
        let len = c.len_utf8();
        symbols.push(Symbol { start, len, prev: i.checked_sub(1), next: (start + len < bytes.len()).then_some(i + 1) });
    }
    let mut queue = BinaryHeap::new();
    let try_add = |symbols: &[Symbol], queue: &mut BinaryHeap<Bigram>, left: Option<usize>, right: Option<usize>| {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let (l, r) = (symbols[left], symbols[right]);
        let len = l.len + r.len;
        if let Some(id) = vocab.id_of(&bytes[l.start..l.start + len]) {
            queue.push(Bigram { left, right, score: vocab.score(id), len });
        }
    };
    for i in 1..symbols.len() {
        try_add(&symbols, &mut queue, Some(i - 1), Some(i));
    }
    while let Some(bigram) = queue.pop() {
        let (l, r) = (symbols[bigram.left], symbols[bigram.right]);
        if l.len == 0 || r.len == 0 || l.len + r.len != bigram.len {
            continue;
        }
        symbols[bigram.left].len += r.len;
        symbols[bigram.right].len = 0;
        symbols[bigram.left].next = r.next;
        if let Some(next) = r.next {
            symbols[next].prev = Some(bigram.left);
        }
        let left = symbols[bigram.left];
        try_add(&symbols, &mut queue, left.prev, Some(bigram.left));
        try_add(&symbols, &mut queue, Some(bigram.left), left.next);
    }
    let mut at = if symbols.is_empty() { None } else { Some(0) };
    while let Some(i) = at {
        let s = symbols[i];
        let piece = &bytes[s.start..s.start + s.len];
        match vocab.id_of(piece) {
            Some(id) => out.push(id),
            None => {
                for &b in piece {
                    out.push(byte_token(vocab, b)?);
                }
            }
        }
        at = s.next;
    }
    Ok(())
}
