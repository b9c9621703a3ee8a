//! The crate's one error type: a kind to match on and a message that names the file
//! position, metadata key or tensor concerned.

use std::fmt;

/// What went wrong, for callers that react to some errors differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be opened, mapped, read or written.
    Io,
    /// The file ends before a value it announces.
    Truncated,
    /// The bytes are not a well-formed GGUF file (magic, value types, sizes, offsets,
    /// alignment, duplicates).
    Malformed,
    /// A GGUF version this crate does not read.
    UnsupportedVersion,
    /// A tensor type id that is not a current ggml type.
    UnknownType,
    /// A ggml type relax does not turn into numbers (Q5_K, IQ2_XXS, ...).
    UnsupportedType,
    /// A metadata key the caller asked for is absent.
    MissingKey,
    /// A metadata value has another type than the caller asked for, or does not fit it.
    WrongType,
    /// A tensor the caller asked for is absent.
    MissingTensor,
    /// A caller's argument is invalid (a length that is not a whole number of blocks, a
    /// writer given a duplicate name, a model configuration that does not add up).
    InvalidArgument,
}

/// An error of this crate: its [`ErrorKind`] and a complete, human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufError {
    kind: ErrorKind,
    message: String,
}

impl GgufError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> GgufError {
        GgufError { kind, message: message.into() }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without a prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context: ` in front of its message (a file name, say).
    pub fn context(self, context: impl fmt::Display) -> GgufError {
        GgufError { kind: self.kind, message: format!("{context}: {}", self.message) }
    }

    pub(crate) fn malformed(message: impl Into<String>) -> GgufError {
        GgufError::new(ErrorKind::Malformed, message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> GgufError {
        GgufError::new(ErrorKind::InvalidArgument, message)
    }
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GgufError {}

/// This crate's result type.
pub type Result<T, E = GgufError> = std::result::Result<T, E>;
