//! Tensor infos and shared byte ranges: a tensor's bytes stay in the file's memory map,
//! and a [`SharedBytes`] keeps the map alive for as long as a consumer (the runtime's
//! tensor storage) holds the range.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use crate::error::{ErrorKind, GgufError, Result};
use crate::types::{GgmlType, SUPPORTED_TYPES};

/// One tensor of a GGUF file, as its tensor info describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor's name (`blk.0.attn_q.weight`).
    pub name: String,
    /// The dimensions in ggml order: `dims[0]` (`ne[0]`) is the innermost, contiguous one.
    /// A matrix of `rows × cols` in row-major terms is stored as `[cols, rows]`.
    pub dims: Vec<u64>,
    /// The element type.
    pub ggml_type: GgmlType,
    /// The data's offset from the start of the data section (a multiple of the alignment).
    pub offset: u64,
    /// The number of elements (the product of `dims`; 1 for a scalar).
    pub n_elements: u64,
    /// The data's size in bytes.
    pub n_bytes: u64,
    /// The data's offset from the start of the file.
    pub file_offset: u64,
}

impl TensorInfo {
    /// The shape in row-major (numpy, Relax) order: `dims` reversed.
    pub fn shape(&self) -> Vec<u64> {
        self.dims.iter().rev().copied().collect()
    }

    /// Elements per row (`ne[0]`; 1 for a scalar).
    pub fn row_len(&self) -> u64 {
        self.dims.first().copied().unwrap_or(1)
    }

    /// The number of rows (elements divided by the row length).
    pub fn n_rows(&self) -> u64 {
        self.n_elements.checked_div(self.row_len()).unwrap_or(0)
    }

    /// `Ok` when relax reads this tensor's type as numbers; otherwise an error that names
    /// the tensor and its type ("tensor `x` has type Q5_K, which relax does not support").
    pub fn check_supported(&self) -> Result<()> {
        if self.ggml_type.is_supported() {
            return Ok(());
        }
        let names: Vec<&str> = SUPPORTED_TYPES.iter().map(|t| t.name()).collect();
        Err(GgufError::new(
            ErrorKind::UnsupportedType,
            format!(
                "tensor `{}` has type {}, which relax does not support (supported: {})",
                self.name,
                self.ggml_type,
                names.join(", ")
            ),
        ))
    }

    /// The data's byte range in the file.
    pub fn file_range(&self) -> Range<u64> {
        self.file_offset..self.file_offset + self.n_bytes
    }
}

/// Where a file's bytes live: a read-only memory map, or memory of our own.
pub(crate) enum Storage {
    Mapped(memmap2::Mmap),
    Owned(Box<[u8]>),
}

impl Storage {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(b) => b,
        }
    }
}

/// A byte range of a file that keeps the file's bytes (its memory map) alive: cheap to
/// clone, `Send + Sync`, and dereferences to `&[u8]`. The runtime wraps tensor data as
/// storage through this without copying it.
///
/// For a mapped file the bytes are page-aligned at offset 0, so a tensor's data is aligned
/// to the file's alignment (32 bytes by default) in memory.
#[derive(Clone)]
pub struct SharedBytes {
    storage: Arc<Storage>,
    start: usize,
    len: usize,
}

impl SharedBytes {
    /// `range` of `storage`; the caller has checked that it lies inside.
    pub(crate) fn new(storage: Arc<Storage>, range: Range<usize>) -> SharedBytes {
        debug_assert!(range.end <= storage.bytes().len());
        SharedBytes { storage, start: range.start, len: range.end - range.start }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage.bytes()[self.start..self.start + self.len]
    }

    /// The range's position in the file.
    pub fn file_range(&self) -> Range<usize> {
        self.start..self.start + self.len
    }

    /// Whether the bytes are a memory map of the file (rather than memory read into).
    pub fn is_mapped(&self) -> bool {
        matches!(*self.storage, Storage::Mapped(_))
    }
}

impl Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SharedBytes({}..{}, {})",
            self.start,
            self.start + self.len,
            if self.is_mapped() { "mapped" } else { "owned" }
        )
    }
}
