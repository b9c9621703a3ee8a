//! `compute_inline`: an elementwise block that writes an intermediate buffer disappears
//! into the blocks that read it, so a fused kernel's chain of elementwise steps becomes
//! one expression (and can ride inside a matmul tile as its epilogue).
//!
//! A producer is inlined when it is a perfect nest over a spatial block whose body is
//! `X[v0, ..., vn] = value` with its iteration variables as the indices in order, over
//! X's whole shape, without `T.init` or `T.where`; X is allocated by the root block and
//! written by nothing else; and every reader is a nest whose block reads X only at
//! distinct iteration variables that cover all of its own (so nothing is recomputed).
//!
//! Block annotations that name X (`layout_free_placeholders`) count as uses: a block
//! other than a reader that names X keeps X, and in the readers X is dropped from the
//! annotation lists that name it (a bare buffer value naming X keeps X), so that no
//! annotation names a buffer that is no longer allocated.

use std::collections::HashMap;

use relax_ir::tir::BufferRegion;
use relax_ir::{AttrValue, Attrs, Buffer, Pool, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::nest::{Nest, block, block_mut, spatial_nest};

/// Rebuilds `e` with every load of `buf` replaced by `with(indices)`; unchanged nodes
/// keep their handles, changed ones are rebuilt exactly (no folding).
pub fn replace_loads(
    pool: &mut Pool,
    e: PrimExpr,
    buf: Buffer,
    with: &mut dyn FnMut(&mut Pool, &[PrimExpr]) -> PrimExpr,
) -> PrimExpr {
    let data = pool.prim(e).clone();
    match data {
        PrimExprData::Load { buffer, ref indices, .. } if buffer == buf => {
            let idx: Vec<PrimExpr> = indices.iter().map(|&i| replace_loads(pool, i, buf, with)).collect();
            with(pool, &idx)
        }
        PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) | PrimExprData::Var(_) => e,
        _ => {
            let mut ops = Vec::new();
            pool.for_each_operand(e, |o| ops.push(o));
            let new: Vec<PrimExpr> = ops.iter().map(|&o| replace_loads(pool, o, buf, with)).collect();
            if new == ops {
                return e;
            }
            let mut it = new.into_iter();
            let mut next = || it.next().expect("an operand");
            let rebuilt = data.map_operands(|_| next());
            pool.raw(rebuilt)
        }
    }
}

/// The loads of `buf` in `e`: their index lists.
pub fn loads_of(pool: &Pool, e: PrimExpr, buf: Buffer, out: &mut Vec<Vec<PrimExpr>>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, indices, .. } = pool.prim(e)
            && *buffer == buf
        {
            out.push(indices.clone());
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
}

/// Every load in `e`: its buffer and indices.
pub fn collect_loads(pool: &Pool, e: PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, indices, .. } = pool.prim(e) {
            out.push((*buffer, indices.clone()));
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
}

/// True when statement `s` (any subtree) stores to `buf`.
pub fn writes(f: &PrimFunc, s: Stmt, buf: Buffer) -> bool {
    let mut w = false;
    f.walk(s, |_, d| {
        if let StmtData::Store { buffer, .. } = d
            && *buffer == buf
        {
            w = true;
        }
    });
    w
}

/// True when statement `s` (any subtree) mentions `buf` anywhere.
pub fn mentions(f: &PrimFunc, s: Stmt, buf: Buffer) -> bool {
    let mut m = false;
    let mut loads = Vec::new();
    f.walk(s, |_, d| match d {
        StmtData::Store { buffer, indices, value } => {
            m |= *buffer == buf;
            for &e in indices.iter().chain([value]) {
                loads_of(&f.pool, e, buf, &mut loads);
            }
        }
        StmtData::Block(b) => {
            m |= b.reads.iter().chain(&b.writes).any(|r| r.buffer == buf);
            m |= b.match_buffers.iter().any(|mb| mb.source.buffer == buf);
            for (_, v) in b.annotations.iter() {
                v.for_each_buffer(&mut |x| m |= x == buf);
            }
            for iv in &b.iter_vars {
                loads_of(&f.pool, iv.binding, buf, &mut loads);
            }
        }
        StmtData::If { cond, .. } | StmtData::While { cond, .. } => loads_of(&f.pool, *cond, buf, &mut loads),
        StmtData::Let { value: e, .. } | StmtData::Evaluate(e) => loads_of(&f.pool, *e, buf, &mut loads),
        StmtData::For { extent, .. } => loads_of(&f.pool, *extent, buf, &mut loads),
        _ => {}
    });
    m || !loads.is_empty()
}

/// `v` without the list items that are the buffer `x`; `None` when `v` names `x`
/// otherwise (a bare buffer value, which cannot be dropped).
fn without_buffer(v: &AttrValue, x: Buffer) -> Option<AttrValue> {
    let is_x = |v: &AttrValue| matches!(v, AttrValue::Buffer(b) if *b == x);
    Some(match v {
        AttrValue::Buffer(b) if *b == x => return None,
        AttrValue::List(items) => {
            AttrValue::List(items.iter().filter(|i| !is_x(i)).map(|i| without_buffer(i, x)).collect::<Option<_>>()?)
        }
        AttrValue::Dict(kv) => {
            AttrValue::Dict(kv.iter().map(|(k, v)| Some((k.clone(), without_buffer(v, x)?))).collect::<Option<_>>()?)
        }
        AttrValue::Target(inner) => AttrValue::Target(Box::new(without_buffer(inner, x)?)),
        v => v.clone(),
    })
}

