//! Matmuls whose weight operand is computed in the same kernel: the decode of a
//! quantized weight, the `astype` of an f16/bf16 weight, the transpose of any weight
//! (`fuse-ops{matmul-operands=true}` puts these producers in the matmul's PrimFunc).
//!
//! The nest `for rows..., j, k: C[rows, j] = C[rows, j] + term` (one reduction variable,
//! innermost) qualifies when `term` reads a root-allocated intermediate `W` written by a
//! spatial producer nest earlier in the kernel (`W[v...] = value` over its whole shape,
//! from buffers nothing between the producer and the matmul writes), and, once producers
//! are inlined, the loads of `term` split into a weight side (indices in `j` and `k`,
//! never a row) and an activation side (rows and `k`, never `j`). The operand is then
//! never materialized: the producer's expression is inlined into the reduction
//! ([`inline_producers`]), `k` is split so that the producer's index expressions become
//! affine in the innermost loop ([`ksplit`]), and one of two schedules is written:
//!
//! * [`gemv`] when the rows are a constant count of at most [`MAX_GEMV_ROWS`] (the
//!   decode step of a language model): parallel over `j`, the weight decoded in
//!   registers, vector partial sums over `k` (rfactor), one horizontal sum per output;
//! * [`gemm`] otherwise (prefill, symbolic rows): parallel over panels of columns, each
//!   task decodes its weight rows once into a `[k, column]` panel and multiplies it with
//!   every row of the activation in the float matmul's register tiles.
//!
//! The GEMV reassociates the sum over `k` (vector lanes, then the lanes in order), so its
//! result differs from the interpreter's by rounding only; the panel schedule, like the
//! other schedules, keeps the interpreter's order. An elementwise epilogue that reads
//! `C` right after the matmul is computed from the final sums ([`Epilogue`]). Producers
//! whose loads mention the rows are inlined only when they are data movement (a reshape
//! of the activation: a load, maybe cast).

mod gemm;
mod gemv;
pub(super) mod hoist;
mod ksplit;

use std::collections::HashMap;

use relax_ir::{BinOp, Buffer, DataType, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use relax_ir::ForKind;
use relax_ir::tir::BufferData;

use super::inline::{loads_of, mentions, replace_loads, single_store, writes};
pub(super) use super::matmul::Epilogue;
use super::matmul::epilogue;
use super::nest::{Loop, spatial_nest, sum_nest};

/// The most rows (constant) that take the matrix-vector schedule.
pub const MAX_GEMV_ROWS: i64 = 4;

/// The producer nests inlined into a matmul, with the buffers they wrote.
type Producers = Vec<(Stmt, Buffer)>;

/// A matmul nest with its weight producers inlined.
pub struct Fused {
    /// The accumulated buffer.
    c: Buffer,
    /// The row variables (every spatial variable but the last) and their extents.
    rows: Vec<(SymVar, PrimExpr)>,
    /// The column variable and its extent.
    j: SymVar,
    n: PrimExpr,
    /// The reduction variable and its constant extent.
    k: SymVar,
    kext: i64,
    /// `T.init`'s value and the summand (without `C`).
    init: PrimExpr,
    term: PrimExpr,
    /// `C`'s dtype.
    dt: DataType,
    /// The matmul block's name, and the names of the column and reduction loops.
    name: String,
    jname: String,
    kname: String,
}

/// Where a schedule writes a final sum.
pub struct Output<'a> {
    fused: &'a Fused,
    epi: Option<&'a Epilogue>,
}

impl Output<'_> {
    /// The store of `v`, the sum of output `(rows, col)`, through the epilogue.
    fn store(&self, f: &mut PrimFunc, rows: &[PrimExpr], col: PrimExpr, v: PrimExpr) -> Stmt {
        let mut at: Vec<PrimExpr> = rows.to_vec();
        at.push(col);
        match self.epi {
            None => f.stmts.push(StmtData::Store { buffer: self.fused.c, indices: at, value: v }),
            Some(e) => {
                let map: HashMap<SymVar, PrimExpr> = e.vars.iter().copied().zip(at.iter().copied()).collect();
                let idx = e.idx.iter().map(|&i| relax_ir::arith::substitute(&mut f.pool, i, &map)).collect();
                let value = relax_ir::arith::substitute(&mut f.pool, e.value, &map);
                let value = replace_loads(&mut f.pool, value, self.fused.c, &mut |_, _| v);
                f.stmts.push(StmtData::Store { buffer: e.out, indices: idx, value })
            }
        }
    }
}

