//! Statements of Relax function bodies: declarations, attributes, bindings, match casts,
//! dataflow blocks, `if`, local functions and `return` (`text-format.md` §4.2).

use std::collections::HashMap;

use relax_ir::{BindingKind, DataType, Expr, ExprData, FunctionNode, RelaxFunction, Ty, TyData, Var};

use super::super::attrs::{lower_attr_dict, normalize_func_attrs};
use super::super::module::ModuleCx;
use super::super::{LResult, Reported};
use super::exprs::{leaf, value};
use super::{FuncCx, OpenBlock, signature, types};
use crate::ast::{self, ExprKind, StmtKind};

/// Phase 2 of a Relax function: its body.
pub(crate) fn lower_body(cx: &mut ModuleCx<'_>, def: &ast::FunctionDef, f: &mut RelaxFunction) -> LResult<()> {
    let mut fx = FuncCx::new(cx, f);
    for &p in &fx.f.func.params.clone() {
        let name = fx.f.vars[p].name.clone();
        fx.scopes[0].insert(name, p);
    }
    let before = fx.cx.diags.list.len();
    let seq = lower_seq(&mut fx, &def.body, Context::Function, def.name.span)?;
    fx.f.func.body = seq.seq;
    if def.returns.is_none() {
        let body = fx.f.body().body;
        let t = super::ty_or_object(&mut fx, body);
        let params = fx.f.func.params.clone();
        fx.f.func.ret = relax_ir::infer::erase_to_signature(fx.f, t, &params, &relax_ir::arith::Analyzer::new());
    }
    if fx.cx.diags.list.len() > before { Err(Reported) } else { Ok(()) }
}

/// Where a statement list is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A function body: ends with `return`.
    Function,
    /// An `if` branch: ends by assigning the result variable.
    Branch(&'static str),
}

/// The result variable of an `if` branch: its name, its annotation, and the span of the
/// statement assigning it.
type BranchResult = (String, Option<Ty>, ast::Span);

/// A lowered statement list.
struct Seq {
    seq: relax_ir::Seq,
    /// For branches: the result variable.
    result: Option<BranchResult>,
}

fn lower_seq(fx: &mut FuncCx<'_, '_>, stmts: &[ast::Stmt], cxk: Context, end: ast::Span) -> LResult<Seq> {
    let outer_block = std::mem::take(&mut fx.block);
    let outer_blocks = std::mem::take(&mut fx.blocks);
    let r = lower_seq_inner(fx, stmts, cxk, end);
    fx.block = outer_block;
    fx.blocks = outer_blocks;
    r
}

fn lower_seq_inner(fx: &mut FuncCx<'_, '_>, stmts: &[ast::Stmt], cxk: Context, end: ast::Span) -> LResult<Seq> {
    let mut body: Option<Expr> = None;
    let mut result = None;
    let mut failed = false;
    for (i, stmt) in stmts.iter().enumerate() {
        if fx.cx.diags.full() {
            return Err(Reported);
        }
        let last = i + 1 == stmts.len();
        if body.is_some() {
            fx.d().error(stmt.span, "statement after `return`");
            return Err(Reported);
        }
        let r = match (&stmt.kind, cxk) {
            (StmtKind::Return(v), Context::Function) => match v {
                Some(e) => {
                    let b = leaf(fx, e)?;
                    body = Some(b);
                    Ok(())
                }
                None => Err(fx.d().error(stmt.span, "a Relax function must return a value")),
            },
            (StmtKind::Return(_), Context::Branch(_)) => {
                Err(fx.d().error(stmt.span, "`return` inside `if` is not supported; assign the result instead"))
            }
            (StmtKind::If { cond, then_body, else_body }, Context::Branch(which)) if last => {
                // A nested `if` ends the branch: its variable, renamed `{name}_{which}`
                // as TVM's parser names it, is the branch's value.
                lower_if(fx, stmt, cond, then_body, else_body.as_deref()).map(|r| {
                    fx.skip_binding_name();
                    let var = fx.define_var(&format!("{}_{which}", r.name), r.ty, stmt.span);
                    fx.emit(var, r.value, BindingKind::Value);
                    body = Some(fx.f.use_var(var));
                    result = Some((r.name, r.annotation, stmt.span));
                })
            }
            (StmtKind::Assign { targets, annotation, value: v }, Context::Branch(which)) if last => {
                branch_result(fx, stmt, targets, annotation.as_ref(), v, which).map(|(b, r)| {
                    body = Some(b);
                    result = Some(r);
                })
            }
            _ => lower_stmt(fx, stmt, cxk == Context::Function),
        };
        failed |= r.is_err();
    }
    let _ = fx.close_block();
    let Some(body) = body else {
        if failed {
            return Err(Reported);
        }
        let msg = match cxk {
            Context::Function => "function has no `return`",
            Context::Branch(_) => "each branch of `if` must end by assigning the result variable",
        };
        return Err(fx.d().error(end, msg));
    };
    if failed {
        return Err(Reported);
    }
    let blocks = std::mem::take(&mut fx.blocks);
    Ok(Seq { seq: fx.f.add_seq(blocks, body), result })
}

