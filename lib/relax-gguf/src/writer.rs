//! [`GgufWriter`]: writes GGUF version 3 files: metadata of every value type, tensors of any
//! ggml type (bytes given by the caller, or `f32` values quantized on the way), each
//! tensor's data at a multiple of the alignment.
//!
//! Tensors may be declared up front and their bytes produced while writing
//! ([`GgufWriter::write_with`]), so a multi-gigabyte model never has to be in memory at once.

use std::io::Write;
use std::path::Path;

use crate::error::{ErrorKind, GgufError, Result};
use crate::metadata::Metadata;
use crate::parse::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT, GGUF_MAGIC, MAX_DIMS, MAX_NAME_LEN, first_duplicate};
use crate::quant;
use crate::types::GgmlType;
use crate::value::{Array, Value};

/// The GGUF version the writer produces.
pub const WRITE_VERSION: u32 = 3;

/// A tensor to write: its name, ggml dims (`ne` order) and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// The tensor's name.
    pub name: String,
    /// Dimensions in ggml order (`dims[0]` innermost).
    pub dims: Vec<u64>,
    /// The element type.
    pub ggml_type: GgmlType,
}

impl TensorSpec {
    /// The number of elements.
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }

    /// The data's size in bytes (checked when the tensor is added).
    pub fn n_bytes(&self) -> u64 {
        self.ggml_type.bytes_for(self.n_elements()).unwrap_or(0)
    }
}

/// A GGUF file under construction.
#[derive(Default)]
pub struct GgufWriter {
    metadata: Metadata,
    tensors: Vec<(TensorSpec, Option<Vec<u8>>)>,
    alignment: u64,
}

impl GgufWriter {
    /// An empty file with the default alignment (32).
    pub fn new() -> GgufWriter {
        GgufWriter { metadata: Metadata::new(), tensors: Vec::new(), alignment: DEFAULT_ALIGNMENT }
    }

    /// Sets the alignment of tensor data (a power of two) and records it as
    /// `general.alignment` when it is not the default.
    pub fn set_alignment(&mut self, alignment: u32) -> Result<()> {
        if !alignment.is_power_of_two() {
            return Err(GgufError::invalid(format!("alignment {alignment} is not a power of two")));
        }
        self.alignment = u64::from(alignment);
        if self.alignment != DEFAULT_ALIGNMENT || self.metadata.contains(ALIGNMENT_KEY) {
            self.metadata.set(ALIGNMENT_KEY, Value::U32(alignment));
        }
        Ok(())
    }

    /// Adds a metadata entry; an error for a duplicate key or for `general.alignment`
    /// (use [`Self::set_alignment`]).
    pub fn add(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Result<()> {
        let key = key.into();
        if key == ALIGNMENT_KEY {
            return Err(GgufError::invalid(format!("set `{ALIGNMENT_KEY}` with set_alignment")));
        }
        self.metadata.insert(key, value).map_err(|e| GgufError::invalid(e.message()))
    }

    /// Adds a metadata array of strings.
    pub fn add_strings<S: AsRef<[u8]>>(
        &mut self,
        key: impl Into<String>,
        items: impl IntoIterator<Item = S>,
    ) -> Result<()> {
        self.add(key, Array::String(items.into_iter().collect()))
    }

    /// The metadata so far.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The tensors declared so far.
    pub fn tensors(&self) -> impl Iterator<Item = &TensorSpec> {
        self.tensors.iter().map(|t| &t.0)
    }

    /// Declares a tensor whose bytes [`Self::write_with`] asks for when it writes.
    pub fn declare_tensor(&mut self, name: impl Into<String>, dims: &[u64], ggml_type: GgmlType) -> Result<()> {
        let spec = TensorSpec { name: name.into(), dims: dims.to_vec(), ggml_type };
        check_spec(&spec)?;
        if self.tensors.iter().any(|t| t.0.name == spec.name) {
            return Err(GgufError::invalid(format!("duplicate tensor name `{}`", spec.name)));
        }
        self.tensors.push((spec, None));
        Ok(())
    }

    /// Adds a tensor with its data, already in `ggml_type`'s encoding.
    pub fn add_tensor(
        &mut self,
        name: impl Into<String>,
        dims: &[u64],
        ggml_type: GgmlType,
        data: Vec<u8>,
    ) -> Result<()> {
        let name = name.into();
        self.declare_tensor(name.clone(), dims, ggml_type)?;
        let spec = &self.tensors[self.tensors.len() - 1].0;
        if data.len() as u64 != spec.n_bytes() {
            let n = spec.n_bytes();
            self.tensors.pop();
            return Err(GgufError::invalid(format!("tensor `{name}`: {} bytes of data, expected {n}", data.len())));
        }
        if let Some(t) = self.tensors.last_mut() {
            t.1 = Some(data);
        }
        Ok(())
    }

    /// Adds a tensor from `f32` values in storage order, quantized to `ggml_type` with
    /// ggml's reference quantizer.
    pub fn add_tensor_f32(
        &mut self,
        name: impl Into<String>,
        dims: &[u64],
        ggml_type: GgmlType,
        values: &[f32],
    ) -> Result<()> {
        let name = name.into();
        let n: u64 = dims.iter().product();
        if values.len() as u64 != n {
            return Err(GgufError::invalid(format!("tensor `{name}`: {} values for dims {dims:?}", values.len())));
        }
        let data = quant::quantize(ggml_type, values).map_err(|e| e.context(format_args!("tensor `{name}`")))?;
        self.add_tensor(name, dims, ggml_type, data)
    }

    /// Writes the file; every tensor must have its data.
    pub fn write(&self, out: impl Write) -> Result<()> {
        self.write_with(out, |spec| {
            Err(GgufError::invalid(format!("tensor `{}` was declared but given no data", spec.name)))
        })
    }

    /// Writes the file to `path`.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<()> {
        write_to_path(path.as_ref(), |w| self.write(w))
    }

