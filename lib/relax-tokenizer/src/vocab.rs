//! The vocabulary as plain data: what a GGUF file's `tokenizer.ggml.*` keys hold, with
//! `None` wherever a key may be absent (llama.cpp's default for the model then applies).

use crate::Error;

/// The tokenizer algorithm, GGUF's `tokenizer.ggml.model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// `llama`: SentencePiece BPE (merges by score, `▁` for spaces, `<0xXX>` byte fallback).
    Spm,
    /// `gpt2`: byte-level BPE (GPT-2's byte-to-unicode map, ranked merges, a
    /// pre-tokenizer named by `tokenizer.ggml.pre`).
    Bpe,
}

impl ModelKind {
    /// The kind for a `tokenizer.ggml.model` value; any other name is an error naming it.
    pub fn from_gguf_name(name: &str) -> Result<ModelKind, Error> {
        match name {
            "llama" => Ok(ModelKind::Spm),
            "gpt2" => Ok(ModelKind::Bpe),
            other => Err(Error::UnknownModel(other.to_string())),
        }
    }

    /// The `tokenizer.ggml.model` value of this kind.
    pub fn gguf_name(self) -> &'static str {
        match self {
            ModelKind::Spm => "llama",
            ModelKind::Bpe => "gpt2",
        }
    }
}

/// A token's type, GGUF's `tokenizer.ggml.token_type` (llama.cpp's `llama_token_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TokenType {
    /// 0: no type; such a token decodes to nothing.
    Undefined,
    /// 1: an ordinary piece of text.
    #[default]
    Normal,
    /// 2: the unknown token.
    Unknown,
    /// 3: a control token (BOS, EOS, chat markers): matched in the input only when
    /// special tokens are parsed, printed only when asked for.
    Control,
    /// 4: a user-defined token: always matched in the input as one token.
    UserDefined,
    /// 5: an unused slot.
    Unused,
    /// 6: a byte token (`<0x41>`), SentencePiece's byte fallback.
    Byte,
}

impl TokenType {
    /// The type for a GGUF `token_type` value; values llama.cpp does not know are
    /// [`TokenType::Undefined`], as there.
    pub fn from_gguf(value: i32) -> TokenType {
        match value {
            1 => TokenType::Normal,
            2 => TokenType::Unknown,
            3 => TokenType::Control,
            4 => TokenType::UserDefined,
            5 => TokenType::Unused,
            6 => TokenType::Byte,
            _ => TokenType::Undefined,
        }
    }

    /// The GGUF `token_type` value of this type.
    pub fn gguf_value(self) -> i32 {
        match self {
            TokenType::Undefined => 0,
            TokenType::Normal => 1,
            TokenType::Unknown => 2,
            TokenType::Control => 3,
            TokenType::UserDefined => 4,
            TokenType::Unused => 5,
            TokenType::Byte => 6,
        }
    }
}

/// The special token ids of the `tokenizer.ggml.*_token_id` keys; `None` where the key
/// is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpecialIds {
    /// `bos_token_id`: beginning of sequence.
    pub bos: Option<u32>,
    /// `eos_token_id`: end of sequence.
    pub eos: Option<u32>,
    /// `eot_token_id`: end of turn.
    pub eot: Option<u32>,
    /// `eom_token_id`: end of message.
    pub eom: Option<u32>,
    /// `unknown_token_id`.
    pub unk: Option<u32>,
    /// `seperator_token_id` (GGUF's spelling).
    pub sep: Option<u32>,
    /// `padding_token_id`.
    pub pad: Option<u32>,
    /// `mask_token_id`.
    pub mask: Option<u32>,
    /// `fim_pre_token_id`: fill-in-the-middle prefix.
    pub fim_pre: Option<u32>,
    /// `fim_suf_token_id`: fill-in-the-middle suffix.
    pub fim_suf: Option<u32>,
    /// `fim_mid_token_id`: fill-in-the-middle middle.
    pub fim_mid: Option<u32>,
    /// `fim_pad_token_id`.
    pub fim_pad: Option<u32>,
    /// `fim_rep_token_id`: repository marker.
    pub fim_rep: Option<u32>,
    /// `fim_sep_token_id`: file separator.
    pub fim_sep: Option<u32>,
}