/// The last statement of an `if` branch: `y = value`; a non-leaf value is bound to
/// `y_then` / `y_else` first, as TVM does.
fn branch_result(
    fx: &mut FuncCx<'_, '_>,
    stmt: &ast::Stmt,
    targets: &[ast::Expr],
    annotation: Option<&ast::Expr>,
    v: &ast::Expr,
    which: &str,
) -> LResult<(Expr, BranchResult)> {
    let [target] = targets else {
        return Err(fx.d().error(stmt.span, "the result of an `if` branch is assigned to one name"));
    };
    let Some(name) = target.as_name() else {
        return Err(fx.d().error(target.span, "the result of an `if` branch is assigned to a name"));
    };
    let ann = match annotation {
        Some(a) => Some(types::lower_type(fx, a, false)?),
        None => None,
    };
    let val = literal_value(fx, v, ann)?;
    fx.skip_binding_name();
    match (fx.f.ty_of(val), ann) {
        (Some(inferred), Some(a)) => check_annotation(fx, a, inferred, name, stmt.span)?,
        (None, _) => {
            let t = ann.unwrap_or_else(|| fx.ty(TyData::Object));
            fx.f.expr_ty.set(val, Some(t));
        }
        (Some(_), None) => {}
    }
    let body = if fx.f.is_leaf(val) {
        val
    } else {
        let ty = fx.f.ty_of(val).or(ann).unwrap_or_else(|| fx.ty(TyData::Object));
        let var = fx.define_var(&format!("{name}_{which}"), ty, stmt.span);
        fx.emit(var, val, BindingKind::Value);
        fx.f.use_var(var)
    };
    Ok((body, (name.to_string(), ann, stmt.span)))
}

fn lower_stmt(fx: &mut FuncCx<'_, '_>, stmt: &ast::Stmt, top: bool) -> LResult<()> {
    match &stmt.kind {
        StmtKind::Pass => Ok(()),
        StmtKind::Assign { targets, annotation, value: v } => {
            if annotation.is_none() && declare(fx, stmt)? {
                return Ok(());
            }
            if annotation.is_none() && is_cls_alias(fx, targets, v) {
                return Ok(());
            }
            binding(fx, stmt, targets, annotation.as_ref(), v)
        }
        StmtKind::Expr(e) => {
            if let Some((call, name)) = e.as_dotted_call() {
                match name.as_str() {
                    "R.func_attr" => {
                        if !top {
                            return Err(fx.d().error(e.span, "`R.func_attr` belongs at the top of a function"));
                        }
                        let [arg] = call.args.as_slice() else {
                            return Err(fx.d().error(e.span, "`R.func_attr` takes one dict"));
                        };
                        let mut attrs = lower_attr_dict(fx.cx.diags, arg)?;
                        normalize_func_attrs(&mut attrs);
                        for (k, v) in attrs.0 {
                            fx.f.func.attrs.set(&k, v);
                        }
                        return Ok(());
                    }
                    "R.output" => {
                        return Err(fx.d().error(e.span, "`R.output` belongs at the end of a dataflow block"));
                    }
                    _ => {}
                }
            }
            expression_statement(fx, stmt, e)
        }
        StmtKind::With { item, target: None, body }
            if item.as_dotted_call().is_some_and(|(_, n)| n == "R.dataflow") =>
        {
            dataflow(fx, stmt, body)
        }
        StmtKind::If { cond, then_body, else_body } => if_stmt(fx, stmt, cond, then_body, else_body.as_deref()),
        StmtKind::FunctionDef(def) => local_function(fx, stmt, def),
        _ => Err(fx.d().error(stmt.span, "unexpected statement in a Relax function")),
    }
}

