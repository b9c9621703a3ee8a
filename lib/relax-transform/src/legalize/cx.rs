//! The context of one call being legalized: its arguments, attributes and types, and
//! the [`Te`] builder in which the legalization describes the computation.
//!
//! Converting arguments follows `relax.utils.gen_call_tir_inputs` (what `bb.call_te`
//! does): a tensor argument becomes a placeholder named after its variable (`A`, `B`,
//! ... for other expressions, by position), whose symbolic dims are copied into fresh
//! variables of the PrimFunc; it is passed to `call_tir`. Scalar values (`R.prim_value`,
//! shape values) become expressions of the PrimFunc, and their variables must be defined
//! there too (by a buffer dim, or as an extra scalar parameter).

use std::collections::HashMap;

use relax_ir::attrs::AttrValue;
use relax_ir::{
    Call, ConstPayload, DataType, Expr, ExprData, Module, PrimExpr, PrimExprData, RelaxFunction, SymVar, Ty, TyData,
};

use super::te::{Te, Tensor};

/// A binary operand: a tensor, or a scalar constant folded into the kernel.
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    /// A tensor argument.
    Tensor(Tensor),
    /// A scalar constant (`R.const(1.0, "float32")`).
    Scalar(PrimExpr),
}

/// One call being legalized.
pub struct Cx<'a> {
    /// The module (constants).
    pub m: &'a Module,
    /// The calling function.
    pub f: &'a RelaxFunction,
    /// The call.
    pub call: &'a Call,
    /// The call's type (its binding's annotation until op type inference exists).
    pub out_ty: Ty,
    /// The computation being described.
    pub te: Te,
    /// Caller symbolic variable → its copy in the PrimFunc.
    pub(crate) var_map: HashMap<SymVar, PrimExpr>,
    /// The Relax arguments of the `call_tir`, in order.
    pub(crate) call_args: Vec<Expr>,
}

impl<'a> Cx<'a> {
    /// A context for `call` in `f`.
    pub fn new(m: &'a Module, f: &'a RelaxFunction, call: &'a Call, out_ty: Ty) -> Cx<'a> {
        Cx { m, f, call, out_ty, te: Te::new(), var_map: HashMap::new(), call_args: Vec::new() }
    }

    /// The number of Relax arguments.
    pub fn nargs(&self) -> usize {
        self.call.args.len()
    }

    /// The `i`-th Relax argument.
    pub fn arg(&self, i: usize) -> Option<Expr> {
        self.call.args.get(i, &self.f.lists)
    }

    /// The type of an expression of the caller.
    pub fn ty(&self, e: Expr) -> Option<&'a TyData> {
        let f = self.f;
        f.ty_of(e).map(|t| f.pool.ty(t))
    }

