//! Transposed convolutions (`legalize_ops/nn.py`; TOPI's `nn/conv1d_transpose.py`,
//! `nn/conv2d_transpose.py`, `nn/dilate.py`).
//!
//! `nn.conv1d_transpose` (layouts `NCW`/`IOW`), `nn.conv2d_transpose` (`NCHW`/`IOHW`)
//! and `nn.conv3d_transpose` (`NCDHW`/`IODHW`) become `conv<d>d_transpose`:
//! 1. the input dilated by the strides (`data_dilate`: `x[i // s]` where `i % s == 0`,
//!    else 0) and padded by `k - 1 - pad` before and `k - 1 - pad + output_padding`
//!    after (`data_pad`);
//! 2. the kernel flipped and its channel dims swapped (`kernel` for 1-d,
//!    `kernel_transform` otherwise);
//! 3. a direct convolution of stride 1 (`compute`, axes `b, c, (d, h,) w`, reductions
//!    `dc, (dd, dh,) dw`), per group when `groups > 1`.
//!
//! Kernel spatial dims must be static (the paddings are Python integers in TOPI). As in
//! TVM 0.25, other layouts, an output layout other than the input's, and dilations other
//! than 1 are not legalized.

use relax_ir::attrs::complete_ints;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr};

use super::conv::fit_int32;
use super::cx::Cx;
use super::manipulate::pad_te;
use super::te::{Axes, CombinerKind, RAxis, Reduce, Te, Tensor};
use super::{Legalize, Lowered};
use relax_ir::arith::tvm::simplify;

/// The legalization of a transposed convolution (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_CONV1D_TRANSPOSE => |cx| conv_transpose(cx, 1),
        ops::NN_CONV2D_TRANSPOSE => |cx| conv_transpose(cx, 2),
        ops::NN_CONV3D_TRANSPOSE => |cx| conv_transpose(cx, 3),
        _ => return None,
    })
}

fn i32c(te: &mut Te, v: i64) -> PrimExpr {
    te.pool.int(DataType::INT32, v)
}

/// `topi.nn.dilate(x, strides, 0.0, name)`.
fn dilate(te: &mut Te, x: Tensor, strides: &[i64], name: &str) -> Tensor {
    let shape = te.shape(x);
    let out: Vec<PrimExpr> = shape
        .iter()
        .zip(strides)
        .map(|(&d, &s)| {
            let one = i32c(te, 1);
            let a = te.sub(d, one);
            let sc = i32c(te, s);
            let a = te.mul(a, sc);
            let one = i32c(te, 1);
            let a = te.add(a, one);
            simplify(&mut te.pool, a)
        })
        .collect();
    let dtype = te.dtype(x);
    te.compute(name, out, Axes::I, |te, idx| {
        let mut index = Vec::new();
        let mut not_zero = Vec::new();
        for (i, &s) in strides.iter().enumerate() {
            if s == 1 {
                index.push(idx[i]);
            } else {
                let sc = i32c(te, s);
                index.push(te.floordiv(idx[i], sc));
                let m = te.floormod(idx[i], sc);
                let zero = i32c(te, 0);
                not_zero.push(te.bin(BinOp::Eq, m, zero));
            }
        }
        let v = te.load(x, &index);
        if not_zero.is_empty() {
            return v;
        }
        let mut all = not_zero[0];
        for &c in &not_zero[1..] {
            all = te.bin(BinOp::And, all, c);
        }
        let z = te.const_f(dtype, 0.0);
        te.if_then_else(all, v, z)
    })
}

