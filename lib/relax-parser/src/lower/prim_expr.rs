//! TIR expressions from the syntax tree, shared by Relax shapes and PrimFunc bodies.
//!
//! Infix text means "call TVM's operator constructor" ([`relax_ir::prim_build`]): dtypes
//! are matched and constants folded, so `n + 1` with `n: int64` reads as
//! `n + T.int64(1)`. The explicit spellings (`T.Add(a, b)`, `T.Cast(...)`) build exactly
//! the node they name.

use relax_ir::attrs::FloatBits;
use relax_ir::prim_build::TypeMismatch;
use relax_ir::printer::intrinsics::{DtypeLoc, tir_call_spelling, tir_op_for_spelling};
use relax_ir::{BinOp, Buffer, DataType, Pool, PrimExpr, PrimExprData, SymVar};
use relax_ir::{Intrinsic, TirOp};

use super::{Diags, LResult};
use crate::ast::{self, BoolOp, CmpOp, ExprKind, UnaryOp};

/// What a name means inside a TIR expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrimName {
    /// A scalar variable.
    Var(SymVar),
    /// A buffer (only subscripts of it are expressions).
    Buffer(Buffer),
}

/// The environment of TIR expression lowering.
pub(crate) trait PrimScope {
    /// The function's pool.
    fn pool(&mut self) -> &mut Pool;
    /// The diagnostics list.
    fn diags(&mut self) -> &mut Diags;
    /// What `name` refers to here, if anything. May create a variable on demand (HEAD
    /// TypeVars).
    fn lookup(&mut self, name: &str) -> Option<PrimName>;
    /// The element type and rank of a buffer.
    fn buffer_info(&self, b: Buffer) -> (DataType, usize);
    /// Lowers `A.data` and other attribute accesses (lowered TIR); `None` if unsupported.
    fn attribute(&mut self, e: &ast::Expr) -> Option<LResult<PrimExpr>> {
        let _ = e;
        None
    }
}

