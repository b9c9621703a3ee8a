//! Relax expressions: leaves, tuples, item access, constants, tensor operator sugar, and
//! the flattening of nested calls into fresh bindings (A-normal form).

use relax_ir::{ConstData, ConstPayload, Constant, DataType, Expr, ExprData, PrimExpr, Ty, TyData};
use relax_ir::{OpId, ops};

use super::super::prim_expr::lower_prim;
use super::super::{LResult, Reported};
use super::{FuncCx, calls, infer};
use crate::ast::{self, BinOp, CmpOp, ExprKind, UnaryOp};

/// Lowers `e` to a leaf: a nested non-leaf value is bound to a fresh variable first.
pub(crate) fn leaf(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<Expr> {
    let v = value(fx, e, None)?;
    Ok(if fx.f.is_leaf(v) { v } else { fx.bind_fresh(v, e.span) })
}

/// What a name means in a Relax expression.
pub(crate) enum NameRef {
    /// A Relax variable.
    Var(relax_ir::Var),
    /// A module function.
    Global(relax_ir::Global),
    /// A symbolic variable (used as a value: `R.prim_value(n)`).
    Sym(relax_ir::SymVar),
}

/// Resolves a bare name: Relax variables first, then symbolic variables, then module
/// functions. An unknown name is undefined here, even in single-function text: see
/// [`resolve_callee`].
pub(crate) fn resolve_name(fx: &mut FuncCx<'_, '_>, name: &str) -> Option<NameRef> {
    if let Some(v) = fx.lookup_var(name) {
        return Some(NameRef::Var(v));
    }
    if let Some(s) = fx.syms.get(name) {
        return Some(NameRef::Sym(*s));
    }
    if let Some(g) = fx.cx.lookup(name) {
        return Some(NameRef::Global(g));
    }
    fx.sym(name).map(NameRef::Sym)
}

/// Resolves a name in a callee position: the function of a call `f(...)`, or the function
/// argument of `R.call_tir` and its kind, `R.call_dps_packed`, `R.call_pure_packed` (and the
/// other ops whose function parameter is a callee) and `R.make_closure`. Only there may an unknown name of single-function text (`Function.script()`)
/// be a module function that the text does not show; it becomes an unresolved global.
pub(crate) fn resolve_callee(fx: &mut FuncCx<'_, '_>, name: &str) -> Option<NameRef> {
    resolve_name(fx, name).or_else(|| fx.cx.global(name).map(NameRef::Global))
}

/// Lowers an expression in a callee position (see [`resolve_callee`]) to a leaf.
pub(crate) fn callee_leaf(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<Expr> {
    if let ExprKind::Name(n) = &e.kind
        && resolve_name(fx, n).is_none()
        && let Some(g) = fx.cx.global(n)
    {
        return Ok(global_ref(fx, g, e.span));
    }
    leaf(fx, e)
}

/// True when `e` is `cls.f` or `<ClassName>.f`; returns `f`.
pub(crate) fn global_attr(e: &ast::Expr) -> Option<&str> {
    let ExprKind::Attribute { value, attr } = &e.kind else { return None };
    let base = value.as_name()?;
    if base == "R" || base == "T" || base == "I" {
        return None;
    }
    Some(attr.name.as_str())
}

/// Lowers a binding value; `ann` is the binding's annotation, if any.
pub(crate) fn value(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, ann: Option<Ty>) -> LResult<Expr> {
    match &e.kind {
        ExprKind::Name(n) => match resolve_name(fx, n) {
            Some(NameRef::Var(v)) => {
                let ty = fx.f.vars[v].ty;
                if fx.f.pool.ty(ty).is_void() && !fx.is_dataflow_var(v, n) {
                    // TVM's normaliser replaces every use of a (non-dataflow) variable of
                    // the empty tuple type with `R.tuple()`, so `a = R.print(...)` prints
                    // as the statement `R.print(...)` and the uses of `a` as `R.tuple()`.
                    return Ok(fx.add(ExprData::Tuple(relax_ir::ExprList::new()), Some(ty), e.span));
                }
                Ok(fx.add(ExprData::Var(v), Some(ty), e.span))
            }
            Some(NameRef::Global(g)) => Ok(global_ref(fx, g, e.span)),
            Some(NameRef::Sym(s)) => {
                let p = fx.f.pool.var_ref(s);
                Ok(prim_value(fx, p, e.span))
            }
            None => {
                let mut d = relax_ir::Diagnostic::error(fx.span(e.span), format!("undefined variable `{n}`"));
                if let Some(&def) = fx.dataflow_locals.get(n.as_str()) {
                    d = d.with_secondary(def, "defined here, inside a dataflow block").with_note(format!(
                        "`{n}` is local to its dataflow block; list it in `R.output(...)` to use it after the block"
                    ));
                }
                Err(fx.d().push(d))
            }
        },
        ExprKind::Attribute { .. } => {
            if let Some(f) = global_attr(e) {
                return match fx.cx.global(f) {
                    Some(g) => Ok(global_ref(fx, g, e.span)),
                    None => Err(fx.d().error(e.span, format!("module has no function `{f}`"))),
                };
            }
            Err(fx
                .d()
                .error(e.span, format!("expected a Relax value, found `{}`", e.dotted_name().unwrap_or_default())))
        }
        ExprKind::Int(_) | ExprKind::Unary { op: UnaryOp::Neg, .. } if e.as_signed_int().is_some() => {
            let v = e.as_signed_int().unwrap_or_default();
            let p = fx.f.pool.i64(v);
            Ok(prim_value(fx, p, e.span))
        }
        ExprKind::Int(_) => Err(fx.d().error(e.span, "integer literal does not fit in int64")),
        ExprKind::Float(_) | ExprKind::Bool(_) => {
            let p = lower_prim(fx, e)?;
            Ok(prim_value(fx, p, e.span))
        }
        ExprKind::Str(s) => {
            let ty = fx.ty(TyData::Object);
            Ok(fx.add(ExprData::Str(s.clone()), Some(ty), e.span))
        }
        ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => tuple(fx, elts, e.span),
        ExprKind::Subscript { value: base, index } => {
            if let Some(c) = metadata_ref(fx, e)? {
                return Ok(constant_expr(fx, c, ann, e.span));
            }
            let [idx] = index.as_slice() else {
                return Err(fx.d().error(e.span, "a tuple is indexed with one integer"));
            };
            let Some(i) = idx.as_signed_int().and_then(|i| u32::try_from(i).ok()) else {
                return Err(fx.d().error(idx.span, "a tuple index must be a non-negative integer"));
            };
            let t = leaf(fx, base)?;
            let ty = infer::item_type(fx, t, i);
            Ok(fx.add(ExprData::GetItem { tuple: t, index: i }, ty, e.span))
        }
        ExprKind::Call(call) => calls::lower_call(fx, e, call, ann),
        ExprKind::Binary { .. } | ExprKind::Unary { .. } | ExprKind::Compare { .. } => {
            if mentions_relax_var(fx, e) {
                operator_sugar(fx, e)
            } else {
                let p = lower_prim(fx, e)?;
                Ok(prim_value(fx, p, e.span))
            }
        }
        _ => Err(fx.d().error(e.span, format!("expected a Relax value, found {}", e.describe()))),
    }
}

fn global_ref(fx: &mut FuncCx<'_, '_>, g: relax_ir::Global, span: ast::Span) -> Expr {
    let ty = infer::global_type(fx, g);
    fx.add(ExprData::Global(g), ty, span)
}

/// `R.prim_value(p)` typed `R.Prim(value=p)`.
pub(crate) fn prim_value(fx: &mut FuncCx<'_, '_>, p: PrimExpr, span: ast::Span) -> Expr {
    let dtype = fx.f.pool.dtype(p);
    let ty = fx.ty(TyData::Prim { dtype, value: Some(p) });
    fx.add(ExprData::Prim(p), Some(ty), span)
}

/// A tuple of leaves.
pub(crate) fn tuple(fx: &mut FuncCx<'_, '_>, elts: &[ast::Expr], span: ast::Span) -> LResult<Expr> {
    let mut fields = Vec::with_capacity(elts.len());
    for el in elts {
        fields.push(leaf(fx, el)?);
    }
    let tys: Vec<Ty> = fields.iter().map(|&f| super::ty_or_object(fx, f)).collect();
    let ty = fx.ty(TyData::Tuple(tys));
    let fields = fx.f.new_list(fields);
    Ok(fx.add(ExprData::Tuple(fields), Some(ty), span))
}

fn mentions_relax_var(fx: &FuncCx<'_, '_>, e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => fx.lookup_var(n).is_some(),
        ExprKind::Binary { lhs, rhs, .. } => mentions_relax_var(fx, lhs) || mentions_relax_var(fx, rhs),
        ExprKind::Unary { operand, .. } => mentions_relax_var(fx, operand),
        ExprKind::Compare { first, rest } => {
            mentions_relax_var(fx, first) || rest.iter().any(|(_, r)| mentions_relax_var(fx, r))
        }
        ExprKind::Call(_) | ExprKind::Subscript { .. } => true,
        _ => false,
    }
}

/// `a + b` on tensors means `R.add(a, b)` (hand-written input only; never printed).
fn operator_sugar(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<Expr> {
    let (op, operands): (OpId, Vec<&ast::Expr>) = match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            let name = match op {
                BinOp::Add => ops::ADD,
                BinOp::Sub => ops::SUBTRACT,
                BinOp::Mul => ops::MULTIPLY,
                BinOp::Div => ops::DIVIDE,
                BinOp::FloorDiv => ops::FLOOR_DIVIDE,
                BinOp::Mod => ops::FLOOR_MOD,
                BinOp::Pow => ops::POWER,
                BinOp::MatMul => ops::MATMUL,
                BinOp::BitAnd => ops::BITWISE_AND,
                BinOp::BitOr => ops::BITWISE_OR,
                BinOp::BitXor => ops::BITWISE_XOR,
                BinOp::LShift => ops::LEFT_SHIFT,
                BinOp::RShift => ops::RIGHT_SHIFT,
            };
            (name, vec![lhs, rhs])
        }
        ExprKind::Unary { op: UnaryOp::Neg, operand } => (ops::NEGATIVE, vec![operand]),
        ExprKind::Unary { op: UnaryOp::Not, operand } => (ops::LOGICAL_NOT, vec![operand]),
        ExprKind::Unary { op: UnaryOp::Invert, operand } => (ops::BITWISE_NOT, vec![operand]),
        ExprKind::Unary { op: UnaryOp::Pos, operand } => return value(fx, operand, None),
        ExprKind::Compare { first, rest } if rest.len() == 1 => {
            let name = match rest[0].0 {
                CmpOp::Eq => ops::EQUAL,
                CmpOp::NotEq => ops::NOT_EQUAL,
                CmpOp::Lt => ops::LESS,
                CmpOp::LtE => ops::LESS_EQUAL,
                CmpOp::Gt => ops::GREATER,
                CmpOp::GtE => ops::GREATER_EQUAL,
                other => return Err(fx.d().error(e.span, format!("operator `{other}` is not defined on tensors"))),
            };
            (name, vec![first, &rest[0].1])
        }
        _ => return Err(fx.d().error(e.span, "chained comparisons are not defined on tensors")),
    };
    let mut args = Vec::with_capacity(operands.len());
    for o in operands {
        // TVM's operators on Relax values take no Python numbers (`b * 2.0`).
        if let Some(text) = python_number(o) {
            return Err(fx.d().error(
                o.span,
                format!("Please convert {text} with `const` first: write `R.const({text}, \"DTYPE\")` (TVM rejects a Python number beside a Relax value)"),
            ));
        }
        args.push(leaf(fx, o)?);
    }
    calls::op_call(fx, relax_ir::op::OpRef::Known(op), args, relax_ir::Attrs::new(), Vec::new(), e.span)
}

