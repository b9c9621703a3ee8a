//! Operator pattern kinds (TVM's `OpPatternKind`) and their analysis.
//!
//! * [`OpPatternKind`]: the kinds, ordered as in TVM so that `max` combines them.
//! * [`analyze_prim_func`]: the kind of a PrimFunc, computed from the index patterns of its
//!   blocks exactly as TVM's `AnalyzeOpPatternKind` (`src/relax/analysis/
//!   tir_op_pattern_kind.cc`) does; the `annotate-tir-op-pattern` pass stores it as the
//!   `op_pattern` attribute, and FuseOps reads it back with [`annotated_op_pattern`].
//! * [`op_pattern`]: the kind of a high-level Relax op, by op-table name.
//!
//! The algorithm is `shared/design/algorithms.md` §1. TVM compares index expressions by
//! node identity (`same_as`); expressions here are interned, so identity is approximated
//! by the project rule of §1: two indices are identical iff both are the same variable
//! (on parsed input, two occurrences of a literal or of a compound expression are always
//! distinct nodes in TVM).

use std::collections::HashSet;

use relax_ir::op::{OpClass, OpId, OpTable, ops};
use relax_ir::{AttrValue, BlockNode, Buffer, IterKind, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

/// How an operator reads its inputs, in TVM's order: a fusion decision compares kinds
/// with `<`/`max`, so the derived ordering (by value) is part of the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpPatternKind {
    /// `kElemWise` (0): every input is read at exactly the output's indices.
    ElemWise = 0,
    /// `kBroadcast` (1): inputs are read at a subsequence of the output's indices.
    Broadcast = 1,
    /// `kInjective` (2): inputs are read at indices built from the output's index
    /// variables only (transpose, slices, constant-shape reshapes).
    Injective = 2,
    /// `kCommReduce` (3): a commutative reduction.
    CommReduce = 3,
    /// `kOutEWiseFusable` (4): a complex op (matmul, convolution, softmax) whose output
    /// can take elementwise epilogues.
    OutEWiseFusable = 4,
    /// `kTuple` (7): a tuple (never produced for Relax).
    Tuple = 7,
    /// `kOpaque` (8): anything else; never fused.
    Opaque = 8,
}

impl OpPatternKind {
    /// Every kind, in order.
    pub const ALL: [OpPatternKind; 7] = [
        OpPatternKind::ElemWise,
        OpPatternKind::Broadcast,
        OpPatternKind::Injective,
        OpPatternKind::CommReduce,
        OpPatternKind::OutEWiseFusable,
        OpPatternKind::Tuple,
        OpPatternKind::Opaque,
    ];

    /// TVM's integer value, as stored in the `op_pattern` attribute.
    pub fn value(self) -> i64 {
        self as i64
    }

    /// The kind with TVM's integer value `v` (`None` for 5, 6 and values out of range).
    pub fn from_value(v: i64) -> Option<OpPatternKind> {
        OpPatternKind::ALL.into_iter().find(|k| k.value() == v)
    }

    /// TVM's enumerator name (`kElemWise`, ...).
    pub fn tvm_name(self) -> &'static str {
        match self {
            OpPatternKind::ElemWise => "kElemWise",
            OpPatternKind::Broadcast => "kBroadcast",
            OpPatternKind::Injective => "kInjective",
            OpPatternKind::CommReduce => "kCommReduce",
            OpPatternKind::OutEWiseFusable => "kOutEWiseFusable",
            OpPatternKind::Tuple => "kTuple",
            OpPatternKind::Opaque => "kOpaque",
        }
    }
}

impl std::fmt::Display for OpPatternKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tvm_name())
    }
}

/// The name of the PrimFunc attribute that holds the kind.
pub const OP_PATTERN_ATTR: &str = "op_pattern";

/// The kind stored in a PrimFunc's `op_pattern` attribute, as FuseOps reads it: `None`
/// when the attribute is missing or not one of TVM's kind values (FuseOps then treats
/// the function as [`OpPatternKind::Opaque`]). Booleans count as 0/1, as in TVM.
pub fn annotated_op_pattern(f: &PrimFunc) -> Option<OpPatternKind> {
    f.attrs.get(OP_PATTERN_ATTR).and_then(AttrValue::as_int).and_then(OpPatternKind::from_value)
}

