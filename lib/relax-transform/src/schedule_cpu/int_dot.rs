//! Matmuls over blocks of integer dot products (the kernels of
//! `quantize-activations`, [`crate::quant::q8`]): a reduction `D[rows..., j, b] = Σ_i
//! term` into a root-allocated integer buffer, read only by the next nest, a float
//! reduction `C[rows..., j] = Σ_b f(D[rows..., j, b], ...)` over the same loops, and
//! maybe an elementwise epilogue that reads `C`. With a constant count of at most
//! [`MAX_ROWS`] rows and at most [`MAX_INNER`] products per block, the three become one
//! nest that never materializes `D`:
//!
//! ```text
//! for j in T.parallel(N):
//!     with T.sblock("matmul_dot"):
//!         acc = T.sblock_alloc_buffer((1,), "int32", scope="local")
//!         sum = T.sblock_alloc_buffer((R,), scope="local")
//!         for r in T.unroll(R): sum[r] = C's init
//!         for b in range(B):
//!             for r in T.unroll(R):
//!                 acc[0] = D's init
//!                 for i in T.unroll(E): acc[0] = acc[0] + term(r, j, b, i)
//!                 sum[r] = sum[r] + f(acc[0], r, j, b)
//!         for r in T.unroll(R): C[r, j] = sum[r]      # or the epilogue of it
//! ```
//!
//! Every value is computed in the interpreter's order (the integer sum exactly, the
//! float sum over `b` in order from its init), so the numbers do not change. The
//! unrolled products of a block are what LLVM's SLP vectorizer turns into one vector
//! multiply-add reduction: `vpdpbusd` with AVX-VNNI / AVX512-VNNI for `uint8 × int8`
//! products, `vpmaddubsw` + `vpmaddwd` with AVX2 (`docs/codegen.md`). The rows are
//! unrolled too, so a weight block is decoded once for all of them.

use std::collections::HashMap;

use relax_ir::tir::BufferData;
use relax_ir::{
    BinOp, Buffer, DataType, ForKind, IterKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar,
    TypeCode,
};

use super::inline::{loads_of, mentions, replace_loads, single_store};
use super::matmul::{Epilogue, epilogue};
use super::nest::{Loop, Nest, block, scope_block, wrap};

/// The most rows (a constant count) the schedule takes.
pub const MAX_ROWS: i64 = 16;
/// The most products per block (the unrolled inner reduction).
pub const MAX_INNER: i64 = 64;

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
    let nest = Nest::read(f, s)?;
    let map = nest.identity_bindings(f)?;
    let nl = nest.loops.len();
    if nl < 2 || map != (0..nl).collect::<Vec<_>>() {
        return None;
    }
    let b = block(f, nest.block);
    let kinds: Vec<IterKind> = b.iter_vars.iter().map(|iv| iv.kind).collect();
    if kinds[..nl - 1].iter().any(|&k| k != IterKind::Spatial) || kinds[nl - 1] != IterKind::Reduce {
        return None;
    }
    if b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return None;
    }
    let (out, idx, update) = single_store(f, b.body)?;
    let (out0, idx0, init) = single_store(f, b.init?)?;
    let spatial: Vec<SymVar> = b.iter_vars[..nl - 1].iter().map(|iv| iv.var).collect();
    let plain = |ix: &[PrimExpr]| {
        ix.len() == spatial.len() && ix.iter().zip(&spatial).all(|(&e, &v)| f.pool.as_var(e) == Some(v))
    };
    if out0 != out || !plain(&idx) || !plain(&idx0) || f.buffer(out).dtype.lanes != 1 {
        return None;
    }
    let is_acc = |e: PrimExpr| matches!(f.pool.prim(e), PrimExprData::Load { buffer, indices, .. } if *buffer == out && *indices == idx);
    let term = match f.pool.prim(update) {
        PrimExprData::Bin(BinOp::Add, a, t) if is_acc(*a) => *t,
        PrimExprData::Bin(BinOp::Add, t, a) if is_acc(*a) => *t,
        _ => return None,
    };
    let mut own = Vec::new();
    loads_of(&f.pool, term, out, &mut own);
    loads_of(&f.pool, init, out, &mut own);
    if !own.is_empty() {
        return None;
    }
    let k = b.iter_vars[nl - 1].var;
    Some(Reduction { nest, out, spatial, k, init, term, name: b.name.clone() })
}

