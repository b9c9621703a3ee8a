//! Matmuls over lanes of integer dot products (the kernels of `quantize-activations`,
//! [`crate::quant::q8`]), three reduction nests in a row:
//!
//! 1. `D[rows..., j, b, l] = Σ_t term` into a root-allocated integer buffer (`t` the
//!    products of a lane, `b` the blocks, `l` the lanes);
//! 2. `E[rows..., j, l] = Σ_b f(D[rows..., j, b, l], ...)`, float, into a root-allocated
//!    buffer;
//! 3. `C[rows..., j] = Σ_l g(E[rows..., j, l])`,
//!
//! each buffer read only by the next nest, maybe followed by an elementwise epilogue
//! that reads `C`. With a constant count of at most [`MAX_ROWS`] rows and a constant
//! lane count, they become one nest that keeps `D` and `E` in registers:
//!
//! ```text
//! for j in T.parallel(N):
//!     with T.sblock("matmul_dot"):
//!         p = T.sblock_alloc_buffer((L,), "int32", scope="local")
//!         e = T.sblock_alloc_buffer((R, L), scope="local")
//!         s = T.sblock_alloc_buffer((1,), scope="local")
//!         for r in T.unroll(R): for l in T.vectorized(L): e[r, l] = E's init
//!         for b in range(B):
//!             for r in T.unroll(R):
//!                 for l in T.vectorized(L): p[l] = D's init
//!                 for l in T.vectorized(L):
//!                     for t in T.unroll(G): p[l] = p[l] + term(r, j, b, l, t)
//!                 for l in T.vectorized(L): e[r, l] = e[r, l] + f(p[l], r, j, b, l)
//!         for r in T.unroll(R):
//!             s[0] = C's init
//!             for l in range(L): s[0] = s[0] + g(e[r, l])
//!             C[r, j] = s[0]                       # or the epilogue of it
//! ```
//!
//! Every value is computed in the interpreter's order (the integer sums exactly, each
//! lane's float sum over `b` in order from its init, then the lanes in order), so the
//! numbers do not change. With 4 products of `uint8 × int8` per lane the dot-product
//! loop is one `vpdpbusd` (the code generator's `llvm/dot.rs`); the rows are unrolled,
//! so a weight block is decoded once for all of them.

use std::collections::HashMap;

use relax_ir::tir::BufferData;
use relax_ir::{
    BinOp, Buffer, DataType, ForKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar, TypeCode,
};

use super::dequant_matmul::hoist::hoist;
use super::inline::{loads_of, mentions, replace_loads};
use super::matmul::{Epilogue, epilogue};
use super::nest::{Loop, Nest, scope_block, sum_nest, wrap};

/// The most rows (a constant count) the schedule takes.
pub const MAX_ROWS: i64 = 16;
/// The most products per lane (the unrolled inner reduction).
pub const MAX_INNER: i64 = 16;
/// The most lanes.
pub const MAX_LANES: i64 = 64;
/// A reduction nest: `out[spatial] = out[spatial] + term`, from `init`.
struct Reduction {
    nest: Nest,
    out: Buffer,
    spatial: Vec<SymVar>,
    k: SymVar,
    init: PrimExpr,
    term: PrimExpr,
    name: String,
}

/// The reduction nest at `s`: identity bindings, spatial variables then one reduction
/// variable, one store of `out` at the spatial variables.
fn reduction(f: &PrimFunc, s: Stmt) -> Option<Reduction> {
    let r = sum_nest(f, s)?;
    let name = r.block.name.clone();
    Some(Reduction { nest: r.nest, out: r.out, spatial: r.spatial, k: r.k, init: r.init, term: r.term, name })
}

/// The pieces of one recognized matmul.
struct Plan {
    dot: Reduction,
    lane: Reduction,
    sum: Reduction,
    rows: Vec<i64>,
    lanes: i64,
    inner: i64,
    epi: Option<Epilogue>,
}

/// True when `e` reads `buf` only at exactly `at` (and reads it).
fn reads_only_at(f: &PrimFunc, e: PrimExpr, buf: Buffer, at: &[SymVar]) -> bool {
    let mut reads = Vec::new();
    loads_of(&f.pool, e, buf, &mut reads);
    let own =
        |ix: &Vec<PrimExpr>| ix.len() == at.len() && ix.iter().zip(at).all(|(&e, &v)| f.pool.as_var(e) == Some(v));
    !reads.is_empty() && reads.iter().all(own)
}

