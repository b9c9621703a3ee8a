//! Rewriting a sequence's dataflow blocks once its graph is partitioned (TVM's
//! `OperatorFusor`, `algorithms.md` §2.6 steps 1, 2 and 7).
//!
//! Per dataflow block: the bindings of every group with more than one node go to a
//! [`Creator`]; the variables other groups use become outputs of their group; each
//! group's function is built and added to the module (a structurally equal function is
//! reused, [`relax_ir::structural`]); then the bindings are emitted in an order sorted by group
//! dependencies, the group's call at the place of its last binding, followed by one
//! tuple item per output when there are several. Later uses of the group's outputs are
//! renamed to the call's results.

use std::collections::{HashMap, HashSet};

use relax_ir::arith::Analyzer;
use relax_ir::{
    Binding, BindingKind, Block, Diagnostic, Expr, ExprData, Func, Global, Module, RelaxFunction, TyData, Var,
};

use super::Names;
use super::function::{ArgKey, CallerArg, Creator};
use super::graph::Graph;
use super::partition::Partition;
use relax_ir::Seq;

/// The state shared by the rewriting of all functions of a module (TVM's one
/// `BlockBuilder`): fresh names and the functions added so far.
pub struct Fusor {
    /// Names handed out (`lv`, `gv`, function names).
    pub names: Names,
    /// Fingerprints of the module's Relax functions.
    pub known: HashMap<String, Global>,
    /// How many functions were created.
    pub created: usize,
}

impl Fusor {
    /// A fusor for `m`.
    pub fn new(m: &Module) -> Fusor {
        let mut known = HashMap::new();
        for (g, gd) in m.live() {
            if let Func::Relax(f) = &gd.func {
                known.entry(relax_ir::structural::relax_function(f)).or_insert(g);
            }
        }
        Fusor { names: Names::default(), known, created: 0 }
    }

    /// Rewrites the dataflow blocks of the sequence at `loc` of `f` (a working copy of
    /// the function `current`), whose graph `g` is partitioned by `p`. New functions are
    /// added to `m`; the renaming of variables to apply to the whole function is added to
    /// `remap`; groups dissolved because of a dependency cycle are reported in `notes`.
    #[allow(clippy::too_many_arguments, reason = "the state of one rewrite")]
    pub fn rewrite_seq(
        &mut self,
        m: &mut Module,
        f: &mut RelaxFunction,
        current: &str,
        loc: Seq,
        g: &Graph,
        p: &Partition,
        remap: &mut HashMap<Var, Var>,
        notes: &mut Vec<Diagnostic>,
    ) {
        let blocks: Vec<Block> = f.seq(loc).blocks.clone();
        for blk in blocks {
            if f.blocks[blk].dataflow {
                self.rewrite_block(m, f, current, blk, g, p, remap, notes);
            }
        }
    }