/// The pattern kind of a PrimFunc (TVM's `AnalyzeOpPatternKind`), from its blocks in
/// program order; see the module documentation and `algorithms.md` §1.
///
/// A function without blocks (lowered TIR) is [`OpPatternKind::ElemWise`], as in TVM:
/// only blocks are classified.
pub fn analyze_prim_func(f: &PrimFunc) -> OpPatternKind {
    let mut a = Analyzer {
        f,
        param_buffers: f.buffer_map.iter().map(|&(_, b)| b).collect(),
        store: None,
        loads: Vec::new(),
        kind: OpPatternKind::ElemWise,
    };
    a.visit_stmt(f.body);
    a.kind
}

/// A pending step of the statement walk.
enum Work<'a> {
    /// Visit a statement.
    Stmt(Stmt),
    /// Classify a block whose body has been visited.
    FinishBlock(&'a BlockNode),
}

/// A buffer store seen in the current block.
#[derive(Clone)]
struct Store {
    buffer: Buffer,
    indices: Vec<PrimExpr>,
}

/// A buffer load seen in the current block.
struct Load {
    buffer: Buffer,
    indices: Vec<PrimExpr>,
}

/// TVM's `PatternKindAnalyzer`: a visitor with the state of the block being visited.
/// Nested blocks reset that state, exactly as in TVM (an enclosing block is classified
/// from what is left after its last nested block).
struct Analyzer<'a> {
    f: &'a PrimFunc,
    param_buffers: HashSet<Buffer>,
    store: Option<Store>,
    loads: Vec<Load>,
    kind: OpPatternKind,
}

