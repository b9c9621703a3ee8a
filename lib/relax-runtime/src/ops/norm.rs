//! Normalization kernels: `nn.batch_norm` (inference and training), `nn.group_norm`,
//! `nn.instance_norm`, computed step by step as the TOPI stages of their legalization
//! (`relax-transform`'s `legalize/norm.rs`) compute them, each operation rounded to the
//! dtype.
//!
//! * `batch_norm`: `(x - mean) / sqrt(var + eps)`, times gamma, plus beta; in training
//!   the batch statistics (sums over every axis but `axis`, in row-major order, divided
//!   by the element count) replace the moving ones, which come back updated as
//!   `(1 - momentum) * moving + momentum * batch`; in inference they come back unchanged.
//! * `group_norm` / `instance_norm`: the sums of `x` and `x * x` over each group (or
//!   over `axes`) in one pass, then `(x - mean) * rsqrt(E[x²] - mean² + eps)`, times
//!   gamma, plus beta (both indexed by the channel).
//!
//! The kernels take float32 data; other dtypes (float16 reduces in float32 with casts in
//! between) run through the legalization.

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::elementwise::unary_rule;
use super::{Kernel, KernelArgs, norm_axis, unsupported};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, numel, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_BATCH_NORM => batch_norm,
        ops::NN_GROUP_NORM => group_norm,
        ops::NN_INSTANCE_NORM => instance_norm,
        _ => return None,
    })
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

/// The channel (index along `axis`) of every element of `shape`, in row-major order.
fn channels(shape: &[i64], axis: usize) -> Vec<usize> {
    let inner: i64 = shape[axis + 1..].iter().map(|&d| d.max(0)).product();
    let c = shape[axis].max(1);
    (0..numel(shape) as i64).map(|i| ((i / inner.max(1)) % c) as usize).collect()
}

/// A float32 tensor of shape `(C,)`, or the case is not one the kernel takes.
fn per_channel(t: &Tensor, c: i64) -> RunResult<Vec<Scalar>> {
    if t.dtype != DataType::FLOAT32 || t.shape != [c] {
        return Err(unsupported());
    }
    Ok(t.scalars())
}

fn batch_norm(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let t = x.dtype;
    if t != DataType::FLOAT32 || x.shape.is_empty() {
        return Err(unsupported());
    }
    let axis = norm_axis(k.attr_int("axis").unwrap_or(1), x.shape.len())?;
    let c = x.shape[axis];
    let gamma = per_channel(k.tensor(1)?, c)?;
    let beta = per_channel(k.tensor(2)?, c)?;
    let moving_mean = per_channel(k.tensor(3)?, c)?;
    let moving_var = per_channel(k.tensor(4)?, c)?;
    let eps = Scalar::float(DataType::FLOAT32, k.attr_f64("epsilon").unwrap_or(1e-5));
    let center = k.attr_bool("center").unwrap_or(true);
    let scale = k.attr_bool("scale").unwrap_or(true);
    let training = k.attr_bool("training").unwrap_or(false);
    let momentum = k.attr_f64("momentum").unwrap_or(0.1);
    let xv = x.scalars();
    let chan = channels(&x.shape, axis);
    let zero = Scalar::float(t, 0.0);
    let (mean, var) = if training {
        // Element count of the reduced axes, as the legalization's int32 divisor.
        let count: i64 = x.shape.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &d)| d).product();
        let count = Scalar::int(DataType::INT32, count).cast(t);
        let mut sum = vec![zero; c as usize];
        for (&v, &ch) in xv.iter().zip(&chan) {
            sum[ch] = bin(BinOp::Add, sum[ch], v)?;
        }
        let mean: Vec<Scalar> = sum.iter().map(|&s| bin(BinOp::Div, s, count)).collect::<RunResult<_>>()?;
        let mut sq = vec![zero; c as usize];
        for (&v, &ch) in xv.iter().zip(&chan) {
            let d = bin(BinOp::Sub, v, mean[ch])?;
            sq[ch] = bin(BinOp::Add, sq[ch], bin(BinOp::Mul, d, d)?)?;
        }
        let var: Vec<Scalar> = sq.iter().map(|&s| bin(BinOp::Div, s, count)).collect::<RunResult<_>>()?;
        (mean, var)
    } else {
        (moving_mean.clone(), moving_var.clone())
    };
    let sd: Vec<Scalar> =
        var.iter().map(|&v| unary_rule(ops::SQRT, bin(BinOp::Add, v, eps)?)).collect::<RunResult<_>>()?;
    let mut out = Vec::with_capacity(xv.len());
    for (&v, &ch) in xv.iter().zip(&chan) {
        let mut y = bin(BinOp::Div, bin(BinOp::Sub, v, mean[ch])?, sd[ch])?;
        if scale {
            y = bin(BinOp::Mul, y, gamma[ch])?;
        }
        if center {
            y = bin(BinOp::Add, y, beta[ch])?;
        }
        out.push(y);
    }
    let (new_mean, new_var) = if training {
        let keep = Scalar::float(DataType::FLOAT32, 1.0 - momentum);
        let mo = Scalar::float(DataType::FLOAT32, momentum);
        let upd = |moving: &[Scalar], batch: &[Scalar]| -> RunResult<Vec<Scalar>> {
            moving
                .iter()
                .zip(batch)
                .map(|(&m, &b)| bin(BinOp::Add, bin(BinOp::Mul, keep, m)?, bin(BinOp::Mul, mo, b)?))
                .collect()
        };
        (upd(&moving_mean, &mean)?, upd(&moving_var, &var)?)
    } else {
        (moving_mean, moving_var)
    };
    let stat = |v: Vec<Scalar>| Value::Tensor(Tensor::from_scalars(&[c], t, v));
    Ok(Value::tuple(vec![Value::Tensor(Tensor::from_scalars(&x.shape, t, out)), stat(new_mean), stat(new_var)]))
}