/// `n = T.int64()` / `m, n = T.int64(), T.int64()`: declares symbolic variables.
fn declare(fx: &mut FuncCx<'_, '_>, stmt: &ast::Stmt) -> LResult<bool> {
    let decls = signature::body_declarations(std::slice::from_ref(stmt));
    if decls.is_empty() {
        return Ok(false);
    }
    for (name, dtype, span, size_var) in decls {
        match fx.syms.get(name) {
            Some(&v) => {
                let have = fx.f.pool.vars[v].dtype;
                if have != dtype {
                    return Err(fx
                        .d()
                        .error(span, format!("`{name}` is declared `{dtype}` but the signature uses it as `{have}`")));
                }
                fx.f.pool.vars[v].size_var |= size_var;
            }
            None => {
                let v = fx.f.pool.new_var(name, dtype);
                fx.f.pool.vars[v].size_var = size_var;
                fx.syms.insert(name.to_string(), v);
            }
        }
    }
    Ok(true)
}

/// `cls = Module`.
fn is_cls_alias(fx: &FuncCx<'_, '_>, targets: &[ast::Expr], v: &ast::Expr) -> bool {
    let [t] = targets else { return false };
    t.as_name() == Some("cls") && v.as_name().is_some() && fx.lookup_var("cls").is_none()
}

fn binding(
    fx: &mut FuncCx<'_, '_>,
    stmt: &ast::Stmt,
    targets: &[ast::Expr],
    annotation: Option<&ast::Expr>,
    v: &ast::Expr,
) -> LResult<()> {
    let [target] = targets else {
        return Err(fx.d().error(stmt.span, "a Relax binding has one target; unpack tuples with `t[i]`"));
    };
    let Some(name) = target.as_name() else {
        return Err(fx.d().error(target.span, format!("expected a variable name, found {}", target.describe())));
    };
    let r = binding_value(fx, annotation, v, name, stmt.span);
    let (val, ty, kind) = match r {
        Ok(x) => x,
        Err(rep) => {
            // Define the name anyway so later uses do not cascade into more errors.
            let obj = fx.ty(TyData::Object);
            let v = fx.define_var(name, obj, stmt.span);
            fx.poisoned.insert(v);
            return Err(rep);
        }
    };
    fx.skip_binding_name();
    let var = fx.define_var(name, ty, stmt.span);
    // A value computed from a failed binding is as unknown as it.
    let poisoned = match &fx.f.exprs[val] {
        ExprData::Call(c) => fx.f.list(c.args).iter().any(|&a| super::uses_poisoned(fx, a)),
        _ => super::uses_poisoned(fx, val),
    };
    if poisoned {
        fx.poisoned.insert(var);
    }
    fx.emit(var, val, kind);
    Ok(())
}

/// The value, variable type and kind of a binding.
fn binding_value(
    fx: &mut FuncCx<'_, '_>,
    annotation: Option<&ast::Expr>,
    v: &ast::Expr,
    target: &str,
    span: ast::Span,
) -> LResult<(Expr, Ty, BindingKind)> {
    let ann = match annotation {
        Some(a) => Some(types::lower_type(fx, a, false)?),
        None => None,
    };
    if let Some((call, name)) = v.as_dotted_call()
        && name == "R.match_cast"
    {
        let (Some(src), Some(t)) = (
            call.args.first().or_else(|| call.keyword("value")),
            call.args.get(1).or_else(|| call.keyword("struct_info")),
        ) else {
            return Err(fx.d().error(v.span, "`R.match_cast` takes a value and a type"));
        };
        let src = leaf(fx, src)?;
        let cast = types::lower_type(fx, t, false)?;
        // As in TVM's parser: the annotation of a match cast is the cast's type.
        if let Some(a) = ann
            && a != cast
        {
            let want = relax_ir::printer::print_ty_in(fx.f, a);
            let have = relax_ir::printer::print_ty_in(fx.f, cast);
            let d = relax_ir::Diagnostic::error(
                fx.span(span),
                format!("the annotation `{want}` of `{target}` differs from the type of its `R.match_cast`, `{have}`"),
            )
            .with_note("a match cast binding is annotated with exactly the type it casts to");
            return Err(fx.d().push(d));
        }
        return Ok((src, cast, BindingKind::MatchCast(cast)));
    }
    let val = literal_value(fx, v, ann)?;
    match (fx.f.ty_of(val), ann) {
        (Some(inferred), Some(a)) => check_annotation(fx, a, inferred, target, span)?,
        // No rule gives the value a type: it takes the annotation, as TVM's inference
        // would have produced it (or `R.Object` when there is none).
        (None, _) => {
            let t = ann.unwrap_or_else(|| fx.ty(TyData::Object));
            fx.f.expr_ty.set(val, Some(t));
        }
        (Some(_), None) => {}
    }
    let ty = match ann {
        Some(a) => a,
        None => super::ty_or_object(fx, val),
    };
    Ok((val, ty, BindingKind::Value))
}

