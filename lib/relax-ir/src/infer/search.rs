//! Search and sort: `where` (the broadcast of the three shapes, the dtype of the
//! branches), `sort` (the input's type), `argsort` (the input's shape, the index dtype),
//! `topk` (the values and/or the indices, `k` along the axis), `bucketize`, `unique`,
//! `nonzero`, `multinomial_from_uniform`.

use crate::dtype::DataType;
use crate::entities::Ty;
use crate::ty::{TensorShape, TyData, VDevice};

use super::binary::{Broadcast, arith_dtype, broadcast};
use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a search or sort op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::WHERE => where_,
        ops::SORT => sort,
        ops::ARGSORT => argsort,
        ops::TOPK => topk,
        ops::BUCKETIZE => bucketize,
        ops::UNIQUE => unique,
        ops::NONZERO => nonzero,
        ops::MULTINOMIAL_FROM_UNIFORM => multinomial,
        _ => return None,
    }))
}

fn where_(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let c = cx.tensor_arg(0)?;
    let a = cx.tensor_arg(1)?;
    let b = cx.tensor_arg(2)?;
    let mut vdevice: Option<VDevice> = None;
    for t in [&c, &a, &b] {
        if let Some(v) = &t.vdevice {
            match &vdevice {
                None => vdevice = Some(v.clone()),
                Some(w) if w != v => {
                    vdevice = None;
                    break;
                }
                _ => {}
            }
        }
    }
    if !c.dtype.is_void() && !c.dtype.is_bool() {
        return Err(cx.err(format!("expects a `bool` condition, but was given {}", cx.q(c.ty))));
    }
    let dtype = arith_dtype(cx, (a.ty, a.dtype), (b.ty, b.dtype))?;
    let ndim = if c.ndim < 0 || a.ndim < 0 || b.ndim < 0 { -1 } else { c.ndim.max(a.ndim).max(b.ndim) };
    if let (Some(cd), Some(ad), Some(bd)) = (c.dims(), a.dims(), b.dims()) {
        let (cd, ad, bd) = (cd.to_vec(), ad.to_vec(), bd.to_vec());
        let Broadcast::Shape(ab) = broadcast(cx, &ad, &bd, (a.ty, b.ty))? else {
            return Ok(cx.tensor_ndim(dtype, ndim, vdevice));
        };
        let Broadcast::Shape(all) = broadcast(cx, &cd, &ab, (c.ty, a.ty))? else {
            return Ok(cx.tensor_ndim(dtype, ndim, vdevice));
        };
        return Ok(cx.tensor_dims(all, dtype, vdevice));
    }
    if let (TensorShape::Var(x), TensorShape::Var(y), TensorShape::Var(z)) = (&c.shape, &a.shape, &b.shape)
        && x == y
        && x == z
    {
        return Ok(cx.tensor(c.shape.clone(), dtype, ndim, vdevice));
    }
    Ok(cx.tensor_ndim(dtype, ndim, vdevice))
}

fn sort(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    Ok(cx.tensor_arg(0)?.ty)
}

fn argsort(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let dtype = cx.attr_dtype("dtype").unwrap_or(x.dtype);
    Ok(cx.tensor(x.shape, dtype, x.ndim, x.vdevice))
}

fn topk(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let idx_dtype: DataType = cx.attr_dtype("dtype").unwrap_or(x.dtype);
    let k = cx.attr_int("k").unwrap_or(1);
    let ndim = x.ndim;
    let mut axis = cx.attr_int("axis").unwrap_or(-1);
    if axis < 0 && ndim > 0 {
        axis += i64::from(ndim);
    }
    let (values, indices) = match x.dims().map(<[crate::entities::PrimExpr]>::to_vec) {
        None => (cx.tensor_ndim(x.dtype, ndim, x.vdevice.clone()), cx.tensor_ndim(idx_dtype, ndim, x.vdevice.clone())),
        Some(mut d) => {
            if axis < 0 || axis >= d.len() as i64 {
                return Err(cx.err(format!("axis {axis} is out of range for {}", cx.q(x.ty))));
            }
            let a = axis as usize;
            let dim = cx.as_int(d[a]);
            if k > 0 && dim.is_none_or(|n| k < n) {
                d[a] = cx.i64(k);
            }
            (cx.tensor_dims(d.clone(), x.dtype, x.vdevice.clone()), cx.tensor_dims(d, idx_dtype, x.vdevice.clone()))
        }
    };
    match cx.attr_str("ret_type").unwrap_or("both") {
        "values" => Ok(values),
        "indices" => Ok(indices),
        "both" => Ok(cx.mk(TyData::Tuple(vec![values, indices]))),
        other => Err(cx.err(format!("unknown `ret_type` \"{other}\" (expected \"both\", \"values\" or \"indices\")"))),
    }
}

