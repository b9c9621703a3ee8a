//! `te.create_prim_func`: turns the stages of a [`Te`] into a schedulable PrimFunc.
//!
//! Follows `te/operation/create_primfunc.cc` and `script_complete.cc` of TVM 0.25:
//! * parameters: the placeholders in argument order, then the outputs, each a handle
//!   `var_<buffer name>` bound to its buffer, then the scalar variables that no buffer dim
//!   defines (`relax.utils.gen_call_tir_inputs` appends them);
//! * stages in post-DFS order from the arguments (inputs of a stage in the post-order of
//!   its body); one loop nest per stage (`for ax0, ax1 in T.grid(...)`), loops and block
//!   iteration domains simplified, the block named after the buffer (or the stage, for
//!   reductions), made unique as `compute`, `compute_1`, ...;
//! * bodies simplified ([`super::simplify`]); a reduction stores
//!   `combiner(out[i], simplify(source))` with `T.init()` storing the identity;
//! * `T.reads`/`T.writes` detected as `BlockReadWriteDetector` does: buffers in order of
//!   first access (a load before its indices, the stored value before the store's
//!   indices), point regions, and the written buffer left out of the reads when the
//!   block has an init;
//! * stage outputs that are not parameters are allocated in the root block;
//! * attributes `{"tirx.noalias": True}`, private, `s_tir=True`.

use std::collections::{HashMap, HashSet};

use relax_ir::prim::{BinOp, PrimExprData, Range};
use relax_ir::tir::{BlockNode, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, StmtData, TirSpans};
use relax_ir::{AttrValue, Attrs, Buffer, DataType, PrimExpr, Stmt, SymVar};

use super::{Body, CombinerKind, Producer, Te, Tensor};
use relax_ir::arith::tvm::simplify;

/// The result of [`Te::build`].
#[derive(Debug)]
pub struct Built {
    /// The PrimFunc.
    pub func: PrimFunc,
    /// Scalar parameters appended after the outputs, in parameter order.
    pub scalars: Vec<SymVar>,
    /// The outputs' shapes (expressions of the PrimFunc) and dtypes.
    pub outputs: Vec<(Vec<PrimExpr>, DataType)>,
}

/// `UniqueNameSupply::FreshName` with an underscore before the suffix.
pub(crate) fn fresh_name(map: &mut HashMap<String, i64>, name: &str, underscore: bool) -> String {
    let name = name.replace('.', "_");
    match map.get(&name).copied() {
        Some(mut suffix) => {
            let mut new_name = name.clone();
            while map.contains_key(&new_name) {
                suffix += 1;
                new_name = if underscore { format!("{name}_{suffix}") } else { format!("{name}{suffix}") };
            }
            map.insert(name, suffix);
            map.insert(new_name.clone(), 0);
            new_name
        }
        None => {
            map.insert(name.clone(), 0);
            name
        }
    }
}

impl Te {
    /// The variables of `e` (first-occurrence order).
    fn vars_of(&self, e: PrimExpr, out: &mut Vec<SymVar>) {
        self.pool.collect_vars(e, out);
    }