    #[allow(clippy::too_many_arguments, reason = "the state of one rewrite")]
    fn rewrite_block(
        &mut self,
        m: &mut Module,
        f: &mut RelaxFunction,
        current: &str,
        blk: Block,
        g: &Graph,
        p: &Partition,
        remap: &mut HashMap<Var, Var>,
        notes: &mut Vec<Diagnostic>,
    ) {
        let bindings: Vec<Binding> = f.blocks[blk].bindings.clone();
        // A binding's group key: the root of its group, or its own node when the group
        // has one node or was dissolved.
        let mut dissolved: HashSet<usize> = HashSet::new();
        let (creators, binding_group, deps) = loop {
            let key_of = |v: Var| -> Option<usize> {
                let n = *g.var_node.get(&v)?;
                let r = p.root(n);
                Some(if p.groups[r].num_nodes > 1 && !dissolved.contains(&r) { r } else { n })
            };
            // 1. The bindings of each group.
            let mut creators: HashMap<usize, Creator> = HashMap::new();
            let mut binding_group: Vec<usize> = Vec::with_capacity(bindings.len());
            for bd in &bindings {
                let grp = key_of(bd.var).expect("every binding has a node");
                binding_group.push(grp);
                if p.groups[grp].num_nodes > 1 && p.root(grp) == grp && !dissolved.contains(&grp) {
                    creators.entry(grp).or_default().append(m, f, bd);
                }
            }
            if creators.is_empty() {
                return;
            }
            // 2. Dependencies, and outputs: variables used by another group.
            let mut deps: HashMap<usize, Vec<usize>> = HashMap::new();
            for (bd, &cur) in bindings.iter().zip(&binding_group) {
                let mut used = Vec::new();
                var_uses(f, bd.value, &mut used);
                for v in used {
                    let Some(producer) = key_of(v) else { continue };
                    if producer == cur {
                        continue;
                    }
                    deps.entry(cur).or_default().push(producer);
                    if let Some(c) = creators.get_mut(&producer)
                        && c.defines(v)
                    {
                        c.add_output(v);
                    }
                }
            }
            // A group that depends on itself through other bindings cannot be one call:
            // it is dissolved (TVM rejects the module).
            let mut cyclic: Vec<usize> = creators.keys().copied().filter(|&c| on_cycle(&deps, c)).collect();
            if cyclic.is_empty() {
                break (creators, binding_group, deps);
            }
            cyclic.sort_unstable();
            for c in cyclic {
                let names: Vec<String> =
                    creators[&c].bindings.iter().map(|b| format!("`{}`", f.vars[b.var].name)).collect();
                let at = creators[&c].bindings.first().map_or(relax_ir::Span::NONE, |b| *f.spans.vars.get(b.var));
                notes.push(Diagnostic::warning(
                    at,
                    format!(
                        "the group of {} is not fused: it depends on itself through a binding outside it",
                        names.join(", ")
                    ),
                ));
                dissolved.insert(c);
            }
        };
        // 3. The functions.
        let mut built = HashMap::new();
        for (&grp, c) in &creators {
            built.insert(grp, c.build(f));
        }
        // 4. Emit, in an order sorted by group dependencies.
        let order = topo_sort(&deps, &binding_group);
        let mut out: Vec<Binding> = Vec::with_capacity(bindings.len());
        let an = Analyzer::new();
        for i in order {
            let bd = &bindings[i];
            let grp = binding_group[i];
            let Some(creator) = creators.get(&grp) else {
                out.push(bd.clone());
                continue;
            };
            let Some(b) = built.get_mut(&grp).and_then(Option::take) else {
                // No outputs (dead code), or emitted already.
                continue;
            };
            if creator.last_var() != Some(bd.var) {
                built.insert(grp, Some(b));
                continue;
            }
            let callee = self.add_function(m, b.func, &creator.name, current);
            let call = self.call(f, callee, &b.args, &mut out);
            let ty = match b.call_ty.as_slice() {
                [one] => *one,
                many if many.len() == creator.outputs.len() => f.pool.intern_ty(TyData::Tuple(many.to_vec())),
                _ => match relax_ir::infer::type_new_value(f, call, Some(m), &an) {
                    Ok(t) => t,
                    Err(_) => f.pool.intern_ty(TyData::Object),
                },
            };
            f.expr_ty.set(call, Some(ty));
            let outputs = &creator.outputs;
            let output_var = outputs.len() == 1 && !f.vars[outputs[0]].dataflow;
            let name = self.names.fresh(if output_var { "gv" } else { "lv" });
            let nv = f.add_var(name, ty, !output_var);
            out.push(Binding { var: nv, value: call, kind: BindingKind::Value });
            if outputs.len() == 1 {
                remap.insert(outputs[0], nv);
                continue;
            }
            // Several outputs: one tuple item each, in binding order.
            let fields = match f.pool.ty(ty) {
                TyData::Tuple(fields) => fields.clone(),
                _ => Vec::new(),
            };
            let mut ordered: Vec<Var> = bindings.iter().map(|b| b.var).filter(|v| outputs.contains(v)).collect();
            let rest: Vec<Var> = outputs.iter().copied().filter(|v| !ordered.contains(v)).collect();
            ordered.extend(rest);
            for ov in ordered {
                let index = outputs.iter().position(|&o| o == ov).expect("an output") as u32;
                let dataflow = f.vars[ov].dataflow;
                let tuple = f.use_var(nv);
                let fty = fields.get(index as usize).copied().unwrap_or(f.vars[ov].ty);
                let item = f.add_expr(ExprData::GetItem { tuple, index }, Some(fty));
                let name = self.names.fresh(if dataflow { "lv" } else { "gv" });
                let iv = f.add_var(name, fty, dataflow);
                out.push(Binding { var: iv, value: item, kind: BindingKind::Value });
                remap.insert(ov, iv);
            }
        }
        f.blocks[blk].bindings = out;
    }

    /// `BlockBuilder::AddFunction`: an equal function of the module, or a new one named
    /// after `hint` (made unique).
    fn add_function(&mut self, m: &mut Module, func: RelaxFunction, hint: &str, current: &str) -> Global {
        let fp = relax_ir::structural::relax_function(&func);
        if let Some(&g) = self.known.get(&fp) {
            return g;
        }
        let mut name = self.names.fresh(hint);
        while m.lookup(&name).is_some() || name == current {
            name = self.names.fresh(hint);
        }
        let g = m.add(name, Func::Relax(Box::new(func)));
        self.known.insert(fp, g);
        self.created += 1;
        g
    }

