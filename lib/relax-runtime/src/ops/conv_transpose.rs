//! Transposed convolution kernels: `nn.conv1d_transpose`, `nn.conv2d_transpose`,
//! `nn.conv3d_transpose` in the layouts the legalization takes (`NCW`/`IOW`,
//! `NCHW`/`IOHW`, `NCDHW`/`IODHW`), with strides, padding, output padding and groups
//! (dilation 1, as TVM 0.25).
//!
//! As TOPI's stages (see `relax-transform`'s `legalize/conv_transpose.rs`): the input is
//! dilated by the strides and padded by `k - 1 - pad` before and `k - 1 - pad +
//! output_padding` after (zeros), the kernel is flipped with its channel dims swapped,
//! and a stride-1 convolution sums, from zero in the output dtype, `x * w` with both
//! operands cast to it, over the input channels of the group (`dc`) and then the kernel
//! dims in order. Zeros of the dilation and padding are multiplied and added too, as in
//! the PrimFunc.

use relax_ir::attrs::complete_ints;
use relax_ir::op::{OpId, ops};
use relax_ir::{DataType, TypeCode};

use super::conv::Acc;
use super::{Kernel, KernelArgs, unsupported};
use crate::error::RunResult;
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_CONV1D_TRANSPOSE => |k| conv_transpose(k, 1),
        ops::NN_CONV2D_TRANSPOSE => |k| conv_transpose(k, 2),
        ops::NN_CONV3D_TRANSPOSE => |k| conv_transpose(k, 3),
        _ => return None,
    })
}

/// Everything the loops need.
struct Plan {
    dim: usize,
    xshape: Vec<i64>,
    wshape: Vec<i64>,
    out_shape: Vec<i64>,
    strides: Vec<i64>,
    /// Padding before the dilated input, per spatial dim (`k - 1 - pad`).
    before: Vec<i64>,
    groups: i64,
}

fn attr_str<'a>(k: &'a KernelArgs<'_>, key: &str) -> Option<&'a str> {
    k.attr(key).and_then(|v| v.as_str())
}

fn plan(k: &KernelArgs<'_>, x: &Tensor, w: &Tensor, dim: usize) -> Option<Plan> {
    let (dl, kl) = match dim {
        1 => ("NCW", "IOW"),
        2 => ("NCHW", "IOHW"),
        _ => ("NCDHW", "IODHW"),
    };
    let data_layout = attr_str(k, "data_layout").unwrap_or(dl);
    let kernel_layout = attr_str(k, "kernel_layout").unwrap_or(kl);
    let out_layout = attr_str(k, "out_layout").unwrap_or(data_layout);
    if data_layout != dl || kernel_layout != kl || out_layout != dl {
        return None;
    }
    if x.shape.len() != dim + 2 || w.shape.len() != dim + 2 {
        return None;
    }
    let strides = complete_ints(k.attr_ints("strides"), dim, 1);
    let padding = complete_ints(k.attr_ints("padding"), 2 * dim, 0);
    let output_padding = complete_ints(k.attr_ints("output_padding"), dim, 0);
    let dilation = complete_ints(k.attr_ints("dilation"), dim, 1);
    let groups = k.attr_int("groups").unwrap_or(1);
    let fit = |v: &i64| i32::try_from(*v).is_ok();
    if groups < 1
        || dilation.iter().any(|&d| d != 1)
        || strides.iter().any(|&s| s < 1)
        || strides.iter().zip(&output_padding).any(|(s, o)| o >= s)
        || !strides.iter().chain(&padding).chain(&output_padding).chain(&w.shape[2..]).all(fit)
    {
        return None;
    }
    let (cin, out_c) = (x.shape[1], w.shape[1]);
    if w.shape[0] != cin || cin % groups != 0 {
        return None;
    }
    let mut out_shape = vec![x.shape[0], out_c * groups];
    let mut before = Vec::new();
    for i in 0..dim {
        let kd = w.shape[2 + i];
        let b = kd - 1 - padding[i];
        let a = kd - 1 - padding[dim + i] + output_padding[i];
        let dilated = (x.shape[2 + i] - 1) * strides[i] + 1;
        let n = dilated + b + a - kd + 1;
        if n < 0 || b < 0 || a < 0 {
            return None;
        }
        before.push(b);
        out_shape.push(n);
    }
    Some(Plan { dim, xshape: x.shape.clone(), wshape: w.shape.clone(), out_shape, strides, before, groups })
}

