//! Relax types ("struct info"): the static knowledge about a value.
//!
//! `Object` is the top of the lattice. Shapes and prim values are TIR expressions of the
//! owning function's pool, so a type's symbolic dims are that function's variables.

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty, Var};

/// The shape part of a tensor type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TensorShape {
    /// Not known (only `ndim` may be).
    Unknown,
    /// Known dims, one expression each.
    Dims(Vec<PrimExpr>),
    /// The value of a `R.Shape`-typed Relax variable: `R.Tensor(s, dtype="float32")`.
    Var(Var),
}

/// A virtual device: `"cuda:0:global"` (kind, index among devices of that kind, scope).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VDevice {
    /// Target kind (`cuda`, `llvm`, ...).
    pub kind: String,
    /// Index among the module's vdevices of that kind.
    pub index: u32,
    /// Memory scope.
    pub scope: String,
}

/// The payload of a Relax type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TyData {
    /// Anything (`R.Object`, HEAD `R.Any`).
    Object,
    /// A scalar: `R.Prim("int64")`, or with a known value `R.Prim(value=n)`.
    Prim {
        /// Scalar dtype.
        dtype: DataType,
        /// The known value, if any.
        value: Option<PrimExpr>,
    },
    /// A shape value: `R.Shape([m, k])`, `R.Shape(ndim=2)`.
    Shape {
        /// Known dims.
        values: Option<Vec<PrimExpr>>,
        /// Rank, `-1` when unknown.
        ndim: i32,
    },
    /// A tensor.
    Tensor {
        /// Its shape.
        shape: TensorShape,
        /// Element type; `void` when unknown.
        dtype: DataType,
        /// Rank, `-1` when unknown.
        ndim: i32,
        /// Virtual device, if annotated.
        vdevice: Option<VDevice>,
    },
    /// A tuple; the empty tuple is the type of effect-only bindings.
    Tuple(Vec<Ty>),
    /// A function: `R.Callable((A, B), Ret, True)`; `params: None` is opaque.
    Callable {
        /// Parameter types, or `None` when opaque.
        params: Option<Vec<Ty>>,
        /// Result type.
        ret: Ty,
        /// Whether calling it has no side effects.
        pure: bool,
    },
}

impl TyData {
    /// A tensor of known dims.
    pub fn tensor(dims: Vec<PrimExpr>, dtype: DataType) -> TyData {
        let ndim = dims.len() as i32;
        TyData::Tensor { shape: TensorShape::Dims(dims), dtype, ndim, vdevice: None }
    }
    /// A tensor of known rank and dtype.
    pub fn tensor_ndim(ndim: i32, dtype: DataType) -> TyData {
        TyData::Tensor { shape: TensorShape::Unknown, dtype, ndim, vdevice: None }
    }
    /// A shape of known dims.
    pub fn shape(dims: Vec<PrimExpr>) -> TyData {
        let ndim = dims.len() as i32;
        TyData::Shape { values: Some(dims), ndim }
    }
    /// The empty tuple (void).
    pub fn void() -> TyData {
        TyData::Tuple(Vec::new())
    }
    /// True for the empty tuple.
    pub fn is_void(&self) -> bool {
        matches!(self, TyData::Tuple(f) if f.is_empty())
    }
    /// The dims of a tensor or shape type, when known.
    pub fn dims(&self) -> Option<&[PrimExpr]> {
        match self {
            TyData::Tensor { shape: TensorShape::Dims(d), .. } => Some(d),
            TyData::Shape { values: Some(d), .. } => Some(d),
            _ => None,
        }
    }
    /// The element type of a tensor type.
    pub fn dtype(&self) -> Option<DataType> {
        match self {
            TyData::Tensor { dtype, .. } | TyData::Prim { dtype, .. } => Some(*dtype),
            _ => None,
        }
    }
    /// The rank of a tensor or shape type (`-1` when unknown), `None` for other kinds.
    pub fn ndim(&self) -> Option<i32> {
        match self {
            TyData::Tensor { ndim, .. } | TyData::Shape { ndim, .. } => Some(*ndim),
            _ => None,
        }
    }
}
