//! Relax type annotations: `R.Tensor((n, 4), dtype="float32")`, `R.Shape([m, k])`,
//! `R.Tuple(...)`, `R.Object`/`R.Any`, `R.Prim("int64")`/`T.int64`, `R.Callable(...)`.

use std::collections::HashMap;

use relax_ir::{DataType, Pool, PrimExpr, TensorShape, Ty, TyData, VDevice};

use super::super::module::ModuleCx;
use super::super::prim_expr::{lower_prim, lower_quoted, t_dtype};
use super::super::{LResult, Reported};
use super::FuncCx;
use crate::ast::{self, ExprKind};

/// Lowers a type annotation. In a signature, dims may be quoted strings.
pub(crate) fn lower_type(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, in_signature: bool) -> LResult<Ty> {
    let (name, call) = match &e.kind {
        ExprKind::Call(call) => match call.func.dotted_name() {
            Some(n) => (n, Some(call)),
            None => return Err(bad_type(fx, e)),
        },
        _ => match e.dotted_name() {
            Some(n) => (n, None),
            None => return Err(bad_type(fx, e)),
        },
    };
    let data = match name.as_str() {
        "R.Tensor" => match call {
            None => TyData::Tensor { shape: TensorShape::Unknown, dtype: DataType::VOID, ndim: -1, vdevice: None },
            Some(c) => tensor(fx, e, c, in_signature)?,
        },
        "R.Shape" => match call {
            None => TyData::Shape { values: None, ndim: -1 },
            Some(c) => shape(fx, e, c, in_signature)?,
        },
        "R.Tuple" => match call {
            None => TyData::void(),
            Some(c) => {
                if !c.keywords.is_empty() {
                    return Err(fx.d().error(e.span, "`R.Tuple` takes no keywords"));
                }
                let mut fields = Vec::with_capacity(c.args.len());
                for a in &c.args {
                    fields.push(lower_type(fx, a, in_signature)?);
                }
                TyData::Tuple(fields)
            }
        },
        "R.Object" | "R.Any" => {
            if call.is_some_and(|c| !c.args.is_empty() || !c.keywords.is_empty()) {
                return Err(fx.d().error(e.span, format!("`{name}` takes no arguments")));
            }
            TyData::Object
        }
        "R.Prim" => match call {
            None => return Err(fx.d().error(e.span, "`R.Prim` needs a dtype or a value")),
            Some(c) => prim(fx, e, c, in_signature)?,
        },
        "R.Callable" => callable(fx, e, call, in_signature)?,
        other => match (t_dtype(other), call) {
            (Some(dtype), None) => TyData::Prim { dtype, value: None },
            _ => return Err(bad_type(fx, e)),
        },
    };
    Ok(fx.ty(data))
}

