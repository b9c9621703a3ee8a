//! `nn` kernels: `softmax`, `log_softmax`, `rms_norm`, `layer_norm` (the elementwise
//! activations are in [`super::elementwise`]), computed as TOPI's stages compute them.

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::elementwise::{broadcast_strides, for_each, unary_rule};
use super::reduce::{min_value, reduce};
use super::{Kernel, KernelArgs, norm_axis};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, numel};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_SOFTMAX | ops::NN_LOG_SOFTMAX => softmax,
        ops::NN_RMS_NORM => rms_norm,
        ops::NN_LAYER_NORM => layer_norm,
        _ => return None,
    })
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

/// The shape of `x` with the reduced axes kept as 1 (for broadcasting back).
fn keep_shape(shape: &[i64], axes: &[usize]) -> Vec<i64> {
    shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect()
}

/// Applies `f(x_i, r_i...)` where each `r` is a reduced tensor broadcast back to `x`'s shape.
fn with_reduced(
    x: &Tensor,
    reduced: &[&Tensor],
    axes: &[usize],
    out: DataType,
    mut f: impl FnMut(Scalar, &[Scalar]) -> RunResult<Scalar>,
) -> RunResult<Tensor> {
    let nd = x.shape.len();
    let ks = keep_shape(&x.shape, axes);
    let mut st = vec![crate::value::row_major_strides(&x.shape)];
    for _ in reduced {
        st.push(broadcast_strides(&ks, nd));
    }
    let xv = x.scalars();
    let rv: Vec<Vec<Scalar>> = reduced.iter().map(|r| r.scalars()).collect();
    let mut res = Vec::with_capacity(numel(&x.shape));
    let mut buf = vec![Scalar::bool(false); reduced.len()];
    for_each(&x.shape, &st, |_, o| {
        for (k, r) in rv.iter().enumerate() {
            buf[k] = r[o[k + 1]];
        }
        res.push(f(xv[o[0]], &buf)?);
        Ok(())
    })?;
    Ok(Tensor::from_scalars(&x.shape, out, res))
}

fn softmax(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let t = x.dtype;
    let axis = norm_axis(k.attr_int("axis").unwrap_or(-1), x.shape.len())?;
    let axes = [axis];
    let max = reduce(x, &axes, true, t, min_value(t), |a, v, _| bin(BinOp::Max, a, v))?;
    if k.op == ops::NN_LOG_SOFTMAX {
        let exp = with_reduced(x, &[&max], &axes, t, |v, r| unary_rule(ops::EXP, bin(BinOp::Sub, v, r[0])?))?;
        let expsum = reduce(&exp, &axes, true, t, Scalar::int(t, 0), |a, v, _| bin(BinOp::Add, a, v))?;
        let r = with_reduced(x, &[&max, &expsum], &axes, t, |v, r| {
            bin(BinOp::Sub, bin(BinOp::Sub, v, r[0])?, unary_rule(ops::LOG, r[1])?)
        })?;
        return Ok(Value::Tensor(r));
    }
    let exp = with_reduced(x, &[&max], &axes, t, |v, r| unary_rule(ops::EXP, bin(BinOp::Sub, v, r[0])?))?;
    let expsum = reduce(&exp, &axes, true, t, Scalar::int(t, 0), |a, v, _| bin(BinOp::Add, a, v))?;
    let r = with_reduced(&exp, &[&expsum], &axes, t, |v, r| bin(BinOp::Div, v, r[0]))?;
    Ok(Value::Tensor(r))
}

