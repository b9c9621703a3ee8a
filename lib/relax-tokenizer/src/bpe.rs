//! Byte-level BPE as llama.cpp runs it (`llm_tokenizer_bpe_session`): each word of the
//! pre-tokenizer, written in GPT-2's byte alphabet, starts as one symbol per
//! character; the adjacent pair of lowest merge rank is merged (the leftmost on ties)
//! until no pair has a rank. A final symbol that is not a token falls back to the
//! tokens of its single bytes, where there are any.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the BPE merge loop needs from the vocabulary.
pub(crate) trait BpeVocab {
    /// The id of the token with exactly this text.
    fn id_of(&self, text: &[u8]) -> Option<u32>;
    /// The rank of the merge of two tokens, if they merge.
    fn rank(&self, left: u32, right: u32) -> Option<u32>;
    /// Whether a word that is a token is taken whole (llama.cpp's `ignore_merges`).
    fn ignore_merges(&self) -> bool;
}

#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

/// Tokenizes one word, already in GPT-2's byte alphabet, appending to `out`.
pub(crate) fn tokenize_word(vocab: &impl BpeVocab, word: &str, out: &mut Vec<u32>) {
    let bytes = word.as_bytes();
    if vocab.ignore_merges() {
        if let Some(id) = vocab.id_of(bytes) {
            out.push(id);
            return;
        }
    }
    let mut symbols: Vec<Symbol> = Vec::with_capacity(word.len());
    for (i, (start, c)) in word.char_indices().enumerate() {
        let len = c.len_utf8();
        symbols.push(Symbol { start, len, prev: i.checked_sub(1), next: (start + len < bytes.len()).then_some(i + 1) });
    }
    // (rank, left, right, combined length): the least is the next merge.
    let mut queue: BinaryHeap<Reverse<(u32, usize, usize, usize)>> = BinaryHeap::new();
    let text = |s: &Symbol| &bytes[s.start..s.start + s.len];
    let try_add = |symbols: &[Symbol], queue: &mut BinaryHeap<_>, left: Option<usize>, right: Option<usize>| {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let (l, r) = (&symbols[left], &symbols[right]);
        let (Some(a), Some(b)) = (vocab.id_of(text(l)), vocab.id_of(text(r))) else {
            return;
        };
        if let Some(rank) = vocab.rank(a, b) {
            queue.push(Reverse((rank, left, right, l.len + r.len)));
        }
    };
    for i in 1..symbols.len() {
        try_add(&symbols, &mut queue, Some(i - 1), Some(i));
    }
    while let Some(Reverse((_, left, right, len))) = queue.pop() {
        let (l, r) = (symbols[left], symbols[right]);
        // A stale candidate: one side was merged away or grew since.
        if l.len == 0 || r.len == 0 || l.len + r.len != len {
            continue;
        }
        symbols[left].len += r.len;
        symbols[right].len = 0;
        symbols[left].next = r.next;
        if let Some(next) = r.next {
            symbols[next].prev = Some(left);
        }
        let merged = symbols[left];
        try_add(&symbols, &mut queue, merged.prev, Some(left));
        try_add(&symbols, &mut queue, Some(left), merged.next);
    }
    for s in symbols.iter().filter(|s| s.len > 0) {
        let piece = text(s);
        match vocab.id_of(piece) {
            Some(id) => out.push(id),
            None => out.extend(piece.iter().filter_map(|&b| vocab.id_of(&[b]))),
        }
    }
}
