//! `normalize`: re-establishes the normal form after hand-written input or a pass.
//!
//! * A-normal form: an operand that is not a leaf (a nested call, item access, `if` or
//!   function) is bound to a fresh variable just before the binding that uses it.
//! * Empty blocks are removed and adjacent blocks of the same kind merged.
//! * Every expression's type is recomputed bottom-up with the inference rules
//!   (`relax_ir::infer`): op calls by their rules, calls of module functions by matching
//!   the callee's signature, `if` by joining its branches. Variables keep their types
//!   (their annotations), except one typed `R.Object` because no rule typed its value,
//!   which takes the value's type. A type error found on the way is the pass's error.

use relax_ir::arith::Analyzer;
use relax_ir::diag::Diagnostic;
use relax_ir::{Binding, BindingKind, Expr, ExprData, Module, RelaxFunction, TyData};
use relax_pass::{FunctionContext, PassResult};

use crate::walk::tidy_blocks;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "normalize" {
        summary: "re-establish A-normal form, merge blocks, recompute types",
        run: run,
    }
}

/// Calls are typed against the module's signatures; a call of the function from itself
/// keeps its type (the function is out of the module while the pass runs).
fn run(f: &mut RelaxFunction, cx: &mut FunctionContext<'_>) -> PassResult {
    normalize_in(f, Some(cx.module()))
}

/// Normalizes one function without a module (calls of module functions keep their
/// types); returns true if anything changed, or the type errors found.
pub fn normalize(f: &mut RelaxFunction) -> Result<bool, Vec<Diagnostic>> {
    normalize_in(f, None)
}

/// Normalizes one function of `m` (or a copy of one); returns true if anything changed,
/// or the type errors found.
pub fn normalize_in(f: &mut RelaxFunction, m: Option<&Module>) -> Result<bool, Vec<Diagnostic>> {
    let mut changed = false;
    let mut counter = 0u32;
    for loc in f.all_seqs() {
        for b in f.seq(loc).blocks.clone() {
            let dataflow = f.blocks[b].dataflow;
            let bindings = std::mem::take(&mut f.blocks[b].bindings);
            let mut out: Vec<Binding> = Vec::with_capacity(bindings.len());
            for bd in bindings {
                changed |= flatten_operands(f, bd.value, dataflow, &mut out, &mut counter);
                out.push(bd);
            }
            f.blocks[b].bindings = out;
        }
        // The result must be a leaf too.
        let body = f.seq(loc).body;
        if !f.is_leaf(body) {
            let mut extra = Vec::new();
            let leaf = bind_fresh(f, body, false, &mut extra, &mut counter);
            let nb = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: extra });
            let s = f.seq_mut(loc);
            s.blocks.push(nb);
            s.body = leaf;
            changed = true;
        }
    }
    changed |= fill_types(f);
    match relax_ir::infer::retype_function(f, m, &Analyzer::new()) {
        Ok(c) => changed |= c,
        Err(errors) => {
            return Err(errors
                .into_iter()
                .map(|(e, err)| Diagnostic::error(*f.spans.exprs.get(e), err.message))
                .collect());
        }
    }
    Ok(changed | tidy_blocks(f))
}

/// Binds non-leaf operands of `e` (recursively) to fresh variables appended to `out`.
fn flatten_operands(f: &mut RelaxFunction, e: Expr, dataflow: bool, out: &mut Vec<Binding>, counter: &mut u32) -> bool {
    let mut changed = false;
    for op in f.operands(e) {
        if matches!(f.exprs[op], ExprData::Tuple(_)) {
            changed |= flatten_operands(f, op, dataflow, out, counter);
            continue;
        }
        if f.is_leaf(op) {
            continue;
        }
        let leaf = bind_fresh(f, op, dataflow, out, counter);
        replace_operand(f, e, op, leaf);
        changed = true;
    }
    changed
}

fn bind_fresh(f: &mut RelaxFunction, value: Expr, dataflow: bool, out: &mut Vec<Binding>, counter: &mut u32) -> Expr {
    flatten_operands(f, value, dataflow, out, counter);
    let ty = match f.ty_of(value) {
        Some(t) => t,
        None => f.pool.intern_ty(TyData::Object),
    };
    let names: std::collections::HashSet<&str> = f.vars.values().map(|v| v.name.as_str()).collect();
    let name = loop {
        let n = if *counter == 0 { "lv".to_string() } else { format!("lv{counter}") };
        *counter += 1;
        if !names.contains(n.as_str()) {
            break n;
        }
    };
    let var = f.add_var(name, ty, dataflow);
    out.push(Binding { var, value, kind: BindingKind::Value });
    f.use_var(var)
}

fn replace_operand(f: &mut RelaxFunction, e: Expr, old: Expr, new: Expr) {
    let RelaxFunction { exprs, lists, .. } = f;
    exprs[e].map_operands(lists, |x| if x == old { new } else { x });
}

/// Gives a type to reachable expressions that lack one, when it follows from operands.
fn fill_types(f: &mut RelaxFunction) -> bool {
    let mut changed = false;
    let mut order: Vec<Expr> = Vec::new();
    f.for_each_reachable(|e, _| order.push(e));
    // Operands come after their users in the walk; type them first.
    for &e in order.iter().rev() {
        if f.ty_of(e).is_some() || matches!(f.exprs[e], ExprData::Op(_)) {
            continue;
        }
        let ty = match f.exprs[e].clone() {
            ExprData::Var(v) => Some(f.vars[v].ty),
            ExprData::Tuple(fields) => {
                let tys: Option<Vec<_>> = f.list(fields).iter().map(|&x| f.ty_of(x)).collect();
                tys.map(|t| f.pool.intern_ty(TyData::Tuple(t)))
            }
            ExprData::GetItem { tuple, index } => match f.ty_of(tuple).map(|t| f.pool.ty(t).clone()) {
                Some(TyData::Tuple(fields)) => fields.get(index as usize).copied(),
                _ => None,
            },
            ExprData::Shape(dims) => Some(f.pool.intern_ty(TyData::shape(dims))),
            ExprData::Prim(p) => {
                let dtype = f.pool.dtype(p);
                Some(f.pool.intern_ty(TyData::Prim { dtype, value: Some(p) }))
            }
            ExprData::Str(_) | ExprData::DType(_) => Some(f.pool.intern_ty(TyData::Object)),
            _ => None,
        };
        if let Some(t) = ty {
            f.expr_ty.set(e, Some(t));
            changed = true;
        }
    }
    changed
}
