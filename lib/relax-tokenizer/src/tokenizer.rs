//! The tokenizer: a validated vocabulary with its lookup tables, `encode` (llama.cpp's
//! `llama_tokenize`) and decoding (`llama_token_to_piece`, `llama_detokenize`).

use crate::bpe::{self, BpeVocab};
use crate::decode::{clean_spaces, piece};
use crate::pretok::preset_for;
use crate::special::{Attr, Fragment, apply_text_rules, partition, special_cache};
use crate::split::Splitter;
use crate::spm::{self, SpmVocab};
use crate::unicode::byte_to_char;
use crate::{Error, ModelKind, PreTokenizer, SpecialIds, Vocab};
use std::collections::HashMap;

/// The flags that decide what encoding adds and decoding removes, after llama.cpp's
/// defaults for the model and pre-tokenizer are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    /// Encoding with `add_special` starts with the BOS token.
    pub add_bos: bool,
    /// Encoding with `add_special` ends with the EOS token.
    pub add_eos: bool,
    /// SPM: a space is put before the text (and before text after a special token);
    /// decoding removes it from the first token.
    pub add_space_prefix: bool,
    /// BPE: decoding drops spaces before punctuation and contractions.
    pub clean_spaces: bool,
    /// BPE: a pre-tokenizer word that is a token is taken whole.
    pub ignore_merges: bool,
}

/// A tokenizer for one vocabulary, giving the same ids and text as llama.cpp.
#[derive(Debug)]
pub struct Tokenizer {
    model: ModelKind,
    pre: Option<PreTokenizer>,
    splitter: Option<Splitter>,
    tokens: Vec<Vec<u8>>,
    scores: Vec<f32>,
    attrs: Vec<Attr>,
    ids: HashMap<Vec<u8>, u32>,
    ranks: HashMap<(u32, u32), u32>,
    special: SpecialIds,
    flags: Flags,
    eog: Vec<u32>,
    cache: Vec<u32>,
    pieces: Vec<Vec<u8>>,
}

/// Options of [`Tokenizer::detokenize`], llama.cpp's `llama_detokenize` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DetokenizeOptions {
    /// Drop a leading BOS and a trailing EOS where the vocabulary adds them.
    pub remove_special: bool,
    /// Print control and unknown tokens' text (otherwise they print nothing).
    pub unparse_special: bool,
}

impl Tokenizer {
    /// Validates `vocab` and builds the tokenizer: the token texts are distinct, the
    /// per-token arrays have one entry per token, scores are numbers, special ids are
    /// tokens, BPE merges are two tokens separated by a space, the pre-tokenizer is
    /// known, and a BOS/EOS token exists where the flags add one.
    pub fn new(vocab: Vocab) -> Result<Tokenizer, Error> {
        let Vocab {
            model,
            pre,
            mut tokens,
            scores,
            token_types,
            merges,
            mut special,
            add_bos,
            add_eos,
            add_space_prefix,
            remove_extra_whitespaces: _,
            general_name,
        } = vocab;
        let n = tokens.len();
        if n == 0 {
            return Err(Error::EmptyVocabulary);
        }
        u32::try_from(n).map_err(|_| Error::LengthMismatch { what: "tokens", len: n, tokens: u32::MAX as usize })?;
        for (what, len) in [("scores", scores.len()), ("token_type", token_types.len())] {
            if len != 0 && len != n {
                return Err(Error::LengthMismatch { what, len, tokens: n });
            }
        }
        let scores = if scores.is_empty() { vec![0.0; n] } else { scores };
        if let Some(id) = scores.iter().position(|s| s.is_nan()) {
            return Err(Error::NanScore { id: id as u32 });
        }
        for (id, token) in tokens.iter_mut().enumerate() {
            if token.is_empty() {
                *token = format!("[EMPTY_{id}]").into_bytes();
            }
        }
        let mut ids = HashMap::with_capacity(n);
        for (id, token) in tokens.iter().enumerate() {
            if let Some(first) = ids.insert(token.clone(), id as u32) {
                return Err(Error::DuplicateToken {
                    text: String::from_utf8_lossy(token).into_owned(),
                    first,
                    second: id as u32,
                });
            }
        }
        let mut attrs: Vec<Attr> = if token_types.is_empty() {
            vec![Attr::NORMAL; n]
        } else {
            token_types.iter().map(|&t| Attr::from_type(t)).collect()
        };
        for (which, id) in special.named() {
            if let Some(id) = id.filter(|&id| id as usize >= n) {
                return Err(Error::SpecialIdOutOfRange { which, id, tokens: n });
            }
        }
        // llama.cpp's defaults for ids the file does not give (dropped when out of range).
        let in_range = |id: u32| (id as usize) < n;
        let (pre_kind, mut flags) = match model {
            ModelKind::Spm => {
                special.bos = special.bos.or(Some(1).filter(|&i| in_range(i)));
                special.eos = special.eos.or(Some(2).filter(|&i| in_range(i)));
                special.unk = special.unk.or(Some(0).filter(|&i| in_range(i)));
                let flags = Flags {
                    add_bos: true,
                    add_eos: false,
                    add_space_prefix: true,
                    clean_spaces: false,
                    ignore_merges: false,
                };
                (None, flags)
            }
            ModelKind::Bpe => {
                let preset = preset_for(pre.as_deref())?;
                if !preset.no_default_bos {
                    special.bos = special.bos.or(Some(11).filter(|&i| in_range(i)));
                }
                special.eos = special.eos.or(Some(11).filter(|&i| in_range(i)));
                let flags = Flags {
                    add_bos: preset.add_bos,
                    add_eos: false,
                    add_space_prefix: false,
                    clean_spaces: preset.clean_spaces,
                    ignore_merges: preset.ignore_merges,
                };
                (Some(preset.kind), flags)
            }
        };
        flags.add_bos = add_bos.unwrap_or(flags.add_bos);
        flags.add_eos = add_eos.unwrap_or(flags.add_eos);
        flags.add_space_prefix = add_space_prefix.unwrap_or(flags.add_space_prefix);
        if flags.add_bos && special.bos.is_none() {
            return Err(Error::MissingSpecialToken { which: "BOS", flag: "add_bos" });
        }
        if flags.add_eos && special.eos.is_none() {
            return Err(Error::MissingSpecialToken { which: "EOS", flag: "add_eos" });
        }
        let ranks = match model {
            ModelKind::Spm => HashMap::new(),
            ModelKind::Bpe => parse_merges(&merges, &ids)?,
        };
        let splitter = match pre_kind {
            Some(kind) => Some(Splitter::new(&kind.patterns())?),
            None => None,
        };
        let eog = apply_text_rules(&tokens, &mut attrs, &mut special);
        let cache = special_cache(&tokens, &attrs);
        let pieces = tokens.iter().zip(&attrs).map(|(t, &a)| piece(model, t, a)).collect();
        if general_name.is_some_and(|name| {
            let name = name.to_lowercase();
            name.contains("phi-3") || name.contains("phi3")
        }) {
            for &id in &cache {
                attrs[id as usize] = attrs[id as usize].with(Attr::RSTRIP);
            }
            for (text, on) in [("</s>", true), ("<unk>", false), ("<s>", false), ("<|endoftext|>", false)] {
                if let Some(&id) = ids.get(text.as_bytes()) {
                    let a = attrs[id as usize];
                    attrs[id as usize] = if on { a.with(Attr::RSTRIP) } else { Attr(a.0 & !Attr::RSTRIP.0) };
                }
            }
        }
        Ok(Tokenizer {
            model,
            pre: pre_kind,
            splitter,
            tokens,
            scores,
            attrs,
            ids,
            ranks,
            special,
            flags,
            eog,
            cache,
            pieces,
        })
    }

