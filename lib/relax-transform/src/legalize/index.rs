//! Indexing (`legalize_ops/index.py`; TOPI's `take` and `strided_slice`).
//!
//! * `take(x, indices, axis, mode)`: `T_take` over `ax0, ...`; the index is the loaded
//!   `indices[...]` (`fast`), clamped into range (`clip`), wrapped (`wrap`), or checked
//!   with NaN for out-of-range (`nan`). Without an axis, `x` is indexed flat (unravelled).
//! * `strided_slice`: with constant begin, end, strides and a static input shape,
//!   `T_strided_slice_with_axes` with a computed static output shape; otherwise
//!   `T_dynamic_strided_slice_with_axes`, whose dims are TOPI's `GetLength`
//!   (canonicalized begin and end unless `assume_inbound`), simplified. The input index
//!   is `i * stride + begin`.
//! * `gather_nd(x, indices, batch_dims)` (`te_gather_nd`): the indices transposed to put
//!   their last dim first (`T_transpose`), then `T_gather_nd` reading
//!   `x[batch..., indices[0, i...], indices[1, i...], ..., rest...]` (C++ `gather_nd`).

use relax_ir::op::{OpId, ops};
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::{DataType, PrimExpr};

use super::cx::{Cx, norm_axis};
use super::te::{Axes, Te};
use super::{Legalize, Lowered};
use relax_ir::arith::tvm::simplify;

/// The legalization of an indexing op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::TAKE => take,
        ops::STRIDED_SLICE => strided_slice,
        ops::GATHER_ND => gather_nd,
        _ => return None,
    })
}

fn i32c(te: &mut Te, v: i64) -> PrimExpr {
    te.pool.int(DataType::INT32, v)
}

fn take(cx: &mut Cx) -> Option<Lowered> {
    let a = cx.tensor(0)?;
    let ind = cx.tensor(1)?;
    let mode = cx.attr("mode").and_then(|v| v.as_str()).unwrap_or("fast").to_string();
    let axis = cx.attr_int("axis");
    let te = &mut cx.te;
    let a_shape = te.shape(a);
    let ind_shape = te.shape(ind);
    let Some(axis) = axis else {
        // Flat indexing.
        let mut size = i32c(te, 1);
        for &d in &a_shape {
            size = te.mul(size, d);
        }
        let t = te.compute("T_take", ind_shape, Axes::Ax, |te, idx| {
            let i = te.load(ind, idx);
            let i = match mode.as_str() {
                "clip" => {
                    let z = i32c(te, 0);
                    let lo = te.bin(BinOp::Max, z, i);
                    let one = i32c(te, 1);
                    let hi = te.sub(size, one);
                    te.bin(BinOp::Min, lo, hi)
                }
                "wrap" => {
                    let m = te.bin(BinOp::Mod, i, size);
                    let s = te.add(m, size);
                    te.bin(BinOp::Mod, s, size)
                }
                _ => i,
            };
            let mut flat = i;
            let mut out = Vec::new();
            for &d in a_shape.iter().rev() {
                out.push(te.floormod(flat, d));
                flat = te.floordiv(flat, d);
            }
            out.reverse();
            te.load(a, &out)
        });
        return Lowered::one("take", t);
    };
    let axis = norm_axis(axis, a_shape.len())?;
    let n_ind = ind_shape.len();
    let mut out_shape: Vec<PrimExpr> = a_shape[..axis].to_vec();
    out_shape.extend(ind_shape.iter().copied());
    out_shape.extend(a_shape[axis + 1..].iter().copied());
    let axis_dim = a_shape[axis];
    let t = te.compute("T_take", out_shape, Axes::Ax, |te, idx| {
        let pos: Vec<PrimExpr> = idx[axis..axis + n_ind].to_vec();
        let mut real: Vec<PrimExpr> = idx[..axis].to_vec();
        let i = te.load(ind, &pos);
        let i = match mode.as_str() {
            "clip" => {
                let z = i32c(te, 0);
                let lo = te.bin(BinOp::Max, z, i);
                let one = i32c(te, 1);
                let hi = te.sub(axis_dim, one);
                te.bin(BinOp::Min, lo, hi)
            }
            "wrap" => {
                let m = te.bin(BinOp::Mod, i, axis_dim);
                let s = te.add(m, axis_dim);
                te.bin(BinOp::Mod, s, axis_dim)
            }
            _ => i,
        };
        real.push(i);
        real.extend(idx[axis + n_ind..].iter().copied());
        let v = te.load(a, &real);
        if mode == "nan" {
            let z = i32c(te, 0);
            let ge = te.bin(BinOp::Ge, i, z);
            let lt = te.bin(BinOp::Lt, i, axis_dim);
            let inb = te.bin(BinOp::And, ge, lt);
            let dtype = te.dtype(a);
            let nan = te.const_f(dtype, f64::from(f32::NAN));
            return te.if_then_else(inb, v, nan);
        }
        v
    });
    Lowered::one("take", t)
}

