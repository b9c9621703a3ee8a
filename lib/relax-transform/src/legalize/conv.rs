//! Convolutions (`legalize_ops/nn.py`; TOPI's generic `topi.nn.conv` of `nn/conv2d.py`).
//!
//! `nn.conv1d`, `nn.conv2d` and `nn.conv3d` in any layout whose letters are `N`, `C`
//! and spatial dims (data) and `O`, `I` and spatial dims (kernel), with strides,
//! padding, dilation and groups, become a PrimFunc (`conv1d`, `conv2d`, `conv3d`) of
//! two stages:
//! * `pad_temp`: the input padded with zeros (`topi.nn.pad`, a copy when the padding
//!   is zero);
//! * `conv<d>d_<layout>` (`group_conv<d>d_<layout>` with groups), output axes named
//!   `nn, ff, yy, xx, zz` in layout order, a sum over `rc` (input channels of one
//!   group) and `ry, rx, rz` (kernel dims) in layout order of
//!   `pad_temp[n, ff // (O / groups) * (C / groups) + rc, y * stride + ry * dilation, ...]`
//!   times `w[ff, rc, ry, ...]`, both cast to `out_dtype`.
//!
//! The output dims are `(d - (k - 1) * dilation - 1 + pad_before + pad_after) // stride`
//! plus one, simplified. Convolutions whose output layout differs from the input's are
//! not legalized, as in TVM.

use relax_ir::attrs::complete_ints;
use relax_ir::layout::{inverse, permutation_to};
use relax_ir::op::{OpId, ops};
use relax_ir::{DataType, PrimExpr};

use super::cx::Cx;
use super::manipulate::pad_te;
use super::te::{Axes, CombinerKind, RAxis, Reduce, Te};
use super::{Legalize, Lowered};
use relax_ir::arith::tvm::simplify;

/// The legalization of a convolution (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_CONV1D => |cx| conv(cx, 1),
        ops::NN_CONV2D => |cx| conv(cx, 2),
        ops::NN_CONV3D => |cx| conv(cx, 3),
        _ => return None,
    })
}

/// Whether window attributes (kernel sizes, strides, dilations, paddings) all fit in
/// `int32`, the type of the constants the window arithmetic is built with. Type inference
/// accepts values beyond (wrapping, as TVM does); such a call is left unlegalized rather
/// than overflowing the arithmetic here.
pub(super) fn fit_int32(lists: &[&[i64]]) -> bool {
    lists.iter().all(|l| l.iter().all(|&v| i32::try_from(v).is_ok()))
}

/// An output extent of a sliding window (TOPI's `conv` and `pool_impl_nd` alike):
/// `(data - extent - 1 + pad_begin + pad_end) // stride + 1`, where `extent` is the
/// dilated kernel size minus one, `(kernel - 1) * dilation`; built in that order, with
/// `int32` constants, as TOPI builds it.
pub(super) fn window_out_dim(
    te: &mut Te,
    data: PrimExpr,
    extent: PrimExpr,
    pad_begin: i64,
    pad_end: i64,
    stride: i64,
) -> PrimExpr {
    let i32c = |te: &mut Te, v: i64| te.pool.int(DataType::INT32, v);
    let a = te.sub(data, extent);
    let one = i32c(te, 1);
    let a = te.sub(a, one);
    let pb = i32c(te, pad_begin);
    let a = te.add(a, pb);
    let pe = i32c(te, pad_end);
    let a = te.add(a, pe);
    let st = i32c(te, stride);
    let a = te.floordiv(a, st);
    let one = i32c(te, 1);
    te.add(a, one)
}

