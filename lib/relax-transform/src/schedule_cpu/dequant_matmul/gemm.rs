//! The panel schedule: any number of activation rows (prefill's symbolic `seq_len`)
//! against a weight computed in place.
//!
//! ```text
//! for jt in T.parallel(ceil(N / NB)):                  # NB weight rows per task
//!     with T.sblock("matmul_panel"):
//!         panel = T.sblock_alloc_buffer((K, NB), scope="local")
//!         for jj in range(NB):                          # decode once per task
//!             for k_0, ... in T.grid(...):              # as the GEMV splits k
//!                 for l in T.vectorized(L):
//!                     panel[k, jj] = weight(min(jt * NB + jj, N - 1), k)
//!         for it in range(M // MR):                     # row tiles, then one-row tiles
//!             for r in T.unroll(MR): for c in T.vectorized(NB): acc[r, c] = init
//!             for k in range(K):
//!                 for r in T.unroll(MR):
//!                     for c in T.vectorized(NB):
//!                         acc[r, c] = acc[r, c] + x(it * MR + r, k) * panel[k, c]
//!             for r in T.unroll(MR): for c in T.vectorized(NB):
//!                 C[row, col] = acc[r, c]               # (or the epilogue of it)
//! ```
//!
//! The weight rows of a task are decoded once (the decode vectorizes over consecutive
//! `k`, as in the GEMV) into a panel laid out `[k, column]`, and reused by every row of
//! the activation: the register tile of MR rows by NB columns (NB is four vector
//! registers and MR 4, or NB two vectors and MR 8 when a panel of four would not fit
//! in a core's L2 cache) is the
//! float matmul's micro-kernel (`schedule_cpu/matmul.rs`): each `k` broadcasts MR
//! activation values and loads NB contiguous panel values for MR * NB multiply-adds.
//! Each sum runs over `k` in order from `T.init`'s value, so the numbers are the
//! interpreter's. Columns past N (when NB does not divide it) are decoded from the last
//! weight row and never stored.

use std::collections::HashMap;

use relax_ir::{BinOp, Buffer, ForKind, PrimExpr, PrimFunc, Stmt, StmtData, SymVar};

use super::super::nest::scope_block;
use super::hoist::hoist;
use super::ksplit::{self, Split, bin};
use super::{Epilogue, Fused, Output, local, lp, lpc, row_values};
use crate::schedule_cpu::nest::{Loop, ceil_div, wrap};

/// Vector accumulators of a register tile (MR rows by NB / lanes vectors).
const TILE_VECTORS: i64 = 16;
/// The most activation rows of a register tile.
const MAX_MR: i64 = 8;
/// The most bytes a task's panel may take (half of a 1 MiB L2 cache, with room for the
/// activation rows).
const PANEL_BYTES: i64 = 768 * 1024;

/// The part of `term` that is the weight: the one maximal subexpression that mentions
/// `j` and no row variable.
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

/// The columns per task: four vectors, or two when a panel of four would pass
/// [`PANEL_BYTES`]; never (much) more than the columns there are.
fn panel_width(f: &PrimFunc, fused: &Fused, vlanes: i64) -> i64 {
    let bytes = i64::from(fused.dt.bits / 8).max(1);
    let mut nb = 4 * vlanes;
    if nb > vlanes && fused.kext * nb * bytes > PANEL_BYTES {
        nb /= 2;
    }
    match f.pool.as_int(fused.n) {
        Some(c) if c < nb => (c + vlanes - 1) / vlanes * vlanes,
        _ => nb,
    }
}

