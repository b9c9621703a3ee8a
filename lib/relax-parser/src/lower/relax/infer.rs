//! Types of values while parsing (`text-format.md` §12.3).
//!
//! DPS and packed calls take the types they are given; Relax function calls match the
//! callee's parameter types against the argument types, which binds the callee's
//! symbolic variables, and substitute into its return type, dropping any shape that still
//! mentions a variable the caller does not have; tuples and items take their fields'
//! types; memory ops have fixed types. Everything else is typed by the binding's
//! annotation (op inference is added by the type-inference work).

use std::collections::HashMap;

use relax_ir::op::OpClass;
use relax_ir::{
    Call, DataType, Expr, ExprData, Func, Global, Pool, PrimExpr, PrimExprData, SymVar, TensorShape, Ty, TyData,
};

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
    match sinfo {
        [] => fx.ty(TyData::Object),
        [one] => *one,
        many => fx.ty(TyData::Tuple(many.to_vec())),
    }
}

/// The type of an op call, when it can be known while parsing.
pub(crate) fn op_call_type(fx: &mut FuncCx<'_, '_>, call: &Call, _span: ast::Span) -> LResult<Option<Ty>> {
    let ExprData::Op(op) = &fx.f.exprs[call.callee] else { return Ok(None) };
    let op = op.clone();
    let Some(def) = op.def() else {
        return Ok((!call.sinfo_args.is_empty()).then(|| sinfo_result(fx, &call.sinfo_args)));
    };
    match def.class {
        OpClass::DpsCall => return Ok(call.sinfo_args.first().copied()),
        OpClass::PackedCall => return Ok(Some(sinfo_result(fx, &call.sinfo_args))),
        OpClass::Effect => return Ok(Some(fx.ty(TyData::void()))),
        _ => {}
    }
    if !call.sinfo_args.is_empty() {
        return Ok(Some(sinfo_result(fx, &call.sinfo_args)));
    }
    let name = def.name;
    Ok(match name {
        "relax.memory.alloc_storage" | "relax.vm.alloc_storage" | "relax.null_value" => Some(fx.ty(TyData::Object)),
        "relax.memory.alloc_tensor" | "relax.vm.alloc_tensor" => tensor_of(fx, call.args.get(2), call.args.get(3)),
        "relax.builtin.alloc_tensor" => tensor_of(fx, call.args.first(), call.args.get(1)),
        "relax.shape_of" => {
            let t = call.args.first().and_then(|&a| fx.f.ty_of(a));
            let data = t.map(|t| fx.f.pool.ty(t).clone());
            Some(match data {
                Some(TyData::Tensor { shape: TensorShape::Dims(d), .. }) => fx.ty(TyData::shape(d)),
                Some(TyData::Tensor { shape: TensorShape::Var(v), .. }) => fx.f.vars[v].ty,
                Some(TyData::Tensor { ndim, .. }) => fx.ty(TyData::Shape { values: None, ndim }),
                _ => fx.ty(TyData::Shape { values: None, ndim: -1 }),
            })
        }
        _ => None,
    })
}

