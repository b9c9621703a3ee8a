//! Creation kernels: `full`, `zeros`, `ones` and their `_like` forms, `arange` (numpy's,
//! computed in `f64` and then converted, as TVM folds constant ranges), `eye`,
//! `eye_like`, `tril`, `triu`.

use relax_ir::DataType;
use relax_ir::op::{OpId, ops};

use super::{Kernel, KernelArgs};
use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, numel};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::FULL | ops::FULL_LIKE | ops::ZEROS | ops::ZEROS_LIKE | ops::ONES | ops::ONES_LIKE => full,
        ops::ARANGE => arange,
        ops::EYE | ops::EYE_LIKE => eye,
        ops::TRIL | ops::TRIU => trilu,
        _ => return None,
    })
}

fn full(k: &KernelArgs<'_>) -> RunResult<Value> {
    let like = matches!(k.op, ops::ZEROS_LIKE | ops::ONES_LIKE | ops::FULL_LIKE);
    let (shape, base_dtype) = if like {
        let x = k.tensor(0)?;
        (x.shape.clone(), Some(x.dtype))
    } else {
        (k.shape(0)?, None)
    };
    let fill = match k.op {
        ops::ZEROS | ops::ZEROS_LIKE => Scalar::float(DataType::FLOAT32, 0.0),
        ops::ONES | ops::ONES_LIKE => Scalar::float(DataType::FLOAT32, 1.0),
        _ => k.scalar(1)?,
    };
    let dtype = k
        .attr_dtype("dtype")
        .or(k.out_dtype())
        .or(if matches!(k.op, ops::FULL | ops::FULL_LIKE) { base_dtype.or(Some(fill.dtype())) } else { base_dtype })
        .ok_or_else(|| RunError::new("the result dtype is not known"))?;
    let v = fill.cast(dtype);
    Ok(Value::Tensor(Tensor::from_scalars(&shape, dtype, std::iter::repeat_n(v, numel(&shape)))))
}

fn arange(k: &KernelArgs<'_>) -> RunResult<Value> {
    let start = k.scalar(0)?;
    let end = k.scalar(1)?;
    let step = k.scalar(2)?;
    let all_int = [start, end, step].iter().all(|s| !s.is_float());
    let dtype =
        k.attr_dtype("dtype").or(k.out_dtype()).unwrap_or(if all_int { DataType::INT64 } else { DataType::FLOAT32 });
    let (a, b, s) = (start.as_f64(), end.as_f64(), step.as_f64());
    if s == 0.0 {
        return Err(RunError::new("the step is 0"));
    }
    let n = ((b - a) / s).ceil().max(0.0) as usize;
    let vals = (0..n).map(|i| Scalar::Float(a + s * i as f64, DataType::FLOAT64).cast(dtype));
    Ok(Value::Tensor(Tensor::from_scalars(&[n as i64], dtype, vals.collect::<Vec<_>>())))
}

fn eye(k: &KernelArgs<'_>) -> RunResult<Value> {
    let (n, m, kk, dtype) = if k.op == ops::EYE_LIKE {
        let x = k.tensor(0)?;
        if x.shape.len() != 2 {
            return Err(RunError::new("the input is not 2-d"));
        }
        (x.shape[0], x.shape[1], k.scalar(1)?.as_i64(), k.attr_dtype("dtype").unwrap_or(x.dtype))
    } else {
        let dt = k.attr_dtype("dtype").unwrap_or(DataType::FLOAT32);
        (k.scalar(0)?.as_i64(), k.scalar(1)?.as_i64(), k.scalar(2)?.as_i64(), dt)
    };
    let vals = (0..n * m).map(|f| Scalar::int(dtype, i64::from(f / m == f % m - kk)));
    Ok(Value::Tensor(Tensor::from_scalars(&[n, m], dtype, vals.collect::<Vec<_>>())))
}

fn trilu(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let kk = k.scalar(1)?.as_i64();
    let upper = k.op == ops::TRIU;
    let nd = x.shape.len();
    if nd < 2 {
        return Err(RunError::new("the input has fewer than 2 dims"));
    }
    let (rows, cols) = (x.shape[nd - 2], x.shape[nd - 1]);
    let zero = Scalar::int(x.dtype, 0);
    let vals = x.scalars().into_iter().enumerate().map(|(f, v)| {
        let f = f as i64;
        let (r, c) = ((f / cols.max(1)) % rows.max(1), f % cols.max(1));
        let keep = if upper { r <= c - kk } else { r >= c - kk };
        if keep { v } else { zero }
    });
    Ok(Value::Tensor(Tensor::from_scalars(&x.shape, x.dtype, vals.collect::<Vec<_>>())))
}