fn recognize(f: &PrimFunc, stmts: &[Stmt], at: usize, allocs: &[Buffer]) -> Option<Plan> {
    let dot = reduction(f, stmts[at])?;
    let lane = reduction(f, *stmts.get(at + 1)?)?;
    let sum = reduction(f, *stmts.get(at + 2)?)?;
    let dt = f.buffer(dot.out).dtype;
    if !matches!(dt.code, TypeCode::Int | TypeCode::UInt)
        || !f.buffer(lane.out).dtype.is_float()
        || !f.buffer(sum.out).dtype.is_float()
        || !allocs.contains(&dot.out)
        || !allocs.contains(&lane.out)
    {
        return None;
    }
    // Loops: dot (rows..., j, b, l, t), lane (rows..., j, l, b), sum (rows..., j, l).
    let ns = sum.spatial.len();
    if ns < 1 || lane.spatial.len() != ns + 1 || dot.spatial.len() != ns + 2 {
        return None;
    }
    let ext = |r: &Reduction, d: usize| r.nest.loops[d].extent;
    for d in 0..ns {
        if ext(&dot, d) != ext(&sum, d) || ext(&lane, d) != ext(&sum, d) {
            return None;
        }
    }
    if ext(&dot, ns) != ext(&lane, ns + 1) || ext(&dot, ns + 1) != ext(&lane, ns) || ext(&lane, ns) != ext(&sum, ns) {
        return None;
    }
    let lanes = f.pool.as_int(ext(&sum, ns))?;
    let inner = f.pool.as_int(ext(&dot, ns + 2))?;
    if !(1..=MAX_LANES).contains(&lanes) || !(1..=MAX_INNER).contains(&inner) {
        return None;
    }
    let mut rows = Vec::new();
    for d in 0..ns - 1 {
        rows.push(f.pool.as_int(ext(&sum, d))?);
    }
    if rows.iter().product::<i64>() > MAX_ROWS {
        return None;
    }
    // Each stage reads the previous one at its own element only.
    let mut dot_at: Vec<SymVar> = lane.spatial[..ns].to_vec();
    dot_at.extend([lane.k, lane.spatial[ns]]);
    let mut lane_at: Vec<SymVar> = sum.spatial.clone();
    lane_at.push(sum.k);
    if !reads_only_at(f, lane.term, dot.out, &dot_at) || !reads_only_at(f, sum.term, lane.out, &lane_at) {
        return None;
    }
    let mut stray = Vec::new();
    loads_of(&f.pool, lane.init, dot.out, &mut stray);
    loads_of(&f.pool, sum.init, lane.out, &mut stray);
    loads_of(&f.pool, sum.init, dot.out, &mut stray);
    loads_of(&f.pool, sum.term, dot.out, &mut stray);
    if !stray.is_empty() {
        return None;
    }
    for (q, &s) in stmts.iter().enumerate() {
        if (q != at && q != at + 1 && mentions(f, s, dot.out))
            || (q != at + 1 && q != at + 2 && mentions(f, s, lane.out))
        {
            return None;
        }
    }
    let c = sum.out;
    let epi = match stmts.get(at + 3) {
        Some(&next)
            if allocs.contains(&c)
                && stmts.iter().enumerate().all(|(q, &s)| q == at + 2 || q == at + 3 || !mentions(f, s, c)) =>
        {
            epilogue(f, next, c)
        }
        _ => None,
    };
    Some(Plan { dot, lane, sum, rows, lanes, inner, epi })
}

/// `a op b`, folded when the simplifier can.
fn bin(p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    p.binary(op, a, b).unwrap_or_else(|_| p.raw(PrimExprData::Bin(op, a, b)))
}

/// A new loop of `kind` over the constant `extent` and a reference to its variable.
fn lp(f: &mut PrimFunc, name: &str, extent: PrimExpr, kind: ForKind) -> (Loop, PrimExpr) {
    let v = f.pool.new_var(name, DataType::INT64);
    (Loop { var: v, extent, kind }, f.pool.var_ref(v))
}

/// A new local buffer of constant shape.
fn local(f: &mut PrimFunc, name: &str, dt: DataType, shape: &[i64]) -> Buffer {
    let data = f.pool.new_var(name, DataType::HANDLE);
    f.pool.vars[data].pointer = Some((dt, "local".to_string()));
    let dims = shape.iter().map(|&d| f.pool.i64(d)).collect();
    let mut b = BufferData::new(name, data, dt, dims);
    b.scope = "local".to_string();
    f.buffers.push(b)
}

/// The values of the row variables for the flat row index `r` (row-major).
fn row_values(f: &mut PrimFunc, rows: &[i64], r: PrimExpr) -> Vec<PrimExpr> {
    let mut out = vec![r; rows.len()];
    let mut rest = r;
    for d in (0..rows.len()).rev() {
        if d == 0 {
            out[d] = rest;
        } else {
            let e = f.pool.i64(rows[d]);
            out[d] = bin(&mut f.pool, BinOp::FloorMod, rest, e);
            rest = bin(&mut f.pool, BinOp::FloorDiv, rest, e);
        }
    }
    out
}

