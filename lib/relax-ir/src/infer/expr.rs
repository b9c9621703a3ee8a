//! The type of any Relax expression from its operands' types: what the normaliser
//! recomputes bottom-up and what passes call when they emit a binding.

use crate::arith::Analyzer;
use crate::entities::Seq;
use crate::entities::{Expr, Ty};
use crate::module::{ConstPayload, Func, Module};
use crate::relax::{ExprData, RelaxFunction};
use crate::ty::TyData;

use super::call::{CalleeSig, derive_call};
use super::{InferError, infer_op, lca, sinfo_result};

/// The type of a leaf or tuple expression that needs nothing but the function: a
/// variable, a tuple (of typed fields), a shape, a prim value, a string or dtype. `None`
/// for other expressions, or when a field is untyped.
pub fn infer_leaf(f: &mut RelaxFunction, e: Expr) -> Option<Ty> {
    Some(match f.exprs[e].clone() {
        ExprData::Var(v) => f.vars[v].ty,
        ExprData::Tuple(fields) => {
            let fields = f.list(fields).to_vec();
            let tys: Option<Vec<Ty>> = fields.iter().map(|&x| f.ty_of(x).or_else(|| infer_leaf(f, x))).collect();
            f.pool.intern_ty(TyData::Tuple(tys?))
        }
        ExprData::Shape(dims) => f.pool.intern_ty(TyData::shape(dims)),
        ExprData::Prim(p) => {
            let dtype = f.pool.dtype(p);
            f.pool.intern_ty(TyData::Prim { dtype, value: Some(p) })
        }
        ExprData::Str(_) | ExprData::DType(_) => f.pool.intern_ty(TyData::Object),
        _ => return None,
    })
}

/// The type of expression `e` of `f` (a function of `m`, when there is a module; `f`
/// may be a working copy of it), computed from the types its operands already have:
///
/// * leaves and tuples as [`infer_leaf`]; items take their field's type;
/// * op calls by [`infer_op`]; calls of module functions and of function-typed
///   variables by [`derive_call`]; calls of PrimFuncs (after `CallTIRRewrite`) are
///   effects; packed calls take their `sinfo_args`;
/// * `if` joins its branches' results with [`lca`]; a local function is a callable
///   of its parameters and declared result;
/// * constants, globals and extern functions keep the type they have (a constant with
///   data is typed by it).
///
/// `Ok(None)` when nothing can be said (an op reference, an untyped operand).
pub fn infer_expr(f: &mut RelaxFunction, e: Expr, m: Option<&Module>, an: &Analyzer) -> Result<Option<Ty>, InferError> {
    match f.exprs[e].clone() {
        ExprData::Var(_)
        | ExprData::Tuple(_)
        | ExprData::Shape(_)
        | ExprData::Prim(_)
        | ExprData::Str(_)
        | ExprData::DType(_) => Ok(infer_leaf(f, e)),
        ExprData::GetItem { tuple, index } => {
            let Some(t) = f.ty_of(tuple) else { return Ok(None) };
            match f.pool.ty(t).clone() {
                TyData::Tuple(fields) => match fields.get(index as usize) {
                    Some(&ft) => Ok(Some(ft)),
                    None => Err(InferError::new(format!(
                        "index {index} is out of range for a tuple of {} field{}",
                        fields.len(),
                        if fields.len() == 1 { "" } else { "s" }
                    ))),
                },
                TyData::Object => Ok(Some(f.pool.intern_ty(TyData::Object))),
                _ => Err(InferError::new(format!(
                    "`[{index}]` needs a tuple, but the value has type `{}`",
                    crate::printer::print_ty_in(f, t)
                ))),
            }
        }
        ExprData::Const(c) => {
            let Some(m) = m else { return Ok(f.ty_of(e)) };
            let Some(data) = m.constants.get(c) else { return Ok(f.ty_of(e)) };
            match (&data.payload, &data.shape) {
                (ConstPayload::Data(_), Some(shape)) if !data.dtype.is_void() => {
                    let dims = shape.iter().map(|&d| f.pool.i64(d)).collect();
                    Ok(Some(f.pool.intern_ty(TyData::tensor(dims, data.dtype))))
                }
                _ => Ok(f.ty_of(e)),
            }
        }
        ExprData::Global(g) => {
            if let Some(t) = f.ty_of(e) {
                return Ok(Some(t));
            }
            // An opaque callable, as the parser types `cls.f`.
            let pure = match m.and_then(|m| m.globals.get(g)).map(|gd| &gd.func) {
                Some(Func::Relax(callee)) => callee.func.pure,
                _ => true,
            };
            let ret = f.pool.intern_ty(TyData::Object);
            Ok(Some(f.pool.intern_ty(TyData::Callable { params: None, ret, pure })))
        }
        ExprData::ExternFunc(_) => {
            if let Some(t) = f.ty_of(e) {
                return Ok(Some(t));
            }
            let ret = f.pool.intern_ty(TyData::Object);
            Ok(Some(f.pool.intern_ty(TyData::Callable { params: None, ret, pure: false })))
        }
        ExprData::Op(_) => Ok(f.ty_of(e)),
        ExprData::Call(call) => match f.exprs[call.callee].clone() {
            ExprData::Op(_) => infer_op(f, &call, an),
            ExprData::ExternFunc(_) => Ok(Some(sinfo_result(f, &call.sinfo_args))),
            ExprData::Global(g) => {
                let Some(m) = m else { return Ok(f.ty_of(e)) };
                let name = format!("cls.{}", m.globals.get(g).map_or("?", |gd| gd.name.as_str()));
                match m.globals.get(g).map(|gd| &gd.func) {
                    Some(Func::Relax(callee)) => {
                        let params: Vec<Ty> = callee.func.params.iter().map(|&p| callee.vars[p].ty).collect();
                        let sig = CalleeSig {
                            name: &name,
                            pool: Some(&callee.pool),
                            params: &params,
                            param_vars: &callee.func.params,
                            ret: callee.func.ret,
                        };
                        let args = f.list(call.args).to_vec();
                        derive_call(f, sig, &args, an).map(Some)
                    }
                    Some(Func::Prim(_)) => Ok(Some(f.pool.intern_ty(TyData::void()))),
                    _ => Ok(f.ty_of(e)),
                }
            }
            ExprData::Var(v) => {
                let t = f.vars[v].ty;
                match f.pool.ty(t).clone() {
                    TyData::Callable { params: Some(params), ret, .. } => {
                        let name = f.vars[v].name.clone();
                        let sig = CalleeSig { name: &name, pool: None, params: &params, param_vars: &[], ret };
                        let args = f.list(call.args).to_vec();
                        derive_call(f, sig, &args, an).map(Some)
                    }
                    TyData::Callable { params: None, ret, .. } => Ok(Some(ret)),
                    _ => Ok(f.ty_of(e)),
                }
            }
            _ => Ok(f.ty_of(e)),
        },
        ExprData::If { then_branch, else_branch, .. } => {
            let (Some(a), Some(b)) = (seq_ty(f, then_branch), seq_ty(f, else_branch)) else { return Ok(None) };
            Ok(Some(lca(&mut f.pool, a, b, an)))
        }
        ExprData::Function(node) => {
            let params: Vec<Ty> = node.params.iter().map(|&p| f.vars[p].ty).collect();
            Ok(Some(f.pool.intern_ty(TyData::Callable { params: Some(params), ret: node.ret, pure: node.pure })))
        }
    }
}

/// The type of a sequence's result.
fn seq_ty(f: &RelaxFunction, s: Seq) -> Option<Ty> {
    f.ty_of(f.seq(s).body)
}
