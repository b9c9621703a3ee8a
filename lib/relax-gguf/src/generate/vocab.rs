//! Synthetic vocabularies of any size, written with the keys llama.cpp's converter writes:
//! a SentencePiece one (`tokenizer.ggml.model = "llama"`: pieces with scores and token
//! types) and a byte-level BPE one (`"gpt2"`: tokens, types and merges), so that tokenizers
//! can be tested on files of both kinds without downloading a model.
//!
//! Every piece or merged token is reachable: it is the concatenation of two earlier ones.

use crate::error::{GgufError, Result};
use crate::value::{Array, StrArray, Value};

/// The kind of vocabulary to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VocabKind {
    /// SentencePiece (`llama`): `<unk>`, `<s>`, `</s>`, 256 byte tokens `<0x00>`..`<0xFF>`,
    /// then pieces with `▁` for a space, scored by rank.
    SentencePiece,
    /// GPT-2 byte-level BPE (`gpt2`): 256 byte characters, merged tokens in merge order,
    /// then the special tokens.
    Bpe,
}

/// llama.cpp's token types (`llama_token_type`, gguf-py's `TokenType`).
pub mod token_type {
    /// An ordinary token.
    pub const NORMAL: i32 = 1;
    /// The unknown token.
    pub const UNKNOWN: i32 = 2;
    /// A control token (`<s>`, `<|eot_id|>`).
    pub const CONTROL: i32 = 3;
    /// A token the user added.
    pub const USER_DEFINED: i32 = 4;
    /// An unused slot.
    pub const UNUSED: i32 = 5;
    /// A byte fallback token (`<0x0A>`).
    pub const BYTE: i32 = 6;
}

const WORDS: &str = "the of and to in is that it for on was with as be at by this have from or one had not but \
    what all were when we there can an your which their said if do will each about how up out them then she many \
    some so these would other into has more her two like him see time could no make than first been its who now \
    people my made over did down only way find use may water long little very after words called just where most \
    know hello world model token relax tensor";

/// The metadata entries of a vocabulary of `n_vocab` tokens for architecture `arch`.
pub fn vocab_metadata(kind: VocabKind, arch: &str, n_vocab: u32) -> Result<Vec<(String, Value)>> {
    match kind {
        VocabKind::SentencePiece => sentencepiece(n_vocab),
        VocabKind::Bpe => bpe(arch, n_vocab),
    }
}

/// Candidate text pieces in order: the words of [`WORDS`] with every prefix before them,
/// then all strings over `a..z` of length 2, 3, ... Each string comes once, first with the
/// space marker `space` in front and then without. Returns pieces until `limit` are made.
fn pieces(space: &str, limit: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut add = |s: String, out: &mut Vec<String>| {
        if out.len() < limit && seen.insert(s.clone()) {
            out.push(s);
        }
    };
    for w in WORDS.split_whitespace() {
        for end in 1..=w.len() {
            add(format!("{space}{}", &w[..end]), &mut out);
            add(w[..end].to_string(), &mut out);
        }
    }
    let letters: Vec<char> = ('a'..='z').collect();
    let mut len = 1;
    while out.len() < limit && len < 8 {
        let mut idx = vec![0usize; len];
        loop {
            let s: String = idx.iter().map(|&i| letters[i]).collect();
            add(format!("{space}{s}"), &mut out);
            add(s, &mut out);
            if out.len() >= limit {
                break;
            }
            // The next string of this length in lexicographic order.
            let mut k = len;
            while k > 0 && idx[k - 1] == letters.len() - 1 {
                idx[k - 1] = 0;
                k -= 1;
            }
            if k == 0 {
                break;
            }
            idx[k - 1] += 1;
        }
        len += 1;
    }
    out
}

