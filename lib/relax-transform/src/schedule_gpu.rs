//! `schedule-gpu`: bind the loop nests of every PrimFunc to GPU threads (`docs/gpu.md`).
//!
//! Each statement at the top of a kernel's root block (one stage: a loop nest ending in a
//! block) becomes one GPU launch:
//!
//! * the leading loops of a perfect nest whose variables feed only spatial block
//!   iteration variables are fused into one index `i` of extent `N` (their product),
//!   split as `i = blockIdx.x * T + threadIdx.x` with `T = min(N, max-threads)` threads
//!   per block and `ceildiv(N, T)` blocks; the block gets `T.where(i < N)` unless `T`
//!   divides `N`; every use of a fused loop variable becomes its digit of `i`;
//! * reduction strategy: the loops under the fused ones (reductions, and spatial loops
//!   below a reduction) stay serial inside each thread, so one thread computes one output
//!   element completely, `T.init` included; no cross-thread communication is needed;
//! * a stage that is not a perfect nest ending in one block, or has no spatial loop,
//!   runs on one thread (`blockIdx.x` and `threadIdx.x` of extent 1).
//!
//! Stages run one after the other (the code generators make one kernel per stage, so
//! the boundary between two stages is a grid-wide barrier), and buffers allocated in the
//! root block live in global memory. The pass marks the function `tirx.is_scheduled`.
//! Kernels that already have a thread binding or are marked scheduled are left alone, as
//! are PrimFuncs without blocks (not `s_tir`).

use std::collections::HashMap;

use relax_ir::{
    AttrValue, BinOp, BlockNode, DataType, ForKind, IterKind, PrimExpr, PrimExprData, PrimFunc, Range, Stmt, StmtData,
    SymVar, arith::substitute,
};
use relax_pass::{FunctionContext, PassResult, PrimFuncPass};

/// The pass name.
pub const NAME: &str = INFO.name;
/// The attribute that marks a scheduled kernel.
pub const SCHEDULED_ATTR: &str = "tirx.is_scheduled";

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: PrimFunc "schedule-gpu" {
        summary: "bind the spatial loops of each kernel stage to blockIdx.x / threadIdx.x",
        new: |o: ScheduleGpuOptions| ScheduleGpu { max_threads: o.max_threads },
    }
    /// The options of `schedule-gpu`.
    pub struct ScheduleGpuOptions {
        pub max_threads: i64 = 256 {
            key: "max-threads",
            help: "threads per block (1 to 1024)",
            check: |n| (1..=1024).contains(n), "an integer from 1 to 1024",
        },
    }
}

/// The pass, with its options.
#[derive(Clone, Copy, Debug)]
pub struct ScheduleGpu {
    /// Threads per block.
    pub max_threads: i64,
}

impl PrimFuncPass for ScheduleGpu {
    fn run(&self, f: &mut PrimFunc, _cx: &mut FunctionContext<'_>) -> PassResult {
        if !needs_gpu_schedule(f) {
            return Ok(false);
        }
        schedule_prim_func(f, self.max_threads);
        Ok(true)
    }
}

/// True when `f` has a thread-bound loop.
pub fn has_thread_binding(f: &PrimFunc) -> bool {
    let mut found = false;
    f.walk(f.body, |_, s| {
        if let StmtData::For { kind: ForKind::ThreadBinding, .. } = s {
            found = true;
        }
    });
    found
}

/// True when the pass would change `f`: a kernel with blocks, no thread binding and no
/// `tir.is_scheduled` mark.
pub fn needs_gpu_schedule(f: &PrimFunc) -> bool {
    let marked = ["tir.is_scheduled", "tirx.is_scheduled"].iter().any(|k| match f.attrs.get(k) {
        Some(AttrValue::Bool(b)) => *b,
        Some(v) => v.as_int().is_some_and(|i| i != 0),
        None => false,
    });
    f.s_tir && !marked && f.root_block().is_some() && !has_thread_binding(f)
}

/// Binds every stage of `f` (see the module documentation).
pub fn schedule_prim_func(f: &mut PrimFunc, max_threads: i64) {
    let StmtData::Block(root) = f.stmts[f.body].clone() else { return };
    let stages = match &f.stmts[root.body] {
        StmtData::Seq(v) => v.clone(),
        _ => vec![root.body],
    };
    let new: Vec<Stmt> = stages.into_iter().map(|s| bind_stage(f, s, max_threads)).collect();
    let body = if new.len() == 1 { new[0] } else { push(f, StmtData::Seq(new), root.body) };
    if let StmtData::Block(b) = &mut f.stmts[f.body] {
        b.body = body;
    }
    f.attrs.set(SCHEDULED_ATTR, AttrValue::Bool(true));
}

