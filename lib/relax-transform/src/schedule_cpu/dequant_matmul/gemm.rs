//! The panel schedule: any number of activation rows (prefill's symbolic `seq_len`)
//! against a weight computed in place.
//!
//! ```text
//! for jt in T.parallel(ceil(N / NB)):                  # NB weight rows per task
//!     with T.sblock("matmul_panel"):
//!         panel = T.sblock_alloc_buffer((NB, K), scope="local")
//!         for jj in range(NB):                          # decode once per task
//!             for k_0, ... in T.grid(...):              # as the GEMV splits k
//!                 for l in T.vectorized(L):
//!                     panel[jj, k] = weight(min(jt * NB + jj, N - 1), k)
//!         for it in range(M // MR):                     # row tiles, then one-row tiles
//!             for jc in range(NB // NR):
//!                 acc[...] = 0                          # (MR, NR, V) vector accumulators
//!                 for kv in range(K // V):
//!                     for r in T.unroll(MR):
//!                         for c in T.unroll(NR):
//!                             for l in T.vectorized(V):
//!                                 acc[r, c, l] += x(it * MR + r, kv * V + l) * panel[jc * NR + c, kv * V + l]
//!                 for r in T.unroll(MR):
//!                     for c in T.unroll(NR):
//!                         sum[0] = init + acc[r, c, 0] + ... + acc[r, c, V - 1]
//!                         C[row, col] = sum[0]          # (or the epilogue of it)
//! ```
//!
//! The weight rows of a task are decoded once, in their own layout (consecutive `k`, so
//! the decode vectorizes as in the GEMV), and reused by every row of the activation: a
//! register tile of MR activation rows by NR weight rows multiplies vectors of V
//! consecutive `k` (MR + NR vector loads for MR * NR vector multiply-adds) and sums each
//! accumulator once at the end. A weight that is a plain load (a transposed float32
//! weight) is read in place, without a panel.

use std::collections::HashMap;