fn run<A: Acc>(p: &Plan, xv: &[A], wv: &[A], zero: A, out: DataType) -> RunResult<Vec<Scalar>> {
    let dim = p.dim;
    let xs = row_major_strides(&p.xshape);
    let ws = row_major_strides(&p.wshape);
    let in_c = p.xshape[1];
    let out_channels = p.out_shape[1];
    let per_out = out_channels / p.groups;
    let per_in = in_c / p.groups;
    let red_c = if p.groups > 1 { per_in } else { in_c };
    let kdims = &p.wshape[2..];
    let kn: i64 = kdims.iter().product();
    let n_out: i64 = p.out_shape.iter().product();
    let os = row_major_strides(&p.out_shape);
    let mut res = Vec::with_capacity(n_out.max(0) as usize);
    let mut r = vec![0i64; dim];
    for o in 0..n_out.max(0) {
        let b = o / os[0];
        let c = (o / os[1]) % out_channels;
        let (q, kchan) = if p.groups > 1 { (c / per_out, c % per_out) } else { (0, c) };
        let mut acc = A::zero(out);
        for dc in 0..red_c {
            let chan = q * per_in + dc;
            for ki in 0..kn {
                let mut rem = ki;
                for i in (0..dim).rev() {
                    r[i] = rem % kdims[i];
                    rem /= kdims[i];
                }
                // The dilated, padded input at `y + r`, and the flipped kernel at `r`.
                let mut xo = Some(b * xs[0] + chan * xs[1]);
                let mut wo = chan * ws[0] + kchan * ws[1];
                for i in 0..dim {
                    let y = (o / os[2 + i]) % p.out_shape[2 + i];
                    let pos = y + r[i] - p.before[i];
                    let dilated = (p.xshape[2 + i] - 1) * p.strides[i] + 1;
                    if pos < 0 || pos >= dilated || pos % p.strides[i] != 0 {
                        xo = None;
                    } else if let Some(x) = xo.as_mut() {
                        *x += pos / p.strides[i] * xs[2 + i];
                    }
                    wo += (kdims[i] - 1 - r[i]) * ws[2 + i];
                }
                let xval = xo.map_or(zero, |at| xv[at as usize]);
                acc = A::mul_add(acc, xval, wv[wo as usize])?;
            }
        }
        res.push(acc.scalar(out));
    }
    Ok(res)
}

fn conv_transpose(k: &KernelArgs<'_>, dim: usize) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let w = k.tensor(1)?;
    let Some(p) = plan(k, x, w, dim) else { return Err(unsupported()) };
    let out = k.out_dtype().or_else(|| k.attr_dtype("out_dtype")).unwrap_or(x.dtype);
    if !out.is_float() {
        return Err(unsupported());
    }
    let cast = |t: &Tensor| -> Vec<Scalar> { t.scalars().into_iter().map(|s| s.cast(out)).collect() };
    // The dilation and padding hold zeros of the data's dtype, cast to `out` like the data.
    let zero = Scalar::float(x.dtype, 0.0).cast(out);
    let (xv, wv) = (cast(x), cast(w));
    let res = match (out.code, out.bits) {
        (TypeCode::Float, 32) => {
            let f = |v: &[Scalar]| v.iter().map(|&s| f32::of(s)).collect::<Vec<_>>();
            run(&p, &f(&xv), &f(&wv), f32::of(zero), out)?
        }
        (TypeCode::Float, 64) => {
            let f = |v: &[Scalar]| v.iter().map(|&s| f64::of(s)).collect::<Vec<_>>();
            run(&p, &f(&xv), &f(&wv), f64::of(zero), out)?
        }
        _ => run(&p, &xv, &wv, zero, out)?,
    };
    Ok(Value::Tensor(Tensor::from_scalars(&p.out_shape, out, res)))
}