    /// Builds the PrimFunc computing `outputs`.
    pub fn build(mut self, outputs: &[Tensor]) -> Built {
        // Scalar parameters: variables used by shapes or scalar arguments that are not
        // a whole dim of any argument tensor.
        let arg_tensors: Vec<Tensor> = self.inputs.iter().chain(outputs.iter()).copied().collect();
        let mut used = Vec::new();
        let mut bound = HashSet::new();
        for &t in &arg_tensors {
            for d in self.shape(t) {
                self.vars_of(d, &mut used);
                if let Some(v) = self.pool.as_var(d) {
                    bound.insert(v);
                }
            }
        }
        for e in self.extra.clone() {
            self.vars_of(e, &mut used);
        }
        let scalars: Vec<SymVar> = used.into_iter().filter(|v| !bound.contains(v)).collect();

        // Stages in post-DFS order.
        let buffer_tensor: HashMap<Buffer, Tensor> =
            (0..self.tensors.len()).map(|i| (self.tensors[i].buffer, Tensor(i as u32))).collect();
        let mut order = Vec::new();
        let mut visited = HashSet::new();
        for &t in &arg_tensors {
            self.post_dfs(t, &buffer_tensor, &mut visited, &mut order);
        }

        let mut stmts = PrimaryStmts::default();
        let arg_set: HashSet<Tensor> = arg_tensors.iter().copied().collect();
        let mut root_alloc = Vec::new();
        let mut root_stmts = Vec::new();
        for stage in order {
            for &t in &self.stages[stage].outputs {
                if !arg_set.contains(&t) {
                    root_alloc.push(self.buffer(t));
                }
            }
            let s = self.stage_stmt(stage, &mut stmts);
            root_stmts.push(s);
        }
        let body = if root_stmts.len() == 1 { root_stmts[0] } else { stmts.push(StmtData::Seq(root_stmts)) };
        let root = BlockNode {
            name: "root".to_string(),
            iter_vars: Vec::new(),
            predicate: None,
            reads: Vec::new(),
            writes: Vec::new(),
            annotations: Attrs::new(),
            alloc_buffers: root_alloc,
            match_buffers: Vec::new(),
            init: None,
            body,
        };
        let body = stmts.push(StmtData::Block(Box::new(root)));

        let mut params = Vec::new();
        let mut buffer_map = Vec::new();
        for &t in &arg_tensors {
            let b = self.buffer(t);
            let name = format!("var_{}", self.buffers[b].name);
            let h = self.pool.new_var(name, DataType::HANDLE);
            params.push(h);
            buffer_map.push((h, b));
        }
        params.extend(scalars.iter().copied());
        let outs = outputs.iter().map(|&t| (self.shape(t), self.dtype(t))).collect();
        let func = PrimFunc {
            pool: std::mem::take(&mut self.pool),
            buffers: std::mem::take(&mut self.buffers),
            stmts: stmts.0,
            params,
            buffer_map,
            ret: DataType::VOID,
            attrs: Attrs(vec![("tirx.noalias".to_string(), AttrValue::Bool(true))]),
            body,
            s_tir: true,
            persistent: false,
            spans: TirSpans::default(),
        };
        Built { func, scalars, outputs: outs }
    }

    fn post_dfs(
        &self,
        t: Tensor,
        buffer_tensor: &HashMap<Buffer, Tensor>,
        visited: &mut HashSet<usize>,
        order: &mut Vec<usize>,
    ) {
        let Producer::Compute { stage } = self.tensors[t.0 as usize].producer else { return };
        if !visited.insert(stage) {
            return;
        }
        let mut loads = Vec::new();
        match &self.stages[stage].body {
            Body::Value(v) => self.loads_post_order(*v, &mut loads),
            Body::Reduce(r) => {
                for &s in &r.sources {
                    self.loads_post_order(s, &mut loads);
                }
            }
            Body::Extern(x) => loads.extend(x.inputs.iter().map(|&t| self.buffer(t))),
        }
        let mut seen = HashSet::new();
        for b in loads {
            if seen.insert(b)
                && let Some(&it) = buffer_tensor.get(&b)
            {
                self.post_dfs(it, buffer_tensor, visited, order);
            }
        }
        order.push(stage);
    }

    /// The buffers loaded by `e`, operands before the nodes that use them.
    fn loads_post_order(&self, e: PrimExpr, out: &mut Vec<Buffer>) {
        let mut kids = Vec::new();
        self.pool.for_each_operand(e, |k| kids.push(k));
        for k in kids {
            self.loads_post_order(k, out);
        }
        if let PrimExprData::Load { buffer, .. } = self.pool.prim(e) {
            out.push(*buffer);
        }
    }

