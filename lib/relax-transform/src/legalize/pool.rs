//! Pooling (`legalize_ops/nn.py`; TOPI's C++ `nn/pooling.h`, `pool_impl_nd` and
//! `adaptive_pool_impl`).
//!
//! * `nn.max_pool{1,2,3}d`: the input padded with the dtype's lowest value (`pad_temp`,
//!   only when some padding is not zero), then `pool_max`, the maximum over the window
//!   axes `rv0, rv1, ...` of `x[..., o * stride + rv * dilation, ...]`, annotated
//!   `{"schedule_rule": "meta_schedule.pool_max"}`;
//! * `nn.avg_pool{1,2,3}d`: `pad_temp` with zeros, the sum `pool_sum`, and `pool_avg`
//!   dividing by the number of elements the window covers (with or without the padding,
//!   `count_include_pad`), annotated `meta_schedule.pool_avg`;
//! * `nn.adaptive_avg_pool{1,2,3}d`: `adaptive_pool_sum` over the window
//!   `[o * in // out, ceil((o + 1) * in / out))`, and `adaptive_pool_avg` dividing by
//!   its size. When the windows differ in size (7 into 3), TVM makes the reduction
//!   extent depend on the output index, in a block nested in another
//!   (`adaptive_pool_sum_l1`), which the builder does not make; here the reduction runs
//!   over the widest window, and positions past the window's own size add zero
//!   (`T.if_then_else(rv < size, x[...], 0)`): the same values are summed in the same
//!   order, so the numbers are TVM's, in a different text. Those sizes must be static.
//!
//! `ceil_mode` pads the end by `stride - 1` more, as TOPI does. Layouts are those of
//! letters `N`, `C`, `D`, `H`, `W` (no split channels); an output layout other than the
//! input's is left alone, as in TVM.

use relax_ir::attrs::complete_ints;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{AttrValue, Attrs, DataType, PrimExpr};

use super::conv::{fit_int32, window_out_dim};
use super::cx::Cx;
use super::te::emit::min_value;
use super::te::{Axes, CombinerKind, RAxis, Reduce, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of a pooling op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_MAX_POOL1D => |cx| pool(cx, 1, true),
        ops::NN_MAX_POOL2D => |cx| pool(cx, 2, true),
        ops::NN_MAX_POOL3D => |cx| pool(cx, 3, true),
        ops::NN_AVG_POOL1D => |cx| pool(cx, 1, false),
        ops::NN_AVG_POOL2D => |cx| pool(cx, 2, false),
        ops::NN_AVG_POOL3D => |cx| pool(cx, 3, false),
        ops::NN_ADAPTIVE_AVG_POOL1D => |cx| adaptive(cx, 1),
        ops::NN_ADAPTIVE_AVG_POOL2D => |cx| adaptive(cx, 2),
        ops::NN_ADAPTIVE_AVG_POOL3D => |cx| adaptive(cx, 3),
        _ => return None,
    })
}

/// The positions of the pooled dims (`W`; `H`, `W`; `D`, `H`, `W`) in the layout.
fn pool_axes(cx: &Cx, dim: usize) -> Option<Vec<usize>> {
    let layout = cx.attr("layout")?.as_str()?;
    let out = cx.attr("out_layout").and_then(|v| v.as_str()).unwrap_or(layout);
    if out != layout || layout.len() != dim + 2 || !layout.chars().all(|c| "NCDHW".contains(c)) {
        return None;
    }
    let letters = &"DHW"[3 - dim..];
    letters.chars().map(|c| layout.find(c)).collect()
}

fn i32c(te: &mut Te, v: i64) -> PrimExpr {
    te.pool.int(DataType::INT32, v)
}

fn schedule_rule(rule: &str) -> Attrs {
    Attrs(vec![("schedule_rule".to_string(), AttrValue::Str(format!("meta_schedule.{rule}")))])
}

