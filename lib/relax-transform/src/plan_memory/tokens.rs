//! Phase 1 of memory planning: one request (TVM's storage token) per
//! `R.builtin.alloc_tensor`, alias propagation, reference counts and discards
//! (`algorithms.md` §5.3).
//!
//! The walk records what phase 2 needs as a list of [`Event`]s in program order, so
//! phase 2 never walks the IR again. Storage follows every value-preserving binding:
//!
//! | binding | tokens of the bound variable |
//! |---|---|
//! | `x = y`, `x = R.match_cast(y, T)` | those of `y` |
//! | `t = (a, b)` / `x = t[i]` | nested / selected |
//! | `R.reshape`, `R.memory.view`, `R.memory.ensure_zero_offset`, `R.call_packed("vm.builtin.reshape", ...)` | those of the input (a view) |
//! | a packed call whose result may hold a tensor | the union of its arguments' (it may return one of them) |
//!
//! A call of a module PrimFunc, of `R.vm.call_tir_dyn` or a packed call *uses* the tokens
//! of its arguments (a reference); a token allocated in another block is discarded first,
//! as planning is block-local. Every other call (ops, Relax functions, closures) discards
//! its arguments' tokens, and so do `if` conditions, sequence results (the function's
//! result, branch results) and variables captured by a local function. A discarded
//! allocation is not planned.

use std::collections::{HashMap, HashSet};

use relax_ir::{Block, DataType, Expr, ExprData, Func, Module, PrimExpr, RelaxFunction, TensorShape, Ty, TyData, Var};
use relax_ir::{OpId, ops};

use super::bounds::{Bounds, token_bytes, upper_bound_dim};
use relax_ir::Seq;

/// An allocation request: one `R.builtin.alloc_tensor`.
pub type ReqId = usize;

/// One `R.builtin.alloc_tensor` that may be planned.
#[derive(Clone, Debug)]
pub struct Request {
    /// The variable it binds.
    pub var: Var,
    /// The block of the allocation.
    pub block: Block,
    /// The sequence of the allocation.
    pub seq: Seq,
    /// Bytes needed (upper-bounded, TVM's formula).
    pub bytes: PrimExpr,
    /// Element type.
    pub dtype: DataType,
    /// Storage scope.
    pub scope: String,
    /// Uses by kernel calls (counted over all aliases).
    pub refs: u32,
    /// True once the request is ruled out of planning.
    pub discarded: bool,
}

/// What phase 2 replays, in program order.
#[derive(Clone, Debug)]
pub enum Event {
    /// An allocation request is made.
    Alloc(ReqId),
    /// A kernel call uses these requests (with multiplicity).
    Use(Vec<ReqId>),
    /// A nested sequence (an `if` branch) starts.
    Enter(Seq),
    /// That sequence ends.
    Exit(Seq),
}

/// The tokens an expression refers to.
#[derive(Clone, Debug, Default)]
enum Tokens {
    #[default]
    None,
    Leaf(ReqId),
    Tuple(Vec<Tokens>),
    /// Any of these, with no known structure (what an opaque call may return).
    Any(Vec<ReqId>),
}

impl Tokens {
    fn leaves(&self, out: &mut Vec<ReqId>) {
        match self {
            Tokens::None => {}
            Tokens::Leaf(r) => out.push(*r),
            Tokens::Tuple(items) => items.iter().for_each(|t| t.leaves(out)),
            Tokens::Any(rs) => out.extend(rs),
        }
    }
}

/// The outcome of phase 1 for one planning unit (a function body or a local function).
#[derive(Clone, Debug, Default)]
pub struct Unit {
    /// The requests.
    pub requests: Vec<Request>,
    /// The events.
    pub events: Vec<Event>,
    /// The sequence the unit plans (its body).
    pub root: Option<Seq>,
    /// Local functions found inside, each a unit of its own.
    pub locals: Vec<Seq>,
}

/// Phase 1 over the unit whose body is the sequence at `root`.
pub fn collect(m: &Module, f: &mut RelaxFunction, bounds: &Bounds, root: Seq) -> Unit {
    let an = bounds.analyzer();
    let mut cx = Collector { m, bounds, an, var_tokens: HashMap::new(), unit: Unit::default(), blocks: Vec::new() };
    cx.unit.root = Some(root);
    cx.seq(f, root, false);
    cx.unit
}

struct Collector<'a> {
    m: &'a Module,
    bounds: &'a Bounds,
    an: relax_ir::arith::Analyzer,
    var_tokens: HashMap<Var, Tokens>,
    unit: Unit,
    blocks: Vec<Block>,
}

