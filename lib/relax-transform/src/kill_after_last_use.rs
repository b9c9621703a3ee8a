//! `kill-after-last-use`: end the life of every tensor, storage and object right after
//! its last use, as TVM's `KillAfterLastUse` (`algorithms.md` §6).
//!
//! 1. Copies are propagated and trivial bindings removed (`canonicalize-bindings`), so
//!    `a = alloc` disappears and uses refer to `alloc`.
//! 2. In each sequence (the body, each `if` branch, each local function), every variable
//!    bound there gets, after the last binding of that sequence that uses it (uses in
//!    nested branches count as uses by the binding holding them):
//!    `R.memory.kill_tensor(t)` for tensors, then `R.memory.kill_storage(s)` for
//!    storages, then `R.vm.kill_object(o)` for other objects, each kind in binding order.
//! 3. Never killed: parameters, variables the sequence returns, variables already
//!    killed, constants, and values of type `R.Shape`, `R.Prim` or `R.Callable` (they
//!    do not live in VM registers). A storage is a variable bound to
//!    `R.memory.alloc_storage` / `R.vm.alloc_storage`, or to an `if` whose branches both
//!    return storages (planning's run-time fit).
//!
//! A storage's last use is the `alloc_tensor` that carves it (or the next one that
//! reuses it); the tensor keeps the memory alive. TVM stops inserting kills after the
//! first nested sequence of a function; here every sequence gets its kills. Kills are
//! effects, so none is placed in a dataflow block, and a pure function that gets kills
//! is marked `relax.force_pure` (as `remove-purity-checking` would have done).

use std::collections::{HashMap, HashSet};

use relax_ir::{Binding, Block, Expr, ExprData, RelaxFunction, TyData, Var};
use relax_ir::{OpId, ops};

use crate::emit;
use crate::remove_purity_checking::mark_force_pure;
use relax_ir::Seq;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "kill-after-last-use" {
        summary: "kill tensors, storages and objects after their last use",
        run: |f, _| Ok(kill_after_last_use(f)),
    }
}

const KILLS: &[OpId] = &[ops::MEMORY_KILL_TENSOR, ops::MEMORY_KILL_STORAGE, ops::VM_KILL_OBJECT];
const STORAGES: &[OpId] = &[ops::MEMORY_ALLOC_STORAGE, ops::VM_ALLOC_STORAGE];

/// Runs the pass on one function; returns true if it changed anything.
pub fn kill_after_last_use(f: &mut RelaxFunction) -> bool {
    let changed = crate::canonicalize_bindings::canonicalize(f);
    let facts = Facts::collect(f);
    // The function each sequence belongs to (`None`: the top-level one).
    let mut owner: HashMap<Seq, Option<Expr>> = HashMap::from([(f.func.body, None)]);
    let seqs = f.all_seqs();
    for &loc in &seqs {
        let own = owner.get(&loc).copied().flatten();
        for &b in &f.seq(loc).blocks {
            for bd in &f.blocks[b].bindings {
                match &f.exprs[bd.value] {
                    ExprData::If { then_branch, else_branch, .. } => {
                        owner.insert(*then_branch, own);
                        owner.insert(*else_branch, own);
                    }
                    ExprData::Function(node) => {
                        owner.insert(node.body, Some(bd.value));
                    }
                    _ => {}
                }
            }
        }
    }
    let mut killed = false;
    for loc in seqs {
        if !kill_in_seq(f, loc, &facts) {
            continue;
        }
        killed = true;
        // Kills are effects: a pure function needs `relax.force_pure` to hold them.
        match owner.get(&loc).copied().flatten() {
            None => {
                let pure = f.func.pure;
                mark_force_pure(&mut f.func.attrs, pure);
            }
            Some(e) => {
                if let ExprData::Function(node) = &mut f.exprs[e] {
                    let pure = node.pure;
                    mark_force_pure(&mut node.attrs, pure);
                }
            }
        }
    }
    changed | killed
}

/// What the whole function says about its variables.
struct Facts {
    killed: HashSet<Var>,
    storages: HashSet<Var>,
    constants: HashSet<Var>,
}