/// The literal of a Python number operand (`2`, `2.0`, `-1`), if it is one.
fn python_number(e: &ast::Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Int(v) => Some(v.to_string()),
        ExprKind::Float(v) => Some(format!("{v:?}")),
        ExprKind::Unary { op: UnaryOp::Neg, operand } => python_number(operand).map(|t| format!("-{t}")),
        _ => None,
    }
}

/// `metadata["key"][i]`: the constant it names, created on first reference.
fn metadata_ref(fx: &mut FuncCx<'_, '_>, e: &ast::Expr) -> LResult<Option<Constant>> {
    let ExprKind::Subscript { value: inner, index } = &e.kind else { return Ok(None) };
    if inner.as_name() == Some("metadata") && fx.lookup_var("metadata").is_none() {
        // `metadata["KEY"]` without its index.
        return Err(fx.d().error(e.span, "expected `metadata[\"KEY\"][INDEX]`"));
    }
    let ExprKind::Subscript { value: base, index: key } = &inner.kind else { return Ok(None) };
    if base.as_name() != Some("metadata") {
        return Ok(None);
    }
    let (Some(k), [i]) = (key.first().and_then(|k| k.as_str()), index.as_slice()) else {
        return Err(fx.d().error(e.span, "expected `metadata[\"KEY\"][INDEX]`"));
    };
    let Some(i) = i.as_signed_int().and_then(|i| u32::try_from(i).ok()) else {
        return Err(fx.d().error(e.span, "a metadata index must be a non-negative integer"));
    };
    // TVM HEAD spells the key `ir.GenericConst`; both name the same table.
    let key = if k == "ir.GenericConst" { "relax.expr.Constant" } else { k };
    if let Some(&c) = fx.cx.constants.get(&(key.to_string(), i)) {
        return Ok(Some(c));
    }
    let data = fx.cx.metadata.get(key, i).cloned().or_else(|| fx.cx.metadata.get(k, i).cloned());
    let data = data.unwrap_or(ConstData { dtype: DataType::VOID, shape: None, payload: ConstPayload::Opaque });
    let c = fx.cx.module.constants.push(data);
    fx.cx.constants.insert((key.to_string(), i), c);
    Ok(Some(c))
}

