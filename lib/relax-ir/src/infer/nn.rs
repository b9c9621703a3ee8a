//! Neural-network ops: activations (the input's type), `softmax`, the norms (the
//! input's type after checking the weights against the normalised axes), `dropout` (a
//! pair), `attention`, `pad`, `pixel_shuffle`, the losses and `batch_flatten`.

use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;

use super::cx::{OpCx, TensorInfo};
use super::unary::unary;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of an `nn` op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::NN_RELU => |cx| unary(cx, false, None),
        ops::NN_GELU | ops::NN_GELU_TANH | ops::NN_SELU | ops::NN_SILU | ops::NN_SOFTPLUS | ops::NN_LEAKYRELU => {
            |cx| unary(cx, true, None)
        }
        ops::NN_SOFTMAX | ops::NN_LOG_SOFTMAX => softmax,
        ops::NN_LAYER_NORM | ops::NN_RMS_NORM => norm,
        ops::NN_DROPOUT => dropout,
        ops::NN_ATTENTION | ops::NN_ATTENTION_BIAS | ops::NN_ATTENTION_VAR_LEN => attention,
        ops::NN_PRELU => prelu,
        ops::NN_PAD => pad,
        ops::NN_PIXEL_SHUFFLE => pixel_shuffle,
        ops::NN_BATCH_NORM => batch_norm,
        ops::NN_GROUP_NORM | ops::NN_INSTANCE_NORM => channel_norm,
        ops::NN_CROSS_ENTROPY_WITH_LOGITS => cross_entropy,
        ops::NN_NLL_LOSS => nll_loss,
        ops::NN_BATCH_FLATTEN => batch_flatten,
        _ => return None,
    }))
}

fn softmax(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.unknown_ndim() {
        return Ok(x.ty);
    }
    if !x.dtype.is_void() && !x.dtype.is_float() {
        return Err(cx.err(format!("expects a floating-point tensor, but was given {}", cx.q(x.ty))));
    }
    cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(-1))?;
    Ok(x.ty)
}

fn norm(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let n = cx.call.args.len();
    let mut ts: Vec<TensorInfo> = Vec::with_capacity(n);
    for i in 0..n {
        ts.push(cx.tensor_arg(i)?);
    }
    let axes = cx.attr_ints("axes").unwrap_or_else(|| vec![-1]);
    if check_norm(cx, &ts, &axes)? {
        Ok(ts[0].ty)
    } else {
        Ok(cx.tensor_ndim(ts[0].dtype, ts[0].ndim, ts[0].vdevice.clone()))
    }
}

fn dropout(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    Ok(cx.mk(crate::ty::TyData::Tuple(vec![x.ty, x.ty])))
}

fn attention(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let n = cx.call.args.len();
    let mut t: Vec<TensorInfo> = Vec::with_capacity(n);
    for i in 0..n {
        t.push(cx.tensor_arg(i)?);
    }
    for (i, x) in t.iter().enumerate().take(3) {
        if x.ndim != 4 {
            return Err(cx.err(format!(
                "`{}` must have rank 4 (batch, sequence, heads, head dim), but has type {}",
                cx.arg_name(i),
                cx.q(x.ty)
            )));
        }
    }
    let (q, k, v) = (&t[0], &t[1], &t[2]);
    let (Some(qd), Some(kd), Some(vd)) = (q.dims(), k.dims(), v.dims()) else {
        return Ok(cx.tensor_ndim(q.dtype, 4, q.vdevice.clone()));
    };
    let (qd, kd, vd) = (qd.to_vec(), kd.to_vec(), vd.to_vec());
    let differ = |cx: &OpCx<'_>, a: PrimExpr, b: PrimExpr, what: &str, m1: &str, m2: &str| {
        if cx.prove_not_equal(a, b) {
            Err(cx.err(format!("the {what} of `{m1}` ({}) and of `{m2}` ({}) differ", cx.qp(a), cx.qp(b))))
        } else {
            Ok(())
        }
    };
    differ(cx, qd[0], kd[0], "batch size", "query", "key")?;
    differ(cx, qd[0], vd[0], "batch size", "query", "value")?;
    for (other, name) in [(&kd, "key"), (&vd, "value")] {
        if let (Some(h), Some(g)) = (cx.as_int(qd[2]), cx.as_int(other[2]))
            && g != 0
            && h.wrapping_rem(g) != 0
        {
            return Err(
                cx.err(format!("the number of heads of `query` ({h}) is not a multiple of that of `{name}` ({g})"))
            );
        }
    }
    differ(cx, kd[1], vd[1], "sequence length", "key", "value")?;
    differ(cx, qd[3], kd[3], "head dim", "query", "key")?;
    let bias = if cx.id == crate::op::ops::NN_ATTENTION_VAR_LEN { None } else { t.get(3) };
    if let Some(bias) = bias {
        if bias.ndim != 4 {
            return Err(cx.err(format!("`bias` must have rank 4, but has type {}", cx.q(bias.ty))));
        }
        if let Some(bd) = bias.dims() {
            let bd = bd.to_vec();
            for (a, b, what) in
                [(qd[0], bd[0], "batch size"), (qd[2], bd[1], "number of heads"), (qd[1], bd[2], "sequence length")]
            {
                if cx.as_int(b) != Some(1) {
                    differ(cx, a, b, what, "query", "bias")?;
                }
            }
            differ(cx, kd[1], bd[3], "sequence length", "key", "bias")?;
        }
    }
    let dims = vec![qd[0], qd[1], qd[2], vd[3]];
    Ok(cx.tensor_dims(dims, q.dtype, q.vdevice.clone()))
}