    /// The model kind.
    pub fn model(&self) -> ModelKind {
        self.model
    }

    /// The BPE pre-tokenizer (`None` for SPM).
    pub fn pre_tokenizer(&self) -> Option<PreTokenizer> {
        self.pre
    }

    /// The number of tokens.
    pub fn n_tokens(&self) -> usize {
        self.tokens.len()
    }

    /// The special ids, with llama.cpp's defaults and the tokens found by their text.
    pub fn special_ids(&self) -> &SpecialIds {
        &self.special
    }

    /// The flags in force.
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// Whether generation stops at `id` (EOS, EOT, EOM and the end-of-turn tokens
    /// llama.cpp recognizes by their text).
    pub fn is_eog(&self, id: u32) -> bool {
        self.eog.binary_search(&id).is_ok()
    }

    /// The end-of-generation tokens, sorted.
    pub fn eog_ids(&self) -> &[u32] {
        &self.eog
    }

    /// The text of a token as the vocabulary writes it (`▁` for SPM spaces, GPT-2's
    /// byte alphabet for BPE).
    pub fn token_text(&self, id: u32) -> Result<&[u8], Error> {
        self.check(id).map(|i| self.tokens[i].as_slice())
    }

    /// The id of the token with exactly this text.
    pub fn token_id(&self, text: &[u8]) -> Option<u32> {
        self.ids.get(text).copied()
    }

    /// Tokenizes `text` as llama.cpp's `llama_tokenize(vocab, text, add_special,
    /// parse_special)`. `add_special` adds the BOS token (and the EOS token) where the
    /// vocabulary's flags say so; `parse_special` matches the text of control tokens
    /// in the input as those tokens (user-defined tokens are always matched).
    pub fn encode(&self, text: &str, add_special: bool, parse_special: bool) -> Result<Vec<u32>, Error> {
        let fragments = partition(text, &self.cache, &self.tokens, &self.attrs, parse_special);
        let mut out = Vec::new();
        if add_special && self.flags.add_bos {
            out.extend(self.special.bos);
        }
        let mut prev_special = true;
        for fragment in fragments {
            match fragment {
                Fragment::Token(id) => {
                    out.push(id);
                    prev_special = true;
                }
                Fragment::Text(start, end) => {
                    let text = &text[start..end];
                    match self.model {
                        ModelKind::Spm => {
                            let mut escaped = String::with_capacity(text.len() + 3);
                            if self.flags.add_space_prefix && prev_special {
                                escaped.push('▁');
                            }
                            escaped.push_str(&text.replace(' ', "▁"));
                            spm::tokenize(self, &escaped, &mut out)?;
                        }
                        ModelKind::Bpe => self.encode_bpe(text, &mut out)?,
                    }
                    prev_special = false;
                }
            }
        }
        if add_special && self.flags.add_eos {
            out.extend(self.special.eos);
        }
        Ok(out)
    }

