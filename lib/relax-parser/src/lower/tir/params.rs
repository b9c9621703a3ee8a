//! The PrimFunc prologue: dialect detection, parameters, the return type, declarations
//! of symbolic variables and `T.match_buffer` of handle parameters (`text-format.md`
//! §2, §7.2, §8.2).
//!
//! Parameters are read in two passes so that a buffer shape may use a scalar parameter
//! written after it (`kt: T.Buffer((..., "p + s")), p: T.int64`): first every handle and
//! scalar, then the inline buffers. An inline buffer `x: T.Buffer(shape, dtype)` becomes
//! a handle parameter `var_x` plus a buffer-map entry. Symbolic variables are defined by
//! a scalar parameter or by the first bare occurrence in a parameter buffer or
//! `T.match_buffer` shape; function-level declarations `n = T.int64()` (found before
//! lowering) give their dtypes and may come before or after that occurrence.

use std::collections::HashMap;

use relax_ir::{DataType, SymVarData};

use super::super::LResult;
use super::super::module::ModuleCx;
use super::buffers::Dims;
use super::exprs::type_annotation;
use super::scope::{Entry, TirCx};
use crate::ast::{self, ExprKind, StmtKind};

/// True for a Python identifier.
pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when the PrimFunc is written in the classic (≤ 0.23) spelling: the header says
/// `tir as T`, or the function uses `T.block`, `T.block_attr` or `"tir.*"` attribute keys.
pub(super) fn is_classic(cx: &ModuleCx<'_>, def: &ast::FunctionDef) -> bool {
    if cx.dialect.classic_header {
        return true;
    }
    let mut stack: Vec<&ast::Stmt> = def.body.iter().collect();
    while let Some(s) = stack.pop() {
        match &s.kind {
            StmtKind::With { item, body, .. } => {
                if item.as_call().is_some_and(|c| c.func.is_dotted("T.block")) {
                    return true;
                }
                stack.extend(body);
            }
            StmtKind::Expr(e) => {
                if let Some((call, name)) = e.as_dotted_call() {
                    if name == "T.block_attr" {
                        return true;
                    }
                    if name == "T.func_attr"
                        && let Some(ast::Expr { kind: ExprKind::Dict(pairs), .. }) = call.args.first()
                        && pairs.iter().any(|(k, _)| k.as_str().is_some_and(|k| k.starts_with("tir.")))
                    {
                        return true;
                    }
                }
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => stack.extend(body),
            StmtKind::If { then_body, else_body, .. } => {
                stack.extend(then_body);
                stack.extend(else_body.iter().flatten());
            }
            _ => {}
        }
    }
    false
}

/// What a declaration gives a variable: its dtype, the pointer of a handle, and whether it
/// is TVM's `SizeVar`.
pub(super) type Declaration = (DataType, Option<(DataType, String)>, bool);

/// The type a declaration `n = T.int64()` (or `p = T.handle("float32", "global")`) gives,
/// and whether it is TVM's `SizeVar` (`n = T.int64(is_size_var=True)`).
pub(super) fn declaration_type(value: &ast::Expr) -> Option<Declaration> {
    let (call, callee) = value.as_dotted_call()?;
    let t = super::super::prim_expr::t_dtype(&callee)?;
    let size_var = super::super::prim_expr::declaration_keywords(call)?;
    if t.is_void() {
        return None;
    }
    if call.args.is_empty() {
        return Some((t, None, size_var));
    }
    if t.is_handle() && !size_var && call.args.iter().all(|a| a.as_str().is_some() || a.dotted_name().is_some()) {
        return type_annotation(value).map(|(t, p)| (t, p, false));
    }
    None
}

/// The function-level declarations, by name (the last one wins).
pub(super) fn prescan_declarations(body: &[ast::Stmt]) -> HashMap<String, DataType> {
    let mut out = HashMap::new();
    for s in body {
        let StmtKind::Assign { targets, annotation: None, value } = &s.kind else { continue };
        let names: Vec<&ast::Expr> = match targets.as_slice() {
            [one] => match &one.kind {
                ExprKind::Tuple { elts, .. } => elts.iter().collect(),
                _ => vec![one],
            },
            many => many.iter().collect(),
        };
        let values: Vec<&ast::Expr> = match &value.kind {
            ExprKind::Tuple { elts, .. } if names.len() > 1 => elts.iter().collect(),
            _ => vec![value],
        };
        if names.len() != values.len() {
            continue;
        }
        for (n, v) in names.iter().zip(values) {
            if let (Some(name), Some((t, _, _))) = (n.as_name(), declaration_type(v)) {
                out.insert(name.to_string(), t);
            }
        }
    }
    out
}

/// What a parameter annotation says.
enum ParamKind<'e> {
    /// A scalar or handle.
    Scalar(DataType, Option<(DataType, String)>),
    /// An inline buffer: `T.Buffer(...)` or `T.Buffer[...]`.
    Buffer(&'e ast::Expr),
}

/// Classifies a parameter annotation.
fn param_kind(e: &ast::Expr) -> Option<ParamKind<'_>> {
    let is_buffer = match &e.kind {
        ExprKind::Call(call) => call.func.is_dotted("T.Buffer"),
        ExprKind::Subscript { value, .. } => value.is_dotted("T.Buffer"),
        _ => false,
    };
    if is_buffer {
        return Some(ParamKind::Buffer(e));
    }
    type_annotation(e).map(|(t, p)| ParamKind::Scalar(t, p))
}