fn conv_transpose(cx: &mut Cx, dim: usize) -> Option<Lowered> {
    let (dl, kl) = match dim {
        1 => ("NCW", "IOW"),
        2 => ("NCHW", "IOHW"),
        _ => ("NCDHW", "IODHW"),
    };
    let data_layout = cx.attr("data_layout").and_then(|v| v.as_str()).unwrap_or(dl);
    let kernel_layout = cx.attr("kernel_layout").and_then(|v| v.as_str()).unwrap_or(kl);
    let out_layout = cx.attr("out_layout").and_then(|v| v.as_str()).unwrap_or(data_layout);
    if data_layout != dl || kernel_layout != kl || out_layout != data_layout {
        return None;
    }
    let strides = complete_ints(cx.attr_ints("strides"), dim, 1);
    let padding = complete_ints(cx.attr_ints("padding"), 2 * dim, 0);
    let output_padding = complete_ints(cx.attr_ints("output_padding"), dim, 0);
    let dilation = complete_ints(cx.attr_ints("dilation"), dim, 1);
    let groups = cx.attr_int("groups").unwrap_or(1);
    let out_dtype = cx.out_dtype()?;
    let x = cx.tensor(0)?;
    let w = cx.tensor(1)?;
    let te = &mut cx.te;
    if te.ndim(x) != dim + 2 || te.ndim(w) != dim + 2 || groups < 1 {
        return None;
    }
    if strides.iter().zip(&output_padding).any(|(s, o)| o >= s) {
        return None;
    }
    // TVM 0.25 does not legalize dilated transposed convolutions.
    if dilation.iter().any(|&d| d != 1) {
        return None;
    }
    let (xs, ws) = (te.shape(x), te.shape(w));
    let in_channels = xs[1];
    let out_c = ws[1];
    let k: Vec<i64> = ws[2..].iter().map(|&d| te.pool.as_int(d)).collect::<Option<_>>()?;
    if !fit_int32(&[&k, &strides, &padding, &output_padding]) {
        return None;
    }
    let mut s = vec![1, 1];
    s.extend(&strides);
    let data_dilate = dilate(te, x, &s, "data_dilate");
    let mut before = vec![0, 0];
    let mut after = vec![0, 0];
    for i in 0..dim {
        before.push(k[i] - 1 - padding[i]);
        after.push(k[i] - 1 - padding[dim + i] + output_padding[i]);
    }
    let data_pad = pad_te(te, data_dilate, &before, &after, 0.0, "data_pad");
    // The flipped kernel: (out_c, in_channels, k...) from (in_channels, out_c, k...).
    let mut kshape = vec![out_c, in_channels];
    kshape.extend_from_slice(&ws[2..]);
    let (kname, knames): (&str, &[&str]) = match (dim, groups > 1) {
        (1, _) => ("kernel", &["o", "i", "w"]),
        (2, false) => ("kernel_transform", &["o", "i", "h", "w"]),
        (2, true) => ("kernel_transform", &["i", "o", "h", "w"]),
        _ => ("kernel_transform", &["o", "i", "d", "h", "w"]),
    };
    let kt = te.compute(kname, kshape, Axes::Named(knames), |te, idx| {
        let mut index = vec![idx[1], idx[0]];
        for i in 0..dim {
            let c = i32c(te, k[i] - 1);
            index.push(te.sub(c, idx[2 + i]));
        }
        te.load(w, &index)
    });
    let ps = te.shape(data_pad);
    let mut out_shape = vec![xs[0]];
    out_shape.push(if groups > 1 {
        let g = i32c(te, groups);
        let oc = te.mul(out_c, g);
        simplify(&mut te.pool, oc)
    } else {
        simplify(&mut te.pool, out_c)
    });
    for i in 0..dim {
        let kc = i32c(te, k[i]);
        let a = te.sub(ps[2 + i], kc);
        let one = i32c(te, 1);
        let a = te.add(a, one);
        out_shape.push(simplify(&mut te.pool, a));
    }
    let out_channels = out_shape[1];
    let names: Vec<&str> = [&["b", "c"][..], &["d", "h", "w"][3 - dim..]].concat();
    let t = te.compute_reduce("compute", out_shape, Axes::Named(&names), |te, idx| {
        let g = i32c(te, groups);
        let dc_extent = if groups > 1 { te.floordiv(in_channels, g) } else { in_channels };
        let (dc, dcv) = te.reduce_axis("dc", dc_extent);
        let rnames = &["dd", "dh", "dw"][3 - dim..];
        let rs: Vec<(RAxis, PrimExpr)> = (0..dim)
            .map(|i| {
                let kc = i32c(te, k[i]);
                te.reduce_axis(rnames[i], kc)
            })
            .collect();
        let (chan, kchan) = if groups > 1 {
            let g = i32c(te, groups);
            let per_out = te.floordiv(out_channels, g);
            let q = te.floordiv(idx[1], per_out);
            let g = i32c(te, groups);
            let per_in = te.floordiv(in_channels, g);
            let m = te.mul(q, per_in);
            let chan = te.add(m, dcv);
            let g = i32c(te, groups);
            let per_out = te.floordiv(out_channels, g);
            (chan, te.floormod(idx[1], per_out))
        } else {
            (dcv, idx[1])
        };
        let mut di = vec![idx[0], chan];
        let mut ki = vec![kchan, chan];
        for (i, r) in rs.iter().enumerate() {
            di.push(te.add(idx[2 + i], r.1));
            ki.push(r.1);
        }
        let a = te.load(data_pad, &di);
        let a = te.cast(out_dtype, a);
        let b = te.load(kt, &ki);
        let b = te.cast(out_dtype, b);
        let source = te.mul(a, b);
        let mut axes = vec![dc];
        axes.extend(rs.iter().map(|r| r.0));
        Reduce { kind: CombinerKind::Sum, sources: vec![source], axes }
    })[0];
    Lowered::one(&format!("conv{dim}d_transpose"), t)
}
