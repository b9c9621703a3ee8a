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

use crate::error::RunError;

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
        let mut w = MAGIC.to_vec();
        let s = |w: &mut Vec<u8>, s: &str| {
            w.extend_from_slice(&(s.len() as u32).to_le_bytes());
            w.extend_from_slice(s.as_bytes());
        };
        s(&mut w, &self.version);
        s(&mut w, &self.triple);
        s(&mut w, &self.source_name);
        s(&mut w, &self.source);
        w.extend_from_slice(&(self.kernels.len() as u32).to_le_bytes());
        for k in &self.kernels {
            s(&mut w, &k.name);
            s(&mut w, &k.symbol);
            w.extend_from_slice(&(k.errors.len() as u32).to_le_bytes());
            for e in &k.errors {
                s(&mut w, &e.message);
                w.extend_from_slice(&e.span.start.to_le_bytes());
                w.extend_from_slice(&e.span.end.to_le_bytes());
            }
        }
        w
    }

    /// Reads a manifest; any malformed input is an error.
    pub fn from_bytes(b: &[u8]) -> Result<Manifest, RunError> {
        let mut r = Reader { b, at: 0 };
        if r.take(8)? != MAGIC {
            return Err(RunError::new("not a relax library manifest (bad magic)"));
        }
        let version = r.string()?;
        let triple = r.string()?;
        let source_name = r.string()?;
        let source = r.string()?;
        let n = r.count()?;
        let mut kernels = Vec::new();
        for _ in 0..n {
            let name = r.string()?;
            let symbol = r.string()?;
            let ne = r.count()?;
            let mut errors = Vec::new();
            for _ in 0..ne {
                let message = r.string()?;
                let span = Span { start: r.u32()?, end: r.u32()? };
                errors.push(KernelErrorInfo { message, span });
            }
            kernels.push(KernelInfo { name, symbol, errors });
        }
        if r.at != b.len() {
            return Err(RunError::new("library manifest: trailing bytes"));
        }
        Ok(Manifest { version, triple, source_name, source, kernels })
    }
}

/// A cursor over manifest bytes.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RunError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| RunError::new("library manifest is truncated"))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, RunError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn count(&mut self) -> Result<usize, RunError> {
        Ok(self.u32()? as usize)
    }

    fn string(&mut self) -> Result<String, RunError> {
        let n = self.count()?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| RunError::new("library manifest: a string is not UTF-8"))
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