fn push(f: &mut PrimFunc, s: StmtData, like: Stmt) -> Stmt {
    let span = f.spans.stmts[like];
    let n = f.stmts.push(s);
    f.spans.stmts.set(n, span);
    n
}

/// A loop of the fused prefix.
struct Fused {
    var: SymVar,
    min: PrimExpr,
    extent: PrimExpr,
}

/// The leading spatial loops of a perfect nest ending in one block, and the statement
/// under them.
fn spatial_prefix(f: &PrimFunc, s: Stmt) -> (Vec<Fused>, Stmt) {
    // The chain of loops down to the block; give up on anything else.
    let mut chain = Vec::new();
    let mut cur = s;
    let block = loop {
        match &f.stmts[cur] {
            StmtData::For { var, min, extent, kind, step: None, body, .. } if *kind == ForKind::Serial => {
                chain.push((cur, *var, *min, *extent));
                cur = *body;
            }
            StmtData::Block(b) => break b,
            _ => return (Vec::new(), s),
        }
    };
    let non_spatial = non_spatial_vars(f, block);
    let mut fused: Vec<Fused> = Vec::new();
    let mut under = s;
    for &(stmt, var, min, extent) in &chain {
        let depends = |e: PrimExpr| f.pool.free_vars(e).iter().any(|v| fused.iter().any(|x| x.var == *v));
        if non_spatial.contains(&var) || depends(min) || depends(extent) {
            break;
        }
        fused.push(Fused { var, min, extent });
        under = match &f.stmts[stmt] {
            StmtData::For { body, .. } => *body,
            _ => unreachable!("the chain holds loops"),
        };
    }
    (fused, under)
}

/// Variables used by the bindings of the block's non-spatial iteration variables.
fn non_spatial_vars(f: &PrimFunc, b: &BlockNode) -> Vec<SymVar> {
    let mut out = Vec::new();
    for iv in &b.iter_vars {
        if iv.kind != IterKind::Spatial {
            f.pool.collect_vars(iv.binding, &mut out);
        }
    }
    out
}

fn bin(f: &mut PrimFunc, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    f.pool.binary(op, a, b).unwrap_or_else(|_| f.pool.raw(PrimExprData::Bin(op, a, b)))
}

/// One stage as a launch: `blockIdx.x` over `threadIdx.x` over the rest.
fn bind_stage(f: &mut PrimFunc, s: Stmt, max_threads: i64) -> Stmt {
    let (fused, under) = spatial_prefix(f, s);
    let dt = fused.first().map_or(DataType::INT64, |x| f.pool.dtype(x.extent));
    let dt = if dt.is_int() { dt } else { DataType::INT64 };
    let mut total = f.pool.int(dt, 1);
    for x in &fused {
        let e = if f.pool.dtype(x.extent) == dt { x.extent } else { f.pool.cast(dt, x.extent) };
        total = bin(f, BinOp::Mul, total, e);
    }
    let (threads, blocks, exact) = match f.pool.as_int(total) {
        Some(n) if n <= max_threads => (n.max(1), 1, true),
        Some(n) => (max_threads, (n + max_threads - 1) / max_threads, n % max_threads == 0),
        None => (max_threads, 0, false),
    };
    let stem = if fused.is_empty() {
        "launch".to_string()
    } else {
        let names: Vec<&str> = fused.iter().map(|x| f.pool.vars[x.var].name.as_str()).collect();
        format!("{}_fused", names.join("_"))
    };
    let bx = f.pool.new_var(format!("{stem}_0"), dt);
    let tx = f.pool.new_var(format!("{stem}_1"), dt);
    let bx_e = f.pool.var_ref(bx);
    let tx_e = f.pool.var_ref(tx);
    let t_e = f.pool.int(dt, threads);
    let scaled = bin(f, BinOp::Mul, bx_e, t_e);
    let idx = bin(f, BinOp::Add, scaled, tx_e);
    // Each fused variable is its digit of the fused index.
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    let mut stride = f.pool.int(dt, 1);
    for (j, x) in fused.iter().enumerate().rev() {
        let e = if f.pool.dtype(x.extent) == dt { x.extent } else { f.pool.cast(dt, x.extent) };
        let q = bin(f, BinOp::FloorDiv, idx, stride);
        let digit = if j == 0 { q } else { bin(f, BinOp::FloorMod, q, e) };
        let vdt = f.pool.vars[x.var].dtype;
        let digit = if vdt == dt { digit } else { f.pool.cast(vdt, digit) };
        let value = bin(f, BinOp::Add, x.min, digit);
        map.insert(x.var, value);
        stride = bin(f, BinOp::Mul, stride, e);
    }
    subst_stmt(f, under, &map);
    if !fused.is_empty() && !exact {
        let guard = bin(f, BinOp::Lt, idx, total);
        add_predicate(f, under, guard);
    }
    let blocks_e = if blocks > 0 {
        f.pool.int(dt, blocks)
    } else {
        let t1 = f.pool.int(dt, threads - 1);
        let n = bin(f, BinOp::Add, total, t1);
        bin(f, BinOp::FloorDiv, n, t_e)
    };
    let zero = f.pool.int(dt, 0);
    let inner = push(
        f,
        StmtData::For {
            var: tx,
            min: zero,
            extent: t_e,
            kind: ForKind::ThreadBinding,
            thread: Some("threadIdx.x".to_string()),
            step: None,
            annotations: Default::default(),
            body: under,
        },
        s,
    );
    push(
        f,
        StmtData::For {
            var: bx,
            min: zero,
            extent: blocks_e,
            kind: ForKind::ThreadBinding,
            thread: Some("blockIdx.x".to_string()),
            step: None,
            annotations: Default::default(),
            body: inner,
        },
        s,
    )
}