/// The value of a binding (or of an `if` branch's result), with TVM's rule for a bare
/// number as the whole value: with a scalar annotation it is a scalar of that type
/// (`a: T.int32 = 1`, the TVM 0.26/0.27 spelling of `R.prim_value(T.int32(1))`), otherwise
/// a constant, as `R.const(1)` (`a = 1` is an int32 0-d tensor in TVM 0.25 and 0.27).
fn literal_value(fx: &mut FuncCx<'_, '_>, v: &ast::Expr, ann: Option<Ty>) -> LResult<Expr> {
    if !super::exprs::is_number_literal(v) {
        return value(fx, v, ann);
    }
    let prim = ann.and_then(|a| match *fx.f.pool.ty(a) {
        TyData::Prim { dtype, .. } => Some(dtype),
        _ => None,
    });
    let Some(dtype) = prim else {
        return super::exprs::const_of(fx, v, None, v.span);
    };
    let Some(i) = v.as_signed_int() else { return value(fx, v, ann) };
    if !dtype.is_int() || dtype.is_bool() || dtype.lanes != 1 {
        return value(fx, v, ann);
    }
    let Some(x) = relax_ir::prim::int_literal_value(dtype, i128::from(i)) else {
        return Err(fx.d().error(v.span, format!("integer `{i}` is out of range for `{dtype}`")));
    };
    let p = fx.f.pool.int(dtype, x);
    Ok(super::exprs::prim_value(fx, p, v.span))
}

/// Checks a binding's annotation against the value's inferred type: an annotation that
/// cannot hold (`BaseCheck` fails at level L0) is an error at the binding; a less precise
/// value type, or one only unprovably different, is accepted (the annotation wins).
fn check_annotation(fx: &mut FuncCx<'_, '_>, ann: Ty, inferred: Ty, target: &str, span: ast::Span) -> LResult<()> {
    let an = relax_ir::arith::Analyzer::new();
    let level = relax_ir::infer::base_check(&fx.f.pool, ann, &fx.f.pool, inferred, &an);
    if level == relax_ir::infer::CheckLevel::FailL0 {
        let want = relax_ir::printer::print_ty_in(fx.f, ann);
        let have = relax_ir::printer::print_ty_in(fx.f, inferred);
        return Err(fx
            .d()
            .error(span, format!("the annotation `{want}` of `{target}` does not match the value's type `{have}`")));
    }
    Ok(())
}

fn expression_statement(fx: &mut FuncCx<'_, '_>, stmt: &ast::Stmt, e: &ast::Expr) -> LResult<()> {
    let val = value(fx, e, None)?;
    let ty = match fx.f.ty_of(val) {
        Some(t) => t,
        None => {
            // An unresolved callee or an op without a known type: an effect.
            let void = fx.ty(TyData::void());
            fx.f.expr_ty.set(val, Some(void));
            void
        }
    };
    // TVM's block builder names the binding whether or not the printer shows the name.
    let fresh = fx.binding_name();
    let name = if fx.f.pool.ty(ty).is_void() { "_".to_string() } else { fresh };
    let var = fx.define_var(&name, ty, stmt.span);
    fx.emit(var, val, BindingKind::Value);
    Ok(())
}