fn bucketize(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let b = cx.tensor_arg(1)?;
    if !b.unknown_ndim() && b.ndim != 1 {
        return Err(cx.err(format!("expects 1-d boundaries, but was given {}", cx.q(b.ty))));
    }
    let dtype = if cx.attr_bool("out_int32", false) { DataType::INT32 } else { DataType::INT64 };
    match x.dims().map(<[crate::entities::PrimExpr]>::to_vec) {
        Some(d) => Ok(cx.tensor_dims(d, dtype, x.vdevice)),
        None => Ok(cx.tensor_ndim(dtype, x.ndim, x.vdevice)),
    }
}

fn unique(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let flag = |cx: &OpCx<'_>, i: usize| cx.arg(i).and_then(|a| cx.prim_of(a)).and_then(|p| cx.as_int(p));
    let axis = cx.arg(5).and_then(|a| cx.prim_of(a));
    if let Some(a) = axis.and_then(|a| cx.as_int(a))
        && !x.unknown_ndim()
    {
        cx.axis(x.ndim, a)?;
    }
    let mut n_extra = 0;
    for i in 2..5 {
        match flag(cx, i) {
            Some(v) => n_extra += usize::from(v != 0),
            None => return Err(cx.err(format!("expects a constant `{}`", cx.arg_name(i)))),
        }
    }
    let scalar = x.ndim == 0;
    let one = cx.i64(1);
    let first = if scalar {
        cx.tensor_dims(vec![one], x.dtype, x.vdevice.clone())
    } else if axis.is_some() {
        cx.tensor_ndim(x.dtype, x.ndim, x.vdevice.clone())
    } else {
        cx.tensor_ndim(x.dtype, 1, x.vdevice.clone())
    };
    let idx = if scalar {
        cx.tensor_dims(vec![one], DataType::INT64, x.vdevice.clone())
    } else {
        cx.tensor_ndim(DataType::INT64, 1, x.vdevice.clone())
    };
    if n_extra == 0 {
        return Ok(first);
    }
    let mut fields = vec![first];
    fields.extend(std::iter::repeat_n(idx, n_extra));
    Ok(cx.mk(TyData::Tuple(fields)))
}

fn nonzero(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    Ok(cx.tensor_ndim(DataType::INT64, 2, x.vdevice))
}

fn multinomial(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let p = cx.tensor_arg(0)?;
    let u = cx.tensor_arg(1)?;
    let s = cx.tensor_arg(2)?;
    let dtype = cx.attr_dtype("dtype").unwrap_or(DataType::INT64);
    for (t, what, float) in [(&p, "prob", true), (&u, "uniform_sample", true), (&s, "sample_indices", false)] {
        let ok = t.dtype.is_void() || if float { t.dtype.is_float() } else { t.dtype.is_signed_int() };
        if !ok {
            return Err(cx.err(format!("`{what}` has the wrong dtype: {}", cx.q(t.ty))));
        }
    }
    if p.unknown_ndim() || u.unknown_ndim() || s.unknown_ndim() {
        return Ok(cx.tensor_ndim(dtype, -1, p.vdevice));
    }
    for (t, what) in [(&p, "prob"), (&u, "uniform_sample"), (&s, "sample_indices")] {
        if t.ndim != 2 {
            return Err(cx.err(format!("expects a 2-d `{what}`, but was given {}", cx.q(t.ty))));
        }
    }
    let (Some(_), Some(ud), Some(sd)) = (p.dims(), u.dims(), s.dims()) else {
        return Ok(cx.tensor_ndim(dtype, 2, p.vdevice));
    };
    let (n, ns) = (ud[0], sd[0]);
    if cx.prove_not_equal(n, ns) {
        return Err(cx.err(format!(
            "`uniform_sample` {} and `sample_indices` {} have different batch sizes",
            cx.q(u.ty),
            cx.q(s.ty)
        )));
    }
    let one = cx.i64(1);
    Ok(cx.tensor_dims(vec![n, one], dtype, p.vdevice))
}
