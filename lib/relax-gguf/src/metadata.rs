//! The key-value metadata of a GGUF file, in file order, with typed accessors whose errors
//! name the key, what was expected and what was found.
//!
//! Integer accessors accept any integer type whose value fits (a writer that stored
//! `llama.block_count` as `INT32` or `UINT64` still reads as `u32`); float accessors accept
//! `FLOAT32` and `FLOAT64`; strings, bools and arrays must have that type.

use std::collections::HashMap;

use crate::error::{ErrorKind, GgufError, Result};
use crate::value::{Array, StrArray, Value};

/// The metadata of a file: keys and values in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata {
    entries: Vec<(String, Value)>,
    index: HashMap<String, usize>,
}

fn wrong(key: &str, expected: &str, v: &Value) -> GgufError {
    GgufError::new(ErrorKind::WrongType, format!("metadata key `{key}` is {}, expected {expected}", describe(v)))
}

/// `a UINT32 (32)`, `a STRING ("llama")`, `an ARRAY of 32000 STRING`.
fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("an ARRAY of {} {}", a.len(), a.elem_type()),
        Value::String(s) => {
            let text = s.to_string();
            let short: String = text.chars().take(40).collect();
            let more = if short.len() < text.len() { "..." } else { "" };
            format!("a STRING ({short:?}{more})")
        }
        Value::U8(x) => format!("a UINT8 ({x})"),
        Value::I8(x) => format!("an INT8 ({x})"),
        Value::U16(x) => format!("a UINT16 ({x})"),
        Value::I16(x) => format!("an INT16 ({x})"),
        Value::U32(x) => format!("a UINT32 ({x})"),
        Value::I32(x) => format!("an INT32 ({x})"),
        Value::U64(x) => format!("a UINT64 ({x})"),
        Value::I64(x) => format!("an INT64 ({x})"),
        Value::F32(x) => format!("a FLOAT32 ({x})"),
        Value::F64(x) => format!("a FLOAT64 ({x})"),
        Value::Bool(x) => format!("a BOOL ({x})"),
    }
}

macro_rules! int_getters {
    ($($get:ident, $opt:ident, $t:ty, $what:literal;)*) => {$(
        #[doc = concat!("The value of `key` as ", $what, ": any integer type whose value fits.")]
        pub fn $get(&self, key: &str) -> Result<$t> {
            let v = self.require(key)?;
            let expected = concat!($what, " integer");
            let i = v.as_integer().ok_or_else(|| wrong(key, expected, v))?;
            <$t>::try_from(i).map_err(|_| {
                GgufError::new(ErrorKind::WrongType, format!("metadata key `{key}` is {}, which does not fit {}", describe(v), $what))
            })
        }

        #[doc = concat!("Like [`Self::", stringify!($get), "`], but `None` when the key is absent.")]
        pub fn $opt(&self, key: &str) -> Result<Option<$t>> {
            if self.contains(key) { self.$get(key).map(Some) } else { Ok(None) }
        }
    )*};
}

macro_rules! array_getters {
    ($($get:ident, $variant:ident, $t:ty, $what:literal;)*) => {$(
        #[doc = concat!("The value of `key`, which must be an array of ", $what, ".")]
        pub fn $get(&self, key: &str) -> Result<&[$t]> {
            match self.require(key)? {
                Value::Array(Array::$variant(v)) => Ok(v),
                v => Err(wrong(key, concat!("an ARRAY of ", $what), v)),
            }
        }
    )*};
}

impl Metadata {
    /// Empty metadata.
    pub fn new() -> Metadata {
        Metadata::default()
    }