use relax_ir::{BinOp, ForKind, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::hoist::hoist;
use super::ksplit::{self, bin};
use super::{Epilogue, Fused, Output, local, lp, lpc, opaque_block, row_values};
use crate::schedule_cpu::nest::{Loop, ceil_div, wrap};

/// Weight rows per task.
const NB: i64 = 32;
/// Weight rows per register tile.
const NR: i64 = 4;
/// Activation rows per register tile.
const MR: i64 = 4;

/// The part of `term` that is the weight: the one maximal subexpression that mentions
/// `j` and no row variable (and reads memory).
fn weight_part(f: &PrimFunc, term: PrimExpr, rows: &[SymVar], j: SymVar) -> Option<PrimExpr> {
    let mut found: Vec<PrimExpr> = Vec::new();
    let mut stack = vec![term];
    while let Some(e) = stack.pop() {
        let vars = f.pool.free_vars(e);
        if !vars.iter().any(|v| rows.contains(v)) {
            if vars.contains(&j) && !found.contains(&e) {
                found.push(e);
            }
            continue;
        }
        f.pool.for_each_operand(e, |o| stack.push(o));
    }
    match found[..] {
        [w] => Some(w),
        _ => None,
    }
}

/// `e` with the subexpression `from` replaced by `to` (by handle).
fn replace(f: &mut PrimFunc, e: PrimExpr, from: PrimExpr, to: PrimExpr) -> PrimExpr {
    if e == from {
        return to;
    }
    let mut ops = Vec::new();
    f.pool.for_each_operand(e, |o| ops.push(o));
    if ops.is_empty() {
        return e;
    }
    let new: Vec<PrimExpr> = ops.iter().map(|&o| replace(f, o, from, to)).collect();
    if new == ops { e } else { ksplit::with_operands(&mut f.pool, e, new) }
}

/// True when `e` is a load (the weight needs no panel).
fn is_load(f: &PrimFunc, e: PrimExpr) -> bool {
    matches!(f.pool.prim(e), PrimExprData::Load { .. })
}

/// The schedule; the statement and whether it computes the epilogue (always).
pub fn build(f: &mut PrimFunc, fused: &Fused, epi: Option<&Epilogue>, vector_bits: i64) -> Option<(Stmt, bool)> {
    let dt = fused.dt;
    let v = (vector_bits / i64::from(dt.bits)).max(1);
    let kext = fused.kext;
    if v < 4 || kext % v != 0 {
        return None;
    }
    let row_vars: Vec<SymVar> = fused.rows.iter().map(|r| r.0).collect();
    let w = weight_part(f, fused.term, &row_vars, fused.j)?;
    let split = if is_load(f, w) { None } else { Some(ksplit::choose(f, w, fused.k, kext, 2 * v)?) };
    let n = fused.n;
    let nb = match f.pool.as_int(n) {
        Some(c) if c < NB => (c + NR - 1) / NR * NR,
        _ => NB,
    };
    let exact = f.pool.as_int(n).is_some_and(|c| c % nb == 0);
    let one = f.pool.i64(1);
    let nbc = f.pool.i64(nb);
    let tasks = ceil_div(f, n, nb);
    let (jl, jtv) = lp(f, &format!("{}_tile", fused.jname), tasks, ForKind::Parallel);
    let j0 = bin(&mut f.pool, BinOp::Mul, jtv, nbc);
    let nlast = bin(&mut f.pool, BinOp::Sub, n, one);
    let clamp = |f: &mut PrimFunc, col: PrimExpr| {
        if exact { col } else { bin(&mut f.pool, BinOp::Min, col, nlast) }
    };
    let mut allocs = Vec::new();
    let mut stmts = Vec::new();

    // The panel: the task's weight rows, decoded once.
    let jloc = f.pool.new_var("jj", relax_ir::DataType::INT64);
    let jlocv = f.pool.var_ref(jloc);
    let kref = f.pool.var_ref(fused.k);
    let tile_term = match &split {
        None => fused.term,
        Some(split) => {
            let panel = local(f, &format!("{}_panel", fused.name), dt, &[nb, kext]);
            allocs.push(panel);
            let (jjl, jjv) = lpc(f, "jj", nb, ForKind::Serial);
            let kl = split.loops(f, &fused.kname, kext, None);
            let nk = kl.vars.len();
            let jv = bin(&mut f.pool, BinOp::Add, j0, jjv);
            let jv = clamp(f, jv);
            let extra: Vec<(SymVar, i64)> = vec![(jjl.var, nb)];
            let an = ksplit::analyzer(&kl, &extra);
            let map = HashMap::from([(fused.j, jv), (fused.k, kl.k)]);
            let val = relax_ir::arith::substitute(&mut f.pool, w, &map);
            let val = ksplit::simplify_ints(&mut f.pool, &an, val);
            let hoisted = hoist(f, val, &[kl.vars[nk - 1]], &format!("{}_w", fused.name));
            allocs.extend(hoisted.buffers.iter().copied());
            let kidx = ksplit::simplify_ints(&mut f.pool, &an, kl.k);
            let st = f.stmts.push(StmtData::Store { buffer: panel, indices: vec![jjv, kidx], value: hoisted.expr });
            let lanes = Loop { var: kl.vars[nk - 1], extent: f.pool.i64(split.lanes), kind: ForKind::Vectorized };
            let mut body = hoisted.stores.clone();
            body.push(wrap(f, &[lanes], st));
            let body = f.stmts.push(StmtData::Seq(body));
            let mut loops = vec![jjl];
            loops.extend(
                (0..nk - 1).map(|d| Loop { var: kl.vars[d], extent: f.pool.i64(kl.extents[d]), kind: ForKind::Serial }),
            );
            stmts.push(wrap(f, &loops, body));
            let load = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: panel, indices: vec![jlocv, kref] });
            replace(f, fused.term, w, load)
        }
    };

    // The row tiles: MR rows at a time, then one row at a time.
    let acc = local(f, &format!("{}_acc", fused.name), dt, &[MR, NR, v]);
    let sum = local(f, &format!("{}_sum", fused.name), dt, &[1]);
    allocs.extend([acc, sum]);
    let mut m = f.pool.i64(1);
    for (_, e) in &fused.rows {
        m = bin(&mut f.pool, BinOp::Mul, m, *e);
    }
    let mrc = f.pool.i64(MR);
    let full = bin(&mut f.pool, BinOp::FloorDiv, m, mrc);
    let base = bin(&mut f.pool, BinOp::Mul, full, mrc);
    let rest = bin(&mut f.pool, BinOp::Sub, m, base);
    let cx = Cx { fused, epi, acc, sum, term: tile_term, jloc, j0, nb, v, exact, clamp_last: nlast };
    for (count, mr, first) in [(full, MR, None), (rest, 1, Some(base))] {
        if f.pool.as_int(count) == Some(0) {
            continue;
        }
        stmts.push(cx.tiles(f, count, mr, first));
    }
    let body = f.stmts.push(StmtData::Seq(stmts));
    let blk = opaque_block(f, format!("{}_panel", fused.name), allocs, body);
    Some((wrap(f, &[jl], blk), epi.is_some()))
}

/// What the row tiles of one task share.
struct Cx<'a> {
    fused: &'a Fused,
    epi: Option<&'a Epilogue>,
    acc: relax_ir::Buffer,
    sum: relax_ir::Buffer,
    /// The summand, its weight read from the panel at `[jloc, k]`.
    term: PrimExpr,
    jloc: SymVar,
    /// The task's first weight row.
    j0: PrimExpr,
    nb: i64,
    v: i64,
    /// Whether NB divides N (no clamped columns).
    exact: bool,
    clamp_last: PrimExpr,
}