/// `R.Tensor(shape, dtype)` from a shape argument and a dtype argument.
fn tensor_of(fx: &mut FuncCx<'_, '_>, shape: Option<&Expr>, dtype: Option<&Expr>) -> Option<Ty> {
    let dtype = match dtype.map(|&d| &fx.f.exprs[d]) {
        Some(ExprData::DType(t)) => *t,
        _ => DataType::VOID,
    };
    let shape_ty = shape.and_then(|&s| fx.f.ty_of(s)).map(|t| fx.f.pool.ty(t).clone());
    let data = match (shape.map(|&s| fx.f.exprs[s].clone()), shape_ty) {
        (Some(ExprData::Shape(dims)), _) => TyData::tensor(dims, dtype),
        (Some(ExprData::Var(v)), Some(TyData::Shape { ndim, .. })) => {
            TyData::Tensor { shape: TensorShape::Var(v), dtype, ndim, vdevice: None }
        }
        (_, Some(TyData::Shape { ndim, .. })) => TyData::tensor_ndim(ndim, dtype),
        _ => TyData::tensor_ndim(-1, dtype),
    };
    Some(fx.ty(data))
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
                return Ok(Some(derive_call(fx, g, args)));
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
            Ok(match fx.f.pool.ty(t) {
                TyData::Callable { ret, .. } => Some(*ret),
                _ => None,
            })
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

/// Matches the callee's parameter types with the argument types and substitutes into
/// its return type (`algorithms.md` §9.3), erasing what the caller cannot name (§9.4).
fn derive_call(fx: &mut FuncCx<'_, '_>, g: Global, args: &[Expr]) -> Ty {
    let sig = &fx.cx.signatures[&g];
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (&p, &a) in sig.func.params.iter().zip(args) {
        let pt = sig.vars[p].ty;
        if let Some(at) = fx.f.ty_of(a) {
            bind(&sig.pool, pt, &fx.f.pool, at, &mut map);
        }
    }
    subst_ty(&sig.pool, sig.func.ret, &map, &mut fx.f.pool)
}

fn bind(from: &Pool, pt: Ty, to: &Pool, at: Ty, map: &mut HashMap<SymVar, PrimExpr>) {
    let bind_dims = |pd: &[PrimExpr], ad: &[PrimExpr], map: &mut HashMap<SymVar, PrimExpr>| {
        if pd.len() == ad.len() {
            for (&p, &a) in pd.iter().zip(ad) {
                if let PrimExprData::Var(v) = from.prim(p) {
                    map.entry(*v).or_insert(a);
                }
            }
        }
    };
    match (from.ty(pt), to.ty(at)) {
        (TyData::Tensor { shape: TensorShape::Dims(pd), .. }, TyData::Tensor { shape: TensorShape::Dims(ad), .. })
        | (TyData::Shape { values: Some(pd), .. }, TyData::Shape { values: Some(ad), .. }) => bind_dims(pd, ad, map),
        (TyData::Prim { value: Some(p), .. }, TyData::Prim { value: Some(a), .. }) => {
            if let PrimExprData::Var(v) = from.prim(*p) {
                map.entry(*v).or_insert(*a);
            }
        }
        (TyData::Tuple(pf), TyData::Tuple(af)) if pf.len() == af.len() => {
            for (&p, &a) in pf.iter().zip(af) {
                bind(from, p, to, a, map);
            }
        }
        _ => {}
    }
}

/// Copies a type into another pool, substituting variables through `map` and folding
/// constants; shapes or values that mention an unmapped variable are dropped.
pub(crate) fn subst_ty(from: &Pool, t: Ty, map: &HashMap<SymVar, PrimExpr>, to: &mut Pool) -> Ty {
    let data = match from.ty(t).clone() {
        TyData::Object => TyData::Object,
        TyData::Prim { dtype, value } => {
            TyData::Prim { dtype, value: value.and_then(|v| subst_prim(from, v, map, to)) }
        }
        TyData::Shape { values, ndim } => {
            let values = values.and_then(|vs| vs.iter().map(|&v| subst_prim(from, v, map, to)).collect());
            TyData::Shape { values, ndim }
        }
        TyData::Tensor { shape, dtype, ndim, vdevice } => {
            let shape = match shape {
                TensorShape::Dims(d) => match d.iter().map(|&v| subst_prim(from, v, map, to)).collect() {
                    Some(d) => TensorShape::Dims(d),
                    None => TensorShape::Unknown,
                },
                _ => TensorShape::Unknown,
            };
            TyData::Tensor { shape, dtype, ndim, vdevice }
        }
        TyData::Tuple(fields) => TyData::Tuple(fields.iter().map(|&f| subst_ty(from, f, map, to)).collect()),
        TyData::Callable { params, ret, pure } => TyData::Callable {
            params: params.map(|ps| ps.iter().map(|&p| subst_ty(from, p, map, to)).collect()),
            ret: subst_ty(from, ret, map, to),
            pure,
        },
    };
    to.intern_ty(data)
}

/// Substitutes and rebuilds with the folding constructors; `None` when a variable has no
/// image.
pub(crate) fn subst_prim(from: &Pool, e: PrimExpr, map: &HashMap<SymVar, PrimExpr>, to: &mut Pool) -> Option<PrimExpr> {
    let data = from.prim(e).clone();
    Some(match data {
        PrimExprData::Var(v) => return map.get(&v).copied(),
        PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) => to.raw(data),
        PrimExprData::Bin(op, a, b) => {
            let a = subst_prim(from, a, map, to)?;
            let b = subst_prim(from, b, map, to)?;
            match to.binary(op, a, b) {
                Ok(r) => r,
                Err(_) => to.raw(PrimExprData::Bin(op, a, b)),
            }
        }
        PrimExprData::Not(a) => {
            let a = subst_prim(from, a, map, to)?;
            to.not(a)
        }
        PrimExprData::Cast(t, a) => {
            let a = subst_prim(from, a, map, to)?;
            to.cast(t, a)
        }
        PrimExprData::Select(c, t, f) => {
            let c = subst_prim(from, c, map, to)?;
            let t = subst_prim(from, t, map, to)?;
            let f = subst_prim(from, f, map, to)?;
            to.raw(PrimExprData::Select(c, t, f))
        }
        PrimExprData::Call { dtype, op, args } => {
            let args = args.iter().map(|&a| subst_prim(from, a, map, to)).collect::<Option<Vec<_>>>()?;
            to.raw(PrimExprData::Call { dtype, op, args })
        }
        // Loads, lets and vectors do not occur in Relax types.
        _ => return None,
    })
}
