//! The matrix-vector schedule: a constant number `R` (at most
//! [`super::MAX_GEMV_ROWS`]) of activation rows against a weight computed in place.
//!
//! ```text
//! for j in T.parallel(N):
//!     with T.sblock("matmul_gemv"):
//!         acc = T.sblock_alloc_buffer((R, S, L), scope="local")
//!         acc[...] = 0
//!         for k_0 in range(K / B_m):              # blocks
//!             for k_1 in range(B_m / B_m-1):      # sub-blocks ...
//!                 for k_m in T.unroll(S):         # the innermost one: S accumulators
//!                     for r in T.unroll(R):
//!                         for l in T.vectorized(L):
//!                             acc[r, k_m, l] = acc[r, k_m, l] + term(r, j, k)
//!         for r in T.unroll(R):
//!             sum[0] = init
//!             for s, l in T.grid(S, L):
//!                 sum[0] = sum[0] + acc[r, s, l]
//!             C[r, j] = sum[0]                    # (or the epilogue of it)
//! ```
//!
//! `k = k_0 * B_m + ... + k_m * L + l` ([`super::ksplit`]), so a lane reads
//! consecutive weight bytes and LLVM turns the lanes into vector loads, shifts, masks,
//! int-to-float conversions and multiply-adds; the weight expression is shared by the
//! `R` rows. Each row of the weight is read once, by one task.