/// An expression for a constant: typed by its data, or by the annotation when opaque.
pub(crate) fn constant_expr(fx: &mut FuncCx<'_, '_>, c: Constant, ann: Option<Ty>, span: ast::Span) -> Expr {
    let data = fx.cx.module.constants[c].clone();
    let ty = match (&data.payload, &data.shape) {
        (ConstPayload::Data(_), Some(shape)) => {
            let dims = shape.iter().map(|&d| fx.f.pool.i64(d)).collect();
            Some(fx.ty(TyData::tensor(dims, data.dtype)))
        }
        // An opaque constant outside a binding's right-hand side (a call argument): what
        // an earlier annotation said about it, or else a tensor of unknown shape.
        _ if ann.is_none() => Some(match &data.shape {
            Some(shape) if !data.dtype.is_void() => {
                let dims = shape.iter().map(|&d| fx.f.pool.i64(d)).collect();
                fx.ty(TyData::tensor(dims, data.dtype))
            }
            _ => fx.ty(TyData::tensor_ndim(-1, DataType::VOID)),
        }),
        _ => ann,
    };
    if let (Some(t), ConstPayload::Opaque) = (ty, &data.payload) {
        // Remember what the annotation says about an opaque constant's dtype and shape.
        let td = fx.f.pool.ty(t).clone();
        if let TyData::Tensor { dtype, .. } = td {
            let shape = td.dims().and_then(|d| d.iter().map(|&x| fx.f.pool.as_int(x)).collect::<Option<Vec<_>>>());
            let cd = &mut fx.cx.module.constants[c];
            if cd.dtype.is_void() {
                cd.dtype = dtype;
                cd.shape = shape;
            }
        }
    }
    fx.add(ExprData::Const(c), ty, span)
}