fn prelu(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.unknown_ndim() {
        return Ok(x.ty);
    }
    if !x.dtype.is_void() && !x.dtype.is_float() {
        return Err(cx.err(format!("expects a floating-point tensor, but was given {}", cx.q(x.ty))));
    }
    cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(1))?;
    Ok(x.ty)
}

fn pad(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let w = cx.attr_ints("pad_width").unwrap_or_default();
    if !x.unknown_ndim() && w.len() != 2 * x.ndim as usize {
        return Err(cx.err(format!(
            "`pad_width` has {} values for {} of rank {} (expected {})",
            w.len(),
            cx.q(x.ty),
            x.ndim,
            2 * x.ndim
        )));
    }
    match x.dims().map(<[PrimExpr]>::to_vec) {
        Some(d) if !x.unknown_ndim() => {
            let mut dims = Vec::with_capacity(d.len());
            for (i, &di) in d.iter().enumerate() {
                let add = cx.i64(w[2 * i].wrapping_add(w[2 * i + 1]));
                dims.push(cx.bin(BinOp::Add, di, add));
            }
            Ok(cx.tensor_dims(dims, x.dtype, None))
        }
        _ => Ok(cx.tensor_ndim(x.dtype, x.ndim, None)),
    }
}

fn pixel_shuffle(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let r = cx.attr_int("upscale_factor").unwrap_or(1);
    if r <= 0 {
        return Err(cx.err(format!("the upscale factor must be positive, but is {r}")));
    }
    let Some(r_sq) = r.checked_mul(r) else {
        return Err(cx.err(format!("the upscale factor {r} is too large")));
    };
    if !x.unknown_ndim() && x.ndim < 3 {
        return Err(cx.err(format!("expects a tensor of rank at least 3, but was given {}", cx.q(x.ty))));
    }
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(cx.tensor_ndim(x.dtype, x.ndim, None));
    };
    let n = d.len();
    if let Some(c) = cx.as_int(d[n - 3])
        && c % r_sq != 0
    {
        return Err(cx.err(format!("{c} channels are not divisible by the square of the upscale factor {r}")));
    }
    let mut dims = d.clone();
    let r2 = cx.i64(r_sq);
    let rr = cx.i64(r);
    dims[n - 3] = cx.bin(BinOp::Div, d[n - 3], r2);
    dims[n - 2] = cx.bin(BinOp::Mul, d[n - 2], rr);
    dims[n - 1] = cx.bin(BinOp::Mul, d[n - 1], rr);
    Ok(cx.tensor_dims(dims, x.dtype, None))
}

