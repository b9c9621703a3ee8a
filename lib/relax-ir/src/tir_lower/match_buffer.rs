//! `T.match_buffer(src[region], shape, ...)` inside a block, as a buffer declaration that
//! views the source (TVM's `LowerMatchBuffer`).
//!
//! The matched buffer's `n` dims take the last `n` extents of the region and the last
//! `n` strides of the source (its declared strides, or row-major ones from its shape);
//! element 0 lies at the region's first element. The buffer is rewritten into a view of
//! the source's data pointer: its strides and element offset are given explicitly when
//! it declares none. A field that is a variable without a definition of its own is
//! bound to its value by `let` (before the declaration); any other field is checked by
//! an `assert` (a run-time error naming the field when it differs).
//!
//! Uses of the matched buffer's own data pointer (`C.data` in an intrinsic's arguments)
//! are kept: that variable is bound by `let` to the source's pointer.
//!
//! A parameter buffer's data pointer is the address of its element 0 for every
//! consumer, so a view of it starts at the region's offset alone; other sources (an
//! allocation, another view) add their own element offset.

use crate::DataType;
use crate::arith::Analyzer;
use crate::entities::PrimExpr;
use crate::prim::{BinOp, PrimExprData};
use crate::tir::{MatchBufferRegion, PrimFunc};

use super::{Wrap, compare};

/// The statements that bind `mb` (binding lets and checks, then the declaration), and
/// the rewritten buffer. `defined` records the variables bound so far.
pub(super) fn lower(f: &mut PrimFunc, mb: &MatchBufferRegion, defined: &mut [bool]) -> Result<Vec<Wrap>, String> {
    let src = mb.source.buffer;
    let sd = f.buffers[src].clone();
    let bd = f.buffers[mb.buffer].clone();
    let (r, n) = (mb.source.region.len(), bd.shape.len());
    if r != sd.shape.len() {
        return Err(format!(
            "the region `T.match_buffer` of `{}` views has {r} ranges for {} dims",
            bd.name,
            sd.shape.len()
        ));
    }
    if n > r {
        return Err(format!("`T.match_buffer` of `{}` has more dims than its source region", bd.name));
    }
    let i64 = |f: &mut PrimFunc, e: PrimExpr| f.pool.cast(DataType::INT64, e);
    // The source's strides, in elements.
    let strides: Vec<PrimExpr> = if sd.strides.len() == r {
        sd.strides.iter().map(|&s| i64(f, s)).collect()
    } else {
        let mut v = vec![f.pool.i64(1); r];
        for k in (0..r.saturating_sub(1)).rev() {
            let d = i64(f, sd.shape[k + 1]);
            v[k] = mul(f, v[k + 1], d);
        }
        v
    };
    // Element 0 of the view, relative to the source's data pointer.
    let is_param = f.buffer_map.iter().any(|&(_, b)| b == src);
    let mut offset = match sd.elem_offset {
        Some(o) if !is_param => i64(f, o),
        _ => f.pool.i64(0),
    };
    for (k, rg) in mb.source.region.iter().enumerate() {
        let lo = i64(f, rg.min);
        let term = mul(f, lo, strides[k]);
        offset = add(f, offset, term);
    }
    let az = Analyzer::unbounded();
    let offset = az.simplify(&mut f.pool, offset);
    let strides: Vec<PrimExpr> = strides.into_iter().map(|s| az.simplify(&mut f.pool, s)).collect();
    let mut out = Vec::new();
    let what = |field: String| format!("{field} of matched buffer `{}`", bd.name);
    for (i, &d) in bd.shape.iter().enumerate() {
        let ext = mb.source.region[r - n + i].extent;
        bind(f, d, ext, what(format!("dim {i}")), defined, &mut out);
    }
    let tail: Vec<PrimExpr> = strides[r - n..].to_vec();
    for (i, &s) in bd.strides.iter().enumerate() {
        if let Some(&t) = tail.get(i) {
            bind(f, s, t, what(format!("stride {i}")), defined, &mut out);
        }
    }
    if let Some(o) = bd.elem_offset {
        bind(f, o, offset, what("element offset".to_string()), defined, &mut out);
    }
    // Expressions that use the matched buffer's own data pointer (`C.data`) see the
    // source's.
    if bd.data != sd.data && f.pool.prims.lookup(&PrimExprData::Var(bd.data)).is_some() {
        let v = f.pool.var_ref(sd.data);
        out.push(Wrap::Let(bd.data, v));
    }
    let b = &mut f.buffers[mb.buffer];
    b.data = sd.data;
    if b.strides.len() != n {
        b.strides = tail;
    }
    if b.elem_offset.is_none() {
        b.elem_offset = Some(offset);
    }
    out.push(Wrap::Decl(mb.buffer));
    Ok(out)
}

/// Binds the field `e` to `value`: a `let` when `e` is a variable without a definition,
/// nothing when the two are the same expression, else an `assert`.
fn bind(f: &mut PrimFunc, e: PrimExpr, value: PrimExpr, what: String, defined: &mut [bool], out: &mut Vec<Wrap>) {
    if let Some(v) = f.pool.as_var(e)
        && let Some(d) = defined.get_mut(relax_entity::EntityRef::index(v))
        && !*d
    {
        *d = true;
        let dt = f.pool.vars[v].dtype;
        let value = f.pool.cast(dt, value);
        out.push(Wrap::Let(v, value));
        return;
    }
    let value = if f.pool.dtype(value) == f.pool.dtype(e) { value } else { f.pool.cast(f.pool.dtype(e), value) };
    if value == e || Analyzer::unbounded().prove_equal(&f.pool, e, value) {
        return;
    }
    let cond = compare(f, BinOp::Eq, e, value);
    if f.pool.as_int(cond) == Some(1) {
        return;
    }
    out.push(Wrap::Assert(cond, format!("{what} does not match its source region")));
}

fn mul(f: &mut PrimFunc, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    arith(f, BinOp::Mul, a, b)
}

fn add(f: &mut PrimFunc, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    arith(f, BinOp::Add, a, b)
}

/// `a op b` on `int64` operands, folded as TVM's operators fold.
fn arith(f: &mut PrimFunc, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    f.pool.binary(op, a, b).unwrap_or_else(|_| f.pool.raw(PrimExprData::Bin(op, a, b)))
}