use relax_ir::{BinOp, ForKind, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::super::nest::scope_block;
use super::hoist::hoist;
use super::ksplit::{self, bin};
use super::{Epilogue, Fused, MAX_GEMV_ROWS, Output, local, lp, lpc, row_values, substitute};
use crate::schedule_cpu::nest::{Loop, wrap};

/// The constant row count of `fused`, when it takes this schedule.
pub fn rows(f: &PrimFunc, fused: &Fused) -> Option<i64> {
    let mut r = 1i64;
    for (_, e) in &fused.rows {
        r = r.checked_mul(f.pool.as_int(*e)?)?;
    }
    (r <= MAX_GEMV_ROWS).then_some(r)
}

/// The loop over `nrows` rows (none for one row) and the row index.
fn row_loop(f: &mut PrimFunc, nrows: i64) -> (Option<Loop>, PrimExpr) {
    if nrows == 1 {
        return (None, f.pool.i64(0));
    }
    let (l, v) = lpc(f, "r", nrows, ForKind::Unrolled);
    (Some(l), v)
}

/// The schedule; the statement and whether it computes the epilogue (always, when there
/// is one).
pub fn build(f: &mut PrimFunc, fused: &Fused, epi: Option<&Epilogue>, vector_bits: i64) -> Option<(Stmt, bool)> {
    let nrows = rows(f, fused)?;
    let dt = fused.dt;
    let vlanes = (vector_bits / i64::from(dt.bits)).max(1);
    let split = ksplit::choose(f, fused.term, fused.k, fused.kext, (2 * vlanes).max(4))?;
    let lanes = split.lanes;
    let (jl, jv) = lp(f, &fused.jname, fused.n, ForKind::Parallel);
    let kl = split.loops(f, &fused.kname, fused.kext, None);
    let nk = kl.vars.len();
    // The sub-block loop right above the lanes holds independent accumulators.
    let acc_n = if split.chain.is_empty() { 1 } else { kl.extents[nk - 2] };
    let acc_n = if acc_n * lanes <= 4 * vlanes { acc_n } else { 1 };
    let acc = local(f, &format!("{}_acc", fused.name), dt, &[nrows, acc_n, lanes]);
    let zero = f.pool.float(dt, 0.0);
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, fused, rv);
    let mut extra: Vec<(relax_ir::SymVar, i64)> = rl.iter().map(|l| (l.var, nrows)).collect();
    if let Some(n) = f.pool.as_int(fused.n) {
        extra.push((jl.var, n));
    }
    let an = ksplit::analyzer(&kl, &extra);
    let term = substitute(f, fused, &rowv, jv, kl.k, fused.term);
    let term = ksplit::simplify_ints(&mut f.pool, &an, term);

    // acc = 0
    let (a0, a0v) = row_loop(f, nrows);
    let (s0, s0v) = lpc(f, "s", acc_n, ForKind::Unrolled);
    let (l0, l0v) = lpc(f, "l", lanes, ForKind::Vectorized);
    let st = f.stmts.push(StmtData::Store { buffer: acc, indices: vec![a0v, s0v, l0v], value: zero });
    let mut init_loops: Vec<Loop> = a0.into_iter().collect();
    init_loops.extend([s0, l0]);
    let s_init = wrap(f, &init_loops, st);

    // The reduction, with the lane-invariant parts of the weight computed once per
    // (sub-)block.
    let mut inner: Vec<SymVar> = vec![kl.vars[nk - 1]];
    inner.extend(rl.iter().map(|l| l.var));
    let hoisted = hoist(f, term, &inner, &format!("{}_w", fused.name));
    let lv = f.pool.var_ref(kl.vars[nk - 1]);
    let sv = if acc_n > 1 { f.pool.var_ref(kl.vars[nk - 2]) } else { f.pool.i64(0) };
    let at = vec![rv, sv, lv];
    let cur = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: acc, indices: at.clone() });
    let upd = bin(&mut f.pool, BinOp::Add, cur, hoisted.expr);
    let st = f.stmts.push(StmtData::Store { buffer: acc, indices: at, value: upd });
    let mut lanes_loops: Vec<Loop> = rl.into_iter().collect();
    lanes_loops.push(Loop { var: kl.vars[nk - 1], extent: f.pool.i64(lanes), kind: ForKind::Vectorized });
    let mut body = hoisted.stores.clone();
    body.push(wrap(f, &lanes_loops, st));
    let body = f.stmts.push(StmtData::Seq(body));
    let loops: Vec<Loop> = (0..nk - 1)
        .map(|d| Loop { var: kl.vars[d], extent: f.pool.i64(kl.extents[d]), kind: ForKind::Serial })
        .collect();
    let s_red = wrap(f, &loops, body);

    // The horizontal sum, from the init value, in order over the accumulators. (A tree
    // of vector adds would be shorter, but LLVM's SLP vectorizer then packs the loop's
    // accumulators in pairs instead of whole vectors.)
    let (r2, r2v) = row_loop(f, nrows);
    let rowv2 = row_values(f, fused, r2v);
    let init = substitute(f, fused, &rowv2, jv, kl.k, fused.init);
    let red = local(f, &format!("{}_sum", fused.name), dt, &[1]);
    let z = f.pool.i64(0);
    let st0 = f.stmts.push(StmtData::Store { buffer: red, indices: vec![z], value: init });
    let (sl, slv) = lpc(f, "s", acc_n, ForKind::Serial);
    let (ll, llv) = lpc(f, "l", lanes, ForKind::Serial);
    let cur = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: red, indices: vec![z] });
    let a = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: acc, indices: vec![r2v, slv, llv] });
    let v = bin(&mut f.pool, BinOp::Add, cur, a);
    let st = f.stmts.push(StmtData::Store { buffer: red, indices: vec![z], value: v });
    let s_sum = wrap(f, &[sl, ll], st);
    let total = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: red, indices: vec![z] });
    let st_out = Output { fused, epi }.store(f, &rowv2, jv, total);
    let seq = f.stmts.push(StmtData::Seq(vec![st0, s_sum, st_out]));
    let s_out = wrap(f, &r2.into_iter().collect::<Vec<_>>(), seq);

    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_red, s_out]));
    let blk = scope_block(f, format!("{}_gemv", fused.name), [vec![acc, red], hoisted.buffers].concat(), body);
    Some((wrap(f, &[jl], blk), epi.is_some()))
}
