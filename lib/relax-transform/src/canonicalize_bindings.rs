//! `canonicalize-bindings`: copy propagation and related clean-ups, as TVM's pass does.
//!
//! * A trivial binding `y = x` (or a `match_cast` to the type `x` already has) is removed
//!   and uses of `y` become uses of `x`. When `y` is a dataflow output that is used
//!   after its block and `x` a dataflow variable, the binding of `x` is made to define
//!   `y` instead, so the output keeps its name.
//! * `t[i]` of a variable known to be bound to a tuple `(a, b, ...)` is read through the
//!   tuple; a tuple `(t[0], t[1], ...)` rebuilt from every item of `t` is `t` itself.
//! * Uses of a variable bound to a constant become uses of the constant.
//! * A non-dataflow variable defined in a dataflow block and never used outside it
//!   becomes a dataflow variable.
//!
//! Unused bindings left behind are removed by `dead-code-elimination`.

use std::collections::{HashMap, HashSet};

use relax_ir::{BindingKind, Block, Expr, ExprData, RelaxFunction, Var};

use crate::walk::tidy_blocks;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "canonicalize-bindings" {
        summary: "propagate copies, fold tuple items, inline constants",
        run: |f, _| Ok(canonicalize(f)),
    }
}

/// What is known while walking the bindings.
#[derive(Default)]
struct Planner {
    /// The (unwrapped) value of each bound variable.
    known: HashMap<Var, Expr>,
    /// `y` → `x` for trivial bindings `y = x`.
    trivial: Vec<(Var, Var)>,
    /// Variables bound to a constant expression.
    constants: HashMap<Var, Expr>,
    /// The block defining each variable.
    def_block: HashMap<Var, Block>,
    /// Variables defined in a dataflow block.
    in_dataflow: Vec<Var>,
    /// Variables used outside the dataflow block that defines them.
    used_outside: HashSet<Var>,
}

impl Planner {
    /// Follows variables through their known values.
    fn unwrap_var(&self, f: &RelaxFunction, mut e: Expr) -> Expr {
        for _ in 0..10_000 {
            match &f.exprs[e] {
                ExprData::Var(v) => match self.known.get(v) {
                    Some(&next) => e = next,
                    None => return e,
                },
                _ => return e,
            }
        }
        e
    }

    /// The value a binding really denotes, looking through tuple construction.
    fn unwrap_value(&self, f: &RelaxFunction, value: Expr) -> Expr {
        match &f.exprs[value] {
            ExprData::GetItem { tuple, index } => {
                let t = self.unwrap_var(f, *tuple);
                if let ExprData::Tuple(fields) = &f.exprs[t]
                    && let Some(field) = fields.get(*index as usize, &f.lists)
                {
                    return field;
                }
                value
            }
            ExprData::Tuple(fields) if !fields.is_empty() => {
                let fields = f.list(*fields);
                let mut source: Option<Expr> = None;
                let mut source_var: Option<Var> = None;
                for (i, &field) in fields.iter().enumerate() {
                    let item = self.unwrap_var(f, field);
                    let ExprData::GetItem { tuple, index } = &f.exprs[item] else { return value };
                    if *index as usize != i {
                        return value;
                    }
                    let ExprData::Var(tv) = &f.exprs[*tuple] else { return value };
                    match source_var {
                        None => {
                            source_var = Some(*tv);
                            source = Some(*tuple);
                        }
                        Some(sv) if sv == *tv => {}
                        Some(_) => return value,
                    }
                }
                // The tuple must have exactly as many fields as the source.
                let Some(sv) = source_var else { return value };
                match f.pool.ty(f.vars[sv].ty) {
                    relax_ir::TyData::Tuple(tf) if tf.len() == fields.len() => source.unwrap_or(value),
                    _ => value,
                }
            }
            _ => value,
        }
    }
}

