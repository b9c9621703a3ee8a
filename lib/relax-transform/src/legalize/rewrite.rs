//! Writing legalized calls back into a Relax function, and the types that follow.
//!
//! * [`bindings_in_order`]: the bindings in the order TVM's `ExprMutator` visits them
//!   (program order, entering `if` branches and local functions where they appear),
//!   which decides which call creates a shared kernel and how kernels are numbered;
//! * [`call_tir`]: the value becomes `R.call_tir(...)`;
//! * [`packed`]: the value becomes `R.call_packed(name, args...)` (wrapped in
//!   `R.call_pure_packed` for a pure op);
//! * [`retype`]: afterwards, as TVM re-emits bindings whose value changed type, a
//!   variable bound to a variable, tuple or tuple item takes its value's new type, and
//!   a function whose result type is a base of its body's new type takes that type
//!   (`Function`'s constructor lets a more precise body override the annotation).

use std::collections::HashMap;

use relax_ir::arith::Analyzer;
use relax_ir::op::OpRef;
use relax_ir::ops;
use relax_ir::{
    BindingKind, Call, Expr, ExprData, Global, PrimExpr, RelaxFunction, Seq, SymVar, TensorShape, Ty, TyData,
};

use super::Pending;

/// A binding's value and, for plain bindings, its variable.
pub type BindingRef = (Expr, Option<relax_ir::Var>);

/// The bindings of `f` in visiting order.
pub fn bindings_in_order(f: &RelaxFunction) -> Vec<BindingRef> {
    let mut out = Vec::new();
    seq_bindings(f, f.func.body, &mut out);
    out
}

fn seq_bindings(f: &RelaxFunction, s: Seq, out: &mut Vec<BindingRef>) {
    for &b in &f.seq(s).blocks {
        for bd in &f.blocks[b].bindings {
            for nested in f.exprs[bd.value].nested_seqs() {
                seq_bindings(f, nested, out);
            }
            let var = matches!(bd.kind, BindingKind::Value).then_some(bd.var);
            out.push((bd.value, var));
        }
    }
}

/// The variable bound by a plain binding of `value`.
fn bound_var(f: &RelaxFunction, value: Expr) -> Option<relax_ir::Var> {
    bindings_in_order(f).into_iter().find(|(v, _)| *v == value).and_then(|(_, var)| var)
}

/// Gives `var` (and its uses) the type `ty`.
pub fn set_var_type(f: &mut RelaxFunction, var: relax_ir::Var, ty: Ty) {
    if f.vars[var].ty == ty {
        return;
    }
    f.vars[var].ty = ty;
    let mut uses = Vec::new();
    f.for_each_reachable(|e, d| {
        if matches!(d, ExprData::Var(v) if *v == var) {
            uses.push(e);
        }
    });
    for e in uses {
        f.expr_ty.set(e, Some(ty));
    }
}

/// Replaces the call at `value` by `R.call_tir(callee, args, out_sinfo, tir_vars)`.
pub fn call_tir(f: &mut RelaxFunction, value: Expr, callee: Global, p: Pending) {
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (&pv, &cv) in &p.inverse {
        let e = f.pool.var_ref(cv);
        map.insert(pv, e);
    }
    let mut out_tys = Vec::new();
    for (dims, dtype) in &p.outputs {
        let dims: Vec<PrimExpr> = dims.iter().map(|&d| f.pool.import_prim(&p.func.pool, d, &mut map)).collect();
        let ndim = dims.len() as i32;
        let t = TyData::Tensor { shape: TensorShape::Dims(dims), dtype: *dtype, ndim, vdevice: p.vdevice.clone() };
        out_tys.push(f.pool.intern_ty(t));
    }
    let out_ty = if out_tys.len() == 1 { out_tys[0] } else { f.pool.intern_ty(TyData::Tuple(out_tys)) };
    let object = f.pool.intern_ty(TyData::Object);
    let callable = f.pool.intern_ty(TyData::Callable { params: None, ret: object, pure: true });
    let gexpr = f.add_expr(ExprData::Global(callee), Some(callable));
    let arg_tys: Vec<Ty> = p.call_args.iter().map(|&a| f.ty_of(a).unwrap_or(object)).collect();
    let tuple_ty = f.pool.intern_ty(TyData::Tuple(arg_tys));
    let tuple = f.add_tuple(p.call_args.iter().copied(), Some(tuple_ty));
    let mut args = vec![gexpr, tuple];
    if !p.scalars.is_empty() {
        let dims: Vec<PrimExpr> = p.scalars.iter().map(|&s| map[&s]).collect();
        let st = f.pool.intern_ty(TyData::shape(dims.clone()));
        args.push(f.add_expr(ExprData::Shape(dims), Some(st)));
    }
    let op = f.add_expr(ExprData::Op(OpRef::Known(ops::CALL_TIR)), None);
    let args = f.new_list(args);
    f.exprs[value] = ExprData::Call(Call { callee: op, args, attrs: relax_ir::Attrs::new(), sinfo_args: vec![out_ty] });
    f.expr_ty.set(value, Some(out_ty));
    if let Some(var) = bound_var(f, value) {
        set_var_type(f, var, out_ty);
    }
}

