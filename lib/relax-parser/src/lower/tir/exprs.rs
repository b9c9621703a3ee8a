//! TIR expressions inside PrimFuncs: [`lower_prim`] plus the few lowered-TIR spellings it
//! does not know, and helpers to read dtypes and type annotations.
//!
//! Lowered TIR (`samples/*/pipeline/17_*`) writes pointer types as `T.handle("int64",
//! "global").ty` and refers to omitted string constants as `metadata["ir.StringImm"][0]`;
//! the printer refers to a buffer's implicit fields as `A.data`, `A.elem_offset` and
//! `A.strides[i]`. Before such an expression reaches [`lower_prim`], a copy of it is
//! rewritten: `X.ty` becomes the dtype string (`"handle"`; the pointee type is not kept),
//! and metadata references, `A.strides[i]` and `T.tvm_struct_get(...)` calls are wrapped
//! in private attributes that the scope's `attribute` hook lowers:
//! * `metadata["key"][i]` is the call `T.metadata("key", i)` (op `tir.metadata`, result
//!   type `handle`);
//! * `T.tvm_struct_get(h, i, field, "dtype")` takes its result type from the last
//!   argument, which is not kept as an argument (the printer writes it back there).

use relax_ir::TirOp;
use relax_ir::{DataType, PrimExpr, PrimExprData};

use super::super::LResult;
use super::super::prim_expr::{lower_prim, t_dtype};
use super::scope::{Entry, TirCx};
use crate::ast::{self, ExprKind};

/// The attribute name that marks a wrapped `metadata[...][...]` reference.
const METADATA_ATTR: &str = "__relax_metadata__";
/// The attribute name that marks a wrapped `A.strides[i]`.
const STRIDE_ATTR: &str = "__relax_stride__";
/// The attribute name that marks a wrapped `T.tvm_struct_get(...)` call.
const STRUCT_GET_ATTR: &str = "__relax_struct_get__";

/// The op name of a TIR metadata reference: `T.metadata("ir.StringImm", 0)`.
pub(crate) const METADATA_OP: &str = "tir.metadata";

impl TirCx<'_, '_> {
    /// Lowers a TIR expression.
    pub fn expr(&mut self, e: &ast::Expr) -> LResult<PrimExpr> {
        if needs_rewrite(e) {
            let mut copy = e.clone();
            rewrite(&mut copy);
            lower_prim(self, &copy)
        } else {
            lower_prim(self, e)
        }
    }

    /// Lowers an expression that must have an integer type (extents, dims, indices).
    pub fn int_expr(&mut self, e: &ast::Expr, what: &str) -> LResult<PrimExpr> {
        let v = self.expr(e)?;
        let t = self.pool.dtype(v);
        if !t.is_int() {
            return Err(self.err(e.span, format!("{what} must be an integer, found `{t}`")));
        }
        Ok(v)
    }

    /// Reads a dtype written as a string (`"float32"`) or a `T.` name (`T.float32`).
    pub fn dtype_arg(&mut self, e: &ast::Expr) -> LResult<DataType> {
        match ast_dtype(e) {
            Some(t) => Ok(t),
            None => match e.as_str() {
                Some(s) => Err(self.err(e.span, format!("unknown dtype `{s}`"))),
                None => Err(self.err(e.span, format!("expected a dtype, found {}", e.describe()))),
            },
        }
    }

    /// Reads a string argument.
    pub fn str_arg<'e>(&mut self, e: &'e ast::Expr, what: &str) -> LResult<&'e str> {
        match e.as_str() {
            Some(s) => Ok(s),
            None => Err(self.err(e.span, format!("{what} must be a string, found {}", e.describe()))),
        }
    }

    /// Reads an integer literal argument.
    pub fn int_arg(&mut self, e: &ast::Expr, what: &str) -> LResult<i64> {
        match e.as_signed_int() {
            Some(v) => Ok(v),
            None => Err(self.err(e.span, format!("{what} must be an integer literal, found {}", e.describe()))),
        }
    }
}

/// A dtype written as a string or as `T.<dtype>`.
pub(super) fn ast_dtype(e: &ast::Expr) -> Option<DataType> {
    if let Some(s) = e.as_str() {
        return DataType::parse(s);
    }
    t_dtype(&e.dotted_name()?)
}

/// A scalar type annotation: `T.int32`, `T.handle`, `T.handle("int64", "global")`,
/// `T.let[...]` (the `let` wrapper is looked through). Returns the dtype and, for a
/// typed pointer, its element type and storage scope.
pub(super) fn type_annotation(e: &ast::Expr) -> Option<(DataType, Option<(DataType, String)>)> {
    match &e.kind {
        ExprKind::Subscript { value, index } if value.is_dotted("T.let") => match index.as_slice() {
            [inner] => type_annotation(inner),
            _ => None,
        },
        ExprKind::Call(call) if call.func.is_dotted("T.handle") || call.func.is_dotted("T.Ptr") => {
            if !call.keywords.is_empty() {
                return None;
            }
            match call.args.as_slice() {
                [] => Some((DataType::HANDLE, None)),
                [elem] => Some((DataType::HANDLE, Some((ast_dtype(elem)?, "global".to_string())))),
                [elem, scope] => Some((DataType::HANDLE, Some((ast_dtype(elem)?, scope.as_str()?.to_string())))),
                _ => None,
            }
        }
        _ => {
            let t = t_dtype(&e.dotted_name()?)?;
            if t.is_void() { None } else { Some((t, None)) }
        }
    }
}

