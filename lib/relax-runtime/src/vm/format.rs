//! The serialized executable (`docs/executable.md`): a versioned header, then the
//! tables in a fixed order, then nothing. Decoding checks every tag, count and index
//! ([`verify`]), so a malformed or truncated input is an error, never a panic and
//! never an executable that could index out of range when run.

use super::bytecode::{Constant, Function, InstrDebug, Param, SpanInfo};
use super::kernels::{BufferSig, KernelEntry, KernelError, KernelParam, KernelSlot};
use super::wire::{Reader, Writer};
use super::{Executable, GlobalEntry, GlobalKind, attr_codec, code_codec, pool_codec};
use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use relax_codegen::abi::SlotKind;

/// The first eight bytes of every executable.
pub const MAGIC: &[u8; 8] = b"RELAXVM\0";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Checks at compile time what encoding would lose (a buffer load in a symbolic
/// expression, a buffer attribute): such an executable is a compile error.
pub(crate) fn check_encodable(e: &Executable) -> RunResult<()> {
    for f in &e.functions {
        pool_codec::check_pool(&f.pool)
            .map_err(|m| RunError::new(format!("`{}`: the VM cannot encode {m}", f.name)))?;
    }
    for k in &e.kernels {
        pool_codec::check_pool(&k.pool)
            .map_err(|m| RunError::new(format!("`{}`: the VM cannot encode {m}", k.name)))?;
    }
    for a in &e.attrs {
        for (key, v) in &a.0 {
            attr_codec::check_attr(v)
                .map_err(|m| RunError::new(format!("attribute `{key}`: the VM cannot encode {m}")))?;
        }
    }
    Ok(())
}

impl Executable {
    /// The executable as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.buf.extend_from_slice(MAGIC);
        w.u32(VERSION);
        w.len(self.strings.len());
        self.strings.iter().for_each(|s| w.str(s));
        w.str(&self.source_name);
        w.len(self.spans.len());
        for s in &self.spans {
            w.u32(s.lo);
            w.u32(s.hi);
            w.u32(s.line);
            w.u32(s.col);
            w.str(&s.text);
        }
        w.len(self.constants.len());
        self.constants.iter().for_each(|c| write_constant(&mut w, c));
        w.len(self.attrs.len());
        self.attrs.iter().for_each(|a| attr_codec::write_attrs(&mut w, a));
        w.len(self.globals.len());
        for g in &self.globals {
            w.str(&g.name);
            match &g.kind {
                GlobalKind::Function(i) => {
                    w.u8(0);
                    w.u32(*i);
                }
                GlobalKind::Kernel(i) => {
                    w.u8(1);
                    w.u32(*i);
                }
                GlobalKind::Extern(s) => {
                    w.u8(2);
                    w.str(s);
                }
                GlobalKind::Other => w.u8(3),
            }
        }
        w.len(self.kernels.len());
        self.kernels.iter().for_each(|k| write_kernel(&mut w, k));
        w.len(self.functions.len());
        self.functions.iter().for_each(|f| write_function(&mut w, f));
        w.buf
    }

    /// Reads an executable written by [`Executable::to_bytes`] of this format version.
    pub fn from_bytes(data: &[u8]) -> RunResult<Executable> {
        if data.len() < 12 || &data[..8] != MAGIC {
            return Err(RunError::new("not a relax executable (bad magic)"));
        }
        let mut r = Reader::new(&data[8..]);
        let version = r.u32()?;
        if version != VERSION {
            return Err(RunError::new(format!(
                "relax executable format version {version} is not supported (this build reads version {VERSION})"
            )));
        }
        let n = r.len(4)?;
        let strings = (0..n).map(|_| r.str()).collect::<RunResult<Vec<_>>>()?;
        let source_name = r.str()?;
        let n = r.len(20)?;
        let mut spans = Vec::with_capacity(n);
        for _ in 0..n {
            spans.push(SpanInfo { lo: r.u32()?, hi: r.u32()?, line: r.u32()?, col: r.u32()?, text: r.str()? });
        }
        let n = r.len(1)?;
        let constants = (0..n).map(|_| read_constant(&mut r)).collect::<RunResult<Vec<_>>>()?;
        let n = r.len(4)?;
        let attrs = (0..n).map(|_| attr_codec::read_attrs(&mut r)).collect::<RunResult<Vec<_>>>()?;
        let n = r.len(5)?;
        let mut globals = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.str()?;
            let kind = match r.u8()? {
                0 => GlobalKind::Function(r.u32()?),
                1 => GlobalKind::Kernel(r.u32()?),
                2 => GlobalKind::Extern(r.str()?),
                3 => GlobalKind::Other,
                t => return Err(r.err(format!("bad global kind {t}"))),
            };
            globals.push(GlobalEntry { name, kind });
        }
        let n = r.len(8)?;
        let kernels = (0..n).map(|_| read_kernel(&mut r)).collect::<RunResult<Vec<_>>>()?;
        let n = r.len(8)?;
        let functions = (0..n).map(|_| read_function(&mut r)).collect::<RunResult<Vec<_>>>()?;
        if !r.at_end() {
            return Err(r.err("trailing bytes after the executable"));
        }
        let e = Executable { functions, kernels, globals, constants, strings, attrs, spans, source_name };
        super::verify::verify(&e)?;
        Ok(e)
    }
}

