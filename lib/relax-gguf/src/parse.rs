//! Parsing and validating a GGUF file's header, metadata and tensor infos from its bytes.
//!
//! Layout (all little-endian; version 1 stores every count and length as `u32`, versions 2
//! and 3 as `u64`):
//!
//! ```text
//! "GGUF" u32:version  len:n_tensors  len:n_kv
//! n_kv ×      { string:key  u32:value_type  value }
//! n_tensors × { string:name  u32:n_dims  len×n_dims:ne  u32:ggml_type  u64:offset }
//! padding to general.alignment (default 32), then the data section
//! ```

use std::collections::HashSet;

use crate::cursor::Cursor;
use crate::error::{ErrorKind, GgufError, Result};
use crate::metadata::Metadata;
use crate::tensor::TensorInfo;
use crate::types::GgmlType;
use crate::value::{Array, StrArray, Value, ValueType};

/// The magic at the start of every GGUF file.
pub const GGUF_MAGIC: [u8; 4] = *b"GGUF";
/// The alignment of tensor data when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// The metadata key that sets the alignment.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// The most dimensions a tensor may have (`GGML_MAX_DIMS`).
pub const MAX_DIMS: u32 = 4;
/// The longest tensor name the format allows, in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// How deep arrays of arrays may nest.
const MAX_NESTING: usize = 16;
/// The most entries reserved ahead for a count read from the file.
const PREALLOC: usize = 4096;

/// Everything before the data section.
pub(crate) struct Parsed {
    pub version: u32,
    pub metadata: Metadata,
    pub tensors: Vec<TensorInfo>,
    pub alignment: u64,
    pub data_offset: u64,
}

/// Parses and validates `buf`, the whole file.
pub(crate) fn parse(buf: &[u8]) -> Result<Parsed> {
    let mut c = Cursor::new(buf);
    let magic = c.take(4, &|| "the magic `GGUF`".into())?;
    if magic != GGUF_MAGIC {
        return Err(GgufError::malformed(format!(
            "not a GGUF file: it starts with {magic:02x?} ({:?}), expected `GGUF`",
            String::from_utf8_lossy(magic)
        )));
    }
    let version = c.u32(&|| "the version".into())?;
    if version & 0xffff == 0 && (1..=3).contains(&version.swap_bytes()) {
        return Err(GgufError::new(
            ErrorKind::UnsupportedVersion,
            format!("big-endian GGUF file (version {}); relax reads little-endian files only", version.swap_bytes()),
        ));
    }
    if !(1..=3).contains(&version) {
        return Err(GgufError::new(
            ErrorKind::UnsupportedVersion,
            format!("unsupported GGUF version {version} (relax reads versions 1, 2 and 3)"),
        ));
    }
    c.set_v1(version == 1);
    let n_tensors = c.len(&|| "the tensor count".into())?;
    let n_kv = c.len(&|| "the metadata count".into())?;

    let min_kv = c.len_size() + 4 + 1;
    let n_kv = c.check_count(n_kv, min_kv, &|| "the header's metadata count".into())?;
    let mut metadata = Metadata::new();
    for i in 0..n_kv {
        let at = c.pos();
        let key = c.string(&|| format!("the key of metadata entry {i}"))?;
        let key = std::str::from_utf8(key).map_err(|_| {
            GgufError::malformed(format!("metadata entry {i} at byte {at}: the key is not valid UTF-8"))
        })?;
        if metadata.contains(key) {
            return Err(GgufError::malformed(format!("duplicate metadata key `{key}` at byte {at}")));
        }
        let ty_at = c.pos();
        let ty = c.u32(&|| format!("the value type of `{key}`"))?;
        let ty = ValueType::from_id(ty).ok_or_else(|| {
            GgufError::malformed(format!("metadata key `{key}` has unknown value type {ty} at byte {ty_at}"))
        })?;
        let value = read_value(&mut c, ty, key, 0)?;
        metadata.insert(key, value)?;
    }

    let alignment = match metadata.get(ALIGNMENT_KEY) {
        None => DEFAULT_ALIGNMENT,
        Some(Value::U32(a)) if a.is_power_of_two() => u64::from(*a),
        Some(Value::U32(a)) => {
            return Err(GgufError::malformed(format!("`{ALIGNMENT_KEY}` is {a}, which is not a power of two")));
        }
        Some(v) => {
            return Err(GgufError::malformed(format!(
                "`{ALIGNMENT_KEY}` is a {}, expected a UINT32",
                v.type_description()
            )));
        }
    };

    let min_info = c.len_size() + 4 + 4 + 8;
    let n_tensors = c.check_count(n_tensors, min_info, &|| "the header's tensor count".into())?;
    // Counts are checked against the bytes left, but an entry in memory is larger than its
    // smallest encoding: reserve modestly and let the vectors grow with what is really read.
    let mut tensors = Vec::with_capacity(n_tensors.min(PREALLOC));
    let mut names = HashSet::with_capacity(n_tensors.min(PREALLOC));
    for i in 0..n_tensors {
        let info = read_tensor_info(&mut c, i)?;
        if !names.insert(info.name.clone()) {
            return Err(GgufError::malformed(format!("duplicate tensor name `{}` (tensor info {i})", info.name)));
        }
        tensors.push(info);
    }

    let end_of_infos = c.pos() as u64;
    let data_offset = end_of_infos.div_ceil(alignment) * alignment;
    let file_len = buf.len() as u64;
    for t in &mut tensors {
        if t.offset % alignment != 0 {
            return Err(GgufError::malformed(format!(
                "tensor `{}` has data offset {}, which is not a multiple of the alignment {alignment}",
                t.name, t.offset
            )));
        }
        let start = data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(t.n_bytes));
        match (start, end) {
            (Some(s), Some(e)) if e <= file_len => t.file_offset = s,
            _ => {
                return Err(GgufError::new(
                    ErrorKind::Truncated,
                    format!(
                        "tensor `{}` ({} bytes at data offset {}, file byte {}) runs past the end of the file ({file_len} bytes)",
                        t.name,
                        t.n_bytes,
                        t.offset,
                        data_offset as u128 + t.offset as u128
                    ),
                ));
            }
        }
    }
    check_overlaps(&tensors)?;
    Ok(Parsed { version, metadata, tensors, alignment, data_offset })
}

