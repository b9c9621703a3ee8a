//! Phase 1 for Relax functions: parameters, return type and the symbolic variables the
//! signature defines (`text-format.md` §7.1).
//!
//! A variable is defined by its first bare occurrence in a definable position of a
//! parameter annotation: a whole tensor or shape dim (`"n"`, or `n` in HEAD text) or the
//! value of a prim parameter. Quoted compound dims (`"m + n"`) only use variables. Body
//! declarations (`n = T.int64()`) give a variable's dtype.

use std::collections::HashMap;

use relax_ir::{Attrs, DataType, ExprData, FunctionNode, RelaxFunction, TyData};

use super::super::module::{Decorator, ModuleCx};
use super::super::prim_expr::{declaration_keywords, t_dtype};
use super::super::{LResult, sp};
use super::{FuncCx, function_decorator_attrs, types};
use crate::ast::{self, ExprKind, StmtKind};

/// An empty Relax function to be filled by [`lower_signature`].
pub(crate) fn empty_function() -> RelaxFunction {
    let mut pool = relax_ir::Pool::new();
    let void = pool.intern_ty(TyData::void());
    let mut exprs = relax_entity::PrimaryMap::new();
    let body = exprs.push(ExprData::Tuple(relax_ir::ExprList::new()));
    let mut expr_ty = relax_entity::SecondaryMap::new();
    expr_ty.set(body, Some(void));
    let mut seqs = relax_entity::PrimaryMap::new();
    let body = seqs.push(relax_ir::SeqData { blocks: Vec::new(), body });
    RelaxFunction {
        pool,
        vars: Default::default(),
        exprs,
        expr_ty,
        blocks: Default::default(),
        seqs,
        lists: Default::default(),
        func: FunctionNode { params: Vec::new(), ret: void, body, attrs: Attrs::new(), pure: true },
        spans: Default::default(),
    }
}

/// Names in definable positions of a parameter annotation, in order, each with whether
/// it is a shape dim (which must be an `int64` variable) rather than a prim value.
fn definable_names<'e>(e: &'e ast::Expr, out: &mut Vec<(&'e str, ast::Span, bool)>) {
    let Some((call, callee)) = e.as_dotted_call() else { return };
    match callee.as_str() {
        "R.Tensor" | "R.Shape" => {
            let dims = call.args.first().or_else(|| call.keyword("shape"));
            if let Some(seq) = dims.and_then(|d| d.as_sequence()) {
                for d in seq {
                    match &d.kind {
                        ExprKind::Str(s) if is_identifier(s) => out.push((s.as_str(), d.span, true)),
                        ExprKind::Name(n) => out.push((n.as_str(), d.span, true)),
                        _ => {}
                    }
                }
            }
        }
        "R.Prim" => {
            if let Some(v) = call.keyword("value") {
                match &v.kind {
                    ExprKind::Str(s) if is_identifier(s) => out.push((s.as_str(), v.span, false)),
                    ExprKind::Name(n) => out.push((n.as_str(), v.span, false)),
                    _ => {}
                }
            }
        }
        "R.Tuple" => {
            for a in &call.args {
                definable_names(a, out);
            }
        }
        _ => {}
    }
}