/// Runs the pass on one function; returns true if it changed anything.
pub fn canonicalize(f: &mut RelaxFunction) -> bool {
    let mut p = Planner::default();
    // Plan: walk every sequence's bindings in order.
    for loc in f.all_seqs() {
        let s = f.seq(loc).clone();
        for &b in &s.blocks {
            let dataflow = f.blocks[b].dataflow;
            for bd in f.blocks[b].bindings.clone() {
                // Uses in this binding's value.
                note_uses(f, bd.value, Some(b), dataflow, &mut p);
                let same_ty = match bd.kind {
                    BindingKind::Value => true,
                    BindingKind::MatchCast(_) => f.ty_of(bd.value) == Some(f.vars[bd.var].ty),
                };
                let value = p.unwrap_value(f, bd.value);
                if same_ty && let ExprData::Var(parent) = f.exprs[value] {
                    p.trivial.push((bd.var, parent));
                }
                if matches!(f.exprs[value], ExprData::Const(_)) && matches!(bd.kind, BindingKind::Value) {
                    p.constants.insert(bd.var, value);
                }
                p.known.insert(bd.var, value);
                p.def_block.insert(bd.var, b);
                if dataflow {
                    p.in_dataflow.push(bd.var);
                }
            }
        }
        note_uses(f, s.body, None, false, &mut p);
    }
    // Local functions capture variables: treat captures as uses outside any block.
    let mut changed = false;

    // Non-dataflow variables of a dataflow block used only inside it become dataflow vars.
    for &v in &p.in_dataflow {
        if !f.vars[v].dataflow && !p.used_outside.contains(&v) {
            f.vars[v].dataflow = true;
            changed = true;
        }
    }

    // Resolve trivial bindings.
    let trivial: HashMap<Var, Var> = p.trivial.iter().copied().collect();
    let mut replace_usage: HashMap<Var, Var> = HashMap::new();
    let mut replace_binding: HashMap<Var, Var> = HashMap::new();
    let mut remove: HashSet<Var> = HashSet::new();
    for &(bound, _) in &p.trivial {
        let mut to = trivial[&bound];
        let mut guard = 0;
        while let Some(&next) = trivial.get(&to) {
            to = next;
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        while let Some(&next) = replace_binding.get(&to) {
            to = next;
            guard += 1;
            if guard > 20_000 {
                break;
            }
        }
        if to == bound {
            continue;
        }
        if f.vars[bound].dataflow || !f.vars[to].dataflow || !p.used_outside.contains(&bound) {
            replace_usage.insert(bound, to);
        } else {
            replace_binding.insert(to, bound);
            replace_usage.insert(to, bound);
        }
        remove.insert(bound);
    }

    // Apply: drop removed bindings, rename definitions.
    for loc in f.all_seqs() {
        for b in f.seq(loc).blocks.clone() {
            let before = f.blocks[b].bindings.len();
            f.blocks[b].bindings.retain(|bd| !remove.contains(&bd.var));
            changed |= f.blocks[b].bindings.len() != before;
            for bd in f.blocks[b].bindings.iter_mut() {
                if let Some(&nv) = replace_binding.get(&bd.var) {
                    bd.var = nv;
                    changed = true;
                }
            }
        }
    }
    // Apply: rewrite uses (every use is its own node), and inline constants.
    let resolve = |mut v: Var| {
        let mut guard = 0;
        while let Some(&n) = replace_usage.get(&v) {
            v = n;
            guard += 1;
            if guard > 10_000 {
                break;
            }
        }
        v
    };
    let mut use_nodes: Vec<Expr> = Vec::new();
    f.for_each_reachable(|e, d| {
        if matches!(d, ExprData::Var(_)) {
            use_nodes.push(e);
        }
    });
    for e in use_nodes {
        let ExprData::Var(v) = f.exprs[e] else { continue };
        let nv = resolve(v);
        if let Some(&c) = p.constants.get(&nv) {
            let data = f.exprs[c].clone();
            let ty = f.ty_of(c);
            f.exprs[e] = data;
            f.expr_ty.set(e, ty);
            changed = true;
        } else if nv != v {
            f.exprs[e] = ExprData::Var(nv);
            let ty = f.vars[nv].ty;
            f.expr_ty.set(e, Some(ty));
            changed = true;
        }
    }
    changed | tidy_blocks(f)
}

/// Records uses of variables in `e` that happen outside their home dataflow block.
fn note_uses(f: &RelaxFunction, e: Expr, block: Option<Block>, dataflow: bool, p: &mut Planner) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &f.exprs[e] {
            ExprData::Var(v) => {
                let home = p.def_block.get(v).copied();
                if !dataflow || home.is_some() && home != block {
                    p.used_outside.insert(*v);
                }
            }
            ExprData::Function(node) => {
                // Everything a local function mentions counts as used outside.
                let body = f.seq(node.body);
                let mut inner = vec![body.body];
                for &b in &body.blocks {
                    inner.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
                }
                while let Some(x) = inner.pop() {
                    if let ExprData::Var(v) = &f.exprs[x] {
                        p.used_outside.insert(*v);
                    }
                    inner.extend(f.operands(x));
                }
            }
            _ => {}
        }
        stack.extend(f.operands(e));
    }
}
