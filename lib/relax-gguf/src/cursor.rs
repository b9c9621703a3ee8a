//! A bounds-checked little-endian reader over the file's bytes. Every read names what it
//! reads, so running past the end is an error that says what was cut off and where; no
//! length read from the file is used before it is checked against the bytes that remain.

use crate::error::{ErrorKind, GgufError, Result};

/// A position in the file's bytes.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// GGUF version 1 stores counts and lengths as `u32`; later versions as `u64`.
    v1: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0, v1: false }
    }

    pub(crate) fn set_v1(&mut self, v1: bool) {
        self.v1 = v1;
    }

    /// The current byte offset.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left after the current offset.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The size of a count or length in this version's files.
    pub(crate) fn len_size(&self) -> usize {
        if self.v1 { 4 } else { 8 }
    }

    fn truncated(&self, n: u64, what: &dyn Fn() -> String) -> GgufError {
        GgufError::new(
            ErrorKind::Truncated,
            format!(
                "truncated file: {} at byte {} needs {n} bytes, but the file ends at byte {}",
                what(),
                self.pos,
                self.buf.len()
            ),
        )
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<&'a [u8]> {
        if n > self.remaining() as u64 {
            return Err(self.truncated(n, what));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.buf[start..self.pos])
    }

    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N]> {
        let b = self.take(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &dyn Fn() -> String) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &dyn Fn() -> String) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &dyn Fn() -> String) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count or length: `u32` in version 1, `u64` after.
    pub(crate) fn len(&mut self, what: &dyn Fn() -> String) -> Result<u64> {
        if self.v1 { self.u32(what).map(u64::from) } else { self.u64(what) }
    }

    /// A GGUF string: its length, then that many bytes.
    pub(crate) fn string(&mut self, what: &dyn Fn() -> String) -> Result<&'a [u8]> {
        let at = self.pos;
        let n = self.len(what)?;
        if n > self.remaining() as u64 {
            let msg = format!(
                "truncated file: {} at byte {at} claims {n} bytes, but only {} remain",
                what(),
                self.remaining()
            );
            return Err(GgufError::new(ErrorKind::Truncated, msg));
        }
        self.take(n, what)
    }

    /// Checks that `count` items of at least `min_size` bytes each can fit in the rest of
    /// the file, before anything is allocated for them.
    pub(crate) fn check_count(&self, count: u64, min_size: usize, what: &dyn Fn() -> String) -> Result<usize> {
        let fits = (self.remaining() / min_size.max(1)) as u64;
        if count > fits {
            let msg = format!(
                "truncated file: {} claims {count} entries of at least {min_size} bytes each at byte {}, \
                 but only {} bytes remain",
                what(),
                self.pos,
                self.remaining()
            );
            return Err(GgufError::new(ErrorKind::Truncated, msg));
        }
        Ok(count as usize)
    }
}