/// An unrolled loop over the `n` flat rows (none for one row) and the row index.
fn row_loop(f: &mut PrimFunc, n: i64) -> (Vec<Loop>, PrimExpr) {
    if n == 1 {
        return (Vec::new(), f.pool.i64(0));
    }
    let e = f.pool.i64(n);
    let (l, v) = lp(f, "r", e, ForKind::Unrolled);
    (vec![l], v)
}

/// `e` with `vars` replaced by `values`.
fn subst(f: &mut PrimFunc, vars: &[SymVar], values: &[PrimExpr], e: PrimExpr) -> PrimExpr {
    let map: HashMap<SymVar, PrimExpr> = vars.iter().copied().zip(values.iter().copied()).collect();
    relax_ir::arith::substitute(&mut f.pool, e, &map)
}

/// The store of the final sum `v` of output `(rows, j)`, through the epilogue.
fn store(f: &mut PrimFunc, plan: &Plan, rows: &[PrimExpr], j: PrimExpr, v: PrimExpr) -> Stmt {
    let mut at: Vec<PrimExpr> = rows.to_vec();
    at.push(j);
    match &plan.epi {
        None => f.stmts.push(StmtData::Store { buffer: plan.sum.out, indices: at, value: v }),
        Some(e) => {
            let idx = e.idx.iter().map(|&i| subst(f, &e.vars, &at, i)).collect();
            let value = subst(f, &e.vars, &at, e.value);
            let value = replace_loads(&mut f.pool, value, plan.sum.out, &mut |_, _| v);
            f.stmts.push(StmtData::Store { buffer: e.out, indices: idx, value })
        }
    }
}

/// The name of loop `d` of a nest.
fn loop_name(f: &PrimFunc, r: &Reduction, d: usize) -> String {
    f.pool.vars[r.nest.loops[d].var].name.clone()
}

