//! Which parameter buffers a kernel overwrites completely before it reads them.
//!
//! The interpreter hands `call_tir` its results zero-filled; a kernel that writes every
//! element of a result before reading any of it cannot tell, so the engine may hand it
//! a recycled storage without clearing it first. This analysis finds such parameters
//! on kernels with blocks, before `schedule-cpu` (whose schedules keep what each block
//! computes), conservatively: a parameter buffer `B` qualifies when the first statement
//! of the root block that mentions `B` is a perfect loop nest around one block that
//!
//! * has no predicate, buffer declarations or views, and binds each iteration
//!   variable to one loop variable over the loop's whole range (from 0);
//! * stores `B[v0, ..., vn] = value` at its spatial iteration variables, in order, each
//!   ranging over `B`'s dim (so the stores cover `B`);
//! * has reduction variables only with constant extents of at least 1 (every spatial
//!   point is stored at least once);
//! * reads `B` in `value` only when its `T.init` stores `B` at the same indices from a
//!   value that does not read `B` (the init runs at the first visit of each point, since
//!   every loop starts at 0).

use relax_ir::{Buffer, IterKind, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData};

/// The indices of `f`'s parameters whose buffers `f` overwrites completely before
/// reading them (see the module documentation); empty for kernels without blocks.
pub fn full_writes(f: &PrimFunc) -> Vec<usize> {
    let Some(root) = f.root_block() else { return Vec::new() };
    let stmts = match &f.stmts[root.body] {
        StmtData::Seq(v) => v.clone(),
        _ => vec![root.body],
    };
    let mut out = Vec::new();
    for (i, &p) in f.params.iter().enumerate() {
        let Some(b) = f.param_buffer(p) else { continue };
        let first = stmts.iter().copied().find(|&s| mentions(f, s, b));
        if first.is_some_and(|s| covers(f, s, b)) {
            out.push(i);
        }
    }
    out
}

/// True when statement `s` (any subtree) mentions `buf` in a store, load, region or
/// view.
fn mentions(f: &PrimFunc, s: Stmt, buf: Buffer) -> bool {
    let mut m = false;
    f.walk(s, |_, d| match d {
        StmtData::Store { buffer, indices, value } => {
            m |= *buffer == buf || indices.iter().chain([value]).any(|&e| reads(f, e, buf));
        }
        StmtData::Block(b) => {
            m |= b.reads.iter().chain(&b.writes).any(|r| r.buffer == buf)
                || b.match_buffers.iter().any(|mb| mb.source.buffer == buf)
                || b.iter_vars.iter().any(|iv| reads(f, iv.binding, buf))
                || b.predicate.is_some_and(|p| reads(f, p, buf));
        }
        StmtData::If { cond: e, .. }
        | StmtData::While { cond: e, .. }
        | StmtData::Let { value: e, .. }
        | StmtData::Evaluate(e)
        | StmtData::Assert { cond: e, .. }
        | StmtData::For { extent: e, .. } => m |= reads(f, *e, buf),
        StmtData::DeclBuffer { buffer, .. } | StmtData::Allocate { buffer, .. } => {
            m |= f.buffer(*buffer).data == f.buffer(buf).data;
        }
        _ => {}
    });
    m
}

/// True when expression `e` loads from `buf`.
fn reads(f: &PrimFunc, e: PrimExpr, buf: Buffer) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Load { buffer, .. } = f.pool.prim(e)
            && *buffer == buf
        {
            return true;
        }
        f.pool.for_each_operand(e, |o| stack.push(o));
    }
    false
}

/// The store that is a whole block body (or init).
fn single_store(f: &PrimFunc, s: Stmt) -> Option<(Buffer, &[PrimExpr], PrimExpr)> {
    match &f.stmts[s] {
        StmtData::Store { buffer, indices, value } => Some((*buffer, indices, *value)),
        StmtData::Seq(v) if v.len() == 1 => single_store(f, v[0]),
        _ => None,
    }
}

