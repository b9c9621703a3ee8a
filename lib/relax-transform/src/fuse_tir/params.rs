//! The signature clean-ups `fuse-tir` runs first, on every private Relax function (TVM's
//! `ExpandTupleArguments` and `RemoveUnusedParameters`).
//!
//! * [`expand_tuple_arguments`]: a tuple parameter becomes one parameter per field
//!   (`t_0`, `t_1`, ...), rebuilt into the tuple at the start of the body; callers pass
//!   the fields. The module then goes through `canonicalize-bindings` and dead-code
//!   elimination (always, as TVM's pass sequence does), which fold the rebuilt tuples
//!   away.
//! * [`remove_unused_parameters`]: a parameter the body does not use is dropped; the
//!   symbolic variables the body uses and the remaining parameters do not define become
//!   `param_<name>: R.Prim(value=<name>)` parameters, and callers pass
//!   `R.prim_value(...)` of what the dropped arguments gave them. This is how the
//!   `tir_vars: R.Shape([...])` parameter of a fused function becomes scalars.

use std::collections::{HashMap, HashSet};

use relax_ir::{
    Binding, BindingKind, BlockData, Call, Expr, ExprData, Func, Global, Module, PrimExpr, RelaxFunction, SymVar,
    TensorShape, Ty, TyData, Var,
};

use crate::walk::all_blocks;

fn is_private(f: &RelaxFunction) -> bool {
    f.func.attrs.get("global_symbol").is_none()
}

fn relax_globals(m: &Module) -> Vec<Global> {
    m.live().filter(|(_, gd)| matches!(gd.func, Func::Relax(_))).map(|(g, _)| g).collect()
}

/// Expands the tuple parameters of private functions, then canonicalizes bindings and
/// removes dead code; returns true if anything changed.
pub fn expand_tuple_arguments(m: &mut Module) -> bool {
    let mut expanded: HashSet<Global> = HashSet::new();
    for g in relax_globals(m) {
        let Some(f) = m.relax_mut(g) else { continue };
        if !is_private(f) || !f.func.params.iter().any(|&p| matches!(f.pool.ty(f.vars[p].ty), TyData::Tuple(_))) {
            continue;
        }
        let mut params = Vec::new();
        let mut bindings = Vec::new();
        for p in f.func.params.clone() {
            expand_param(f, p, &mut params, &mut bindings);
        }
        f.func.params = params;
        let blk = f.blocks.push(BlockData { dataflow: false, bindings });
        let body = f.func.body;
        f.seq_mut(body).blocks.insert(0, blk);
        expanded.insert(g);
    }
    let mut changed = !expanded.is_empty();
    if changed {
        for g in relax_globals(m) {
            let Some(mut f) = m.relax(g).cloned() else { continue };
            if expand_call_args(&mut f, &expanded) {
                m.globals[g].func = Func::Relax(Box::new(f));
            }
        }
    }
    for g in relax_globals(m) {
        if let Some(f) = m.relax_mut(g) {
            changed |= crate::canonicalize_bindings::canonicalize(f);
        }
    }
    changed | dead_code_elimination(m)
}

/// TVM's `DeadCodeElimination`: functions unreachable from the public ones are removed,
/// then unused bindings without effects (`match_cast` bindings are kept, as in TVM).
pub fn dead_code_elimination(m: &mut Module) -> bool {
    let mut changed = crate::dead_code_elimination::remove_unreachable(m);
    let impure: HashSet<Global> = m
        .live()
        .filter(|(_, gd)| match &gd.func {
            Func::Relax(x) => !x.func.pure,
            _ => true,
        })
        .map(|(g, _)| g)
        .collect();
    for g in relax_globals(m) {
        if let Some(f) = m.relax_mut(g) {
            changed |= crate::fold_constant::remove_unused_in(f, &impure);
        }
    }
    changed
}

fn expand_param(f: &mut relax_ir::RelaxFunction, p: Var, params: &mut Vec<Var>, bindings: &mut Vec<Binding>) {
    let ty = f.vars[p].ty;
    let TyData::Tuple(fields) = f.pool.ty(ty).clone() else {
        params.push(p);
        return;
    };
    let name = f.vars[p].name.clone();
    let mut items = Vec::new();
    for (i, &ft) in fields.iter().enumerate() {
        let np = f.add_var(format!("{name}_{i}"), ft, false);
        items.push(f.use_var(np));
        expand_param(f, np, params, bindings);
    }
    let value = f.add_tuple(items, Some(ty));
    bindings.push(Binding { var: p, value, kind: BindingKind::Value });
}