/// The ops whose result is a view of their first argument.
const VIEW_OPS: &[OpId] = &[ops::RESHAPE, ops::MEMORY_VIEW, ops::MEMORY_ENSURE_ZERO_OFFSET];

impl Collector<'_> {
    fn discard(&mut self, t: &Tokens) {
        let mut l = Vec::new();
        t.leaves(&mut l);
        for r in l {
            self.unit.requests[r].discarded = true;
        }
    }

    fn live(&self, t: &Tokens) -> Vec<ReqId> {
        let mut l = Vec::new();
        t.leaves(&mut l);
        l.retain(|&r| !self.unit.requests[r].discarded);
        l
    }

    fn tokens_of(&self, f: &RelaxFunction, e: Expr) -> Tokens {
        match &f.exprs[e] {
            ExprData::Var(v) => self.var_tokens.get(v).cloned().unwrap_or_default(),
            ExprData::Tuple(fields) => Tokens::Tuple(f.list(fields).iter().map(|&x| self.tokens_of(f, x)).collect()),
            ExprData::GetItem { tuple, index } => match self.tokens_of(f, *tuple) {
                Tokens::Tuple(items) => items.get(*index as usize).cloned().unwrap_or_default(),
                Tokens::None => Tokens::None,
                other => {
                    let mut l = Vec::new();
                    other.leaves(&mut l);
                    Tokens::Any(l)
                }
            },
            _ => Tokens::None,
        }
    }

    fn seq(&mut self, f: &mut RelaxFunction, loc: Seq, nested: bool) {
        if nested {
            self.unit.events.push(Event::Enter(loc));
        }
        let s = f.seq(loc).clone();
        for &b in &s.blocks {
            self.blocks.push(b);
            for bd in f.blocks[b].bindings.clone() {
                let t = self.value(f, bd.var, bd.value, loc);
                self.var_tokens.insert(bd.var, t);
            }
            self.blocks.pop();
        }
        let t = self.tokens_of(f, s.body);
        self.discard(&t);
        if nested {
            self.unit.events.push(Event::Exit(loc));
        }
    }

    /// The tokens of a binding's value (after its effects on the requests).
    fn value(&mut self, f: &mut RelaxFunction, var: Var, value: Expr, loc: Seq) -> Tokens {
        match f.exprs[value].clone() {
            ExprData::Var(_) | ExprData::Tuple(_) | ExprData::GetItem { .. } => self.tokens_of(f, value),
            ExprData::If { cond, then_branch, else_branch } => {
                let t = self.tokens_of(f, cond);
                self.discard(&t);
                self.seq(f, then_branch, true);
                self.seq(f, else_branch, true);
                Tokens::None
            }
            ExprData::Function(node) => {
                self.unit.locals.push(node.body);
                // Captured variables may outlive any use we can see.
                let inner: HashSet<Var> = local_vars(f, &node);
                let mut captured = Vec::new();
                for_each_use(f, node.body, &mut |v| {
                    if !inner.contains(&v) {
                        captured.push(v);
                    }
                });
                for v in captured {
                    if let Some(t) = self.var_tokens.get(&v).cloned() {
                        self.discard(&t);
                    }
                }
                Tokens::None
            }
            ExprData::Call(call) => {
                let callee = f.exprs[call.callee].clone();
                match callee {
                    ExprData::Op(op) if op.is(ops::BUILTIN_ALLOC_TENSOR) => self.request(f, var, value, loc),
                    ExprData::Op(op) if op.is_one_of(VIEW_OPS) => {
                        f.list(call.args).first().map(|&a| self.tokens_of(f, a)).unwrap_or_default()
                    }
                    ExprData::Op(op) if op.is(ops::VM_CALL_TIR_DYN) => {
                        self.use_args(f, f.list(call.args));
                        Tokens::None
                    }
                    ExprData::ExternFunc(name) if name == "vm.builtin.reshape" => {
                        f.list(call.args).first().map(|&a| self.tokens_of(f, a)).unwrap_or_default()
                    }
                    ExprData::ExternFunc(_) => {
                        let used = self.use_args(f, f.list(call.args));
                        if may_hold_tensor(f, f.ty_of(value)) { Tokens::Any(used) } else { Tokens::None }
                    }
                    ExprData::Global(g) if is_kernel(self.m, f, g, value) => {
                        self.use_args(f, f.list(call.args));
                        Tokens::None
                    }
                    _ => {
                        for &a in f.list(call.args) {
                            let t = self.tokens_of(f, a);
                            self.discard(&t);
                        }
                        Tokens::None
                    }
                }
            }
            _ => Tokens::None,
        }
    }

    /// A kernel or packed call uses its arguments: tokens of other blocks are
    /// discarded, the others get one more reference. Returns the live requests used.
    fn use_args(&mut self, f: &RelaxFunction, args: &[Expr]) -> Vec<ReqId> {
        let cur = self.blocks.last().copied();
        let mut used = Vec::new();
        for &a in args {
            let t = self.tokens_of(f, a);
            let mut l = Vec::new();
            t.leaves(&mut l);
            for &r in &l {
                if Some(self.unit.requests[r].block) != cur {
                    self.unit.requests[r].discarded = true;
                }
            }
            for r in self.live(&t) {
                self.unit.requests[r].refs += 1;
                used.push(r);
            }
        }
        self.unit.events.push(Event::Use(used.clone()));
        used
    }

    /// A new request for the `R.builtin.alloc_tensor` at `value`, when it can be planned:
    /// its type is a tensor of known dims and dtype.
    fn request(&mut self, f: &mut RelaxFunction, var: Var, value: Expr, loc: Seq) -> Tokens {
        let ExprData::Call(call) = f.exprs[value].clone() else { return Tokens::None };
        let Some(ty) = f.ty_of(value) else { return Tokens::None };
        let TyData::Tensor { shape: TensorShape::Dims(dims), dtype, .. } = f.pool.ty(ty).clone() else {
            return Tokens::None;
        };
        if dtype.is_void() {
            return Tokens::None;
        }
        let scope = match f.list(call.args).get(3).map(|&a| &f.exprs[a]) {
            Some(ExprData::Str(s)) => s.clone(),
            _ => "global".to_string(),
        };
        let ub: Vec<PrimExpr> = dims.iter().map(|&d| upper_bound_dim(f, &self.an, self.bounds, d)).collect();
        let Some(bytes) = token_bytes(f, &ub, dtype) else { return Tokens::None };
        let Some(&block) = self.blocks.last() else { return Tokens::None };
        let id = self.unit.requests.len();
        self.unit.requests.push(Request { var, block, seq: loc, bytes, dtype, scope, refs: 0, discarded: false });
        self.unit.events.push(Event::Alloc(id));
        Tokens::Leaf(id)
    }
}