/// The `attribute` hook of the TIR scope: `A.data` and wrapped metadata references.
pub(super) fn attribute(tx: &mut TirCx<'_, '_>, e: &ast::Expr) -> Option<LResult<PrimExpr>> {
    let ExprKind::Attribute { value, attr } = &e.kind else { return None };
    match attr.name.as_str() {
        METADATA_ATTR => return Some(metadata_ref(tx, value)),
        STRUCT_GET_ATTR => return Some(struct_get(tx, value)),
        STRIDE_ATTR => return Some(stride(tx, value)),
        _ => {}
    }
    let b = match value.as_name().and_then(|n| tx.entry(n)) {
        Some(Entry::Buffer(b)) => b,
        _ => return None,
    };
    match attr.name.as_str() {
        "data" => {
            let data = tx.buffers[b].data;
            Some(Ok(tx.pool.var_ref(data)))
        }
        "elem_offset" => match tx.buffers[b].elem_offset {
            Some(e) => Some(Ok(e)),
            None => Some(Ok(tx.pool.int(DataType::INT32, 0))),
        },
        _ => None,
    }
}

/// `A.strides[i]`.
fn stride(tx: &mut TirCx<'_, '_>, e: &ast::Expr) -> LResult<PrimExpr> {
    if let ExprKind::Subscript { value, index } = &e.kind
        && let ExprKind::Attribute { value: base, .. } = &value.kind
        && let Some(Entry::Buffer(b)) = base.as_name().and_then(|n| tx.entry(n))
        && let [i] = index.as_slice()
        && let Some(i) = i.as_signed_int()
    {
        return match usize::try_from(i).ok().and_then(|i| tx.buffers[b].strides.get(i).copied()) {
            Some(s) => Ok(s),
            None => Err(tx.err(e.span, format!("buffer `{}` has no stride {i}", tx.buffers[b].name))),
        };
    }
    Err(tx.err(e.span, "expected `A.strides[i]` of a buffer `A`"))
}

/// `T.tvm_struct_get(handle, index, field, "dtype")`.
fn struct_get(tx: &mut TirCx<'_, '_>, e: &ast::Expr) -> LResult<PrimExpr> {
    let Some(call) = e.as_call() else {
        return Err(tx.err(e.span, "expected `T.tvm_struct_get(...)`"));
    };
    let Some((last, init)) = call.args.split_last() else {
        return Err(tx.err(e.span, "`T.tvm_struct_get` needs a dtype"));
    };
    if !call.keywords.is_empty() {
        return Err(tx.err(e.span, "`T.tvm_struct_get` takes no keyword arguments"));
    }
    let dtype = tx.dtype_arg(last)?;
    let args = init.iter().map(|a| lower_prim(tx, a)).collect::<LResult<Vec<_>>>()?;
    Ok(tx.pool.raw(PrimExprData::Call { dtype, op: relax_ir::TirOp::from_name("tir.tvm_struct_get"), args }))
}

