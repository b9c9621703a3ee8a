//! Run-time values: tensors as views into shared byte storage, shapes, tuples, scalars,
//! strings, dtypes, functions and objects.
//!
//! A [`Storage`] is a real byte buffer shared through an `Rc<RefCell<..>>`; a
//! [`Tensor`] is a view of it (byte offset, shape, dtype, compact row-major layout).
//! Two tensors carved from one storage see each other's writes, so a pass that lets two
//! live tensors overlap produces wrong numbers here, as it would on a device.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use relax_ir::{DataType, Expr, Global, SymVar, Var};

pub use crate::bytes::ByteBuf;
use crate::scalar::{Scalar, round_float};

/// Shared bytes: the process's memory or a mapped file ([`ByteBuf`]).
pub type Bytes = Rc<RefCell<ByteBuf>>;

/// Shared bytes holding `v`.
pub fn shared_bytes(v: Vec<u8>) -> Bytes {
    Rc::new(RefCell::new(ByteBuf::Heap(v)))
}

/// A storage object (`R.memory.alloc_storage`): bytes, with the dtype it was made for.
#[derive(Clone)]
pub struct Storage {
    /// The bytes.
    pub bytes: Bytes,
}

impl Storage {
    /// `size` zero bytes.
    pub fn new(size: usize) -> Storage {
        Storage { bytes: shared_bytes(vec![0; size]) }
    }
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.borrow().len()
    }
    /// True for an empty storage.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A tensor: a compact row-major view of a storage.
#[derive(Clone)]
pub struct Tensor {
    /// The storage bytes.
    pub data: Bytes,
    /// Byte offset of the first element.
    pub offset: usize,
    /// Dims.
    pub shape: Vec<i64>,
    /// Element type.
    pub dtype: DataType,
}

/// The number of elements of a shape.
pub fn numel(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

impl Tensor {
    /// A zero-filled tensor in a storage of its own.
    pub fn zeros(shape: &[i64], dtype: DataType) -> Tensor {
        let n = numel(shape) * dtype.bytes() as usize;
        Tensor { data: shared_bytes(crate::hugepage::zeroed(n)), offset: 0, shape: shape.to_vec(), dtype }
    }
    /// A tensor from scalars in row-major order (each cast to `dtype`).
    pub fn from_scalars(shape: &[i64], dtype: DataType, values: impl IntoIterator<Item = Scalar>) -> Tensor {
        let t = Tensor::zeros(shape, dtype);
        {
            let mut b = t.data.borrow_mut();
            for (i, v) in values.into_iter().enumerate() {
                store(&mut b, i * dtype.bytes() as usize, dtype, v);
            }
        }
        t
    }
    /// A view of `storage` at a byte offset.
    pub fn view(storage: &Bytes, offset: usize, shape: &[i64], dtype: DataType) -> Tensor {
        Tensor { data: storage.clone(), offset, shape: shape.to_vec(), dtype }
    }
    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }
    /// Number of bytes the view covers.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.bytes() as usize
    }
    /// Element `i` in row-major order.
    pub fn get(&self, i: usize) -> Scalar {
        let b = self.data.borrow();
        load(&b, self.offset + i * self.dtype.bytes() as usize, self.dtype)
    }
    /// Sets element `i` (the value is cast to the tensor's dtype).
    pub fn set(&self, i: usize, v: Scalar) {
        let mut b = self.data.borrow_mut();
        store(&mut b, self.offset + i * self.dtype.bytes() as usize, self.dtype, v);
    }
    /// Every element, in row-major order.
    pub fn scalars(&self) -> Vec<Scalar> {
        let b = self.data.borrow();
        let w = self.dtype.bytes() as usize;
        (0..self.numel()).map(|i| load(&b, self.offset + i * w, self.dtype)).collect()
    }
    /// The bytes of the view.
    pub fn bytes(&self) -> Vec<u8> {
        self.data.borrow()[self.offset..self.offset + self.nbytes()].to_vec()
    }
    /// A copy in a storage of its own.
    pub fn deep_copy(&self) -> Tensor {
        let bytes = self.bytes();
        Tensor { data: shared_bytes(bytes), offset: 0, shape: self.shape.clone(), dtype: self.dtype }
    }
    /// Copies the elements of `src` (same element count and dtype) into this view.
    pub fn copy_from(&self, src: &Tensor) {
        let bytes = src.bytes();
        let mut b = self.data.borrow_mut();
        b[self.offset..self.offset + bytes.len()].copy_from_slice(&bytes);
    }
    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<i64> {
        row_major_strides(&self.shape)
    }
}

/// Row-major strides of a shape, in elements.
pub fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(0);
    }
    s
}

