//! The tile nests of the matmul schedule: register tiles with their accumulator
//! buffer, the fused epilogue, and B panels packed for the MR-row tiles.

use std::collections::HashMap;

use relax_ir::tir::BufferData;
use relax_ir::{BinOp, Buffer, DataType, ForKind, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::super::inline::{collect_loads, replace_loads};
use super::super::nest::{Loop, block, ceil_div, copy_stmt, mul_add, scope_block, wrap};
use super::{Epilogue, MR, Matmul, Plan, bin, ns_i};

/// The largest packed B panel (K x NR elements), in bytes: the code generator keeps it
/// on the stack.
pub const PACK_BYTES: i64 = 256 * 1024;
/// The smallest panel worth packing, in bytes: a smaller one stays in the first cache
/// levels as it is, and copying it would cost more than it saves.
pub const PACK_MIN_BYTES: i64 = 128 * 1024;
/// The parallel iterations the packed nest aims for: each column strip of B is split
/// into as few row blocks as give at least this many (batch x strips x blocks), and
/// each iteration packs its strip's panel once for all the row tiles of its block.
pub const PANEL_ITEMS: i64 = 32;

/// A range of rows or columns covered by tiles: `count` tiles of `size` from index
/// `first` (0 when `None`); `rest`: the one tile covers only that many (fewer than
/// `size`), the last columns.
pub struct Part {
    pub first: Option<PrimExpr>,
    pub count: PrimExpr,
    pub size: i64,
    pub rest: Option<PrimExpr>,
}

impl Part {
    /// `count` whole tiles of `size` from `first`.
    pub fn full(first: Option<PrimExpr>, count: PrimExpr, size: i64) -> Part {
        Part { first, count, size, rest: None }
    }
}

/// The B operand the MR-row tiles pack: its buffer and its indices in the matmul's
/// iteration variables (the last is `j`; none mentions `i`).
pub struct PackSource {
    buf: Buffer,
    indices: Vec<PrimExpr>,
}

/// The operand to pack: a buffer other than C whose loads in the update all have the
/// same indices, the last `j`, none mentioning `i`, some mentioning `k`; `None` when
/// there is none, or a panel of `ke` x `nr` would be smaller than [`PACK_MIN_BYTES`] or
/// larger than [`PACK_BYTES`].
pub fn pack_source(f: &PrimFunc, mm: &Matmul, ke: PrimExpr, nr: i64) -> Option<PackSource> {
    let k_len = f.pool.as_int(ke)?;
    let (i, j) = (mm.spatial[ns_i(&mm.spatial)], mm.spatial[mm.spatial.len() - 1]);
    let mut loads = Vec::new();
    collect_loads(&f.pool, mm.update, &mut loads);
    let uses = |ix: &[PrimExpr], v: SymVar| ix.iter().any(|&e| f.pool.free_vars(e).contains(&v));
    let (buf, indices) = loads.iter().find(|(b, ix)| {
        *b != mm.c
            && ix.last().is_some_and(|&e| f.pool.as_var(e) == Some(j))
            && !ix[..ix.len() - 1].iter().any(|&e| f.pool.free_vars(e).contains(&j))
            && !uses(ix, i)
            && uses(ix, mm.k)
    })?;
    if loads.iter().any(|(b, ix)| b == buf && ix != indices) {
        return None;
    }
    let bytes = k_len.checked_mul(nr)?.checked_mul(f.buffer(*buf).dtype.bytes().max(1) as i64)?;
    (PACK_MIN_BYTES..=PACK_BYTES).contains(&bytes).then(|| PackSource { buf: *buf, indices: indices.clone() })
}

/// A new `int64` loop variable.
fn var(f: &mut PrimFunc, name: String) -> (SymVar, PrimExpr) {
    let v = f.pool.new_var(name, DataType::INT64);
    (v, f.pool.var_ref(v))
}

/// A local buffer `name` of `shape`.
fn local_buffer(f: &mut PrimFunc, name: String, dt: DataType, shape: Vec<PrimExpr>) -> Buffer {
    let data = f.pool.new_var(name.clone(), DataType::HANDLE);
    f.pool.vars[data].pointer = Some((dt, "local".to_string()));
    let mut local = BufferData::new(name, data, dt, shape);
    local.scope = "local".to_string();
    f.buffers.push(local)
}

/// Where one tile lies: the batch indices, its first row and its first column.
struct At {
    batch: Vec<PrimExpr>,
    row0: PrimExpr,
    col0: PrimExpr,
}

/// Splits `t` into `(inner, outer...)` by the counts, innermost first: `t % c0`,
/// `t // c0 % c1`, ...; the last is not reduced.
fn unflatten(p: &mut Pool, t: PrimExpr, counts: &[PrimExpr]) -> Vec<PrimExpr> {
    let mut out = Vec::with_capacity(counts.len());
    let mut rest = t;
    for (q, &c) in counts.iter().enumerate() {
        if q + 1 == counts.len() {
            out.push(rest);
        } else {
            out.push(bin(p, BinOp::FloorMod, rest, c));
            rest = bin(p, BinOp::FloorDiv, rest, c);
        }
    }
    out
}

/// The parallel nest of the tiles of row part `rp` by column part `cp`.
pub fn nest(f: &mut PrimFunc, mm: &Matmul, plan: &Plan, rp: &Part, cp: &Part) -> Stmt {
    let (ext, ns) = (&plan.ext, plan.ns);
    let (iname, jname) = (plan.names[ns - 2].clone(), plan.names[ns - 1].clone());
    let suffix =
        format!("{}{}", if rp.first.is_some() { "_tail" } else { "" }, if cp.rest.is_some() { "_edge" } else { "" });
    let mrc = f.pool.i64(rp.size);
    let nrc = f.pool.i64(cp.size);
    // The row tiles share a packed panel when they have MR rows and all NR columns.
    let packed = plan.pack.as_ref().filter(|_| rp.size == MR && cp.rest.is_none());
    // Packed: `blocks` row blocks of `per` row tiles for each strip.
    let (outer_count, per) = match packed {
        Some(_) => {
            let strips = ext[..ns - 2].iter().fold(f.pool.as_int(cp.count), |a, &e| Some(a? * f.pool.as_int(e)?));
            let blocks = strips.map_or(1, |s| (PANEL_ITEMS + s - 1) / s.max(1)).max(1);
            let bc = f.pool.i64(blocks);
            let outer = bin(&mut f.pool, BinOp::Min, bc, rp.count);
            (outer, Some(ceil_div(f, rp.count, blocks)))
        }
        None => (rp.count, None),
    };
    // t = ((batch...) * NJO + jo) * NIO' + io', io' the row tile (or the panel's block).
    let (t, tv) = var(f, format!("{iname}_{jname}_{}{suffix}", if packed.is_some() { "panel" } else { "tile" }));
    let mut counts = vec![outer_count, cp.count];
    counts.extend(ext[..ns - 2].iter().rev().copied());
    let mut parts = unflatten(&mut f.pool, tv, &counts);
    let total = counts.iter().skip(1).fold(outer_count, |acc, &c| bin(&mut f.pool, BinOp::Mul, c, acc));
    let (io_or_block, jo) = (parts[0], parts[1]);
    let batch: Vec<PrimExpr> = parts.drain(2..).rev().collect();
    let mut col0 = bin(&mut f.pool, BinOp::Mul, jo, nrc);
    if let Some(c0) = cp.first {
        col0 = bin(&mut f.pool, BinOp::Add, c0, col0);
    }
    let row_of = |f: &mut PrimFunc, io: PrimExpr| {
        let r = bin(&mut f.pool, BinOp::Mul, io, mrc);
        match rp.first {
            Some(r0) => bin(&mut f.pool, BinOp::Add, r0, r),
            None => r,
        }
    };
    let body = match (packed, per) {
        (Some(src), Some(per)) => {
            // for io_i in range(min(per, NIO - block * per)): tile
            let (ioi, ioiv) = var(f, format!("{iname}_tile"));
            let nio = rp.count;
            let io = mul_add(f, io_or_block, per, ioiv);
            let row0 = row_of(f, io);
            let (pname, pdt) = (format!("{}_panel", f.buffer(src.buf).name), f.buffer(src.buf).dtype);
            let panel = local_buffer(f, pname, pdt, vec![ext[ns], nrc]);
            let at = At { batch: batch.clone(), row0, col0 };
            let tile = tile_block(f, mm, plan, rp, cp, &at, &suffix, Some((src, panel)));
            let done = bin(&mut f.pool, BinOp::Mul, io_or_block, per);
            let left = bin(&mut f.pool, BinOp::Sub, nio, done);
            let exact = match (f.pool.as_int(nio), f.pool.as_int(per), f.pool.as_int(outer_count)) {
                (Some(n), Some(p), Some(o)) => p * o == n,
                _ => false,
            };
            let n_in = if exact { per } else { bin(&mut f.pool, BinOp::Min, per, left) };
            let tiles = wrap(f, &[Loop { var: ioi, extent: n_in, kind: ForKind::Serial }], tile);
            let fill = pack_panel(f, mm, plan, src, panel, &batch, col0, cp.size);
            let seq = f.stmts.push(StmtData::Seq(vec![fill, tiles]));
            let bname = block(f, mm.nest.block).name.clone();
            scope_block(f, format!("{bname}_panel"), vec![panel], seq)
        }
        _ => {
            let row0 = row_of(f, io_or_block);
            let at = At { batch, row0, col0 };
            tile_block(f, mm, plan, rp, cp, &at, &suffix, None)
        }
    };
    wrap(f, &[Loop { var: t, extent: total, kind: ForKind::Parallel }], body)
}

/// `panel[k, jj] = B[...]` for the panel's columns: a serial `jj` loop, which LLVM's
/// loop vectorizer turns into whole-vector copies.
#[expect(clippy::too_many_arguments, reason = "the pieces of one panel")]
fn pack_panel(
    f: &mut PrimFunc,
    mm: &Matmul,
    plan: &Plan,
    src: &PackSource,
    panel: Buffer,
    batch: &[PrimExpr],
    col0: PrimExpr,
    nr: i64,
) -> Stmt {
    let ns = plan.ns;
    let (k, kv) = var(f, format!("{}_p", plan.names[ns]));
    let (jj, jjv) = var(f, format!("{}_p", plan.names[ns - 1]));
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (d, &v) in mm.spatial.iter().enumerate().take(ns - 2) {
        map.insert(v, batch[d]);
    }
    map.insert(mm.spatial[ns - 1], bin(&mut f.pool, BinOp::Add, col0, jjv));
    map.insert(mm.k, kv);
    let indices: Vec<PrimExpr> =
        src.indices.iter().map(|&e| relax_ir::arith::substitute(&mut f.pool, e, &map)).collect();
    let dt = f.buffer(src.buf).dtype;
    let value = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: src.buf, indices });
    let st = f.stmts.push(StmtData::Store { buffer: panel, indices: vec![kv, jjv], value });
    let nrc = f.pool.i64(nr);
    wrap(
        f,
        &[
            Loop { var: k, extent: plan.ext[ns], kind: ForKind::Serial },
            Loop { var: jj, extent: nrc, kind: ForKind::Serial },
        ],
        st,
    )
}