fn norm_axes(k: &KernelArgs<'_>, nd: usize) -> RunResult<Vec<usize>> {
    let mut v: Vec<usize> =
        k.attr_ints("axes").unwrap_or_else(|| vec![-1]).iter().map(|&a| norm_axis(a, nd)).collect::<RunResult<_>>()?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// A tensor of `w`'s values read at `x`'s positions along `axes` (weights of norms).
fn weight_at(x: &Tensor, w: &Tensor, axes: &[usize]) -> RunResult<Vec<Scalar>> {
    let nd = x.shape.len();
    let wshape: Vec<i64> = axes.iter().map(|&a| x.shape[a]).collect();
    if w.shape != wshape {
        return Err(RunError::new(format!(
            "the weight has shape {}, expected {}",
            crate::value::shape_text(&w.shape),
            crate::value::shape_text(&wshape)
        )));
    }
    let wst = crate::value::row_major_strides(&w.shape);
    let mut st = vec![0i64; nd];
    for (j, &a) in axes.iter().enumerate() {
        st[a] = wst[j];
    }
    let wv = w.scalars();
    let mut out = Vec::with_capacity(x.numel());
    for_each(&x.shape, &[st], |_, o| {
        out.push(wv[o[0]]);
        Ok(())
    })?;
    Ok(out)
}

fn rms_norm(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let w = k.tensor(1)?;
    let t = x.dtype;
    let f32t = DataType::FLOAT32;
    let axes = norm_axes(k, x.shape.len())?;
    let eps = Scalar::float(t, k.attr_f64("epsilon").unwrap_or(1e-5));
    let xf = super::elementwise::map(x, f32t, |v| Ok(v.cast(f32t)))?;
    let wv = weight_at(x, w, &axes)?;
    let sq = super::elementwise::map(&xf, f32t, |v| bin(BinOp::Mul, v, v))?;
    let sum = reduce(&sq, &axes, true, f32t, Scalar::int(f32t, 0), |a, v, _| bin(BinOp::Add, a, v))?;
    let mut extent = Scalar::float(f32t, 1.0);
    for &a in &axes {
        extent = bin(BinOp::Mul, extent, Scalar::int(DataType::INT64, x.shape[a]))?;
    }
    let rs = super::elementwise::map(&sum, f32t, |v| {
        unary_rule(ops::RSQRT, bin(BinOp::Add, bin(BinOp::Div, v, extent)?, eps)?)
    })?;
    let mut i = 0;
    let norm = with_reduced(&xf, &[&rs], &axes, f32t, |v, r| {
        let y = bin(BinOp::Mul, bin(BinOp::Mul, r[0], v)?, wv[i].cast(f32t))?;
        i += 1;
        Ok(y)
    })?;
    Ok(Value::Tensor(super::elementwise::map(&norm, t, |v| Ok(v.cast(t)))?))
}

fn layer_norm(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let gamma = k.tensor(1)?;
    let beta = k.tensor(2)?;
    let t = x.dtype;
    let f16 = t == DataType::FLOAT16;
    let rt = if f16 { DataType::FLOAT32 } else { t };
    let axes = norm_axes(k, x.shape.len())?;
    let xr = super::elementwise::map(x, rt, |v| Ok(v.cast(rt)))?;
    let sum = reduce(&xr, &axes, true, rt, Scalar::int(rt, 0), |a, v, _| bin(BinOp::Add, a, v))?;
    let mut extent = Scalar::float(rt, 1.0);
    for &a in &axes {
        extent = bin(BinOp::Mul, extent, Scalar::int(DataType::INT64, x.shape[a]))?;
    }
    let mean = super::elementwise::map(&sum, rt, |v| bin(BinOp::Div, v, extent))?;
    let dev2 = with_reduced(&xr, &[&mean], &axes, rt, |v, r| {
        let d = bin(BinOp::Sub, v, r[0])?;
        bin(BinOp::Mul, d, d)
    })?;
    let var_sum = reduce(&dev2, &axes, true, rt, Scalar::int(rt, 0), |a, v, _| bin(BinOp::Add, a, v))?;
    let eps = Scalar::float(rt, k.attr_f64("epsilon").unwrap_or(1e-5));
    let g = weight_at(x, gamma, &axes)?;
    let b = weight_at(x, beta, &axes)?;
    let mut i = 0;
    let r = with_reduced(x, &[&mean, &var_sum], &axes, t, |v, r| {
        let var = bin(BinOp::Div, r[1], extent)?;
        let d = bin(BinOp::Sub, v, r[0])?;
        let rs = unary_rule(ops::RSQRT, bin(BinOp::Add, var, eps)?)?;
        let mut ln = bin(BinOp::Mul, d, rs)?;
        if f16 {
            ln = ln.cast(DataType::FLOAT16);
        }
        let y = bin(BinOp::Add, bin(BinOp::Mul, ln, g[i])?, b[i])?;
        i += 1;
        Ok(y)
    })?;
    Ok(Value::Tensor(r))
}
