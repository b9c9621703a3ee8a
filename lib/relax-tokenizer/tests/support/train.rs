//! Test vocabularies "trained" on a small multilingual corpus: a SentencePiece-style
//! vocabulary (byte fallback, pieces scored by frequency, ties included on purpose)
//! and a byte-level BPE vocabulary (all 256 byte tokens, merges by pair frequency).
//! Nothing here needs to be a good tokenizer; it only needs realistic merges.

use relax_tokenizer::{ModelKind, TokenType, Vocab};
use std::collections::{BTreeMap, HashMap};

/// The training text: sentences of the kinds the comparisons use.
pub const CORPUS: &str = "The quick brown fox jumps over the lazy dog. It's 2024 and we're \
    testing tokenizers: they'll split words, numbers like 12345 and 3.14159, and code. \
    fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); } // comment\n\
    def hello(name): return f\"Hello, {name}!\"\n\
    Ça va? Les élèves français étudient à l'école. Größe, Straße, über, Ärger. \
    ¿Dónde está la biblioteca? Mañana será otro día. \
    Привет, как дела? Это тест токенизатора. Ελληνικά γράμματα. \
    日本語のテキストです。東京は大きな都市です。中文分词测试，你好世界。한국어 문장입니다. \
    Emoji: 😀 🎉 👍🏽 🇫🇷 ❤️ — and symbols: $100, 50%, a+b=c, x^2, ~tilde, <tag>, [list], |pipe|. \
    Whitespace:   three spaces,\ttab,\n\nnewlines,\r\nCRLF.   \
    the the the and and of of to to in in is is that that it it with with for for";

/// Substrings of `text` up to `max` characters, with their counts.
fn substrings(text: &str, max: usize) -> HashMap<String, usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut counts = HashMap::new();
    for i in 0..chars.len() {
        for len in 1..=max.min(chars.len() - i) {
            let s: String = chars[i..i + len].iter().collect();
            *counts.entry(s).or_insert(0) += 1;
        }
    }
    counts
}

/// An SPM vocabulary: `<unk>`, `<s>`, `</s>`, the 256 byte tokens, special tokens,
/// then the most frequent substrings (spaces as `▁`) scored by frequency and length,
/// rounded so that ties occur.
pub fn spm_vocab(n_pieces: usize) -> Vocab {
    let mut tokens: Vec<Vec<u8>> = vec![b"<unk>".to_vec(), b"<s>".to_vec(), b"</s>".to_vec()];
    let mut types = vec![TokenType::Unknown, TokenType::Control, TokenType::Control];
    let mut scores = vec![0.0f32; 3];
    for b in 0..=255u8 {
        tokens.push(format!("<0x{b:02X}>").into_bytes());
        types.push(TokenType::Byte);
        scores.push(0.0);
    }
    for (text, ty) in [
        ("<|user|>", TokenType::UserDefined),
        ("<|assistant|>", TokenType::Control),
        ("<|end|>", TokenType::Control),
        ("<|endoftext|>", TokenType::Control),
    ] {
        tokens.push(text.as_bytes().to_vec());
        types.push(ty);
        scores.push(0.0);
    }
    let escaped = format!("▁{}", CORPUS.replace(' ', "▁"));
    let mut pieces: Vec<(String, usize)> = substrings(&escaped, 6)
        .into_iter()
        .filter(|(s, n)| *n >= 2 || s.chars().count() == 1)
        .filter(|(s, _)| !s.contains(['\n', '\r', '\t']))
        .collect();
    // Most useful first: count times length, then the text for determinism.
    pieces.sort_by(|a, b| (b.1 * b.0.chars().count()).cmp(&(a.1 * a.0.chars().count())).then(a.0.cmp(&b.0)));
    for (text, count) in pieces.into_iter().take(n_pieces) {
        let score = -((1000.0 / (count * text.chars().count()) as f32).round() / 4.0);
        tokens.push(text.into_bytes());
        types.push(TokenType::Normal);
        scores.push(score);
    }
    let mut vocab = Vocab::new(ModelKind::Spm, tokens);
    vocab.scores = scores;
    vocab.token_types = types;
    vocab.special.bos = Some(1);
    vocab.special.eos = Some(2);
    vocab.special.unk = Some(0);
    vocab
}

/// GPT-2's byte-to-unicode character for `b`.
pub fn gpt2_char(b: u8) -> char {
    let printable = |x: u8| matches!(x, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(b) {
        return b as char;
    }
    let n = (0..b).filter(|&x| !printable(x)).count();
    char::from_u32(256 + n as u32).unwrap()
}

/// A byte-level BPE vocabulary: the 256 byte tokens, `n_merges` merges learned on the
/// corpus's space-prefixed words, and special tokens.
pub fn bpe_vocab(pre: &str, n_merges: usize) -> Vocab {
    let mut tokens: Vec<String> = (0..=255u8).map(|b| gpt2_char(b).to_string()).collect();
    let mut words: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for (i, word) in CORPUS.split(' ').enumerate() {
        let word = if i == 0 { word.to_string() } else { format!(" {word}") };
        let symbols = word.bytes().map(|b| gpt2_char(b).to_string()).collect();
        *words.entry(symbols).or_insert(0) += 1;
    }
    let mut merges = Vec::new();
    let mut known: std::collections::HashSet<String> = tokens.iter().cloned().collect();
    for _ in 0..n_merges {
        let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (symbols, count) in &words {
            for w in symbols.windows(2) {
                *pairs.entry((w[0].clone(), w[1].clone())).or_insert(0) += count;
            }
        }
        let Some(((a, b), _)) = pairs.into_iter().max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0))) else {
            break;
        };
        let merged = format!("{a}{b}");
        merges.push(format!("{a} {b}"));
        if known.insert(merged.clone()) {
            tokens.push(merged.clone());
        }
        words = words
            .into_iter()
            .map(|(symbols, count)| {
                let mut out: Vec<String> = Vec::with_capacity(symbols.len());
                let mut i = 0;
                while i < symbols.len() {
                    if i + 1 < symbols.len() && symbols[i] == a && symbols[i + 1] == b {
                        out.push(merged.clone());
                        i += 2;
                    } else {
                        out.push(symbols[i].clone());
                        i += 1;
                    }
                }
                (out, count)
            })
            .fold(BTreeMap::new(), |mut m, (s, c)| {
                *m.entry(s).or_insert(0) += c;
                m
            });
    }
    let specials = [
        ("<|endoftext|>", TokenType::Control),
        ("<|im_start|>", TokenType::Control),
        ("<|im_end|>", TokenType::Control),
        ("<tool_call>", TokenType::UserDefined),
    ];
    let first_special = tokens.len() as u32;
    let mut types = vec![TokenType::Normal; tokens.len()];
    for (text, ty) in specials {
        tokens.push(text.to_string());
        types.push(ty);
    }
    let mut vocab = Vocab::from_strs(ModelKind::Bpe, &tokens);
    vocab.pre = Some(pre.to_string());
    vocab.token_types = types;
    vocab.merges = merges;
    vocab.special.bos = Some(first_special);
    vocab.special.eos = Some(first_special);
    vocab
}