/// `R.const(value, dtype)`: a scalar, or a (nested) list of numbers.
pub(crate) fn r_const(fx: &mut FuncCx<'_, '_>, e: &ast::Expr, call: &ast::Call) -> LResult<Expr> {
    let Some(v) = call.args.first().or_else(|| call.keyword("value")) else {
        return Err(fx.d().error(e.span, "`R.const` needs a value"));
    };
    let dtype_arg = call.args.get(1).or_else(|| call.keyword("dtype"));
    const_of(fx, v, dtype_arg, e.span)
}

/// True for a number or bool literal (`1`, `-2.5`, `True`).
pub(crate) fn is_number_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => true,
        ExprKind::Unary { op: UnaryOp::Neg, operand } => matches!(operand.kind, ExprKind::Int(_) | ExprKind::Float(_)),
        _ => false,
    }
}

/// `R.const(v[, dtype])` for the value expression `v`: a number, or nested lists of them.
/// Without a dtype, integers are int32, bools bool and anything else float32 (as TVM's
/// `R.const`, which is also what a bare number bound to a name means, `a = 1`).
pub(crate) fn const_of(
    fx: &mut FuncCx<'_, '_>,
    v: &ast::Expr,
    dtype_arg: Option<&ast::Expr>,
    span: ast::Span,
) -> LResult<Expr> {
    let mut flat = Vec::new();
    let mut shape = Vec::new();
    flatten_numbers(fx, v, 0, &mut flat, &mut shape)?;
    let dtype = match dtype_arg {
        Some(d) => super::types::dtype_value(fx, d)?,
        None => {
            if flat.iter().all(|n| matches!(n, Num::Int(_))) {
                DataType::INT32
            } else if flat.iter().all(|n| matches!(n, Num::Bool(_))) {
                DataType::BOOL
            } else {
                DataType::FLOAT32
            }
        }
    };
    if dtype.is_void() || dtype.is_handle() || dtype.lanes > 1 {
        return Err(fx.d().error(span, format!("cannot make a constant of type `{dtype}`")));
    }
    if dtype.is_int() {
        for n in &flat {
            if let Num::Int(i) = *n
                && relax_ir::prim::int_literal_value(dtype, i128::from(i)).is_none()
            {
                return Err(fx.d().error(v.span, format!("integer `{i}` is out of range for `{dtype}`")));
            }
        }
    }
    let mut bytes = Vec::with_capacity(flat.len() * dtype.bytes() as usize);
    for n in &flat {
        encode(dtype, *n, &mut bytes);
    }
    let c = fx.cx.module.constants.push(ConstData { dtype, shape: Some(shape), payload: ConstPayload::Data(bytes) });
    Ok(constant_expr(fx, c, None, span))
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
    Bool(bool),
}