/// Reads one element of type `dt` at byte offset `at` (little-endian).
pub fn load(b: &[u8], at: usize, dt: DataType) -> Scalar {
    let w = dt.bytes() as usize;
    let mut raw = [0u8; 8];
    raw[..w].copy_from_slice(&b[at..at + w]);
    let u = u64::from_le_bytes(raw);
    if dt.is_float() {
        let v = match (dt.code, dt.bits) {
            (relax_ir::TypeCode::Float, 64) => f64::from_bits(u),
            (relax_ir::TypeCode::Float, 32) => f64::from(f32::from_bits(u as u32)),
            (relax_ir::TypeCode::Float, 16) => half::f16::from_bits(u as u16).to_f64(),
            _ => half::bf16::from_bits(u as u16).to_f64(),
        };
        return Scalar::Float(v, dt);
    }
    if dt.is_bool() {
        return Scalar::bool(u & 0xff != 0);
    }
    // Sign-extend signed types.
    let bits = (w * 8) as u32;
    let v = if dt.is_signed_int() && bits < 64 { ((u << (64 - bits)) as i64) >> (64 - bits) } else { u as i64 };
    Scalar::int(dt, v)
}

/// Writes one element of type `dt` at byte offset `at`; the value is cast to `dt` first.
pub fn store(b: &mut [u8], at: usize, dt: DataType, v: Scalar) {
    let v = v.cast(dt);
    let w = dt.bytes() as usize;
    let u: u64 = match v {
        Scalar::Float(x, _) => match (dt.code, dt.bits) {
            (relax_ir::TypeCode::Float, 64) => x.to_bits(),
            (relax_ir::TypeCode::Float, 32) => u64::from((x as f32).to_bits()),
            (relax_ir::TypeCode::Float, 16) => u64::from(half::f16::from_f64(round_float(dt, x)).to_bits()),
            _ => u64::from(half::bf16::from_f64(x).to_bits()),
        },
        Scalar::Int(x, _) => x as u64,
    };
    b[at..at + w].copy_from_slice(&u.to_le_bytes()[..w]);
}

/// The attention KV cache of `vm.builtin.attention_kv_cache_*` (TVM's legacy
/// `AttentionKVCache`): a data tensor whose first `fill_count` rows along axis 0 hold the
/// appended values.
#[derive(Clone)]
pub struct KvCache {
    /// The backing tensor (grows by doubling along axis 0).
    pub data: Tensor,
    /// Rows filled so far.
    pub fill_count: i64,
}

/// What a run-time object is.
#[derive(Clone)]
pub enum Object {
    /// An attention KV cache.
    KvCache(Rc<RefCell<KvCache>>),
}

/// The values a local function captured when it was created.
#[derive(Clone, Default)]
pub struct Captured {
    /// Relax variables in scope.
    pub vars: HashMap<Var, Value>,
    /// Symbolic variables bound so far.
    pub syms: HashMap<SymVar, i64>,
}

/// A function value.
#[derive(Clone)]
pub enum FuncValue {
    /// A function of the module (Relax or PrimFunc).
    Global(Global),
    /// A packed function of the builtin registry, by name.
    Packed(String),
    /// A local function (`def` inside a function) with what it captured.
    Local {
        /// The module function whose arenas hold it.
        owner: Global,
        /// The `ExprData::Function` node.
        node: Expr,
        /// The variable it is bound to (for recursion).
        self_var: Option<Var>,
        /// Captured environment.
        env: Rc<Captured>,
    },
    /// `R.make_closure(f, (captured...))`: `f` called with the captured values first.
    Closure {
        /// The callee.
        func: Rc<FuncValue>,
        /// Values passed before the call's own arguments.
        captured: Vec<Value>,
    },
}

/// A run-time value.
#[derive(Clone)]
pub enum Value {
    /// A tensor.
    Tensor(Tensor),
    /// A shape.
    Shape(Vec<i64>),
    /// A tuple.
    Tuple(Rc<Vec<Value>>),
    /// A scalar (`R.prim_value`).
    Prim(Scalar),
    /// A string.
    Str(String),
    /// A dtype.
    DType(DataType),
    /// A function.
    Func(Rc<FuncValue>),
    /// A storage.
    Storage(Storage),
    /// Another run-time object.
    Object(Object),
    /// `R.null_value()`.
    Null,
}

impl Value {
    /// A tuple.
    pub fn tuple(fields: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(fields))
    }
    /// The empty tuple (the value of effects).
    pub fn unit() -> Value {
        Value::tuple(Vec::new())
    }
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Tensor(_) => "a tensor",
            Value::Shape(_) => "a shape",
            Value::Tuple(_) => "a tuple",
            Value::Prim(_) => "a prim value",
            Value::Str(_) => "a string",
            Value::DType(_) => "a dtype",
            Value::Func(_) => "a function",
            Value::Storage(_) => "a storage",
            Value::Object(_) => "an object",
            Value::Null => "a null value",
        }
    }
    /// A short description for messages: `a tensor of shape (3, 5) and dtype float32`.
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) => format!("a tensor of shape {} and dtype {}", shape_text(&t.shape), t.dtype),
            Value::Shape(s) => format!("the shape {}", shape_text(s)),
            Value::Tuple(f) => format!("a tuple of {} fields", f.len()),
            Value::Prim(p) => format!("the {} value {}", p.dtype(), crate::print::scalar_text(*p)),
            other => other.kind().to_string(),
        }
    }
}

/// `(3, 5)`, `(4,)`, `()`.
pub fn shape_text(s: &[i64]) -> String {
    match s {
        [one] => format!("({one},)"),
        _ => format!("({})", s.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::print::value_text(self))
    }
}
