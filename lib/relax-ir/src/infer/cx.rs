//! What an op rule sees: the function, the call, its arguments' types and attributes,
//! and helpers to read them, to build result types and to word errors.

use crate::arith::Analyzer;
use crate::attrs::AttrValue;
use crate::dtype::DataType;
use crate::entities::{Expr, PrimExpr, Ty, Var};
use crate::op::{OpDef, OpId, ParamRole};
use crate::printer::{print_prim_in, print_ty_in};
use crate::relax::{Call, ExprData, RelaxFunction};
use crate::ty::{TensorShape, TyData, VDevice};

use super::InferError;

/// The context of one op call's inference.
pub struct OpCx<'a> {
    /// The function the call belongs to (its pool receives the result type).
    pub f: &'a mut RelaxFunction,
    /// The call.
    pub call: &'a Call,
    /// The op.
    pub id: OpId,
    /// The op's table entry.
    pub def: &'static OpDef,
    /// The arithmetic used for proofs and simplification.
    pub an: &'a Analyzer,
}

/// A tensor argument's type, unpacked.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    /// The interned type.
    pub ty: Ty,
    /// Its shape.
    pub shape: TensorShape,
    /// Element type (`void` when unknown).
    pub dtype: DataType,
    /// Rank (`-1` when unknown).
    pub ndim: i32,
    /// Virtual device.
    pub vdevice: Option<VDevice>,
    /// The dims when known: a literal shape, or the known values of a shape variable
    /// (TVM's `GetShape()`).
    pub values: Option<Vec<PrimExpr>>,
}

impl TensorInfo {
    /// The dims when the shape is a literal shape (TVM's `shape.as<ShapeExprNode>()`).
    pub fn dims(&self) -> Option<&[PrimExpr]> {
        match &self.shape {
            TensorShape::Dims(d) => Some(d),
            _ => None,
        }
    }
    /// True when the rank is unknown.
    pub fn unknown_ndim(&self) -> bool {
        self.ndim < 0
    }
    /// True when the shape (literal or variable) is known.
    pub fn has_shape(&self) -> bool {
        !matches!(self.shape, TensorShape::Unknown)
    }
}

impl<'a> OpCx<'a> {
    /// A context for `call` of `def`; checks the number of Relax arguments.
    pub fn new(f: &'a mut RelaxFunction, call: &'a Call, id: OpId, an: &'a Analyzer) -> Result<OpCx<'a>, InferError> {
        let def = id.def();
        let cx = OpCx { f, call, id, def, an };
        if !def.is_variadic() {
            let required = def.args().filter(|p| matches!(p.role, ParamRole::Arg { optional: false, .. })).count();
            let total = def.args().count();
            let n = call.args.len();
            if n < required || n > total {
                let want = if required == total { format!("{total}") } else { format!("{required} to {total}") };
                return Err(cx.err(format!(
                    "expects {want} argument{}, but was given {n}",
                    if total == 1 && required == total { "" } else { "s" }
                )));
            }
        }
        Ok(cx)
    }

    /// The op's text name, `R.nn.softmax`.
    pub fn name(&self) -> String {
        format!("R.{}", self.def.text_name())
    }

    /// An error about this call: `R.op: message`.
    pub fn err(&self, msg: impl std::fmt::Display) -> InferError {
        InferError::new(format!("{}: {msg}", self.name()))
    }

    /// A type as it prints, for messages.
    pub fn show(&self, t: Ty) -> String {
        print_ty_in(self.f, t)
    }

    /// A TIR expression as it prints, for messages.
    pub fn show_prim(&self, e: PrimExpr) -> String {
        print_prim_in(&self.f.pool, e)
    }

    /// Interns a type.
    pub fn mk(&mut self, t: TyData) -> Ty {
        self.f.pool.intern_ty(t)
    }

    /// A tensor type.
    pub fn tensor(&mut self, shape: TensorShape, dtype: DataType, ndim: i32, vdevice: Option<VDevice>) -> Ty {
        let ndim = match &shape {
            TensorShape::Dims(d) => d.len() as i32,
            _ => ndim,
        };
        self.mk(TyData::Tensor { shape, dtype, ndim, vdevice })
    }

    /// A tensor type of known dims.
    pub fn tensor_dims(&mut self, dims: Vec<PrimExpr>, dtype: DataType, vdevice: Option<VDevice>) -> Ty {
        self.tensor(TensorShape::Dims(dims), dtype, 0, vdevice)
    }

    /// A tensor type of unknown shape.
    pub fn tensor_ndim(&mut self, dtype: DataType, ndim: i32, vdevice: Option<VDevice>) -> Ty {
        self.tensor(TensorShape::Unknown, dtype, ndim, vdevice)
    }

    /// The `i`-th Relax argument.
    pub fn arg(&self, i: usize) -> Option<Expr> {
        self.call.args.get(i, &self.f.lists)
    }

    /// The name of the `i`-th Relax parameter of the op (for messages).
    pub fn arg_name(&self, i: usize) -> &'static str {
        self.def.args().nth(i).map_or("argument", |p| p.name)
    }

