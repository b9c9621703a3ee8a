//! The one error type of the crate: every problem with a vocabulary or an input is a
//! value naming it, never a panic.

use std::fmt;

/// What went wrong building a [`crate::Tokenizer`] or using it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// `tokenizer.ggml.model` names a tokenizer this crate does not implement.
    UnknownModel(String),
    /// `tokenizer.ggml.pre` names a pre-tokenizer this crate does not implement.
    UnknownPreTokenizer(String),
    /// The vocabulary has no tokens.
    EmptyVocabulary,
    /// Two tokens have the same text.
    DuplicateToken {
        /// The text both tokens have (lossy UTF-8).
        text: String,
        /// The first id with that text.
        first: u32,
        /// The second id with that text.
        second: u32,
    },
    /// A per-token array (scores, token types) does not have one entry per token.
    LengthMismatch {
        /// The array's name.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The number of tokens.
        tokens: usize,
    },
    /// A token's score is NaN.
    NanScore {
        /// The token.
        id: u32,
    },
    /// A special token id (BOS, EOS, ...) is not a token of the vocabulary.
    SpecialIdOutOfRange {
        /// Which special token (`"bos"`, `"eos"`, ...).
        which: &'static str,
        /// The id.
        id: u32,
        /// The number of tokens.
        tokens: usize,
    },
    /// A flag asks for a special token the vocabulary does not have
    /// (`add_bos` without a BOS token).
    MissingSpecialToken {
        /// Which special token.
        which: &'static str,
        /// The flag that needs it.
        flag: &'static str,
    },
    /// A BPE merge is not two known tokens separated by a space.
    BadMerge {
        /// Its index in the merges list (its rank).
        index: usize,
        /// The merge as written.
        merge: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A pre-tokenizer pattern failed to compile or to run.
    Regex {
        /// The pattern as llama.cpp writes it.
        pattern: String,
        /// The regex engine's message.
        message: String,
    },
    /// A token id passed to decoding is not a token of the vocabulary.
    TokenIdOutOfRange {
        /// The id.
        id: u32,
        /// The number of tokens.
        tokens: usize,
    },
    /// SentencePiece byte fallback needs a token for a byte the vocabulary lacks
    /// (neither `<0xXX>` nor the byte itself is a token).
    NoByteToken {
        /// The byte.
        byte: u8,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownModel(name) => write!(
                f,
                "unknown tokenizer model '{name}' (supported: 'llama' (SentencePiece), 'gpt2' (byte-level BPE))"
            ),
            Error::UnknownPreTokenizer(name) => {
                write!(f, "unknown pre-tokenizer '{name}' (supported: {})", crate::PreTokenizer::NAMES.join(", "))
            }
            Error::EmptyVocabulary => write!(f, "the vocabulary has no tokens"),
            Error::DuplicateToken { text, first, second } => {
                write!(f, "tokens {first} and {second} have the same text {text:?}")
            }
            Error::LengthMismatch { what, len, tokens } => {
                write!(f, "{what} has {len} entries for {tokens} tokens")
            }
            Error::NanScore { id } => write!(f, "the score of token {id} is NaN"),
            Error::SpecialIdOutOfRange { which, id, tokens } => {
                write!(f, "{which} token id {id} is out of range for a vocabulary of {tokens} tokens")
            }
            Error::MissingSpecialToken { which, flag } => {
                write!(f, "{flag} is set but the vocabulary has no {which} token")
            }
            Error::BadMerge { index, merge, reason } => {
                write!(f, "merge {index} {merge:?}: {reason}")
            }
            Error::Regex { pattern, message } => {
                write!(f, "pre-tokenizer pattern {pattern:?}: {message}")
            }
            Error::TokenIdOutOfRange { id, tokens } => {
                write!(f, "token id {id} is out of range for a vocabulary of {tokens} tokens")
            }
            Error::NoByteToken { byte } => write!(
                f,
                "byte fallback needs a token for byte 0x{byte:02X} but the vocabulary has neither <0x{byte:02X}> nor the byte itself"
            ),
        }
    }
}

impl std::error::Error for Error {}
