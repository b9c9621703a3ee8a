//! Special tokens: llama.cpp's token attributes, the rules that find end-of-generation
//! and fill-in-the-middle tokens by their text, and the partition of the input around
//! special tokens (`tokenizer_st_partition`).

use crate::vocab::{SpecialIds, TokenType};

/// A token's attributes, llama.cpp's `llama_token_attr` bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Attr(pub(crate) u16);

impl Attr {
    pub(crate) const UNDEFINED: Attr = Attr(0);
    pub(crate) const UNKNOWN: Attr = Attr(1 << 0);
    pub(crate) const UNUSED: Attr = Attr(1 << 1);
    pub(crate) const NORMAL: Attr = Attr(1 << 2);
    pub(crate) const CONTROL: Attr = Attr(1 << 3);
    pub(crate) const USER_DEFINED: Attr = Attr(1 << 4);
    pub(crate) const BYTE: Attr = Attr(1 << 5);
    pub(crate) const RSTRIP: Attr = Attr(1 << 8);

    /// Whether any bit of `other` is set.
    pub(crate) fn has(self, other: Attr) -> bool {
        self.0 & other.0 != 0
    }

    pub(crate) fn with(self, other: Attr) -> Attr {
        Attr(self.0 | other.0)
    }

    pub(crate) fn from_type(t: TokenType) -> Attr {
        match t {
            TokenType::Undefined => Attr::UNDEFINED,
            TokenType::Normal => Attr::NORMAL,
            TokenType::Unknown => Attr::UNKNOWN,
            TokenType::Control => Attr::CONTROL,
            TokenType::UserDefined => Attr::USER_DEFINED,
            TokenType::Unused => Attr::UNUSED,
            TokenType::Byte => Attr::BYTE,
        }
    }
}

const EOT_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<｜end▁of▁sentence｜>",
    "<end_of_utterance>",
];
const EOM_TEXTS: &[&str] = &["<|eom_id|>"];
const FIM_PRE_TEXTS: &[&str] = &[
    "<|fim_prefix|>",
    "<fim-prefix>",
    "<fim_prefix>",
    "<｜fim▁begin｜>",
    "<PRE>",
    "▁<PRE>",
    "<|code_prefix|>",
    "<|prefix|>",
];
const FIM_SUF_TEXTS: &[&str] = &[
    "<|fim_suffix|>",
    "<fim-suffix>",
    "<fim_suffix>",
    "<｜fim▁hole｜>",
    "<SUF>",
    "▁<SUF>",
    "<|code_suffix|>",
    "<|suffix|>",
];
const FIM_MID_TEXTS: &[&str] = &[
    "<|fim_middle|>",
    "<fim-middle>",
    "<fim_middle>",
    "<｜fim▁end｜>",
    "<MID>",
    "▁<MID>",
    "<|code_middle|>",
    "<|middle|>",
];
const FIM_PAD_TEXTS: &[&str] = &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"];
const FIM_REP_TEXTS: &[&str] = &["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"];
const FIM_SEP_TEXTS: &[&str] = &["<|file_sep|>"];
const EOG_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<｜end▁of▁sentence｜>",
    "[e~[",
];
/// gpt-oss's chat markers, which llama.cpp always prints.
const ALWAYS_PRINTED: &[&str] = &["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"];

