//! Call result derivation (`algorithms.md` §9.3): the type of a call of a Relax
//! function, from the callee's parameter types and the argument types.
//!
//! 1. Each parameter type is walked together with its argument's type. A dim or prim
//!    value that is a bare symbolic variable binds the variable to the argument's dim
//!    (the first occurrence wins); a tensor whose shape is a shape variable binds that
//!    variable to the argument's shape. Compound dims bind nothing.
//! 2. Each parameter type, with the bindings substituted (and erased where a variable
//!    stayed unbound), is checked against its argument's type with `BaseCheck`: L0
//!    and L1 are errors (an already bound variable whose second occurrence is provably
//!    different is L0, where TVM only checks constants), L2 is accepted.
//! 3. The result type is substituted, simplified and erased (§9.4): whatever still
//!    mentions a callee variable the caller cannot name is dropped.

use crate::arith::Analyzer;
use crate::entities::{Expr, PrimExpr, Ty, Var};
use crate::pool::Pool;
use crate::printer::{print_ty_in, print_ty_pool};
use crate::relax::{ExprData, RelaxFunction};
use crate::ty::{TensorShape, TyData};

use super::InferError;
use super::check::{CheckLevel, check_with, prim_check};
use super::erase::{VarMap, erase_to_well_defined, transfer};

/// The signature of a called function.
#[derive(Clone, Copy, Debug)]
pub struct CalleeSig<'a> {
    /// How the callee is named in messages (`cls.f`, `g`).
    pub name: &'a str,
    /// The pool the parameter and result types belong to; `None` when they are types of
    /// the caller itself (local functions, function-typed variables).
    pub pool: Option<&'a Pool>,
    /// Parameter types.
    pub params: &'a [Ty],
    /// The Relax variables of the parameters, when known (so that a shape variable
    /// parameter binds to its argument).
    pub param_vars: &'a [Var],
    /// The result type.
    pub ret: Ty,
}

/// The result type of calling `callee` with `args` (leaves of `caller`).
pub fn derive_call(
    caller: &mut RelaxFunction,
    callee: CalleeSig<'_>,
    args: &[Expr],
    an: &Analyzer,
) -> Result<Ty, InferError> {
    let n = callee.params.len();
    if n != args.len() {
        return Err(InferError::new(format!(
            "`{}` takes {n} argument{}, but {} {} given",
            callee.name,
            if n == 1 { "" } else { "s" },
            args.len(),
            if args.len() == 1 { "was" } else { "were" }
        )));
    }
    let arg_tys: Vec<Ty> =
        args.iter().map(|&a| caller.ty_of(a).unwrap_or_else(|| caller.pool.intern_ty(TyData::Object))).collect();
    // 1. Bind.
    let mut map = VarMap::default();
    for (i, (&p, &a)) in callee.params.iter().zip(&arg_tys).enumerate() {
        let from = callee.pool.unwrap_or(&caller.pool);
        bind(from, p, &caller.pool, a, &mut map);
        if let Some(&pv) = callee.param_vars.get(i) {
            bind_param_var(caller, from, p, pv, args[i], &mut map);
        }
    }
    // 2. Check.
    for (i, (&p, &a)) in callee.params.iter().zip(&arg_tys).enumerate() {
        let expected = match callee.pool {
            Some(from) => transfer(from, p, &mut caller.pool, &map, an),
            None => erase_to_well_defined(&mut caller.pool, p, &map, &|_| true, &|_| true, an),
        };
        // `BaseCheck`, except that dims proved different are L0 even when symbolic (a
        // variable bound to `n + 1` given `n` in a second place).
        let pool = &caller.pool;
        let level = check_with(
            pool,
            expected,
            pool,
            a,
            &mut |x, y| match prim_check(pool, an, x, y) {
                CheckLevel::FailL2 if an.prove_not_equal(pool, x, y) => CheckLevel::FailL0,
                l => l,
            },
            &mut |_, _| None,
        );
        if matches!(level, CheckLevel::FailL0 | CheckLevel::FailL1) {
            let want = match callee.pool {
                Some(from) => print_ty_pool(from, p),
                None => print_ty_in(caller, p),
            };
            let want_now = print_ty_in(caller, expected);
            let given = print_ty_in(caller, a);
            let also =
                if want_now != want && !want_now.is_empty() { format!(" (here `{want_now}`)") } else { String::new() };
            return Err(InferError::new(format!(
                "argument {} of `{}` has type `{given}`, but the parameter has type `{want}`{also}",
                i + 1,
                callee.name
            )));
        }
    }
    // 3. Substitute into the result.
    Ok(match callee.pool {
        Some(from) => transfer(from, callee.ret, &mut caller.pool, &map, an),
        None => erase_to_well_defined(&mut caller.pool, callee.ret, &map, &|_| true, &|_| true, an),
    })
}

/// Walks a parameter type (of `pa`) with an argument type (of `pb`), binding bare
/// variables and shape variables to what the argument has in their place.
fn bind(pa: &Pool, param: Ty, pb: &Pool, arg: Ty, map: &mut VarMap) {
    let syms = std::cell::RefCell::new(std::mem::take(&mut map.syms));
    let shapes = std::cell::RefCell::new(std::mem::take(&mut map.shapes));
    let _ = check_with(
        pa,
        param,
        pb,
        arg,
        &mut |p: PrimExpr, a: PrimExpr| {
            if let Some(v) = pa.as_var(p) {
                syms.borrow_mut().entry(v).or_insert(a);
            }
            CheckLevel::Pass
        },
        &mut |ps: &TensorShape, as_: &TensorShape| {
            if let TensorShape::Var(v) = ps {
                if !matches!(as_, TensorShape::Unknown) {
                    shapes.borrow_mut().entry(*v).or_insert_with(|| as_.clone());
                }
                return Some(CheckLevel::Pass);
            }
            None
        },
    );
    map.syms = syms.into_inner();
    map.shapes = shapes.into_inner();
}

/// A `R.Shape` parameter binds its variable (used as a tensor shape elsewhere in the
/// signature) to its argument: a literal shape gives its dims, a shape variable itself.
fn bind_param_var(caller: &RelaxFunction, from: &Pool, p: Ty, pv: Var, arg: Expr, map: &mut VarMap) {
    if !matches!(from.ty(p), TyData::Shape { .. }) || map.shapes.contains_key(&pv) {
        return;
    }
    let shape = match &caller.exprs[arg] {
        ExprData::Shape(d) => TensorShape::Dims(d.clone()),
        ExprData::Var(v) => TensorShape::Var(*v),
        _ => return,
    };
    map.shapes.insert(pv, shape);
}
