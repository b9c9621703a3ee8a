//! Linear algebra (`legalize_ops/linear_algebra.py`).
//!
//! * `matmul`: a stage `matmul` over `i0, i1, ...` with the reduction axis `k`, summing
//!   `a[...] * b[...]` (each side cast to `out_dtype` when one is given). A 1-d operand
//!   is promoted as NumPy does (a leading or trailing 1 that does not appear in the
//!   output); batch dims broadcast, a static 1 on one side read at index 0. The output
//!   shape is what matmul's type inference gives: the broadcast batch dims, then `m`
//!   and `n` of the operands.
//! * `outer`: `outer[i, j] = a[i] * b[j]`.

use relax_ir::PrimExpr;
use relax_ir::op::{OpId, ops};

use super::binary::equal_check;
use super::cx::Cx;
use super::te::{Axes, CombinerKind, Reduce, Te};
use super::{Legalize, Lowered};

/// The legalization of a linear-algebra op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::MATMUL => matmul,
        ops::OUTER => outer,
        _ => return None,
    })
}

/// `InferBinaryBroadcastShape` (relax's shape inference for broadcasting).
pub fn infer_broadcast(te: &mut Te, s1: &[PrimExpr], s2: &[PrimExpr]) -> Option<Vec<PrimExpr>> {
    let (n1, n2) = (s1.len(), s2.len());
    let n = n1.max(n2);
    let mut out = Vec::with_capacity(n);
    for i in 1..=n1.min(n2) {
        let (a, b) = (s1[n1 - i], s2[n2 - i]);
        if te.pool.as_int(a) == Some(1) {
            out.push(b);
        } else if te.pool.as_int(b) == Some(1) || equal_check(te, a, b) {
            out.push(a);
        } else {
            return None;
        }
    }
    let longer = if n1 > n2 { s1 } else { s2 };
    for i in n1.min(n2) + 1..=n {
        out.push(longer[n - i]);
    }
    out.reverse();
    Some(out)
}

fn matmul(cx: &mut Cx) -> Option<Lowered> {
    let out_dtype = cx.attr_dtype("out_dtype");
    let a = cx.tensor(0)?;
    let b = cx.tensor(1)?;
    let te = &mut cx.te;
    let (sa, sb) = (te.shape(a), te.shape(b));
    if sa.is_empty() || sb.is_empty() {
        return None;
    }
    let mut a_shape = sa.clone();
    let mut b_shape = sb.clone();
    let a_prepended = a_shape.len() == 1;
    let b_appended = b_shape.len() == 1;
    if a_prepended {
        let one = te.i64(1);
        a_shape.insert(0, one);
    }
    if b_appended {
        let one = te.i64(1);
        b_shape.push(one);
    }
    // The output shape, as matmul's type inference computes it.
    let mut out_shape = infer_broadcast(te, &a_shape[..a_shape.len() - 2], &b_shape[..b_shape.len() - 2])?;
    if !a_prepended {
        out_shape.push(sa[sa.len() - 2]);
    }
    if !b_appended {
        out_shape.push(sb[sb.len() - 1]);
    }
    let is_a_larger = a_shape.len() > b_shape.len();
    let offset = a_shape.len().abs_diff(b_shape.len());
    let k_extent = a_shape[a_shape.len() - 1];
    let n_out = out_shape.len();
    let batch_end = n_out - (2 - usize::from(a_prepended) - usize::from(b_appended));
    let t = te.compute_reduce("matmul", out_shape, Axes::I, |te, idx| {
        let (k, kv) = te.reduce_axis("k", k_extent);
        let mut ai = Vec::new();
        let mut bi = Vec::new();
        for &x in idx.iter().take(offset) {
            if is_a_larger {
                ai.push(x);
            } else {
                bi.push(x);
            }
        }
        for (i, &x) in idx.iter().enumerate().take(batch_end).skip(offset) {
            let a_dim = a_shape[if is_a_larger { i } else { i - offset }];
            let b_dim = b_shape[if is_a_larger { i - offset } else { i }];
            let (ca, cb) = (te.pool.as_int(a_dim), te.pool.as_int(b_dim));
            let equal = ca.is_some() && ca == cb;
            if equal {
                ai.push(x);
                bi.push(x);
            } else {
                let zero = te.i64(0);
                ai.push(if ca == Some(1) { zero } else { x });
                bi.push(if cb == Some(1) { zero } else { x });
            }
        }
        if !a_prepended {
            ai.push(idx[n_out + usize::from(b_appended) - 2]);
        }
        ai.push(kv);
        bi.push(kv);
        if !b_appended {
            bi.push(idx[n_out - 1]);
        }
        let mut x = te.load(a, &ai);
        let mut y = te.load(b, &bi);
        if let Some(dt) = out_dtype {
            x = te.cast(dt, x);
            y = te.cast(dt, y);
        }
        let source = te.mul(x, y);
        Reduce { kind: CombinerKind::Sum, sources: vec![source], axes: vec![k] }
    });
    Lowered::one("matmul", t[0])
}

fn outer(cx: &mut Cx) -> Option<Lowered> {
    let a = cx.tensor(0)?;
    let b = cx.tensor(1)?;
    let te = &mut cx.te;
    let (sa, sb) = (te.shape(a), te.shape(b));
    if sa.len() != 1 || sb.len() != 1 {
        return None;
    }
    let t = te.compute("outer", vec![sa[0], sb[0]], Axes::Named(&["i", "j"]), |te, idx| {
        let x = te.load(a, &idx[..1]);
        let y = te.load(b, &idx[1..]);
        te.mul(x, y)
    });
    Lowered::one("outer", t)
}