impl Analyzer<'_> {
    /// Visits `root` in TVM's order (expressions of a statement before its body, `then`
    /// before `else`), with an explicit stack: deep nests must not overflow.
    fn visit_stmt(&mut self, root: Stmt) {
        let f = self.f;
        let mut work = vec![Work::Stmt(root)];
        while let Some(w) = work.pop() {
            let s = match w {
                Work::Stmt(s) => s,
                Work::FinishBlock(b) => {
                    self.finish_block(b);
                    continue;
                }
            };
            match &f.stmts[s] {
                StmtData::Seq(v) => work.extend(v.iter().rev().map(|&s| Work::Stmt(s))),
                StmtData::For { min, extent, step, body, .. } => {
                    self.visit_expr(*min);
                    self.visit_expr(*extent);
                    if let Some(step) = step {
                        self.visit_expr(*step);
                    }
                    work.push(Work::Stmt(*body));
                }
                StmtData::Block(b) => {
                    // The realize part: iteration bindings and predicate.
                    for iv in &b.iter_vars {
                        self.visit_expr(iv.binding);
                    }
                    if let Some(p) = b.predicate {
                        self.visit_expr(p);
                    }
                    if b.name == "root" {
                        // The root block is skipped, its body visited.
                        work.push(Work::Stmt(b.body));
                    } else {
                        // A block starts afresh; its init statement is not visited.
                        self.loads.clear();
                        self.store = None;
                        work.push(Work::FinishBlock(b));
                        work.push(Work::Stmt(b.body));
                    }
                }
                StmtData::Store { buffer, indices, value } => {
                    if let Some(prev) = &self.store
                        && !self.same_array(indices, &prev.indices)
                    {
                        self.kind = OpPatternKind::Opaque;
                        continue;
                    }
                    self.store = Some(Store { buffer: *buffer, indices: indices.clone() });
                    self.visit_expr(*value);
                    for &i in indices {
                        self.visit_expr(i);
                    }
                }
                StmtData::If { cond, then_branch, else_branch } => {
                    self.visit_expr(*cond);
                    if let Some(e) = else_branch {
                        work.push(Work::Stmt(*e));
                    }
                    work.push(Work::Stmt(*then_branch));
                }
                StmtData::While { cond, body } => {
                    self.visit_expr(*cond);
                    work.push(Work::Stmt(*body));
                }
                StmtData::Let { value, body, .. } => {
                    self.visit_expr(*value);
                    work.push(Work::Stmt(*body));
                }
                StmtData::Evaluate(e) => self.visit_expr(*e),
                StmtData::Assert { cond, message, body } => {
                    self.visit_expr(*cond);
                    self.visit_expr(*message);
                    work.push(Work::Stmt(*body));
                }
                StmtData::Attr { value, body, .. } => {
                    self.visit_expr(*value);
                    work.push(Work::Stmt(*body));
                }
                StmtData::DeclBuffer { body, .. } | StmtData::Allocate { body, .. } => work.push(Work::Stmt(*body)),
            }
        }
    }

    /// Records every buffer load in `e`, outer loads before the loads in their indices.
    fn visit_expr(&mut self, e: PrimExpr) {
        let pool = &self.f.pool;
        // Iterative pre-order walk over the expression tree (a shared operand is visited
        // once per occurrence, as in TVM's tree).
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let PrimExprData::Load { buffer, indices, .. } = pool.prim(e) {
                self.loads.push(Load { buffer: *buffer, indices: indices.clone() });
            }
            let start = stack.len();
            pool.for_each_operand(e, |o| stack.push(o));
            stack[start..].reverse();
        }
    }

    /// Classifies a (non-root) block once its body has been visited.
    fn finish_block(&mut self, b: &BlockNode) {
        let Some(store) = self.store.clone() else {
            self.kind = OpPatternKind::Opaque;
            return;
        };

        // Classify the block by the index pattern of each load against the store.
        let mut pattern = OpPatternKind::ElemWise;
        let mut has_elem_wise = false;
        for load in &self.loads {
            if self.same_array(&store.indices, &load.indices) {
                has_elem_wise = true;
            } else if self.is_broadcast(&store, load) {
                pattern = pattern.max(OpPatternKind::Broadcast);
            } else if self.is_injective(&store, load) {
                pattern = pattern.max(OpPatternKind::Injective);
            } else {
                pattern = OpPatternKind::Opaque;
                break;
            }
        }
        // `C[i, j] = A[i, j] + B[j]` is elementwise.
        if pattern == OpPatternKind::Broadcast && has_elem_wise {
            pattern = OpPatternKind::ElemWise;
        }
        if pattern != OpPatternKind::Opaque {
            // A reduction followed by a block writing the output (softmax, norms).
            if self.is_output_block(b) && self.kind == OpPatternKind::CommReduce {
                self.kind = OpPatternKind::OutEWiseFusable;
            } else {
                self.kind = self.kind.max(pattern);
            }
            return;
        }

        // Not classifiable by indices: look at the reduction axes.
        let reduce_vars: Vec<SymVar> =
            b.iter_vars.iter().filter(|iv| iv.kind == IterKind::Reduce).map(|iv| iv.var).collect();
        if reduce_vars.is_empty() {
            self.kind = OpPatternKind::Opaque;
            return;
        }
        if self.is_fma(b.body) {
            // Matmul, convolution.
            self.kind = self.kind.max(OpPatternKind::OutEWiseFusable);
            return;
        }
        if self.loads.iter().any(|l| !self.is_pure_reduce(&reduce_vars, &l.indices)) {
            // A reduce variable inside a compound index: pooling.
            self.kind = self.kind.max(OpPatternKind::OutEWiseFusable);
            return;
        }
        self.kind = self.kind.max(OpPatternKind::CommReduce);
    }

    /// TVM's `same_as` on two index expressions: both are the same variable.
    fn same_index(&self, a: PrimExpr, b: PrimExpr) -> bool {
        let pool = &self.f.pool;
        matches!((pool.as_var(a), pool.as_var(b)), (Some(x), Some(y)) if x == y)
    }

    /// TVM's `IsSameArray`.
    fn same_array(&self, a: &[PrimExpr], b: &[PrimExpr]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.same_index(x, y))
    }

    /// TVM's `is_const_int(e, v)`: an integer literal (or a broadcast of one) equal to `v`.
    fn is_const_int(&self, e: PrimExpr, v: i64) -> bool {
        let pool = &self.f.pool;
        match pool.prim(e) {
            PrimExprData::Int(_, x) => *x == v,
            PrimExprData::Broadcast { value, .. } => pool.as_int(*value) == Some(v),
            _ => false,
        }
    }

    /// The load indices, skipping unit dims read at 0, are found among the store indices
    /// in non-decreasing positions (TVM does not advance past a match).
    fn is_broadcast(&self, store: &Store, load: &Load) -> bool {
        let shape = &self.f.buffers[load.buffer].shape;
        let mut j = 0;
        for (i, &index) in load.indices.iter().enumerate() {
            if shape.get(i).is_some_and(|&d| self.is_const_int(d, 1)) && self.is_const_int(index, 0) {
                continue;
            }
            while j < store.indices.len() && !self.same_index(store.indices[j], index) {
                j += 1;
            }
            if j == store.indices.len() {
                return false;
            }
        }
        true
    }

    /// The variables of the store indices, when every store index is a bare variable.
    fn store_vars(&self, store: &Store) -> Option<HashSet<SymVar>> {
        store.indices.iter().map(|&i| self.f.pool.as_var(i)).collect()
    }

    /// Every store index is a bare variable and the load indices use no other variable
    /// (a nested load uses its buffer's data variable, which is never a store variable).
    fn is_injective(&self, store: &Store, load: &Load) -> bool {
        let Some(vars) = self.store_vars(store) else { return false };
        !load.indices.iter().any(|&i| self.uses_var(i, |v| !vars.contains(&v), true))
    }

    /// TVM's `UsesVar`: some variable of `e` satisfies `pred`; `loads_count` says whether
    /// a nested buffer load counts as a use of a variable satisfying `pred` (its data
    /// variable).
    fn uses_var(&self, e: PrimExpr, pred: impl Fn(SymVar) -> bool, loads_count: bool) -> bool {
        let pool = &self.f.pool;
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match pool.prim(e) {
                PrimExprData::Var(v) if pred(*v) => return true,
                PrimExprData::Load { .. } if loads_count => return true,
                _ => pool.for_each_operand(e, |o| stack.push(o)),
            }
        }
        false
    }

    /// Some store variable does not appear in the load indices (TVM's
    /// `IsAllowReusePattern`), so the load is reused across store positions.
    fn allows_reuse(&self, store: &Store, load: &Load) -> bool {
        let Some(mut vars) = self.store_vars(store) else { return false };
        for &i in &load.indices {
            for v in self.f.pool.free_vars(i) {
                vars.remove(&v);
            }
        }
        !vars.is_empty()
    }

    /// `C[I] = C[I] + A[..] * B[..]`, casts ignored, where `A` and `B` are plain loads
    /// that each allow reuse (TVM's `IsFMA`).
    fn is_fma(&self, body: Stmt) -> bool {
        let pool = &self.f.pool;
        let StmtData::Store { buffer, indices, value } = &self.f.stmts[body] else { return false };
        let store = Store { buffer: *buffer, indices: indices.clone() };
        let strip = |mut e: PrimExpr| {
            while let PrimExprData::Cast(_, inner) = pool.prim(e) {
                e = *inner;
            }
            e
        };
        let as_load = |e: PrimExpr| match pool.prim(strip(e)) {
            PrimExprData::Load { buffer, indices, .. } => Some(Load { buffer: *buffer, indices: indices.clone() }),
            _ => None,
        };
        let PrimExprData::Bin(relax_ir::BinOp::Add, acc, prod) = pool.prim(strip(*value)) else { return false };
        let PrimExprData::Bin(relax_ir::BinOp::Mul, lhs, rhs) = pool.prim(strip(*prod)) else { return false };
        let Some(acc) = as_load(*acc) else { return false };
        if acc.buffer != store.buffer || !self.same_array(&store.indices, &acc.indices) {
            return false;
        }
        let (Some(lhs), Some(rhs)) = (as_load(*lhs), as_load(*rhs)) else { return false };
        self.allows_reuse(&store, &lhs) && self.allows_reuse(&store, &rhs)
    }

    /// Every index that uses a reduce variable is that variable (TVM's
    /// `IsPureReducePattern`).
    fn is_pure_reduce(&self, reduce_vars: &[SymVar], indices: &[PrimExpr]) -> bool {
        indices.iter().all(|&i| {
            !self.uses_var(i, |v| reduce_vars.contains(&v), false)
                || self.f.pool.as_var(i).is_some_and(|v| reduce_vars.contains(&v))
        })
    }

    /// The block writes a buffer of a function parameter.
    fn is_output_block(&self, b: &BlockNode) -> bool {
        b.writes.iter().any(|w| self.param_buffers.contains(&w.buffer))
    }
}