/// The pieces of one recognized matmul.
struct Plan {
    dot: Reduction,
    sum: Reduction,
    rows: Vec<i64>,
    inner: i64,
    epi: Option<Epilogue>,
}

fn recognize(f: &PrimFunc, stmts: &[Stmt], at: usize, allocs: &[Buffer]) -> Option<Plan> {
    let dot = reduction(f, stmts[at])?;
    let sum = reduction(f, *stmts.get(at + 1)?)?;
    let dt = f.buffer(dot.out).dtype;
    let ct = f.buffer(sum.out).dtype;
    if !matches!(dt.code, TypeCode::Int | TypeCode::UInt) || !ct.is_float() || !allocs.contains(&dot.out) {
        return None;
    }
    // The dot products run over the sum's loops: rows..., j, then the sum's reduction.
    let ns = sum.spatial.len();
    if dot.spatial.len() != ns + 1 || ns < 1 {
        return None;
    }
    for d in 0..=ns {
        if dot.nest.loops[d].extent != sum.nest.loops[d].extent {
            return None;
        }
    }
    let inner = f.pool.as_int(dot.nest.loops[ns + 1].extent)?;
    if !(1..=MAX_INNER).contains(&inner) {
        return None;
    }
    let mut rows = Vec::new();
    for d in 0..ns - 1 {
        rows.push(f.pool.as_int(sum.nest.loops[d].extent)?);
    }
    if rows.iter().product::<i64>() > MAX_ROWS {
        return None;
    }
    // The sum reads the dot products only at its own variables.
    let mut reads = Vec::new();
    loads_of(&f.pool, sum.term, dot.out, &mut reads);
    let mut own: Vec<SymVar> = sum.spatial.clone();
    own.push(sum.k);
    let at_own =
        |ix: &Vec<PrimExpr>| ix.len() == own.len() && ix.iter().zip(&own).all(|(&e, &v)| f.pool.as_var(e) == Some(v));
    if reads.is_empty() || !reads.iter().all(at_own) {
        return None;
    }
    let mut in_init = Vec::new();
    loads_of(&f.pool, sum.init, dot.out, &mut in_init);
    if !in_init.is_empty() || stmts.iter().enumerate().any(|(q, &s)| q != at && q != at + 1 && mentions(f, s, dot.out))
    {
        return None;
    }
    let c = sum.out;
    let epi = match stmts.get(at + 2) {
        Some(&next)
            if allocs.contains(&c)
                && stmts.iter().enumerate().all(|(q, &s)| q == at + 1 || q == at + 2 || !mentions(f, s, c)) =>
        {
            epilogue(f, next, c)
        }
        _ => None,
    };
    Some(Plan { dot, sum, rows, inner, epi })
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
fn local(f: &mut PrimFunc, name: &str, dt: DataType, len: i64) -> Buffer {
    let data = f.pool.new_var(name, DataType::HANDLE);
    f.pool.vars[data].pointer = Some((dt, "local".to_string()));
    let dims = vec![f.pool.i64(len)];
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

fn build(f: &mut PrimFunc, plan: &Plan) -> Stmt {
    let ns = plan.sum.spatial.len();
    let nrows: i64 = plan.rows.iter().product();
    let jname = f.pool.vars[plan.sum.nest.loops[ns - 1].var].name.clone();
    let (jl, jv) = lp(f, &jname, plan.sum.nest.loops[ns - 1].extent, ForKind::Parallel);
    let bname = f.pool.vars[plan.sum.nest.loops[ns].var].name.clone();
    let (bl, bv) = lp(f, &bname, plan.sum.nest.loops[ns].extent, ForKind::Serial);
    let iname = f.pool.vars[plan.dot.nest.loops[ns + 1].var].name.clone();
    let ie = f.pool.i64(plan.inner);
    let (il, iv) = lp(f, &iname, ie, ForKind::Unrolled);
    let it = f.buffer(plan.dot.out).dtype;
    let ct = f.buffer(plan.sum.out).dtype;
    let acc = local(f, &format!("{}_acc", plan.dot.name), it, 1);
    let sum = local(f, &format!("{}_sum", plan.sum.name), ct, nrows);
    let zero = f.pool.i64(0);
    let acc_ref = f.pool.raw(PrimExprData::Load { dtype: it, buffer: acc, indices: vec![zero] });

    // sum[r] = init
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    let mut sv: Vec<PrimExpr> = rowv.clone();
    sv.push(jv);
    let init = subst(f, &plan.sum.spatial, &sv, plan.sum.init);
    let s_init = f.stmts.push(StmtData::Store { buffer: sum, indices: vec![rv], value: init });
    let s_init = wrap(f, &rl, s_init);

    // The blocks.
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    let mut dv: Vec<PrimExpr> = rowv.clone();
    dv.extend([jv, bv]);
    let dinit = subst(f, &plan.dot.spatial, &dv, plan.dot.init);
    let a0 = f.stmts.push(StmtData::Store { buffer: acc, indices: vec![zero], value: dinit });
    let mut dvars = plan.dot.spatial.clone();
    dvars.push(plan.dot.k);
    dv.push(iv);
    let term = subst(f, &dvars, &dv, plan.dot.term);
    let upd = bin(&mut f.pool, BinOp::Add, acc_ref, term);
    let a1 = f.stmts.push(StmtData::Store { buffer: acc, indices: vec![zero], value: upd });
    let a1 = wrap(f, &[il], a1);
    let mut svars = plan.sum.spatial.clone();
    svars.push(plan.sum.k);
    let mut sv: Vec<PrimExpr> = rowv.clone();
    sv.extend([jv, bv]);
    let sterm = subst(f, &svars, &sv, plan.sum.term);
    let sterm = replace_loads(&mut f.pool, sterm, plan.dot.out, &mut |_, _| acc_ref);
    let cur = f.pool.raw(PrimExprData::Load { dtype: ct, buffer: sum, indices: vec![rv] });
    let upd = bin(&mut f.pool, BinOp::Add, cur, sterm);
    let s1 = f.stmts.push(StmtData::Store { buffer: sum, indices: vec![rv], value: upd });
    let body = f.stmts.push(StmtData::Seq(vec![a0, a1, s1]));
    let body = wrap(f, &rl, body);
    let s_red = wrap(f, &[bl], body);

    // The outputs.
    let (rl, rv) = row_loop(f, nrows);
    let rowv = row_values(f, &plan.rows, rv);
    let total = f.pool.raw(PrimExprData::Load { dtype: ct, buffer: sum, indices: vec![rv] });
    let s_out = store(f, plan, &rowv, jv, total);
    let s_out = wrap(f, &rl, s_out);

    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_red, s_out]));
    let blk = scope_block(f, format!("{}_dot", plan.sum.name), vec![acc, sum], body);
    wrap(f, &[jl], blk)
}

/// Schedules every such matmul among the root block's statements; returns whether
/// anything changed. The dot products' buffer (and, with an epilogue, `C`) go away.
pub fn schedule_all(f: &mut PrimFunc, stmts: &mut Vec<Stmt>, allocs: &mut Vec<Buffer>) -> bool {
    let mut any = false;
    let mut i = 0;
    while i + 1 < stmts.len() {
        let Some(plan) = recognize(f, stmts, i, allocs) else {
            i += 1;
            continue;
        };
        let s = build(f, &plan);
        let n = if plan.epi.is_some() { 3 } else { 2 };
        stmts.splice(i..i + n, [s]);
        allocs.retain(|&b| b != plan.dot.out && (plan.epi.is_none() || b != plan.sum.out));
        any = true;
        i += 1;
    }
    any
}