fn sentencepiece(n_vocab: u32) -> Result<Vec<(String, Value)>> {
    let n = n_vocab as usize;
    if n < 259 + 1 {
        return Err(GgufError::invalid(format!(
            "a SentencePiece vocabulary needs at least 260 tokens (3 special, 256 bytes, 1 piece); {n_vocab} asked"
        )));
    }
    let mut tokens = StrArray::with_capacity(n, n * 6);
    let mut scores = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for (t, ty) in [("<unk>", token_type::UNKNOWN), ("<s>", token_type::CONTROL), ("</s>", token_type::CONTROL)] {
        tokens.push(t);
        scores.push(0f32);
        types.push(ty);
    }
    for b in 0..=255u8 {
        tokens.push(format!("<0x{b:02X}>"));
        scores.push(0f32);
        types.push(token_type::BYTE);
    }
    // "▁" alone first, as in real vocabularies, then the pieces by rank.
    let rest = n - tokens.len();
    let mut list = vec!["\u{2581}".to_string()];
    list.extend(pieces("\u{2581}", rest + 1).into_iter().filter(|p| p != "\u{2581}"));
    for (rank, p) in list.into_iter().take(rest).enumerate() {
        tokens.push(p);
        scores.push(-(rank as f32));
        types.push(token_type::NORMAL);
    }
    Ok(vec![
        ("tokenizer.ggml.model".into(), "llama".into()),
        ("tokenizer.ggml.pre".into(), "default".into()),
        ("tokenizer.ggml.tokens".into(), Array::String(tokens).into()),
        ("tokenizer.ggml.scores".into(), Array::F32(scores).into()),
        ("tokenizer.ggml.token_type".into(), Array::I32(types).into()),
        ("tokenizer.ggml.bos_token_id".into(), 1u32.into()),
        ("tokenizer.ggml.eos_token_id".into(), 2u32.into()),
        ("tokenizer.ggml.unknown_token_id".into(), 0u32.into()),
        ("tokenizer.ggml.padding_token_id".into(), 0u32.into()),
        ("tokenizer.ggml.add_bos_token".into(), true.into()),
        ("tokenizer.ggml.add_eos_token".into(), false.into()),
    ])
}

/// GPT-2's byte-to-character table: printable Latin-1 bytes map to themselves, the rest to
/// U+0100 and up, in byte order. Returned in GPT-2's token order (the printable ones
/// first).
pub fn byte_chars() -> Vec<(u8, char)> {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
    let mut out: Vec<(u8, char)> = (0..=255u8).filter(|&b| printable(b)).map(|b| (b, char::from(b))).collect();
    for (next, b) in (256u32..).zip((0..=255u8).filter(|&b| !printable(b))) {
        out.push((b, char::from_u32(next).unwrap_or('\u{fffd}')));
    }
    out
}