/// The block of one register tile at `at`: the accumulators' init, the `k` loop (B
/// read from `panel` when given) and the write-back through the epilogue.
#[expect(clippy::too_many_arguments, reason = "the pieces of one tile")]
fn tile_block(
    f: &mut PrimFunc,
    mm: &Matmul,
    plan: &Plan,
    rp: &Part,
    cp: &Part,
    at: &At,
    suffix: &str,
    panel: Option<(&PackSource, Buffer)>,
) -> Stmt {
    let (ns, dt) = (plan.ns, plan.dt);
    let (iname, jname) = (plan.names[ns - 2].clone(), plan.names[ns - 1].clone());
    let (k, kv) = var(f, plan.names[ns].clone());
    let (ii, iiv) = var(f, format!("{iname}_i"));
    let (jj, jjv) = var(f, format!("{jname}_j"));
    let mrc = f.pool.i64(rp.size);
    let nrc = f.pool.i64(cp.size);
    let row = bin(&mut f.pool, BinOp::Add, at.row0, iiv);
    let col = bin(&mut f.pool, BinOp::Add, at.col0, jjv);
    // The accumulator tile.
    let cname = f.buffer(mm.c).name.clone();
    let local = local_buffer(f, format!("{cname}_local"), dt, vec![mrc, nrc]);
    let acc = f.pool.raw(PrimExprData::Load { dtype: dt, buffer: local, indices: vec![iiv, jjv] });
    let place = |d: usize| {
        if d < ns - 2 {
            at.batch[d]
        } else if d == ns - 2 {
            row
        } else {
            col
        }
    };
    let mut map: HashMap<SymVar, PrimExpr> = mm.spatial.iter().enumerate().map(|(d, &v)| (v, place(d))).collect();
    map.insert(mm.k, kv);
    let mut to_acc = |_: &mut Pool, _: &[PrimExpr]| acc;
    let init = relax_ir::arith::substitute(&mut f.pool, mm.init, &map);
    let mut update = relax_ir::arith::substitute(&mut f.pool, mm.update, &map);
    update = replace_loads(&mut f.pool, update, mm.c, &mut to_acc);
    if let Some((src, buf)) = panel {
        let pdt = f.buffer(src.buf).dtype;
        let from_panel = f.pool.raw(PrimExprData::Load { dtype: pdt, buffer: buf, indices: vec![kv, jjv] });
        update = replace_loads(&mut f.pool, update, src.buf, &mut |_: &mut Pool, _: &[PrimExpr]| from_panel);
    }
    // The columns loop: whole vectors, or the columns left in the edge tile.
    let (cols, ckind) = match cp.rest {
        None => (nrc, ForKind::Vectorized),
        Some(r) if f.pool.as_int(r).is_some() => (r, ForKind::Vectorized),
        Some(r) => (r, ForKind::Serial),
    };
    let tile_loops = |ii: SymVar, jj: SymVar| {
        vec![Loop { var: ii, extent: mrc, kind: ForKind::Unrolled }, Loop { var: jj, extent: cols, kind: ckind }]
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
    let s_k = wrap(f, &[Loop { var: k, extent: plan.ext[ns], kind: ForKind::Serial }], s_upd);
    // The write-back, through the epilogue when there is one.
    let (out, out_idx, out_val) = match &plan.epi {
        Some(Epilogue { out, idx, value, vars }) => {
            let m2: HashMap<SymVar, PrimExpr> = vars.iter().enumerate().map(|(d, &v)| (v, place(d))).collect();
            let idx: Vec<PrimExpr> = idx.iter().map(|&e| relax_ir::arith::substitute(&mut f.pool, e, &m2)).collect();
            let v = relax_ir::arith::substitute(&mut f.pool, *value, &m2);
            let v = replace_loads(&mut f.pool, v, mm.c, &mut to_acc);
            (*out, idx, v)
        }
        None => ((mm.c), (0..ns).map(place).collect(), acc),
    };
    let wb = f.stmts.push(StmtData::Store { buffer: out, indices: out_idx, value: out_val });
    let (ii2, jj2, m2) = fresh(f);
    let wb = copy_stmt(f, wb, &m2);
    let wb = wrap(f, &tile_loops(ii2, jj2), wb);
    let body = f.stmts.push(StmtData::Seq(vec![s_init, s_k, wb]));
    let bname = block(f, mm.nest.block).name.clone();
    scope_block(f, format!("{bname}_tile{suffix}"), vec![local], body)
}
