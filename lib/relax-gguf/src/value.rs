//! Metadata values: the thirteen GGUF value types, scalars, strings (kept as their bytes,
//! which the format says are UTF-8 but real vocabularies do not always honor) and arrays,
//! including arrays of strings stored compactly and nested arrays.

use std::fmt;

/// A GGUF value type, by its id in the file (`gguf_type` in ggml, `GGUFValueType` in gguf-py).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// `uint8` (id 0).
    U8,
    /// `int8` (id 1).
    I8,
    /// `uint16` (id 2).
    U16,
    /// `int16` (id 3).
    I16,
    /// `uint32` (id 4).
    U32,
    /// `int32` (id 5).
    I32,
    /// `float32` (id 6).
    F32,
    /// `bool`, one byte, 0 or 1 (id 7).
    Bool,
    /// `string`: a length and that many bytes (id 8).
    String,
    /// `array`: an element type, a length and the elements (id 9).
    Array,
    /// `uint64` (id 10).
    U64,
    /// `int64` (id 11).
    I64,
    /// `float64` (id 12).
    F64,
}

impl ValueType {
    const ALL: [ValueType; 13] = [
        ValueType::U8,
        ValueType::I8,
        ValueType::U16,
        ValueType::I16,
        ValueType::U32,
        ValueType::I32,
        ValueType::F32,
        ValueType::Bool,
        ValueType::String,
        ValueType::Array,
        ValueType::U64,
        ValueType::I64,
        ValueType::F64,
    ];

    /// The type with id `id`.
    pub fn from_id(id: u32) -> Option<ValueType> {
        Self::ALL.get(id as usize).copied()
    }

    /// The type's id in the file.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// Bytes of one value of a fixed-size type; `None` for strings and arrays.
    pub fn fixed_size(self) -> Option<usize> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }

    /// The type as gguf-py names it (`UINT32`, `STRING`).
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "UINT8",
            I8 => "INT8",
            U16 => "UINT16",
            I16 => "INT16",
            U32 => "UINT32",
            I32 => "INT32",
            F32 => "FLOAT32",
            Bool => "BOOL",
            String => "STRING",
            Array => "ARRAY",
            U64 => "UINT64",
            I64 => "INT64",
            F64 => "FLOAT64",
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GGUF string: its bytes exactly as stored.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct GgufStr(Box<[u8]>);

impl GgufStr {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, when the bytes are UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

impl From<&str> for GgufStr {
    fn from(s: &str) -> GgufStr {
        GgufStr(s.as_bytes().into())
    }
}

impl From<String> for GgufStr {
    fn from(s: String) -> GgufStr {
        GgufStr(s.into_bytes().into_boxed_slice())
    }
}

impl From<Vec<u8>> for GgufStr {
    fn from(b: Vec<u8>) -> GgufStr {
        GgufStr(b.into_boxed_slice())
    }
}

impl fmt::Debug for GgufStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(&self.0), f)
    }
}

impl fmt::Display for GgufStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

/// An array of strings in one buffer (a 150 000-token vocabulary is two allocations).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct StrArray {
    bytes: Vec<u8>,
    /// `ends[i]` is the end of string `i` in `bytes`; it starts where `i - 1` ends.
    ends: Vec<usize>,
}

impl StrArray {
    /// An empty array.
    pub fn new() -> StrArray {
        StrArray::default()
    }

    /// An empty array with room for `n` strings of `bytes` bytes in all.
    pub fn with_capacity(n: usize, bytes: usize) -> StrArray {
        StrArray { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(n) }
    }

    /// Appends one string.
    pub fn push(&mut self, s: impl AsRef<[u8]>) {
        self.bytes.extend_from_slice(s.as_ref());
        self.ends.push(self.bytes.len());
    }

    /// The number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of string `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.bytes.get(start..end)
    }

    /// String `i` as text, when it is UTF-8.
    pub fn get_str(&self, i: usize) -> Option<&str> {
        std::str::from_utf8(self.get(i)?).ok()
    }

    /// The strings' bytes, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }

    /// The strings as text; `None` when one of them is not UTF-8.
    pub fn to_strings(&self) -> Option<Vec<&str>> {
        self.iter().map(|b| std::str::from_utf8(b).ok()).collect()
    }

    /// Bytes of all strings together.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }
}

impl<S: AsRef<[u8]>> FromIterator<S> for StrArray {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> StrArray {
        let mut a = StrArray::new();
        for s in iter {
            a.push(s);
        }
        a
    }
}

impl fmt::Debug for StrArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(String::from_utf8_lossy)).finish()
    }
}