/// Replaces tuple arguments of calls of `expanded` functions by their items (bound to
/// new variables before the call, in A-normal form).
fn expand_call_args(f: &mut RelaxFunction, expanded: &HashSet<Global>) -> bool {
    let mut changed = false;
    let mut names = crate::fuse_ops::Names::default();
    for (_, b) in all_blocks(f) {
        let dataflow = f.blocks[b].dataflow;
        let bindings = std::mem::take(&mut f.blocks[b].bindings);
        let mut out = Vec::with_capacity(bindings.len());
        for bd in bindings {
            if let ExprData::Call(call) = f.exprs[bd.value].clone()
                && matches!(f.exprs[call.callee], ExprData::Global(g) if expanded.contains(&g))
            {
                let mut args = Vec::new();
                for a in f.list(call.args).to_vec() {
                    expand_arg(f, a, dataflow, &mut names, &mut out, &mut args);
                }
                let args = f.new_list(args);
                f.exprs[bd.value] = ExprData::Call(Call { args, ..call });
                changed = true;
            }
            out.push(bd);
        }
        f.blocks[b].bindings = out;
    }
    changed
}

fn expand_arg(
    f: &mut RelaxFunction,
    a: Expr,
    dataflow: bool,
    names: &mut crate::fuse_ops::Names,
    out: &mut Vec<Binding>,
    args: &mut Vec<Expr>,
) {
    let fields = match f.ty_of(a).map(|t| f.pool.ty(t).clone()) {
        Some(TyData::Tuple(fields)) => fields,
        _ => {
            args.push(a);
            return;
        }
    };
    for (i, ft) in fields.into_iter().enumerate() {
        let tuple = match f.exprs[a] {
            ExprData::Var(v) => f.use_var(v),
            _ => a,
        };
        let item = f.add_expr(ExprData::GetItem { tuple, index: i as u32 }, Some(ft));
        let v = f.add_var(names.fresh("lv"), ft, dataflow);
        out.push(Binding { var: v, value: item, kind: BindingKind::Value });
        let u = f.use_var(v);
        expand_arg(f, u, dataflow, names, out, args);
    }
}

/// What a private function keeps of its signature.
struct Change {
    /// For each old parameter, whether it stays.
    keep: Vec<bool>,
    /// The old parameters (for matching symbolic variables at call sites).
    old_params: Vec<Var>,
    /// New scalar parameters: the symbolic variables they carry (in the callee).
    scalars: Vec<SymVar>,
}

/// Removes unused parameters of private functions; returns true if any was removed.
pub fn remove_unused_parameters(m: &mut Module) -> bool {
    let mut changes: HashMap<Global, (Change, Global)> = HashMap::new();
    for g in relax_globals(m) {
        let Some(f) = m.relax(g) else { continue };
        if !is_private(f) {
            continue;
        }
        let mut used: HashSet<Var> = HashSet::new();
        f.for_each_reachable(|_, d| {
            if let ExprData::Var(v) = d {
                used.insert(*v);
            }
        });
        let keep: Vec<bool> = f.func.params.iter().map(|p| used.contains(p)).collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        let mut defined = HashSet::new();
        for (&p, &k) in f.func.params.iter().zip(&keep) {
            if k {
                crate::fuse_ops::function::defining_vars(f, f.vars[p].ty, &mut defined);
            }
        }
        let scalars: Vec<SymVar> = body_sym_vars(f).into_iter().filter(|v| !defined.contains(v)).collect();
        let old_params = f.func.params.clone();
        let mut f = f.clone();
        let mut params: Vec<Var> = old_params.iter().zip(&keep).filter(|&(_, &k)| k).map(|(&p, _)| p).collect();
        for &v in &scalars {
            let dtype = f.pool.vars[v].dtype;
            let e = f.pool.var_ref(v);
            let ty = f.pool.intern_ty(TyData::Prim { dtype, value: Some(e) });
            let name = format!("param_{}", f.pool.vars[v].name);
            params.push(f.add_var(name, ty, false));
        }
        f.func.params = params;
        m.globals[g].func = Func::Relax(Box::new(f));
        changes.insert(g, (Change { keep, old_params, scalars }, g));
    }
    if changes.is_empty() {
        return false;
    }
    let impure: HashSet<Global> = m
        .live()
        .filter(|(_, gd)| match &gd.func {
            Func::Relax(x) => !x.func.pure,
            _ => true,
        })
        .map(|(g, _)| g)
        .collect();
    for g in relax_globals(m) {
        let Some(mut f) = m.relax(g).cloned() else { continue };
        let mut changed = false;
        for (_, b) in all_blocks(&f) {
            for bd in f.blocks[b].bindings.clone() {
                let ExprData::Call(call) = f.exprs[bd.value].clone() else { continue };
                let ExprData::Global(callee) = f.exprs[call.callee] else { continue };
                let Some((ch, _)) = changes.get(&callee) else { continue };
                let Some(callee_f) = m.relax(callee) else { continue };
                let old = f.list(call.args).to_vec();
                let args = update_args(&mut f, callee_f, ch, &old);
                let args = f.new_list(args);
                f.exprs[bd.value] = ExprData::Call(Call { args, ..call });
                changed = true;
            }
        }
        if changed {
            crate::fold_constant::remove_unused_in(&mut f, &impure);
            m.globals[g].func = Func::Relax(Box::new(f));
        }
    }
    true
}