/// Adds `guard` to the predicate of the block under the loops at `s`.
fn add_predicate(f: &mut PrimFunc, s: Stmt, guard: PrimExpr) {
    let mut cur = s;
    loop {
        match &f.stmts[cur] {
            StmtData::For { body, .. } => cur = *body,
            StmtData::Block(b) => {
                let p = match b.predicate {
                    Some(p) => bin(f, BinOp::And, guard, p),
                    None => guard,
                };
                if let StmtData::Block(b) = &mut f.stmts[cur] {
                    b.predicate = Some(p);
                }
                return;
            }
            _ => return,
        }
    }
}

/// Replaces variables in every expression of the statement tree at `s`.
fn subst_stmt(f: &mut PrimFunc, s: Stmt, map: &HashMap<SymVar, PrimExpr>) {
    if map.is_empty() {
        return;
    }
    let mut stmts = Vec::new();
    f.walk(s, |id, _| stmts.push(id));
    for id in stmts {
        let mut data = f.stmts[id].clone();
        let pool = &mut f.pool;
        let mut sub = |e: &mut PrimExpr| *e = substitute(pool, *e, map);
        let sub_range = |r: &mut Range, sub: &mut dyn FnMut(&mut PrimExpr)| {
            sub(&mut r.min);
            sub(&mut r.extent);
        };
        match &mut data {
            StmtData::For { min, extent, step, .. } => {
                sub(min);
                sub(extent);
                if let Some(st) = step {
                    sub(st);
                }
            }
            StmtData::Block(b) => {
                for iv in &mut b.iter_vars {
                    sub(&mut iv.binding);
                    sub_range(&mut iv.dom, &mut sub);
                }
                if let Some(p) = &mut b.predicate {
                    sub(p);
                }
                for r in b.reads.iter_mut().chain(b.writes.iter_mut()) {
                    for rg in &mut r.region {
                        sub_range(rg, &mut sub);
                    }
                }
                for mb in &mut b.match_buffers {
                    for rg in &mut mb.source.region {
                        sub_range(rg, &mut sub);
                    }
                }
            }
            StmtData::Store { indices, value, .. } => {
                indices.iter_mut().for_each(&mut sub);
                sub(value);
            }
            StmtData::If { cond, .. } | StmtData::While { cond, .. } => sub(cond),
            StmtData::Let { value, .. } => sub(value),
            StmtData::Evaluate(e) => sub(e),
            StmtData::Assert { cond, message, .. } => {
                sub(cond);
                sub(message);
            }
            StmtData::Attr { value, .. } => sub(value),
            StmtData::Seq(_) | StmtData::DeclBuffer { .. } | StmtData::Allocate { .. } => {}
        }
        f.stmts[id] = data;
    }
}
