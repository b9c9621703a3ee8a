//! The default schedule of matmul-class kernels (out-elementwise-fusable reductions):
//! cache and register tiling with the fused epilogue inside the tile.
//!
//! The nest is `for batch..., i, j, k: C[batch..., i, j] = C[...] + f(A..., B...)` (one
//! reduction variable, innermost; identity bindings). It becomes, in schedule terms,
//! `split(i, MR)`, `split(j, NR)`, `reorder(batch, jo, io, k, ii, jj)`,
//! `fuse(batch, jo, io)` + `parallel`, `cache_write(C, "local")` at `io`,
//! `decompose_reduction`, `unroll(ii)`, `vectorize(jj)`, and `reverse_compute_at` of the
//! epilogue ([`tile`] builds the nests):
//!
//! ```text
//! for t in T.parallel(batch * ceil(J / NR) * ceil(I / MR)):
//!     with T.sblock("C_tile"):
//!         C_local = T.sblock_alloc_buffer((MR, NR), scope="local")
//!         for ii in T.unroll(MR): for jj in T.vectorized(NR): C_local[ii, jj] = init
//!         for k in range(K):
//!             for ii in T.unroll(MR): for jj in T.vectorized(NR):
//!                 C_local[ii, jj] = C_local[ii, jj] + A[row, k] * B[k, col]
//!         for ii in T.unroll(MR): for jj in T.vectorized(NR):
//!             out[row, col] = epilogue(C_local[ii, jj])
//! ```
//!
//! The MR x NR accumulators stay in vector registers over `k` (NR is four vectors),
//! each B row segment is loaded once per `k` for MR rows, and the epilogue reads the
//! accumulators instead of an intermediate buffer. Besides:
//!
//! * **B panels are packed** (`cache_read(B, "local")`) when the row tiles have MR rows
//!   and a panel of K x NR elements has from [`tile::PACK_MIN_BYTES`] to
//!   [`tile::PACK_BYTES`]: each parallel
//!   iteration copies its panel into a contiguous local buffer once and runs a block of
//!   row tiles on it (as few blocks per strip as give [`tile::PANEL_ITEMS`] parallel
//!   iterations), so the tiles read B sequentially from cache
//!   instead of striding through B's rows (whose power-of-two strides map onto a few
//!   cache sets);
//! * **one-row tiles** (a matrix-vector product, the rows MR tiles leave) cover
//!   [`WIDE_BYTES`] of each B row, so that they stream through B;
//! * when MR does not divide the rows (or they are symbolic), the rows MR tiles leave
//!   get one-row tiles; when NR does not divide a constant column count, or it is
//!   symbolic, the last column tile loops over the columns that are left.
//!
//! Each sum runs over `k` in order, as before: the numbers do not change.

mod tile;

use relax_ir::{BinOp, Buffer, DataType, IterKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use self::tile::{PackSource, Part};
use super::inline::{collect_loads, mentions, single_store};
use super::nest::{Nest, block, ceil_div, spatial_nest};

/// The recognized pieces of a matmul nest.
struct Matmul {
    nest: Nest,
    c: Buffer,
    /// Spatial iteration variables (batch..., i, j) and the reduction variable.
    spatial: Vec<SymVar>,
    k: SymVar,
    init: PrimExpr,
    update: PrimExpr,
}

fn recognize(f: &PrimFunc, s: Stmt) -> Option<Matmul> {
    let nest = Nest::read(f, s)?;
    let map = nest.identity_bindings(f)?;
    let n = nest.loops.len();
    if n < 3 || map != (0..n).collect::<Vec<_>>() {
        return None;
    }
    let b = block(f, nest.block);
    let kinds: Vec<IterKind> = b.iter_vars.iter().map(|iv| iv.kind).collect();
    if kinds[..n - 1].iter().any(|&k| k != IterKind::Spatial) || kinds[n - 1] != IterKind::Reduce {
        return None;
    }
    if b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return None;
    }
    let (c, idx, update) = single_store(f, b.body)?;
    let (c0, idx0, init) = single_store(f, b.init?)?;
    let spatial: Vec<SymVar> = b.iter_vars[..n - 1].iter().map(|iv| iv.var).collect();
    let plain = |ix: &[PrimExpr]| {
        ix.len() == spatial.len() && ix.iter().zip(&spatial).all(|(&e, &v)| f.pool.as_var(e) == Some(v))
    };
    if c0 != c || !plain(&idx) || !plain(&idx0) {
        return None;
    }
    let k = b.iter_vars[n - 1].var;
    if !is_matmul_class(f, update, c, spatial[ns_i(&spatial)], spatial[spatial.len() - 1], k) {
        return None;
    }
    Some(Matmul { k, nest, c, spatial, init, update })
}

