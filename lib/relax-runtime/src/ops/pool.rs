//! Pooling kernels: `nn.max_pool{1,2,3}d`, `nn.avg_pool{1,2,3}d` and
//! `nn.adaptive_avg_pool{1,2,3}d`, as TOPI's `pool_impl_nd` and `adaptive_pool_impl`
//! compute them (see `relax-transform`'s `legalize/pool.rs`).
//!
//! * max: the maximum, from the dtype's lowest value, over the window axes nested in
//!   order (`rv0, rv1, ...`), padded positions reading the lowest value;
//! * avg (float dtypes): the sum from zero in the dtype (padded positions read zero),
//!   divided by the number of elements the window covers, with or without the padding
//!   (`count_include_pad`), computed with TOPI's integer formula;
//! * adaptive avg (float dtypes): the sum over `[o * in // out, ceil((o + 1) * in /
//!   out))` divided by that window's size (windows of different sizes included).
//!
//! `ceil_mode` pads the end by `stride - 1` more, as TOPI does. Layouts are those of the
//! letters `N`, `C`, `D`, `H`, `W`; other cases run through the legalization.

use relax_ir::attrs::complete_ints;
use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::reduce::min_value;
use super::{Kernel, KernelArgs, unsupported};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_MAX_POOL1D => |k| pool(k, 1, true),
        ops::NN_MAX_POOL2D => |k| pool(k, 2, true),
        ops::NN_MAX_POOL3D => |k| pool(k, 3, true),
        ops::NN_AVG_POOL1D => |k| pool(k, 1, false),
        ops::NN_AVG_POOL2D => |k| pool(k, 2, false),
        ops::NN_AVG_POOL3D => |k| pool(k, 3, false),
        ops::NN_ADAPTIVE_AVG_POOL1D => |k| adaptive(k, 1),
        ops::NN_ADAPTIVE_AVG_POOL2D => |k| adaptive(k, 2),
        ops::NN_ADAPTIVE_AVG_POOL3D => |k| adaptive(k, 3),
        _ => return None,
    })
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

/// The positions of the pooled dims in the layout, `None` for a layout not handled.
fn pool_axes(k: &KernelArgs<'_>, x: &Tensor, dim: usize) -> Option<Vec<usize>> {
    let layout = match k.attr("layout")? {
        relax_ir::AttrValue::Str(s) => s.as_str(),
        _ => return None,
    };
    let out = match k.attr("out_layout") {
        Some(relax_ir::AttrValue::Str(s)) => s.as_str(),
        _ => layout,
    };
    if out != layout
        || layout.len() != dim + 2
        || x.shape.len() != dim + 2
        || !layout.chars().all(|c| "NCDHW".contains(c))
    {
        return None;
    }
    let letters = &"DHW"[3 - dim..];
    letters.chars().map(|c| layout.find(c)).collect()
}

/// Visits every index of `shape` in row-major order.
fn each_index(shape: &[i64], mut f: impl FnMut(&[i64]) -> RunResult<()>) -> RunResult<()> {
    if shape.iter().any(|&d| d <= 0) {
        return Ok(());
    }
    let mut idx = vec![0i64; shape.len()];
    loop {
        f(&idx)?;
        let mut pos = shape.len();
        loop {
            if pos == 0 {
                return Ok(());
            }
            pos -= 1;
            idx[pos] += 1;
            if idx[pos] < shape[pos] {
                break;
            }
            idx[pos] = 0;
        }
    }
}