fn flatten_numbers(
    fx: &mut FuncCx<'_, '_>,
    e: &ast::Expr,
    depth: usize,
    out: &mut Vec<Num>,
    shape: &mut Vec<i64>,
) -> LResult<()> {
    if let Some(items) = e.as_sequence() {
        if shape.len() == depth {
            shape.push(items.len() as i64);
        } else if shape.get(depth) != Some(&(items.len() as i64)) {
            return Err(fx.d().error(e.span, "ragged nested lists cannot form a tensor"));
        }
        for i in items {
            flatten_numbers(fx, i, depth + 1, out, shape)?;
        }
        return Ok(());
    }
    if shape.len() > depth {
        return Err(fx.d().error(e.span, "ragged nested lists cannot form a tensor"));
    }
    let n = if let Some(i) = e.as_signed_int() {
        Num::Int(i)
    } else {
        match &e.kind {
            ExprKind::Float(f) => Num::Float(*f),
            ExprKind::Bool(b) => Num::Bool(*b),
            // TVM prints non-finite scalars as strings: `R.const("inf", "float32")`.
            ExprKind::Str(t) if matches!(t.as_str(), "inf" | "-inf" | "nan" | "-nan") => Num::Float(match t.as_str() {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                _ => -f64::NAN,
            }),
            ExprKind::Unary { op: UnaryOp::Neg, operand } if matches!(operand.kind, ExprKind::Float(_)) => {
                let ExprKind::Float(f) = operand.kind else { return Err(Reported) };
                Num::Float(-f)
            }
            ExprKind::Int(_) => return Err(fx.d().error(e.span, "integer literal does not fit in int64")),
            ExprKind::Unary { op: UnaryOp::Neg, operand } if matches!(operand.kind, ExprKind::Int(_)) => {
                return Err(fx.d().error(e.span, "integer literal does not fit in int64"));
            }
            _ => return Err(fx.d().error(e.span, format!("expected a number, found {}", e.describe()))),
        }
    };
    out.push(n);
    Ok(())
}

fn encode(dtype: DataType, n: Num, out: &mut Vec<u8>) {
    let f = match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
        Num::Bool(b) => f64::from(u8::from(b)),
    };
    let i = match n {
        Num::Int(i) => i,
        Num::Float(f) => f as i64,
        Num::Bool(b) => i64::from(b),
    };
    let bytes = dtype.bytes() as usize;
    if dtype.is_float() {
        match (dtype.code, dtype.bits) {
            (relax_ir::TypeCode::Float, 64) => out.extend_from_slice(&f.to_le_bytes()),
            (relax_ir::TypeCode::Float, 32) => out.extend_from_slice(&(f as f32).to_le_bytes()),
            (relax_ir::TypeCode::Float, 16) => out.extend_from_slice(&f16_bits(f).to_le_bytes()),
            (relax_ir::TypeCode::BFloat, 16) => {
                let r = relax_ir::prim::round_to_dtype(dtype, f) as f32;
                out.extend_from_slice(&((r.to_bits() >> 16) as u16).to_le_bytes());
            }
            _ => out.extend(std::iter::repeat_n(0u8, bytes)),
        }
    } else if dtype.is_bool() {
        out.push(u8::from(i != 0));
    } else {
        out.extend_from_slice(&i.to_le_bytes()[..bytes.min(8)]);
    }
}

/// The IEEE half-precision bits of `v` (rounded to nearest even).
pub(crate) fn f16_bits(v: f64) -> u16 {
    let r = relax_ir::prim::round_to_dtype(DataType::FLOAT16, v);
    let sign: u16 = if r.is_sign_negative() { 0x8000 } else { 0 };
    let a = r.abs();
    if a.is_nan() {
        return 0x7e00;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    let e = a.log2().floor() as i32;
    if e < -14 {
        return sign | (a / 2f64.powi(-24)).round() as u16;
    }
    let mant = ((a / 2f64.powi(e) - 1.0) * 1024.0).round() as u16;
    sign | (((e + 15) as u16) << 10) | mant
}