/// The index of the row variable `i` among the spatial variables.
fn ns_i(spatial: &[SymVar]) -> usize {
    spatial.len() - 2
}

/// True when the update reads like a matmul: some operand `B` has `j` as its last
/// index (so a row of the tile is contiguous) and mentions `k`, and some operand `A`
/// mentions `i` and `k` but not `j`. Row reductions (`sum(x[i, j, k])`) and
/// `A @ B.T` fail, and go to the plain reduction schedule.
fn is_matmul_class(f: &PrimFunc, update: PrimExpr, c: Buffer, i: SymVar, j: SymVar, k: SymVar) -> bool {
    let mut loads = Vec::new();
    collect_loads(&f.pool, update, &mut loads);
    let uses = |ix: &[PrimExpr], v: SymVar| ix.iter().any(|&e| f.pool.free_vars(e).contains(&v));
    let b_ok = loads
        .iter()
        .any(|(buf, ix)| *buf != c && ix.last().is_some_and(|&e| f.pool.as_var(e) == Some(j)) && uses(ix, k));
    let a_ok = loads.iter().any(|(buf, ix)| *buf != c && uses(ix, i) && uses(ix, k) && !uses(ix, j));
    b_ok && a_ok
}

/// The epilogue nest at `s`: a spatial block that reads `c` only at its own iteration
/// variables (in order, over `c`'s shape), with identity bindings.
pub(super) fn epilogue(f: &PrimFunc, s: Stmt, c: Buffer) -> Option<Epilogue> {
    let (_, b) = spatial_nest(f, s)?;
    let shape = &f.buffer(c).shape;
    if b.iter_vars.len() != shape.len() || b.iter_vars.iter().zip(shape).any(|(iv, &d)| iv.dom.extent != d) {
        return None;
    }
    let (out, idx, value) = single_store(f, b.body)?;
    if out == c {
        return None;
    }
    let vars: Vec<SymVar> = b.iter_vars.iter().map(|iv| iv.var).collect();
    let mut loads = Vec::new();
    super::inline::loads_of(&f.pool, value, c, &mut loads);
    for i in &idx {
        super::inline::loads_of(&f.pool, *i, c, &mut loads);
    }
    let at_own = |ix: &Vec<PrimExpr>| ix.iter().zip(&vars).all(|(&e, &v)| f.pool.as_var(e) == Some(v));
    if loads.is_empty() || !loads.iter().all(at_own) {
        return None;
    }
    Some(Epilogue { out, idx, value, vars })
}

/// `a op b`, folded when the simplifier can.
fn bin(p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    p.binary(op, a, b).unwrap_or_else(|_| p.raw(PrimExprData::Bin(op, a, b)))
}

/// The elementwise step after a matmul that reads its result: `out[idx] = value`
/// over iteration variables `vars`.
pub(super) struct Epilogue {
    pub(super) out: Buffer,
    pub(super) idx: Vec<PrimExpr>,
    pub(super) value: PrimExpr,
    pub(super) vars: Vec<SymVar>,
}

/// What the tile nests of one matmul share.
struct Plan {
    ext: Vec<PrimExpr>,
    ns: usize,
    dt: DataType,
    names: Vec<String>,
    /// The epilogue computed from the accumulators.
    epi: Option<Epilogue>,
    /// The B operand to pack, when the MR-row tiles pack their panels.
    pack: Option<PackSource>,
}

/// Rows per register tile.
const MR: i64 = 4;
/// The bytes of each B row a one-row tile covers.
const WIDE_BYTES: i64 = 1024;