    /// The loop nest and block of one stage.
    fn stage_stmt(&mut self, stage: usize, stmts: &mut PrimaryStmts) -> Stmt {
        let st = self.stages[stage].clone();
        if let Body::Extern(x) = &st.body {
            let out = self.buffer(st.outputs[0]);
            let body = (x.build)(self, stmts, out);
            let block = BlockNode {
                name: fresh_name(&mut self.block_names, &st.name, true),
                iter_vars: Vec::new(),
                predicate: None,
                reads: Vec::new(),
                writes: Vec::new(),
                annotations: st.attrs.clone(),
                alloc_buffers: Vec::new(),
                match_buffers: Vec::new(),
                init: None,
                body,
            };
            return stmts.push(StmtData::Block(Box::new(block)));
        }
        let mut axes: Vec<(super::Axis, IterKind)> = st.axes.iter().map(|a| (a.clone(), IterKind::Spatial)).collect();
        if let Body::Reduce(r) = &st.body {
            axes.extend(r.axes.iter().map(|&a| (self.raxis(a).clone(), IterKind::Reduce)));
        }
        let mut loops = Vec::new();
        let mut iter_vars = Vec::new();
        for (a, kind) in &axes {
            let min = simplify(&mut self.pool, a.min);
            let extent = simplify(&mut self.pool, a.extent);
            let lv = self.pool.new_var(a.name.clone(), DataType::INT64);
            let binding = self.pool.var_ref(lv);
            loops.push((lv, min, extent));
            iter_vars.push(IterVar { var: a.var, dom: Range { min, extent }, kind: *kind, binding });
        }
        if iter_vars.is_empty() {
            // TVM gives a block without axes one dummy iteration variable.
            // Its domain stays `int32`; only the binding is widened to `int64`.
            let v = self.pool.new_var("vi", DataType::INT32);
            let zero = self.pool.int(DataType::INT32, 0);
            let one = self.pool.int(DataType::INT32, 1);
            let binding = self.pool.i64(0);
            iter_vars.push(IterVar { var: v, dom: Range { min: zero, extent: one }, kind: IterKind::Spatial, binding });
        }
        let indices: Vec<PrimExpr> = st.axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let buffers: Vec<Buffer> = st.outputs.iter().map(|&t| self.buffer(t)).collect();
        let (name, init, body) = match &st.body {
            Body::Value(v) => {
                let value = simplify(&mut self.pool, *v);
                let value = super::dtype::normalize(&mut self.pool, value);
                let at = match &st.store {
                    Some(store) => store.iter().map(|&i| simplify(&mut self.pool, i)).collect(),
                    None => indices.clone(),
                };
                let body = stmts.push(StmtData::Store { buffer: buffers[0], indices: at, value });
                let bname = self.buffers[buffers[0]].name.clone();
                (fresh_name(&mut self.block_names, &bname, true), None, body)
            }
            Body::Extern(_) => unreachable!("extern stages return above"),
            Body::Reduce(r) => {
                let mut inits = Vec::new();
                for (i, &b) in buffers.iter().enumerate() {
                    let dtype = self.buffers[b].dtype;
                    let value = self.identity(r.kind, i, dtype);
                    inits.push(stmts.push(StmtData::Store { buffer: b, indices: indices.clone(), value }));
                }
                let init = if inits.len() == 1 { inits[0] } else { stmts.push(StmtData::Seq(inits)) };
                let lhs: Vec<PrimExpr> = buffers
                    .iter()
                    .map(|&b| {
                        let dtype = self.buffers[b].dtype;
                        self.pool.raw(PrimExprData::Load { dtype, buffer: b, indices: indices.clone() })
                    })
                    .collect();
                let rhs: Vec<PrimExpr> = r
                    .sources
                    .iter()
                    .map(|&s| {
                        let v = simplify(&mut self.pool, s);
                        super::dtype::normalize(&mut self.pool, v)
                    })
                    .collect();
                let combined = self.combine(r.kind, &lhs, &rhs);
                let body = if buffers.len() == 1 {
                    stmts.push(StmtData::Store { buffer: buffers[0], indices: indices.clone(), value: combined[0] })
                } else {
                    // Several accumulators: bind the combined values first, then store.
                    let temps: Vec<SymVar> = buffers
                        .iter()
                        .map(|&b| {
                            let name = format!("v_{}", self.buffers[b].name);
                            let dtype = self.buffers[b].dtype;
                            self.pool.new_var(name, dtype)
                        })
                        .collect();
                    let stores: Vec<Stmt> = buffers
                        .iter()
                        .zip(&temps)
                        .map(|(&b, &t)| {
                            let value = self.pool.var_ref(t);
                            stmts.push(StmtData::Store { buffer: b, indices: indices.clone(), value })
                        })
                        .collect();
                    let mut body = stmts.push(StmtData::Seq(stores));
                    for (&t, &v) in temps.iter().zip(&combined).rev() {
                        body = stmts.push(StmtData::Let { var: t, value: v, body });
                    }
                    body
                };
                (fresh_name(&mut self.block_names, &st.name, true), Some(init), body)
            }
        };
        let mut block = BlockNode {
            name,
            iter_vars,
            predicate: None,
            reads: Vec::new(),
            writes: Vec::new(),
            annotations: st.attrs.clone(),
            alloc_buffers: Vec::new(),
            match_buffers: Vec::new(),
            init,
            body,
        };
        let (reads, writes) = self.access_regions(&block, stmts);
        block.reads = reads;
        block.writes = writes;
        let mut s = stmts.push(StmtData::Block(Box::new(block)));
        for (lv, min, extent) in loops.into_iter().rev() {
            s = stmts.push(StmtData::For {
                var: lv,
                min,
                extent,
                kind: ForKind::Serial,
                thread: None,
                step: None,
                annotations: Attrs::new(),
                body: s,
            });
        }
        s
    }