    /// The type of the `i`-th argument.
    pub fn arg_ty(&self, i: usize) -> Option<&'a TyData> {
        self.ty(self.arg(i)?)
    }

    /// The call's result type.
    pub fn out(&self) -> &'a TyData {
        self.f.pool.ty(self.out_ty)
    }

    /// The call's result dtype.
    pub fn out_dtype(&self) -> Option<DataType> {
        self.out().dtype()
    }

    /// Copies a caller expression into the PrimFunc, with fresh variables: plain ones, as
    /// TVM's `emit_te` makes them (a caller's `SizeVar` becomes `n = T.int64()`).
    pub fn import(&mut self, e: PrimExpr) -> PrimExpr {
        let before = self.te.pool.vars.len();
        let out = self.te.pool.import_prim(&self.f.pool, e, &mut self.var_map);
        for (_, v) in self.te.pool.vars.iter_mut().skip(before) {
            v.size_var = false;
        }
        out
    }

    /// The rank of the `i`-th argument, when it is a tensor of known rank.
    pub fn arg_ndim(&self, i: usize) -> Option<usize> {
        match self.arg_ty(i)? {
            TyData::Tensor { ndim, .. } if *ndim >= 0 => Some(*ndim as usize),
            _ => None,
        }
    }

    /// The `i`-th argument as a placeholder (see [`Cx::tensor_of`]).
    pub fn tensor(&mut self, i: usize) -> Option<Tensor> {
        let e = self.arg(i)?;
        self.tensor_of(e)
    }

    /// `e` as a placeholder: named after its variable (or `A`, `B`, ... by position), its
    /// dims copied into the PrimFunc; `e` becomes an argument of the `call_tir`.
    pub fn tensor_of(&mut self, e: Expr) -> Option<Tensor> {
        let (dims, dtype) = match self.ty(e)? {
            TyData::Tensor { shape: relax_ir::TensorShape::Dims(d), dtype, .. } if !dtype.is_void() => {
                (d.clone(), *dtype)
            }
            _ => return None,
        };
        let n = self.call_args.len();
        let name = match &self.f.exprs[e] {
            ExprData::Var(v) => self.f.vars[*v].name.clone(),
            _ if n < 26 => char::from(b'A' + n as u8).to_string(),
            _ => format!("tensor_input_{n}"),
        };
        let shape = dims.iter().map(|&d| self.import(d)).collect();
        self.call_args.push(e);
        Some(self.te.placeholder(&name, shape, dtype))
    }

    /// The value of a scalar constant argument (`R.const(1.0, "float32")`), as a literal
    /// of the PrimFunc; `None` for anything else.
    pub fn scalar_const(&mut self, i: usize) -> Option<PrimExpr> {
        let e = self.arg(i)?;
        // A `R.prim_value` of a literal (`b * 2.0` in TVMScript): TVM's
        // `_try_convert_to_scalar_const` takes its value.
        if let ExprData::Prim(p) = self.f.exprs[e] {
            let mut vars = Vec::new();
            self.f.pool.collect_vars(p, &mut vars);
            return vars.is_empty().then(|| self.import(p));
        }
        let ExprData::Const(c) = self.f.exprs[e] else { return None };
        let cd = self.m.constants.get(c)?;
        if cd.shape.as_deref() != Some(&[]) {
            return None;
        }
        let ConstPayload::Data(bytes) = &cd.payload else { return None };
        let t = cd.dtype;
        let pool = &mut self.te.pool;
        let le = |n: usize| -> Option<u64> {
            let b = bytes.get(..n)?;
            Some(b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
        };
        Some(match (t.code, t.bits) {
            (relax_ir::TypeCode::Float, 32) => pool.float(t, f64::from(f32::from_bits(le(4)? as u32))),
            (relax_ir::TypeCode::Float, 64) => pool.float(t, f64::from_bits(le(8)?)),
            (relax_ir::TypeCode::Float, 16) => pool.float(t, half_to_f64(le(2)? as u16)),
            (relax_ir::TypeCode::Bool, _) => pool.int(t, i64::from(le(1)? != 0)),
            (relax_ir::TypeCode::Int | relax_ir::TypeCode::UInt, bits) => {
                let n = usize::from(bits / 8).max(1);
                let raw = le(n)?;
                let v = if t.is_int() && !t.is_uint() && bits < 64 {
                    let shift = 64 - u32::from(bits);
                    ((raw << shift) as i64) >> shift
                } else {
                    raw as i64
                };
                pool.int(t, v)
            }
            _ => return None,
        })
    }

    /// `_try_convert_to_scalar_const` and the conversion of a tensor argument.
    pub fn operand(&mut self, i: usize) -> Option<Operand> {
        if let Some(s) = self.scalar_const(i) {
            return Some(Operand::Scalar(s));
        }
        self.tensor(i).map(Operand::Tensor)
    }

    /// A scalar argument (`R.prim_value(e)`, or a variable whose type knows its value),
    /// copied into the PrimFunc.
    pub fn prim(&mut self, i: usize) -> Option<PrimExpr> {
        let e = self.arg(i)?;
        let p = match &self.f.exprs[e] {
            ExprData::Prim(p) => *p,
            _ => match self.ty(e)? {
                TyData::Prim { value: Some(v), .. } => *v,
                _ => return None,
            },
        };
        let x = self.import(p);
        self.te.note_extra(x);
        Some(x)
    }

    /// A shape argument (`R.shape([...])`, or a variable whose type knows its values),
    /// copied into the PrimFunc.
    pub fn shape(&mut self, i: usize) -> Option<Vec<PrimExpr>> {
        let e = self.arg(i)?;
        let dims = match &self.f.exprs[e] {
            ExprData::Shape(d) => d.clone(),
            _ => match self.ty(e)? {
                TyData::Shape { values: Some(v), .. } => v.clone(),
                _ => return None,
            },
        };
        let out: Vec<PrimExpr> = dims.iter().map(|&d| self.import(d)).collect();
        for &x in &out {
            self.te.note_extra(x);
        }
        Some(out)
    }

    /// A tuple of scalars (`strided_slice`'s `axes`, `begin`, ...): the known values of
    /// its fields' types, copied into the PrimFunc.
    pub fn prim_tuple(&mut self, i: usize) -> Option<Vec<PrimExpr>> {
        let e = self.arg(i)?;
        let TyData::Tuple(fields) = self.ty(e)? else { return None };
        let mut vals = Vec::new();
        for &ft in fields {
            match self.f.pool.ty(ft) {
                TyData::Prim { value: Some(v), .. } => vals.push(*v),
                _ => return None,
            }
        }
        let out: Vec<PrimExpr> = vals.iter().map(|&v| self.import(v)).collect();
        for &x in &out {
            self.te.note_extra(x);
        }
        Some(out)
    }

    /// The fields of a tuple argument: a tuple (`R.concat((a, b))`) or, as TVM's
    /// legalization looks through `bb.lookup_binding`, a variable bound to one, directly
    /// or through other variables (`t = (a, b)`, `R.concat(t)`). The fields must be
    /// visible at the call: a dataflow variable among them is used only when every
    /// variable of the chain is a dataflow variable (so the call is in the same block).
    pub fn tuple_fields(&self, i: usize) -> Option<Vec<Expr>> {
        let mut e = self.arg(i)?;
        let mut local = true;
        for _ in 0..16 {
            match &self.f.exprs[e] {
                ExprData::Tuple(fields) => {
                    let fields = self.f.list(fields).to_vec();
                    let hidden = |&x: &Expr| matches!(self.f.exprs[x], ExprData::Var(v) if self.f.vars[v].dataflow);
                    return (local || !fields.iter().any(hidden)).then_some(fields);
                }
                ExprData::Var(v) => {
                    local &= self.f.vars[*v].dataflow;
                    e = bound_value(self.f, *v)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// An attribute.
    pub fn attr(&self, name: &str) -> Option<&'a AttrValue> {
        self.call.attrs.get(name)
    }

    /// An integer attribute (`None` when absent or `None`).
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        self.attr(name)?.as_int()
    }

    /// A list-of-integers attribute; a single integer is a one-element list.
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        let v = self.attr(name)?;
        v.as_int_list().or_else(|| v.as_int().map(|i| vec![i]))
    }

    /// A boolean attribute.
    pub fn attr_bool(&self, name: &str) -> Option<bool> {
        self.attr(name)?.as_bool()
    }

    /// A float attribute.
    pub fn attr_f64(&self, name: &str) -> Option<f64> {
        self.attr(name)?.as_f64()
    }

    /// A dtype attribute; `None` for `void`/`None`/absent.
    pub fn attr_dtype(&self, name: &str) -> Option<DataType> {
        let t = DataType::parse(self.attr(name)?.as_str()?)?;
        (!t.is_void()).then_some(t)
    }

    /// The constant value of a PrimFunc expression.
    pub fn const_of(&self, e: PrimExpr) -> Option<i64> {
        match self.te.pool.prim(e) {
            PrimExprData::Int(_, v) => Some(*v),
            _ => None,
        }
    }
}

/// The value a plain binding (not a match cast) of the function's reachable sequences
/// gives `v`.
fn bound_value(f: &RelaxFunction, v: relax_ir::Var) -> Option<Expr> {
    f.all_seqs()
        .into_iter()
        .flat_map(|s| f.seq(s).blocks.iter().flat_map(|&b| &f.blocks[b].bindings))
        .find(|bd| bd.var == v && bd.kind == relax_ir::BindingKind::Value)
        .map(|bd| bd.value)
}

/// An IEEE half-precision value as a double.
fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// Normalizes a possibly negative axis against a rank.
pub fn norm_axis(axis: i64, ndim: usize) -> Option<usize> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    (0..n).contains(&a).then_some(a as usize)
}