/// llama.cpp's load-time rules that look at token texts: the EOT, EOM and FIM tokens
/// the file does not name are found by their text (the lowest id wins where several
/// match) and made control tokens, end-of-generation tokens are collected, and a few
/// model-specific exceptions apply. Returns the end-of-generation set, sorted.
pub(crate) fn apply_text_rules(tokens: &[Vec<u8>], attrs: &mut [Attr], special: &mut SpecialIds) -> Vec<u32> {
    let is = |id: usize, texts: &[&str]| texts.iter().any(|t| t.as_bytes() == tokens[id]);
    for (id, attr) in attrs.iter_mut().enumerate() {
        let slots: [(&mut Option<u32>, &[&str]); 8] = [
            (&mut special.eot, EOT_TEXTS),
            (&mut special.eom, EOM_TEXTS),
            (&mut special.fim_pre, FIM_PRE_TEXTS),
            (&mut special.fim_suf, FIM_SUF_TEXTS),
            (&mut special.fim_mid, FIM_MID_TEXTS),
            (&mut special.fim_pad, FIM_PAD_TEXTS),
            (&mut special.fim_rep, FIM_REP_TEXTS),
            (&mut special.fim_sep, FIM_SEP_TEXTS),
        ];
        for (slot, texts) in slots {
            if slot.is_none() && is(id, texts) {
                *slot = Some(id as u32);
                *attr = attr.with(Attr::CONTROL);
            }
        }
    }
    let mut eog: Vec<u32> = [special.fim_pad, special.fim_rep, special.fim_sep].into_iter().flatten().collect();
    for (id, attr) in attrs.iter_mut().enumerate() {
        if is(id, EOG_TEXTS) {
            eog.push(id as u32);
            *attr = attr.with(Attr::CONTROL);
        }
        if is(id, ALWAYS_PRINTED) {
            *attr = Attr::USER_DEFINED;
        }
    }
    eog.extend([special.eos, special.eot, special.eom].into_iter().flatten());
    eog.sort_unstable();
    eog.dedup();
    let find = |eog: &[u32], texts: &[&str]| eog.iter().copied().find(|&id| is(id as usize, texts));
    // o200k_harmony and solar-open: "<|end|>" ends a message, not the generation.
    let end = find(&eog, &["<|end|>"]);
    let has_call = find(&eog, &["<|call|>", "<|calls|>"]).is_some();
    let has_return = find(&eog, &["<|return|>"]).is_some();
    let has_flush = find(&eog, &["<|flush|>"]).is_some();
    if let Some(end) = end {
        if has_call && (has_return || has_flush) {
            eog.retain(|&id| id != end);
            attrs[end as usize] = Attr::USER_DEFINED;
        }
    }
    // Gemma 4 and PLaMo 2 have an ordinary "</s>".
    if find(&eog, &["<|tool_response>", "<|plamo:eos|>"]).is_some() {
        if let Some(s) = find(&eog, &["</s>"]) {
            eog.retain(|&id| id != s);
            attrs[s as usize] = Attr::NORMAL;
        }
    }
    eog
}

/// The tokens the input is searched for, longest text first (ties by id): control,
/// user-defined and unknown tokens whose text is UTF-8.
pub(crate) fn special_cache(tokens: &[Vec<u8>], attrs: &[Attr]) -> Vec<u32> {
    let mut cache: Vec<u32> = (0..tokens.len())
        .filter(|&id| {
            attrs[id].has(Attr(Attr::CONTROL.0 | Attr::USER_DEFINED.0 | Attr::UNKNOWN.0))
                && std::str::from_utf8(&tokens[id]).is_ok()
        })
        .map(|id| id as u32)
        .collect();
    cache.sort_by(|&a, &b| tokens[b as usize].len().cmp(&tokens[a as usize].len()).then(a.cmp(&b)));
    cache
}

/// A piece of the input: text still to tokenize, or a special token found in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fragment {
    /// A byte range of the input, never empty.
    Text(usize, usize),
    /// A special token.
    Token(u32),
}

/// Splits `text` around the special tokens of `cache` (llama.cpp's
/// `tokenizer_st_partition`): each token in turn, longest first, is searched for in
/// the text fragments left by the previous ones. Without `parse_special` only
/// user-defined tokens are searched for. A token with the right-strip attribute eats
/// the whitespace after it.
pub(crate) fn partition(
    text: &str,
    cache: &[u32],
    tokens: &[Vec<u8>],
    attrs: &[Attr],
    parse_special: bool,
) -> Vec<Fragment> {
    let mut fragments = Vec::new();
    if text.is_empty() {
        return fragments;
    }
    fragments.push(Fragment::Text(0, text.len()));
    let bytes = text.as_bytes();
    for &id in cache {
        let attr = attrs[id as usize];
        if !parse_special && attr.has(Attr(Attr::CONTROL.0 | Attr::UNKNOWN.0)) {
            continue;
        }
        let needle = &tokens[id as usize];
        let finder = memchr::memmem::Finder::new(needle);
        let mut next = Vec::with_capacity(fragments.len());
        for fragment in fragments {
            let Fragment::Text(mut start, end) = fragment else {
                next.push(fragment);
                continue;
            };
            while let Some(at) = finder.find(&bytes[start..end]) {
                let at = start + at;
                if at > start {
                    next.push(Fragment::Text(start, at));
                }
                next.push(Fragment::Token(id));
                start = at + needle.len();
                if attr.has(Attr::RSTRIP) {
                    while start < end && bytes[start].is_ascii_whitespace_c() {
                        start += 1;
                    }
                }
            }
            if start < end {
                next.push(Fragment::Text(start, end));
            }
        }
        fragments = next;
    }
    fragments
}

/// C's `isspace` in the "C" locale.
trait CSpace {
    fn is_ascii_whitespace_c(&self) -> bool;
}

impl CSpace for u8 {
    fn is_ascii_whitespace_c(&self) -> bool {
        matches!(self, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
    }
}
