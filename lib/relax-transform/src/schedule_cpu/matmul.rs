//! The default schedule of matmul-class kernels (out-elementwise-fusable reductions):
//! cache and register tiling with the fused epilogue inside the tile.
//!
//! The nest is `for batch..., i, j, k: C[batch..., i, j] = C[...] + f(A..., B...)` (one
//! reduction variable, innermost; identity bindings). It becomes, in schedule terms,
//! `split(i, MR)`, `split(j, NR)`, `reorder(batch, jo, io, k, ii, jj)`,
//! `fuse(batch, jo, io)` + `parallel`, `cache_write(C, "local")` at `io`,
//! `decompose_reduction`, `unroll(ii)`, `vectorize(jj)`, and `reverse_compute_at` of the
//! epilogue:
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
//! each B row segment is loaded once per `k` for MR rows, consecutive tiles share a B
//! panel in cache (`io` runs fastest), and the epilogue reads the accumulators instead
//! of an intermediate buffer. When MR or NR does not divide the extent, the last tile
//! computes clamped rows or columns (`T.min(row, I - 1)`) and writes only the valid ones.
//! Each sum runs over `k` in order, as before: the numbers do not change.

use std::collections::HashMap;

use relax_ir::tir::{BlockNode, BufferData};
use relax_ir::{
    Attrs, BinOp, Buffer, DataType, ForKind, IterKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar,
};

use super::inline::{mentions, replace_loads, single_store};
use super::nest::{Loop, Nest, block, ceil_div, copy_stmt, mul_add, wrap};

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

/// Every load in `e`: its buffer and indices.
fn collect_loads(pool: &Pool, e: PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, indices, .. } = pool.prim(e) {
            out.push((*buffer, indices.clone()));
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
}

/// The epilogue nest at `s`: a spatial block that reads `c` only at its own iteration
/// variables (in order, over `c`'s shape), with identity bindings.
fn epilogue(f: &PrimFunc, s: Stmt, c: Buffer) -> Option<Epilogue> {
    let nest = Nest::read(f, s)?;
    nest.identity_bindings(f)?;
    let b = block(f, nest.block);
    if b.init.is_some() || b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return None;
    }
    if b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial) {
        return None;
    }
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

/// A new `int64` loop variable.
fn var(f: &mut PrimFunc, name: String) -> (SymVar, PrimExpr) {
    let v = f.pool.new_var(name, DataType::INT64);
    (v, f.pool.var_ref(v))
}

fn bin(p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    p.binary(op, a, b).unwrap_or_else(|_| p.raw(PrimExprData::Bin(op, a, b)))
}

/// The elementwise step after a matmul that reads its result: `out[idx] = value`
/// over iteration variables `vars`.
struct Epilogue {
    out: Buffer,
    idx: Vec<PrimExpr>,
    value: PrimExpr,
    vars: Vec<SymVar>,
}

/// What the tile nests of one matmul share.
struct Plan {
    ext: Vec<PrimExpr>,
    ns: usize,
    dt: DataType,
    names: Vec<String>,
    /// The epilogue computed from the accumulators.
    epi: Option<Epilogue>,
}

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
    let plan = Plan { ext, ns, dt, names, epi };
    // Row tiles of MR rows over the rows that fill them, then one-row tiles over the
    // rest (none when MR divides a constant row count).
    let mut rows = Vec::new();
    match f.pool.as_int(ie) {
        Some(i) if i <= MR => rows.push(Part { first: None, count: f.pool.i64(1), size: i.max(1), clamp: false }),
        Some(i) if i % MR == 0 => rows.push(Part { first: None, count: f.pool.i64(i / MR), size: MR, clamp: false }),
        _ => {
            let mrc = f.pool.i64(MR);
            let full = bin(&mut f.pool, BinOp::FloorDiv, ie, mrc);
            let base = bin(&mut f.pool, BinOp::Mul, full, mrc);
            let rest = bin(&mut f.pool, BinOp::Sub, ie, base);
            rows.push(Part { first: None, count: full, size: MR, clamp: false });
            rows.push(Part { first: Some(base), count: rest, size: 1, clamp: false });
        }
    }
    // Column tiles of NR columns over the columns that fill them, then one tile of
    // clamped columns over the rest (none when NR divides a constant column count).
    let mut cols = Vec::new();
    let nrc = f.pool.i64(nr);
    match f.pool.as_int(je) {
        Some(j) if j % nr == 0 => cols.push(Part { first: None, count: f.pool.i64(j / nr), size: nr, clamp: false }),
        Some(j) => {
            if j >= nr {
                cols.push(Part { first: None, count: f.pool.i64(j / nr), size: nr, clamp: false });
            }
            let first = (j >= nr).then(|| f.pool.i64(j / nr * nr));
            cols.push(Part { first, count: f.pool.i64(1), size: nr, clamp: true });
        }
        None => {
            let full = bin(&mut f.pool, BinOp::FloorDiv, je, nrc);
            let base = bin(&mut f.pool, BinOp::Mul, full, nrc);
            let rest = bin(&mut f.pool, BinOp::Sub, je, base);
            let count = ceil_div(f, rest, nr);
            cols.push(Part { first: None, count: full, size: nr, clamp: false });
            cols.push(Part { first: Some(base), count, size: nr, clamp: true });
        }
    }
    let mut nests = Vec::new();
    for r in &rows {
        for c in &cols {
            nests.push(tile_nest(f, &mm, &plan, r, c));
        }
    }
    let s = if nests.len() == 1 { nests[0] } else { f.stmts.push(StmtData::Seq(nests)) };
    Some((s, plan.epi.is_some().then_some(mm.c)))
}