    /// The call of `callee` with the caller's arguments; tuple items are bound first.
    fn call(&mut self, f: &mut RelaxFunction, callee: Global, args: &[CallerArg], out: &mut Vec<Binding>) -> Expr {
        let mut exprs = Vec::with_capacity(args.len());
        for a in args {
            let e = match a {
                CallerArg::Leaf(key, e) => leaf_expr(f, *key, *e),
                CallerArg::Item(key, e, index) => {
                    let tuple = leaf_expr(f, *key, *e);
                    let fty = f.ty_of(tuple).and_then(|t| match f.pool.ty(t) {
                        TyData::Tuple(fields) => fields.get(*index as usize).copied(),
                        _ => None,
                    });
                    let fty = fty.unwrap_or_else(|| f.pool.intern_ty(TyData::Object));
                    let item = f.add_expr(ExprData::GetItem { tuple, index: *index }, Some(fty));
                    let v = f.add_var(self.names.fresh("lv"), fty, true);
                    out.push(Binding { var: v, value: item, kind: BindingKind::Value });
                    f.use_var(v)
                }
                CallerArg::TirVars(vars) => {
                    let dims = vars.iter().map(|&v| f.pool.var_ref(v)).collect();
                    crate::emit::shape(f, dims)
                }
            };
            exprs.push(e);
        }
        let object = f.pool.intern_ty(TyData::Object);
        let callee = f.add_expr(ExprData::Global(callee), Some(object));
        f.add_call(callee, exprs, relax_ir::Attrs::new(), Vec::new(), None)
    }
}

/// `TopoSortByGroupDep`: binding indices, groups in first-binding order, each after the
/// groups it depends on.
fn topo_sort(deps: &HashMap<usize, Vec<usize>>, binding_group: &[usize]) -> Vec<usize> {
    let mut per_group: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &grp) in binding_group.iter().enumerate() {
        per_group.entry(grp).or_default().push(i);
    }
    let mut visited: HashSet<usize> = HashSet::new();
    let mut sorted = Vec::with_capacity(binding_group.len());
    for &grp in binding_group {
        if !visited.insert(grp) {
            continue;
        }
        // Iterative post-order over the dependency lists.
        let mut stack: Vec<(usize, usize)> = vec![(grp, 0)];
        while let Some(top) = stack.len().checked_sub(1) {
            let (g, next) = stack[top];
            match deps.get(&g).and_then(|d| d.get(next)).copied() {
                Some(dep) => {
                    stack[top].1 += 1;
                    if visited.insert(dep) {
                        stack.push((dep, 0));
                    }
                }
                None => {
                    stack.pop();
                    sorted.extend(per_group.get(&g).into_iter().flatten().copied());
                }
            }
        }
    }
    sorted
}

/// True when `start` can reach itself along dependency edges.
fn on_cycle(deps: &HashMap<usize, Vec<usize>>, start: usize) -> bool {
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = deps.get(&start).cloned().unwrap_or_default();
    while let Some(n) = stack.pop() {
        if n == start {
            return true;
        }
        if seen.insert(n) {
            stack.extend(deps.get(&n).into_iter().flatten().copied());
        }
    }
    false
}

/// A fresh expression for the operand `e` (with key `key`) of the caller.
fn leaf_expr(f: &mut RelaxFunction, key: ArgKey, e: Expr) -> Expr {
    match key {
        ArgKey::Var(v) => f.use_var(v),
        ArgKey::Const(c) => {
            let ty = f.ty_of(e);
            f.add_expr(ExprData::Const(c), ty)
        }
        ArgKey::Expr(e) => e,
    }
}

/// The variables used by `e`, entering nested sequences, left to right (the order of
/// TVM's `PostOrderVisit`).
fn var_uses(f: &RelaxFunction, e: Expr, out: &mut Vec<Var>) {
    match &f.exprs[e] {
        ExprData::Var(v) => out.push(*v),
        ExprData::If { cond, then_branch, else_branch } => {
            var_uses(f, *cond, out);
            for &s in [then_branch, else_branch] {
                let s = f.seq(s);
                for &b in &s.blocks {
                    for bd in &f.blocks[b].bindings {
                        var_uses(f, bd.value, out);
                    }
                }
                var_uses(f, s.body, out);
            }
        }
        ExprData::Function(node) => {
            let body = f.seq(node.body);
            for &b in &body.blocks {
                for bd in &f.blocks[b].bindings {
                    var_uses(f, bd.value, out);
                }
            }
            var_uses(f, body.body, out);
        }
        d => {
            for x in d.operands(&f.lists) {
                var_uses(f, x, out);
            }
        }
    }
}

/// Renames uses of variables after the rewrite (and retypes the uses).
pub fn apply_remap(f: &mut RelaxFunction, remap: &HashMap<Var, Var>) {
    if remap.is_empty() {
        return;
    }
    let mut uses = Vec::new();
    f.for_each_reachable(|e, d| {
        if let ExprData::Var(v) = d
            && remap.contains_key(v)
        {
            uses.push(e);
        }
    });
    for e in uses {
        let ExprData::Var(v) = f.exprs[e] else { continue };
        let mut nv = remap[&v];
        while let Some(&x) = remap.get(&nv) {
            if x == nv {
                break;
            }
            nv = x;
        }
        f.exprs[e] = ExprData::Var(nv);
        let t = f.vars[nv].ty;
        f.expr_ty.set(e, Some(t));
    }
}