/// Tensors whose byte ranges intersect are an error (empty tensors overlap nothing).
fn check_overlaps(tensors: &[TensorInfo]) -> Result<()> {
    let mut order: Vec<&TensorInfo> = tensors.iter().filter(|t| t.n_bytes > 0).collect();
    order.sort_by_key(|t| t.offset);
    for w in order.windows(2) {
        if w[0].offset + w[0].n_bytes > w[1].offset {
            return Err(GgufError::malformed(format!(
                "the data of tensors `{}` (bytes {}..{}) and `{}` (from byte {}) overlap",
                w[0].name,
                w[0].offset,
                w[0].offset + w[0].n_bytes,
                w[1].name,
                w[1].offset
            )));
        }
    }
    Ok(())
}

fn read_tensor_info(c: &mut Cursor<'_>, i: usize) -> Result<TensorInfo> {
    let at = c.pos();
    let name = c.string(&|| format!("the name of tensor info {i}"))?;
    let name = std::str::from_utf8(name)
        .map_err(|_| GgufError::malformed(format!("tensor info {i} at byte {at}: the name is not valid UTF-8")))?
        .to_string();
    if name.len() > MAX_NAME_LEN {
        return Err(GgufError::malformed(format!(
            "tensor name `{name}` is {} bytes long; GGUF allows at most {MAX_NAME_LEN}",
            name.len()
        )));
    }
    let n_dims = c.u32(&|| format!("the rank of tensor `{name}`"))?;
    if n_dims > MAX_DIMS {
        return Err(GgufError::malformed(format!(
            "tensor `{name}` has {n_dims} dimensions; GGUF allows at most {MAX_DIMS}"
        )));
    }
    let mut dims = Vec::with_capacity(n_dims as usize);
    let mut n_elements: u64 = 1;
    for d in 0..n_dims {
        let ne = c.len(&|| format!("dimension {d} of tensor `{name}`"))?;
        if ne > i64::MAX as u64 {
            return Err(GgufError::malformed(format!(
                "tensor `{name}` has dimension {d} of size {ne}, more than 2^63 - 1"
            )));
        }
        n_elements = n_elements.checked_mul(ne).filter(|&n| n <= i64::MAX as u64).ok_or_else(|| {
            GgufError::malformed(format!(
                "tensor `{name}` has more than 2^63 - 1 elements (dimensions {dims:?} × {ne})"
            ))
        })?;
        dims.push(ne);
    }
    let ty_at = c.pos();
    let ty_id = c.u32(&|| format!("the type of tensor `{name}`"))?;
    let ggml_type = GgmlType::from_id(ty_id).ok_or_else(|| {
        let what = match GgmlType::removed_name(ty_id) {
            Some(old) => format!("type id {ty_id} ({old}), which ggml has removed"),
            None => format!("unknown ggml type id {ty_id}"),
        };
        GgufError::new(ErrorKind::UnknownType, format!("tensor `{name}` has {what} (byte {ty_at})"))
    })?;
    let offset = c.u64(&|| format!("the data offset of tensor `{name}`"))?;
    let row = dims.first().copied().unwrap_or(1);
    let bs = ggml_type.block_size() as u64;
    if row % bs != 0 {
        return Err(GgufError::malformed(format!(
            "tensor `{name}` has {row} elements per row, not a multiple of {ggml_type}'s block size {bs}"
        )));
    }
    let n_bytes = ggml_type.bytes_for(n_elements).ok_or_else(|| {
        GgufError::malformed(format!(
            "tensor `{name}`: the size in bytes of {n_elements} {ggml_type} elements overflows"
        ))
    })?;
    Ok(TensorInfo { name, dims, ggml_type, offset, n_elements, n_bytes, file_offset: 0 })
}