fn write_constant(w: &mut Writer, c: &Constant) {
    match c {
        Constant::Tensor { index, dtype, shape, data } => {
            w.u8(0);
            w.u32(*index);
            w.dtype(*dtype);
            w.i64s(shape);
            w.bool(data.is_some());
            if let Some(d) = data {
                w.bytes(d);
            }
        }
        Constant::Str(s) => {
            w.u8(1);
            w.str(s);
        }
        Constant::DType(d) => {
            w.u8(2);
            w.dtype(*d);
        }
        Constant::Shape(v) => {
            w.u8(3);
            w.i64s(v);
        }
        Constant::Prim(Scalar::Int(x, dt)) => {
            w.u8(4);
            w.dtype(*dt);
            w.i64(*x);
        }
        Constant::Prim(Scalar::Float(x, dt)) => {
            w.u8(5);
            w.dtype(*dt);
            w.u64(x.to_bits());
        }
    }
}

fn read_constant(r: &mut Reader<'_>) -> RunResult<Constant> {
    Ok(match r.u8()? {
        0 => {
            let index = r.u32()?;
            let dtype = r.dtype()?;
            let shape = r.i64s()?;
            let data = if r.bool()? { Some(r.bytes()?.to_vec()) } else { None };
            Constant::Tensor { index, dtype, shape, data }
        }
        1 => Constant::Str(r.str()?),
        2 => Constant::DType(r.dtype()?),
        3 => Constant::Shape(r.i64s()?),
        4 => {
            let dt = r.dtype()?;
            Constant::Prim(Scalar::Int(r.i64()?, dt))
        }
        5 => {
            let dt = r.dtype()?;
            Constant::Prim(Scalar::Float(f64::from_bits(r.u64()?), dt))
        }
        t => return Err(r.err(format!("bad constant tag {t}"))),
    })
}

const SLOT_KINDS: [SlotKind; 4] = [SlotKind::Handle, SlotKind::Scalar, SlotKind::ShapeVar, SlotKind::Ret];

fn write_kernel(w: &mut Writer, k: &KernelEntry) {
    w.str(&k.name);
    w.str(&k.packed_symbol);
    w.u32(k.global);
    pool_codec::write_pool(w, &k.pool);
    w.len(k.params.len());
    for p in &k.params {
        w.u32(p.var);
        w.bool(p.buffer.is_some());
        if let Some(b) = &p.buffer {
            w.str(&b.name);
            w.dtype(b.dtype);
            w.u32s(&b.shape);
            w.u32s(&b.strides);
            w.bool(b.elem_offset.is_some());
            if let Some(o) = b.elem_offset {
                w.u32(o);
            }
        }
    }
    w.len(k.slots.len());
    for s in &k.slots {
        w.u8(SLOT_KINDS.iter().position(|&x| x == s.kind).unwrap_or(0) as u8);
        w.u32(s.var);
    }
    w.dtype(k.ret);
    w.len(k.errors.len());
    for e in &k.errors {
        w.str(&e.message);
        w.u32(e.span);
    }
    w.u32s(&k.overwrites);
}