fn batch_norm(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let n = cx.call.args.len();
    let mut ts: Vec<TensorInfo> = Vec::with_capacity(n);
    for i in 0..n {
        ts.push(cx.tensor_arg(i)?);
    }
    let axis = cx.attr_int("axis").unwrap_or(1);
    let known = check_norm(cx, &ts, &[axis])?;
    let data = &ts[0];
    if !known {
        let a = cx.tensor_ndim(data.dtype, data.ndim, data.vdevice.clone());
        let b = cx.tensor_ndim(data.dtype, 1, data.vdevice.clone());
        return Ok(cx.mk(crate::ty::TyData::Tuple(vec![a, b, b])));
    }
    Ok(cx.mk(crate::ty::TyData::Tuple(vec![ts[0].ty, ts[3].ty, ts[4].ty])))
}

/// TVM's `NormCheckDtypeAndShape`: float data, weights of the data's dtype with one dim
/// per normalised axis, matching the data's lengths there. Returns false when a length
/// could not be proved equal (the result shape is then unknown).
fn check_norm(cx: &OpCx<'_>, ts: &[TensorInfo], axes: &[i64]) -> Result<bool, InferError> {
    let data = &ts[0];
    let axes_nn = if data.unknown_ndim() { Vec::new() } else { cx.axes(data.ndim, axes)? };
    if !data.dtype.is_void() && !data.dtype.is_float() {
        return Err(cx.err(format!("expects floating-point data, but was given {}", cx.q(data.ty))));
    }
    for (i, w) in ts.iter().enumerate().skip(1) {
        // An unknown weight (an opaque `metadata[...]` constant whose data was omitted)
        // is not checked.
        if w.dtype.is_void() && w.unknown_ndim() {
            continue;
        }
        if !data.dtype.is_void() && w.dtype != data.dtype {
            return Err(cx.err(format!(
                "`{}` has dtype `{}`, but the data has dtype `{}`",
                cx.arg_name(i),
                w.dtype,
                data.dtype
            )));
        }
        if w.ndim != axes.len() as i32 {
            return Err(cx.err(format!(
                "`{}` has rank {}, but {} axes are normalised: {}",
                cx.arg_name(i),
                w.ndim,
                axes.len(),
                cx.q(w.ty)
            )));
        }
    }
    let mut lengths: Vec<(Ty, Vec<PrimExpr>)> = Vec::new();
    if let Some(d) = data.dims() {
        lengths.push((data.ty, axes_nn.iter().map(|&a| d[a]).collect()));
    }
    for w in &ts[1..] {
        if let Some(d) = w.dims() {
            lengths.push((w.ty, d.to_vec()));
        }
    }
    let mut known = true;
    if let Some((t0, first)) = lengths.first().cloned() {
        for (t, l) in &lengths[1..] {
            for (&x, &y) in first.iter().zip(l) {
                if cx.prove_not_equal(x, y) {
                    return Err(cx.err(format!(
                        "the normalised dim {} of {} and the dim {} of {} differ",
                        cx.qp(x),
                        cx.q(t0),
                        cx.qp(y),
                        cx.q(*t)
                    )));
                }
                if !cx.prove_equal(x, y) {
                    known = false;
                }
            }
        }
    }
    Ok(known)
}

fn channel_norm(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let n = cx.call.args.len();
    let mut ts: Vec<TensorInfo> = Vec::with_capacity(n);
    for i in 0..n {
        ts.push(cx.tensor_arg(i)?);
    }
    let data = ts[0].clone();
    let mut channel: Option<usize> = None;
    if !data.unknown_ndim() {
        let c = cx.axis(data.ndim, cx.attr_int("channel_axis").unwrap_or(1))?;
        let axes = cx.axes(data.ndim, &cx.attr_ints("axes").unwrap_or_default())?;
        if axes.contains(&c) {
            return Err(cx.err(format!("the channel axis {c} is also a normalised axis")));
        }
        channel = Some(c);
    }
    if !data.dtype.is_void() && !data.dtype.is_float() {
        return Err(cx.err(format!("expects floating-point data, but was given {}", cx.q(data.ty))));
    }
    let chan_len = channel.and_then(|c| data.dims().map(|d| d[c]));
    if cx.id == crate::op::ops::NN_GROUP_NORM
        && let (Some(len), Some(g)) = (chan_len.and_then(|l| cx.as_int(l)), cx.attr_int("num_groups"))
        && g != 0
        && len.wrapping_rem(g) != 0
    {
        return Err(cx.err(format!("{len} channels are not divisible into {g} groups")));
    }
    for (i, w) in ts.iter().enumerate().skip(1) {
        // An unknown weight (an opaque `metadata[...]` constant whose data was omitted)
        // is not checked.
        if w.dtype.is_void() && w.unknown_ndim() {
            continue;
        }
        if !data.dtype.is_void() && w.dtype != data.dtype {
            return Err(cx.err(format!(
                "`{}` has dtype `{}`, but the data has dtype `{}`",
                cx.arg_name(i),
                w.dtype,
                data.dtype
            )));
        }
        if w.ndim != 1 {
            return Err(cx.err(format!("expects a 1-d `{}`, but was given {}", cx.arg_name(i), cx.q(w.ty))));
        }
        if let (Some(len), Some(d)) = (chan_len, w.dims())
            && cx.prove_not_equal(len, d[0])
        {
            return Err(cx.err(format!("`{}` has {} values for {} channels", cx.arg_name(i), cx.qp(d[0]), cx.qp(len))));
        }
    }
    Ok(data.ty)
}