/// Schedules every qualifying matmul among the root block's statements; returns whether
/// anything changed. Inlined producers, an absorbed epilogue and their intermediate
/// buffers go away.
pub fn schedule_all(f: &mut PrimFunc, stmts: &mut Vec<Stmt>, allocs: &mut Vec<Buffer>, vector_bits: i64) -> bool {
    let mut any = false;
    let mut i = 0;
    while i < stmts.len() {
        let Some((fused, producers, epi)) = recognize(f, stmts, i, allocs) else {
            i += 1;
            continue;
        };
        let gemv = match gemv::rows(f, &fused) {
            Some(_) => gemv::build(f, &fused, epi.as_ref(), vector_bits),
            None => None,
        };
        let built = gemv.or_else(|| gemm::build(f, &fused, epi.as_ref(), vector_bits));
        let Some((s, absorbed)) = built else {
            i += 1;
            continue;
        };
        any = true;
        if absorbed && epi.is_some() {
            stmts.remove(i + 1);
            allocs.retain(|&b| b != fused.c);
        }
        stmts[i] = s;
        for (p, buf) in &producers {
            stmts.retain(|x| x != p);
            allocs.retain(|b| b != buf);
        }
        i = stmts.iter().position(|&x| x == s).expect("the new statement") + 1;
    }
    any
}

/// The matmul at `at`, its inlined producers (statement and buffer) and its epilogue.
fn recognize(
    f: &mut PrimFunc,
    stmts: &[Stmt],
    at: usize,
    allocs: &[Buffer],
) -> Option<(Fused, Producers, Option<Epilogue>)> {
    let r = sum_nest(f, stmts[at])?;
    let (nest, b, c, spatial, init, term) = (r.nest, r.block, r.out, r.spatial, r.init, r.term);
    let nl = nest.loops.len();
    let dt = f.buffer(c).dtype;
    if !dt.is_float() || dt.bits < 32 {
        return None;
    }
    let kext = f.pool.as_int(nest.loops[nl - 1].extent)?;
    let rows: Vec<(SymVar, PrimExpr)> = (0..nl - 2).map(|d| (spatial[d], nest.loops[d].extent)).collect();
    let name = b.name.clone();
    let loop_name = |d: usize| f.pool.vars[nest.loops[d].var].name.clone();
    let (jname, kname) = (loop_name(nl - 2), loop_name(nl - 1));
    let fused = Fused {
        c,
        rows,
        j: spatial[nl - 2],
        n: nest.loops[nl - 2].extent,
        k: r.k,
        kext,
        init,
        term,
        dt,
        name,
        jname,
        kname,
    };
    let (fused, producers) = inline_producers(f, stmts, at, allocs, fused)?;
    let epi = match stmts.get(at + 1) {
        Some(&next)
            if allocs.contains(&c)
                && stmts.iter().enumerate().all(|(q, &s)| q == at || q == at + 1 || !mentions(f, s, c)) =>
        {
            epilogue(f, next, c)
        }
        _ => None,
    };
    Some((fused, producers, epi))
}

/// The spatial producer nest at `s` of buffer `x`: its iteration variables and value.
fn producer(f: &PrimFunc, s: Stmt, x: Buffer) -> Option<(Vec<SymVar>, PrimExpr)> {
    let (_, b) = spatial_nest(f, s)?;
    let (dst, indices, value) = single_store(f, b.body)?;
    let shape = &f.buffer(x).shape;
    if dst != x || indices.len() != b.iter_vars.len() || shape.len() != indices.len() {
        return None;
    }
    for (d, (&i, iv)) in indices.iter().zip(&b.iter_vars).enumerate() {
        if f.pool.as_var(i) != Some(iv.var) || iv.dom.extent != shape[d] {
            return None;
        }
    }
    let mut own = Vec::new();
    loads_of(&f.pool, value, x, &mut own);
    if !own.is_empty() {
        return None;
    }
    Some((b.iter_vars.iter().map(|iv| iv.var).collect(), value))
}

/// Every load in `e`: buffer and indices.
fn loads(pool: &Pool, e: PrimExpr) -> Vec<(Buffer, Vec<PrimExpr>)> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, indices, .. } = pool.prim(e) {
            out.push((*buffer, indices.clone()));
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
    out
}

/// True when the value is data movement: a load, maybe cast.
fn is_movement(pool: &Pool, mut e: PrimExpr) -> bool {
    loop {
        match pool.prim(e) {
            PrimExprData::Cast(_, a) => e = *a,
            PrimExprData::Load { .. } => return true,
            _ => return false,
        }
    }
}