    /// Writes the file, calling `fill` for the bytes of each declared tensor without data,
    /// in file order.
    pub fn write_with(&self, out: impl Write, mut fill: impl FnMut(&TensorSpec) -> Result<Vec<u8>>) -> Result<()> {
        if let Some(dup) = first_duplicate(self.tensors.iter().map(|t| t.0.name.as_str())) {
            return Err(GgufError::invalid(format!("duplicate tensor name `{dup}`")));
        }
        let mut w = CountingWriter { inner: std::io::BufWriter::with_capacity(1 << 20, out), written: 0 };
        w.put(&GGUF_MAGIC)?;
        w.put(&WRITE_VERSION.to_le_bytes())?;
        w.put(&(self.tensors.len() as u64).to_le_bytes())?;
        w.put(&(self.metadata.len() as u64).to_le_bytes())?;
        for (key, value) in self.metadata.iter() {
            put_str(&mut w, key.as_bytes())?;
            w.put(&value.value_type().id().to_le_bytes())?;
            put_value(&mut w, value)?;
        }
        let mut offset = 0u64;
        for (spec, _) in &self.tensors {
            put_str(&mut w, spec.name.as_bytes())?;
            w.put(&(spec.dims.len() as u32).to_le_bytes())?;
            for d in &spec.dims {
                w.put(&d.to_le_bytes())?;
            }
            w.put(&spec.ggml_type.id().to_le_bytes())?;
            w.put(&offset.to_le_bytes())?;
            offset += spec.n_bytes().next_multiple_of(self.alignment);
        }
        w.pad(self.alignment)?;
        for (spec, data) in &self.tensors {
            let filled;
            let bytes = match data {
                Some(d) => d,
                None => {
                    filled = fill(spec)?;
                    &filled
                }
            };
            if bytes.len() as u64 != spec.n_bytes() {
                return Err(GgufError::invalid(format!(
                    "tensor `{}`: {} bytes of data, expected {}",
                    spec.name,
                    bytes.len(),
                    spec.n_bytes()
                )));
            }
            w.put(bytes)?;
            w.pad(self.alignment)?;
        }
        w.inner.flush().map_err(io_error)
    }
}

/// Writes through a temporary file next to `path`, renamed into place on success, so a
/// failed write leaves no half-written model behind.
pub(crate) fn write_to_path(path: &Path, write: impl FnOnce(&mut std::fs::File) -> Result<()>) -> Result<()> {
    let shown = path.display();
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(|e| GgufError::new(ErrorKind::Io, format!("{shown}: {e}")))?;
    let r = write(&mut f).and_then(|()| f.sync_all().map_err(io_error));
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(shown));
    }
    std::fs::rename(&tmp, path).map_err(|e| GgufError::new(ErrorKind::Io, format!("{shown}: {e}")))
}