    /// The identity element of a combiner's `i`-th value.
    fn identity(&mut self, kind: CombinerKind, i: usize, dtype: DataType) -> PrimExpr {
        match (kind, i) {
            (CombinerKind::Sum | CombinerKind::TupleSum, _) => self.pool.make_const_int(dtype, 0),
            (CombinerKind::Prod, _) => self.pool.make_const_int(dtype, 1),
            (CombinerKind::Max, _) | (CombinerKind::ArgMax, 1) => min_value(&mut self.pool, dtype),
            (CombinerKind::Min, _) | (CombinerKind::ArgMin, 1) => max_value(&mut self.pool, dtype),
            (CombinerKind::ArgMax | CombinerKind::ArgMin, _) => self.pool.make_const_int(dtype, -1),
        }
    }

    /// The combiner applied to accumulators `lhs` and new values `rhs` (unfolded nodes,
    /// as substituting into the combiner's expression builds them).
    fn combine(&mut self, kind: CombinerKind, lhs: &[PrimExpr], rhs: &[PrimExpr]) -> Vec<PrimExpr> {
        let raw = |te: &mut Te, op: BinOp, a: PrimExpr, b: PrimExpr| te.pool.raw(PrimExprData::Bin(op, a, b));
        match kind {
            CombinerKind::Sum => vec![raw(self, BinOp::Add, lhs[0], rhs[0])],
            CombinerKind::Prod => vec![raw(self, BinOp::Mul, lhs[0], rhs[0])],
            CombinerKind::Max => vec![raw(self, BinOp::Max, lhs[0], rhs[0])],
            CombinerKind::Min => vec![raw(self, BinOp::Min, lhs[0], rhs[0])],
            CombinerKind::TupleSum => lhs.iter().zip(rhs).map(|(&l, &r)| raw(self, BinOp::Add, l, r)).collect(),
            CombinerKind::ArgMax | CombinerKind::ArgMin => {
                // TOPI's `_argmax_comp` / `_argmin_comp`, with lhs = (x0, x1) and
                // rhs = (y0, y1): keep the first index among equal values.
                let cmp = if kind == CombinerKind::ArgMax { BinOp::Gt } else { BinOp::Lt };
                let (x0, x1, y0, y1) = (lhs[0], lhs[1], rhs[0], rhs[1]);
                let strict = raw(self, cmp, x1, y1);
                let eq = raw(self, BinOp::Eq, x1, y1);
                let lt = raw(self, BinOp::Lt, x0, y0);
                let tie = raw(self, BinOp::And, eq, lt);
                let keep = raw(self, BinOp::Or, strict, tie);
                let idx = self.pool.raw(PrimExprData::Select(keep, x0, y0));
                let val = self.pool.raw(PrimExprData::Select(strict, x1, y1));
                vec![idx, val]
            }
        }
    }

    /// `BlockReadWriteDetector` for a leaf block: buffers in order of first access.
    fn access_regions(&mut self, block: &BlockNode, stmts: &PrimaryStmts) -> (Vec<BufferRegion>, Vec<BufferRegion>) {
        let mut acc = Access::default();
        if let Some(init) = block.init {
            self.visit_stmt_access(init, stmts, &mut acc);
        }
        self.visit_stmt_access(block.body, stmts, &mut acc);
        let excluded: HashSet<Buffer> =
            if block.init.is_some() { acc.writes.iter().map(|(b, _)| *b).collect() } else { HashSet::new() };
        let reads =
            acc.reads.into_iter().filter(|(b, _)| !excluded.contains(b)).map(|(b, r)| self.region(b, r)).collect();
        let writes = acc.writes.into_iter().map(|(b, r)| self.region(b, r)).collect();
        (reads, writes)
    }

