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
use relax_ir::{Attrs, BinOp, Buffer, DataType, ForKind, IterKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::inline::{mentions, replace_loads, single_store};
use super::nest::{Loop, Nest, block, ceil_div, mul_add, wrap};

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
    let plain = |ix: &[PrimExpr]| ix.len() == spatial.len() && ix.iter().zip(&spatial).all(|(&e, &v)| f.pool.as_var(e) == Some(v));
    if c0 != c || !plain(&idx) || !plain(&idx0) {
        return None;
    }
    Some(Matmul { k: b.iter_vars[n - 1].var, nest, c, spatial, init, update })
}

/// The epilogue nest at `s`: a spatial block that reads `c` only at its own iteration
/// variables (in order, over `c`'s shape), with identity bindings.
fn epilogue(f: &PrimFunc, s: Stmt, c: Buffer) -> Option<(Nest, Buffer, Vec<PrimExpr>, PrimExpr, Vec<SymVar>)> {
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
    Some((nest, out, idx, value, vars))
}

/// A new `int64` loop variable.
fn var(f: &mut PrimFunc, name: String) -> (SymVar, PrimExpr) {
    let v = f.pool.new_var(name, DataType::INT64);
    (v, f.pool.var_ref(v))
}

fn bin(p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    p.binary(op, a, b).unwrap_or_else(|_| p.raw(PrimExprData::Bin(op, a, b)))
}

/// Tries the matmul schedule on the statement at `at`; returns the new statement and
/// whether it took in the next statement as its epilogue (whose intermediate buffer then
/// goes away).
pub fn schedule(f: &mut PrimFunc, stmts: &[Stmt], at: usize, allocs: &[Buffer], vector_bits: i64) -> Option<(Stmt, bool)> {
    let mm = recognize(f, stmts[at])?;
    let ns = mm.spatial.len();
    let ext: Vec<PrimExpr> = mm.nest.loops.iter().map(|l| l.extent).collect();
    let (ie, je, ke) = (ext[ns - 2], ext[ns - 1], ext[ns]);
    let dt = f.buffer(mm.c).dtype;
    let lanes = (vector_bits / i64::from(dt.bits.max(8))).max(1);
    let nr = match f.pool.as_int(je) {
        Some(j) => [4 * lanes, 2 * lanes, lanes].into_iter().find(|&c| j % c == 0).unwrap_or(if j < lanes { j } else { 4 * lanes }),
        None => 4 * lanes,
    };
    let mr = match f.pool.as_int(ie) {
        Some(i) if i < 4 => i,
        _ => 4,
    };
    if nr < 1 || mr < 1 {
        return None;
    }
    let clamp_i = f.pool.as_int(ie).is_none_or(|i| i % mr != 0);
    let clamp_j = f.pool.as_int(je).is_none_or(|j| j % nr != 0);
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
    let (iname, jname) = (names[ns - 2].clone(), names[ns - 1].clone());
    let (t, tv) = var(f, format!("{iname}_{jname}_tile"));
    let (k, kv) = var(f, names[ns].clone());
    let (ii, iiv) = var(f, format!("{iname}_i"));
    let (jj, jjv) = var(f, format!("{jname}_j"));
    let mrc = f.pool.i64(mr);
    let nrc = f.pool.i64(nr);
    let nio = match f.pool.as_int(ie) {
        Some(i) => f.pool.i64((i + mr - 1) / mr),
        None => ceil_div(f, ie, mr),
    };
    let njo = match f.pool.as_int(je) {
        Some(j) => f.pool.i64((j + nr - 1) / nr),
        None => ceil_div(f, je, nr),
    };
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
    let row = mul_add(f, io, mrc, iiv);
    let col = mul_add(f, jo, nrc, jjv);
    let one = f.pool.i64(1);
    let clamp = |f: &mut PrimFunc, x: PrimExpr, e: PrimExpr, on: bool| {
        if !on {
            return x;
        }
        let last = bin(&mut f.pool, BinOp::Sub, e, one);
        bin(&mut f.pool, BinOp::Min, x, last)
    };
    let row_c = clamp(f, row, ie, clamp_i);
    let col_c = clamp(f, col, je, clamp_j);
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
        map.insert(v, if d < ns - 2 { batch[d] } else if d == ns - 2 { row_c } else { col_c });
    }
    map.insert(mm.k, kv);
    let mut to_acc = |_: &mut Pool, _: &[PrimExpr]| acc;
    let init = relax_ir::arith::substitute(&mut f.pool, mm.init, &map);
    let update = relax_ir::arith::substitute(&mut f.pool, mm.update, &map);
    let update = replace_loads(&mut f.pool, update, mm.c, &mut to_acc);
    let tile_loops = |kind_i: ForKind| {
        vec![
            Loop { var: ii, extent: mrc, kind: kind_i },
            Loop { var: jj, extent: nrc, kind: ForKind::Vectorized },
        ]
    };
    let st_init = f.stmts.push(StmtData::Store { buffer: local, indices: vec![iiv, jjv], value: init });
    let s_init = wrap(f, &tile_loops(ForKind::Unrolled), st_init);
    let st_upd = f.stmts.push(StmtData::Store { buffer: local, indices: vec![iiv, jjv], value: update });
    let s_upd = wrap(f, &tile_loops(ForKind::Unrolled), st_upd);
    let s_k = wrap(f, &[Loop { var: k, extent: ke, kind: ForKind::Serial }], s_upd);
    // The write-back, through the epilogue when there is one.
    let (out, out_idx, out_val) = match &epi {
        Some((_, out, idx, value, vars)) => {
            let mut m2: HashMap<SymVar, PrimExpr> = HashMap::new();
            for (d, &v) in vars.iter().enumerate() {
                m2.insert(v, if d < ns - 2 { batch[d] } else if d == ns - 2 { row } else { col });
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
    if clamp_j {
        let c = bin(&mut f.pool, BinOp::Lt, col, je);
        wb = f.stmts.push(StmtData::If { cond: c, then_branch: wb, else_branch: None });
    }
    let mut wb = wrap(f, &[Loop { var: jj, extent: nrc, kind: ForKind::Vectorized }], wb);
    if clamp_i {
        let c = bin(&mut f.pool, BinOp::Lt, row, ie);
        wb = f.stmts.push(StmtData::If { cond: c, then_branch: wb, else_branch: None });
    }
    let wb = wrap(f, &[Loop { var: ii, extent: mrc, kind: ForKind::Unrolled }], wb);
    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_k, wb]));
    let bname = block(f, mm.nest.block).name.clone();
    let tile = f.stmts.push(StmtData::Block(Box::new(BlockNode {
        name: format!("{bname}_tile"),
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
    let s = wrap(f, &[Loop { var: t, extent: total, kind: ForKind::Parallel }], tile);
    Some((s, epi.is_some()))
}