/// TOPI's C++ `pad(x, before, after, value, "pad_temp")`.
fn pad(te: &mut Te, x: Tensor, before: &[i64], after: &[i64], value: PrimExpr) -> Tensor {
    let shape = te.shape(x);
    let out: Vec<PrimExpr> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let b = i32c(te, before[i]);
            let a = i32c(te, after[i]);
            let s = te.add(d, b);
            let s = te.add(s, a);
            relax_ir::arith::tvm::simplify(&mut te.pool, s)
        })
        .collect();
    te.compute("pad_temp", out, Axes::Ax, |te, idx| {
        let mut sel = Vec::new();
        let mut indices = Vec::new();
        for i in 0..shape.len() {
            let b = i32c(te, before[i]);
            if before[i] != 0 {
                sel.push(te.bin(BinOp::Ge, idx[i], b));
                indices.push(te.sub(idx[i], b));
            } else {
                indices.push(idx[i]);
            }
            if after[i] != 0 {
                let hi = te.add(b, shape[i]);
                let lt = te.bin(BinOp::Lt, idx[i], hi);
                sel.push(relax_ir::arith::tvm::simplify(&mut te.pool, lt));
            }
        }
        let v = te.load(x, &indices);
        if sel.is_empty() {
            return v;
        }
        let mut all = sel[0];
        for &c in &sel[1..] {
            all = te.bin(BinOp::And, all, c);
        }
        te.if_then_else(all, v, value)
    })
}