fn bad_type(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> Reported {
    fx.d().error(e.span, format!("expected a Relax type such as `R.Tensor(...)`, found {}", e.describe()))
}

/// A dtype given as a string (`"float32"`), `None` (void), or `T.float32`.
pub(crate) fn dtype_value(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<DataType> {
    match &e.kind {
        ExprKind::Str(s) => DataType::parse(s).ok_or_else(|| fx.d().error(e.span, format!("unknown dtype `{s}`"))),
        ExprKind::None => Ok(DataType::VOID),
        _ => match e.dotted_name().as_deref().and_then(t_dtype) {
            Some(t) => Ok(t),
            None => Err(fx.d().error(e.span, format!("expected a dtype string, found {}", e.describe()))),
        },
    }
}

fn int_value(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<i64> {
    e.as_signed_int().ok_or_else(|| fx.d().error(e.span, format!("expected an integer, found {}", e.describe())))
}

/// The largest `ndim=` accepted. A rank written as a number costs a few bytes of text but
/// type inference builds one dim per axis (`R.sum(x, keepdims=True)`), so it is bounded.
const MAX_NDIM: i64 = 1024;

/// An `ndim=` value: -1 (unknown) or a rank up to [`MAX_NDIM`].
fn ndim_value(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<i32> {
    let v = int_value(fx, e)?;
    if v < -1 {
        return Err(fx.d().error(e.span, "`ndim` must be -1 or more"));
    }
    if v > MAX_NDIM {
        return Err(fx.d().error(e.span, format!("`ndim={v}` is too large (at most {MAX_NDIM})")));
    }
    Ok(v as i32)
}

/// One dim of a shape: an integer, a quoted expression (signature), or a TIR expression.
pub(crate) fn dim(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<PrimExpr> {
    let v = match &e.kind {
        ExprKind::Str(s) => lower_quoted(fx, s, e.span)?,
        _ => lower_prim(fx, e)?,
    };
    let t = fx.f.pool.dtype(v);
    if !t.is_int() {
        return Err(fx.d().error(e.span, format!("a shape dim must be an integer, found `{t}`")));
    }
    // Relax shape values are int64: plain literals read as int32 are widened.
    Ok(fx.f.pool.cast(DataType::INT64, v))
}

/// A list or tuple of dims.
pub(crate) fn dims(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<Vec<PrimExpr>> {
    match e.as_sequence() {
        Some(items) => items.iter().map(|d| dim(fx, d)).collect(),
        None => Err(fx.d().error(e.span, format!("expected a tuple or list of dims, found {}", e.describe()))),
    }
}

fn tensor(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, c: &ast::Call, _sig: bool) -> LResult<TyData> {
    let mut shape_arg = c.args.first();
    let mut dtype_arg = c.args.get(1);
    if c.args.len() > 2 {
        return Err(fx.d().error(c.args[2].span, "`R.Tensor` takes at most a shape and a dtype positionally"));
    }
    let mut ndim_arg = None;
    let mut vdevice_arg = None;
    for k in &c.keywords {
        match k.name.name.as_str() {
            "shape" if shape_arg.is_none() => shape_arg = Some(&k.value),
            "dtype" if dtype_arg.is_none() => dtype_arg = Some(&k.value),
            "ndim" => ndim_arg = Some(&k.value),
            "vdevice" => vdevice_arg = Some(&k.value),
            other => return Err(fx.d().error(k.name.span, format!("unexpected keyword `{other}` of `R.Tensor`"))),
        }
    }
    let dtype = match dtype_arg {
        Some(d) => dtype_value(fx, d)?,
        None => DataType::VOID,
    };
    let mut ndim = match ndim_arg {
        Some(n) => ndim_value(fx, n)?,
        None => -1,
    };
    let shape = match shape_arg {
        None => TensorShape::Unknown,
        Some(s) if matches!(s.kind, ExprKind::None) => TensorShape::Unknown,
        Some(s) if s.as_sequence().is_some() => {
            let d = dims(fx, s)?;
            if ndim_arg.is_some() && ndim != d.len() as i32 {
                return Err(fx.d().error(e.span, format!("`ndim={ndim}` does not match a shape of {} dims", d.len())));
            }
            ndim = d.len() as i32;
            TensorShape::Dims(d)
        }
        Some(s) => match s.as_name().and_then(|n| fx.lookup_var(n)) {
            Some(v) => {
                if let TyData::Shape { ndim: n, .. } = fx.f.pool.ty(fx.f.vars[v].ty) {
                    ndim = *n;
                }
                TensorShape::Var(v)
            }
            None => return Err(fx.d().error(s.span, "expected a shape tuple or a shape variable")),
        },
    };
    let vdevice = match vdevice_arg {
        None => None,
        Some(v) => {
            let Some(text) = v.as_str() else {
                return Err(fx.d().error(v.span, "expected a vdevice string such as \"cuda:0:global\""));
            };
            Some(parse_vdevice(text).ok_or_else(|| fx.d().error(v.span, format!("invalid vdevice `{text}`")))?)
        }
    };
    Ok(TyData::Tensor { shape, dtype, ndim, vdevice })
}

/// `"kind:index:scope"` (scope defaults to `global`).
fn parse_vdevice(s: &str) -> Option<VDevice> {
    let mut parts = s.split(':');
    let kind = parts.next()?.to_string();
    let index = parts.next().map_or(Some(0), |i| i.parse().ok())?;
    let scope = parts.next().unwrap_or("global").to_string();
    if parts.next().is_some() || kind.is_empty() {
        return None;
    }
    Some(VDevice { kind, index, scope })
}

fn shape(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, c: &ast::Call, _sig: bool) -> LResult<TyData> {
    let mut values_arg = c.args.first();
    let mut ndim_arg = None;
    for k in &c.keywords {
        match k.name.name.as_str() {
            "values" if values_arg.is_none() => values_arg = Some(&k.value),
            "ndim" => ndim_arg = Some(&k.value),
            other => return Err(fx.d().error(k.name.span, format!("unexpected keyword `{other}` of `R.Shape`"))),
        }
    }
    let ndim = match ndim_arg {
        Some(n) => ndim_value(fx, n)?,
        None => -1,
    };
    match values_arg {
        Some(v) if !matches!(v.kind, ExprKind::None) => {
            let d = dims(fx, v)?;
            if ndim_arg.is_some() && ndim != d.len() as i32 {
                return Err(fx.d().error(e.span, "`ndim` does not match the number of values"));
            }
            Ok(TyData::shape(d))
        }
        _ => Ok(TyData::Shape { values: None, ndim }),
    }
}

fn prim(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, c: &ast::Call, _sig: bool) -> LResult<TyData> {
    let mut dtype_arg = c.args.first();
    let mut value_arg = None;
    for k in &c.keywords {
        match k.name.name.as_str() {
            "dtype" if dtype_arg.is_none() => dtype_arg = Some(&k.value),
            "value" => value_arg = Some(&k.value),
            other => return Err(fx.d().error(k.name.span, format!("unexpected keyword `{other}` of `R.Prim`"))),
        }
    }
    // A bare integer is an `int64` value, as TVM's `R.Prim(value=1)` (and as
    // `R.prim_value(1)`, so that `R.Prim(value=1)` is the type of `R.prim_value(1)`).
    let value = match value_arg {
        Some(v) => Some(match &v.kind {
            ExprKind::Str(s) => lower_quoted(fx, s, v.span)?,
            _ => match v.as_signed_int() {
                Some(n) => fx.f.pool.i64(n),
                None => lower_prim(fx, v)?,
            },
        }),
        None => None,
    };
    let dtype = match (dtype_arg, value) {
        (Some(d), _) => dtype_value(fx, d)?,
        (None, Some(v)) => fx.f.pool.dtype(v),
        (None, None) => return Err(fx.d().error(e.span, "`R.Prim` needs a dtype or a value")),
    };
    let value = match value {
        Some(v) if fx.f.pool.dtype(v) != dtype => Some(fx.f.pool.cast(dtype, v)),
        other => other,
    };
    Ok(TyData::Prim { dtype, value })
}

fn callable(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, c: Option<&ast::Call>, sig: bool) -> LResult<TyData> {
    let Some(c) = c else {
        let ret = fx.ty(TyData::Object);
        return Ok(TyData::Callable { params: None, ret, pure: false });
    };
    let mut params_arg = c.args.first();
    let mut ret_arg = c.args.get(1);
    let mut purity_arg = c.args.get(2);
    for k in &c.keywords {
        match k.name.name.as_str() {
            "params" => params_arg = Some(&k.value),
            "ret" => ret_arg = Some(&k.value),
            "purity" => purity_arg = Some(&k.value),
            "derive_func" => {}
            other => return Err(fx.d().error(k.name.span, format!("unexpected keyword `{other}` of `R.Callable`"))),
        }
    }
    let params = match params_arg {
        None => None,
        Some(p) if matches!(p.kind, ExprKind::None) => None,
        Some(p) => match p.as_sequence() {
            Some(items) => Some(items.iter().map(|i| lower_type(fx, i, sig)).collect::<LResult<Vec<_>>>()?),
            None => return Err(fx.d().error(p.span, "expected a tuple of parameter types")),
        },
    };
    let ret = match ret_arg {
        Some(r) => lower_type(fx, r, sig)?,
        None => fx.ty(TyData::Object),
    };
    let pure = match purity_arg {
        None => params.is_some(),
        Some(p) => match p.kind {
            ExprKind::Bool(b) => b,
            _ => return Err(fx.d().error(p.span, "expected `True` or `False`")),
        },
    };
    let _ = e;
    Ok(TyData::Callable { params, ret, pure })
}

/// A type outside any function (the type of an `R.ExternFunc` member), built in `pool`.
pub(crate) fn lower_standalone_type(cx: &mut ModuleCx<'_>, pool: &mut Pool, e: &ast::Expr) -> LResult<Ty> {
    let mut scratch = super::signature::empty_function();
    let ty = {
        let mut fx = FuncCx::new(cx, &mut scratch);
        lower_type(&mut fx, e, true)?
    };
    Ok(pool.import_ty(&scratch.pool, ty, &mut HashMap::new()))
}