/// The arguments of a call after the callee's change.
fn update_args(f: &mut RelaxFunction, callee: &RelaxFunction, ch: &Change, old: &[Expr]) -> Vec<Expr> {
    let mut args: Vec<Expr> = old.iter().zip(&ch.keep).filter(|&(_, &k)| k).map(|(&a, _)| a).collect();
    if ch.scalars.is_empty() {
        return args;
    }
    // What each callee symbolic variable is at this call.
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (&p, &a) in ch.old_params.iter().zip(old) {
        let pt = callee.vars[p].ty;
        let values: Option<Vec<PrimExpr>> = match &f.exprs[a] {
            ExprData::Shape(dims) => Some(dims.clone()),
            ExprData::Prim(v) => Some(vec![*v]),
            _ => f.ty_of(a).and_then(|t| match f.pool.ty(t) {
                TyData::Tensor { shape: TensorShape::Dims(d), .. } => Some(d.clone()),
                TyData::Shape { values: Some(d), .. } => Some(d.clone()),
                TyData::Prim { value: Some(v), .. } => Some(vec![*v]),
                _ => None,
            }),
        };
        let params: Option<Vec<PrimExpr>> = match callee.pool.ty(pt) {
            TyData::Tensor { shape: TensorShape::Dims(d), .. } => Some(d.clone()),
            TyData::Shape { values: Some(d), .. } => Some(d.clone()),
            TyData::Prim { value: Some(v), .. } => Some(vec![*v]),
            _ => None,
        };
        if let (Some(ps), Some(vs)) = (params, values) {
            for (pe, ve) in ps.into_iter().zip(vs) {
                if let Some(v) = callee.pool.as_var(pe) {
                    map.entry(v).or_insert(ve);
                }
            }
        }
    }
    for v in &ch.scalars {
        let e = match map.get(v) {
            Some(&e) => e,
            None => continue,
        };
        args.push(crate::emit::prim(f, e));
    }
    args
}

/// The symbolic variables the body of `f` mentions (values and types), in first-use
/// order (TVM's `FreeSymbolicVars` of the body).
fn body_sym_vars(f: &RelaxFunction) -> Vec<SymVar> {
    let mut out = Vec::new();
    let mut seen_ty: HashSet<Ty> = HashSet::new();
    let mut ty = |t: Ty, out: &mut Vec<SymVar>| {
        if seen_ty.insert(t) {
            f.pool.ty_vars(t, out);
        }
    };
    for &b in &f.body().blocks {
        for bd in &f.blocks[b].bindings {
            let mut stack = vec![bd.value];
            while let Some(e) = stack.pop() {
                match &f.exprs[e] {
                    ExprData::Call(c) => {
                        for &t in &c.sinfo_args {
                            ty(t, &mut out);
                        }
                    }
                    ExprData::Shape(dims) => {
                        for &d in dims {
                            f.pool.collect_vars(d, &mut out);
                        }
                    }
                    ExprData::Prim(p) => f.pool.collect_vars(*p, &mut out),
                    _ => {}
                }
                if let Some(t) = f.ty_of(e) {
                    ty(t, &mut out);
                }
                let mut ops = f.operands(e);
                ops.reverse();
                stack.extend(ops);
            }
            if let BindingKind::MatchCast(t) = bd.kind {
                ty(t, &mut out);
            }
        }
    }
    if let Some(t) = f.ty_of(f.body().body) {
        ty(t, &mut out);
    }
    out
}