/// Rows per register tile.
const MR: i64 = 4;

/// A range of rows or columns covered by tiles: `count` tiles of `size` from index
/// `first` (0 when `None`); `clamp`: the tiles may run past the end, so they read
/// clamped indices and write only the valid ones.
struct Part {
    first: Option<PrimExpr>,
    count: PrimExpr,
    size: i64,
    clamp: bool,
}

/// The parallel nest of the tiles of row part `rp` by column part `cp`.
fn tile_nest(f: &mut PrimFunc, mm: &Matmul, plan: &Plan, rp: &Part, cp: &Part) -> Stmt {
    let (ext, ns, dt) = (&plan.ext, plan.ns, plan.dt);
    let (je, ke) = (ext[ns - 1], ext[ns]);
    let (mr, nr, nio, njo) = (rp.size, cp.size, rp.count, cp.count);
    let names = &plan.names;
    let (iname, jname) = (names[ns - 2].clone(), names[ns - 1].clone());
    let suffix = format!("{}{}", if rp.first.is_some() { "_tail" } else { "" }, if cp.clamp { "_edge" } else { "" });
    let (t, tv) = var(f, format!("{iname}_{jname}_tile{suffix}"));
    let (k, kv) = var(f, names[ns].clone());
    let (ii, iiv) = var(f, format!("{iname}_i"));
    let (jj, jjv) = var(f, format!("{jname}_j"));
    let mrc = f.pool.i64(mr);
    let nrc = f.pool.i64(nr);
    // t = ((batch...) * NJO + jo) * NIO + io
    let io = bin(&mut f.pool, BinOp::FloorMod, tv, nio);
    let mut rest = bin(&mut f.pool, BinOp::FloorDiv, tv, nio);
    let jo = bin(&mut f.pool, BinOp::FloorMod, rest, njo);
    rest = bin(&mut f.pool, BinOp::FloorDiv, rest, njo);
    let mut batch = vec![rest; ns - 2];
    let mut total = bin(&mut f.pool, BinOp::Mul, njo, nio);
    for d in (0..ns - 2).rev() {
        total = bin(&mut f.pool, BinOp::Mul, ext[d], total);
        if d == 0 {
            batch[d] = rest;
        } else {
            batch[d] = bin(&mut f.pool, BinOp::FloorMod, rest, ext[d]);
            rest = bin(&mut f.pool, BinOp::FloorDiv, rest, ext[d]);
        }
    }
    let mut row = mul_add(f, io, mrc, iiv);
    if let Some(r0) = rp.first {
        row = bin(&mut f.pool, BinOp::Add, r0, row);
    }
    let mut col = mul_add(f, jo, nrc, jjv);
    if let Some(c0) = cp.first {
        col = bin(&mut f.pool, BinOp::Add, c0, col);
    }
    let one = f.pool.i64(1);
    let col_c = if cp.clamp {
        let last = bin(&mut f.pool, BinOp::Sub, je, one);
        bin(&mut f.pool, BinOp::Min, col, last)
    } else {
        col
    };
    // The accumulator tile.
    let cd = f.buffer(mm.c).clone();
    let data = f.pool.new_var(format!("{}_local", cd.name), DataType::HANDLE);
    f.pool.vars[data].pointer = Some((dt, "local".to_string()));
    let mut local = BufferData::new(format!("{}_local", cd.name), data, dt, vec![mrc, nrc]);
    local.scope = "local".to_string();
    let local = f.buffers.push(local);
    let acc = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: local, indices: vec![iiv, jjv] });
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (d, &v) in mm.spatial.iter().enumerate() {
        map.insert(
            v,
            if d < ns - 2 {
                batch[d]
            } else if d == ns - 2 {
                row
            } else {
                col_c
            },
        );
    }
    map.insert(mm.k, kv);
    let mut to_acc = |_: &mut Pool, _: &[PrimExpr]| acc;
    let init = relax_ir::arith::substitute(&mut f.pool, mm.init, &map);
    let update = relax_ir::arith::substitute(&mut f.pool, mm.update, &map);
    let update = replace_loads(&mut f.pool, update, mm.c, &mut to_acc);
    let tile_loops = |ii: SymVar, jj: SymVar| {
        vec![
            Loop { var: ii, extent: mrc, kind: ForKind::Unrolled },
            Loop { var: jj, extent: nrc, kind: ForKind::Vectorized },
        ]
    };
    // Each loop over the tile defines variables of its own.
    let fresh = |f: &mut PrimFunc| {
        let (a, av) = var(f, f.pool.vars[ii].name.clone());
        let (b, bv) = var(f, f.pool.vars[jj].name.clone());
        (a, b, HashMap::from([(ii, av), (jj, bv)]))
    };
    let st_init = f.stmts.push(StmtData::Store { buffer: local, indices: vec![iiv, jjv], value: init });
    let (ii0, jj0, m0) = fresh(f);
    let st_init = copy_stmt(f, st_init, &m0);
    let s_init = wrap(f, &tile_loops(ii0, jj0), st_init);
    let st_upd = f.stmts.push(StmtData::Store { buffer: local, indices: vec![iiv, jjv], value: update });
    let s_upd = wrap(f, &tile_loops(ii, jj), st_upd);
    let s_k = wrap(f, &[Loop { var: k, extent: ke, kind: ForKind::Serial }], s_upd);
    // The write-back, through the epilogue when there is one.
    let (out, out_idx, out_val) = match &plan.epi {
        Some(Epilogue { out, idx, value, vars }) => {
            let mut m2: HashMap<SymVar, PrimExpr> = HashMap::new();
            for (d, &v) in vars.iter().enumerate() {
                m2.insert(
                    v,
                    if d < ns - 2 {
                        batch[d]
                    } else if d == ns - 2 {
                        row
                    } else {
                        col
                    },
                );
            }
            let idx: Vec<PrimExpr> = idx.iter().map(|&e| relax_ir::arith::substitute(&mut f.pool, e, &m2)).collect();
            let v = relax_ir::arith::substitute(&mut f.pool, *value, &m2);
            let v = replace_loads(&mut f.pool, v, mm.c, &mut to_acc);
            (*out, idx, v)
        }
        None => {
            let mut idx = batch[..ns - 2].to_vec();
            idx.push(row);
            idx.push(col);
            (mm.c, idx, acc)
        }
    };
    let mut wb = f.stmts.push(StmtData::Store { buffer: out, indices: out_idx, value: out_val });
    if cp.clamp {
        let c = bin(&mut f.pool, BinOp::Lt, col, je);
        wb = f.stmts.push(StmtData::If { cond: c, then_branch: wb, else_branch: None });
    }
    let (ii2, jj2, m2) = fresh(f);
    let wb = copy_stmt(f, wb, &m2);
    let wb = wrap(f, &tile_loops(ii2, jj2), wb);
    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_k, wb]));
    let bname = block(f, mm.nest.block).name.clone();
    let tile = f.stmts.push(StmtData::Block(Box::new(BlockNode {
        name: format!("{bname}_tile{suffix}"),
        iter_vars: Vec::new(),
        predicate: None,
        reads: Vec::new(),
        writes: Vec::new(),
        annotations: Attrs::default(),
        alloc_buffers: vec![local],
        match_buffers: Vec::new(),
        init: None,
        body,
    })));
    wrap(f, &[Loop { var: t, extent: total, kind: ForKind::Parallel }], tile)
}
