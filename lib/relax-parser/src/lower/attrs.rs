//! Attribute values written in the text: `{"op_pattern": 0, "tirx.noalias": True}`,
//! `axes=[-1]`, `T.target({...})`, `T.bool(True)`.

use relax_ir::attrs::{AttrValue, Attrs, FloatBits};
use relax_ir::{Buffer, DataType};

use super::{Diags, LResult};
use crate::ast::{self, BinOp, ExprKind, UnaryOp};

/// Lowers an attribute value.
pub(crate) fn lower_attr_value(d: &mut Diags, e: &ast::Expr) -> LResult<AttrValue> {
    lower_value(d, e, &mut |_| None)
}

/// Resolves a bare name to a buffer of the enclosing PrimFunc (block annotations).
pub(crate) type BufferNames<'a> = &'a mut dyn FnMut(&str) -> Option<Buffer>;

fn lower_value(d: &mut Diags, e: &ast::Expr, buffers: BufferNames<'_>) -> LResult<AttrValue> {
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
            AttrValue::List(items.iter().map(|i| lower_value(d, i, buffers)).collect::<LResult<_>>()?)
        }
        ExprKind::Dict(pairs) => AttrValue::Dict(lower_dict(d, pairs, buffers)?),
        ExprKind::Name(n) if let Some(b) = buffers(n) => AttrValue::Buffer(b),
        ExprKind::Call(call) => {
            let name = call.func.dotted_name().unwrap_or_default();
            match name.as_str() {
                "T.target" | "tvm.target.Target" => {
                    let [arg] = call.args.as_slice() else {
                        return Err(d.error(e.span, "`T.target` takes one argument"));
                    };
                    AttrValue::Target(Box::new(lower_attr_value(d, arg)?))
                }
                // Objects the IR does not model print back as the text TVM wrote.
                "T.index_map" | "R.prim_value" | "R.shape" => AttrValue::Text(unparse(e)),
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

fn lower_dict(
    d: &mut Diags,
    pairs: &[(ast::Expr, ast::Expr)],
    buffers: BufferNames<'_>,
) -> LResult<Vec<(String, AttrValue)>> {
    let mut out = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let key = match &k.kind {
            ExprKind::Str(s) => s.clone(),
            _ => return Err(d.error(k.span, format!("expected a string key, found {}", k.describe()))),
        };
        out.push((key, lower_value(d, v, buffers)?));
    }
    Ok(out)
}

/// Lowers a `{...}` dict of function attributes (`R.func_attr`, `T.func_attr`,
/// `I.module_attrs`).
pub(crate) fn lower_attr_dict(d: &mut Diags, e: &ast::Expr) -> LResult<Attrs> {
    lower_attr_dict_in(d, e, &mut |_| None)
}

/// Lowers a dict of block annotations, where a bare name is a buffer of the PrimFunc
/// (`T.sblock_attr({"layout_free_placeholders": [B]})`).
pub(crate) fn lower_attr_dict_in(d: &mut Diags, e: &ast::Expr, buffers: BufferNames<'_>) -> LResult<Attrs> {
    match &e.kind {
        ExprKind::Dict(pairs) => Ok(Attrs(lower_dict(d, pairs, buffers)?)),
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

/// The canonical text of an expression, as TVM's printer writes it: single spaces around
/// binary operators, `, ` between items, parentheses only where precedence needs them
/// (the right operand of an operator of equal precedence included).
pub(crate) fn unparse(e: &ast::Expr) -> String {
    let mut out = String::new();
    unparse_into(&mut out, e, 0);
    out
}

/// Python precedence, loosest first.
fn precedence(e: &ast::Expr) -> u8 {
    match &e.kind {
        ExprKind::Lambda { .. } => 1,
        ExprKind::IfExp { .. } => 2,
        ExprKind::BoolOp { op: ast::BoolOp::Or, .. } => 3,
        ExprKind::BoolOp { op: ast::BoolOp::And, .. } => 4,
        ExprKind::Unary { op: UnaryOp::Not, .. } => 5,
        ExprKind::Compare { .. } => 6,
        ExprKind::Binary { op, .. } => match op {
            BinOp::BitOr => 7,
            BinOp::BitXor => 8,
            BinOp::BitAnd => 9,
            BinOp::LShift | BinOp::RShift => 10,
            BinOp::Add | BinOp::Sub => 11,
            BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod | BinOp::MatMul => 12,
            BinOp::Pow => 14,
        },
        ExprKind::Unary { .. } => 13,
        _ => 15,
    }
}

fn unparse_child(out: &mut String, e: &ast::Expr, min: u8) {
    if precedence(e) < min {
        out.push('(');
        unparse_into(out, e, 0);
        out.push(')');
    } else {
        unparse_into(out, e, 0);
    }
}

fn unparse_list(out: &mut String, items: &[ast::Expr]) {
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        unparse_into(out, it, 0);
    }
}

fn unparse_into(out: &mut String, e: &ast::Expr, depth: u32) {
    if depth > 256 {
        out.push_str("...");
        return;
    }
    let p = precedence(e);
    match &e.kind {
        ExprKind::Name(n) => out.push_str(n),
        ExprKind::Int(v) => out.push_str(&v.to_string()),
        ExprKind::Float(f) => out.push_str(&relax_ir::printer::literals::float_number(*f)),
        ExprKind::Str(s) => relax_ir::printer::literals::write_quoted(out, s),
        ExprKind::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        ExprKind::None => out.push_str("None"),
        ExprKind::Attribute { value, attr } => {
            unparse_child(out, value, 15);
            out.push('.');
            out.push_str(&attr.name);
        }
        ExprKind::Call(call) => {
            unparse_child(out, &call.func, 15);
            out.push('(');
            unparse_list(out, &call.args);
            for (i, k) in call.keywords.iter().enumerate() {
                if i > 0 || !call.args.is_empty() {
                    out.push_str(", ");
                }
                out.push_str(&k.name.name);
                out.push('=');
                unparse_into(out, &k.value, depth + 1);
            }
            out.push(')');
        }
        ExprKind::Subscript { value, index } => {
            unparse_child(out, value, 15);
            out.push('[');
            unparse_list(out, index);
            out.push(']');
        }
        ExprKind::Slice { lower, upper, step } => {
            if let Some(l) = lower {
                unparse_into(out, l, depth + 1);
            }
            out.push(':');
            if let Some(u) = upper {
                unparse_into(out, u, depth + 1);
            }
            if let Some(st) = step {
                out.push(':');
                unparse_into(out, st, depth + 1);
            }
        }
        ExprKind::Tuple { elts, parenthesized } => {
            if *parenthesized || elts.len() < 2 {
                out.push('(');
            }
            unparse_list(out, elts);
            if elts.len() == 1 {
                out.push(',');
            }
            if *parenthesized || elts.len() < 2 {
                out.push(')');
            }
        }
        ExprKind::List(items) => {
            out.push('[');
            unparse_list(out, items);
            out.push(']');
        }
        ExprKind::Set(items) => {
            out.push('{');
            unparse_list(out, items);
            out.push('}');
        }
        ExprKind::Dict(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                unparse_into(out, k, depth + 1);
                out.push_str(": ");
                unparse_into(out, v, depth + 1);
            }
            out.push('}');
        }
        ExprKind::Unary { op, operand } => {
            out.push_str(op.as_str());
            if *op == UnaryOp::Not {
                out.push(' ');
            }
            unparse_child(out, operand, p);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            // `**` binds to the right; every other operator to the left.
            let (l, r) = if *op == BinOp::Pow { (p + 1, p) } else { (p, p + 1) };
            unparse_child(out, lhs, l);
            out.push(' ');
            out.push_str(op.as_str());
            out.push(' ');
            unparse_child(out, rhs, r);
        }
        ExprKind::BoolOp { op, lhs, rhs } => {
            unparse_child(out, lhs, p);
            out.push(' ');
            out.push_str(op.as_str());
            out.push(' ');
            unparse_child(out, rhs, p + 1);
        }
        ExprKind::Compare { first, rest } => {
            unparse_child(out, first, p + 1);
            for (op, r) in rest {
                out.push(' ');
                out.push_str(op.as_str());
                out.push(' ');
                unparse_child(out, r, p + 1);
            }
        }
        ExprKind::IfExp { test, body, orelse } => {
            unparse_child(out, body, p + 1);
            out.push_str(" if ");
            unparse_child(out, test, p + 1);
            out.push_str(" else ");
            unparse_child(out, orelse, p);
        }
        ExprKind::Lambda { params, body } => {
            out.push_str("lambda");
            for (i, prm) in params.iter().enumerate() {
                out.push_str(if i == 0 { " " } else { ", " });
                out.push_str(&prm.name);
            }
            out.push_str(": ");
            unparse_into(out, body, depth + 1);
        }
    }
}