/// The smallest encoding of one value of type `ty`, for checking counts.
fn min_size(ty: ValueType, c: &Cursor<'_>) -> usize {
    match ty {
        ValueType::String => c.len_size(),
        ValueType::Array => 4 + c.len_size(),
        t => t.fixed_size().unwrap_or(1),
    }
}

fn read_value(c: &mut Cursor<'_>, ty: ValueType, key: &str, depth: usize) -> Result<Value> {
    let what = || format!("the value of `{key}`");
    Ok(match ty {
        ValueType::U8 => Value::U8(c.u8(&what)?),
        ValueType::I8 => Value::I8(c.u8(&what)? as i8),
        ValueType::U16 => Value::U16(c.u16(&what)?),
        ValueType::I16 => Value::I16(c.u16(&what)? as i16),
        ValueType::U32 => Value::U32(c.u32(&what)?),
        ValueType::I32 => Value::I32(c.u32(&what)? as i32),
        ValueType::F32 => Value::F32(f32::from_bits(c.u32(&what)?)),
        ValueType::U64 => Value::U64(c.u64(&what)?),
        ValueType::I64 => Value::I64(c.u64(&what)? as i64),
        ValueType::F64 => Value::F64(f64::from_bits(c.u64(&what)?)),
        ValueType::Bool => Value::Bool(read_bool(c, key)?),
        ValueType::String => Value::String(c.string(&what)?.to_vec().into()),
        ValueType::Array => Value::Array(read_array(c, key, depth)?),
    })
}

fn read_bool(c: &mut Cursor<'_>, key: &str) -> Result<bool> {
    let at = c.pos();
    match c.u8(&|| format!("a bool of `{key}`"))? {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(GgufError::malformed(format!("metadata key `{key}` has bool byte {b} at byte {at}, expected 0 or 1"))),
    }
}

fn read_array(c: &mut Cursor<'_>, key: &str, depth: usize) -> Result<Array> {
    if depth >= MAX_NESTING {
        return Err(GgufError::malformed(format!(
            "metadata key `{key}` nests arrays more than {MAX_NESTING} deep at byte {}",
            c.pos()
        )));
    }
    let ty_at = c.pos();
    let ty = c.u32(&|| format!("the element type of `{key}`"))?;
    let ty = ValueType::from_id(ty).ok_or_else(|| {
        GgufError::malformed(format!("metadata key `{key}` has an array of unknown value type {ty} at byte {ty_at}"))
    })?;
    let n = c.len(&|| format!("the length of array `{key}`"))?;
    let n = c.check_count(n, min_size(ty, c), &|| format!("the array `{key}` of {ty}"))?;
    let what = || format!("an element of `{key}`");
    macro_rules! fixed {
        ($variant:ident, $size:literal, $conv:expr) => {{
            let bytes = c.take(n as u64 * $size, &what)?;
            Array::$variant(bytes.chunks_exact($size).map(|b| $conv(b.try_into().unwrap_or([0; $size]))).collect())
        }};
    }
    Ok(match ty {
        ValueType::U8 => Array::U8(c.take(n as u64, &what)?.to_vec()),
        ValueType::I8 => Array::I8(c.take(n as u64, &what)?.iter().map(|&b| b as i8).collect()),
        ValueType::U16 => fixed!(U16, 2, u16::from_le_bytes),
        ValueType::I16 => fixed!(I16, 2, i16::from_le_bytes),
        ValueType::U32 => fixed!(U32, 4, u32::from_le_bytes),
        ValueType::I32 => fixed!(I32, 4, i32::from_le_bytes),
        ValueType::F32 => fixed!(F32, 4, f32::from_le_bytes),
        ValueType::U64 => fixed!(U64, 8, u64::from_le_bytes),
        ValueType::I64 => fixed!(I64, 8, i64::from_le_bytes),
        ValueType::F64 => fixed!(F64, 8, f64::from_le_bytes),
        ValueType::Bool => Array::Bool((0..n).map(|_| read_bool(c, key)).collect::<Result<_>>()?),
        ValueType::String => {
            let mut a = StrArray::with_capacity(n, 0);
            for _ in 0..n {
                a.push(c.string(&what)?);
            }
            Array::String(a)
        }
        ValueType::Array => {
            let mut v = Vec::with_capacity(n.min(PREALLOC));
            for _ in 0..n {
                v.push(read_array(c, key, depth + 1)?);
            }
            Array::Array(v)
        }
    })
}

/// Names that occur more than once in `names` (for the writer's checks).
pub(crate) fn first_duplicate<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = HashSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}