/// The pattern kind of a high-level Relax op, by its op-table name (`relax.add`,
/// `relax.nn.softmax`); unknown names are [`OpPatternKind::Opaque`].
///
/// TVM 0.25–0.27 register no `TOpPattern` for Relax ops (`Op.get_attr("TOpPattern")`
/// fails: the attribute is not registered), and TVM's FuseOps treats a call of an op that
/// is not legalised yet as Opaque; a FuseOps that reproduces TVM must do the same
/// (`algorithms.md` §2.2). These kinds are for fusing modules that still hold high-level
/// ops. They are the `TOpPattern` that TVM registered for the equivalent Relay op (TVM ≤
/// 0.19, `src/relay/op/**` and `python/tvm/relay/op/**`):
///
/// * elementwise: unary ops, `clip`, casts, activations, creation ops, `tril`/`triu`;
/// * broadcast: binary ops and comparisons, `where`, `expand_dims`, `broadcast_to`,
///   `repeat`, `tile`, `prelu`;
/// * injective: layout changes, slices, gathers, `take`, `concat`, `split`, `pad`,
///   `resize`, `einsum`, `size`;
/// * comm-reduce: reductions, including `argmax`/`argmin` and `collapse_sum_*`;
/// * out-elementwise-fusable: `matmul`, convolutions, pooling, `softmax`, `log_softmax`,
///   `batch_norm`, `nll_loss`, `one_hot`, `roi_align`, `roi_pool`;
/// * opaque: `arange`, `shape_of`, sorting, scans, scatters, `dropout`, and ops without a
///   Relay pattern (norms, attention, quantisation), calls, memory, VM and effect ops.
///
/// Ops without a Relay counterpart follow the closest one: `gelu`, `silu`, `selu`,
/// `softplus` and `ewise_fma` as `relu`; `atan2`, `log_add_exp` and `outer` as `multiply`;
/// `std` as `variance`; `eye` as `full`; `index_tensor` as `adv_index`; `slice_scatter` as
/// `strided_set`.
pub fn op_pattern(id: OpId) -> OpPatternKind {
    known_op_pattern(id).unwrap_or(OpPatternKind::Opaque)
}