/// True when statement `s` is a nest whose block stores all of `buf` before reading it.
fn covers(f: &PrimFunc, s: Stmt, buf: Buffer) -> bool {
    // The perfect nest: serial loops from 0 around one block.
    let mut loops = Vec::new();
    let mut at = s;
    let b = loop {
        match &f.stmts[at] {
            StmtData::For { var, min, extent, step: None, thread: None, body, .. }
                if f.pool.as_int(*min) == Some(0) =>
            {
                loops.push((*var, *extent));
                at = *body;
            }
            StmtData::Block(b) if !b.iter_vars.is_empty() => break b,
            _ => return false,
        }
    };
    if b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return false;
    }
    // Identity bindings over whole loops.
    let mut used = Vec::new();
    for iv in &b.iter_vars {
        let Some(v) = f.pool.as_var(iv.binding) else { return false };
        let Some(li) = loops.iter().position(|&(lv, _)| lv == v) else { return false };
        if used.contains(&li) || f.pool.as_int(iv.dom.min) != Some(0) || iv.dom.extent != loops[li].1 {
            return false;
        }
        used.push(li);
        if iv.kind == IterKind::Reduce && f.pool.as_int(iv.dom.extent).is_none_or(|e| e < 1) {
            return false;
        }
        if !matches!(iv.kind, IterKind::Spatial | IterKind::Reduce) {
            return false;
        }
    }
    let Some((dst, idx, value)) = single_store(f, b.body) else { return false };
    let shape = &f.buffer(buf).shape;
    let spatial: Vec<_> = b.iter_vars.iter().filter(|iv| iv.kind == IterKind::Spatial).collect();
    let at_spatial = |idx: &[PrimExpr]| {
        idx.len() == spatial.len()
            && idx.len() == shape.len()
            && idx.iter().zip(&spatial).zip(shape).all(|((&e, iv), &d)| {
                f.pool.as_var(e) == Some(iv.var)
                    && (iv.dom.extent == d || f.pool.as_int(iv.dom.extent).is_some_and(|x| f.pool.as_int(d) == Some(x)))
            })
    };
    if dst != buf || !at_spatial(idx) || idx.iter().any(|&e| reads(f, e, buf)) {
        return false;
    }
    if !reads(f, value, buf) {
        return b.init.is_none_or(|i| !mentions(f, i, buf) || init_ok(f, i, buf, idx));
    }
    b.init.is_some_and(|i| init_ok(f, i, buf, idx))
}

/// True when `init` stores `buf` at `idx` from a value that does not read it.
fn init_ok(f: &PrimFunc, init: Stmt, buf: Buffer, idx: &[PrimExpr]) -> bool {
    single_store(f, init).is_some_and(|(d, i, v)| d == buf && i == idx && !reads(f, v, buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernels(text: &str) -> Vec<(String, Vec<usize>)> {
        let m = relax_parser::parse_module(text).expect("parses");
        let mut out: Vec<(String, Vec<usize>)> =
            m.live().filter_map(|(g, d)| m.prim_func(g).map(|f| (d.name.clone(), full_writes(f)))).collect();
        out.sort();
        out
    }

    #[test]
    fn finds_complete_writes() {
        let text = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), y: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj] + T.float32(1.0)

    @T.prim_func(private=True)
    def half(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), y: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(2), T.int64(8)):
            with T.sblock("y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = x[vi, vj]

    @T.prim_func(private=True)
    def accumulate(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), y: T.Buffer((T.int64(4),), "float32")):
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = y[vi] + x[vi, vk]

    @T.prim_func(private=True)
    def total(x: T.Buffer((T.int64(4), T.int64(8)), "float32"), y: T.Buffer((T.int64(4),), "float32")):
        for i, k in T.grid(T.int64(4), T.int64(8)):
            with T.sblock("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0.0)
                y[vi] = y[vi] + x[vi, vk]

    @T.prim_func(private=True)
    def guarded(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.sblock("y"):
                vi = T.axis.spatial(T.int64(4), i)
                T.where(i < T.int64(3))
                y[vi] = x[vi]
"#;
        assert_eq!(
            kernels(text),
            vec![
                ("accumulate".to_string(), vec![]),
                ("add".to_string(), vec![1]),
                ("guarded".to_string(), vec![]),
                ("half".to_string(), vec![]),
                ("total".to_string(), vec![1]),
            ]
        );
    }
}
