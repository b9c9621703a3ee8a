//! `dead-code-elimination`: removes functions unreachable from the module's public
//! functions, then, in every Relax function, bindings whose variable is never used and
//! whose value has no side effects (repeated until nothing changes).
//!
//! A binding is kept when its value may have an effect: a call of an impure op, of a
//! packed function by name (`R.call_packed`), of an impure function; an `if` or local
//! function that contains such a call. A `match_cast` whose type mentions symbolic
//! variables is kept, since it defines them (and checks them at run time).

use std::collections::HashSet;

use relax_ir::{Binding, BindingKind, Expr, ExprData, Func, Global, Module, RelaxFunction};
use relax_pass::{ModulePass, PassContext, PassResult};

use crate::walk::{all_blocks, tidy_blocks, use_counts};

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "dead-code-elimination" {
        aliases: ["dce"],
        summary: "remove unused pure bindings and unreachable functions",
        new: |_| DeadCodeElimination,
    }
}

/// The pass.
pub struct DeadCodeElimination;

impl ModulePass for DeadCodeElimination {
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
        let mut changed = remove_unreachable(m);
        let globals: Vec<Global> = m.live().map(|(g, _)| g).collect();
        for g in globals {
            let impure_globals = impure_functions(m);
            if let Some(f) = m.relax_mut(g) {
                changed |= remove_unused(f, &impure_globals);
            }
        }
        Ok(changed)
    }
}

/// Globals referenced by a Relax function.
fn callees(f: &RelaxFunction) -> Vec<Global> {
    let mut out = Vec::new();
    f.for_each_reachable(|_, d| {
        if let ExprData::Global(g) = d {
            out.push(*g);
        }
    });
    out
}

/// Removes the Relax and TIR functions unreachable from the public ones (and externs);
/// true when something was removed. Shared with `fuse-tir`'s clean-up.
pub(crate) fn remove_unreachable(m: &mut Module) -> bool {
    if m.is_single_function() {
        return false;
    }
    let mut live: HashSet<Global> = HashSet::new();
    let mut stack: Vec<Global> = m
        .live()
        .filter(|(_, gd)| match &gd.func {
            Func::Relax(f) => f.func.attrs.get("global_symbol").is_some(),
            Func::Prim(f) => f.attrs.get("global_symbol").is_some(),
            Func::Extern(_) => true,
            _ => false,
        })
        .map(|(g, _)| g)
        .collect();
    while let Some(g) = stack.pop() {
        if !live.insert(g) {
            continue;
        }
        if let Some(f) = m.relax(g) {
            stack.extend(callees(f));
        }
    }
    let mut changed = false;
    for (g, gd) in m.globals.iter_mut() {
        if matches!(gd.func, Func::Relax(_) | Func::Prim(_)) && !live.contains(&g) {
            gd.func = Func::Removed;
            changed = true;
        }
    }
    changed
}

fn impure_functions(m: &Module) -> HashSet<Global> {
    m.live()
        .filter(|(_, gd)| match &gd.func {
            Func::Relax(f) => !f.func.pure,
            // A PrimFunc called directly writes its output arguments.
            Func::Prim(_) | Func::Extern(_) | Func::Unresolved => true,
            _ => false,
        })
        .map(|(g, _)| g)
        .collect()
}

/// True when evaluating `e` may have a side effect.
pub fn has_effect(f: &RelaxFunction, e: Expr, impure_globals: &HashSet<Global>) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &f.exprs[e] {
            ExprData::Call(c) => {
                let effect = match &f.exprs[c.callee] {
                    ExprData::Op(op) => op.def().is_none_or(|d| !d.pure),
                    ExprData::ExternFunc(_) => true,
                    ExprData::Global(g) => impure_globals.contains(g),
                    ExprData::Var(v) => {
                        !matches!(f.pool.ty(f.vars[*v].ty), relax_ir::TyData::Callable { pure: true, .. })
                    }
                    _ => true,
                };
                if effect {
                    return true;
                }
            }
            ExprData::If { then_branch, else_branch, .. } => {
                for &s in [then_branch, else_branch] {
                    for &b in &f.seq(s).blocks {
                        stack.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
                    }
                }
            }
            _ => {}
        }
        stack.extend(f.operands(e));
    }
    false
}

fn remove_unused(f: &mut RelaxFunction, impure_globals: &HashSet<Global>) -> bool {
    remove_bindings_until_fixpoint(f, |f, bd| match bd.kind {
        // A match_cast that defines symbolic variables is kept: later types may use them.
        BindingKind::MatchCast(t) => {
            let mut vs = Vec::new();
            f.pool.ty_vars(t, &mut vs);
            !vs.is_empty()
        }
        BindingKind::Value => false,
    } || has_effect(f, bd.value, impure_globals))
}

/// Removes, until nothing changes, every binding whose variable is unused and that
/// `keep` does not keep; then tidies empty blocks. Returns true if anything changed.
pub(crate) fn remove_bindings_until_fixpoint(
    f: &mut RelaxFunction,
    keep: impl Fn(&RelaxFunction, &Binding) -> bool,
) -> bool {
    let mut changed = false;
    loop {
        let counts = use_counts(f);
        let mut removed = false;
        for (_, b) in all_blocks(f) {
            let bindings = std::mem::take(&mut f.blocks[b].bindings);
            let mut kept = Vec::with_capacity(bindings.len());
            for bd in bindings {
                let used = counts.get(&bd.var).copied().unwrap_or(0) > 0;
                if used || keep(f, &bd) {
                    kept.push(bd);
                } else {
                    removed = true;
                }
            }
            f.blocks[b].bindings = kept;
        }
        if !removed {
            break;
        }
        changed = true;
    }
    changed | tidy_blocks(f)
}