/// `metadata["key"][i]` as the call `metadata("key", i)`.
pub(super) fn metadata_ref(tx: &mut TirCx<'_, '_>, e: &ast::Expr) -> LResult<PrimExpr> {
    let parsed = match &e.kind {
        ExprKind::Subscript { value, index } => match (&value.kind, index.as_slice()) {
            (ExprKind::Subscript { value: base, index: keys }, [i]) if base.as_name() == Some("metadata") => {
                match (keys.as_slice(), i.as_signed_int()) {
                    ([k], Some(i)) if k.as_str().is_some() && i >= 0 => Some((k.as_str().unwrap_or_default(), i)),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    };
    let Some((key, index)) = parsed else {
        return Err(tx.err(e.span, "expected `metadata[\"KEY\"][INDEX]`"));
    };
    // TVM 0.27 keys omitted TIR strings `ir.StringImm`; TVM 0.25 `tirx.StringImm`.
    let key = if key == "ir.StringImm" { "tirx.StringImm" } else { key };
    let key = tx.pool.raw(PrimExprData::Str(key.to_string()));
    let index = tx.pool.int(DataType::INT32, index);
    Ok(tx.pool.raw(PrimExprData::Call {
        dtype: DataType::HANDLE,
        op: TirOp::from_name(METADATA_OP),
        args: vec![key, index],
    }))
}

/// True for `metadata[...][...]`.
pub(super) fn is_metadata_ref(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Subscript { value, .. } => {
            matches!(&value.kind, ExprKind::Subscript { value: base, .. } if base.as_name() == Some("metadata"))
        }
        _ => false,
    }
}

/// True for `T.handle(...).ty`, `T.int32.ty` and the like.
fn is_type_object(e: &ast::Expr) -> bool {
    let ExprKind::Attribute { value, attr } = &e.kind else { return false };
    if attr.name != "ty" {
        return false;
    }
    let target = value.as_call().map_or(&**value, |c| &*c.func);
    target.dotted_name().is_some_and(|n| t_dtype(&n).is_some())
}

/// The direct sub-expressions of `e`.
fn children(e: &ast::Expr) -> Vec<&ast::Expr> {
    match &e.kind {
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None => Vec::new(),
        ExprKind::Attribute { value, .. } => vec![value],
        ExprKind::Call(call) => {
            let mut v: Vec<&ast::Expr> = vec![&call.func];
            v.extend(call.args.iter());
            v.extend(call.keywords.iter().map(|k| &k.value));
            v
        }
        ExprKind::Subscript { value, index } => {
            let mut v: Vec<&ast::Expr> = vec![value];
            v.extend(index.iter());
            v
        }
        ExprKind::Slice { lower, upper, step } => [lower, upper, step].into_iter().flatten().map(|b| &**b).collect(),
        ExprKind::Tuple { elts, .. } | ExprKind::List(elts) | ExprKind::Set(elts) => elts.iter().collect(),
        ExprKind::Dict(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
        ExprKind::Unary { operand, .. } => vec![operand],
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::BoolOp { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Compare { first, rest } => {
            let mut v: Vec<&ast::Expr> = vec![first];
            v.extend(rest.iter().map(|(_, e)| e));
            v
        }
        ExprKind::IfExp { test, body, orelse } => vec![test, body, orelse],
        ExprKind::Lambda { body, .. } => vec![body],
    }
}

/// True for `T.tvm_struct_get(...)`.
fn is_struct_get(e: &ast::Expr) -> bool {
    e.as_call().is_some_and(|c| c.func.is_dotted("T.tvm_struct_get"))
}

/// True for `A.strides[i]`.
fn is_stride(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Subscript { value, .. } => {
            matches!(&value.kind, ExprKind::Attribute { value: base, attr } if attr.name == "strides" && base.as_name().is_some())
        }
        _ => false,
    }
}

/// True when `e` contains a form that [`rewrite`] must replace.
fn needs_rewrite(e: &ast::Expr) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if is_type_object(e) || is_metadata_ref(e) || is_struct_get(e) || is_stride(e) {
            return true;
        }
        stack.extend(children(e));
    }
    false
}

/// Wraps `e` in the private attribute `attr`.
fn wrap(e: &mut ast::Expr, attr: &str) {
    let inner = std::mem::replace(e, ast::Expr::new(e.span, ExprKind::None));
    let span = inner.span;
    *e = ast::Expr::new(
        span,
        ExprKind::Attribute { value: Box::new(inner), attr: ast::Ident { span, name: attr.to_string() } },
    );
}

/// Replaces `X.ty` by `"handle"`/the dtype string and wraps metadata references.
fn rewrite(e: &mut ast::Expr) {
    if is_type_object(e) {
        let ExprKind::Attribute { value, .. } = &e.kind else { return };
        let target = value.as_call().map_or(&**value, |c| &*c.func);
        let t = target.dotted_name().and_then(|n| t_dtype(&n)).unwrap_or(DataType::HANDLE);
        e.kind = ExprKind::Str(t.to_string());
        return;
    }
    if is_metadata_ref(e) {
        wrap(e, METADATA_ATTR);
        return;
    }
    if is_stride(e) {
        wrap(e, STRIDE_ATTR);
        return;
    }
    let struct_get = is_struct_get(e);
    match &mut e.kind {
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None => {}
        ExprKind::Attribute { value, .. } => rewrite(value),
        ExprKind::Call(call) => {
            rewrite(&mut call.func);
            call.args.iter_mut().for_each(rewrite);
            call.keywords.iter_mut().for_each(|k| rewrite(&mut k.value));
        }
        ExprKind::Subscript { value, index } => {
            rewrite(value);
            index.iter_mut().for_each(rewrite);
        }
        ExprKind::Slice { lower, upper, step } => {
            for part in [lower, upper, step].into_iter().flatten() {
                rewrite(part);
            }
        }
        ExprKind::Tuple { elts, .. } | ExprKind::List(elts) | ExprKind::Set(elts) => elts.iter_mut().for_each(rewrite),
        ExprKind::Dict(pairs) => {
            for (k, v) in pairs {
                rewrite(k);
                rewrite(v);
            }
        }
        ExprKind::Unary { operand, .. } => rewrite(operand),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::BoolOp { lhs, rhs, .. } => {
            rewrite(lhs);
            rewrite(rhs);
        }
        ExprKind::Compare { first, rest } => {
            rewrite(first);
            rest.iter_mut().for_each(|(_, e)| rewrite(e));
        }
        ExprKind::IfExp { test, body, orelse } => {
            rewrite(test);
            rewrite(body);
            rewrite(orelse);
        }
        ExprKind::Lambda { body, .. } => rewrite(body),
    }
    if struct_get {
        wrap(e, STRUCT_GET_ATTR);
    }
}