/// `pool_impl_nd`.
fn pool(cx: &mut Cx, dim: usize, max: bool) -> Option<Lowered> {
    let axes = pool_axes(cx, dim)?;
    let kernel = complete_ints(cx.attr_ints("pool_size"), dim, 1);
    let stride = complete_ints(cx.attr_ints("strides"), dim, 1);
    let dilation = complete_ints(cx.attr_ints("dilation"), dim, 1);
    let padding = complete_ints(cx.attr_ints("padding"), 2 * dim, 0);
    let ceil_mode = cx.attr_bool("ceil_mode").unwrap_or(false);
    let count_include_pad = cx.attr_bool("count_include_pad").unwrap_or(false);
    if !fit_int32(&[&kernel, &stride, &dilation, &padding]) {
        return None;
    }
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let shape = te.shape(x);
    if shape.len() != dim + 2 {
        return None;
    }
    let mut before = vec![0; shape.len()];
    let mut after = vec![0; shape.len()];
    let mut out_shape = shape.clone();
    let mut offset = vec![0; dim];
    let mut pad_tail = padding[dim..].to_vec();
    let mut do_pad = false;
    for i in 0..dim {
        let ii = axes[i];
        if ceil_mode {
            offset[i] = stride[i] - 1;
            pad_tail[i] += offset[i];
        }
        do_pad = do_pad || padding[i] != 0 || pad_tail[i] != 0;
        before[ii] = padding[i];
        after[ii] = pad_tail[i];
        let kd = i32c(te, (kernel[i] - 1) * dilation[i]);
        let raw = window_out_dim(te, shape[ii], kd, padding[i], pad_tail[i], stride[i]);
        let dimv = if ceil_mode {
            let one = i32c(te, 1);
            let last = te.sub(raw, one);
            let s = i32c(te, stride[i]);
            let start = te.mul(last, s);
            let h = i32c(te, padding[i]);
            let lim = te.add(shape[ii], h);
            let invalid = te.bin(BinOp::Ge, start, lim);
            let one = i32c(te, 1);
            let m1 = te.sub(raw, one);
            te.if_then_else(invalid, m1, raw)
        } else {
            raw
        };
        out_shape[ii] = relax_ir::arith::tvm::simplify(&mut te.pool, dimv);
    }
    let dtype = te.dtype(x);
    let value = if max { min_value(&mut te.pool, dtype) } else { te.const_i(dtype, 0) };
    let temp = if do_pad { pad(te, x, &before, &after, value) } else { x };
    let window = |te: &mut Te, out: &[PrimExpr]| -> (Vec<PrimExpr>, Vec<RAxis>) {
        let raxes: Vec<(RAxis, PrimExpr)> = (0..dim)
            .map(|i| {
                let k = i32c(te, kernel[i]);
                te.reduce_axis(&format!("rv{i}"), k)
            })
            .collect();
        let mut idx = out.to_vec();
        for i in 0..dim {
            let s = i32c(te, stride[i]);
            let a = te.mul(out[axes[i]], s);
            let d = i32c(te, dilation[i]);
            let b = te.mul(raxes[i].1, d);
            idx[axes[i]] = te.add(a, b);
        }
        (idx, raxes.iter().map(|r| r.0).collect())
    };
    let name = if max { "max_pool" } else { "avg_pool" };
    let name = format!("{name}{dim}d");
    if max {
        let t = te.compute_reduce_with_attrs("pool_max", out_shape, Axes::Ax, schedule_rule("pool_max"), |te, out| {
            let (idx, raxes) = window(te, out);
            let s = te.load(temp, &idx);
            Reduce { kind: CombinerKind::Max, sources: vec![s], axes: raxes }
        })[0];
        return Lowered::one(&name, t);
    }
    let sum = te.compute_reduce("pool_sum", out_shape.clone(), Axes::Ax, |te, out| {
        let (idx, raxes) = window(te, out);
        let s = te.load(temp, &idx);
        Reduce { kind: CombinerKind::Sum, sources: vec![s], axes: raxes }
    })[0];
    let t = te.compute_with_attrs("pool_avg", out_shape, Axes::Ax, schedule_rule("pool_avg"), |te, out| {
        let mut num_el = i32c(te, 1);
        for i in 0..dim {
            let ii = axes[i];
            let s = i32c(te, stride[i]);
            let a = te.mul(out[ii], s);
            let h = i32c(te, padding[i]);
            let start = te.sub(a, h);
            let kd = i32c(te, (kernel[i] - 1) * dilation[i]);
            let end = te.add(start, kd);
            let d = i32c(te, dilation[i]);
            let count = if count_include_pad {
                let lim = i32c(te, pad_tail[i] - 1 - offset[i]);
                let lim = te.add(shape[ii], lim);
                let end = te.bin(BinOp::Min, end, lim);
                let w = te.sub(end, start);
                let w = te.bin(BinOp::Div, w, d);
                let one = i32c(te, 1);
                te.add(w, one)
            } else {
                let dm1 = i32c(te, dilation[i] - 1);
                let j = te.sub(dm1, start);
                let j = te.bin(BinOp::Div, j, d);
                let jt = te.pool.dtype(j);
                let zero = te.const_i(jt, 0);
                let jumps = te.bin(BinOp::Max, j, zero);
                let one = i32c(te, 1);
                let lim = te.sub(shape[ii], one);
                let end = te.bin(BinOp::Min, end, lim);
                let dj = te.mul(d, jumps);
                let first = te.add(start, dj);
                let w = te.sub(end, first);
                let w = te.bin(BinOp::Div, w, d);
                let one = i32c(te, 1);
                te.add(w, one)
            };
            num_el = te.mul(num_el, count);
        }
        if !count_include_pad {
            let one = i32c(te, 1);
            num_el = te.bin(BinOp::Max, num_el, one);
        }
        let v = te.load(sum, out);
        te.bin(BinOp::Div, v, num_el)
    });
    Lowered::one(&name, t)
}

