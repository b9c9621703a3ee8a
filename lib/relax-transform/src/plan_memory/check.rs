//! The planner's self-check (`algorithms.md` §14 item 1): no storage may be reused
//! while any alias of the tensor it held before is still live.
//!
//! It reads the planned function alone, with its own (deliberately simple and
//! conservative) alias rules, so it does not share the planner's mistakes:
//!
//! * every `R.memory.alloc_tensor(s, ...)` is a tensor carved from the memory of `s`;
//!   a variable bound to an `if` that yields storages may be any of them;
//! * a binding whose value is a variable, tuple, tuple item, `match_cast` or any call
//!   other than an allocation may alias every tensor its operands may alias; an `if`
//!   may alias its branches' results;
//! * a use is any mention of a variable (nested sequences included) other than a copy,
//!   `match_cast`, tuple, tuple item or view (`R.reshape`, `R.memory.view`,
//!   `R.memory.ensure_zero_offset`, `vm.builtin.reshape`), which only name the tensor
//!   again (a view that is never used reads nothing); a use in a local function, or in
//!   the function's result, lasts forever.
//!
//! Two tensors carved from the same memory must not overlap: the earlier one's last use
//! must come before the later one's allocation.

use std::collections::{HashMap, HashSet};

use relax_ir::{Expr, ExprData, RelaxFunction, Seq, Var};
use relax_ir::{OpId, ops};

/// A tensor carved from a storage.
struct Tensor {
    var: Option<Var>,
    memory: usize,
    at: usize,
    last: usize,
}

/// What a value may alias: tensors, or a tuple of such.
#[derive(Clone, Debug)]
enum Al {
    Set(HashSet<usize>),
    Tuple(Vec<Al>),
}

impl Al {
    fn none() -> Al {
        Al::Set(HashSet::new())
    }
    fn flat(&self, out: &mut HashSet<usize>) {
        match self {
            Al::Set(s) => out.extend(s),
            Al::Tuple(items) => items.iter().for_each(|a| a.flat(out)),
        }
    }
    fn all(&self) -> HashSet<usize> {
        let mut out = HashSet::new();
        self.flat(&mut out);
        out
    }
}

#[derive(Default)]
struct Checker {
    pos: usize,
    /// Tensors each variable may alias.
    aliases: HashMap<Var, Al>,
    /// Memories each storage variable may be.
    memories: HashMap<Var, HashSet<usize>>,
    next_memory: usize,
    tensors: Vec<Tensor>,
}

const STORAGES: &[OpId] = &[ops::MEMORY_ALLOC_STORAGE, ops::VM_ALLOC_STORAGE];

/// The ops whose result is a view of their first argument (also the packed
/// `vm.builtin.reshape`).
const VIEWS: &[OpId] = &[ops::RESHAPE, ops::MEMORY_VIEW, ops::MEMORY_ENSURE_ZERO_OFFSET];

/// Checks the planned function; `Err` names the first overlap found.
pub fn check(f: &RelaxFunction) -> Result<(), String> {
    let mut c = Checker::default();
    c.seq(f, f.func.body, true);
    let mut by_memory: HashMap<usize, Vec<&Tensor>> = HashMap::new();
    for t in &c.tensors {
        by_memory.entry(t.memory).or_default().push(t);
    }
    for ts in by_memory.values() {
        for a in ts {
            for b in ts {
                if a.at < b.at && a.last >= b.at {
                    return Err(format!(
                        "`{}` reuses the memory of `{}`, which is still used afterwards",
                        b.var.map_or("?", |v| f.vars[v].name.as_str()),
                        a.var.map_or("?", |v| f.vars[v].name.as_str())
                    ));
                }
            }
        }
    }
    Ok(())
}

impl Checker {
    fn use_var(&mut self, v: Var, at: usize) {
        if let Some(ts) = self.aliases.get(&v).map(Al::all) {
            for t in ts {
                let last = &mut self.tensors[t].last;
                *last = (*last).max(at);
            }
        }
    }