    fn region(&mut self, buffer: Buffer, dims: Vec<Bounds>) -> BufferRegion {
        let shape = self.buffers[buffer].shape.clone();
        let region = dims
            .into_iter()
            .zip(shape)
            .map(|(bounds, extent)| match bounds {
                (Some(lo), Some(hi)) if lo == hi => {
                    let one = self.pool.make_const_int(self.pool.dtype(lo), 1);
                    Range { min: lo, extent: one }
                }
                (Some(lo), Some(hi)) => {
                    let d = self.bin(BinOp::Sub, hi, lo);
                    let one = self.pool.make_const_int(self.pool.dtype(lo), 1);
                    let e = self.bin(BinOp::Add, d, one);
                    let extent = simplify(&mut self.pool, e);
                    Range { min: lo, extent }
                }
                // `CoverRange`: an unbounded side covers the whole dim.
                _ => {
                    let min = self.pool.make_const_int(self.pool.dtype(extent), 0);
                    Range { min, extent }
                }
            })
            .collect();
        BufferRegion { buffer, region }
    }

    fn visit_stmt_access(&mut self, s: Stmt, stmts: &PrimaryStmts, acc: &mut Access) {
        match stmts.0[s].clone() {
            StmtData::Store { buffer, indices, value } => {
                acc.update(&mut self.pool, false, buffer, &indices);
                self.visit_expr_access(value, acc);
                for i in indices {
                    self.visit_expr_access(i, acc);
                }
            }
            StmtData::Seq(v) => {
                for x in v {
                    self.visit_stmt_access(x, stmts, acc);
                }
            }
            StmtData::Let { value, body, .. } => {
                self.visit_expr_access(value, acc);
                self.visit_stmt_access(body, stmts, acc);
            }
            _ => {}
        }
    }

    fn visit_expr_access(&mut self, e: PrimExpr, acc: &mut Access) {
        if let PrimExprData::Load { buffer, indices, .. } = self.pool.prim(e).clone() {
            acc.update(&mut self.pool, true, buffer, &indices);
            for i in indices {
                self.visit_expr_access(i, acc);
            }
            return;
        }
        let mut kids = Vec::new();
        self.pool.for_each_operand(e, |k| kids.push(k));
        for k in kids {
            self.visit_expr_access(k, acc);
        }
    }
}

/// Accesses found so far: per buffer, per dim, the lowest and highest index (`None`:
/// unbounded on that side).
#[derive(Default)]
struct Access {
    reads: Vec<(Buffer, Vec<Bounds>)>,
    writes: Vec<(Buffer, Vec<Bounds>)>,
}

/// The lowest and highest value of an index; `None` is unbounded on that side.
type Bounds = (Option<PrimExpr>, Option<PrimExpr>);

/// True when `arith::EvalSet` cannot see through part of `e`: an intrinsic call (`floor`
/// of a coordinate) or a load of a float.
fn opaque(pool: &relax_ir::Pool, e: PrimExpr) -> bool {
    match pool.prim(e) {
        PrimExprData::Call { .. } => return true,
        PrimExprData::Load { dtype, .. } if !dtype.is_int() => return true,
        _ => {}
    }
    let mut any = false;
    pool.for_each_operand(e, |k| any = any || opaque(pool, k));
    any
}

/// `IntervalSetEvaluator` over block variables (which stay symbolic): an expression
/// without opaque parts is a single point; calls and float loads are unbounded, and the
/// bounds go through casts, `+`, `-`, `min`, `max` and `Select` as TVM combines them.
fn bounds(pool: &mut relax_ir::Pool, e: PrimExpr) -> Bounds {
    if !opaque(pool, e) {
        return (Some(e), Some(e));
    }
    let both = |pool: &mut relax_ir::Pool, op: BinOp, a: PrimExpr, b: PrimExpr| {
        let v = pool.binary(op, a, b).unwrap_or(a);
        simplify(pool, v)
    };
    match pool.prim(e).clone() {
        PrimExprData::Cast(t, v) => {
            let (lo, hi) = bounds(pool, v);
            (lo.map(|x| pool.cast(t, x)), hi.map(|x| pool.cast(t, x)))
        }
        PrimExprData::Bin(op @ (BinOp::Add | BinOp::Sub | BinOp::Min | BinOp::Max), a, b) => {
            let (alo, ahi) = bounds(pool, a);
            let (blo, bhi) = bounds(pool, b);
            match op {
                BinOp::Add => (
                    alo.zip(blo).map(|(x, y)| both(pool, BinOp::Add, x, y)),
                    ahi.zip(bhi).map(|(x, y)| both(pool, BinOp::Add, x, y)),
                ),
                BinOp::Sub => (
                    alo.zip(bhi).map(|(x, y)| both(pool, BinOp::Sub, x, y)),
                    ahi.zip(blo).map(|(x, y)| both(pool, BinOp::Sub, x, y)),
                ),
                // min(-inf, x) = -inf; min(+inf, x) = x.
                BinOp::Min => (
                    alo.zip(blo).map(|(x, y)| both(pool, BinOp::Min, x, y)),
                    match (ahi, bhi) {
                        (Some(x), Some(y)) => Some(both(pool, BinOp::Min, x, y)),
                        (x, y) => x.or(y),
                    },
                ),
                _ => (
                    match (alo, blo) {
                        (Some(x), Some(y)) => Some(both(pool, BinOp::Max, x, y)),
                        (x, y) => x.or(y),
                    },
                    ahi.zip(bhi).map(|(x, y)| both(pool, BinOp::Max, x, y)),
                ),
            }
        }
        PrimExprData::Select(_, t, f) => {
            let (tlo, thi) = bounds(pool, t);
            let (flo, fhi) = bounds(pool, f);
            (
                flo.zip(tlo).map(|(x, y)| both(pool, BinOp::Min, x, y)),
                fhi.zip(thi).map(|(x, y)| both(pool, BinOp::Max, x, y)),
            )
        }
        _ => (None, None),
    }
}

