//! The dataflow graph FuseOps partitions (TVM's `IndexedForwardGraph`, as `GraphCreator`
//! builds it; `algorithms.md` §2.2).
//!
//! One node per definition, in creation order, which is topological:
//! * each parameter of the function (opaque, referenced from outside);
//! * each binding `v = value` of the sequence's blocks, after the leaf nodes its value
//!   creates. A binding whose variable is not a `DataflowVar` is referenced from outside.
//!   `call_tir` takes its kernel's `op_pattern`; other calls, tuples and `match_cast` are
//!   opaque (a `match_cast` without incoming edges); a tuple item is injective;
//! * a leaf node for every constant, shape, prim value, string or dtype operand (and for
//!   variables defined outside the sequence), placed just before its first user.
//!
//! Edges run from producer to consumer and carry the consumer's pattern.
//!
//! **Project rule** (high-level ops): in a function that calls no kernel (`call_tir`)
//! at all, as a model is before `legalize-ops`, an op call takes the pattern kind of
//! its op ([`crate::op_pattern`]) when the op has a legalization, so that fusion groups
//! form before lowering. In a function with kernels, op calls are opaque as in TVM:
//! legalization left them, so they could not become part of a fused kernel.

use std::collections::HashMap;

use relax_ir::op::OpRef;
use relax_ir::{BindingKind, Block, Constant, Expr, ExprData, Global, Module, RelaxFunction, Seq, Var};
use relax_ir::{OpId, ops};

use crate::analysis::op_pattern::{OpPatternKind, annotated_op_pattern, op_pattern};

/// An edge to a consumer, labelled with the consumer's pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The consumer's node index.
    pub node: usize,
    /// The consumer's pattern.
    pub pattern: OpPatternKind,
}

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A parameter of the function.
    Param(Var),
    /// The binding at `index` of `block`, which defines `var`.
    Binding {
        /// The block.
        block: Block,
        /// The binding's position in the block.
        index: usize,
        /// The bound variable.
        var: Var,
    },
    /// A leaf operand that is not defined in the sequence (a constant, shape, prim value,
    /// string, dtype, or a variable of an enclosing scope).
    Leaf(Expr),
}

/// Where a node's pattern comes from (for remarks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A parameter or leaf: never fused.
    Input,
    /// `call_tir` of a kernel: its `op_pattern`, or opaque when it has none.
    Kernel {
        /// The kernel.
        callee: Global,
        /// Whether the kernel carries an `op_pattern` attribute.
        annotated: bool,
    },
    /// A call of a high-level op (pattern kind of the op table, or opaque).
    Op(OpRef),
    /// Another call (a Relax function, a packed function, `call_dps_packed`).
    OtherCall,
    /// `t[i]`.
    TupleItem,
    /// `t[i]` of a weight parameter (the parameters after `num_input`).
    WeightItem,
    /// A `match_cast`.
    MatchCast,
    /// Anything else (a tuple, a variable, a constant, an `if`).
    Other,
}

/// A node of the graph.
#[derive(Clone, Debug)]
pub struct Node {
    /// What the node stands for.
    pub kind: NodeKind,
    /// Its pattern kind.
    pub pattern: OpPatternKind,
    /// Where the pattern comes from.
    pub source: Source,
    /// Referenced from outside the dataflow region: it can only end a fusion.
    pub extern_ref: bool,
    /// Edges to consumers, in creation order.
    pub outputs: Vec<Edge>,
}

/// The graph of one sequence.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Nodes in creation (topological) order.
    pub nodes: Vec<Node>,
    /// The node of each variable.
    pub var_node: HashMap<Var, usize>,
}

/// The key that identifies a leaf node: variables by variable, module constants by
/// constant (one object in TVM), other leaves by expression node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum LeafKey {
    Var(Var),
    Const(Constant),
    Expr(Expr),
}

/// Builds graphs.
struct Builder<'a> {
    m: &'a Module,
    f: &'a RelaxFunction,
    g: Graph,
    leaves: HashMap<LeafKey, usize>,
    weight_params: Vec<Var>,
    high_level: bool,
}

/// True when `f` calls a kernel (`call_tir` or `call_tir_inplace`) anywhere.
pub fn calls_kernels(f: &RelaxFunction) -> bool {
    let mut any = false;
    f.for_each_reachable(|_, d| {
        if let ExprData::Call(c) = d {
            any |= matches!(&f.exprs[c.callee], ExprData::Op(op) if is_call_tir(op));
        }
    });
    any
}

