//! The primitive encodings of the executable format: little-endian integers,
//! length-prefixed strings and byte arrays, dtypes. Every read is bounds-checked: a
//! truncated or malformed input is an error naming the byte offset, never a panic.

use relax_ir::{DataType, TypeCode};

use crate::error::{RunError, RunResult};

/// Appends encoded values.
#[derive(Default)]
pub(crate) struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, x: u8) {
        self.buf.push(x);
    }
    pub fn bool(&mut self, x: bool) {
        self.u8(u8::from(x));
    }
    pub fn u32(&mut self, x: u32) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    pub fn u64(&mut self, x: u64) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    pub fn i64(&mut self, x: i64) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    pub fn len(&mut self, n: usize) {
        self.u32(n as u32);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    pub fn u32s(&mut self, xs: &[u32]) {
        self.len(xs.len());
        xs.iter().for_each(|&x| self.u32(x));
    }
    pub fn i64s(&mut self, xs: &[i64]) {
        self.len(xs.len());
        xs.iter().for_each(|&x| self.i64(x));
    }
    pub fn dtype(&mut self, d: DataType) {
        self.u8(code_of(d.code));
        self.u32(u32::from(d.bits) | (u32::from(d.lanes) << 16));
    }
}

const CODES: [TypeCode; 10] = [
    TypeCode::Int,
    TypeCode::UInt,
    TypeCode::Float,
    TypeCode::BFloat,
    TypeCode::Bool,
    TypeCode::Handle,
    TypeCode::Void,
    TypeCode::Float8E4M3FN,
    TypeCode::Float8E5M2,
    TypeCode::Float4E2M1FN,
];

fn code_of(c: TypeCode) -> u8 {
    CODES.iter().position(|&x| x == c).unwrap_or(6) as u8
}

/// Reads encoded values.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// What the data is, for messages (`executable`, `library manifest`).
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader::of(data, "executable")
    }

    /// A reader of `data`, which errors call a malformed `what`.
    pub fn of(data: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { data, pos: 0, what }
    }

    pub fn at_end(&self) -> bool {
        self.pos == self.data.len()
    }

    /// An error at the current offset.
    pub fn err(&self, what: impl std::fmt::Display) -> RunError {
        RunError::new(format!("malformed {}: {what} (at byte {})", self.what, self.pos))
    }

    fn take(&mut self, n: usize) -> RunResult<&'a [u8]> {
        if self.data.len() - self.pos < n {
            return Err(self.err("unexpected end of data"));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn u8(&mut self) -> RunResult<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn bool(&mut self) -> RunResult<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.err(format!("bad boolean {b}"))),
        }
    }
    pub fn u32(&mut self) -> RunResult<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> RunResult<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub fn i64(&mut self) -> RunResult<i64> {
        Ok(self.u64()? as i64)
    }
    /// A count of items each at least `min` bytes long (checked against what is left,
    /// so a corrupt count cannot make a huge allocation).
    pub fn len(&mut self, min: usize) -> RunResult<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min.max(1)) > self.data.len() - self.pos {
            return Err(self.err(format!("a count of {n} exceeds the data")));
        }
        Ok(n)
    }
    pub fn bytes(&mut self) -> RunResult<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    pub fn str(&mut self) -> RunResult<String> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.err("a string is not UTF-8"))
    }
    pub fn u32s(&mut self) -> RunResult<Vec<u32>> {
        let n = self.len(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
    pub fn i64s(&mut self) -> RunResult<Vec<i64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.i64()).collect()
    }
    pub fn dtype(&mut self) -> RunResult<DataType> {
        let c = self.u8()?;
        let code = *CODES.get(c as usize).ok_or_else(|| self.err(format!("bad dtype code {c}")))?;
        let w = self.u32()?;
        let d = DataType { code, bits: (w & 0xffff) as u16, lanes: (w >> 16) as u16 };
        // Only the widths a dtype can have (integer arithmetic wraps to them).
        let ok = if code == TypeCode::Void {
            d == DataType::VOID
        } else {
            matches!(d.bits, 1 | 4 | 8 | 16 | 32 | 64) && d.lanes >= 1
        };
        if !ok {
            return Err(self.err(format!("bad dtype ({code:?}, {} bits, {} lanes)", d.bits, d.lanes)));
        }
        Ok(d)
    }
}
