//! Reduction kernels: `sum`, `prod`, `max`, `min`, `mean`, `variance`, `std`, `argmax`,
//! `argmin`, as TOPI's `CommReduce` / `CommReduceIdx` compute them: the accumulator
//! starts at the combiner's identity and takes the elements in row-major order of the
//! reduced axes, at the precision of the dtype.

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::elementwise::{binary_rule, broadcast2};
use super::{Kernel, KernelArgs, norm_axis};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, numel, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::SUM | ops::PROD | ops::MAX | ops::MIN => simple,
        ops::MEAN => |k| {
            let (x, axes, keep) = args(k)?;
            Ok(Value::Tensor(mean(&x, &axes, keep)?))
        },
        ops::VARIANCE => |k| {
            let (x, axes, keep) = args(k)?;
            Ok(Value::Tensor(variance(&x, &axes, keep)?))
        },
        ops::STD => |k| {
            let (x, axes, keep) = args(k)?;
            let v = variance(&x, &axes, keep)?;
            Ok(Value::Tensor(super::elementwise::map(&v, v.dtype, |s| super::elementwise::unary_rule(ops::SQRT, s))?))
        },
        ops::ARGMAX | ops::ARGMIN => arg_reduce,
        _ => return None,
    })
}

/// The largest value of a type (TIR's `max_value`).
pub fn max_value(dt: DataType) -> Scalar {
    if dt.is_float() {
        let v = match (dt.code, dt.bits) {
            (relax_ir::TypeCode::Float, 64) => f64::MAX,
            (relax_ir::TypeCode::Float, 16) => 65504.0,
            (relax_ir::TypeCode::BFloat, 16) => 3.3895313892515355e38,
            _ => f64::from(f32::MAX),
        };
        return Scalar::Float(v, dt);
    }
    if dt.is_bool() {
        return Scalar::bool(true);
    }
    if dt.is_uint() {
        return Scalar::int(dt, if dt.bits >= 64 { -1 } else { (1i64 << dt.bits) - 1 });
    }
    Scalar::int(dt, if dt.bits >= 64 { i64::MAX } else { (1i64 << (dt.bits - 1)) - 1 })
}

/// The smallest value of a type (TIR's `min_value`).
pub fn min_value(dt: DataType) -> Scalar {
    if dt.is_float() {
        return Scalar::Float(-max_value(dt).as_f64(), dt);
    }
    if dt.is_bool() || dt.is_uint() {
        return Scalar::int(dt, 0);
    }
    Scalar::int(dt, if dt.bits >= 64 { i64::MIN } else { -(1i64 << (dt.bits - 1)) })
}

/// The input, the reduced axes (sorted, unique; all when `axis` is `None`) and `keepdims`.
fn args(k: &KernelArgs<'_>) -> RunResult<(Tensor, Vec<usize>, bool)> {
    let x = k.tensor(0)?.clone();
    let nd = x.shape.len();
    let mut axes: Vec<usize> = match k.attr_ints("axis") {
        Some(a) => a.iter().map(|&v| norm_axis(v, nd)).collect::<RunResult<_>>()?,
        None => (0..nd).collect(),
    };
    axes.sort_unstable();
    axes.dedup();
    Ok((x, axes, k.attr_bool("keepdims").unwrap_or(false)))
}

/// The output shape of a reduction.
fn target(shape: &[i64], axes: &[usize], keep: bool) -> Vec<i64> {
    (0..shape.len()).filter_map(|i| if axes.contains(&i) { keep.then_some(1) } else { Some(shape[i]) }).collect()
}

