//! Scans and sorts, which TVM lowers through dispatch passes rather than legalization:
//! `cumsum`, `cumprod` (sequential accumulation in the result dtype; `exclusive` starts
//! from the identity; no axis means the flattened input), `sort` and `argsort` (stable,
//! ascending or descending, along one axis).

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::{Kernel, KernelArgs, norm_axis};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::CUMSUM | ops::CUMPROD => scan,
        ops::SORT | ops::ARGSORT => sort,
        ops::TOPK => topk,
        _ => return None,
    })
}

/// `(outer, dim, inner)` of a tensor split at `axis`.
fn split_at(shape: &[i64], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().map(|&d| d as usize).product();
    let inner = shape[axis + 1..].iter().map(|&d| d as usize).product();
    (outer, shape[axis] as usize, inner)
}

fn scan(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let dt = k.attr_dtype("dtype").unwrap_or(x.dtype);
    let (x, axis) = match k.attr_int("axis") {
        Some(a) => (x.clone(), norm_axis(a, x.shape.len())?),
        None => (Tensor { shape: vec![x.numel() as i64], ..x.deep_copy() }, 0),
    };
    let prod = k.op == ops::CUMPROD;
    let exclusive = k.attr_bool("exclusive").unwrap_or(false);
    let (op, id) = if prod { (BinOp::Mul, Scalar::int(dt, 1)) } else { (BinOp::Add, Scalar::int(dt, 0)) };
    let v = x.scalars();
    let mut out = vec![id; v.len()];
    let (outer, dim, inner) = split_at(&x.shape, axis);
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = id;
            for d in 0..dim {
                let at = (o * dim + d) * inner + i;
                let next = binary(op, acc, v[at].cast(dt)).map_err(RunError::new)?;
                out[at] = if exclusive { acc } else { next };
                acc = next;
            }
        }
    }
    Ok(Value::Tensor(Tensor::from_scalars(&x.shape, dt, out)))
}

fn sort(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let axis = norm_axis(k.attr_int("axis").unwrap_or(-1), x.shape.len())?;
    let desc = k.attr_bool("descending").unwrap_or(false);
    let arg = k.op == ops::ARGSORT;
    let idt = k.attr_dtype("dtype").unwrap_or(DataType::INT32);
    let v = x.scalars();
    let (outer, dim, inner) = split_at(&x.shape, axis);
    let mut out = v.clone();
    let mut idx_out = vec![Scalar::int(idt, 0); v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |d: usize| (o * dim + d) * inner + i;
            let perm = order(dim, desc, |d| v[at(d)].as_f64());
            for (d, &src) in perm.iter().enumerate() {
                out[at(d)] = v[at(src)];
                idx_out[at(d)] = Scalar::int(idt, src as i64);
            }
        }
    }
    if arg {
        return Ok(Value::Tensor(Tensor::from_scalars(&x.shape, idt, idx_out)));
    }
    Ok(Value::Tensor(Tensor::from_scalars(&x.shape, x.dtype, out)))
}

/// The permutation that stably sorts `dim` elements (`key(d)`), ascending or descending.
fn order(dim: usize, desc: bool, key: impl Fn(usize) -> f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..dim).collect();
    order.sort_by(|&a, &b| {
        let c = key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal);
        if desc { c.reverse() } else { c }
    });
    order
}

fn topk(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let axis = norm_axis(k.attr_int("axis").unwrap_or(-1), x.shape.len())?;
    let largest = k.attr_bool("largest").unwrap_or(true);
    let idt = k.attr_dtype("dtype").unwrap_or(DataType::INT32);
    let ret = k.attr("ret_type").and_then(relax_ir::AttrValue::as_str).unwrap_or("both").to_string();
    let v = x.scalars();
    let (outer, dim, inner) = split_at(&x.shape, axis);
    let kk = match k.attr_int("k").unwrap_or(1) {
        n if n < 1 || n as usize > dim => dim,
        n => n as usize,
    };
    let mut shape = x.shape.clone();
    shape[axis] = kk as i64;
    let mut vals = vec![Scalar::int(x.dtype, 0); outer * kk * inner];
    let mut idx = vec![Scalar::int(idt, 0); outer * kk * inner];
    for o in 0..outer {
        for i in 0..inner {
            let at = |d: usize| (o * dim + d) * inner + i;
            let perm = order(dim, largest, |d| v[at(d)].as_f64());
            for (d, &src) in perm.iter().take(kk).enumerate() {
                let to = (o * kk + d) * inner + i;
                vals[to] = v[at(src)];
                idx[to] = Scalar::int(idt, src as i64);
            }
        }
    }
    let values = Value::Tensor(Tensor::from_scalars(&shape, x.dtype, vals));
    let indices = Value::Tensor(Tensor::from_scalars(&shape, idt, idx));
    Ok(match ret.as_str() {
        "values" => values,
        "indices" => indices,
        _ => Value::tuple(vec![values, indices]),
    })
}