/// Annotations without the buffer `x` (see [`without_buffer`]).
fn annotations_without(a: &Attrs, x: Buffer) -> Option<Attrs> {
    a.iter().map(|(k, v)| Some((k.to_string(), without_buffer(v, x)?))).collect::<Option<_>>().map(Attrs)
}

/// The store `X[indices] = value` that is a block's whole body.
pub fn single_store(f: &PrimFunc, s: Stmt) -> Option<(Buffer, Vec<PrimExpr>, PrimExpr)> {
    match &f.stmts[s] {
        StmtData::Store { buffer, indices, value } => Some((*buffer, indices.clone(), *value)),
        StmtData::Seq(v) if v.len() == 1 => single_store(f, v[0]),
        _ => None,
    }
}

/// The elementwise producer of nest `s`: its buffer, iteration variables and value.
fn producer(f: &PrimFunc, s: Stmt, allocs: &[Buffer]) -> Option<(Nest, Buffer, Vec<SymVar>, PrimExpr)> {
    let (nest, b) = spatial_nest(f, s)?;
    let (x, indices, value) = single_store(f, b.body)?;
    if !allocs.contains(&x) || indices.len() != b.iter_vars.len() {
        return None;
    }
    let shape = &f.buffer(x).shape;
    for (k, (&i, iv)) in indices.iter().zip(&b.iter_vars).enumerate() {
        if f.pool.as_var(i) != Some(iv.var) || iv.dom.extent != shape[k] {
            return None;
        }
    }
    let mut self_loads = Vec::new();
    loads_of(&f.pool, value, x, &mut self_loads);
    if !self_loads.is_empty() {
        return None;
    }
    let vars = b.iter_vars.iter().map(|iv| iv.var).collect();
    Some((nest, x, vars, value))
}

/// True when nest `s` reads `x` only at distinct iteration variables covering all of its
/// own, in its single-store body.
fn good_reader(f: &PrimFunc, s: Stmt, x: Buffer) -> bool {
    let Some(nest) = Nest::read(f, s) else { return false };
    let b = block(f, nest.block);
    let Some((dst, indices, value)) = single_store(f, b.body) else { return false };
    if dst == x
        || b.match_buffers.iter().any(|m| m.source.buffer == x)
        || annotations_without(&b.annotations, x).is_none()
    {
        return false;
    }
    if let Some(init) = b.init
        && mentions(f, init, x)
    {
        return false;
    }
    let mut loads = Vec::new();
    for &e in indices.iter().chain([&value]) {
        loads_of(&f.pool, e, x, &mut loads);
    }
    let own: Vec<SymVar> = b.iter_vars.iter().map(|iv| iv.var).collect();
    !loads.is_empty()
        && loads.iter().all(|idx| {
            let vars: Vec<Option<SymVar>> = idx.iter().map(|&i| f.pool.as_var(i)).collect();
            vars.iter().all(|v| v.is_some_and(|v| own.contains(&v)))
                && (0..vars.len()).all(|a| (a + 1..vars.len()).all(|c| vars[a] != vars[c]))
                && vars.len() == own.len()
        })
}

/// Inlines every inlinable elementwise producer among the root's statements; returns
/// whether anything changed.
pub fn inline_all(f: &mut PrimFunc, stmts: &mut Vec<Stmt>, allocs: &mut Vec<Buffer>) -> bool {
    let mut any = false;
    'again: loop {
        for p in 0..stmts.len() {
            let Some((prod, x, pvars, value)) = producer(f, stmts[p], allocs) else { continue };
            let others: Vec<usize> = (0..stmts.len()).filter(|&q| q != p && mentions(f, stmts[q], x)).collect();
            if others.is_empty() || others.iter().any(|&q| q < p || writes(f, stmts[q], x)) {
                continue;
            }
            if !others.iter().all(|&q| good_reader(f, stmts[q], x)) {
                continue;
            }
            let preads = block(f, prod.block).reads.clone();
            for &q in &others {
                let nest = Nest::read(f, stmts[q]).expect("checked");
                let (dst, indices, v) = single_store(f, block(f, nest.block).body).expect("checked");
                let mut region_maps: Vec<HashMap<SymVar, PrimExpr>> = Vec::new();
                let mut with = |pool: &mut Pool, idx: &[PrimExpr]| {
                    let map: HashMap<SymVar, PrimExpr> = pvars.iter().copied().zip(idx.iter().copied()).collect();
                    let r = relax_ir::arith::substitute(pool, value, &map);
                    region_maps.push(map);
                    r
                };
                let nv = replace_loads(&mut f.pool, v, x, &mut with);
                let body = f.stmts.push(StmtData::Store { buffer: dst, indices, value: nv });
                let mut reads: Vec<BufferRegion> =
                    block(f, nest.block).reads.iter().filter(|r| r.buffer != x).cloned().collect();
                if let Some(map) = region_maps.first() {
                    for r in &preads {
                        if reads.iter().any(|e| e.buffer == r.buffer) {
                            continue;
                        }
                        let mut r = r.clone();
                        for rg in &mut r.region {
                            rg.min = relax_ir::arith::substitute(&mut f.pool, rg.min, map);
                            rg.extent = relax_ir::arith::substitute(&mut f.pool, rg.extent, map);
                        }
                        reads.push(r);
                    }
                }
                let bm = block_mut(f, nest.block);
                bm.annotations = annotations_without(&bm.annotations, x).expect("checked");
                bm.body = body;
                bm.reads = reads;
            }
            stmts.remove(p);
            allocs.retain(|&b| b != x);
            any = true;
            continue 'again;
        }
        return any;
    }
}