/// True when calling `g` calls a kernel: a PrimFunc of the module, or (in text of a
/// single function, whose callees are not in the module) an unresolved function called
/// as an effect.
fn is_kernel(m: &Module, f: &RelaxFunction, g: relax_ir::Global, call: Expr) -> bool {
    match m.globals.get(g).map(|x| &x.func) {
        Some(Func::Prim(_)) => true,
        Some(Func::Unresolved) => f.ty_of(call).is_some_and(|t| f.pool.ty(t).is_void()),
        _ => false,
    }
}

/// True when a value of type `t` may hold (or be) a tensor.
fn may_hold_tensor(f: &RelaxFunction, t: Option<Ty>) -> bool {
    let Some(t) = t else { return true };
    match f.pool.ty(t) {
        TyData::Tensor { .. } | TyData::Object => true,
        TyData::Tuple(fields) => fields.iter().any(|&x| may_hold_tensor(f, Some(x))),
        TyData::Prim { .. } | TyData::Shape { .. } | TyData::Callable { .. } => false,
    }
}

/// The variables a local function defines: its parameters and every variable bound in
/// it (nested sequences included).
fn local_vars(f: &RelaxFunction, node: &relax_ir::FunctionNode) -> HashSet<Var> {
    let mut out: HashSet<Var> = node.params.iter().copied().collect();
    let mut stack = vec![node.body];
    while let Some(s) = stack.pop() {
        for &b in &f.seq(s).blocks {
            for bd in &f.blocks[b].bindings {
                out.insert(bd.var);
                let value = &f.exprs[bd.value];
                if let ExprData::Function(inner) = value {
                    out.extend(inner.params.iter().copied());
                }
                stack.extend(value.nested_seqs());
            }
        }
    }
    out
}

/// Calls `cb` on every variable used in `s` (nested sequences included).
fn for_each_use(f: &RelaxFunction, s: Seq, cb: &mut dyn FnMut(Var)) {
    let s = f.seq(s);
    let mut stack: Vec<Expr> = vec![s.body];
    for &b in &s.blocks {
        stack.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
    }
    while let Some(e) = stack.pop() {
        match &f.exprs[e] {
            ExprData::Var(v) => cb(*v),
            d => {
                for s in d.nested_seqs() {
                    for_each_use(f, s, cb);
                }
            }
        }
        stack.extend(f.operands(e));
    }
}
