//! Data movement kernels: `reshape`, `permute_dims`, `expand_dims`, `squeeze`, `flatten`,
//! `concat`, `stack`, `split`, `strided_slice`, `take`, `broadcast_to`, `repeat`, `tile`,
//! `flip`. Results are fresh tensors (a copy), as the legalized kernels write them.

use relax_ir::AttrValue;
use relax_ir::op::{OpId, ops};

use super::elementwise::{broadcast_strides, for_each};
use super::{Kernel, KernelArgs, norm_axis};
use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, numel, row_major_strides, shape_text};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::RESHAPE => reshape,
        ops::PERMUTE_DIMS => permute_dims,
        ops::EXPAND_DIMS => expand_dims,
        ops::SQUEEZE => squeeze,
        ops::FLATTEN => |k| {
            let x = k.tensor(0)?;
            Ok(Value::Tensor(with_shape(x, &[x.numel() as i64])))
        },
        ops::CONCAT | ops::STACK => concat,
        ops::SPLIT => split,
        ops::STRIDED_SLICE => strided_slice,
        ops::TAKE => take,
        ops::BROADCAST_TO => broadcast_to,
        ops::REPEAT => repeat,
        ops::TILE => tile,
        ops::FLIP => flip,
        _ => return None,
    })
}

/// A copy of `x` with another shape (same element count).
fn with_shape(x: &Tensor, shape: &[i64]) -> Tensor {
    let t = x.deep_copy();
    Tensor { shape: shape.to_vec(), ..t }
}

/// Gathers `x`'s elements at `offsets` into a tensor of `shape`.
fn gather(x: &Tensor, shape: &[i64], offsets: impl IntoIterator<Item = usize>) -> Tensor {
    let v = x.scalars();
    Tensor::from_scalars(shape, x.dtype, offsets.into_iter().map(|o| v[o]))
}

/// Offsets of `x`'s elements read through `strides` over `shape`, plus `base`.
fn strided_offsets(shape: &[i64], strides: &[i64], base: i64) -> RunResult<Vec<usize>> {
    let mut out = Vec::with_capacity(numel(shape));
    for_each(shape, &[strides.to_vec()], |_, o| {
        out.push(o[0]);
        Ok(())
    })?;
    Ok(out.into_iter().map(|o| (o as i64 + base) as usize).collect())
}

fn reshape(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let mut s = k.shape(1)?;
    let known: i64 = s.iter().filter(|&&d| d != -1).product();
    if let Some(p) = s.iter().position(|&d| d == -1) {
        s[p] = if known == 0 { 0 } else { x.numel() as i64 / known };
    }
    if numel(&s) != x.numel() {
        return Err(RunError::new(format!("cannot reshape {} to {}", shape_text(&x.shape), shape_text(&s))));
    }
    Ok(Value::Tensor(with_shape(x, &s)))
}

fn permute_dims(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let nd = x.shape.len();
    let axes: Vec<usize> = match k.attr_ints("axes") {
        Some(a) => a.iter().map(|&v| norm_axis(v, nd)).collect::<RunResult<_>>()?,
        None => (0..nd).rev().collect(),
    };
    let st = row_major_strides(&x.shape);
    let shape: Vec<i64> = axes.iter().map(|&a| x.shape[a]).collect();
    let strides: Vec<i64> = axes.iter().map(|&a| st[a]).collect();
    Ok(Value::Tensor(gather(x, &shape, strided_offsets(&shape, &strides, 0)?)))
}

fn expand_dims(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let axes = k.attr_ints("axis").unwrap_or_default();
    let nd = x.shape.len() + axes.len();
    let mut pos: Vec<usize> = axes.iter().map(|&a| norm_axis(a, nd)).collect::<RunResult<_>>()?;
    pos.sort_unstable();
    let mut shape = Vec::with_capacity(nd);
    let mut src = x.shape.iter();
    for i in 0..nd {
        if pos.contains(&i) {
            shape.push(1);
        } else {
            shape.push(*src.next().ok_or_else(|| RunError::new("duplicate axes"))?);
        }
    }
    Ok(Value::Tensor(with_shape(x, &shape)))
}

fn squeeze(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let nd = x.shape.len();
    let shape: Vec<i64> = match k.attr_ints("axis") {
        Some(a) => {
            let axes: Vec<usize> = a.iter().map(|&v| norm_axis(v, nd)).collect::<RunResult<_>>()?;
            x.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
        }
        None => x.shape.iter().copied().filter(|&d| d != 1).collect(),
    };
    Ok(Value::Tensor(with_shape(x, &shape)))
}

