//! The manifest of a compiled library (`docs/library.md`): what the library was built for,
//! the module's source text (the debug table: run-time errors point into it, so a loaded
//! library reports them at the same source lines as the interpreter), and for each kernel
//! its symbol and the messages of its run-time errors.
//!
//! Layout (little-endian): the magic `RLXMAN01`, then strings (a `u32` byte length and
//! UTF-8 bytes), counts (`u32`) and spans (two `u32`, start and end byte;
//! `u32::MAX` twice when unknown): the relax version, the target triple, the source's
//! name and text (both empty when stripped), the kernel count, and per kernel its name,
//! its packed symbol, its error count and per error the message and its span.

use relax_ir::Span;

use crate::error::{RunError, RunResult};
use crate::vm::wire::{Reader, Writer};

/// The magic bytes that start a manifest.
pub const MAGIC: &[u8; 8] = b"RLXMAN01";

/// One run-time error of a kernel (result code = index + 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelErrorInfo {
    /// The message, as the interpreter words it.
    pub message: String,
    /// The statement that fails, in the source text.
    pub span: Span,
}

/// One kernel of a library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The PrimFunc's name.
    pub name: String,
    /// The symbol of `i32 name_packed(u64 *slots)`.
    pub symbol: String,
    /// Its run-time errors, by result code minus one.
    pub errors: Vec<KernelErrorInfo>,
}

/// What a library holds besides code and the executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The relax version that wrote it.
    pub version: String,
    /// The LLVM target triple of its code.
    pub triple: String,
    /// The name of the module's source file (empty when stripped).
    pub source_name: String,
    /// The module's source text, which spans point into (empty when stripped).
    pub source: String,
    /// The kernels.
    pub kernels: Vec<KernelInfo>,
}

impl Manifest {
    /// The manifest as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.buf.extend_from_slice(MAGIC);
        w.str(&self.version);
        w.str(&self.triple);
        w.str(&self.source_name);
        w.str(&self.source);
        w.len(self.kernels.len());
        for k in &self.kernels {
            w.str(&k.name);
            w.str(&k.symbol);
            w.len(k.errors.len());
            for e in &k.errors {
                w.str(&e.message);
                w.u32(e.span.start);
                w.u32(e.span.end);
            }
        }
        w.buf
    }

    /// Reads a manifest; any malformed input is an error.
    pub fn from_bytes(b: &[u8]) -> RunResult<Manifest> {
        if !b.starts_with(MAGIC) {
            return Err(RunError::new("not a relax library manifest (bad magic)"));
        }
        let mut r = Reader::of(&b[MAGIC.len()..], "library manifest");
        let (version, triple, source_name, source) = (r.str()?, r.str()?, r.str()?, r.str()?);
        let n = r.len(8)?;
        let mut kernels = Vec::with_capacity(n);
        for _ in 0..n {
            let (name, symbol) = (r.str()?, r.str()?);
            let ne = r.len(12)?;
            let mut errors = Vec::with_capacity(ne);
            for _ in 0..ne {
                let message = r.str()?;
                let span = Span { start: r.u32()?, end: r.u32()? };
                errors.push(KernelErrorInfo { message, span });
            }
            kernels.push(KernelInfo { name, symbol, errors });
        }
        if !r.at_end() {
            return Err(r.err("trailing bytes"));
        }
        Ok(Manifest { version, triple, source_name, source, kernels })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            version: "0.1.0".into(),
            triple: "x86_64-unknown-linux-gnu".into(),
            source_name: "m.rlx".into(),
            source: "T.Assert(n > 0)".into(),
            kernels: vec![KernelInfo {
                name: "add".into(),
                symbol: "add_packed".into(),
                errors: vec![KernelErrorInfo { message: "assertion failed".into(), span: Span::new(0, 15) }],
            }],
        }
    }

    #[test]
    fn round_trip() {
        let m = sample();
        assert_eq!(Manifest::from_bytes(&m.to_bytes()).unwrap(), m);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let b = sample().to_bytes();
        for n in 0..b.len() {
            assert!(Manifest::from_bytes(&b[..n]).is_err(), "prefix of {n} bytes accepted");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(Manifest::from_bytes(&longer).is_err());
    }
}