fn conv(cx: &mut Cx, dim: usize) -> Option<Lowered> {
    let data_layout = cx.attr("data_layout")?.as_str()?.to_string();
    let kernel_layout = cx.attr("kernel_layout")?.as_str()?.to_string();
    let out_layout = cx.attr("out_layout").and_then(|v| v.as_str()).unwrap_or(&data_layout).to_string();
    if out_layout != data_layout || data_layout.len() != dim + 2 || kernel_layout.len() != dim + 2 {
        return None;
    }
    let strides = complete_ints(cx.attr_ints("strides"), dim, 1);
    let padding = complete_ints(cx.attr_ints("padding"), 2 * dim, 0);
    let dilations = complete_ints(cx.attr_ints("dilation"), dim, 1);
    let groups = cx.attr_int("groups").unwrap_or(1);
    let out_dtype = cx.attr_dtype("out_dtype").filter(|d| !d.is_void());
    if groups < 1 || !fit_int32(&[&strides, &padding, &dilations]) {
        return None;
    }
    let x = cx.tensor(0)?;
    let w = cx.tensor(1)?;
    let te = &mut cx.te;
    let out_dtype = out_dtype.unwrap_or(te.dtype(x));
    let data_to = permutation_to(&data_layout, 'N', 'C')?;
    let data_from = inverse(&data_to);
    let mut red_from: Vec<usize> = data_from[1..].to_vec();
    for r in red_from.iter_mut() {
        if *r > data_from[0] {
            *r -= 1;
        }
    }
    let kernel_to = permutation_to(&kernel_layout, 'O', 'I')?;
    let kernel_from = inverse(&kernel_to);
    let (xs, ws) = (te.shape(x), te.shape(w));
    if xs.len() != dim + 2 || ws.len() != dim + 2 {
        return None;
    }
    let (batch, in_channel) = (xs[data_to[0]], xs[data_to[1]]);
    let dims: Vec<PrimExpr> = data_to[2..].iter().map(|&i| xs[i]).collect();
    let num_filter = ws[kernel_to[0]];
    let kdims: Vec<PrimExpr> = kernel_to[2..].iter().map(|&i| ws[i]).collect();
    let (pad_begin, pad_end) = (padding[..dim].to_vec(), padding[dim..].to_vec());
    let i32c = |te: &mut Te, v: i64| te.pool.int(DataType::INT32, v);
    let mut out_dims = Vec::new();
    for i in 0..dim {
        let one = i32c(te, 1);
        let km1 = te.sub(kdims[i], one);
        let dil = i32c(te, dilations[i]);
        let kd = te.mul(km1, dil);
        let a = window_out_dim(te, dims[i], kd, pad_begin[i], pad_end[i], strides[i]);
        out_dims.push(simplify(&mut te.pool, a));
    }
    let mut before = vec![0, 0];
    before.extend(&pad_begin);
    let mut after = vec![0, 0];
    after.extend(&pad_end);
    let before: Vec<i64> = data_from.iter().map(|&i| before[i]).collect();
    let after: Vec<i64> = data_from.iter().map(|&i| after[i]).collect();
    let temp = pad_te(te, x, &before, &after, 0.0, "pad_temp");
    let g = i32c(te, groups);
    let rc_extent = te.floordiv(in_channel, g);
    let mut out_shape = vec![batch, num_filter];
    out_shape.extend(out_dims);
    let out_shape: Vec<PrimExpr> = data_from.iter().map(|&i| out_shape[i]).collect();
    let all_names = ["nn", "ff", "yy", "xx", "zz"];
    let names: Vec<&str> = data_from.iter().map(|&i| all_names[i]).collect();
    let layout = data_layout.to_lowercase();
    let name = if groups > 1 { format!("group_conv{dim}d_{layout}") } else { format!("conv{dim}d_{layout}") };
    let t = te.compute_reduce(&name, out_shape, Axes::Named(&names), |te, args| {
        let (rc, rcv) = te.reduce_axis("rc", rc_extent);
        let rs: Vec<(RAxis, PrimExpr)> =
            ["ry", "rx", "rz"].iter().zip(&kdims).map(|(n, &k)| te.reduce_axis(n, k)).collect();
        let a: Vec<PrimExpr> = data_to.iter().map(|&i| args[i]).collect();
        let (nn, ff) = (a[0], a[1]);
        let chan = if groups == 1 {
            rcv
        } else {
            let g = i32c(te, groups);
            let per_group_out = te.floordiv(num_filter, g);
            let q = te.floordiv(ff, per_group_out);
            let g = i32c(te, groups);
            let per_group_in = te.floordiv(in_channel, g);
            let m = te.mul(q, per_group_in);
            te.add(m, rcv)
        };
        let mut data_idx = vec![nn, chan];
        for i in 0..dim {
            let st = i32c(te, strides[i]);
            let ys = te.mul(a[2 + i], st);
            let dil = i32c(te, dilations[i]);
            let rd = te.mul(rs[i].1, dil);
            data_idx.push(te.add(ys, rd));
        }
        let data_idx: Vec<PrimExpr> = data_from.iter().map(|&i| data_idx[i]).collect();
        let mut kernel_idx = vec![ff, rcv];
        kernel_idx.extend(rs.iter().map(|r| r.1));
        let kernel_idx: Vec<PrimExpr> = kernel_from.iter().map(|&i| kernel_idx[i]).collect();
        let xv = te.load(temp, &data_idx);
        let xv = te.cast(out_dtype, xv);
        let wv = te.load(w, &kernel_idx);
        let wv = te.cast(out_dtype, wv);
        let source = te.mul(xv, wv);
        let mut axes = vec![rc];
        axes.extend(rs.iter().map(|r| r.0));
        let axes = red_from.iter().map(|&i| axes[i]).collect();
        Reduce { kind: CombinerKind::Sum, sources: vec![source], axes }
    })[0];
    Lowered::one(&format!("conv{dim}d"), t)
}