fn concat(k: &KernelArgs<'_>) -> RunResult<Value> {
    let parts: Vec<Tensor> = match k.args.first() {
        Some(Value::Tuple(f)) => f
            .iter()
            .map(|v| match v {
                Value::Tensor(t) => Ok(t.clone()),
                other => Err(RunError::new(format!("a field is {}", other.describe()))),
            })
            .collect::<RunResult<_>>()?,
        _ => return Err(RunError::new("expected a tuple of tensors")),
    };
    let first = parts.first().ok_or_else(|| RunError::new("no tensors"))?;
    let stack = k.op == ops::STACK;
    let parts: Vec<Tensor> = if stack {
        let nd = first.shape.len() + 1;
        let axis = norm_axis(k.attr_int("axis").unwrap_or(0), nd)?;
        parts
            .iter()
            .map(|p| {
                let mut s = p.shape.clone();
                s.insert(axis, 1);
                Tensor { shape: s, ..p.clone() }
            })
            .collect()
    } else {
        parts
    };
    let first = &parts[0];
    let nd = first.shape.len();
    let axis = norm_axis(k.attr_int("axis").unwrap_or(0), nd)?;
    let mut shape = first.shape.clone();
    shape[axis] = parts.iter().map(|p| p.shape[axis]).sum();
    let outer: usize = first.shape[..axis].iter().map(|&d| d as usize).product();
    let mut vals = Vec::with_capacity(numel(&shape));
    let pv: Vec<Vec<Scalar>> = parts.iter().map(Tensor::scalars).collect();
    for o in 0..outer {
        for (p, v) in parts.iter().zip(&pv) {
            let inner: usize = p.shape[axis..].iter().map(|&d| d as usize).product();
            vals.extend_from_slice(&v[o * inner..(o + 1) * inner]);
        }
    }
    Ok(Value::Tensor(Tensor::from_scalars(&shape, first.dtype, vals)))
}

/// The sub-tensor `begin[axis]..begin+len` along `axis`.
fn slice_axis(x: &Tensor, axis: usize, begin: i64, len: i64, step: i64) -> RunResult<Tensor> {
    let st = row_major_strides(&x.shape);
    let mut shape = x.shape.clone();
    shape[axis] = len.max(0);
    let mut strides = st.clone();
    strides[axis] *= step;
    Ok(gather(x, &shape, strided_offsets(&shape, &strides, begin * st[axis])?))
}

fn split(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let axis = norm_axis(k.attr_int("axis").unwrap_or(0), x.shape.len())?;
    let dim = x.shape[axis];
    let bounds: Vec<i64> = match k.attr("indices_or_sections") {
        Some(AttrValue::List(v)) => {
            let mut b = vec![0];
            b.extend(v.iter().filter_map(AttrValue::as_int));
            b.push(dim);
            b
        }
        Some(v) => {
            let n = v.as_int().ok_or_else(|| RunError::new("bad `indices_or_sections`"))?.max(1);
            let piece = (dim + n - 1) / n;
            (0..=n).map(|i| (i * piece).min(dim)).collect()
        }
        None => return Err(RunError::new("missing `indices_or_sections`")),
    };
    let mut parts = Vec::new();
    for w in bounds.windows(2) {
        let (b, e) = (w[0].clamp(0, dim), w[1].clamp(0, dim));
        parts.push(Value::Tensor(slice_axis(x, axis, b, (e - b).max(0), 1)?));
    }
    if parts.len() == 1 {
        return Ok(parts.remove(0));
    }
    Ok(Value::tuple(parts))
}

fn ints(v: Option<&Value>) -> Vec<i64> {
    match v {
        Some(Value::Tuple(f)) => f.iter().filter_map(crate::relax::exec::scalar_of).map(Scalar::as_i64).collect(),
        Some(Value::Shape(s)) => s.clone(),
        _ => Vec::new(),
    }
}

fn strided_slice(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let nd = x.shape.len();
    let axes = ints(k.args.get(1));
    let begin = ints(k.args.get(2));
    let end = ints(k.args.get(3));
    let strides = ints(k.args.get(4));
    let assume_inbound = k.attr_bool("assume_inbound").unwrap_or(false);
    let st = row_major_strides(&x.shape);
    let mut shape = x.shape.clone();
    let mut rstrides = st.clone();
    let mut base = 0i64;
    for (i, &a) in axes.iter().enumerate() {
        let a = norm_axis(a, nd)?;
        let dim = x.shape[a];
        let step = strides.get(i).copied().unwrap_or(1);
        if step == 0 {
            return Err(RunError::new("a stride is 0"));
        }
        let norm = |v: i64, lo: i64, hi: i64| {
            let v = if v < 0 { v + dim } else { v };
            v.clamp(lo, hi)
        };
        let (b, e) = if assume_inbound {
            // TVM trusts the indices: no wrapping, no clamping.
            (begin[i], end[i])
        } else if step > 0 {
            (norm(begin[i], 0, dim), norm(end[i], 0, dim))
        } else {
            (norm(begin[i], -1, dim - 1), norm(end[i], -1, dim - 1))
        };
        let len = if step > 0 { (e - b + step - 1) / step } else { (b - e + (-step) - 1) / (-step) };
        let last = b + (len.max(1) - 1) * step;
        if len > 0 && (b < 0 || b >= dim || last < 0 || last >= dim) {
            return Err(RunError::new(format!(
                "with `assume_inbound=True`, the slice {b}..{e} step {step} of axis {a} is out of bounds for a dim of {dim}"
            )));
        }
        shape[a] = len.max(0);
        rstrides[a] = st[a] * step;
        base += b.max(0) * st[a];
    }
    Ok(Value::Tensor(gather(x, &shape, strided_offsets(&shape, &rstrides, base)?)))
}