fn pool(k: &KernelArgs<'_>, dim: usize, max: bool) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let Some(axes) = pool_axes(k, x, dim) else { return Err(unsupported()) };
    let dtype = x.dtype;
    if !max && !dtype.is_float() {
        return Err(unsupported());
    }
    let kernel = complete_ints(k.attr_ints("pool_size"), dim, 1);
    let stride = complete_ints(k.attr_ints("strides"), dim, 1);
    let dilation = complete_ints(k.attr_ints("dilation"), dim, 1);
    let padding = complete_ints(k.attr_ints("padding"), 2 * dim, 0);
    let ceil_mode = k.attr_bool("ceil_mode").unwrap_or(false);
    let count_include_pad = k.attr_bool("count_include_pad").unwrap_or(false);
    // Attributes beyond `int32` are not legalized (the window arithmetic's type); the
    // legalization reports those.
    let fit = |v: &i64| i32::try_from(*v).is_ok();
    if !kernel.iter().chain(&stride).chain(&dilation).chain(&padding).all(fit)
        || kernel.iter().chain(&stride).chain(&dilation).any(|&v| v < 1)
        || padding.iter().any(|&p| p < 0)
    {
        return Err(unsupported());
    }
    let shape = &x.shape;
    let mut out_shape = shape.clone();
    let mut offset = vec![0; dim];
    let mut pad_tail = padding[dim..].to_vec();
    for i in 0..dim {
        let ii = axes[i];
        if ceil_mode {
            offset[i] = stride[i] - 1;
            pad_tail[i] += offset[i];
        }
        let kd = (kernel[i] - 1) * dilation[i];
        let raw = (shape[ii] - kd - 1 + padding[i] + pad_tail[i]).div_euclid(stride[i]) + 1;
        let n = if ceil_mode && (raw - 1) * stride[i] >= shape[ii] + padding[i] { raw - 1 } else { raw };
        if n < 0 {
            return Err(unsupported());
        }
        out_shape[axes[i]] = n;
    }
    let xv = x.scalars();
    let xst = row_major_strides(shape);
    let fill = if max { min_value(dtype) } else { Scalar::int(dtype, 0) };
    let Some(window) = kernel.iter().try_fold(1i64, |a, &b| a.checked_mul(b)) else { return Err(unsupported()) };
    let mut res = Vec::with_capacity(out_shape.iter().product::<i64>().max(0) as usize);
    let mut r = vec![0i64; dim];
    each_index(&out_shape, |o| {
        let mut base = 0i64;
        for (d, &v) in o.iter().enumerate() {
            if !axes.contains(&d) {
                base += v * xst[d];
            }
        }
        let mut acc = fill;
        r.iter_mut().for_each(|v| *v = 0);
        for _ in 0..window {
            let mut off = base;
            let mut inside = true;
            for i in 0..dim {
                let c = o[axes[i]] * stride[i] + r[i] * dilation[i] - padding[i];
                if c < 0 || c >= shape[axes[i]] {
                    inside = false;
                }
                off += c * xst[axes[i]];
            }
            let v = if inside { xv[off as usize] } else { fill };
            acc = if max { bin(BinOp::Max, acc, v)? } else { bin(BinOp::Add, acc, v)? };
            for i in (0..dim).rev() {
                r[i] += 1;
                if r[i] < kernel[i] {
                    break;
                }
                r[i] = 0;
            }
        }
        if !max {
            let mut num_el: i64 = 1;
            for i in 0..dim {
                let ii = axes[i];
                let (s, d) = (stride[i], dilation[i]);
                let start = o[ii] * s - padding[i];
                let end = start + (kernel[i] - 1) * d;
                let count = if count_include_pad {
                    let end = end.min(shape[ii] + pad_tail[i] - 1 - offset[i]);
                    (end - start) / d + 1
                } else {
                    let jumps = ((d - 1 - start) / d).max(0);
                    let end = end.min(shape[ii] - 1);
                    let first = start + d * jumps;
                    (end - first) / d + 1
                };
                num_el = num_el.wrapping_mul(count);
            }
            if !count_include_pad {
                num_el = num_el.max(1);
            }
            acc = bin(BinOp::Div, acc, Scalar::int(DataType::INT32, num_el))?;
        }
        res.push(acc);
        Ok(())
    })?;
    Ok(Value::Tensor(Tensor::from_scalars(&out_shape, dtype, res)))
}

fn adaptive(k: &KernelArgs<'_>, dim: usize) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let Some(axes) = pool_axes(k, x, dim) else { return Err(unsupported()) };
    let dtype = x.dtype;
    if !dtype.is_float() {
        return Err(unsupported());
    }
    let in_size: Vec<i64> = axes.iter().map(|&a| x.shape[a]).collect();
    let out_size = match k.attr_ints("output_size") {
        None => in_size.clone(),
        Some(s) => complete_ints(Some(s), dim, 1),
    };
    if (0..dim).any(|i| out_size[i] < 1 || in_size[i] < 0) {
        return Err(unsupported());
    }
    let mut out_shape = x.shape.clone();
    for i in 0..dim {
        out_shape[axes[i]] = out_size[i];
    }
    let xv = x.scalars();
    let xst = row_major_strides(&x.shape);
    let mut res = Vec::with_capacity(out_shape.iter().product::<i64>().max(0) as usize);
    let mut r = vec![0i64; dim];
    each_index(&out_shape, |o| {
        let mut base = 0i64;
        for (d, &v) in o.iter().enumerate() {
            if !axes.contains(&d) {
                base += v * xst[d];
            }
        }
        // The window `[o * in // out, ceil((o + 1) * in / out))` of each pooled axis.
        let first: Vec<i64> = (0..dim).map(|i| (o[axes[i]] * in_size[i]).div_euclid(out_size[i])).collect();
        let sizes: Vec<i64> = (0..dim)
            .map(|i| ((o[axes[i]] + 1) * in_size[i] + out_size[i] - 1).div_euclid(out_size[i]) - first[i])
            .collect();
        let mut factor = Scalar::int(dtype, 1);
        for &s in &sizes {
            factor = bin(BinOp::Mul, factor, Scalar::int(DataType::INT32, s))?;
        }
        let window: i64 = sizes.iter().product();
        let mut acc = Scalar::int(dtype, 0);
        r.iter_mut().for_each(|v| *v = 0);
        for _ in 0..window {
            let mut off = base;
            for i in 0..dim {
                off += (first[i] + r[i]) * xst[axes[i]];
            }
            let v = *xv.get(off as usize).ok_or_else(|| RunError::new("adaptive pool window out of bounds"))?;
            acc = bin(BinOp::Add, acc, v)?;
            for i in (0..dim).rev() {
                r[i] += 1;
                if r[i] < sizes[i] {
                    break;
                }
                r[i] = 0;
            }
        }
        res.push(bin(BinOp::Div, acc, factor)?);
        Ok(())
    })?;
    Ok(Value::Tensor(Tensor::from_scalars(&out_shape, dtype, res)))
}