fn dataflow(fx: &mut FuncCx<'_, '_>, stmt: &ast::Stmt, body: &[ast::Stmt]) -> LResult<()> {
    if fx.block.dataflow {
        return Err(fx.d().error(stmt.span, "dataflow blocks cannot be nested"));
    }
    let _ = fx.close_block();
    fx.block = OpenBlock { dataflow: true, bindings: Vec::new() };
    fx.scopes.push(HashMap::new());
    // Which names are outputs is known before the block's statements are read, so that a
    // use of an output inside the block is a use of a (non-dataflow) variable.
    let listed: std::collections::HashSet<String> = body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Expr(e) => e.as_dotted_call().filter(|(_, n)| n == "R.output"),
            _ => None,
        })
        .flat_map(|(call, _)| call.args.iter().filter_map(|a| a.as_name().map(str::to_string)))
        .collect();
    let outer_outputs = fx.dataflow_outputs.replace(listed);
    let mut outputs: Option<Vec<(String, ast::Span)>> = None;
    let mut failed = false;
    for (i, s) in body.iter().enumerate() {
        if let StmtKind::Expr(e) = &s.kind
            && let Some((call, name)) = e.as_dotted_call()
            && name == "R.output"
        {
            if i + 1 != body.len() {
                fx.d().error(s.span, "`R.output` must be the last statement of a dataflow block");
                failed = true;
            }
            let mut names = Vec::new();
            for a in &call.args {
                match a.as_name() {
                    Some(n) => names.push((n.to_string(), a.span)),
                    None => {
                        fx.d().error(a.span, "`R.output` lists variable names");
                        failed = true;
                    }
                }
            }
            outputs = Some(names);
            continue;
        }
        let r = match &s.kind {
            StmtKind::If { .. } => Err(fx.d().error(s.span, "dataflow blocks cannot contain `if`")),
            StmtKind::With { .. } => Err(fx.d().error(s.span, "dataflow blocks cannot be nested")),
            StmtKind::Return(_) => Err(fx.d().error(s.span, "`return` inside a dataflow block")),
            _ => lower_stmt(fx, s, false),
        };
        failed |= r.is_err();
    }
    fx.dataflow_outputs = outer_outputs;
    let scope = fx.scopes.pop().unwrap_or_default();
    let mut outs: Vec<Var> = Vec::new();
    for (n, span) in outputs.unwrap_or_default() {
        match scope.get(&n) {
            Some(&v) => outs.push(v),
            None => {
                fx.d().error(span, format!("`{n}` is not defined in this dataflow block"));
                failed = true;
            }
        }
    }
    // Every variable bound in the block that is not an output is a dataflow variable.
    for i in 0..fx.block.bindings.len() {
        let v = fx.block.bindings[i].var;
        if !outs.contains(&v) {
            fx.f.vars[v].dataflow = true;
            let name = fx.f.vars[v].name.clone();
            let span = *fx.f.spans.vars.get(v);
            fx.dataflow_locals.insert(name, span);
        }
    }
    for v in outs {
        let name = fx.f.vars[v].name.clone();
        fx.scopes.last_mut().expect("a scope is always open").insert(name, v);
    }
    if let Some(b) = fx.close_block()
        && fx.f.spans.blocks.get(b).is_none()
    {
        fx.f.spans.blocks.set(b, fx.span(stmt.span));
    }
    if failed { Err(Reported) } else { Ok(()) }
}

/// A lowered `if` statement: the `If` expression, the variable name both branches
/// assign, its annotation, and its type.
struct LoweredIf {
    value: Expr,
    name: String,
    annotation: Option<Ty>,
    ty: Ty,
}

fn if_stmt(
    fx: &mut FuncCx<'_, '_>,
    stmt: &ast::Stmt,
    cond: &ast::Expr,
    then_body: &[ast::Stmt],
    else_body: Option<&[ast::Stmt]>,
) -> LResult<()> {
    let r = lower_if(fx, stmt, cond, then_body, else_body)?;
    fx.skip_binding_name();
    let var = fx.define_var(&r.name, r.ty, stmt.span);
    fx.emit(var, r.value, BindingKind::Value);
    Ok(())
}

fn lower_if(
    fx: &mut FuncCx<'_, '_>,
    stmt: &ast::Stmt,
    cond: &ast::Expr,
    then_body: &[ast::Stmt],
    else_body: Option<&[ast::Stmt]>,
) -> LResult<LoweredIf> {
    let Some(else_body) = else_body else {
        return Err(fx.d().error(stmt.span, "`if` in a Relax function needs an `else` branch"));
    };
    let c = leaf(fx, cond)?;
    fx.scopes.push(HashMap::new());
    let then_seq = lower_seq(fx, then_body, Context::Branch("then"), stmt.span);
    fx.scopes.pop();
    fx.scopes.push(HashMap::new());
    let else_seq = lower_seq(fx, else_body, Context::Branch("else"), stmt.span);
    fx.scopes.pop();
    let (then_seq, else_seq) = (then_seq?, else_seq?);
    let (Some((tn, tann, _)), Some((en, eann, espan))) = (&then_seq.result, &else_seq.result) else {
        return Err(Reported);
    };
    if tn != en {
        return Err(fx.d().error(*espan, format!("both branches must assign the same variable: `{tn}` and `{en}`")));
    }
    // The value's type joins the branches' (`algorithms.md` §9.5); an annotation on
    // either branch's assignment is the variable's type.
    let (then_body, else_body) = (fx.f.seq(then_seq.seq).body, fx.f.seq(else_seq.seq).body);
    let a = super::ty_or_object(fx, then_body);
    let b = super::ty_or_object(fx, else_body);
    let joined = relax_ir::infer::lca(&mut fx.f.pool, a, b, &relax_ir::arith::Analyzer::new());
    let annotation = tann.or(*eann);
    let ty = annotation.unwrap_or(joined);
    let name = tn.clone();
    let value =
        fx.add(ExprData::If { cond: c, then_branch: then_seq.seq, else_branch: else_seq.seq }, Some(joined), stmt.span);
    Ok(LoweredIf { value, name, annotation, ty })
}

