//! Tokenizers for large language models that give the same token ids and text as
//! llama.cpp, for vocabularies read from GGUF files.
//!
//! A [`Vocab`] holds what a GGUF file's `tokenizer.ggml.*` keys hold;
//! [`Tokenizer::new`] validates it and builds the lookup tables. Two models are
//! implemented: `llama` (SentencePiece BPE with byte fallback, [`ModelKind::Spm`]) and
//! `gpt2` (byte-level BPE with the pre-tokenizers of [`PreTokenizer`],
//! [`ModelKind::Bpe`]).
//!
//! ```
//! use relax_tokenizer::{ModelKind, Tokenizer, Vocab};
//!
//! let mut vocab = Vocab::from_strs(ModelKind::Spm, &["<unk>", "<s>", "</s>", "▁", "▁a", "b"]);
//! vocab.scores = vec![0.0, 0.0, 0.0, -1.0, -2.0, -3.0];
//! let tokenizer = Tokenizer::new(vocab)?;
//! assert_eq!(tokenizer.encode("ab", true, false)?, vec![1, 4, 5]);
//! assert_eq!(tokenizer.decode(&[4, 5])?, "ab");
//! # Ok::<(), relax_tokenizer::Error>(())
//! ```
//!
//! See `docs/tokenizer.md` for the algorithms and how they were checked against
//! llama.cpp.

mod bpe;
mod decode;
mod error;
mod pretok;
mod special;
mod split;
mod spm;
mod tokenizer;
mod unicode;
mod vocab;

pub use decode::StreamDecoder;
pub use error::Error;
pub use pretok::PreTokenizer;
pub use tokenizer::{DetokenizeOptions, Flags, Tokenizer};
pub use vocab::{ModelKind, SpecialIds, TokenType, Vocab};