    /// The type of the `i`-th argument (`R.Object` when it has none).
    pub fn arg_ty(&mut self, i: usize) -> Ty {
        match self.arg(i).and_then(|a| self.f.ty_of(a)) {
            Some(t) => t,
            None => self.mk(TyData::Object),
        }
    }

    /// The payload of the `i`-th argument's type.
    pub fn arg_data(&mut self, i: usize) -> TyData {
        let t = self.arg_ty(i);
        self.f.pool.ty(t).clone()
    }

    /// Unpacks a tensor type, or `None` for other kinds.
    pub fn tensor_info(&self, t: Ty) -> Option<TensorInfo> {
        let TyData::Tensor { shape, dtype, ndim, vdevice } = self.f.pool.ty(t).clone() else { return None };
        let values = match &shape {
            TensorShape::Dims(d) => Some(d.clone()),
            TensorShape::Var(v) => self.shape_var_values(*v),
            TensorShape::Unknown => None,
        };
        Some(TensorInfo { ty: t, shape, dtype, ndim, vdevice, values })
    }

    /// The known values of a `R.Shape`-typed Relax variable.
    pub fn shape_var_values(&self, v: Var) -> Option<Vec<PrimExpr>> {
        let t = self.f.vars.get(v)?.ty;
        match self.f.pool.ty(t) {
            TyData::Shape { values: Some(vs), .. } => Some(vs.clone()),
            _ => None,
        }
    }

    /// The `i`-th argument as a tensor; an error for other kinds.
    pub fn tensor_arg(&mut self, i: usize) -> Result<TensorInfo, InferError> {
        let t = self.arg_ty(i);
        match self.tensor_info(t) {
            Some(ti) => Ok(ti),
            None => {
                Err(self.err(format!("expects a tensor for `{}`, but was given `{}`", self.arg_name(i), self.show(t))))
            }
        }
    }

    /// The fields of a tuple of tensors given as the `i`-th argument.
    pub fn tensor_tuple_arg(&mut self, i: usize) -> Result<Vec<TensorInfo>, InferError> {
        let t = self.arg_ty(i);
        let TyData::Tuple(fields) = self.f.pool.ty(t).clone() else {
            return Err(self.err(format!(
                "expects a tuple of tensors for `{}`, but was given `{}`",
                self.arg_name(i),
                self.show(t)
            )));
        };
        let mut out = Vec::with_capacity(fields.len());
        for ft in fields {
            match self.tensor_info(ft) {
                Some(ti) => out.push(ti),
                None => {
                    return Err(self.err(format!(
                        "expects a tuple of tensors for `{}`, but was given `{}`",
                        self.arg_name(i),
                        self.show(t)
                    )));
                }
            }
        }
        Ok(out)
    }

    /// The dims of a shape argument: `R.shape([...])`, or a `R.Shape`-typed value with
    /// known values.
    pub fn shape_arg_values(&mut self, i: usize) -> Option<Vec<PrimExpr>> {
        let a = self.arg(i)?;
        if let ExprData::Shape(d) = &self.f.exprs[a] {
            return Some(d.clone());
        }
        match self.arg_data(i) {
            TyData::Shape { values: Some(v), .. } => Some(v),
            _ => None,
        }
    }

    /// The shape a shape argument gives a tensor: its dims when written as
    /// `R.shape([...])`, the variable itself when it is a shape variable (TVM keeps the
    /// variable as the tensor's shape), otherwise unknown.
    pub fn shape_arg_as_shape(&mut self, i: usize) -> TensorShape {
        let Some(a) = self.arg(i) else { return TensorShape::Unknown };
        match &self.f.exprs[a] {
            ExprData::Shape(d) => TensorShape::Dims(d.clone()),
            ExprData::Var(v) => TensorShape::Var(*v),
            _ => match self.arg_data(i) {
                TyData::Shape { values: Some(v), .. } => TensorShape::Dims(v),
                _ => TensorShape::Unknown,
            },
        }
    }

    /// The rank of a shape argument (`-1` when unknown); an error if it is not a shape.
    pub fn shape_arg_ndim(&mut self, i: usize) -> Result<i32, InferError> {
        match self.arg_data(i) {
            TyData::Shape { ndim, .. } => Ok(ndim),
            _ => {
                let t = self.arg_ty(i);
                Err(self.err(format!("expects a shape for `{}`, but was given `{}`", self.arg_name(i), self.show(t))))
            }
        }
    }

    /// The value of a scalar argument: `R.prim_value(e)` or a `R.Prim` value with a
    /// known value.
    pub fn prim_arg(&mut self, i: usize) -> Option<PrimExpr> {
        let a = self.arg(i)?;
        self.prim_of(a)
    }

