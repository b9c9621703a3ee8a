//! [`GgufFile`]: an opened, validated GGUF file whose tensor data stays in a read-only
//! memory map.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{ErrorKind, GgufError, Result};
use crate::metadata::Metadata;
use crate::parse::{Parsed, parse};
use crate::quant;
use crate::tensor::{SharedBytes, Storage, TensorInfo};

/// A GGUF file: header, metadata and tensor infos parsed and validated at open; tensor
/// data read on demand from the map.
pub struct GgufFile {
    storage: Arc<Storage>,
    path: Option<PathBuf>,
    version: u32,
    alignment: u64,
    data_offset: u64,
    metadata: Metadata,
    tensors: Vec<TensorInfo>,
    by_name: HashMap<String, usize>,
}

/// Maps `file` read-only.
#[expect(unsafe_code, reason = "memmap2's map is unsafe: the file must not change while mapped")]
fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and never handed out mutably. Another process that
    // truncates or rewrites the file while it is mapped would change what we read (or
    // fault); that is the caveat of every memory-mapped reader, llama.cpp's included.
    unsafe { memmap2::MmapOptions::new().map(file) }
}

impl GgufFile {
    /// Opens, maps and validates the file at `path`. Errors name the file.
    pub fn open(path: impl AsRef<Path>) -> Result<GgufFile> {
        let path = path.as_ref();
        let shown = path.display();
        let io = |e: std::io::Error| GgufError::new(ErrorKind::Io, format!("{shown}: {e}"));
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let storage = if len == 0 {
            Storage::Owned(Box::default())
        } else {
            Storage::Mapped(
                map_file(&file).map_err(|e| GgufError::new(ErrorKind::Io, format!("{shown}: cannot map: {e}")))?,
            )
        };
        let mut f = GgufFile::from_storage(storage).map_err(|e| e.context(shown))?;
        f.path = Some(path.to_path_buf());
        Ok(f)
    }

    /// Parses a file held in memory (tests, files fetched by other means).
    pub fn from_bytes(bytes: impl Into<Box<[u8]>>) -> Result<GgufFile> {
        GgufFile::from_storage(Storage::Owned(bytes.into()))
    }

    fn from_storage(storage: Storage) -> Result<GgufFile> {
        let Parsed { version, metadata, tensors, alignment, data_offset } = parse(storage.bytes())?;
        let by_name = tensors.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
        Ok(GgufFile {
            storage: Arc::new(storage),
            path: None,
            version,
            alignment,
            data_offset,
            metadata,
            tensors,
            by_name,
        })
    }

    /// The path the file was opened from (`None` for [`Self::from_bytes`]).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The GGUF version (1, 2 or 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The alignment of tensor data (`general.alignment`, default 32).
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// The file offset of the data section.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.storage.bytes().len() as u64
    }

    /// Whether the file is empty (never true for a file that opened).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The tensor infos, in file order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// The tensor named `name`, if present.
    pub fn get_tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.by_name.get(name).map(|&i| &self.tensors[i])
    }

    /// The tensor named `name`; an error naming it when absent.
    pub fn tensor(&self, name: &str) -> Result<&TensorInfo> {
        self.get_tensor(name)
            .ok_or_else(|| GgufError::new(ErrorKind::MissingTensor, format!("no tensor named `{name}`")))
    }

    /// The bytes of `info`'s data, borrowed from the map. `info` must come from this file
    /// (an info of another file yields an empty slice when out of range).
    pub fn data(&self, info: &TensorInfo) -> &[u8] {
        let r = info.file_range();
        self.storage.bytes().get(r.start as usize..r.end as usize).unwrap_or_default()
    }

    /// The bytes of tensor `name`, borrowed from the map.
    pub fn tensor_data(&self, name: &str) -> Result<&[u8]> {
        Ok(self.data(self.tensor(name)?))
    }

    /// The bytes of tensor `name` as a [`SharedBytes`] that keeps the map alive after the
    /// `GgufFile` is dropped.
    pub fn tensor_bytes(&self, name: &str) -> Result<SharedBytes> {
        let r = self.tensor(name)?.file_range();
        Ok(SharedBytes::new(self.storage.clone(), r.start as usize..r.end as usize))
    }

    /// The whole file as a [`SharedBytes`].
    pub fn shared_bytes(&self) -> SharedBytes {
        SharedBytes::new(self.storage.clone(), 0..self.storage.bytes().len())
    }

    /// Tensor `name` as `f32` values in storage order (`dims[0]` fastest), dequantized with
    /// ggml's reference dequantizer. An error for types relax does not support.
    pub fn tensor_f32(&self, name: &str) -> Result<Vec<f32>> {
        let info = self.tensor(name)?;
        info.check_supported()?;
        quant::dequantize_to_vec(info.ggml_type, self.data(info), info.n_elements as usize)
            .map_err(|e| e.context(format_args!("tensor `{name}`")))
    }
}

impl std::fmt::Debug for GgufFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufFile")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("metadata", &self.metadata.len())
            .field("tensors", &self.tensors.len())
            .finish()
    }
}