fn take(k: &KernelArgs<'_>) -> RunResult<Value> {
    let a = k.tensor(0)?;
    let ind = k.tensor(1)?;
    let mode = k.attr("mode").and_then(AttrValue::as_str).unwrap_or("fast").to_string();
    let iv: Vec<i64> = ind.scalars().into_iter().map(Scalar::as_i64).collect();
    let fix = |i: i64, dim: i64| -> RunResult<i64> {
        match mode.as_str() {
            "clip" => Ok(i.max(0).min(dim - 1)),
            "wrap" => Ok(((i % dim) + dim) % dim),
            _ if i < 0 || i >= dim => Err(RunError::new(format!("index {i} out of bounds for a dim of {dim}"))),
            _ => Ok(i),
        }
    };
    let av = a.scalars();
    let Some(axis) = k.attr_int("axis") else {
        let size = a.numel() as i64;
        let mut out = Vec::with_capacity(iv.len());
        for &i in &iv {
            out.push(av[fix(i, size)? as usize]);
        }
        return Ok(Value::Tensor(Tensor::from_scalars(&ind.shape, a.dtype, out)));
    };
    let axis = norm_axis(axis, a.shape.len())?;
    let outer: usize = a.shape[..axis].iter().map(|&d| d as usize).product();
    let inner: usize = a.shape[axis + 1..].iter().map(|&d| d as usize).product();
    let dim = a.shape[axis];
    let mut shape = a.shape[..axis].to_vec();
    shape.extend_from_slice(&ind.shape);
    shape.extend_from_slice(&a.shape[axis + 1..]);
    let mut out = Vec::with_capacity(numel(&shape));
    for o in 0..outer {
        for &i in &iv {
            let i = fix(i, dim)? as usize;
            let start = (o * dim as usize + i) * inner;
            out.extend_from_slice(&av[start..start + inner]);
        }
    }
    Ok(Value::Tensor(Tensor::from_scalars(&shape, a.dtype, out)))
}

fn broadcast_to(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let s = k.shape(1)?;
    let b = super::elementwise::broadcast_shape(&x.shape, &s)?;
    if b != s {
        return Err(RunError::new(format!("cannot broadcast {} to {}", shape_text(&x.shape), shape_text(&s))));
    }
    let st = broadcast_strides(&x.shape, s.len());
    Ok(Value::Tensor(gather(x, &s, strided_offsets(&s, &st, 0)?)))
}

fn repeat(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let r = k.attr_int("repeats").unwrap_or(1).max(0);
    let (x, axis) = match k.attr_int("axis") {
        Some(a) => (x.clone(), norm_axis(a, x.shape.len())?),
        None => (with_shape(x, &[x.numel() as i64]), 0),
    };
    let mut shape = x.shape.clone();
    shape[axis] *= r;
    let st = row_major_strides(&x.shape);
    let mut out = Vec::with_capacity(numel(&shape));
    let v = x.scalars();
    for_each(&shape, &[vec![0; shape.len()]], |flat, _| {
        let ost = row_major_strides(&shape);
        let mut off = 0i64;
        for d in 0..shape.len() {
            let mut i = (flat as i64 / ost[d]) % shape[d].max(1);
            if d == axis {
                i /= r.max(1);
            }
            off += i * st[d];
        }
        out.push(v[off as usize]);
        Ok(())
    })?;
    Ok(Value::Tensor(Tensor::from_scalars(&shape, x.dtype, out)))
}

fn tile(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let reps = k.attr_ints("repeats").unwrap_or_default();
    let nd = x.shape.len().max(reps.len());
    let mut xs = vec![1i64; nd - x.shape.len()];
    xs.extend_from_slice(&x.shape);
    let mut rs = vec![1i64; nd - reps.len()];
    rs.extend_from_slice(&reps);
    let shape: Vec<i64> = xs.iter().zip(&rs).map(|(a, b)| a * b).collect();
    let st = row_major_strides(&xs);
    let ost = row_major_strides(&shape);
    let v = x.scalars();
    let out = (0..numel(&shape)).map(|flat| {
        let mut off = 0i64;
        for d in 0..nd {
            let i = (flat as i64 / ost[d]) % shape[d].max(1);
            off += (i % xs[d].max(1)) * st[d];
        }
        v[off as usize]
    });
    Ok(Value::Tensor(Tensor::from_scalars(&shape, x.dtype, out.collect::<Vec<_>>())))
}

fn flip(k: &KernelArgs<'_>) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let axis = norm_axis(k.attr_int("axis").unwrap_or(0), x.shape.len())?;
    let dim = x.shape[axis];
    Ok(Value::Tensor(slice_axis(x, axis, dim - 1, dim, -1)?))
}