/// The keywords a declaration `n = T.int64(...)` may take: none, or TVM's
/// `is_size_var=True|False` (a `SizeVar`); `Some(is_size_var)` when they are such.
pub(crate) fn declaration_keywords(call: &ast::Call) -> Option<bool> {
    match call.keywords.as_slice() {
        [] => Some(false),
        [k] if k.name.name == "is_size_var" => match k.value.kind {
            ast::ExprKind::Bool(b) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// The dtype named by a `T.<name>` spelling (`T.int64`, `T.float32`, `T.bool`).
pub(crate) fn t_dtype(dotted: &str) -> Option<DataType> {
    DataType::parse(dotted.strip_prefix("T.")?)
}

/// Lowers a TIR expression.
pub(crate) fn lower_prim(s: &mut impl PrimScope, e: &ast::Expr) -> LResult<PrimExpr> {
    match &e.kind {
        ExprKind::Name(n) => match s.lookup(n) {
            Some(PrimName::Var(v)) => Ok(s.pool().var_ref(v)),
            Some(PrimName::Buffer(_)) => Err(s.diags().error(e.span, format!("buffer `{n}` is not a scalar value"))),
            None => Err(s.diags().error(e.span, format!("undefined variable `{n}`"))),
        },
        ExprKind::Int(v) => int_literal(s, e.span, *v, false),
        ExprKind::Float(f) => Ok(s.pool().float(DataType::FLOAT32, *f)),
        ExprKind::Bool(b) => Ok(s.pool().bool_const(*b)),
        ExprKind::Str(text) => Ok(s.pool().raw(PrimExprData::Str(text.clone()))),
        ExprKind::Unary { op, operand } => {
            if *op == UnaryOp::Neg
                && let ExprKind::Int(v) = operand.kind
            {
                return int_literal(s, e.span, v, true);
            }
            let a = lower_prim(s, operand)?;
            Ok(match op {
                UnaryOp::Neg => s.pool().neg(a),
                UnaryOp::Pos => a,
                UnaryOp::Not => s.pool().not(a),
                UnaryOp::Invert => {
                    let dtype = s.pool().dtype(a);
                    s.pool().raw(PrimExprData::Call { dtype, op: Intrinsic::BitwiseNot.into(), args: vec![a] })
                }
            })
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let a = lower_prim(s, lhs)?;
            let b = lower_prim(s, rhs)?;
            let bin = match op {
                ast::BinOp::Add => BinOp::Add,
                ast::BinOp::Sub => BinOp::Sub,
                ast::BinOp::Mul => BinOp::Mul,
                ast::BinOp::Div => BinOp::Div,
                ast::BinOp::FloorDiv => BinOp::FloorDiv,
                ast::BinOp::Mod => BinOp::FloorMod,
                other => {
                    let name = match other {
                        ast::BinOp::Pow => "tir.pow",
                        ast::BinOp::BitAnd => "tir.bitwise_and",
                        ast::BinOp::BitOr => "tir.bitwise_or",
                        ast::BinOp::BitXor => "tir.bitwise_xor",
                        ast::BinOp::LShift => "tir.shift_left",
                        ast::BinOp::RShift => "tir.shift_right",
                        _ => {
                            return Err(s.diags().error(e.span, format!("operator `{other}` is not supported in TIR")));
                        }
                    };
                    let (a, b) = matched(s, e.span, a, b)?;
                    let dtype = s.pool().dtype(a);
                    return Ok(s.pool().raw(PrimExprData::Call {
                        dtype,
                        op: TirOp::from_name(name),
                        args: vec![a, b],
                    }));
                }
            };
            binary(s, e.span, bin, a, b)
        }
        ExprKind::BoolOp { op, lhs, rhs } => {
            let a = lower_prim(s, lhs)?;
            let b = lower_prim(s, rhs)?;
            binary(s, e.span, if *op == BoolOp::And { BinOp::And } else { BinOp::Or }, a, b)
        }
        ExprKind::Compare { first, rest } => {
            let mut left = lower_prim(s, first)?;
            let mut acc: Option<PrimExpr> = None;
            for (op, right) in rest {
                let r = lower_prim(s, right)?;
                let bin = match op {
                    CmpOp::Eq => BinOp::Eq,
                    CmpOp::NotEq => BinOp::Ne,
                    CmpOp::Lt => BinOp::Lt,
                    CmpOp::LtE => BinOp::Le,
                    CmpOp::Gt => BinOp::Gt,
                    CmpOp::GtE => BinOp::Ge,
                    other => {
                        return Err(s.diags().error(e.span, format!("operator `{other}` is not supported in TIR")));
                    }
                };
                let c = binary(s, e.span, bin, left, r)?;
                acc = Some(match acc {
                    None => c,
                    Some(prev) => binary(s, e.span, BinOp::And, prev, c)?,
                });
                left = r;
            }
            Ok(acc.expect("a comparison has at least one operator"))
        }
        ExprKind::Call(call) => lower_call(s, e, call),
        ExprKind::Subscript { value, index } => {
            let Some(name) = value.as_name() else {
                return Err(s.diags().error(e.span, "only buffers can be subscripted here"));
            };
            let b = match s.lookup(name) {
                Some(PrimName::Buffer(b)) => b,
                Some(PrimName::Var(_)) => {
                    return Err(s.diags().error(value.span, format!("`{name}` is not a buffer")));
                }
                None => return Err(s.diags().error(value.span, format!("undefined buffer `{name}`"))),
            };
            let (dtype, ndim) = s.buffer_info(b);
            let index = subscript_indices(index);
            let mut indices = Vec::with_capacity(index.len());
            for i in index {
                if matches!(i.kind, ExprKind::Slice { .. }) {
                    return Err(s.diags().error(i.span, "a slice is not a scalar index"));
                }
                indices.push(lower_prim(s, i)?);
            }
            if indices.len() != ndim {
                return Err(s.diags().error(
                    e.span,
                    format!(
                        "buffer `{name}` has {ndim} dimension{} but is indexed with {}",
                        if ndim == 1 { "" } else { "s" },
                        indices.len()
                    ),
                ));
            }
            Ok(s.pool().raw(PrimExprData::Load { dtype, buffer: b, indices }))
        }
        ExprKind::Attribute { .. } => match s.attribute(e) {
            Some(r) => r,
            None => Err(s.diags().error(e.span, format!("expected a TIR expression, found `{}`", dotted(e)))),
        },
        ExprKind::IfExp { test, body, orelse } => {
            let c = lower_prim(s, test)?;
            let t = lower_prim(s, body)?;
            let f = lower_prim(s, orelse)?;
            let (t, f) = matched(s, e.span, t, f)?;
            Ok(s.pool().raw(PrimExprData::Select(c, t, f)))
        }
        _ => Err(s.diags().error(e.span, format!("expected a TIR expression, found {}", e.describe()))),
    }
}

/// The indices of a subscript: `A[()]`, TVM's spelling for a 0-d buffer, has none.
pub(crate) fn subscript_indices(index: &[ast::Expr]) -> &[ast::Expr] {
    match index {
        [ast::Expr { kind: ExprKind::Tuple { elts, parenthesized: true }, .. }] if elts.is_empty() => &[],
        _ => index,
    }
}

fn dotted(e: &ast::Expr) -> String {
    e.dotted_name().unwrap_or_else(|| "expression".into())
}

fn int_literal(s: &mut impl PrimScope, span: ast::Span, v: u128, negative: bool) -> LResult<PrimExpr> {
    let Ok(value) = i128::try_from(v) else {
        return Err(s.diags().error(span, "integer literal does not fit in int64"));
    };
    let value = if negative { -value } else { value };
    if let Ok(x) = i32::try_from(value) {
        return Ok(s.pool().int(DataType::INT32, i64::from(x)));
    }
    match i64::try_from(value) {
        Ok(x) => Ok(s.pool().int(DataType::INT64, x)),
        Err(_) => Err(s.diags().error(span, "integer literal does not fit in int64")),
    }
}

fn mismatch(s: &mut impl PrimScope, span: ast::Span, m: TypeMismatch) -> super::Reported {
    s.diags().error(span, format!("cannot combine operands of types `{}` and `{}`", m.lhs, m.rhs))
}

/// `a op b` through TVM's operator constructor.
pub(crate) fn binary(
    s: &mut impl PrimScope,
    span: ast::Span,
    op: BinOp,
    a: PrimExpr,
    b: PrimExpr,
) -> LResult<PrimExpr> {
    match s.pool().binary(op, a, b) {
        Ok(e) => Ok(e),
        Err(m) => Err(mismatch(s, span, m)),
    }
}

fn matched(s: &mut impl PrimScope, span: ast::Span, a: PrimExpr, b: PrimExpr) -> LResult<(PrimExpr, PrimExpr)> {
    match s.pool().match_types(a, b) {
        Ok(p) => Ok(p),
        Err(m) => Err(mismatch(s, span, m)),
    }
}

fn args_n<'a>(
    s: &mut impl PrimScope,
    e: &ast::Expr,
    call: &'a ast::Call,
    n: usize,
    what: &str,
) -> LResult<&'a [ast::Expr]> {
    if call.args.len() != n || !call.keywords.is_empty() {
        return Err(s.diags().error(e.span, format!("`{what}` takes {n} argument{}", if n == 1 { "" } else { "s" })));
    }
    Ok(&call.args)
}

fn dtype_arg(s: &mut impl PrimScope, e: &ast::Expr) -> LResult<DataType> {
    if let Some(t) = e.as_str() {
        return DataType::parse(t).ok_or_else(|| s.diags().error(e.span, format!("unknown dtype `{t}`")));
    }
    if let Some(name) = e.dotted_name()
        && let Some(t) = t_dtype(&name)
    {
        return Ok(t);
    }
    Err(s.diags().error(e.span, format!("expected a dtype, found {}", e.describe())))
}

/// The explicit node constructors `T.Add(a, b)`, ...
fn node_op(name: &str) -> Option<BinOp> {
    Some(match name {
        "Add" => BinOp::Add,
        "Sub" => BinOp::Sub,
        "Mul" => BinOp::Mul,
        "Div" => BinOp::Div,
        "Mod" => BinOp::Mod,
        "FloorDiv" => BinOp::FloorDiv,
        "FloorMod" => BinOp::FloorMod,
        "Min" => BinOp::Min,
        "Max" => BinOp::Max,
        "EQ" => BinOp::Eq,
        "NE" => BinOp::Ne,
        "LT" => BinOp::Lt,
        "LE" => BinOp::Le,
        "GT" => BinOp::Gt,
        "GE" => BinOp::Ge,
        "And" => BinOp::And,
        "Or" => BinOp::Or,
        _ => return None,
    })
}

/// Helper functions with folding semantics: `T.max(a, b)`, `T.floordiv(a, b)`, ...
fn folding_op(name: &str) -> Option<BinOp> {
    Some(match name {
        "max" => BinOp::Max,
        "min" => BinOp::Min,
        "floordiv" => BinOp::FloorDiv,
        "floormod" => BinOp::FloorMod,
        "truncdiv" => BinOp::Div,
        "truncmod" => BinOp::Mod,
        _ => return None,
    })
}

/// Intrinsics whose result is `bool` whatever the argument types.
const BOOL_INTRINSICS: &[&str] = &["isnan", "isinf", "isfinite", "isnullptr"];

fn lower_call(s: &mut impl PrimScope, e: &ast::Expr, call: &ast::Call) -> LResult<PrimExpr> {
    let Some(name) = call.func.dotted_name() else {
        return Err(s.diags().error(call.func.span, "expected a `T.` function"));
    };
    let Some(fname) = name.strip_prefix("T.") else {
        return Err(s.diags().error(call.func.span, format!("`{name}` is not a TIR function")));
    };
    if let Some(dt) = DataType::parse(fname) {
        return typed_value(s, e, call, dt);
    }
    if DataType::looks_like_dtype(fname) {
        let mut d = relax_ir::Diagnostic::error(super::sp(call.func.span), format!("unknown dtype `{fname}`"));
        if let Some(t) = DataType::suggest(fname) {
            d = d.with_note(format!("did you mean `T.{t}`?"));
        }
        return Err(s.diags().push(d));
    }
    if let Some(op) = node_op(fname) {
        let [a, b] = args_n(s, e, call, 2, &name)? else { unreachable!("checked") };
        let a = lower_prim(s, a)?;
        let b = lower_prim(s, b)?;
        return Ok(s.pool().raw(PrimExprData::Bin(op, a, b)));
    }
    if let Some(op) = folding_op(fname) {
        let [a, b] = args_n(s, e, call, 2, &name)? else { unreachable!("checked") };
        let a = lower_prim(s, a)?;
        let b = lower_prim(s, b)?;
        return binary(s, e.span, op, a, b);
    }
    match fname {
        // Statements of a block or function header, not values: as a value (`+T.reads(..)`,
        // `T.evaluate(T.reads(..))`) they would become a call that prints as the header
        // statement. TVM rejects them too (they return no value).
        "reads" | "writes" | "where" | "sblock_attr" | "block_attr" | "func_attr" | "init" | "sblock" | "block" => {
            Err(s.diags().error(e.span, format!("`{name}` is a statement, not a value")))
        }
        "Not" => {
            let [a] = args_n(s, e, call, 1, &name)? else { unreachable!("checked") };
            let a = lower_prim(s, a)?;
            Ok(s.pool().raw(PrimExprData::Not(a)))
        }
        "Cast" => {
            let [t, v] = args_n(s, e, call, 2, &name)? else { unreachable!("checked") };
            let t = dtype_arg(s, t)?;
            let v = lower_prim(s, v)?;
            Ok(s.pool().raw(PrimExprData::Cast(t, v)))
        }
        "Select" => {
            let [c, a, b] = args_n(s, e, call, 3, &name)? else { unreachable!("checked") };
            let c = lower_prim(s, c)?;
            let a = lower_prim(s, a)?;
            let b = lower_prim(s, b)?;
            Ok(s.pool().raw(PrimExprData::Select(c, a, b)))
        }
        "Ramp" => {
            let [b, st, l] = args_n(s, e, call, 3, &name)? else { unreachable!("checked") };
            let base = lower_prim(s, b)?;
            let stride = lower_prim(s, st)?;
            let lanes = lanes_arg(s, l)?;
            Ok(s.pool().raw(PrimExprData::Ramp { base, stride, lanes }))
        }
        "Broadcast" => {
            let [v, l] = args_n(s, e, call, 2, &name)? else { unreachable!("checked") };
            let value = lower_prim(s, v)?;
            let lanes = lanes_arg(s, l)?;
            Ok(s.pool().raw(PrimExprData::Broadcast { value, lanes }))
        }
        "call_extern" | "call_pure_extern" | "call_llvm_intrin" | "call_llvm_pure_intrin" | "reinterpret" => {
            let Some((first, rest)) = call.args.split_first() else {
                return Err(s.diags().error(e.span, format!("`{name}` needs a result dtype")));
            };
            let dtype = dtype_arg(s, first)?;
            let args = rest.iter().map(|a| lower_prim(s, a)).collect::<LResult<Vec<_>>>()?;
            Ok(s.pool().raw(PrimExprData::Call { dtype, op: TirOp::from_name(&format!("tir.{fname}")), args }))
        }
        "tvm_struct_get" => {
            let Some((last, init)) = call.args.split_last() else {
                return Err(s.diags().error(e.span, "`T.tvm_struct_get` needs a dtype"));
            };
            let dtype = dtype_arg(s, last)?;
            let args = init.iter().map(|a| lower_prim(s, a)).collect::<LResult<Vec<_>>>()?;
            Ok(s.pool().raw(PrimExprData::Call { dtype, op: relax_ir::TirOp::from_name("tir.tvm_struct_get"), args }))
        }
        "int64" | "int32" => unreachable!("handled as dtypes"),
        // Other intrinsics that print their result dtype as the first or last argument
        // (`T.type_annotation("float16")`, `T.ptx.mma("float32", ...)`).
        _ if dtype_printed(fname) != DtypeLoc::None => {
            let op = tir_op_for_spelling(fname).unwrap_or(fname);
            let (dt, rest) = match dtype_printed(fname) {
                DtypeLoc::First => call.args.split_first(),
                _ => call.args.split_last(),
            }
            .ok_or_else(|| s.diags().error(e.span, format!("`{name}` needs a result dtype")))?;
            if !call.keywords.is_empty() {
                return Err(s.diags().error(e.span, format!("`{name}` takes no keyword arguments")));
            }
            let dtype = dtype_arg(s, dt)?;
            let args = rest.iter().map(|a| lower_prim(s, a)).collect::<LResult<Vec<_>>>()?;
            Ok(s.pool().raw(PrimExprData::Call { dtype, op: TirOp::from_name(&format!("tir.{op}")), args }))
        }
        _ => {
            if !call.keywords.is_empty() {
                return Err(s.diags().error(e.span, format!("`{name}` takes no keyword arguments")));
            }
            if call.args.is_empty() {
                return Err(s.diags().error(e.span, format!("`{name}` takes arguments")));
            }
            let mut args = call.args.iter().map(|a| lower_prim(s, a)).collect::<LResult<Vec<_>>>()?;
            let dtype = if BOOL_INTRINSICS.contains(&fname) {
                DataType::BOOL
            } else if fname == "if_then_else" {
                if args.len() != 3 {
                    return Err(s.diags().error(e.span, "`T.if_then_else` takes 3 arguments"));
                }
                let (t, f) = matched(s, e.span, args[1], args[2])?;
                args[1] = t;
                args[2] = f;
                s.pool().dtype(t)
            } else {
                s.pool().dtype(args[0])
            };
            Ok(s.pool().raw(PrimExprData::Call { dtype, op: TirOp::from_name(&format!("tir.{fname}")), args }))
        }
    }
}

/// Where the intrinsic printed `T.<printed>(...)` writes its result dtype.
fn dtype_printed(printed: &str) -> DtypeLoc {
    let op = tir_op_for_spelling(printed).unwrap_or(printed);
    tir_call_spelling(&format!("tir.{op}")).1
}

fn lanes_arg(s: &mut impl PrimScope, e: &ast::Expr) -> LResult<u16> {
    match e.as_signed_int().and_then(|v| u16::try_from(v).ok()) {
        Some(l) if l > 0 => Ok(l),
        _ => Err(s.diags().error(e.span, "expected a positive lane count")),
    }
}

/// `T.int64(4)`, `T.float32(1.0)`, `T.float32("inf")`, `T.bool(True)`; with a non-literal
/// argument, a cast (`T.float32(x)`).
fn typed_value(s: &mut impl PrimScope, e: &ast::Expr, call: &ast::Call, dt: DataType) -> LResult<PrimExpr> {
    let [arg] = call.args.as_slice() else {
        return Err(s.diags().error(e.span, format!("`T.{dt}(...)` takes one argument here")));
    };
    if !call.keywords.is_empty() {
        return Err(s.diags().error(e.span, format!("`T.{dt}(...)` takes no keyword arguments")));
    }
    if let Some(v) = int_arg(arg) {
        if dt.is_float() {
            return Ok(s.pool().float(dt, v as f64));
        }
        // TVM's `IntImm` rejects a value its type cannot hold (`T.int8(1000)`, `T.uint8(-1)`).
        let Some(v) = relax_ir::prim::int_literal_value(dt.element(), v) else {
            return Err(s.diags().error(arg.span, format!("integer literal `{v}` is out of range for `{dt}`")));
        };
        return Ok(s.pool().int(dt, v));
    }
    if let Some(text) = arg.as_str() {
        let v = match text {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            _ => text.parse::<f64>().map_err(|_| s.diags().error(arg.span, format!("invalid float `{text}`")))?,
        };
        if !dt.is_float() {
            return Err(s.diags().error(arg.span, format!("`{dt}` is not a float type")));
        }
        return Ok(s.pool().raw(PrimExprData::Float(dt, FloatBits::new(v))));
    }
    let float_lit = match &arg.kind {
        ExprKind::Float(f) => Some(*f),
        ExprKind::Unary { op: UnaryOp::Neg, operand } => match operand.kind {
            ExprKind::Float(f) => Some(-f),
            _ => None,
        },
        _ => None,
    };
    if let Some(f) = float_lit {
        return Ok(if dt.is_float() {
            s.pool().raw(PrimExprData::Float(dt, FloatBits::new(f)))
        } else {
            s.pool().make_const_float(dt, f)
        });
    }
    if let ExprKind::Bool(b) = arg.kind {
        // `T.float32(True)` is the float `1.0`, not an integer node of a float type.
        return Ok(if dt.is_float() {
            s.pool().float(dt, f64::from(u8::from(b)))
        } else {
            s.pool().int(dt, i64::from(b))
        });
    }
    let v = lower_prim(s, arg)?;
    Ok(s.pool().cast(dt, v))
}

/// An integer literal, possibly negated, at full width.
pub(crate) fn int_arg(e: &ast::Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Int(v) => i128::try_from(*v).ok(),
        ExprKind::Unary { op: UnaryOp::Neg, operand } => match operand.kind {
            ExprKind::Int(v) => i128::try_from(v).ok().map(|v| -v),
            _ => None,
        },
        _ => None,
    }
}

/// Parses the text of a quoted dim (`"m + n"`, `"n * T.int64(256)"`) and lowers it.
pub(crate) fn lower_quoted(s: &mut impl PrimScope, text: &str, span: ast::Span) -> LResult<PrimExpr> {
    match parse_expr_text(text) {
        Some(e) => {
            // Spans inside the string are relative to it; point every error at the string.
            let before = s.diags().list.len();
            let r = lower_prim(s, &e);
            let rel = relax_ir::Span::new(span.start, span.end);
            for d in &mut s.diags().list[before..] {
                d.span = rel;
            }
            r
        }
        None => Err(s.diags().error(span, format!("invalid expression `{text}`"))),
    }
}

/// Parses a string as one Python expression.
pub(crate) fn parse_expr_text(text: &str) -> Option<ast::Expr> {
    if text.contains('\n') || text.trim().is_empty() {
        return None;
    }
    let (file, errors) = crate::syntax::parse_syntax(text);
    if !errors.is_empty() {
        return None;
    }
    let mut body = file?.body;
    if body.len() != 1 {
        return None;
    }
    match body.pop()?.kind {
        ast::StmtKind::Expr(e) => Some(e),
        _ => None,
    }
}