fn check_spec(spec: &TensorSpec) -> Result<()> {
    let name = &spec.name;
    if name.len() >= MAX_NAME_LEN {
        return Err(GgufError::invalid(format!(
            "tensor name `{name}` is {} bytes long; llama.cpp reads names of at most {} bytes",
            name.len(),
            MAX_NAME_LEN - 1
        )));
    }
    if spec.dims.len() > MAX_DIMS as usize {
        return Err(GgufError::invalid(format!(
            "tensor `{name}` has {} dimensions; at most {MAX_DIMS}",
            spec.dims.len()
        )));
    }
    let n = spec.dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d).filter(|&n| n <= i64::MAX as u64));
    let Some(n) = n else {
        return Err(GgufError::invalid(format!("tensor `{name}`: dims {:?} overflow", spec.dims)));
    };
    let row = spec.dims.first().copied().unwrap_or(1);
    let bs = spec.ggml_type.block_size() as u64;
    if row % bs != 0 || spec.ggml_type.bytes_for(n).is_none() {
        return Err(GgufError::invalid(format!(
            "tensor `{name}` has {row} elements per row, not a multiple of {}'s block size {bs}",
            spec.ggml_type
        )));
    }
    Ok(())
}

fn io_error(e: std::io::Error) -> GgufError {
    GgufError::new(ErrorKind::Io, format!("write failed: {e}"))
}

struct CountingWriter<W: Write> {
    inner: std::io::BufWriter<W>,
    written: u64,
}

impl<W: Write> CountingWriter<W> {
    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.inner.write_all(b).map_err(io_error)?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn pad(&mut self, alignment: u64) -> Result<()> {
        let n = self.written.next_multiple_of(alignment) - self.written;
        self.put(&vec![0u8; n as usize])
    }
}

fn put_str<W: Write>(w: &mut CountingWriter<W>, s: &[u8]) -> Result<()> {
    w.put(&(s.len() as u64).to_le_bytes())?;
    w.put(s)
}

fn put_value<W: Write>(w: &mut CountingWriter<W>, v: &Value) -> Result<()> {
    match v {
        Value::U8(x) => w.put(&x.to_le_bytes()),
        Value::I8(x) => w.put(&x.to_le_bytes()),
        Value::U16(x) => w.put(&x.to_le_bytes()),
        Value::I16(x) => w.put(&x.to_le_bytes()),
        Value::U32(x) => w.put(&x.to_le_bytes()),
        Value::I32(x) => w.put(&x.to_le_bytes()),
        Value::F32(x) => w.put(&x.to_le_bytes()),
        Value::U64(x) => w.put(&x.to_le_bytes()),
        Value::I64(x) => w.put(&x.to_le_bytes()),
        Value::F64(x) => w.put(&x.to_le_bytes()),
        Value::Bool(x) => w.put(&[u8::from(*x)]),
        Value::String(s) => put_str(w, s.as_bytes()),
        Value::Array(a) => put_array(w, a),
    }
}

fn put_array<W: Write>(w: &mut CountingWriter<W>, a: &Array) -> Result<()> {
    w.put(&a.elem_type().id().to_le_bytes())?;
    w.put(&(a.len() as u64).to_le_bytes())?;
    macro_rules! each {
        ($v:expr) => {{
            for x in $v {
                w.put(&x.to_le_bytes())?;
            }
            Ok(())
        }};
    }
    match a {
        Array::U8(v) => w.put(v),
        Array::I8(v) => each!(v),
        Array::U16(v) => each!(v),
        Array::I16(v) => each!(v),
        Array::U32(v) => each!(v),
        Array::I32(v) => each!(v),
        Array::F32(v) => each!(v),
        Array::U64(v) => each!(v),
        Array::I64(v) => each!(v),
        Array::F64(v) => each!(v),
        Array::Bool(v) => each!(v.iter().map(|&b| u8::from(b))),
        Array::String(v) => {
            for s in v.iter() {
                put_str(w, s)?;
            }
            Ok(())
        }
        Array::Array(v) => {
            for inner in v {
                put_array(w, inner)?;
            }
            Ok(())
        }
    }
}