/// TOPI's static `CanonicalizeIndex`.
fn canon_static(index: i64, extent: i64, stride: i64) -> i64 {
    // Extents and indices are any int64: wrap as TOPI's C++ does, never overflow.
    let (lo, hi) = if stride < 0 { (-1, extent.wrapping_sub(1)) } else { (0, extent) };
    let index = if index < 0 { index.wrapping_add(extent) } else { index };
    index.max(lo).min(hi)
}

/// TOPI's `CanonicalizeIndex` for expressions.
fn canon_dyn(te: &mut Te, index: PrimExpr, extent: PrimExpr, stride: PrimExpr) -> PrimExpr {
    if let (Some(i), Some(e), Some(s)) = (te.pool.as_int(index), te.pool.as_int(extent), te.pool.as_int(stride)) {
        return te.i64(canon_static(i, e, s));
    }
    if let (Some(a), Some(b)) = (te.pool.as_var(index), te.pool.as_var(extent))
        && te.pool.vars[a].name == te.pool.vars[b].name
    {
        return index;
    }
    let z = i32c(te, 0);
    let neg = te.bin(BinOp::Lt, stride, z);
    let m1 = i32c(te, -1);
    let z2 = i32c(te, 0);
    let begin_range = te.if_then_else(neg, m1, z2);
    let one = i32c(te, 1);
    let em1 = te.sub(extent, one);
    let end_range = te.if_then_else(neg, em1, extent);
    let index = if te.pool.as_int(index).is_some_and(|v| v >= 0) {
        index
    } else {
        let z = i32c(te, 0);
        let c = te.bin(BinOp::Lt, index, z);
        let w = te.add(index, extent);
        te.if_then_else(c, w, index)
    };
    let mx = te.bin(BinOp::Max, index, begin_range);
    te.bin(BinOp::Min, mx, end_range)
}

/// `ceildiv(a, b)`: `(a + b - 1) // b`.
fn ceildiv(te: &mut Te, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let s = te.add(a, b);
    let one = i32c(te, 1);
    let s = te.sub(s, one);
    if let (Some(x), Some(y)) = (te.pool.as_int(s), te.pool.as_int(b))
        && y != 0
    {
        let t = te.pool.dtype(s);
        return te.pool.int(t, relax_ir::prim_build::floor_div(x, y));
    }
    te.pool.raw(PrimExprData::Bin(BinOp::FloorDiv, s, b))
}