    /// Records every use in `e` (nested sequences included) at position `at`, or forever.
    fn uses(&mut self, f: &RelaxFunction, e: Expr, at: usize) {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match &f.exprs[x] {
                ExprData::Var(v) => self.use_var(*v, at),
                ExprData::Function(node) => {
                    let mut inner = vec![f.seq(node.body).body];
                    let mut seqs = vec![node.body];
                    while let Some(s) = seqs.pop() {
                        let s = f.seq(s);
                        inner.push(s.body);
                        for &b in &s.blocks {
                            for bd in &f.blocks[b].bindings {
                                inner.push(bd.value);
                                seqs.extend(f.exprs[bd.value].nested_seqs());
                            }
                        }
                    }
                    for y in inner {
                        self.uses(f, y, usize::MAX);
                    }
                }
                _ => {}
            }
            stack.extend(f.operands(x));
        }
    }

    /// What a leaf-ish expression may alias, keeping tuple structure.
    fn aliases_of(&self, f: &RelaxFunction, e: Expr) -> Al {
        match &f.exprs[e] {
            ExprData::Var(v) => self.aliases.get(v).cloned().unwrap_or_else(Al::none),
            ExprData::Tuple(fields) => Al::Tuple(f.list(fields).iter().map(|&x| self.aliases_of(f, x)).collect()),
            ExprData::GetItem { tuple, index } => match self.aliases_of(f, *tuple) {
                Al::Tuple(items) => items.get(*index as usize).cloned().unwrap_or_else(Al::none),
                other => Al::Set(other.all()),
            },
            _ => {
                let mut out = HashSet::new();
                for x in f.operands(e) {
                    self.aliases_of(f, x).flat(&mut out);
                }
                Al::Set(out)
            }
        }
    }

    /// Walks a sequence; returns what its result may alias.
    fn seq(&mut self, f: &RelaxFunction, s: Seq, top: bool) -> (Al, HashSet<usize>) {
        let s = f.seq(s);
        for &b in &s.blocks {
            for bd in f.blocks[b].bindings.clone() {
                self.pos += 1;
                let at = self.pos;
                let before = self.tensors.len();
                let (tensors, memories) = self.value(f, bd.value, at);
                for t in &mut self.tensors[before..] {
                    t.var.get_or_insert(bd.var);
                }
                self.aliases.insert(bd.var, tensors);
                if !memories.is_empty() {
                    self.memories.insert(bd.var, memories);
                }
            }
        }
        self.pos += 1;
        let end = if top { usize::MAX } else { self.pos };
        self.uses(f, s.body, end);
        let mems = match &f.exprs[s.body] {
            ExprData::Var(v) => self.memories.get(v).cloned().unwrap_or_default(),
            _ => HashSet::new(),
        };
        (self.aliases_of(f, s.body), mems)
    }

    /// The tensors and memories a binding's value may be.
    fn value(&mut self, f: &RelaxFunction, value: Expr, at: usize) -> (Al, HashSet<usize>) {
        match &f.exprs[value] {
            ExprData::If { cond, then_branch, else_branch } => {
                self.uses(f, *cond, at);
                let (t1, m1) = self.seq(f, *then_branch, false);
                let (t2, m2) = self.seq(f, *else_branch, false);
                (Al::Set(t1.all().union(&t2.all()).copied().collect()), m1.union(&m2).copied().collect())
            }
            // A copy or match_cast only names the tensor again (its uses are the uses).
            ExprData::Var(v) => (self.aliases_of(f, value), self.memories.get(v).cloned().unwrap_or_default()),
            ExprData::Call(call) => {
                let name = f.callee_op(call);
                let view = name.is_some_and(|id| VIEWS.contains(&id))
                    || matches!(&f.exprs[call.callee], ExprData::ExternFunc(e) if e == "vm.builtin.reshape");
                if view && let Some(&first) = f.list(call.args).first() {
                    // A view names its input's memory again without reading it: its uses
                    // are the uses (a dead view does not keep the memory alive).
                    for &a in &f.list(call.args)[1..] {
                        self.uses(f, a, at);
                    }
                    return (self.aliases_of(f, first), HashSet::new());
                }
                self.uses(f, value, at);
                if name.is_some_and(|id| STORAGES.contains(&id)) {
                    self.next_memory += 1;
                    return (Al::none(), HashSet::from([self.next_memory]));
                }
                if name == Some(ops::MEMORY_ALLOC_TENSOR) {
                    let mems = match f.list(call.args).first().map(|&a| &f.exprs[a]) {
                        Some(ExprData::Var(s)) => self.memories.get(s).cloned().unwrap_or_default(),
                        _ => HashSet::new(),
                    };
                    let mut ts = HashSet::new();
                    for m in mems {
                        self.tensors.push(Tensor { var: None, memory: m, at, last: at });
                        ts.insert(self.tensors.len() - 1);
                    }
                    return (Al::Set(ts), HashSet::new());
                }
                // Anything else may return (a view of) an argument.
                let mut ts = HashSet::new();
                for &a in f.list(call.args) {
                    self.aliases_of(f, a).flat(&mut ts);
                }
                (Al::Set(ts), HashSet::new())
            }
            _ => {
                // Tuples and items are uses only where their parts are used.
                if !matches!(f.exprs[value], ExprData::Tuple(_) | ExprData::GetItem { .. }) {
                    self.uses(f, value, at);
                }
                (self.aliases_of(f, value), HashSet::new())
            }
        }
    }
}