/// Inlines the producers of the buffers `term` reads (repeatedly, for chains); `None`
/// unless a weight producer was inlined and the loads split into a weight side and an
/// activation side.
fn inline_producers(
    f: &mut PrimFunc,
    stmts: &[Stmt],
    at: usize,
    allocs: &[Buffer],
    mut fused: Fused,
) -> Option<(Fused, Producers)> {
    let row_vars: Vec<SymVar> = fused.rows.iter().map(|r| r.0).collect();
    let mentions_any = |pool: &Pool, idx: &[PrimExpr], vs: &[SymVar]| {
        idx.iter().any(|&e| pool.free_vars(e).iter().any(|v| vs.contains(v)))
    };
    let mut producers: Producers = Vec::new();
    let mut weight = false;
    'again: loop {
        for (x, idx) in loads(&f.pool, fused.term) {
            if x == fused.c || !allocs.contains(&x) || producers.iter().any(|p| p.1 == x) {
                continue;
            }
            let users: Vec<usize> = (0..stmts.len()).filter(|&q| q != at && mentions(f, stmts[q], x)).collect();
            let [p] = users[..] else { continue };
            if p > at {
                continue;
            }
            let Some((vars, value)) = producer(f, stmts[p], x) else { continue };
            // What the producer reads must be final when the matmul runs.
            let read: Vec<Buffer> = loads(&f.pool, value).into_iter().map(|l| l.0).collect();
            if read.iter().any(|&r| r == fused.c || (p + 1..=at).any(|q| writes(f, stmts[q], r))) {
                continue;
            }
            let on_rows = mentions_any(&f.pool, &idx, &row_vars);
            if on_rows && !is_movement(&f.pool, value) {
                continue;
            }
            weight |= !on_rows && mentions_any(&f.pool, &idx, &[fused.j]);
            let mut with = |pool: &mut Pool, ix: &[PrimExpr]| {
                let m: HashMap<SymVar, PrimExpr> = vars.iter().copied().zip(ix.iter().copied()).collect();
                relax_ir::arith::substitute(pool, value, &m)
            };
            fused.term = replace_loads(&mut f.pool, fused.term, x, &mut with);
            producers.push((stmts[p], x));
            continue 'again;
        }
        break;
    }
    if !weight {
        return None;
    }
    for (_, idx) in loads(&f.pool, fused.term) {
        if mentions_any(&f.pool, &idx, &row_vars) && mentions_any(&f.pool, &idx, &[fused.j]) {
            return None;
        }
    }
    Some((fused, producers))
}

/// A new loop of `kind` over `extent` with a fresh `int64` variable, and a reference to
/// the variable.
fn lp(f: &mut PrimFunc, name: &str, extent: PrimExpr, kind: ForKind) -> (Loop, PrimExpr) {
    let v = f.pool.new_var(name, DataType::INT64);
    (Loop { var: v, extent, kind }, f.pool.var_ref(v))
}

/// [`lp`] over a constant extent.
fn lpc(f: &mut PrimFunc, name: &str, extent: i64, kind: ForKind) -> (Loop, PrimExpr) {
    let e = f.pool.i64(extent);
    lp(f, name, e, kind)
}

/// A new local buffer of constant shape.
pub(super) fn local(f: &mut PrimFunc, name: &str, dt: DataType, shape: &[i64]) -> Buffer {
    let data = f.pool.new_var(name, DataType::HANDLE);
    f.pool.vars[data].pointer = Some((dt, "local".to_string()));
    let dims = shape.iter().map(|&d| f.pool.i64(d)).collect();
    let mut b = BufferData::new(name, data, dt, dims);
    b.scope = "local".to_string();
    f.buffers.push(b)
}

/// The values of the row variables for the flat row index `r` (row-major over their
/// extents).
fn row_values(f: &mut PrimFunc, fused: &Fused, r: PrimExpr) -> Vec<PrimExpr> {
    let mut out = vec![r; fused.rows.len()];
    let mut rest = r;
    for d in (0..fused.rows.len()).rev() {
        let e = fused.rows[d].1;
        if d == 0 {
            out[d] = rest;
        } else {
            out[d] = ksplit::bin(&mut f.pool, BinOp::FloorMod, rest, e);
            rest = ksplit::bin(&mut f.pool, BinOp::FloorDiv, rest, e);
        }
    }
    out
}

/// `e` (the summand or the init value) with the rows, the column and `k` replaced.
fn substitute(f: &mut PrimFunc, fused: &Fused, rows: &[PrimExpr], j: PrimExpr, k: PrimExpr, e: PrimExpr) -> PrimExpr {
    let mut map: HashMap<SymVar, PrimExpr> = fused.rows.iter().map(|r| r.0).zip(rows.iter().copied()).collect();
    map.insert(fused.j, j);
    map.insert(fused.k, k);
    relax_ir::arith::substitute(&mut f.pool, e, &map)
}