/// The schedule; the statement and whether it computes the epilogue (always).
pub fn build(f: &mut PrimFunc, fused: &Fused, epi: Option<&Epilogue>, vector_bits: i64) -> Option<(Stmt, bool)> {
    let dt = fused.dt;
    let vlanes = (vector_bits / i64::from(dt.bits)).max(1);
    let kext = fused.kext;
    let row_vars: Vec<SymVar> = fused.rows.iter().map(|r| r.0).collect();
    let w = weight_part(f, fused.term, &row_vars, fused.j)?;
    let split = ksplit::choose(f, w, fused.k, kext, 2 * vlanes).unwrap_or(Split { lanes: 1, chain: Vec::new() });
    let n = fused.n;
    let nb = panel_width(f, fused, vlanes);
    let exact = f.pool.as_int(n).is_some_and(|c| c % nb == 0);
    let one = f.pool.i64(1);
    let nbc = f.pool.i64(nb);
    let tasks = ceil_div(f, n, nb);
    let (jl, jtv) = lp(f, &format!("{}_tile", fused.jname), tasks, ForKind::Parallel);
    let j0 = bin(&mut f.pool, BinOp::Mul, jtv, nbc);
    let nlast = bin(&mut f.pool, BinOp::Sub, n, one);
    let mut allocs = Vec::new();
    let mut stmts = Vec::new();

    // The panel: the task's weight rows, decoded once, `[k, column]`.
    let panel = local(f, &format!("{}_panel", fused.name), dt, &[kext, nb]);
    allocs.push(panel);
    let (jjl, jjv) = lpc(f, "jj", nb, ForKind::Serial);
    let kl = split.loops(f, &fused.kname, kext, None);
    let nk = kl.vars.len();
    let mut jv = bin(&mut f.pool, BinOp::Add, j0, jjv);
    if !exact {
        jv = bin(&mut f.pool, BinOp::Min, jv, nlast);
    }
    let an = ksplit::analyzer(&kl, &[(jjl.var, nb)]);
    let map = HashMap::from([(fused.j, jv), (fused.k, kl.k)]);
    let val = relax_ir::arith::substitute(&mut f.pool, w, &map);
    let val = ksplit::simplify_ints(&mut f.pool, &an, val);
    let hoisted = hoist(f, val, &[kl.vars[nk - 1]], &format!("{}_w", fused.name));
    allocs.extend(hoisted.buffers.iter().copied());
    let kidx = ksplit::simplify_ints(&mut f.pool, &an, kl.k);
    let st = f.stmts.push(StmtData::Store { buffer: panel, indices: vec![kidx, jjv], value: hoisted.expr });
    let lanes_kind = if split.lanes > 1 { ForKind::Vectorized } else { ForKind::Serial };
    let lanes = Loop { var: kl.vars[nk - 1], extent: f.pool.i64(split.lanes), kind: lanes_kind };
    let mut body = hoisted.stores.clone();
    body.push(wrap(f, &[lanes], st));
    let body = f.stmts.push(StmtData::Seq(body));
    let mut loops = vec![jjl];
    loops.extend((0..nk - 1).map(|d| Loop {
        var: kl.vars[d],
        extent: f.pool.i64(kl.extents[d]),
        kind: ForKind::Serial,
    }));
    stmts.push(wrap(f, &loops, body));

    // The row tiles: MR rows at a time (4 with four vectors of columns, 8 with two),
    // then one row at a time.
    let mr_full = (TILE_VECTORS / (nb / vlanes).max(1)).clamp(1, MAX_MR);
    let acc = local(f, &format!("{}_acc", fused.name), dt, &[mr_full, nb]);
    allocs.push(acc);
    let mut m = f.pool.i64(1);
    for (_, e) in &fused.rows {
        m = bin(&mut f.pool, BinOp::Mul, m, *e);
    }
    let mrc = f.pool.i64(mr_full);
    let full = bin(&mut f.pool, BinOp::FloorDiv, m, mrc);
    let base = bin(&mut f.pool, BinOp::Mul, full, mrc);
    let rest = bin(&mut f.pool, BinOp::Sub, m, base);
    let cx = Cx { fused, epi, acc, panel, w, j0, nb, exact };
    for (count, mr, first) in [(full, mr_full, None), (rest, 1, Some(base))] {
        if f.pool.as_int(count) == Some(0) {
            continue;
        }
        stmts.push(cx.tiles(f, count, mr, first));
    }
    let body = f.stmts.push(StmtData::Seq(stmts));
    let blk = scope_block(f, format!("{}_panel", fused.name), allocs, body);
    Some((wrap(f, &[jl], blk), epi.is_some()))
}

/// What the row tiles of one task share.
struct Cx<'a> {
    fused: &'a Fused,
    epi: Option<&'a Epilogue>,
    acc: Buffer,
    panel: Buffer,
    /// The weight part of the summand, read from the panel instead.
    w: PrimExpr,
    /// The task's first weight row.
    j0: PrimExpr,
    nb: i64,
    /// Whether NB divides N (no columns past it).
    exact: bool,
}