/// `adaptive_pool_impl` for averages, windows of one size.
fn adaptive(cx: &mut Cx, dim: usize) -> Option<Lowered> {
    let axes = pool_axes(cx, dim)?;
    let sizes = cx.attr_ints("output_size");
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let shape = te.shape(x);
    if shape.len() != dim + 2 {
        return None;
    }
    let out_size: Vec<PrimExpr> = match sizes {
        None => axes.iter().map(|&a| shape[a]).collect(),
        Some(s) => complete_ints(Some(s), dim, 1).iter().map(|&v| te.i64(v)).collect(),
    };
    let in_size: Vec<PrimExpr> = axes.iter().map(|&a| shape[a]).collect();
    // The window's size, which TVM's simplifier finds (`in`, or `in / out`), or `None`
    // when it depends on the output index.
    let mut sizes = Vec::new();
    let mut max_sizes = Vec::new();
    for i in 0..dim {
        let o = te.pool.as_int(out_size[i]);
        let n = te.pool.as_int(in_size[i]);
        match (n, o) {
            (_, Some(1)) => sizes.push(Some(in_size[i])),
            (Some(n), Some(o)) if o > 0 && n % o == 0 => sizes.push(Some(te.i64(n / o))),
            (Some(n), Some(o)) if o > 0 && n > 0 => {
                // The widest window: `ceil((j + 1) * n / o) - j * n // o` over `j`.
                let widest = (0..o).map(|j| ((j + 1) * n + o - 1) / o - j * n / o).max().unwrap_or(1);
                max_sizes.push((i, widest));
                sizes.push(None);
            }
            _ => return None,
        }
    }
    let mut out_shape = shape.clone();
    for i in 0..dim {
        out_shape[axes[i]] = out_size[i];
    }
    // start = o * in // out.
    let start = |te: &mut Te, o: PrimExpr, i: usize| -> PrimExpr {
        let a = te.mul(o, in_size[i]);
        te.floordiv(a, out_size[i])
    };
    // The window's size at output index `o` (`end - start`, `end` rounded up).
    let size_at = |te: &mut Te, o: PrimExpr, i: usize| -> PrimExpr {
        let a = te.mul(o, in_size[i]);
        let b = te.add(a, in_size[i]);
        let end = te.floordiv(b, out_size[i]);
        let m = te.floormod(b, out_size[i]);
        let zero = te.i64(0);
        let exact = te.bin(BinOp::Eq, m, zero);
        let one = te.i64(1);
        let up = te.add(end, one);
        let end = te.select(exact, end, up);
        let first = start(te, o, i);
        te.sub(end, first)
    };
    let sum = te.compute_reduce("adaptive_pool_sum", out_shape.clone(), Axes::Ax, |te, out| {
        let mut idx = out.to_vec();
        let mut raxes = Vec::new();
        let mut inside = Vec::new();
        for i in 0..dim {
            let first = start(te, out[axes[i]], i);
            let extent = match sizes[i] {
                Some(s) => s,
                None => {
                    let w = max_sizes.iter().find(|(j, _)| *j == i).map_or(1, |(_, w)| *w);
                    te.i64(w)
                }
            };
            let (r, rv) = te.reduce_axis(&format!("rv{i}"), extent);
            raxes.push(r);
            if sizes[i].is_none() {
                let s = size_at(te, out[axes[i]], i);
                inside.push(te.bin(BinOp::Lt, rv, s));
            }
            idx[axes[i]] = te.add(first, rv);
        }
        let s = te.load(x, &idx);
        let s = match inside.split_first() {
            None => s,
            Some((&c, rest)) => {
                let c = rest.iter().fold(c, |a, &b| te.bin(BinOp::And, a, b));
                let zero = te.const_i(te.dtype(x), 0);
                te.if_then_else(c, s, zero)
            }
        };
        Reduce { kind: CombinerKind::Sum, sources: vec![s], axes: raxes }
    })[0];
    let dtype = te.dtype(x);
    let attrs = schedule_rule("adaptive_pool_avg");
    let t = te.compute_with_attrs("adaptive_pool_avg", out_shape, Axes::Ax, attrs, |te, out| {
        let mut factor = te.const_i(dtype, 1);
        for i in 0..dim {
            let size = match sizes[i] {
                Some(s) => s,
                None => size_at(te, out[axes[i]], i),
            };
            let e = te.cast(DataType::INT32, size);
            factor = te.mul(factor, e);
        }
        let v = te.load(sum, out);
        te.bin(BinOp::Div, v, factor)
    });
    Lowered::one(&format!("adaptive_avg_pool{dim}d"), t)
}