fn read_kernel(r: &mut Reader<'_>) -> RunResult<KernelEntry> {
    let name = r.str()?;
    let packed_symbol = r.str()?;
    let global = r.u32()?;
    let pool = pool_codec::read_pool(r)?;
    let n = r.len(5)?;
    let mut params = Vec::with_capacity(n);
    for _ in 0..n {
        let var = r.u32()?;
        let buffer = if r.bool()? {
            Some(BufferSig {
                name: r.str()?,
                dtype: r.dtype()?,
                shape: r.u32s()?,
                strides: r.u32s()?,
                elem_offset: if r.bool()? { Some(r.u32()?) } else { None },
            })
        } else {
            None
        };
        params.push(KernelParam { var, buffer });
    }
    let n = r.len(5)?;
    let mut slots = Vec::with_capacity(n);
    for _ in 0..n {
        let k = r.u8()?;
        let kind = *SLOT_KINDS.get(k as usize).ok_or_else(|| r.err(format!("bad slot kind {k}")))?;
        slots.push(KernelSlot { kind, var: r.u32()? });
    }
    let ret = r.dtype()?;
    let n = r.len(8)?;
    let mut errors = Vec::with_capacity(n);
    for _ in 0..n {
        errors.push(KernelError { message: r.str()?, span: r.u32()? });
    }
    let overwrites = r.u32s()?;
    Ok(KernelEntry { name, packed_symbol, global, params, slots, ret, pool, errors, overwrites })
}

fn write_function(w: &mut Writer, f: &Function) {
    w.str(&f.name);
    w.u32(f.global);
    w.len(f.params.len());
    for p in &f.params {
        w.u32(p.reg);
        w.u32(p.ty);
        w.u32(p.text);
    }
    w.u32(f.ret.0);
    w.u32(f.ret.1);
    w.u32(f.span);
    w.u32(f.num_regs);
    w.len(f.reg_names.len());
    f.reg_names.iter().for_each(|s| w.str(s));
    w.u32s(&f.reg_spans);
    pool_codec::write_pool(w, &f.pool);
    w.len(f.code.len());
    f.code.iter().for_each(|i| code_codec::write(w, i));
    w.len(f.debug.len());
    for d in &f.debug {
        w.u32(d.site);
        w.u32(d.binding);
    }
}

fn read_function(r: &mut Reader<'_>) -> RunResult<Function> {
    let name = r.str()?;
    let global = r.u32()?;
    let n = r.len(12)?;
    let mut params = Vec::with_capacity(n);
    for _ in 0..n {
        params.push(Param { reg: r.u32()?, ty: r.u32()?, text: r.u32()? });
    }
    let ret = (r.u32()?, r.u32()?);
    let span = r.u32()?;
    let num_regs = r.u32()?;
    let n = r.len(4)?;
    let reg_names = (0..n).map(|_| r.str()).collect::<RunResult<Vec<_>>>()?;
    let reg_spans = r.u32s()?;
    let pool = pool_codec::read_pool(r)?;
    let n = r.len(1)?;
    let code = (0..n).map(|_| code_codec::read(r)).collect::<RunResult<Vec<_>>>()?;
    let n = r.len(8)?;
    let mut debug = Vec::with_capacity(n);
    for _ in 0..n {
        debug.push(InstrDebug { site: r.u32()?, binding: r.u32()? });
    }
    Ok(Function { name, global, params, ret, span, num_regs, code, debug, reg_names, reg_spans, pool })
}