/// Lowers the parameters into handles, scalars and buffer-map entries.
pub(super) fn lower_params(tx: &mut TirCx<'_, '_>, def: &ast::FunctionDef) {
    let mut inline: Vec<(usize, &ast::Param, &ast::Expr)> = Vec::new();
    for p in &def.params {
        let name = p.name.name.as_str();
        if tx.frames[0].contains_key(name) {
            tx.err(p.name.span, format!("parameter `{name}` is defined twice"));
            continue;
        }
        let Some(ann) = &p.annotation else {
            tx.err(p.name.span, format!("parameter `{name}` needs a type annotation"));
            continue;
        };
        if let Some(d) = &p.default {
            tx.err(d.span, "PrimFunc parameters take no default values");
        }
        match param_kind(ann) {
            Some(ParamKind::Scalar(dtype, pointer)) => {
                let v = tx.define_var(name, dtype, p.span);
                tx.pool.vars[v].pointer = pointer;
                tx.params.push(v);
            }
            Some(ParamKind::Buffer(e)) => {
                let handle = tx.pool.vars.push(SymVarData::new(format!("var_{name}"), DataType::HANDLE));
                tx.spans.vars.set(handle, super::super::sp(p.span));
                inline.push((tx.params.len(), p, e));
                tx.params.push(handle);
            }
            None => {
                tx.err(
                    ann.span,
                    format!("expected `T.handle`, `T.Buffer(...)` or a scalar type, found {}", ann.describe()),
                );
            }
        }
    }
    // Definition sites first: a compound dim may use a variable that a later parameter
    // defines (`a: T.Buffer(("p + s",)), b: T.Buffer((s,))`).
    for (_, _, e) in &inline {
        predefine_dims(tx, e);
    }
    for (index, p, e) in inline {
        let _ = inline_buffer(tx, index, p, e);
    }
}

/// Defines the variables that the bare or quoted names of a buffer annotation's shape
/// introduce.
fn predefine_dims(tx: &mut TirCx<'_, '_>, e: &ast::Expr) {
    let shape = match &e.kind {
        ExprKind::Call(call) => call.args.first().or_else(|| call.keyword("shape")),
        ExprKind::Subscript { index, .. } => index.first(),
        _ => None,
    };
    let Some(shape) = shape else { return };
    let dims = shape.as_sequence().map_or_else(|| vec![shape], |d| d.iter().collect());
    for d in dims {
        let (name, quoted) = match &d.kind {
            ExprKind::Name(n) => (n.as_str(), false),
            ExprKind::Str(s) if is_identifier(s) => (s.as_str(), true),
            _ => continue,
        };
        if tx.entry(name).is_some() {
            continue;
        }
        let declared = tx.decls.get(name).copied();
        if declared.is_some() || quoted || tx.is_typevar(name) {
            tx.define_function_var(name, declared.unwrap_or(DataType::INT64), d.span);
        }
    }
}