fn build(f: &mut PrimFunc, plan: &Plan) -> Stmt {
    let ns = plan.sum.spatial.len();
    let nrows: i64 = plan.rows.iter().product();
    let jname = loop_name(f, &plan.sum, ns - 1);
    let (jl, jv) = lp(f, &jname, plan.sum.nest.loops[ns - 1].extent, ForKind::Parallel);
    let it = f.buffer(plan.dot.out).dtype;
    let et = f.buffer(plan.lane.out).dtype;
    let ct = f.buffer(plan.sum.out).dtype;
    let p = local(f, &format!("{}_acc", plan.dot.name), it, &[plan.lanes]);
    let e = local(f, &format!("{}_acc", plan.lane.name), et, &[nrows, plan.lanes]);
    let s = local(f, &format!("{}_sum", plan.sum.name), ct, &[1]);
    let zero = f.pool.i64(0);
    let le = f.pool.i64(plan.lanes);
    let lname = loop_name(f, &plan.sum, ns);
    let vec_l = |f: &mut PrimFunc| lp(f, &lname, le, ForKind::Vectorized);

    // e[r, l] = E's init
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    let (ll, lv) = vec_l(f);
    let mut at: Vec<PrimExpr> = rowv.clone();
    at.extend([jv, lv]);
    let init = subst(f, &plan.lane.spatial, &at, plan.lane.init);
    let st = f.stmts.push(StmtData::Store { buffer: e, indices: vec![rv, lv], value: init });
    let mut loops = rl;
    loops.push(ll);
    let s_init = wrap(f, &loops, st);

    // The blocks.
    let bname = loop_name(f, &plan.lane, ns + 1);
    let (bl, bv) = lp(f, &bname, plan.lane.nest.loops[ns + 1].extent, ForKind::Serial);
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    // p[l] = D's init
    let (ll, lv) = vec_l(f);
    let mut dat: Vec<PrimExpr> = rowv.clone();
    dat.extend([jv, bv, lv]);
    let dinit = subst(f, &plan.dot.spatial, &dat, plan.dot.init);
    let p0 = f.stmts.push(StmtData::Store { buffer: p, indices: vec![lv], value: dinit });
    let p0 = wrap(f, &[ll], p0);
    // p[l] = p[l] + term
    let (ll, lv) = vec_l(f);
    let tname = loop_name(f, &plan.dot, ns + 2);
    let te = f.pool.i64(plan.inner);
    let (tl, tv) = lp(f, &tname, te, ForKind::Unrolled);
    let mut dvars = plan.dot.spatial.clone();
    dvars.push(plan.dot.k);
    let mut dat: Vec<PrimExpr> = rowv.clone();
    dat.extend([jv, bv, lv, tv]);
    let term = subst(f, &dvars, &dat, plan.dot.term);
    let cur = f.pool.raw(PrimExprData::Load { dtype: it, buffer: p, indices: vec![lv] });
    let upd = bin(&mut f.pool, BinOp::Add, cur, term);
    let p1 = f.stmts.push(StmtData::Store { buffer: p, indices: vec![lv], value: upd });
    let p1 = wrap(f, &[ll, tl], p1);
    // e[r, l] = e[r, l] + f(p[l])
    let (ll, lv) = vec_l(f);
    let mut evars = plan.lane.spatial.clone();
    evars.push(plan.lane.k);
    let mut eat: Vec<PrimExpr> = rowv.clone();
    eat.extend([jv, lv, bv]);
    let eterm = subst(f, &evars, &eat, plan.lane.term);
    let pl = f.pool.raw(PrimExprData::Load { dtype: it, buffer: p, indices: vec![lv] });
    let eterm = replace_loads(&mut f.pool, eterm, plan.dot.out, &mut |_, _| pl);
    // The block's scales, computed once for the lanes (a conditional inside the lanes
    // loop would be a branch per lane).
    let hoisted = hoist(f, eterm, &[ll.var], &format!("{}_scale", plan.lane.name));
    let cur = f.pool.raw(PrimExprData::Load { dtype: et, buffer: e, indices: vec![rv, lv] });
    let upd = bin(&mut f.pool, BinOp::Add, cur, hoisted.expr);
    let e1 = f.stmts.push(StmtData::Store { buffer: e, indices: vec![rv, lv], value: upd });
    let e1 = wrap(f, &[ll], e1);
    let mut seq = vec![p0, p1];
    seq.extend(hoisted.stores.iter().copied());
    seq.push(e1);
    let body = f.stmts.push(StmtData::Seq(seq));
    let body = wrap(f, &rl, body);
    let s_red = wrap(f, &[bl], body);

    // s = C's init + Σ_l g(e[r, l]), stored.
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    let mut cat: Vec<PrimExpr> = rowv.clone();
    cat.push(jv);
    let cinit = subst(f, &plan.sum.spatial, &cat, plan.sum.init);
    let s0 = f.stmts.push(StmtData::Store { buffer: s, indices: vec![zero], value: cinit });
    let (sl, slv) = lp(f, &lname, le, ForKind::Serial);
    let mut cvars = plan.sum.spatial.clone();
    cvars.push(plan.sum.k);
    let mut cat2 = cat.clone();
    cat2.push(slv);
    let cterm = subst(f, &cvars, &cat2, plan.sum.term);
    let el = f.pool.raw(PrimExprData::Load { dtype: et, buffer: e, indices: vec![rv, slv] });
    let cterm = replace_loads(&mut f.pool, cterm, plan.lane.out, &mut |_, _| el);
    let cur = f.pool.raw(PrimExprData::Load { dtype: ct, buffer: s, indices: vec![zero] });
    let upd = bin(&mut f.pool, BinOp::Add, cur, cterm);
    let s1 = f.stmts.push(StmtData::Store { buffer: s, indices: vec![zero], value: upd });
    let s1 = wrap(f, &[sl], s1);
    let total = f.pool.raw(PrimExprData::Load { dtype: ct, buffer: s, indices: vec![zero] });
    let s2 = store(f, plan, &rowv, jv, total);
    let seq = f.stmts.push(StmtData::Seq(vec![s0, s1, s2]));
    let s_out = wrap(f, &rl, seq);

    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_red, s_out]));
    let mut allocs = vec![p, e, s];
    allocs.extend(hoisted.buffers);
    let blk = scope_block(f, format!("{}_dot", plan.sum.name), allocs, body);
    wrap(f, &[jl], blk)
}

/// Schedules every such matmul among the root block's statements; returns whether
/// anything changed. The dot products' buffer (and, with an epilogue, `C`) go away.
pub fn schedule_all(f: &mut PrimFunc, stmts: &mut Vec<Stmt>, allocs: &mut Vec<Buffer>) -> bool {
    let mut any = false;
    let mut i = 0;
    while i + 2 < stmts.len() {
        let Some(plan) = recognize(f, stmts, i, allocs) else {
            i += 1;
            continue;
        };
        let s = build(f, &plan);
        let n = if plan.epi.is_some() { 4 } else { 3 };
        stmts.splice(i..i + n, [s]);
        allocs.retain(|&b| b != plan.dot.out && b != plan.lane.out && (plan.epi.is_none() || b != plan.sum.out));
        any = true;
        i += 1;
    }
    any
}