/// The shared part of `group_norm` and `instance_norm`: `shape` is the (possibly
/// reshaped) data shape, `axes` the reduced axes of it, `affine[i]` the channel of
/// element `i` for gamma and beta.
fn normalize(
    xv: &[Scalar],
    shape: &[i64],
    axes: &[usize],
    affine: &[usize],
    gamma: &[Scalar],
    beta: &[Scalar],
    eps: f64,
) -> RunResult<Vec<Scalar>> {
    let t = DataType::FLOAT32;
    let st = row_major_strides(shape);
    let kept: Vec<usize> = (0..shape.len()).filter(|i| !axes.contains(i)).collect();
    let kept_shape: Vec<i64> = kept.iter().map(|&i| shape[i]).collect();
    let kst = row_major_strides(&kept_shape);
    // The group of every element: its flat index among the kept axes.
    let key: Vec<usize> = (0..xv.len() as i64)
        .map(|i| kept.iter().enumerate().map(|(j, &a)| (i / st[a]) % shape[a].max(1) * kst[j]).sum::<i64>() as usize)
        .collect();
    let zero = Scalar::float(t, 0.0);
    let n = numel(&kept_shape).max(1);
    let (mut s, mut s2) = (vec![zero; n], vec![zero; n]);
    // Row-major order of the data is row-major order of the reduced axes in each group.
    for (&v, &g) in xv.iter().zip(&key) {
        s[g] = bin(BinOp::Add, s[g], v)?;
        s2[g] = bin(BinOp::Add, s2[g], bin(BinOp::Mul, v, v)?)?;
    }
    let mut extent = Scalar::float(t, 1.0);
    for &a in axes {
        extent = bin(BinOp::Mul, extent, Scalar::int(DataType::INT64, shape[a]))?;
    }
    let eps = Scalar::float(t, eps);
    let mut out = Vec::with_capacity(xv.len());
    for (i, (&v, &g)) in xv.iter().zip(&key).enumerate() {
        let mean = bin(BinOp::Div, s[g], extent)?;
        let ex2 = bin(BinOp::Div, s2[g], extent)?;
        let var = bin(BinOp::Sub, ex2, bin(BinOp::Mul, mean, mean)?)?;
        let r = unary_rule(ops::RSQRT, bin(BinOp::Add, var, eps)?)?;
        let y = bin(BinOp::Mul, bin(BinOp::Sub, v, mean)?, r)?;
        let ch = affine[i];
        out.push(bin(BinOp::Add, bin(BinOp::Mul, y, gamma[ch])?, beta[ch])?);
    }
    Ok(out)
}

fn group_norm(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    if x.dtype != DataType::FLOAT32 || x.shape.is_empty() {
        return Err(unsupported());
    }
    let nd = x.shape.len();
    let c = norm_axis(k.attr_int("channel_axis").ok_or_else(unsupported)?, nd)?;
    let groups = k.attr_int("num_groups").ok_or_else(unsupported)?;
    let channels_n = x.shape[c];
    if groups < 1 || channels_n % groups != 0 {
        return Err(unsupported());
    }
    let gamma = per_channel(k.tensor(1)?, channels_n)?;
    let beta = per_channel(k.tensor(2)?, channels_n)?;
    // The data reshaped with the channels split into (groups, channels per group).
    let mut shape = x.shape.clone();
    shape.splice(c..=c, [groups, channels_n / groups]);
    let mut axes = vec![c + 1];
    for a in k.attr_ints("axes").ok_or_else(unsupported)? {
        let a = norm_axis(a, nd)?;
        match a.cmp(&c) {
            std::cmp::Ordering::Less => axes.push(a),
            std::cmp::Ordering::Greater => axes.push(a + 1),
            std::cmp::Ordering::Equal => return Err(unsupported()),
        }
    }
    axes.sort_unstable();
    axes.dedup();
    let chan = channels(&x.shape, c);
    let eps = k.attr_f64("epsilon").unwrap_or(1e-5);
    let out = normalize(&x.scalars(), &shape, &axes, &chan, &gamma, &beta, eps)?;
    Ok(Value::Tensor(Tensor::from_scalars(&x.shape, x.dtype, out)))
}

fn instance_norm(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    if x.dtype != DataType::FLOAT32 || x.shape.is_empty() {
        return Err(unsupported());
    }
    let nd = x.shape.len();
    let c = norm_axis(k.attr_int("channel_axis").ok_or_else(unsupported)?, nd)?;
    let gamma = per_channel(k.tensor(1)?, x.shape[c])?;
    let beta = per_channel(k.tensor(2)?, x.shape[c])?;
    let mut axes: Vec<usize> =
        k.attr_ints("axes").ok_or_else(unsupported)?.iter().map(|&a| norm_axis(a, nd)).collect::<RunResult<_>>()?;
    axes.sort_unstable();
    axes.dedup();
    let chan = channels(&x.shape, c);
    let eps = k.attr_f64("epsilon").unwrap_or(1e-5);
    let out = normalize(&x.scalars(), &x.shape, &axes, &chan, &gamma, &beta, eps)?;
    Ok(Value::Tensor(Tensor::from_scalars(&x.shape, x.dtype, out)))
}