/// `x: T.Buffer(shape, dtype, ...)` (or the subscript form `T.Buffer[shape, dtype]`).
fn inline_buffer(tx: &mut TirCx<'_, '_>, index: usize, p: &ast::Param, e: &ast::Expr) -> LResult<()> {
    let built = match &e.kind {
        ExprKind::Call(call) => {
            let args = tx.buffer_args(call, "T.Buffer", 0)?;
            tx.build_buffer(&p.name.name, &args, Dims::Define, false, p.span)?
        }
        ExprKind::Subscript { index: items, .. } => {
            let call = ast::Call {
                func: Box::new(ast::Expr::new(e.span, ExprKind::Name("T.Buffer".into()))),
                args: items.to_vec(),
                keywords: Vec::new(),
            };
            let args = tx.buffer_args(&call, "T.Buffer", 0)?;
            tx.build_buffer(&p.name.name, &args, Dims::Define, false, p.span)?
        }
        _ => return Err(tx.err(e.span, "expected `T.Buffer(...)`")),
    };
    let b = tx.buffers.push(built.data);
    tx.spans.buffers.set(b, super::super::sp(p.span));
    tx.frames[0].insert(p.name.name.clone(), Entry::Buffer(b));
    tx.buffer_map.push((tx.params[index], b));
    tx.bound_handles.insert(tx.params[index]);
    tx.region_buffers.insert(b);
    Ok(())
}

/// The return annotation: `-> T.int32`; none (or `-> None`) is `void`.
pub(super) fn lower_ret(tx: &mut TirCx<'_, '_>, def: &ast::FunctionDef) -> DataType {
    let Some(r) = &def.returns else { return DataType::VOID };
    if matches!(r.kind, ExprKind::None) {
        return DataType::VOID;
    }
    match type_annotation(r) {
        Some((t, _)) => t,
        None => {
            tx.err(r.span, format!("expected a return type such as `T.int32`, found {}", r.describe()));
            DataType::VOID
        }
    }
}

impl TirCx<'_, '_> {
    /// `x = T.match_buffer(var_x, shape, ...)` at function level: binds a buffer to a
    /// handle parameter.
    pub fn param_match_buffer(&mut self, target: &ast::Expr, call: &ast::Call, span: ast::Span) -> LResult<()> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, "`T.match_buffer` must be assigned to a name"));
        };
        let Some(param) = call.args.first().or_else(|| call.keyword("param")) else {
            return Err(self.err(span, "`T.match_buffer` needs the parameter to bind"));
        };
        let handle = match param.as_name().and_then(|n| self.entry(n)) {
            Some(Entry::Var(v)) if self.param_set.contains(&v) && self.pool.vars[v].dtype.is_handle() => v,
            _ => {
                return Err(self.err(param.span, "`T.match_buffer` takes a handle parameter or a buffer region"));
            }
        };
        if self.bound_handles.contains(&handle) {
            return Err(self
                .err(param.span, format!("parameter `{}` is already bound to a buffer", self.pool.vars[handle].name)));
        }
        // `param=` given as a keyword is not a buffer argument.
        let stripped = without_keyword(call, "param");
        let args = self.buffer_args(&stripped, "T.match_buffer", usize::from(!call.args.is_empty()))?;
        let built = self.build_buffer(name, &args, Dims::Define, false, target.span)?;
        let b = self.define_buffer(built.data, target.span);
        self.buffer_map.push((handle, b));
        self.bound_handles.insert(handle);
        self.region_buffers.insert(b);
        Ok(())
    }

    /// `n = T.int64()`: the variable `n` (the existing one when a signature or an earlier
    /// declaration defined it; the dtypes must agree).
    pub fn declare(&mut self, target: &ast::Expr, ty: Declaration) -> LResult<()> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, "a declaration must be assigned to a name"));
        };
        if let Some(Entry::Var(v)) = self.entry(name) {
            let had = self.pool.vars[v].dtype;
            if had != ty.0 {
                return Err(
                    self.err(target.span, format!("`{name}` is declared `{}` but was defined as `{had}`", ty.0))
                );
            }
            self.pool.vars[v].size_var |= ty.2;
            return Ok(());
        }
        let v = self.define_var(name, ty.0, target.span);
        self.pool.vars[v].pointer = ty.1;
        self.pool.vars[v].size_var = ty.2;
        Ok(())
    }
}

/// `call` without its keyword argument `key`.
fn without_keyword(call: &ast::Call, key: &str) -> ast::Call {
    ast::Call {
        func: call.func.clone(),
        args: call.args.clone(),
        keywords: call.keywords.iter().filter(|k| k.name.name != key).cloned().collect(),
    }
}