/// True for a Python identifier.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Phase 1 of a Relax function.
pub(crate) fn lower_signature(
    cx: &mut ModuleCx<'_>,
    def: &ast::FunctionDef,
    deco: &Decorator,
) -> LResult<RelaxFunction> {
    let mut f = empty_function();
    f.spans.func = sp(def.name.span);
    f.func.pure = !deco.impure;
    function_decorator_attrs(&def.name.name, deco, &mut f.func.attrs);
    let mut fx = FuncCx::new(cx, &mut f);
    let mut failed = !declare_signature_vars(&mut fx, def);
    for p in &def.params {
        let Some(ann) = &p.annotation else {
            fx.d().error(p.name.span, format!("parameter `{}` needs a type annotation", p.name.name));
            failed = true;
            continue;
        };
        match types::lower_type(&mut fx, ann, true) {
            Ok(ty) => {
                if fx.lookup_var(&p.name.name).is_some() && fx.scopes[0].contains_key(&p.name.name) {
                    fx.d().error(p.name.span, format!("parameter `{}` is defined twice", p.name.name));
                    failed = true;
                }
                let v = fx.define_var(&p.name.name, ty, p.span);
                fx.f.func.params.push(v);
            }
            Err(_) => failed = true,
        }
    }
    if let Some(ret) = &def.returns {
        match types::lower_type(&mut fx, ret, true) {
            Ok(t) => fx.f.func.ret = t,
            Err(_) => failed = true,
        }
    } else {
        let obj = fx.ty(TyData::Object);
        fx.f.func.ret = obj;
    }
    if failed { Err(super::super::Reported) } else { Ok(f) }
}

/// Creates the symbolic variables the signature defines: definable names in order, with
/// dtypes from the body's declarations; HEAD `def f[n](...)` type parameters too. A shape
/// dim declared with a dtype other than `int64` is an error (false).
fn declare_signature_vars(fx: &mut FuncCx<'_, '_>, def: &ast::FunctionDef) -> bool {
    let decls = body_declarations(&def.body);
    let decl_types: HashMap<String, (DataType, bool)> =
        decls.iter().map(|&(n, t, _, size)| (n.to_string(), (t, size))).collect();
    let mut names: Vec<(&str, ast::Span, bool)> = Vec::new();
    for p in &def.params {
        if let Some(a) = &p.annotation {
            definable_names(a, &mut names);
        }
    }
    for tp in &def.type_params {
        names.push((tp.name.as_str(), tp.span, false));
    }
    let mut ok = true;
    for &(n, dim_span, _) in names.iter().filter(|d| d.2) {
        let Some(&(_, t, span, _)) = decls.iter().find(|d| d.0 == n && d.1 != DataType::INT64) else { continue };
        let d = relax_ir::Diagnostic::error(
            sp(span),
            format!("symbolic shape variable `{n}` is declared `T.{t}()`, but shape dims are `int64`"),
        )
        .with_label(format!("declare it `{n} = T.int64()`"))
        .with_secondary(sp(dim_span), "used as a shape dim here");
        fx.d().push(d);
        ok = false;
    }
    for (n, _, _) in names {
        if fx.syms.contains_key(n) || fx.lookup_var(n).is_some() {
            continue;
        }
        let (dtype, size_var) = decl_types.get(n).copied().unwrap_or((DataType::INT64, false));
        let v = fx.f.pool.new_var(n, dtype);
        fx.f.pool.vars[v].size_var = size_var;
        fx.syms.insert(n.to_string(), v);
    }
    // Declared names the signature uses in compound dims only: create them too, so that
    // the signature lowers; the verifier reports a use before definition.
    for (n, (t, size_var)) in decl_types {
        if !fx.syms.contains_key(&n) {
            let v = fx.f.pool.new_var(&n, t);
            fx.f.pool.vars[v].size_var = size_var;
            fx.syms.insert(n, v);
        }
    }
    ok
}

/// The declarations of a body as `(name, dtype, span, is_size_var)`.
pub(crate) fn body_declarations(body: &[ast::Stmt]) -> Vec<(&str, DataType, ast::Span, bool)> {
    let mut out = Vec::new();
    for stmt in body {
        let StmtKind::Assign { targets, annotation: None, value } = &stmt.kind else { continue };
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
        let mut decls = Vec::new();
        for (n, v) in names.iter().zip(values) {
            let (Some(name), Some((call, callee))) = (n.as_name(), v.as_dotted_call()) else { break };
            let Some(size_var) = declaration_keywords(call).filter(|_| call.args.is_empty()) else { break };
            let Some(dtype) = t_dtype(&callee) else { break };
            decls.push((name, dtype, n.span, size_var));
        }
        if decls.len() == names.len() {
            out.extend(decls);
        }
    }
    out
}