impl SpecialIds {
    /// Every id with its name, for validation and error messages.
    pub fn named(&self) -> [(&'static str, Option<u32>); 14] {
        [
            ("bos", self.bos),
            ("eos", self.eos),
            ("eot", self.eot),
            ("eom", self.eom),
            ("unknown", self.unk),
            ("separator", self.sep),
            ("padding", self.pad),
            ("mask", self.mask),
            ("fim_pre", self.fim_pre),
            ("fim_suf", self.fim_suf),
            ("fim_mid", self.fim_mid),
            ("fim_pad", self.fim_pad),
            ("fim_rep", self.fim_rep),
            ("fim_sep", self.fim_sep),
        ]
    }
}

/// A vocabulary as a GGUF file describes it. Build one with [`Vocab::new`] and set the
/// fields the file has; [`crate::Tokenizer::new`] validates it.
#[derive(Debug, Clone, PartialEq)]
pub struct Vocab {
    /// `tokenizer.ggml.model`.
    pub model: ModelKind,
    /// `tokenizer.ggml.pre`: the BPE pre-tokenizer's name (`default`, `llama-bpe`,
    /// `qwen2`, ...); `None` or empty is `default`, as in llama.cpp. Ignored for SPM.
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`: the token texts, as bytes (GGUF strings need not be
    /// UTF-8). An empty text becomes `[EMPTY_<id>]`, as in llama.cpp.
    pub tokens: Vec<Vec<u8>>,
    /// `tokenizer.ggml.scores`: one per token, or empty (all 0). SPM merges by score.
    pub scores: Vec<f32>,
    /// `tokenizer.ggml.token_type`: one per token, or empty (all normal).
    pub token_types: Vec<TokenType>,
    /// `tokenizer.ggml.merges`: BPE merges, `"left right"`, highest priority first.
    pub merges: Vec<String>,
    /// The special token ids.
    pub special: SpecialIds,
    /// `tokenizer.ggml.add_bos_token`; `None`: llama.cpp's default (true for SPM and
    /// for the pre-tokenizers that need it, such as `llama-bpe`).
    pub add_bos: Option<bool>,
    /// `tokenizer.ggml.add_eos_token`; `None`: false.
    pub add_eos: Option<bool>,
    /// `tokenizer.ggml.add_space_prefix`; `None`: true for SPM, false for BPE.
    pub add_space_prefix: Option<bool>,
    /// `tokenizer.ggml.remove_extra_whitespaces`. Kept for completeness: llama.cpp
    /// reads it only for its Unigram (T5) tokenizer, so it changes nothing here.
    pub remove_extra_whitespaces: Option<bool>,
    /// `general.name`: llama.cpp gives the special tokens of Phi-3 models (a name
    /// containing `phi-3` or `phi3`) the right-strip attribute; nothing else uses it.
    pub general_name: Option<String>,
}

impl Vocab {
    /// A vocabulary of the given kind and token texts, every other field absent.
    pub fn new(model: ModelKind, tokens: Vec<Vec<u8>>) -> Vocab {
        Vocab {
            model,
            pre: None,
            tokens,
            scores: Vec::new(),
            token_types: Vec::new(),
            merges: Vec::new(),
            special: SpecialIds::default(),
            add_bos: None,
            add_eos: None,
            add_space_prefix: None,
            remove_extra_whitespaces: None,
            general_name: None,
        }
    }

    /// [`Vocab::new`] from string token texts.
    pub fn from_strs<S: AsRef<str>>(model: ModelKind, tokens: &[S]) -> Vocab {
        Vocab::new(model, tokens.iter().map(|t| t.as_ref().as_bytes().to_vec()).collect())
    }
}