/// One end of a region widened by another access: `min`/`max` of the two (unknown stays
/// unknown).
fn widen(pool: &mut relax_ir::Pool, op: BinOp, have: Option<PrimExpr>, new: Option<PrimExpr>) -> Option<PrimExpr> {
    match (have, new) {
        (Some(a), Some(b)) if a != b => {
            let m = pool.binary(op, a, b).unwrap_or(a);
            Some(simplify(pool, m))
        }
        (Some(a), Some(_)) => Some(a),
        _ => None,
    }
}

impl Access {
    fn update(&mut self, pool: &mut relax_ir::Pool, read: bool, buffer: Buffer, indices: &[PrimExpr]) {
        let new: Vec<Bounds> = indices.iter().map(|&i| bounds(pool, i)).collect();
        let list = if read { &mut self.reads } else { &mut self.writes };
        if let Some((_, dims)) = list.iter_mut().find(|(b, _)| *b == buffer) {
            for (d, (lo, hi)) in dims.iter_mut().zip(new) {
                d.0 = widen(pool, BinOp::Min, d.0, lo);
                d.1 = widen(pool, BinOp::Max, d.1, hi);
            }
            return;
        }
        list.push((buffer, new));
    }
}

/// The statements of the PrimFunc being built.
#[derive(Default)]
pub struct PrimaryStmts(pub(crate) relax_entity::PrimaryMap<Stmt, StmtData>);

impl PrimaryStmts {
    /// Adds a statement.
    pub fn push(&mut self, s: StmtData) -> Stmt {
        self.0.push(s)
    }
}

/// `tvm.tirx.min_value(dtype)`.
pub fn min_value(pool: &mut relax_ir::Pool, dtype: DataType) -> PrimExpr {
    if dtype.is_float() {
        let v = match dtype.bits {
            16 if dtype.code == relax_ir::TypeCode::BFloat => -3.3895313892515355e38,
            16 => -65504.0,
            32 => -3.4028234663852886e38,
            _ => f64::MIN,
        };
        return pool.float(dtype, v);
    }
    if dtype.is_bool() {
        return pool.int(dtype, 0);
    }
    if dtype.is_uint() {
        return pool.int(dtype, 0);
    }
    let v = if dtype.bits >= 64 { i64::MIN } else { -(1i64 << (dtype.bits - 1)) };
    pool.int(dtype, v)
}

/// `tvm.tirx.max_value(dtype)`.
pub fn max_value(pool: &mut relax_ir::Pool, dtype: DataType) -> PrimExpr {
    if dtype.is_float() {
        let v = match dtype.bits {
            16 if dtype.code == relax_ir::TypeCode::BFloat => 3.3895313892515355e38,
            16 => 65504.0,
            32 => 3.4028234663852886e38,
            _ => f64::MAX,
        };
        return pool.float(dtype, v);
    }
    if dtype.is_bool() {
        return pool.int(dtype, 1);
    }
    let v = if dtype.bits >= 64 {
        if dtype.is_uint() { -1 } else { i64::MAX }
    } else if dtype.is_uint() {
        (1i64 << dtype.bits) - 1
    } else {
        (1i64 << (dtype.bits - 1)) - 1
    };
    pool.int(dtype, v)
}
