//! Attribute values written in the text: `{"op_pattern": 0, "tirx.noalias": True}`,
//! `axes=[-1]`, `T.target({...})`, `T.bool(True)`.

use relax_ir::DataType;
use relax_ir::attrs::{AttrValue, Attrs, FloatBits};

use super::{Diags, LResult};
use crate::ast::{self, ExprKind, UnaryOp};

/// Lowers an attribute value.
pub(crate) fn lower_attr_value(d: &mut Diags, e: &ast::Expr) -> LResult<AttrValue> {
    Ok(match &e.kind {
        ExprKind::None => AttrValue::None,
        ExprKind::Bool(b) => AttrValue::Bool(*b),
        ExprKind::Int(_) | ExprKind::Unary { op: UnaryOp::Neg, .. } if e.as_signed_int().is_some() => {
            AttrValue::Int(e.as_signed_int().unwrap_or_default())
        }
        ExprKind::Float(f) => AttrValue::Float(FloatBits::new(*f)),
        ExprKind::Unary { op: UnaryOp::Neg, operand } if matches!(operand.kind, ExprKind::Float(_)) => {
            let ExprKind::Float(f) = operand.kind else { unreachable!("checked by the guard") };
            AttrValue::Float(FloatBits::new(-f))
        }
        ExprKind::Str(s) => AttrValue::Str(s.clone()),
        ExprKind::List(items) | ExprKind::Tuple { elts: items, .. } => {
            AttrValue::List(items.iter().map(|i| lower_attr_value(d, i)).collect::<LResult<_>>()?)
        }
        ExprKind::Dict(pairs) => AttrValue::Dict(lower_dict(d, pairs)?),
        ExprKind::Call(call) => {
            let name = call.func.dotted_name().unwrap_or_default();
            match name.as_str() {
                "T.target" | "tvm.target.Target" => {
                    let [arg] = call.args.as_slice() else {
                        return Err(d.error(e.span, "`T.target` takes one argument"));
                    };
                    AttrValue::Target(Box::new(lower_attr_value(d, arg)?))
                }
                "T.bool" => match call.args.as_slice() {
                    [a] if matches!(a.kind, ExprKind::Bool(_)) => {
                        let ExprKind::Bool(b) = a.kind else { unreachable!("checked by the guard") };
                        AttrValue::Bool(b)
                    }
                    _ => return Err(d.error(e.span, "expected `T.bool(True)` or `T.bool(False)`")),
                },
                _ => match name.strip_prefix("T.").and_then(DataType::parse) {
                    Some(dt) if call.args.len() == 1 => typed_literal(d, dt, &call.args[0])?,
                    _ => return Err(d.error(e.span, format!("expected an attribute value, found {}", e.describe()))),
                },
            }
        }
        _ => return Err(d.error(e.span, format!("expected an attribute value, found {}", e.describe()))),
    })
}

fn typed_literal(d: &mut Diags, dt: DataType, arg: &ast::Expr) -> LResult<AttrValue> {
    if let Some(v) = arg.as_signed_int() {
        return Ok(if dt.is_float() {
            AttrValue::PrimFloat(dt, FloatBits::new(v as f64))
        } else if dt.is_bool() {
            AttrValue::Bool(v != 0)
        } else {
            AttrValue::PrimInt(dt, v)
        });
    }
    let f = match &arg.kind {
        ExprKind::Float(f) => *f,
        ExprKind::Unary { op: UnaryOp::Neg, operand } => match operand.kind {
            ExprKind::Float(f) => -f,
            _ => return Err(d.error(arg.span, "expected a literal")),
        },
        ExprKind::Bool(b) if dt.is_bool() => return Ok(AttrValue::Bool(*b)),
        _ => return Err(d.error(arg.span, "expected a literal")),
    };
    if !dt.is_float() {
        return Err(d.error(arg.span, format!("expected an integer literal for `{dt}`")));
    }
    Ok(AttrValue::PrimFloat(dt, FloatBits::new(f)))
}

fn lower_dict(d: &mut Diags, pairs: &[(ast::Expr, ast::Expr)]) -> LResult<Vec<(String, AttrValue)>> {
    let mut out = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let key = match &k.kind {
            ExprKind::Str(s) => s.clone(),
            _ => return Err(d.error(k.span, format!("expected a string key, found {}", k.describe()))),
        };
        out.push((key, lower_attr_value(d, v)?));
    }
    Ok(out)
}

/// Lowers a `{...}` dict of function attributes (`R.func_attr`, `T.func_attr`,
/// `I.module_attrs`).
pub(crate) fn lower_attr_dict(d: &mut Diags, e: &ast::Expr) -> LResult<Attrs> {
    match &e.kind {
        ExprKind::Dict(pairs) => Ok(Attrs(lower_dict(d, pairs)?)),
        _ => Err(d.error(e.span, format!("expected a dict of attributes, found {}", e.describe()))),
    }
}

/// The classic spellings of attribute keys and values, normalised (`text-format.md` §14):
/// `tir.noalias` → `tirx.noalias`, `T.bool(True)` → `True`, `"Primitive": 1` → `True`.
pub(crate) fn normalize_func_attrs(attrs: &mut Attrs) {
    for (k, v) in attrs.0.iter_mut() {
        if let Some(rest) = k.strip_prefix("tir.")
            && matches!(rest, "noalias" | "is_scheduled" | "is_host_func" | "is_entry_func" | "is_global_func")
        {
            *k = format!("tirx.{rest}");
        }
        if k == "Primitive" && matches!(v, AttrValue::Int(1)) {
            *v = AttrValue::Bool(true);
        }
    }
}