    /// The value of a scalar expression, when known.
    pub fn prim_of(&self, a: Expr) -> Option<PrimExpr> {
        if let ExprData::Prim(p) = &self.f.exprs[a] {
            return Some(*p);
        }
        let t = self.f.ty_of(a)?;
        match self.f.pool.ty(t) {
            TyData::Prim { value: Some(v), .. } => Some(*v),
            _ => None,
        }
    }

    /// The values of a tuple of scalars: `(R.prim_value(a), ...)` or a tuple-typed value
    /// whose fields have known values.
    pub fn prim_tuple_arg(&mut self, i: usize) -> Option<Vec<PrimExpr>> {
        let a = self.arg(i)?;
        if let ExprData::Tuple(fields) = &self.f.exprs[a] {
            let fields = self.f.list(*fields).to_vec();
            return fields.iter().map(|&x| self.prim_of(x)).collect();
        }
        let t = self.f.ty_of(a)?;
        match self.f.pool.ty(t).clone() {
            TyData::Tuple(fields) => fields
                .iter()
                .map(|&ft| match self.f.pool.ty(ft) {
                    TyData::Prim { value: Some(v), .. } => Some(*v),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// The attribute `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.call.attrs.get(name)
    }

    /// An integer attribute (`None` when absent or `None`).
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        match self.attr(name)? {
            AttrValue::None => None,
            v => v.as_int(),
        }
    }

    /// A list-of-integers attribute (`None` when absent or `None`); a single integer
    /// reads as a one-element list.
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name)? {
            AttrValue::None => None,
            AttrValue::Int(v) | AttrValue::PrimInt(_, v) => Some(vec![*v]),
            v => v.as_int_list(),
        }
    }

    /// A boolean attribute, `default` when absent.
    pub fn attr_bool(&self, name: &str, default: bool) -> bool {
        self.attr(name).and_then(AttrValue::as_bool).unwrap_or(default)
    }

    /// A string attribute.
    pub fn attr_str(&self, name: &str) -> Option<&str> {
        self.attr(name).and_then(AttrValue::as_str)
    }

    /// A dtype attribute: `None` when absent, `None` or `"void"`.
    pub fn attr_dtype(&self, name: &str) -> Option<DataType> {
        let t = DataType::parse(self.attr_str(name)?)?;
        (!t.is_void()).then_some(t)
    }

    /// Normalises an axis against a rank: `-1` is the last; an error when out of range.
    pub fn axis(&self, ndim: i32, axis: i64) -> Result<usize, InferError> {
        let n = i64::from(ndim);
        if axis < -n || axis >= n {
            return Err(self.err(format!(
                "axis {axis} is out of range for a tensor of rank {ndim} (expected {} <= axis < {ndim})",
                -n
            )));
        }
        Ok(if axis < 0 { (axis + n) as usize } else { axis as usize })
    }

    /// Normalises a list of distinct axes against a rank.
    pub fn axes(&self, ndim: i32, axes: &[i64]) -> Result<Vec<usize>, InferError> {
        let mut out: Vec<usize> = Vec::with_capacity(axes.len());
        for &a in axes {
            let x = self.axis(ndim, a)?;
            if out.contains(&x) {
                return Err(self.err(format!("axis {x} is given more than once in {axes:?}")));
            }
            out.push(x);
        }
        Ok(out)
    }

    /// `a == b` for every value of the variables.
    pub fn prove_equal(&self, a: PrimExpr, b: PrimExpr) -> bool {
        self.an.prove_equal(&self.f.pool, a, b)
    }

    /// `a != b` for every value of the variables.
    pub fn prove_not_equal(&self, a: PrimExpr, b: PrimExpr) -> bool {
        self.an.prove_not_equal(&self.f.pool, a, b)
    }

    /// The integer constant of a literal.
    pub fn as_int(&self, e: PrimExpr) -> Option<i64> {
        self.f.pool.as_int(e)
    }

    /// An `int64` constant.
    pub fn i64(&mut self, v: i64) -> PrimExpr {
        self.f.pool.i64(v)
    }

    /// TVM's operator constructor (type matching and folding).
    pub fn bin(&mut self, op: crate::prim::BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        super::simplify::bin(&mut self.f.pool, op, a, b)
    }

    /// TVM's `Analyzer::Simplify`.
    pub fn simplify(&mut self, e: PrimExpr) -> PrimExpr {
        super::simplify::simplify(self.an, &mut self.f.pool, e)
    }

    /// A message fragment `` `T` `` naming a type.
    pub fn q(&self, t: Ty) -> String {
        format!("`{}`", self.show(t))
    }

    /// A message fragment `` `e` `` naming an expression.
    pub fn qp(&self, e: PrimExpr) -> String {
        format!("`{}`", self.show_prim(e))
    }
}