/// Reduces `axes` of `x` with `combine(acc, element)` from `init`, element by element in
/// row-major order of the reduced axes.
pub fn reduce(
    x: &Tensor,
    axes: &[usize],
    keep: bool,
    out: DataType,
    init: Scalar,
    mut combine: impl FnMut(Scalar, Scalar, i64) -> RunResult<Scalar>,
) -> RunResult<Tensor> {
    let vals = x.scalars();
    if x.shape.is_empty() {
        return Ok(Tensor::from_scalars(&[], out, vals));
    }
    let st = row_major_strides(&x.shape);
    let kept: Vec<usize> = (0..x.shape.len()).filter(|i| !axes.contains(i)).collect();
    let kept_shape: Vec<i64> = kept.iter().map(|&i| x.shape[i]).collect();
    let red_shape: Vec<i64> = axes.iter().map(|&i| x.shape[i]).collect();
    let n_out = numel(&kept_shape);
    let n_red = numel(&red_shape);
    let kst = row_major_strides(&kept_shape);
    let rst = row_major_strides(&red_shape);
    let mut res = Vec::with_capacity(n_out);
    for o in 0..n_out {
        let mut base = 0i64;
        for (j, &i) in kept.iter().enumerate() {
            base += (o as i64 / kst[j]) % kept_shape[j].max(1) * st[i];
        }
        let mut acc = init;
        for r in 0..n_red {
            let mut off = base;
            for (j, &i) in axes.iter().enumerate() {
                off += (r as i64 / rst[j]) % red_shape[j].max(1) * st[i];
            }
            acc = combine(acc, vals[off as usize], r as i64)?;
        }
        res.push(acc);
    }
    Ok(Tensor::from_scalars(&target(&x.shape, axes, keep), out, res))
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

/// `sum` with TOPI's identity and combiner.
pub fn sum(x: &Tensor, axes: &[usize], keep: bool) -> RunResult<Tensor> {
    reduce(x, axes, keep, x.dtype, Scalar::int(x.dtype, 0), |a, v, _| bin(BinOp::Add, a, v))
}

fn simple(k: &KernelArgs<'_>) -> RunResult<Value> {
    let (x, axes, keep) = args(k)?;
    let t = x.dtype;
    let r = match k.op {
        ops::SUM => sum(&x, &axes, keep)?,
        ops::PROD => reduce(&x, &axes, keep, t, Scalar::int(t, 1), |a, v, _| bin(BinOp::Mul, a, v))?,
        ops::MAX => reduce(&x, &axes, keep, t, min_value(t), |a, v, _| bin(BinOp::Max, a, v))?,
        _ => reduce(&x, &axes, keep, t, max_value(t), |a, v, _| bin(BinOp::Min, a, v))?,
    };
    Ok(Value::Tensor(r))
}

/// `_te_mean`: the sum divided by the number of reduced elements.
pub fn mean(x: &Tensor, axes: &[usize], keep: bool) -> RunResult<Tensor> {
    let count: i64 = axes.iter().map(|&a| x.shape[a]).product();
    let s = sum(x, axes, keep)?;
    let c = Scalar::int(DataType::INT64, count);
    super::elementwise::map(&s, s.dtype, |v| bin(BinOp::Div, v, c))
}

/// `_te_variance`: `mean((x - mean(x, keepdims=True))^2)`.
pub fn variance(x: &Tensor, axes: &[usize], keep: bool) -> RunResult<Tensor> {
    let m = mean(x, axes, true)?;
    let dev = broadcast2(x, &m, x.dtype, |a, b| binary_rule(ops::SUBTRACT, a, b))?;
    let sq = broadcast2(&dev, &dev, x.dtype, |a, b| binary_rule(ops::MULTIPLY, a, b))?;
    mean(&sq, axes, keep)
}

/// `argmax` / `argmin` (TOPI's combiner: the first index of the extreme value).
fn arg_reduce(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let nd = x.shape.len();
    if nd == 0 {
        return Err(RunError::new("the input is 0-d"));
    }
    let axes: Vec<usize> = match k.attr_int("axis") {
        Some(a) => vec![norm_axis(a, nd)?],
        None => (0..nd).collect(),
    };
    let keep = k.attr_bool("keepdims").unwrap_or(false);
    let is_max = k.op == ops::ARGMAX;
    let t = x.dtype;
    let init_val = if is_max { min_value(t) } else { max_value(t) };
    let mut best = init_val;
    let mut best_idx = -1i64;
    let idx = reduce(x, &axes, keep, DataType::INT64, Scalar::int(DataType::INT64, -1), |acc, v, r| {
        if r == 0 {
            best = init_val;
            best_idx = -1;
        }
        let better = if is_max { bin(BinOp::Gt, best, v)? } else { bin(BinOp::Lt, best, v)? };
        let same = bin(BinOp::Eq, best, v)?;
        let keep_acc = better.is_true() || (same.is_true() && best_idx < r);
        if !keep_acc {
            best_idx = r;
        }
        if !better.is_true() {
            best = v;
        }
        let _ = acc;
        Ok(Scalar::int(DataType::INT64, best_idx))
    })?;
    Ok(Value::Tensor(idx))
}