/// The kinds listed explicitly, by op.
static PATTERNS: OpTable<OpPatternKind> = relax_ir::op_table_of!(OpPatternKind; listed_op_pattern);

/// The kind of an op listed explicitly, or of a non-computational op of the table
/// (calls, memory, VM and effect ops are opaque).
fn known_op_pattern(id: OpId) -> Option<OpPatternKind> {
    if let Some(k) = PATTERNS.get(id) {
        return Some(k);
    }
    let short = id.name().strip_prefix("relax.").unwrap_or_default();
    let prefix_opaque =
        ["ccl.", "grad.", "inspect.", "vision.", "memory.", "vm.", "builtin."].iter().any(|p| short.starts_with(p));
    (id.def().class != OpClass::Compute || prefix_opaque).then_some(OpPatternKind::Opaque)
}

/// The kind of an op listed explicitly.
const fn listed_op_pattern(id: OpId) -> Option<OpPatternKind> {
    use OpPatternKind::*;
    let kind = match id {
        // Unary elementwise (Relay `RELAY_REGISTER_UNARY_OP`), casts, activations.
        ops::ABS
        | ops::ACOS
        | ops::ACOSH
        | ops::ASIN
        | ops::ASINH
        | ops::ATAN
        | ops::ATANH
        | ops::BITWISE_NOT
        | ops::CEIL
        | ops::COS
        | ops::COSH
        | ops::ERF
        | ops::EXP
        | ops::FLOOR
        | ops::ISFINITE
        | ops::ISINF
        | ops::ISNAN
        | ops::LOG
        | ops::LOGICAL_NOT
        | ops::NEGATIVE
        | ops::ROUND
        | ops::RSQRT
        | ops::SIGMOID
        | ops::SIGN
        | ops::SIN
        | ops::SINH
        | ops::SQRT
        | ops::SQUARE
        | ops::TAN
        | ops::TANH
        | ops::TRUNC
        | ops::CLIP
        | ops::ASTYPE
        | ops::WRAP_PARAM
        | ops::EWISE_FMA
        | ops::NN_RELU
        | ops::NN_GELU
        | ops::NN_GELU_TANH
        | ops::NN_SILU
        | ops::NN_SELU
        | ops::NN_SOFTPLUS
        | ops::NN_LEAKYRELU => ElemWise,
        // Creation (Relay `zeros`, `ones`, `full`, `*_like`, `trilu`: elementwise).
        ops::ZEROS
        | ops::ONES
        | ops::FULL
        | ops::ZEROS_LIKE
        | ops::ONES_LIKE
        | ops::FULL_LIKE
        | ops::TRIL
        | ops::TRIU
        | ops::EYE
        | ops::EYE_LIKE => ElemWise,
        // Binary with broadcasting (Relay `RELAY_REGISTER_BINARY_OP` / `_CMP_OP`).
        ops::ADD
        | ops::SUBTRACT
        | ops::MULTIPLY
        | ops::DIVIDE
        | ops::POWER
        | ops::MAXIMUM
        | ops::MINIMUM
        | ops::FLOOR_DIVIDE
        | ops::MOD
        | ops::FLOOR_MOD
        | ops::ATAN2
        | ops::LOG_ADD_EXP
        | ops::EQUAL
        | ops::NOT_EQUAL
        | ops::LESS
        | ops::LESS_EQUAL
        | ops::GREATER
        | ops::GREATER_EQUAL
        | ops::LOGICAL_AND
        | ops::LOGICAL_OR
        | ops::LOGICAL_XOR
        | ops::BITWISE_AND
        | ops::BITWISE_OR
        | ops::BITWISE_XOR
        | ops::LEFT_SHIFT
        | ops::RIGHT_SHIFT
        | ops::OUTER
        | ops::NN_PRELU => Broadcast,
        // Broadcasting data movement.
        ops::WHERE | ops::EXPAND_DIMS | ops::BROADCAST_TO | ops::REPEAT | ops::TILE => Broadcast,
        // Injective data movement.
        ops::RESHAPE
        | ops::PERMUTE_DIMS
        | ops::SQUEEZE
        | ops::FLATTEN
        | ops::NN_BATCH_FLATTEN
        | ops::CONCAT
        | ops::STACK
        | ops::SPLIT
        | ops::STRIDED_SLICE
        | ops::DYNAMIC_STRIDED_SLICE
        | ops::FLIP
        | ops::TAKE
        | ops::GATHER_ELEMENTS
        | ops::GATHER_ND
        | ops::LAYOUT_TRANSFORM
        | ops::MESHGRID
        | ops::EINSUM
        | ops::NN_PAD
        | ops::NN_PIXEL_SHUFFLE
        | ops::IMAGE_RESIZE2D
        | ops::IMAGE_RESIZE3D
        | ops::IMAGE_GRID_SAMPLE
        | ops::IMAGE_AFFINE_GRID
        | ops::INDEX_TENSOR
        | ops::SLICE_SCATTER
        | ops::SIZE => Injective,
        // Reductions.
        ops::SUM
        | ops::MEAN
        | ops::MAX
        | ops::MIN
        | ops::PROD
        | ops::STD
        | ops::VARIANCE
        | ops::ARGMAX
        | ops::ARGMIN
        | ops::COLLAPSE_SUM_LIKE
        | ops::COLLAPSE_SUM_TO => CommReduce,
        // Complex ops with fusable outputs.
        ops::MATMUL
        | ops::NN_CONV1D
        | ops::NN_CONV2D
        | ops::NN_CONV3D
        | ops::NN_CONV1D_TRANSPOSE
        | ops::NN_CONV2D_TRANSPOSE
        | ops::NN_CONV3D_TRANSPOSE
        | ops::NN_AVG_POOL1D
        | ops::NN_AVG_POOL2D
        | ops::NN_AVG_POOL3D
        | ops::NN_MAX_POOL1D
        | ops::NN_MAX_POOL2D
        | ops::NN_MAX_POOL3D
        | ops::NN_ADAPTIVE_AVG_POOL1D
        | ops::NN_ADAPTIVE_AVG_POOL2D
        | ops::NN_ADAPTIVE_AVG_POOL3D
        | ops::NN_SOFTMAX
        | ops::NN_LOG_SOFTMAX
        | ops::NN_BATCH_NORM
        | ops::NN_NLL_LOSS
        | ops::ONE_HOT
        | ops::VISION_ROI_ALIGN
        | ops::VISION_ROI_POOL => OutEWiseFusable,
        // Opaque: no Relay pattern (norms, attention), effects, data-dependent shapes,
        // sorting and scans, quantisation, distributed and gradient markers.
        ops::NN_LAYER_NORM
        | ops::NN_RMS_NORM
        | ops::NN_GROUP_NORM
        | ops::NN_INSTANCE_NORM
        | ops::NN_DROPOUT
        | ops::NN_ATTENTION
        | ops::NN_ATTENTION_BIAS
        | ops::NN_ATTENTION_VAR_LEN
        | ops::NN_CROSS_ENTROPY_WITH_LOGITS
        | ops::MEDIAN
        | ops::CUMSUM
        | ops::CUMPROD
        | ops::SORT
        | ops::ARGSORT
        | ops::TOPK
        | ops::UNIQUE
        | ops::NONZERO
        | ops::BUCKETIZE
        | ops::ARANGE
        | ops::HAMMING_WINDOW
        | ops::MULTINOMIAL_FROM_UNIFORM
        | ops::SCATTER_ELEMENTS
        | ops::SCATTER_ND
        | ops::INDEX_PUT
        | ops::QUANTIZE
        | ops::DEQUANTIZE
        | ops::SHAPE_OF
        | ops::TENSOR_TO_SHAPE
        | ops::SHAPE_TO_TENSOR
        | ops::TO_VDEVICE
        | ops::HINT_ON_DEVICE
        | ops::MAKE_CLOSURE
        | ops::NULL_VALUE
        | ops::BUILTIN_STOP_LIFT_PARAMS => Opaque,
        _ => return None,
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_tvm_values_and_order() {
        let values: Vec<i64> = OpPatternKind::ALL.iter().map(|k| k.value()).collect();
        assert_eq!(values, [0, 1, 2, 3, 4, 7, 8]);
        for k in OpPatternKind::ALL {
            assert_eq!(OpPatternKind::from_value(k.value()), Some(k));
        }
        assert_eq!(OpPatternKind::from_value(5), None);
        assert_eq!(OpPatternKind::ElemWise.max(OpPatternKind::Broadcast), OpPatternKind::Broadcast);
        assert_eq!(OpPatternKind::CommReduce.max(OpPatternKind::Injective), OpPatternKind::CommReduce);
        assert!(OpPatternKind::OutEWiseFusable < OpPatternKind::Tuple);
        assert!(OpPatternKind::Tuple < OpPatternKind::Opaque);
        assert_eq!(OpPatternKind::OutEWiseFusable.to_string(), "kOutEWiseFusable");
    }

    /// Every op of the table has a kind, given explicitly for every computational op (a
    /// new op must be classified here).
    #[test]
    fn every_op_has_a_kind() {
        let missing: Vec<&str> = (0..relax_ir::op::OP_COUNT)
            .map(|i| OpId(i as u16))
            .filter(|&id| known_op_pattern(id).is_none())
            .map(OpId::name)
            .collect();
        assert!(missing.is_empty(), "ops without a pattern kind: {missing:?}");
    }

    /// Spot checks against TVM's (Relay) `TOpPattern` registrations.
    #[test]
    fn spot_checks() {
        use OpPatternKind::*;
        let cases = [
            ("relax.exp", ElemWise),
            ("relax.nn.relu", ElemWise),
            ("relax.astype", ElemWise),
            ("relax.clip", ElemWise),
            ("relax.full_like", ElemWise),
            ("relax.tril", ElemWise),
            ("relax.add", Broadcast),
            ("relax.less_equal", Broadcast),
            ("relax.maximum", Broadcast),
            ("relax.where", Broadcast),
            ("relax.expand_dims", Broadcast),
            ("relax.repeat", Broadcast),
            ("relax.reshape", Injective),
            ("relax.permute_dims", Injective),
            ("relax.concat", Injective),
            ("relax.strided_slice", Injective),
            ("relax.take", Injective),
            ("relax.split", Injective),
            ("relax.sum", CommReduce),
            ("relax.max", CommReduce),
            ("relax.mean", CommReduce),
            ("relax.argmax", CommReduce),
            ("relax.matmul", OutEWiseFusable),
            ("relax.nn.softmax", OutEWiseFusable),
            ("relax.nn.conv2d", OutEWiseFusable),
            ("relax.nn.rms_norm", Opaque),
            ("relax.nn.layer_norm", Opaque),
            ("relax.arange", Opaque),
            ("relax.cumsum", Opaque),
            ("relax.call_tir", Opaque),
            ("relax.shape_of", Opaque),
        ];
        for (name, kind) in cases {
            assert_eq!(op_pattern(relax_ir::op::lookup(name).expect("an op")), kind, "{name}");
        }
    }
}