/// True for `relax.call_tir` and `relax.call_tir_inplace`.
pub fn is_call_tir(op: &OpRef) -> bool {
    op.is_one_of(&[ops::CALL_TIR, ops::CALL_TIR_INPLACE])
}

/// The graph of the sequence `s` of `f`. `params` are the function's parameters when
/// `s` is its body (empty for nested sequences).
pub fn build(m: &Module, f: &RelaxFunction, s: Seq, params: &[Var]) -> Graph {
    let weight_params = match f.func.attrs.get("num_input").and_then(|v| v.as_int()) {
        Some(k) if k >= 0 => params.iter().skip(k as usize).copied().collect(),
        _ => Vec::new(),
    };
    let mut b =
        Builder { m, f, g: Graph::default(), leaves: HashMap::new(), weight_params, high_level: !calls_kernels(f) };
    for &p in params {
        let i = b.push(NodeKind::Param(p), OpPatternKind::Opaque, Source::Input, true);
        b.g.var_node.insert(p, i);
        b.leaves.insert(LeafKey::Var(p), i);
    }
    for &blk in &f.seq(s).blocks {
        for (index, bd) in f.blocks[blk].bindings.iter().enumerate() {
            b.binding(blk, index, bd);
        }
    }
    b.g
}

impl Builder<'_> {
    fn push(&mut self, kind: NodeKind, pattern: OpPatternKind, source: Source, extern_ref: bool) -> usize {
        self.g.nodes.push(Node { kind, pattern, source, extern_ref, outputs: Vec::new() });
        self.g.nodes.len() - 1
    }

    fn binding(&mut self, block: Block, index: usize, bd: &relax_ir::Binding) {
        let f = self.f;
        let var = bd.var;
        let kind = NodeKind::Binding { block, index, var };
        // Leaf operands first (they get the indices before the binding's node).
        let mut inputs: Vec<(usize, OpPatternKind)> = Vec::new();
        let (pattern, source) = match (&bd.kind, &f.exprs[bd.value]) {
            (BindingKind::MatchCast(_), _) => (OpPatternKind::Opaque, Source::MatchCast),
            (BindingKind::Value, ExprData::Call(call)) => {
                let (pattern, source, args) = self.call_pattern(call, bd.value);
                for a in args {
                    self.leaf(a, pattern, &mut inputs);
                }
                (pattern, source)
            }
            (BindingKind::Value, ExprData::GetItem { tuple, .. }) => {
                let weight = matches!(f.exprs[*tuple], ExprData::Var(v) if self.weight_params.contains(&v));
                let (pattern, source) = if weight {
                    (OpPatternKind::Opaque, Source::WeightItem)
                } else {
                    (OpPatternKind::Injective, Source::TupleItem)
                };
                self.leaf(*tuple, pattern, &mut inputs);
                (pattern, source)
            }
            (BindingKind::Value, _) => {
                // Every variable and constant inside, in post-order.
                let mut uses = Vec::new();
                post_order_leaves(f, bd.value, &mut uses);
                for e in uses {
                    self.leaf(e, OpPatternKind::Opaque, &mut inputs);
                }
                (OpPatternKind::Opaque, Source::Other)
            }
        };
        let extern_ref = !f.vars[var].dataflow;
        let i = self.push(kind, pattern, source, extern_ref);
        for (src, p) in inputs {
            self.g.nodes[src].outputs.push(Edge { node: i, pattern: p });
        }
        self.g.var_node.insert(var, i);
        self.leaves.insert(LeafKey::Var(var), i);
    }

    /// The pattern of a call, where it comes from, and the operands that get edges.
    fn call_pattern(&self, call: &relax_ir::Call, value: Expr) -> (OpPatternKind, Source, Vec<Expr>) {
        let f = self.f;
        match &f.exprs[call.callee] {
            ExprData::Op(op) if is_call_tir(op) => {
                let args = match f.list(call.args).get(1).map(|&t| &f.exprs[t]) {
                    Some(ExprData::Tuple(fields)) => f.list(fields).to_vec(),
                    Some(_) => vec![f.list(call.args)[1]],
                    None => Vec::new(),
                };
                match f.list(call.args).first().map(|&g| &f.exprs[g]) {
                    Some(&ExprData::Global(g)) => {
                        let ann = self.m.prim_func(g).and_then(annotated_op_pattern);
                        let source = Source::Kernel { callee: g, annotated: ann.is_some() };
                        (ann.unwrap_or(OpPatternKind::Opaque), source, args)
                    }
                    _ => (OpPatternKind::Opaque, Source::OtherCall, args),
                }
            }
            ExprData::Op(op) => {
                let pattern = match op.id() {
                    Some(id) if self.high_level && crate::legalize::legalization(id).is_some() => {
                        high_level_pattern(f, call, value, id)
                    }
                    _ => OpPatternKind::Opaque,
                };
                (pattern, Source::Op(op.clone()), f.list(call.args).to_vec())
            }
            _ => (OpPatternKind::Opaque, Source::OtherCall, f.list(call.args).to_vec()),
        }
    }

    /// Adds the edge(s) from a leaf operand (tuples are flattened) to the binding being
    /// built.
    fn leaf(&mut self, e: Expr, pattern: OpPatternKind, inputs: &mut Vec<(usize, OpPatternKind)>) {
        let key = match &self.f.exprs[e] {
            ExprData::Tuple(fields) => {
                for &x in self.f.list(fields) {
                    self.leaf(x, pattern, inputs);
                }
                return;
            }
            ExprData::Var(v) => LeafKey::Var(*v),
            ExprData::Const(c) => LeafKey::Const(*c),
            ExprData::Shape(_) | ExprData::Prim(_) | ExprData::Str(_) | ExprData::DType(_) => LeafKey::Expr(e),
            // Globals, extern functions and ops are not nodes.
            _ => return,
        };
        let node = match self.leaves.get(&key) {
            Some(&n) => n,
            None => {
                let n = self.push(NodeKind::Leaf(e), OpPatternKind::Opaque, Source::Input, false);
                self.leaves.insert(key, n);
                if let LeafKey::Var(v) = key {
                    self.g.var_node.insert(v, n);
                }
                n
            }
        };
        inputs.push((node, pattern));
    }
}