/// A metadata array: its elements, all of one type.
#[derive(Clone, Debug, PartialEq)]
pub enum Array {
    /// `uint8` elements.
    U8(Vec<u8>),
    /// `int8` elements.
    I8(Vec<i8>),
    /// `uint16` elements.
    U16(Vec<u16>),
    /// `int16` elements.
    I16(Vec<i16>),
    /// `uint32` elements.
    U32(Vec<u32>),
    /// `int32` elements.
    I32(Vec<i32>),
    /// `float32` elements.
    F32(Vec<f32>),
    /// `bool` elements.
    Bool(Vec<bool>),
    /// `string` elements.
    String(StrArray),
    /// Nested arrays (each with its own element type).
    Array(Vec<Array>),
    /// `uint64` elements.
    U64(Vec<u64>),
    /// `int64` elements.
    I64(Vec<i64>),
    /// `float64` elements.
    F64(Vec<f64>),
}

impl Array {
    /// The element type.
    pub fn elem_type(&self) -> ValueType {
        match self {
            Array::U8(_) => ValueType::U8,
            Array::I8(_) => ValueType::I8,
            Array::U16(_) => ValueType::U16,
            Array::I16(_) => ValueType::I16,
            Array::U32(_) => ValueType::U32,
            Array::I32(_) => ValueType::I32,
            Array::F32(_) => ValueType::F32,
            Array::Bool(_) => ValueType::Bool,
            Array::String(_) => ValueType::String,
            Array::Array(_) => ValueType::Array,
            Array::U64(_) => ValueType::U64,
            Array::I64(_) => ValueType::I64,
            Array::F64(_) => ValueType::F64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Array::U8(v) => v.len(),
            Array::I8(v) => v.len(),
            Array::U16(v) => v.len(),
            Array::I16(v) => v.len(),
            Array::U32(v) => v.len(),
            Array::I32(v) => v.len(),
            Array::F32(v) => v.len(),
            Array::Bool(v) => v.len(),
            Array::String(v) => v.len(),
            Array::Array(v) => v.len(),
            Array::U64(v) => v.len(),
            Array::I64(v) => v.len(),
            Array::F64(v) => v.len(),
        }
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as a scalar [`Value`] (strings and nested arrays are copied).
    pub fn get(&self, i: usize) -> Option<Value> {
        Some(match self {
            Array::U8(v) => Value::U8(*v.get(i)?),
            Array::I8(v) => Value::I8(*v.get(i)?),
            Array::U16(v) => Value::U16(*v.get(i)?),
            Array::I16(v) => Value::I16(*v.get(i)?),
            Array::U32(v) => Value::U32(*v.get(i)?),
            Array::I32(v) => Value::I32(*v.get(i)?),
            Array::F32(v) => Value::F32(*v.get(i)?),
            Array::Bool(v) => Value::Bool(*v.get(i)?),
            Array::String(v) => Value::String(v.get(i)?.to_vec().into()),
            Array::Array(v) => Value::Array(v.get(i)?.clone()),
            Array::U64(v) => Value::U64(*v.get(i)?),
            Array::I64(v) => Value::I64(*v.get(i)?),
            Array::F64(v) => Value::F64(*v.get(i)?),
        })
    }
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `uint8`.
    U8(u8),
    /// `int8`.
    I8(i8),
    /// `uint16`.
    U16(u16),
    /// `int16`.
    I16(i16),
    /// `uint32`.
    U32(u32),
    /// `int32`.
    I32(i32),
    /// `float32`.
    F32(f32),
    /// `bool`.
    Bool(bool),
    /// `string`.
    String(GgufStr),
    /// `array`.
    Array(Array),
    /// `uint64`.
    U64(u64),
    /// `int64`.
    I64(i64),
    /// `float64`.
    F64(f64),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// An integer value of any width, as `i128` (which holds every one of them).
    pub fn as_integer(&self) -> Option<i128> {
        Some(match *self {
            Value::U8(v) => v.into(),
            Value::I8(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U64(v) => v.into(),
            Value::I64(v) => v.into(),
            _ => return None,
        })
    }

    /// A float value (`float32` or `float64`) as `f64`.
    pub fn as_float(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            _ => None,
        }
    }

    /// A string value as text, when it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// A short description of the value's type for messages: `UINT32`, `ARRAY of STRING`.
    pub fn type_description(&self) -> String {
        match self {
            Value::Array(a) => format!("ARRAY of {}", a.elem_type()),
            v => v.value_type().name().to_string(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}

impl From<Array> for Value {
    fn from(a: Array) -> Value {
        Value::Array(a)
    }
}

macro_rules! value_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
    )*};
}
value_from!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32, bool => Bool, u64 => U64, i64 => I64, f64 => F64);