fn local_function(fx: &mut FuncCx<'_, '_>, stmt: &ast::Stmt, def: &ast::FunctionDef) -> LResult<()> {
    let mut pure = true;
    let mut ok = false;
    for d in &def.decorators {
        let (target, keywords): (&ast::Expr, &[ast::Keyword]) = match d.as_call() {
            Some(c) => (&c.func, &c.keywords),
            None => (d, &[]),
        };
        if target.is_dotted("R.function") {
            ok = true;
            for k in keywords {
                if k.name.name == "pure" {
                    pure = !matches!(k.value.kind, ExprKind::Bool(false));
                }
            }
        }
    }
    if !ok {
        return Err(fx.d().error(def.name.span, "a local function needs `@R.function`"));
    }
    fx.scopes.push(HashMap::new());
    // A local function has names of its own (TVM builds it in a new block builder frame).
    let outer_names = std::mem::take(&mut fx.name_supply);
    let r = local_function_inner(fx, def, pure);
    fx.name_supply = outer_names;
    fx.scopes.pop();
    let node = r?;
    let param_tys: Vec<Ty> = node.params.iter().map(|&p| fx.f.vars[p].ty).collect();
    let ty = fx.ty(TyData::Callable { params: Some(param_tys), ret: node.ret, pure });
    let val = fx.add(ExprData::Function(Box::new(node)), Some(ty), stmt.span);
    fx.skip_binding_name();
    let var = fx.define_var(&def.name.name, ty, stmt.span);
    fx.emit(var, val, BindingKind::Value);
    Ok(())
}

fn local_function_inner(fx: &mut FuncCx<'_, '_>, def: &ast::FunctionDef, pure: bool) -> LResult<FunctionNode> {
    let mut params = Vec::new();
    for p in &def.params {
        let Some(ann) = &p.annotation else {
            return Err(fx.d().error(p.name.span, format!("parameter `{}` needs a type annotation", p.name.name)));
        };
        // Bare names in dims of a local function's parameters define variables too.
        define_local_syms(fx, ann);
        let ty = types::lower_type(fx, ann, true)?;
        params.push(fx.define_var(&p.name.name, ty, p.span));
    }
    let declared_ret = match &def.returns {
        Some(r) => Some(types::lower_type(fx, r, true)?),
        None => None,
    };
    let mut attrs = relax_ir::Attrs::new();
    let saved = std::mem::take(&mut fx.f.func.attrs);
    let seq = lower_seq(fx, &def.body, Context::Function, def.name.span);
    attrs.0 = std::mem::replace(&mut fx.f.func.attrs, saved).0;
    let seq = seq?;
    let ret = match declared_ret {
        Some(t) => t,
        None => {
            let body = fx.f.seq(seq.seq).body;
            super::ty_or_object(fx, body)
        }
    };
    Ok(FunctionNode { params, ret, body: seq.seq, attrs, pure })
}

fn define_local_syms(fx: &mut FuncCx<'_, '_>, ann: &ast::Expr) {
    let Some((call, callee)) = ann.as_dotted_call() else { return };
    if callee == "R.Tuple" {
        for a in &call.args {
            define_local_syms(fx, a);
        }
        return;
    }
    if callee != "R.Tensor" && callee != "R.Shape" {
        return;
    }
    let Some(items) = call.args.first().and_then(|d| d.as_sequence()) else { return };
    for d in items {
        let name = match &d.kind {
            ExprKind::Str(s) if signature::is_identifier(s) => s.as_str(),
            _ => continue,
        };
        if !fx.syms.contains_key(name) {
            let v = fx.f.pool.new_var(name, DataType::INT64);
            fx.syms.insert(name.to_string(), v);
        }
    }
}