    fn encode_bpe(&self, text: &str, out: &mut Vec<u32>) -> Result<(), Error> {
        let Some(splitter) = &self.splitter else {
            return Ok(());
        };
        let mut encoded = String::new();
        for word in splitter.split(text)? {
            encoded.clear();
            encoded.extend(word.bytes().map(byte_to_char));
            bpe::tokenize_word(self, &encoded, out);
        }
        Ok(())
    }

    /// The text of one token as llama.cpp's `llama_token_to_piece(vocab, id, .., 0,
    /// special)` writes it, as bytes (a token may hold part of a UTF-8 character).
    /// Control and unknown tokens give nothing unless `special`.
    pub fn token_to_piece(&self, id: u32, special: bool) -> Result<&[u8], Error> {
        let i = self.check(id)?;
        if !special && self.attrs[i].has(Attr(Attr::UNKNOWN.0 | Attr::CONTROL.0)) {
            return Ok(&[]);
        }
        Ok(&self.pieces[i])
    }

    /// The bytes of `ids` as llama.cpp's `llama_detokenize` writes them: SPM drops the
    /// space it prefixed from the first token (unless that token is a removed BOS),
    /// BPE vocabularies that ask for it clean spaces before punctuation.
    pub fn detokenize(&self, ids: &[u32], options: DetokenizeOptions) -> Result<Vec<u8>, Error> {
        let mut ids = ids;
        let mut remove_space = self.flags.add_space_prefix;
        if options.remove_special && self.flags.add_bos {
            if let (Some(&first), Some(bos)) = (ids.first(), self.special.bos) {
                if first == bos {
                    remove_space = false;
                    ids = &ids[1..];
                }
            }
        }
        if options.remove_special && self.flags.add_eos {
            if let (Some(&last), Some(eos)) = (ids.last(), self.special.eos) {
                if last == eos {
                    ids = &ids[..ids.len() - 1];
                }
            }
        }
        let mut out = Vec::new();
        for &id in ids {
            let piece = self.token_to_piece(id, options.unparse_special)?;
            let piece = match piece.first() {
                Some(b' ') if remove_space => &piece[1..],
                _ => piece,
            };
            out.extend_from_slice(piece);
            remove_space = false;
        }
        if self.flags.clean_spaces {
            clean_spaces(&mut out);
        }
        Ok(out)
    }

    /// The text of `ids` as llama.cpp's `common_detokenize(ctx, ids, false)` gives it
    /// (no special tokens removed or printed); bytes that are not UTF-8 print as U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        let bytes = self.detokenize(ids, DetokenizeOptions::default())?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn check(&self, id: u32) -> Result<usize, Error> {
        let i = id as usize;
        if i < self.tokens.len() { Ok(i) } else { Err(Error::TokenIdOutOfRange { id, tokens: self.tokens.len() }) }
    }
}

impl SpmVocab for Tokenizer {
    fn id_of(&self, text: &[u8]) -> Option<u32> {
        self.ids.get(text).copied()
    }

    fn score(&self, id: u32) -> f32 {
        self.scores.get(id as usize).copied().unwrap_or(0.0)
    }
}

impl BpeVocab for Tokenizer {
    fn id_of(&self, text: &[u8]) -> Option<u32> {
        self.ids.get(text).copied()
    }

    fn rank(&self, left: u32, right: u32) -> Option<u32> {
        self.ranks.get(&(left, right)).copied()
    }

    fn ignore_merges(&self) -> bool {
        self.flags.ignore_merges
    }
}

/// The merge ranks by token pair. A merge is split at its first space after the first
/// character, as llama.cpp splits it; the first of two equal merges keeps its rank.
fn parse_merges(merges: &[String], ids: &HashMap<Vec<u8>, u32>) -> Result<HashMap<(u32, u32), u32>, Error> {
    let mut ranks = HashMap::with_capacity(merges.len());
    for (index, merge) in merges.iter().enumerate() {
        let bad = |reason: String| Error::BadMerge { index, merge: merge.clone(), reason };
        let split = merge
            .char_indices()
            .skip(1)
            .find(|&(_, c)| c == ' ')
            .map(|(i, _)| (&merge[..i], &merge[i + 1..]))
            .ok_or_else(|| bad("no space separates the two tokens".to_string()))?;
        let id = |part: &str| ids.get(part.as_bytes()).copied().ok_or_else(|| bad(format!("{part:?} is not a token")));
        let pair = (id(split.0)?, id(split.1)?);
        let rank = u32::try_from(index).map_err(|_| bad("too many merges".to_string()))?;
        ranks.entry(pair).or_insert(rank);
    }
    Ok(ranks)
}