fn bpe(arch: &str, n_vocab: u32) -> Result<Vec<(String, Value)>> {
    let (pre, specials, bos, eos, eot, add_bos): (&str, &[&str], usize, usize, Option<usize>, bool) = match arch {
        "qwen2" => ("qwen2", &["<|endoftext|>", "<|im_start|>", "<|im_end|>"], 0, 0, Some(2), false),
        _ => (
            "llama-bpe",
            &["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
            0,
            1,
            Some(4),
            true,
        ),
    };
    let n = n_vocab as usize;
    if n < 256 + specials.len() + 1 {
        return Err(GgufError::invalid(format!(
            "a gpt2 vocabulary for `{arch}` needs at least {} tokens (256 bytes, 1 merge, {} special); {n_vocab} asked",
            256 + specials.len() + 1,
            specials.len()
        )));
    }
    let space = byte_chars().iter().find(|(b, _)| *b == b' ').map_or('Ġ', |e| e.1).to_string();
    let mut tokens = StrArray::with_capacity(n, n * 6);
    let mut types = Vec::with_capacity(n);
    for (_, c) in byte_chars() {
        tokens.push(c.to_string());
        types.push(token_type::NORMAL);
    }
    let n_merges = n - 256 - specials.len();
    let mut merges = StrArray::with_capacity(n_merges, n_merges * 6);
    for p in pieces(&space, n_merges + 26).into_iter().filter(|p| p.chars().count() >= 2).take(n_merges) {
        // Split off the last character: the rest is a byte character or an earlier token.
        let last = p.char_indices().last().map_or(0, |(i, _)| i);
        merges.push(format!("{} {}", &p[..last], &p[last..]));
        tokens.push(&p);
        types.push(token_type::NORMAL);
    }
    if merges.len() < n_merges {
        return Err(GgufError::invalid(format!("a gpt2 vocabulary of {n_vocab} tokens is larger than relax can make")));
    }
    let first_special = tokens.len();
    for s in specials {
        tokens.push(s);
        types.push(token_type::CONTROL);
    }
    let mut md: Vec<(String, Value)> = vec![
        ("tokenizer.ggml.model".into(), "gpt2".into()),
        ("tokenizer.ggml.pre".into(), pre.into()),
        ("tokenizer.ggml.tokens".into(), Array::String(tokens).into()),
        ("tokenizer.ggml.token_type".into(), Array::I32(types).into()),
        ("tokenizer.ggml.merges".into(), Array::String(merges).into()),
        ("tokenizer.ggml.bos_token_id".into(), ((first_special + bos) as u32).into()),
        ("tokenizer.ggml.eos_token_id".into(), ((first_special + eos) as u32).into()),
    ];
    if let Some(eot) = eot {
        md.push(("tokenizer.ggml.eot_token_id".into(), ((first_special + eot) as u32).into()));
    }
    md.push(("tokenizer.ggml.add_bos_token".into(), add_bos.into()));
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn get<'a>(md: &'a [(String, Value)], key: &str) -> &'a Value {
        &md.iter().find(|(k, _)| k == key).unwrap().1
    }

    #[test]
    fn sentencepiece_pieces_are_reachable() {
        let md = sentencepiece(2000).unwrap();
        let Value::Array(Array::String(toks)) = get(&md, "tokenizer.ggml.tokens") else { panic!() };
        assert_eq!(toks.len(), 2000);
        assert_eq!(toks.get_str(3), Some("<0x00>"));
        assert_eq!(toks.get_str(259), Some("\u{2581}"));
        let all: HashSet<&str> = toks.iter().map(|t| std::str::from_utf8(t).unwrap()).collect();
        assert_eq!(all.len(), 2000);
        for t in toks.iter().skip(259).map(|t| std::str::from_utf8(t).unwrap()) {
            let chars: Vec<char> = t.chars().collect();
            if chars.len() > 1 {
                let head: String = chars[..chars.len() - 1].iter().collect();
                assert!(all.contains(head.as_str()), "{t}");
            }
        }
    }

    #[test]
    fn bpe_merges_build_on_earlier_tokens() {
        let md = bpe("llama", 1000).unwrap();
        let Value::Array(Array::String(toks)) = get(&md, "tokenizer.ggml.tokens") else { panic!() };
        let Value::Array(Array::String(merges)) = get(&md, "tokenizer.ggml.merges") else { panic!() };
        assert_eq!(toks.len(), 1000);
        assert_eq!(merges.len(), 1000 - 256 - 5);
        assert_eq!(toks.get_str(0), Some("!"));
        assert_eq!(toks.get_str(999), Some("<|eot_id|>"));
        let mut known: HashSet<String> =
            toks.iter().take(256).map(|t| String::from_utf8(t.to_vec()).unwrap()).collect();
        for (i, m) in merges.iter().enumerate() {
            let m = std::str::from_utf8(m).unwrap();
            let (a, b) = m.split_once(' ').unwrap();
            assert!(known.contains(a) && known.contains(b), "{m}");
            assert_eq!(toks.get_str(256 + i).unwrap(), format!("{a}{b}"));
            known.insert(format!("{a}{b}"));
        }
        assert_eq!(byte_chars().iter().find(|e| e.0 == b' ').unwrap().1, 'Ġ');
        assert_eq!(byte_chars().iter().find(|e| e.0 == b'\n').unwrap().1, 'Ċ');
    }
}