fn cross_entropy(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let p = cx.tensor_arg(0)?;
    let l = cx.tensor_arg(1)?;
    let dtype = super::binary::arith_dtype(cx, (p.ty, p.dtype), (l.ty, l.dtype))?;
    let vdevice = super::binary::binary_vdevice(cx, (p.ty, p.vdevice.clone()), (l.ty, l.vdevice.clone()))?;
    if !p.unknown_ndim() && !l.unknown_ndim() && p.ndim != l.ndim {
        return Err(cx.err(format!(
            "the predictions {} and the labels {} have different ranks",
            cx.q(p.ty),
            cx.q(l.ty)
        )));
    }
    if let (Some(a), Some(b)) = (&p.values, &l.values) {
        for (&x, &y) in a.iter().zip(b) {
            if cx.prove_not_equal(x, y) {
                return Err(cx.err(format!(
                    "the predictions {} and the labels {} have different shapes",
                    cx.q(p.ty),
                    cx.q(l.ty)
                )));
            }
        }
    }
    Ok(cx.tensor_dims(Vec::new(), dtype, vdevice))
}

fn nll_loss(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let p = cx.tensor_arg(0)?;
    let t = cx.tensor_arg(1)?;
    let w = if cx.call.args.len() > 2 { Some(cx.tensor_arg(2)?) } else { None };
    let (dtype, vdevice) = match &w {
        Some(w) => (
            super::binary::arith_dtype(cx, (p.ty, p.dtype), (w.ty, w.dtype))?,
            super::binary::binary_vdevice(cx, (p.ty, p.vdevice.clone()), (w.ty, w.vdevice.clone()))?,
        ),
        None => (p.dtype, p.vdevice.clone()),
    };
    if !t.dtype.is_void() && !t.dtype.is_int() {
        return Err(cx.err(format!("expects integer targets, but was given {}", cx.q(t.ty))));
    }
    if !p.unknown_ndim() && p.ndim < 1 {
        return Err(cx.err(format!("expects predictions of rank at least 1, but was given {}", cx.q(p.ty))));
    }
    if cx.attr_str("reduction") == Some("none") {
        return Ok(match p.dims().map(<[PrimExpr]>::to_vec) {
            Some(d) if d.len() >= 2 => {
                let mut out = vec![d[0]];
                out.extend_from_slice(&d[2..]);
                cx.tensor_dims(out, dtype, vdevice)
            }
            Some(_) => cx.tensor_dims(Vec::new(), dtype, vdevice),
            None => cx.tensor_ndim(dtype, if p.unknown_ndim() { -1 } else { p.ndim - 1 }, vdevice),
        });
    }
    Ok(cx.tensor_dims(Vec::new(), dtype, vdevice))
}

fn batch_flatten(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, 2, x.vdevice));
    }
    if x.ndim < 2 {
        return Err(cx.err(format!("expects a tensor of rank at least 2, but was given {}", cx.q(x.ty))));
    }
    if x.ndim == 2 {
        return Ok(x.ty);
    }
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(cx.tensor_ndim(x.dtype, 2, x.vdevice));
    };
    let mut flat = cx.i64(1);
    for &v in &d[1..] {
        flat = cx.bin(BinOp::Mul, flat, v);
    }
    Ok(cx.tensor_dims(vec![d[0], flat], x.dtype, x.vdevice))
}