fn strided_slice(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let axes = cx.prim_tuple(1)?;
    let begin = cx.prim_tuple(2)?;
    let end = cx.prim_tuple(3)?;
    let strides = match cx.nargs() {
        5 => cx.prim_tuple(4)?,
        _ => {
            let n = axes.len();
            (0..n).map(|_| cx.te.i64(1)).collect()
        }
    };
    let assume_inbound = cx.attr_bool("assume_inbound").unwrap_or(false);
    let te = &mut cx.te;
    let shape = te.shape(x);
    let ndim = shape.len();
    let axes: Vec<usize> =
        axes.iter().map(|&a| te.pool.as_int(a).and_then(|v| norm_axis(v, ndim))).collect::<Option<_>>()?;
    let all_const = |te: &Te, v: &[PrimExpr]| v.iter().all(|&e| te.pool.as_int(e).is_some());
    if all_const(te, &begin) && all_const(te, &end) && all_const(te, &strides) && all_const(te, &shape) {
        let mut out = shape.clone();
        let mut begins = Vec::new();
        for (i, &ax) in axes.iter().enumerate() {
            let dim = te.pool.as_int(shape[ax])?;
            let (b, e, s) = (te.pool.as_int(begin[i])?, te.pool.as_int(end[i])?, te.pool.as_int(strides[i])?);
            let bi = canon_static(b, dim, s);
            let ei = canon_static(e, dim, s);
            let interval = (ei - bi).abs();
            let size = (interval + s.abs() - 1) / s.abs();
            begins.push((ax, te.pool.int(te.pool.dtype(begin[i]), bi), strides[i]));
            out[ax] = te.i64(size);
        }
        let t = te.compute("T_strided_slice_with_axes", out, Axes::Ax, |te, idx| {
            let mut real = idx.to_vec();
            for &(ax, b, s) in &begins {
                let m = te.mul(idx[ax], s);
                real[ax] = te.add(m, b);
            }
            te.load(x, &real)
        });
        return Lowered::one("strided_slice", t);
    }
    let mut out = shape.clone();
    for (i, &ax) in axes.iter().enumerate() {
        let (b, e, s) = (begin[i], end[i], strides[i]);
        let len = if assume_inbound {
            let d = te.sub(e, b);
            ceildiv(te, d, s)
        } else {
            let cb = canon_dyn(te, b, out[ax], s);
            let ce = canon_dyn(te, e, out[ax], s);
            let z = i32c(te, 0);
            let neg = te.bin(BinOp::Lt, s, z);
            let d1 = te.sub(cb, ce);
            let ns = te.pool.neg(s);
            let l1 = ceildiv(te, d1, ns);
            let d2 = te.sub(ce, cb);
            let l2 = ceildiv(te, d2, s);
            te.if_then_else(neg, l1, l2)
        };
        out[ax] = simplify(&mut te.pool, len);
    }
    let t = te.compute("T_dynamic_strided_slice_with_axes", out, Axes::Ax, |te, idx| {
        let mut real = idx.to_vec();
        for (i, &ax) in axes.iter().enumerate() {
            let m = te.mul(idx[ax], strides[i]);
            real[ax] = te.add(m, begin[i]);
        }
        te.load(x, &real)
    });
    Lowered::one("strided_slice", t)
}

fn gather_nd(cx: &mut Cx) -> Option<Lowered> {
    let data = cx.tensor(0)?;
    let ind = cx.tensor(1)?;
    let batch_dims = usize::try_from(cx.attr_int("batch_dims").unwrap_or(0)).ok()?;
    let te = &mut cx.te;
    let ni = te.ndim(ind);
    if ni == 0 {
        return None;
    }
    let mut axes = vec![ni - 1];
    axes.extend(0..ni - 1);
    let ind = super::manipulate::transpose(te, ind, &axes);
    let (ds, is) = (te.shape(data), te.shape(ind));
    let nd = ds.len();
    let m = usize::try_from(te.pool.as_int(is[0])?).ok()?;
    if m + batch_dims > nd {
        return None;
    }
    let mut out_shape: Vec<PrimExpr> = is[1..].to_vec();
    out_shape.extend_from_slice(&ds[m + batch_dims..]);
    let int_indices = te.dtype(ind).is_int() || te.dtype(ind).is_uint();
    let t = te.compute("T_gather_nd", out_shape, Axes::Ax, |te, out| {
        let mut position = vec![i32c(te, 0)];
        position.extend_from_slice(&out[..ni - 1]);
        let mut real: Vec<PrimExpr> = out[..batch_dims].to_vec();
        for i in 0..m {
            position[0] = i32c(te, i as i64);
            let v = te.load(ind, &position);
            real.push(if int_indices { v } else { te.cast(DataType::INT32, v) });
        }
        if real.len() < nd {
            real.extend_from_slice(&out[ni - 1..]);
        }
        te.load(data, &real)
    });
    Lowered::one("te_gather_nd", t)
}