/// Tries the matmul schedule on the statement at `at`; returns the new statement and,
/// when it took in the next statement as its epilogue, the intermediate buffer that
/// goes away.
pub fn schedule(
    f: &mut PrimFunc,
    stmts: &[Stmt],
    at: usize,
    allocs: &[Buffer],
    vector_bits: i64,
) -> Option<(Stmt, Option<Buffer>)> {
    let mm = recognize(f, stmts[at])?;
    let ns = mm.spatial.len();
    let ext: Vec<PrimExpr> = mm.nest.loops.iter().map(|l| l.extent).collect();
    let (ie, je) = (ext[ns - 2], ext[ns - 1]);
    let dt = f.buffer(mm.c).dtype;
    let lanes = (vector_bits / i64::from(dt.bits.max(8))).max(1);
    let nr = match f.pool.as_int(je) {
        Some(j) => [4 * lanes, 2 * lanes, lanes].into_iter().find(|&c| j % c == 0).unwrap_or(if j < lanes {
            j
        } else {
            4 * lanes
        }),
        None => 4 * lanes,
    };
    if nr < 1 {
        return None;
    }
    // The epilogue, when the intermediate `C` has one reader right after the matmul.
    let epi = match stmts.get(at + 1) {
        Some(&next)
            if allocs.contains(&mm.c)
                && stmts.iter().enumerate().all(|(q, &s)| q == at || q == at + 1 || !mentions(f, s, mm.c)) =>
        {
            epilogue(f, next, mm.c)
        }
        _ => None,
    };
    let names: Vec<String> = mm.nest.loops.iter().map(|l| f.pool.vars[l.var].name.clone()).collect();
    let pack = tile::pack_source(f, &mm, ext[ns], nr);
    let plan = Plan { ext, ns, dt, names, epi, pack };
    // Row tiles of MR rows over the rows that fill them, then one-row tiles over the
    // rest (none when MR divides a constant row count).
    let mut rows = Vec::new();
    match f.pool.as_int(ie) {
        Some(i) if i <= MR => rows.push(Part::full(None, f.pool.i64(1), i.max(1))),
        Some(i) if i % MR == 0 => rows.push(Part::full(None, f.pool.i64(i / MR), MR)),
        _ => {
            let mrc = f.pool.i64(MR);
            let full = bin(&mut f.pool, BinOp::FloorDiv, ie, mrc);
            let base = bin(&mut f.pool, BinOp::Mul, full, mrc);
            let rest = bin(&mut f.pool, BinOp::Sub, ie, base);
            rows.push(Part::full(None, full, MR));
            rows.push(Part::full(Some(base), rest, 1));
        }
    }
    let cols = column_parts(f, je, nr);
    // One-row tiles (a matrix-vector product) stream B: each reads WIDE_BYTES of every
    // B row, which the hardware prefetchers follow better than a few cache lines.
    let wide = WIDE_BYTES / (dt.bytes().max(1) as i64);
    let wide_cols = match f.pool.as_int(je) {
        Some(j) if wide > nr && j >= wide => Some(column_parts(f, je, wide)),
        _ => None,
    };
    let mut nests = Vec::new();
    for r in &rows {
        let cols = if r.size == 1 { wide_cols.as_ref().unwrap_or(&cols) } else { &cols };
        for c in cols {
            nests.push(tile::nest(f, &mm, &plan, r, c));
        }
    }
    let s = if nests.len() == 1 { nests[0] } else { f.stmts.push(StmtData::Seq(nests)) };
    Some((s, plan.epi.is_some().then_some(mm.c)))
}

/// Column tiles of `nr` columns over the columns that fill them, then one tile over the
/// columns left (none when `nr` divides a constant column count).
fn column_parts(f: &mut PrimFunc, je: PrimExpr, nr: i64) -> Vec<Part> {
    let mut cols = Vec::new();
    match f.pool.as_int(je) {
        Some(j) if j % nr == 0 => cols.push(Part::full(None, f.pool.i64(j / nr), nr)),
        Some(j) => {
            if j >= nr {
                cols.push(Part::full(None, f.pool.i64(j / nr), nr));
            }
            let first = (j >= nr).then(|| f.pool.i64(j / nr * nr));
            let rest = f.pool.i64(j % nr);
            cols.push(Part { first, count: f.pool.i64(1), size: nr, rest: Some(rest) });
        }
        None => {
            let nrc = f.pool.i64(nr);
            let full = bin(&mut f.pool, BinOp::FloorDiv, je, nrc);
            let base = bin(&mut f.pool, BinOp::Mul, full, nrc);
            let rest = bin(&mut f.pool, BinOp::Sub, je, base);
            let count = ceil_div(f, rest, nr);
            cols.push(Part::full(None, full, nr));
            cols.push(Part { first: Some(base), count, size: nr, rest: Some(rest) });
        }
    }
    cols
}