impl Cx<'_> {
    /// `count` tiles of `mr` rows from row `first` (0 when `None`).
    fn tiles(&self, f: &mut PrimFunc, count: PrimExpr, mr: i64, first: Option<PrimExpr>) -> Stmt {
        let (fused, dt, v) = (self.fused, self.fused.dt, self.v);
        let (itl, itv) = lp(f, "it", count, ForKind::Serial);
        let (jcl, jcv) = lpc(f, "jc", self.nb / NR, ForKind::Serial);
        let mrc = f.pool.i64(mr);
        let nrc = f.pool.i64(NR);
        let mut row0 = bin(&mut f.pool, BinOp::Mul, itv, mrc);
        if let Some(b) = first {
            row0 = bin(&mut f.pool, BinOp::Add, b, row0);
        }
        let z = f.pool.i64(0);
        // acc = 0
        let (r0, r0v) = lpc(f, "r", mr, ForKind::Unrolled);
        let (c0, c0v) = lpc(f, "c", NR, ForKind::Unrolled);
        let (l0, l0v) = lpc(f, "l", v, ForKind::Vectorized);
        let zero = f.pool.float(dt, 0.0);
        let st = f.stmts.push(StmtData::Store { buffer: self.acc, indices: vec![r0v, c0v, l0v], value: zero });
        let s_init = wrap(f, &[r0, c0, l0], st);
        // The multiply-adds.
        let (kvl, kvv) = lpc(f, &fused.kname, fused.kext / v, ForKind::Serial);
        let (rl, rv) = lpc(f, "r", mr, ForKind::Unrolled);
        let (cl, cv) = lpc(f, "c", NR, ForKind::Unrolled);
        let (ll, lv) = lpc(f, "l", v, ForKind::Vectorized);
        let vc = f.pool.i64(v);
        let k = bin(&mut f.pool, BinOp::Mul, kvv, vc);
        let k = bin(&mut f.pool, BinOp::Add, k, lv);
        let row = bin(&mut f.pool, BinOp::Add, row0, rv);
        let rows = row_values(f, fused, row);
        let jc4 = bin(&mut f.pool, BinOp::Mul, jcv, nrc);
        let jl = bin(&mut f.pool, BinOp::Add, jc4, cv);
        let col = bin(&mut f.pool, BinOp::Add, self.j0, jl);
        let col_c = if self.exact { col } else { bin(&mut f.pool, BinOp::Min, col, self.clamp_last) };
        let mut map: HashMap<SymVar, PrimExpr> = fused.rows.iter().map(|r| r.0).zip(rows.iter().copied()).collect();
        map.insert(fused.j, col_c);
        map.insert(fused.k, k);
        map.insert(self.jloc, jl);
        let t = relax_ir::arith::substitute(&mut f.pool, self.term, &map);
        let at = vec![rv, cv, lv];
        let cur = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: self.acc, indices: at.clone() });
        let upd = bin(&mut f.pool, BinOp::Add, cur, t);
        let st = f.stmts.push(StmtData::Store { buffer: self.acc, indices: at, value: upd });
        let s_mac = wrap(f, &[kvl, rl, cl, ll], st);
        // The sums, in order from the init value, and the outputs.
        let (r2, r2v) = lpc(f, "r", mr, ForKind::Unrolled);
        let (c2, c2v) = lpc(f, "c", NR, ForKind::Unrolled);
        let row = bin(&mut f.pool, BinOp::Add, row0, r2v);
        let rows = row_values(f, fused, row);
        let jl = bin(&mut f.pool, BinOp::Add, jc4, c2v);
        let col = bin(&mut f.pool, BinOp::Add, self.j0, jl);
        let mut map: HashMap<SymVar, PrimExpr> = fused.rows.iter().map(|r| r.0).zip(rows.iter().copied()).collect();
        map.insert(fused.j, col);
        let init = relax_ir::arith::substitute(&mut f.pool, fused.init, &map);
        let st0 = f.stmts.push(StmtData::Store { buffer: self.sum, indices: vec![z], value: init });
        let (sl, slv) = lpc(f, "l", v, ForKind::Serial);
        let cur = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: self.sum, indices: vec![z] });
        let a = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: self.acc, indices: vec![r2v, c2v, slv] });
        let s = bin(&mut f.pool, BinOp::Add, cur, a);
        let st1 = f.stmts.push(StmtData::Store { buffer: self.sum, indices: vec![z], value: s });
        let s_sum = wrap(f, &[sl], st1);
        let total = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: self.sum, indices: vec![z] });
        let st_out = Output { fused, epi: self.epi }.store(f, &rows, col, total);
        let mut out = f.stmts.push(StmtData::Seq(vec![st0, s_sum, st_out]));
        if !self.exact {
            let c = bin(&mut f.pool, BinOp::Lt, col, fused.n);
            out = f.stmts.push(StmtData::If { cond: c, then_branch: out, else_branch: None });
        }
        let s_out = wrap(f, &[r2, c2], out);
        let body = f.stmts.push(StmtData::Seq(vec![s_init, s_mac, s_out]));
        wrap(f, &[itl, jcl], body)
    }
}
