//! Run-time type checks: a value against a Relax type (struct info), as at function
//! parameters and `R.match_cast`.
//!
//! Symbolic variables bind on first sight: a bare variable as a whole dim (or prim value)
//! that has no value yet takes the actual one; every other occurrence, and every compound
//! expression (`n + 1`), is checked once all the values being matched together have been
//! seen (so `R.Tensor(("n + 1",))` before `R.Tensor(("n",))` works, as in TVM). Each
//! binding remembers where it came from, so an inconsistency names both places.

use std::collections::HashMap;

use relax_ir::{Pool, PrimExpr, PrimExprData, SymVar, TensorShape, Ty, TyData, Var};

use crate::relax::sym::{Syms, eval_dim};
use crate::value::{Value, shape_text};

/// A mismatch: which of the matched items failed, and why.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The index of the item (parameter) that failed.
    pub item: usize,
    /// Why, e.g. ``dim 1 is 5, but the annotation requires 4``.
    pub detail: String,
}

struct Pending {
    item: usize,
    expr: PrimExpr,
    actual: i64,
    path: String,
}

/// Matches values against types of one function, binding its symbolic variables.
pub struct Checker<'a> {
    pool: &'a Pool,
    syms: &'a mut Syms,
    /// Where each variable bound here got its value.
    origin: HashMap<SymVar, String>,
    pending: Vec<Pending>,
    /// The value of a shape variable (`R.Tensor(s, ...)`).
    shape_var: &'a dyn Fn(Var) -> Option<Vec<i64>>,
    /// The name of the item being matched, for origins (`parameter `x``).
    pub item_name: String,
}

impl<'a> Checker<'a> {
    /// A checker over a function's pool and symbolic values.
    pub fn new(pool: &'a Pool, syms: &'a mut Syms, shape_var: &'a dyn Fn(Var) -> Option<Vec<i64>>) -> Checker<'a> {
        Checker { pool, syms, origin: HashMap::new(), pending: Vec::new(), shape_var, item_name: String::new() }
    }

    fn bind_or_defer(&mut self, item: usize, e: PrimExpr, actual: i64, path: &str) {
        if let PrimExprData::Var(v) = self.pool.prim(e)
            && self.syms.get(*v).is_none()
        {
            self.syms.set(*v, actual);
            self.origin.insert(*v, format!("{path} of {}", self.item_name));
            return;
        }
        self.pending.push(Pending { item, expr: e, actual, path: path.to_string() });
    }

    fn at(path: &str, what: &str) -> String {
        if path.is_empty() { what.to_string() } else { format!("{path}: {what}") }
    }

    /// Matches `v` against `ty` (item number `item`); compound checks are deferred to
    /// [`Checker::finish`].
    pub fn match_value(&mut self, item: usize, ty: Ty, v: &Value, path: &str) -> Result<(), Mismatch> {
        let fail = |detail: String| Err(Mismatch { item, detail });
        match (self.pool.ty(ty).clone(), v) {
            (TyData::Object, _) => Ok(()),
            (TyData::Prim { dtype, value }, Value::Prim(s)) => {
                if !dtype.is_void() && s.dtype() != dtype {
                    return fail(Self::at(path, &format!("dtype {} does not match {dtype}", s.dtype())));
                }
                if let Some(e) = value {
                    if s.is_float() {
                        return Ok(());
                    }
                    let p = if path.is_empty() { "value".to_string() } else { format!("{path}, value") };
                    self.bind_or_defer(item, e, s.as_i64(), &p);
                }
                Ok(())
            }
            (TyData::Shape { values, ndim }, Value::Shape(s)) => {
                if ndim >= 0 && s.len() != ndim as usize {
                    return fail(Self::at(path, &format!("rank {} does not match {ndim}", s.len())));
                }
                if let Some(dims) = values {
                    if dims.len() != s.len() {
                        return fail(Self::at(path, &format!("rank {} does not match {}", s.len(), dims.len())));
                    }
                    for (i, (&d, &a)) in dims.iter().zip(s.iter()).enumerate() {
                        self.bind_or_defer(item, d, a, &Self::at(path, &format!("dim {i}")));
                    }
                }
                Ok(())
            }
            (TyData::Tensor { shape, dtype, ndim, .. }, Value::Tensor(t)) => {
                if !dtype.is_void() && t.dtype != dtype {
                    return fail(Self::at(path, &format!("dtype {} does not match {dtype}", t.dtype)));
                }
                if ndim >= 0 && t.shape.len() != ndim as usize {
                    return fail(Self::at(path, &format!("rank {} does not match {ndim}", t.shape.len())));
                }
                match shape {
                    TensorShape::Dims(dims) => {
                        if dims.len() != t.shape.len() {
                            return fail(Self::at(
                                path,
                                &format!("rank {} does not match {}", t.shape.len(), dims.len()),
                            ));
                        }
                        for (i, (&d, &a)) in dims.iter().zip(&t.shape).enumerate() {
                            self.bind_or_defer(item, d, a, &Self::at(path, &format!("dim {i}")));
                        }
                    }
                    TensorShape::Var(sv) => {
                        if let Some(s) = (self.shape_var)(sv)
                            && s != t.shape
                        {
                            return fail(Self::at(
                                path,
                                &format!(
                                    "the shape {} does not match the shape value {}",
                                    shape_text(&t.shape),
                                    shape_text(&s)
                                ),
                            ));
                        }
                    }
                    TensorShape::Unknown => {}
                }
                Ok(())
            }
            (TyData::Tuple(fields), Value::Tuple(vals)) => {
                if fields.len() != vals.len() {
                    return fail(Self::at(
                        path,
                        &format!("a tuple of {} fields does not match {}", vals.len(), fields.len()),
                    ));
                }
                for (i, (&f, v)) in fields.iter().zip(vals.iter()).enumerate() {
                    self.match_value(item, f, v, &Self::at(path, &format!("field {i}")))?;
                }
                Ok(())
            }
            (TyData::Callable { .. }, Value::Func(_)) => Ok(()),
            (t, v) => {
                let want = match t {
                    TyData::Prim { .. } => "a prim value",
                    TyData::Shape { .. } => "a shape",
                    TyData::Tensor { .. } => "a tensor",
                    TyData::Tuple(_) => "a tuple",
                    TyData::Callable { .. } => "a function",
                    TyData::Object => "anything",
                };
                fail(Self::at(path, &format!("expected {want}, got {}", v.kind())))
            }
        }
    }

    /// Runs the deferred checks.
    pub fn finish(&mut self) -> Result<(), Mismatch> {
        for p in std::mem::take(&mut self.pending) {
            let want = match eval_dim(self.pool, p.expr, self.syms) {
                Ok(w) => w,
                Err(e) => return Err(Mismatch { item: p.item, detail: format!("{}: {}", p.path, e.message) }),
            };
            if want == p.actual {
                continue;
            }
            let detail = match self.pool.prim(p.expr) {
                PrimExprData::Var(v) => {
                    let name = &self.pool.vars[*v].name;
                    match self.origin.get(v) {
                        Some(o) => format!("{} is {}, but `{name}` is {want} (from {o})", p.path, p.actual),
                        None => format!("{} is {}, but `{name}` is {want}", p.path, p.actual),
                    }
                }
                PrimExprData::Int(..) => format!("{} is {}, but the annotation requires {want}", p.path, p.actual),
                _ => format!(
                    "{} is {}, but `{}` is {want}",
                    p.path,
                    p.actual,
                    relax_ir::printer::print_prim_in(self.pool, p.expr)
                ),
            };
            return Err(Mismatch { item: p.item, detail });
        }
        Ok(())
    }
}