/// Replaces the call at `value` by a call of the packed function `name` with the same
/// arguments, typed as the call was; `R.call_pure_packed` when the op is pure.
pub fn packed(f: &mut RelaxFunction, value: Expr, name: &str, pure: bool) {
    let ExprData::Call(call) = f.exprs[value].clone() else { return };
    let ty = f.ty_of(value).unwrap_or_else(|| f.pool.intern_ty(TyData::Object));
    let object = f.pool.intern_ty(TyData::Object);
    let callable = f.pool.intern_ty(TyData::Callable { params: None, ret: object, pure: false });
    let ext = f.add_expr(ExprData::ExternFunc(name.to_string()), Some(callable));
    let data = if pure {
        let op = ops::CALL_PURE_PACKED;
        let callee = f.add_expr(ExprData::Op(OpRef::Known(op)), None);
        let mut args = vec![ext];
        args.extend(f.list(call.args).iter().copied());
        let args = f.new_list(args);
        Call { callee, args, attrs: relax_ir::Attrs::new(), sinfo_args: vec![ty] }
    } else {
        Call { callee: ext, args: call.args, attrs: relax_ir::Attrs::new(), sinfo_args: vec![ty] }
    };
    f.exprs[value] = ExprData::Call(data);
}

/// True when `base` is a base of `derived` (`StructInfoBaseCheck`, with shape dims
/// compared by the analyzer).
fn is_base_of(f: &RelaxFunction, base: Ty, derived: Ty) -> bool {
    if base == derived {
        return true;
    }
    let an = Analyzer::new();
    match (f.pool.ty(base), f.pool.ty(derived)) {
        (TyData::Object, _) => true,
        (
            TyData::Tensor { shape: s1, dtype: d1, ndim: n1, vdevice: v1 },
            TyData::Tensor { shape: s2, dtype: d2, ndim: n2, vdevice: v2 },
        ) => {
            (d1.is_void() || d1 == d2)
                && (*n1 < 0 || n1 == n2)
                && (v1.is_none() || v1 == v2)
                && match (s1, s2) {
                    (TensorShape::Unknown, _) => true,
                    (TensorShape::Dims(a), TensorShape::Dims(b)) => {
                        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| an.prove_equal(&f.pool, x, y))
                    }
                    _ => false,
                }
        }
        (TyData::Tuple(a), TyData::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| is_base_of(f, x, y))
        }
        _ => false,
    }
}

/// The type of a leaf-ish value from its operands' current types.
fn derived_type(f: &mut RelaxFunction, e: Expr) -> Option<Ty> {
    match f.exprs[e].clone() {
        ExprData::Var(v) => Some(f.vars[v].ty),
        ExprData::Tuple(fields) => {
            let fields = f.list(fields).to_vec();
            let tys: Option<Vec<Ty>> = fields.iter().map(|&x| derived_type(f, x)).collect();
            tys.map(|t| f.pool.intern_ty(TyData::Tuple(t)))
        }
        ExprData::GetItem { tuple, index } => match derived_type(f, tuple).map(|t| f.pool.ty(t).clone()) {
            Some(TyData::Tuple(fields)) => fields.get(index as usize).copied(),
            _ => None,
        },
        _ => None,
    }
}

/// Propagates the new types of legalized bindings (see the module documentation).
pub fn retype(f: &mut RelaxFunction) {
    for (value, var) in bindings_in_order(f) {
        let Some(var) = var else { continue };
        if !matches!(f.exprs[value], ExprData::Var(_) | ExprData::Tuple(_) | ExprData::GetItem { .. }) {
            continue;
        }
        let Some(t) = derived_type(f, value) else { continue };
        if f.ty_of(value) != Some(t) {
            f.expr_ty.set(value, Some(t));
            set_var_type(f, var, t);
        }
    }
    let body = f.body().body;
    if let Some(t) = derived_type(f, body) {
        f.expr_ty.set(body, Some(t));
        // A result type says only what the signature can: what the body alone defines
        // (`R.Tensor(s, ...)` of a shape variable, `match_cast` variables) is erased, as
        // the parser does, or the annotation could not be printed and read back.
        let params = f.func.params.clone();
        let t = relax_ir::infer::erase_to_signature(f, t, &params, &Analyzer::new());
        if t != f.func.ret && is_base_of(f, f.func.ret, t) {
            f.func.ret = t;
        }
    }
}