impl Cx<'_> {
    /// The rows and column of tile element `(r, c)` for the tile's first row `row0`.
    fn at(&self, f: &mut PrimFunc, row0: PrimExpr, r: PrimExpr, c: PrimExpr) -> (Vec<PrimExpr>, PrimExpr) {
        let row = bin(&mut f.pool, BinOp::Add, row0, r);
        let rows = row_values(f, self.fused, row);
        let col = bin(&mut f.pool, BinOp::Add, self.j0, c);
        (rows, col)
    }

    /// `e` with the rows, the column and `k` replaced.
    fn subst(&self, f: &mut PrimFunc, rows: &[PrimExpr], col: PrimExpr, k: Option<PrimExpr>, e: PrimExpr) -> PrimExpr {
        let mut map: HashMap<SymVar, PrimExpr> =
            self.fused.rows.iter().map(|r| r.0).zip(rows.iter().copied()).collect();
        map.insert(self.fused.j, col);
        if let Some(k) = k {
            map.insert(self.fused.k, k);
        }
        relax_ir::arith::substitute(&mut f.pool, e, &map)
    }

    /// `count` tiles of `mr` rows from row `first` (0 when `None`).
    fn tiles(&self, f: &mut PrimFunc, count: PrimExpr, mr: i64, first: Option<PrimExpr>) -> Stmt {
        let (fused, dt, nb) = (self.fused, self.fused.dt, self.nb);
        let (itl, itv) = lp(f, "it", count, ForKind::Serial);
        let mrc = f.pool.i64(mr);
        let mut row0 = bin(&mut f.pool, BinOp::Mul, itv, mrc);
        if let Some(b) = first {
            row0 = bin(&mut f.pool, BinOp::Add, b, row0);
        }
        let nlast = {
            let one = f.pool.i64(1);
            bin(&mut f.pool, BinOp::Sub, fused.n, one)
        };
        // acc = init
        let (r0, r0v) = lpc(f, "r", mr, ForKind::Unrolled);
        let (c0, c0v) = lpc(f, "c", nb, ForKind::Vectorized);
        let (rows, mut col) = self.at(f, row0, r0v, c0v);
        if !self.exact {
            col = bin(&mut f.pool, BinOp::Min, col, nlast);
        }
        let init = self.subst(f, &rows, col, None, fused.init);
        let st = f.stmts.push(StmtData::Store { buffer: self.acc, indices: vec![r0v, c0v], value: init });
        let s_init = wrap(f, &[r0, c0], st);
        // The multiply-adds, `k` in order.
        let (kl, kv) = lpc(f, &fused.kname, fused.kext, ForKind::Serial);
        let (rl, rv) = lpc(f, "r", mr, ForKind::Unrolled);
        let (cl, cv) = lpc(f, "c", nb, ForKind::Vectorized);
        let (rows, col) = self.at(f, row0, rv, cv);
        let load = f.pool.raw(relax_ir::PrimExprData::Load { dtype: dt, buffer: self.panel, indices: vec![kv, cv] });
        let term = replace(f, fused.term, self.w, load);
        let t = self.subst(f, &rows, col, Some(kv), term);
        let at = vec![rv, cv];
        let cur = f.pool.raw(relax_ir::PrimExprData::Load { dtype: dt, buffer: self.acc, indices: at.clone() });
        let upd = bin(&mut f.pool, BinOp::Add, cur, t);
        let st = f.stmts.push(StmtData::Store { buffer: self.acc, indices: at, value: upd });
        let s_mac = wrap(f, &[kl, rl, cl], st);
        // The outputs.
        let (r2, r2v) = lpc(f, "r", mr, ForKind::Unrolled);
        let (c2, c2v) = lpc(f, "c", nb, ForKind::Vectorized);
        let (rows, col) = self.at(f, row0, r2v, c2v);
        let total = f.pool.raw(relax_ir::PrimExprData::Load { dtype: dt, buffer: self.acc, indices: vec![r2v, c2v] });
        let mut out = Output { fused, epi: self.epi }.store(f, &rows, col, total);
        if !self.exact {
            let c = bin(&mut f.pool, BinOp::Lt, col, fused.n);
            out = f.stmts.push(StmtData::If { cond: c, then_branch: out, else_branch: None });
        }
        let s_out = wrap(f, &[r2, c2], out);
        let body = f.stmts.push(StmtData::Seq(vec![s_init, s_mac, s_out]));
        wrap(f, &[itl], body)
    }
}