    /// Appends `key = value`; an error if the key is already present.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Result<()> {
        let key = key.into();
        if self.index.contains_key(&key) {
            return Err(GgufError::malformed(format!("duplicate metadata key `{key}`")));
        }
        self.index.insert(key.clone(), self.entries.len());
        self.entries.push((key, value.into()));
        Ok(())
    }

    /// Sets `key = value`, replacing the value (in place) when the key is present.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let key = key.into();
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value.into(),
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value.into()));
            }
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in file order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> + '_ {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    /// The value of `key`; an error naming the key when it is absent.
    pub fn require(&self, key: &str) -> Result<&Value> {
        self.get(key).ok_or_else(|| GgufError::new(ErrorKind::MissingKey, format!("metadata key `{key}` is missing")))
    }

    int_getters! {
        get_u8, get_u8_opt, u8, "an unsigned 8-bit";
        get_i8, get_i8_opt, i8, "a signed 8-bit";
        get_u16, get_u16_opt, u16, "an unsigned 16-bit";
        get_i16, get_i16_opt, i16, "a signed 16-bit";
        get_u32, get_u32_opt, u32, "an unsigned 32-bit";
        get_i32, get_i32_opt, i32, "a signed 32-bit";
        get_u64, get_u64_opt, u64, "an unsigned 64-bit";
        get_i64, get_i64_opt, i64, "a signed 64-bit";
        get_usize, get_usize_opt, usize, "a non-negative";
    }

    /// The value of `key` as `f32`: a `FLOAT32`, or a `FLOAT64` rounded to `f32`.
    pub fn get_f32(&self, key: &str) -> Result<f32> {
        self.get_f64(key).map(|x| x as f32)
    }

    /// Like [`Self::get_f32`], but `None` when the key is absent.
    pub fn get_f32_opt(&self, key: &str) -> Result<Option<f32>> {
        if self.contains(key) { self.get_f32(key).map(Some) } else { Ok(None) }
    }

    /// The value of `key` as `f64`: a `FLOAT32` or `FLOAT64`.
    pub fn get_f64(&self, key: &str) -> Result<f64> {
        let v = self.require(key)?;
        v.as_float().ok_or_else(|| wrong(key, "a FLOAT32 or FLOAT64", v))
    }

    /// Like [`Self::get_f64`], but `None` when the key is absent.
    pub fn get_f64_opt(&self, key: &str) -> Result<Option<f64>> {
        if self.contains(key) { self.get_f64(key).map(Some) } else { Ok(None) }
    }

    /// The value of `key`, which must be a `BOOL`.
    pub fn get_bool(&self, key: &str) -> Result<bool> {
        match self.require(key)? {
            Value::Bool(b) => Ok(*b),
            v => Err(wrong(key, "a BOOL", v)),
        }
    }

    /// Like [`Self::get_bool`], but `None` when the key is absent.
    pub fn get_bool_opt(&self, key: &str) -> Result<Option<bool>> {
        if self.contains(key) { self.get_bool(key).map(Some) } else { Ok(None) }
    }

    /// The value of `key`, which must be a UTF-8 `STRING`.
    pub fn get_str(&self, key: &str) -> Result<&str> {
        match self.require(key)? {
            Value::String(s) => s.as_str().ok_or_else(|| {
                GgufError::new(
                    ErrorKind::WrongType,
                    format!("metadata key `{key}` is a STRING that is not valid UTF-8"),
                )
            }),
            v => Err(wrong(key, "a STRING", v)),
        }
    }

    /// Like [`Self::get_str`], but `None` when the key is absent.
    pub fn get_str_opt(&self, key: &str) -> Result<Option<&str>> {
        if self.contains(key) { self.get_str(key).map(Some) } else { Ok(None) }
    }

    /// The value of `key`, which must be an array (of any element type).
    pub fn get_array(&self, key: &str) -> Result<&Array> {
        match self.require(key)? {
            Value::Array(a) => Ok(a),
            v => Err(wrong(key, "an ARRAY", v)),
        }
    }

    /// The value of `key`, which must be an array of strings (kept as bytes).
    pub fn get_str_array(&self, key: &str) -> Result<&StrArray> {
        match self.require(key)? {
            Value::Array(Array::String(a)) => Ok(a),
            v => Err(wrong(key, "an ARRAY of STRING", v)),
        }
    }

    array_getters! {
        get_u8_array, U8, u8, "UINT8";
        get_i8_array, I8, i8, "INT8";
        get_u16_array, U16, u16, "UINT16";
        get_i16_array, I16, i16, "INT16";
        get_u32_array, U32, u32, "UINT32";
        get_i32_array, I32, i32, "INT32";
        get_u64_array, U64, u64, "UINT64";
        get_i64_array, I64, i64, "INT64";
        get_f32_array, F32, f32, "FLOAT32";
        get_f64_array, F64, f64, "FLOAT64";
        get_bool_array, Bool, bool, "BOOL";
    }

    /// `general.architecture` (`llama`, `qwen2`, ...).
    pub fn architecture(&self) -> Result<&str> {
        self.get_str("general.architecture")
    }

    /// An architecture-scoped key: `arch_key("block_count")` is `llama.block_count` in a
    /// `llama` file.
    pub fn arch_key(&self, suffix: &str) -> Result<String> {
        Ok(format!("{}.{suffix}", self.architecture()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_access_and_messages() {
        let mut m = Metadata::new();
        m.insert("general.architecture", "llama").unwrap();
        m.insert("llama.block_count", 22u32).unwrap();
        m.insert("neg", -1i32).unwrap();
        m.insert("big", u64::MAX).unwrap();
        m.insert("eps", 1e-5f32).unwrap();
        m.insert("toks", Array::String(["a", "b"].into_iter().collect())).unwrap();
        assert_eq!(m.get_u32("llama.block_count").unwrap(), 22);
        assert_eq!(m.get_i64("llama.block_count").unwrap(), 22);
        assert_eq!(m.get_usize(&m.arch_key("block_count").unwrap()).unwrap(), 22);
        assert_eq!(m.get_f32("eps").unwrap(), 1e-5);
        assert_eq!(m.get_str_array("toks").unwrap().get_str(1), Some("b"));
        let e = m.get_u32("missing").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MissingKey);
        assert_eq!(e.to_string(), "metadata key `missing` is missing");
        assert_eq!(m.get_u32_opt("missing").unwrap(), None);
        let e = m.get_u32("neg").unwrap_err();
        assert_eq!(e.to_string(), "metadata key `neg` is an INT32 (-1), which does not fit an unsigned 32-bit");
        assert!(m.get_u32("big").is_err());
        let e = m.get_u32("general.architecture").unwrap_err();
        assert_eq!(
            e.to_string(),
            "metadata key `general.architecture` is a STRING (\"llama\"), expected an unsigned 32-bit integer"
        );
        let e = m.get_f32_array("toks").unwrap_err();
        assert_eq!(e.to_string(), "metadata key `toks` is an ARRAY of 2 STRING, expected an ARRAY of FLOAT32");
        assert!(m.insert("eps", 1f32).is_err());
    }
}
