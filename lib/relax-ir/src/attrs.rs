//! Attribute values: function attributes, op attributes, loop and block annotations.
//!
//! Attributes are ordered `(key, value)` lists. Function attributes print with sorted keys;
//! op attributes print in the op's declared order (see [`crate::op`]).

use crate::dtype::DataType;
use crate::entities::Buffer;

/// One attribute value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrValue {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// A plain integer.
    Int(i64),
    /// A plain float (a double), printed like TIR floats.
    Float(FloatBits),
    /// A string.
    Str(String),
    /// A typed TIR integer literal, printed `T.int64(4)` (or bare for int32).
    PrimInt(DataType, i64),
    /// A typed TIR float literal, printed `T.float32(0.5)`.
    PrimFloat(DataType, FloatBits),
    /// A list `[a, b]`.
    List(Vec<AttrValue>),
    /// A dict `{"k": v}` (keys kept in order).
    Dict(Vec<(String, AttrValue)>),
    /// `T.target({...})` or `T.target("llvm")`.
    Target(Box<AttrValue>),
    /// A value the IR does not model, kept as the canonical text TVM printed:
    /// `T.index_map(lambda i, j: (j, i))` (`R.layout_transform`), `R.prim_value(T.float32(0.0))`.
    Text(String),
    /// A buffer of the enclosing PrimFunc, printed by its name: only in block annotations,
    /// as TOPI's `{"layout_free_placeholders": [B]}`.
    Buffer(Buffer),
}

/// An `f64` kept as its bits so that values can be hashed and compared exactly.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FloatBits(pub u64);

impl FloatBits {
    /// Wraps a double.
    pub fn new(v: f64) -> FloatBits {
        FloatBits(v.to_bits())
    }
    /// The double.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl std::fmt::Debug for FloatBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.get())
    }
}

/// An ordered attribute list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attrs(pub Vec<(String, AttrValue)>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Attrs {
        Attrs(Vec::new())
    }
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// Sets `key`, replacing an existing value in place or appending.
    pub fn set(&mut self, key: &str, value: AttrValue) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }
    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<AttrValue> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }
    /// True when there are no attributes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// `(key, value)` pairs in stored order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    /// `(key, value)` pairs sorted by key (the printing order of function attributes).
    pub fn sorted(&self) -> Vec<(&str, &AttrValue)> {
        let mut v: Vec<_> = self.iter().collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }
}

impl AttrValue {
    /// The integer of `Int` or `PrimInt`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) | AttrValue::PrimInt(_, v) => Some(*v),
            AttrValue::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
    /// The boolean of `Bool` (or an integer 0/1 spelled as such).
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(b) => Some(*b),
            AttrValue::Int(v) | AttrValue::PrimInt(_, v) => Some(*v != 0),
            _ => None,
        }
    }
    /// The string of `Str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The float of `Float`, `PrimFloat`, or an integer widened.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AttrValue::Float(f) | AttrValue::PrimFloat(_, f) => Some(f.get()),
            AttrValue::Int(v) | AttrValue::PrimInt(_, v) => Some(*v as f64),
            _ => None,
        }
    }
    /// The elements of `List`.
    pub fn as_list(&self) -> Option<&[AttrValue]> {
        match self {
            AttrValue::List(v) => Some(v),
            _ => None,
        }
    }
    /// The integers of a list of integers.
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        self.as_list()?.iter().map(AttrValue::as_int).collect()
    }
    /// Calls `f` on every buffer the value names (nested lists and dicts included).
    pub fn for_each_buffer(&self, f: &mut impl FnMut(Buffer)) {
        match self {
            AttrValue::Buffer(b) => f(*b),
            AttrValue::List(items) => items.iter().for_each(|v| v.for_each_buffer(f)),
            AttrValue::Dict(kv) => kv.iter().for_each(|(_, v)| v.for_each_buffer(f)),
            AttrValue::Target(inner) => inner.for_each_buffer(f),
            _ => {}
        }
    }
    /// The value with every buffer replaced by `f(buffer)`.
    pub fn map_buffers(&self, f: &mut impl FnMut(Buffer) -> Buffer) -> AttrValue {
        match self {
            AttrValue::Buffer(b) => AttrValue::Buffer(f(*b)),
            AttrValue::List(items) => AttrValue::List(items.iter().map(|v| v.map_buffers(f)).collect()),
            AttrValue::Dict(kv) => AttrValue::Dict(kv.iter().map(|(k, v)| (k.clone(), v.map_buffers(f))).collect()),
            AttrValue::Target(inner) => AttrValue::Target(Box::new(inner.map_buffers(f))),
            v => v.clone(),
        }
    }
}

/// An integer-list op attribute (`strides`, `padding`, `dilation`, `pool_size`)
/// completed to `n` values as TVM's Python spellings are: none gives `default`s, one
/// value is repeated, and for paddings of `2d` values `d` values are repeated for both
/// ends. Shared by type inference and legalization, so that both read an attribute alike.
pub fn complete_ints(v: Option<Vec<i64>>, n: usize, default: i64) -> Vec<i64> {
    let mut v = v.unwrap_or_default();
    match v.len() {
        0 => vec![default; n],
        1 => vec![v[0]; n],
        l if l == n => v,
        l if l * 2 == n => v.iter().chain(v.iter()).copied().collect(),
        _ => {
            v.resize(n, default);
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::complete_ints;

    #[test]
    fn int_lists_complete_as_tvm_spells_them() {
        assert_eq!(complete_ints(None, 2, 1), vec![1, 1]);
        assert_eq!(complete_ints(Some(vec![3]), 2, 1), vec![3, 3]);
        assert_eq!(complete_ints(Some(vec![1, 2]), 4, 0), vec![1, 2, 1, 2]);
        assert_eq!(complete_ints(Some(vec![1, 2, 3]), 4, 0), vec![1, 2, 3, 0]);
        assert_eq!(complete_ints(Some(vec![1, 2, 3, 4, 5]), 4, 0), vec![1, 2, 3, 4]);
    }
}
