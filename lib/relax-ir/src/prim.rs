//! TIR expressions (`PrimExpr`): the scalar language shared by Relax symbolic shapes and
//! PrimFunc bodies.
//!
//! Nodes are interned in a function's [`crate::pool::Pool`], so two structurally equal
//! expressions have the same handle. Building through the folding constructors in
//! [`crate::prim_build`] reproduces TVM's operator semantics (dtype matching and eager
//! constant folding); the `raw` constructor builds exactly the node asked for, as the
//! explicit spellings `T.Add(a, b)` do.

use crate::attrs::FloatBits;
use crate::dtype::DataType;
use crate::entities::{Buffer, PrimExpr, SymVar};
use crate::intrinsic::TirOp;

/// A binary operator of TIR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`: truncating for integers (`T.Div`), true division for floats.
    Div,
    /// C-style remainder (`T.truncmod`).
    Mod,
    /// `a // b`.
    FloorDiv,
    /// `a % b`.
    FloorMod,
    /// `T.min(a, b)`.
    Min,
    /// `T.max(a, b)`.
    Max,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a and b`.
    And,
    /// `a or b`.
    Or,
}

impl BinOp {
    /// True for the six comparisons.
    pub fn is_compare(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
    /// True for `and` / `or`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    /// The name of TVM's node constructor (`T.Add`, `T.FloorDiv`, ...).
    pub fn node_name(self) -> &'static str {
        match self {
            BinOp::Add => "Add",
            BinOp::Sub => "Sub",
            BinOp::Mul => "Mul",
            BinOp::Div => "Div",
            BinOp::Mod => "Mod",
            BinOp::FloorDiv => "FloorDiv",
            BinOp::FloorMod => "FloorMod",
            BinOp::Min => "Min",
            BinOp::Max => "Max",
            BinOp::Eq => "EQ",
            BinOp::Ne => "NE",
            BinOp::Lt => "LT",
            BinOp::Le => "LE",
            BinOp::Gt => "GT",
            BinOp::Ge => "GE",
            BinOp::And => "And",
            BinOp::Or => "Or",
        }
    }
    /// The infix spelling, when the operator has one in the text format.
    pub fn infix(self) -> Option<&'static str> {
        Some(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::FloorMod => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Mod | BinOp::Min | BinOp::Max => return None,
        })
    }
}

/// The payload of a TIR expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PrimExprData {
    /// An integer or bool constant. Unsigned 64-bit values are stored reinterpreted.
    Int(DataType, i64),
    /// A float constant, kept as a double whatever its dtype.
    Float(DataType, FloatBits),
    /// A string constant (lowered TIR, extern call names, assert messages).
    Str(String),
    /// A variable.
    Var(SymVar),
    /// `buffer[indices]`.
    Load {
        /// The loaded value's type (the buffer's dtype, or a vector of it).
        dtype: DataType,
        /// The buffer.
        buffer: Buffer,
        /// One index per buffer dim.
        indices: Vec<PrimExpr>,
    },
    /// A binary operation.
    Bin(BinOp, PrimExpr, PrimExpr),
    /// Logical negation.
    Not(PrimExpr),
    /// `T.Cast("dtype", value)`.
    Cast(DataType, PrimExpr),
    /// `T.Select(cond, t, f)` (both sides evaluated).
    Select(PrimExpr, PrimExpr, PrimExpr),
    /// An intrinsic or extern call (`T.exp(x)`, `T.if_then_else(c, a, b)`,
    /// `T.call_extern("float32", "f", x)`).
    Call {
        /// The result type.
        dtype: DataType,
        /// The op.
        op: TirOp,
        /// The arguments.
        args: Vec<PrimExpr>,
    },
    /// `T.Let(value, where={var: value})`: `body` with `var` bound.
    Let {
        /// The bound variable.
        var: SymVar,
        /// Its value.
        value: PrimExpr,
        /// The expression evaluated with `var` bound.
        body: PrimExpr,
    },
    /// `T.Ramp(base, stride, lanes)`.
    Ramp {
        /// First lane.
        base: PrimExpr,
        /// Step between lanes.
        stride: PrimExpr,
        /// Number of lanes.
        lanes: u16,
    },
    /// `T.Broadcast(value, lanes)`.
    Broadcast {
        /// The scalar.
        value: PrimExpr,
        /// Number of lanes.
        lanes: u16,
    },
}

impl PrimExprData {
    /// Calls `f` on each direct operand, left to right: a load's indices, both sides of a
    /// binary operation, a call's arguments, a `Let`'s value then body, ... (the `Let`'s
    /// variable is not an operand). This is the one list of an expression's operands.
    pub fn for_each_operand(&self, mut f: impl FnMut(PrimExpr)) {
        match self {
            PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) | PrimExprData::Var(_) => {}
            PrimExprData::Load { indices, .. } => indices.iter().for_each(|&i| f(i)),
            PrimExprData::Bin(_, a, b) => {
                f(*a);
                f(*b);
            }
            PrimExprData::Not(a) | PrimExprData::Cast(_, a) => f(*a),
            PrimExprData::Select(c, t, e) => {
                f(*c);
                f(*t);
                f(*e);
            }
            PrimExprData::Call { args, .. } => args.iter().for_each(|&a| f(a)),
            PrimExprData::Let { value, body, .. } => {
                f(*value);
                f(*body);
            }
            PrimExprData::Ramp { base, stride, .. } => {
                f(*base);
                f(*stride);
            }
            PrimExprData::Broadcast { value, .. } => f(*value),
        }
    }

    /// The direct operands ([`PrimExprData::for_each_operand`]) in order.
    pub fn operands(&self) -> Vec<PrimExpr> {
        let mut out = Vec::new();
        self.for_each_operand(|e| out.push(e));
        out
    }

    /// The same node with each direct operand replaced by `f(operand)`, in the order of
    /// [`PrimExprData::for_each_operand`] (interned expressions are immutable: the caller
    /// interns the result).
    pub fn map_operands(&self, mut f: impl FnMut(PrimExpr) -> PrimExpr) -> PrimExprData {
        let mut d = self.clone();
        match &mut d {
            PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) | PrimExprData::Var(_) => {}
            PrimExprData::Load { indices, .. } => indices.iter_mut().for_each(|i| *i = f(*i)),
            PrimExprData::Bin(_, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            PrimExprData::Not(a) | PrimExprData::Cast(_, a) => *a = f(*a),
            PrimExprData::Select(c, t, e) => {
                *c = f(*c);
                *t = f(*t);
                *e = f(*e);
            }
            PrimExprData::Call { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
            PrimExprData::Let { value, body, .. } => {
                *value = f(*value);
                *body = f(*body);
            }
            PrimExprData::Ramp { base, stride, .. } => {
                *base = f(*base);
                *stride = f(*stride);
            }
            PrimExprData::Broadcast { value, .. } => *value = f(*value),
        }
        d
    }
}

/// A TIR variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymVarData {
    /// The name hint (printed, made unique by the printer).
    pub name: String,
    /// Its type (`int64` for shape dims, `handle` for buffer data and handle params).
    pub dtype: DataType,
    /// For handles: the element type and storage scope the pointer was declared with,
    /// as in `T.handle("float32", "global")`.
    pub pointer: Option<(DataType, String)>,
    /// Declared `n = T.int64(is_size_var=True)`: TVM's `SizeVar`, a variable known to be
    /// non-negative (TVM's frontends make symbolic batch dims this way).
    pub size_var: bool,
}

impl SymVarData {
    /// A scalar variable.
    pub fn new(name: impl Into<String>, dtype: DataType) -> SymVarData {
        SymVarData { name: name.into(), dtype, pointer: None, size_var: false }
    }

    /// A buffer's data pointer: a `handle` to `storage` elements in memory `scope`.
    pub fn pointer(name: impl Into<String>, storage: DataType, scope: impl Into<String>) -> SymVarData {
        SymVarData {
            name: name.into(),
            dtype: DataType::HANDLE,
            pointer: Some((storage, scope.into())),
            size_var: false,
        }
    }
}

/// A half-open range `[min, min + extent)` (loop ranges, block iteration domains,
/// buffer regions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    /// First value.
    pub min: PrimExpr,
    /// Number of values.
    pub extent: PrimExpr,
}

/// The value of an integer literal of `dtype` as stored in [`PrimExprData::Int`], or `None`
/// when TVM's `IntImm` constructor rejects it: a signed type holds
/// `-2^(bits-1) .. 2^(bits-1)` (`int1` holds 0 and 1), an unsigned type `0 .. 2^bits`
/// (a `uint64` above `i64::MAX` is stored with its bits reinterpreted, as it prints).
/// Non-integer types take any value that fits in `i64`.
pub fn int_literal_value(dtype: DataType, v: i128) -> Option<i64> {
    let bits = u32::from(dtype.bits).min(64);
    if dtype.is_uint() || dtype.is_bool() {
        let bits = if dtype.is_bool() { 1 } else { bits };
        let max = if bits >= 64 { i128::from(u64::MAX) } else { (1i128 << bits) - 1 };
        return (0..=max).contains(&v).then_some(v as u64 as i64);
    }
    if dtype.is_signed_int() && bits > 0 {
        let (min, max) = if bits == 1 { (0, 1) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
        return (min..=max).contains(&v).then_some(v as i64);
    }
    i64::try_from(v).ok()
}

/// Wraps an integer result to the width of `dtype`, as TVM's constant folder does.
pub fn wrap_int(dtype: DataType, v: i64) -> i64 {
    let bits = u32::from(dtype.bits);
    if dtype.is_bool() {
        return i64::from(v != 0);
    }
    if bits >= 64 || bits == 0 {
        return v;
    }
    let mask = (1i64 << bits) - 1;
    let u = v & mask;
    if dtype.is_uint() {
        u
    } else if u >> (bits - 1) != 0 {
        u - (1i64 << bits)
    } else {
        u
    }
}

/// Rounds a double to the precision of a float type (float32, float16, bfloat16), as a
/// constant of that type holds it. Float64 and unknown widths are returned unchanged.
pub fn round_to_dtype(dtype: DataType, v: f64) -> f64 {
    match (dtype.code, dtype.bits) {
        (crate::dtype::TypeCode::Float, 32) => f64::from(v as f32),
        (crate::dtype::TypeCode::Float, 16) => crate::half::f16_round(v),
        (crate::dtype::TypeCode::BFloat, 16) => crate::half::bf16_round(v),
        _ => v,
    }
}