impl Facts {
    fn collect(f: &RelaxFunction) -> Facts {
        let mut facts = Facts { killed: HashSet::new(), storages: HashSet::new(), constants: HashSet::new() };
        let mut ifs = Vec::new();
        for loc in f.all_seqs() {
            for &b in &f.seq(loc).blocks {
                for bd in &f.blocks[b].bindings {
                    match &f.exprs[bd.value] {
                        ExprData::Const(_) => {
                            facts.constants.insert(bd.var);
                        }
                        ExprData::If { .. } => ifs.push((bd.var, bd.value)),
                        ExprData::Call(c) => {
                            let name = f.called_op(bd.value);
                            if name.is_some_and(|id| STORAGES.contains(&id)) {
                                facts.storages.insert(bd.var);
                            } else if name.is_some_and(|id| KILLS.contains(&id))
                                && let Some(ExprData::Var(v)) = f.list(c.args).first().map(|&a| &f.exprs[a])
                            {
                                facts.killed.insert(*v);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // An `if` choosing between storages is a storage (innermost first).
        for &(var, value) in ifs.iter().rev() {
            if let ExprData::If { then_branch, else_branch, .. } = &f.exprs[value] {
                let is_storage =
                    |s: Seq| matches!(f.exprs[f.seq(s).body], ExprData::Var(v) if facts.storages.contains(&v));
                if is_storage(*then_branch) && is_storage(*else_branch) {
                    facts.storages.insert(var);
                }
            }
        }
        facts
    }
}

/// Inserts the kills of the variables bound in `s`; true if any was inserted.
fn kill_in_seq(f: &mut RelaxFunction, s: Seq, facts: &Facts) -> bool {
    let s = f.seq(s).clone();
    // Bindings of the sequence in order, with their block.
    let order: Vec<(Block, Var, Expr)> =
        s.blocks.iter().flat_map(|&b| f.blocks[b].bindings.iter().map(move |bd| (b, bd.var, bd.value))).collect();
    let defined: HashSet<Var> = order.iter().map(|&(_, v, _)| v).collect();
    let mut last: HashMap<Var, usize> = HashMap::new();
    for (i, &(_, _, value)) in order.iter().enumerate() {
        for v in uses(f, value) {
            if defined.contains(&v) {
                last.insert(v, i);
            }
        }
    }
    let outputs: HashSet<Var> = uses(f, s.body).into_iter().collect();
    // Kills to insert after each binding: (tensors, storages, objects).
    let mut after: HashMap<usize, [Vec<Var>; 3]> = HashMap::new();
    for &(_, v, _) in &order {
        let Some(&i) = last.get(&v) else { continue };
        if outputs.contains(&v) || facts.killed.contains(&v) || facts.constants.contains(&v) {
            continue;
        }
        if f.blocks[order[i].0].dataflow {
            continue;
        }
        let kind = if facts.storages.contains(&v) {
            1
        } else {
            match f.pool.ty(f.vars[v].ty) {
                TyData::Tensor { .. } => 0,
                TyData::Shape { .. } | TyData::Prim { .. } | TyData::Callable { .. } => continue,
                _ => 2,
            }
        };
        after.entry(i).or_default()[kind].push(v);
    }
    if after.is_empty() {
        return false;
    }
    let mut i = 0;
    for &b in &s.blocks {
        let bindings = std::mem::take(&mut f.blocks[b].bindings);
        let mut out: Vec<Binding> = Vec::with_capacity(bindings.len());
        for bd in bindings {
            out.push(bd);
            if let Some(kills) = after.get(&i) {
                for (kind, vars) in kills.iter().enumerate() {
                    let op = match kind {
                        0 => ops::MEMORY_KILL_TENSOR,
                        1 => ops::MEMORY_KILL_STORAGE,
                        _ => ops::VM_KILL_OBJECT,
                    };
                    for &v in vars {
                        let arg = f.use_var(v);
                        let void = emit::void(f);
                        let call = emit::call_op(f, op, vec![arg], Vec::new(), void);
                        out.push(emit::effect(f, call, false));
                    }
                }
            }
            i += 1;
        }
        f.blocks[b].bindings = out;
    }
    true
}

/// The variables `e` uses, nested sequences (branches, local functions) included.
fn uses(f: &RelaxFunction, e: Expr) -> Vec<Var> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &f.exprs[x] {
            ExprData::Var(v) => out.push(*v),
            ExprData::If { then_branch, else_branch, .. } => {
                for &s in [then_branch, else_branch] {
                    let s = f.seq(s);
                    stack.push(s.body);
                    for &b in &s.blocks {
                        stack.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
                    }
                }
            }
            ExprData::Function(node) => {
                let body = f.seq(node.body);
                stack.push(body.body);
                for &b in &body.blocks {
                    stack.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
                }
            }
            _ => {}
        }
        stack.extend(f.operands(x));
    }
    out
}