/// The pattern kind of a high-level op call: the kind of its op, except that a
/// broadcast op one of whose tensor arguments has the shape of the result is elementwise,
/// as the analysis of its legalized kernel finds (`C[i, j] = A[i, j] + B[j]`).
fn high_level_pattern(f: &RelaxFunction, call: &relax_ir::Call, value: Expr, id: OpId) -> OpPatternKind {
    let kind = op_pattern(id);
    if kind != OpPatternKind::Broadcast {
        return kind;
    }
    let dims = |e: Expr| f.ty_of(e).and_then(|t| f.pool.ty(t).dims().map(<[_]>::to_vec));
    let Some(out) = dims(value) else { return kind };
    if f.list(call.args).iter().any(|&a| dims(a).as_deref() == Some(out.as_slice())) {
        OpPatternKind::ElemWise
    } else {
        kind
    }
}

/// The variables and constants inside `e` (entering nested sequences), in post-order.
fn post_order_leaves(f: &RelaxFunction, e: Expr, out: &mut Vec<Expr>) {
    match &f.exprs[e] {
        ExprData::Var(_) | ExprData::Const(_) => out.push(e),
        ExprData::Call(c) => {
            post_order_leaves(f, c.callee, out);
            for &a in f.list(c.args) {
                post_order_leaves(f, a, out);
            }
        }
        ExprData::Tuple(fields) => {
            for &x in f.list(fields) {
                post_order_leaves(f, x, out);
            }
        }
        ExprData::GetItem { tuple, .. } => post_order_leaves(f, *tuple, out),
        ExprData::If { cond, then_branch, else_branch } => {
            post_order_leaves(f, *cond, out);
            for &s in [then_branch, else_branch] {
                seq_leaves(f, s, out);
            }
        }
        ExprData::Function(node) => seq_leaves(f, node.body, out),
        _ => {}
    }
}

fn seq_leaves(f: &RelaxFunction, s: Seq, out: &mut Vec<Expr>) {
    let s = f.seq(s);
    for &b in &s.blocks {
        for bd in &f.blocks[b].bindings {
            post_order_leaves(f, bd.value, out);
        }
    }
    post_order_leaves(f, s.body, out);
}
