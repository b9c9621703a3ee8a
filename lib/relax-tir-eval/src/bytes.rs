//! The bytes behind a storage: memory of the process, or a file mapped into it.
//!
//! A [`ByteBuf`] is what a [`crate::value::Bytes`] holds. Tensors computed at run time
//! live in [`ByteBuf::Heap`]; the weights of a model file are bound straight from the
//! file with [`ByteBuf::map_file`] (a private, copy-on-write mapping), so a
//! multi-gigabyte model is neither read nor copied before it runs: the pages that a
//! kernel touches come from the page cache, and resident memory stays near the file's
//! size. Both deref to a byte slice, so every reader and writer of tensor bytes (the TIR
//! interpreter, the reference kernels, the JIT's argument pointers) sees one type.
#![expect(unsafe_code, reason = "mapping a file is unsafe in memmap2's API")]

use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::path::Path;

/// The bytes of a storage.
pub enum ByteBuf {
    /// Memory the process owns.
    Heap(Vec<u8>),
    /// A file mapped privately: reads come from the file, a write makes a private copy
    /// of the page it touches and never reaches the file.
    Mapped(memmap2::MmapMut),
}

impl ByteBuf {
    /// Maps the file at `path` privately (copy-on-write).
    pub fn map_file(path: &Path) -> std::io::Result<ByteBuf> {
        let file = File::open(path)?;
        // SAFETY: the mapping is private, so our writes never reach the file; what
        // memmap2 cannot rule out is another process truncating or rewriting the file
        // while it is mapped, the contract of every program that maps its inputs
        // (llama.cpp maps GGUF files the same way).
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file)? };
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::WillNeed);
        Ok(ByteBuf::Mapped(map))
    }

    /// True for a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self, ByteBuf::Mapped(_))
    }
}

impl Deref for ByteBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ByteBuf::Heap(v) => v,
            ByteBuf::Mapped(m) => m,
        }
    }
}

impl DerefMut for ByteBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            ByteBuf::Heap(v) => v,
            ByteBuf::Mapped(m) => m,
        }
    }
}

impl From<Vec<u8>> for ByteBuf {
    fn from(v: Vec<u8>) -> ByteBuf {
        ByteBuf::Heap(v)
    }
}

impl std::fmt::Debug for ByteBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "heap" };
        write!(f, "ByteBuf({kind}, {} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_file_is_copy_on_write() {
        let dir = std::env::temp_dir().join(format!("relax-bytebuf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.bin");
        std::fs::write(&path, [1u8, 2, 3, 4]).unwrap();
        let mut b = ByteBuf::map_file(&path).unwrap();
        assert!(b.is_mapped());
        assert_eq!(&b[..], &[1, 2, 3, 4]);
        b[0] = 9;
        assert_eq!(b[0], 9);
        assert_eq!(std::fs::read(&path).unwrap(), vec![1, 2, 3, 4], "a write must not reach the file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
