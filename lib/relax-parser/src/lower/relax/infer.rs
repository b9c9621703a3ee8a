//! Types of values while parsing (`text-format.md` §12.3), by `relax_ir::infer`.
//!
//! Op calls are typed by the op's inference rule (`relax_ir::infer::infer_op`; DPS and
//! packed calls take their `sinfo_args`); a proved mismatch is an error at the call.
//! Relax function calls match the callee's parameter types against the argument types,
//! which binds the callee's symbolic variables, and substitute into its return type,
//! dropping any shape that still mentions a variable the caller does not have
//! (`relax_ir::infer::derive_call`); tuples and items take their fields' types.

use relax_ir::arith::Analyzer;
use relax_ir::infer::{self, CalleeSig};
use relax_ir::{Call, Expr, ExprData, Func, Global, Ty, TyData};

use super::super::LResult;
use super::FuncCx;
use crate::ast;

/// The type of a `cls.f` reference.
pub(crate) fn global_type(fx: &mut FuncCx<'_, '_>, g: Global) -> Option<Ty> {
    let pure = match fx.cx.signatures.get(&g) {
        Some(sig) => sig.func.pure,
        None => match fx.cx.module.globals.get(g).map(|gd| &gd.func) {
            Some(Func::Relax(f)) => f.func.pure,
            _ => true,
        },
    };
    let ret = fx.ty(TyData::Object);
    Some(fx.ty(TyData::Callable { params: None, ret, pure }))
}

/// The type of `t[i]`.
pub(crate) fn item_type(fx: &mut FuncCx<'_, '_>, t: Expr, i: u32) -> Option<Ty> {
    let tt = fx.f.ty_of(t)?;
    match fx.f.pool.ty(tt) {
        TyData::Tuple(fields) => fields.get(i as usize).copied(),
        _ => None,
    }
}

/// The type given by `sinfo_args`: none is `R.Object`, one is itself, several a tuple.
pub(crate) fn sinfo_result(fx: &mut FuncCx<'_, '_>, sinfo: &[Ty]) -> Ty {
    infer::sinfo_result(fx.f, sinfo)
}

/// The type of an op call from the op's inference rule; a proved mismatch is an error
/// at the call.
pub(crate) fn op_call_type(fx: &mut FuncCx<'_, '_>, call: &Call, span: ast::Span) -> LResult<Option<Ty>> {
    let an = Analyzer::new();
    match infer::infer_op(fx.f, call, &an) {
        Ok(t) => Ok(t),
        // An argument whose own binding failed: the error is already reported.
        Err(_) if fx.f.list(call.args).to_vec().into_iter().any(|a| super::uses_poisoned(fx, a)) => Ok(None),
        Err(e) => Err(fx.d().error(span, e.message)),
    }
}

/// The type of a call of a module function or a function-typed variable.
pub(crate) fn function_call_type(
    fx: &mut FuncCx<'_, '_>,
    callee: Expr,
    args: &[Expr],
    span: ast::Span,
) -> LResult<Option<Ty>> {
    match fx.f.exprs[callee].clone() {
        ExprData::Global(g) => {
            if let Some(sig) = fx.cx.signatures.get(&g) {
                let name = &fx.cx.module.globals[g].name;
                if sig.func.params.len() != args.len() {
                    let msg = format!(
                        "function `{name}` takes {} argument{}, but {} {} given",
                        sig.func.params.len(),
                        if sig.func.params.len() == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    );
                    return Err(fx.d().error(span, msg));
                }
                let sig = &fx.cx.signatures[&g];
                let params: Vec<Ty> = sig.func.params.iter().map(|&p| sig.vars[p].ty).collect();
                let callee = CalleeSig {
                    name: &format!("cls.{name}"),
                    pool: Some(&sig.pool),
                    params: &params,
                    param_vars: &sig.func.params,
                    ret: sig.func.ret,
                };
                let an = Analyzer::new();
                return match infer::derive_call(fx.f, callee, args, &an) {
                    Ok(t) => Ok(Some(t)),
                    Err(_) if args.iter().any(|&a| super::uses_poisoned(fx, a)) => Ok(None),
                    Err(e) => Err(fx.cx.diags.error(span, e.message)),
                };
            }
            match fx.cx.module.globals[g].func {
                // A PrimFunc called directly (after CallTIRRewrite) writes its outputs.
                Func::Prim(_) => Ok(Some(fx.ty(TyData::void()))),
                _ if is_prim_func_name(fx, g) => Ok(Some(fx.ty(TyData::void()))),
                _ => Ok(None),
            }
        }
        ExprData::Var(v) => {
            let t = fx.f.vars[v].ty;
            match fx.f.pool.ty(t).clone() {
                TyData::Callable { params: Some(params), ret, .. } => {
                    let name = fx.f.vars[v].name.clone();
                    let callee = CalleeSig { name: &name, pool: None, params: &params, param_vars: &[], ret };
                    let an = Analyzer::new();
                    match infer::derive_call(fx.f, callee, args, &an) {
                        Ok(t) => Ok(Some(t)),
                        Err(_) if args.iter().any(|&a| super::uses_poisoned(fx, a)) => Ok(None),
                        Err(e) => Err(fx.d().error(span, e.message)),
                    }
                }
                TyData::Callable { params: None, ret, .. } => Ok(Some(ret)),
                _ => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

/// True when the global is a PrimFunc still waiting for its body (phase 2 order).
fn is_prim_func_name(fx: &FuncCx<'_, '_>, g: Global) -> bool {
    fx.cx.module.form == relax_ir::ModuleForm::Module
        && matches!(fx.cx.module.globals[g].func, Func::Unresolved)
        && !fx.cx.signatures.contains_key(&g)
}
