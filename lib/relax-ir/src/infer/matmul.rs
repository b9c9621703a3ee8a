//! Linear algebra: `matmul` (with 1-d promotion and batch broadcasting), `outer` and
//! `einsum`.

use crate::entities::{PrimExpr, Ty};
use crate::ty::VDevice;

use super::binary::{Broadcast, arith_dtype, broadcast};
use super::cx::OpCx;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a linear-algebra op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::MATMUL => matmul,
        ops::OUTER => outer,
        ops::EINSUM => einsum,
        _ => return None,
    }))
}

fn matmul(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let a = cx.tensor_arg(0)?;
    let b = cx.tensor_arg(1)?;
    let vdevice: Option<VDevice> = match (&a.vdevice, &b.vdevice) {
        (Some(x), Some(y)) => (x == y).then(|| x.clone()),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    };
    let dtype = match cx.attr_dtype("out_dtype") {
        Some(t) => t,
        None => arith_dtype(cx, (a.ty, a.dtype), (b.ty, b.dtype))?,
    };
    if a.unknown_ndim() || b.unknown_ndim() {
        return Ok(cx.tensor_ndim(dtype, -1, vdevice));
    }
    for (t, n, side) in [(a.ty, a.ndim, "left"), (b.ty, b.ndim, "right")] {
        if n == 0 {
            return Err(cx.err(format!("the {side} operand {} is a scalar", cx.q(t))));
        }
    }
    let (a_pre, b_app) = (usize::from(a.ndim == 1), usize::from(b.ndim == 1));
    let (an, bn) = (a.ndim.max(2) as usize, b.ndim.max(2) as usize);
    let out_ndim = (an.max(bn) - a_pre - b_app) as i32;
    let (Some(ad), Some(bd)) = (a.dims(), b.dims()) else {
        return Ok(cx.tensor_ndim(dtype, out_ndim, vdevice));
    };
    let (ad, bd) = (ad.to_vec(), bd.to_vec());
    let a_prefix = &ad[..ad.len() + a_pre - 2];
    let b_prefix = &bd[..bd.len() + b_app - 2];
    let Broadcast::Shape(mut out) = broadcast(cx, a_prefix, b_prefix, (a.ty, b.ty))? else {
        return Ok(cx.tensor_ndim(dtype, out_ndim, vdevice));
    };
    let ka = ad[ad.len() - 1];
    let kb = bd[bn - 2];
    if cx.prove_not_equal(ka, kb) {
        return Err(cx.err(format!(
            "the reduction dims {} and {} differ: {} and {}",
            cx.qp(ka),
            cx.qp(kb),
            cx.q(a.ty),
            cx.q(b.ty)
        )));
    }
    if a_pre == 0 {
        out.push(ad[an - 2]);
    }
    if b_app == 0 {
        out.push(bd[bn - 1]);
    }
    Ok(cx.tensor_dims(out, dtype, vdevice))
}

fn outer(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let a = cx.tensor_arg(0)?;
    let b = cx.tensor_arg(1)?;
    if a.ndim != 1 || b.ndim != 1 {
        return Err(cx.err(format!("expects two 1-d tensors, but was given {} and {}", cx.q(a.ty), cx.q(b.ty))));
    }
    match (a.dims(), b.dims()) {
        (Some(x), Some(y)) => {
            let dims = vec![x[0], y[0]];
            Ok(cx.tensor_dims(dims, a.dtype, None))
        }
        _ => Ok(cx.tensor_ndim(a.dtype, 2, None)),
    }
}

fn einsum(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ops = cx.tensor_tuple_arg(0)?;
    if ops.is_empty() {
        return Err(cx.err("expects at least one operand"));
    }
    let dtype = ops[0].dtype;
    let mut vdevice: Option<VDevice> = None;
    let mut vdevice_unknown = false;
    for o in &ops {
        if o.dtype != dtype {
            return Err(cx.err(format!("expects operands of one dtype, but was given `{}` and `{}`", dtype, o.dtype)));
        }
        if let Some(v) = &o.vdevice {
            match &vdevice {
                None => vdevice = Some(v.clone()),
                Some(w) if w != v => vdevice_unknown = true,
                _ => {}
            }
        }
    }
    let vdevice = if vdevice_unknown { None } else { vdevice };
    let mut shapes: Vec<Vec<PrimExpr>> = Vec::new();
    for o in &ops {
        match o.dims() {
            Some(d) => shapes.push(d.to_vec()),
            None => return Ok(cx.tensor_ndim(dtype, o.ndim, vdevice)),
        }
    }
    let subscripts = cx.attr_str("subscripts").unwrap_or("").to_string();
    match einsum_shape(cx, &subscripts, &shapes)? {
        Some(dims) => Ok(cx.tensor_dims(dims, dtype, vdevice)),
        None => Ok(cx.tensor_ndim(dtype, -1, vdevice)),
    }
}

/// TOPI's `InferEinsumShape` for explicit and implicit outputs (`"ij,jk->ik"`,
/// `"ij,jk"`), without ellipses; `None` when the subscripts use an ellipsis.
fn einsum_shape(
    cx: &OpCx<'_>,
    subscripts: &str,
    shapes: &[Vec<PrimExpr>],
) -> Result<Option<Vec<PrimExpr>>, InferError> {
    let s: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    if s.contains("...") {
        return Ok(None);
    }
    let (inputs, output) = match s.split_once("->") {
        Some((i, o)) => (i.to_string(), Some(o.to_string())),
        None => (s.clone(), None),
    };
    let terms: Vec<&str> = inputs.split(',').collect();
    if terms.len() != shapes.len() {
        return Err(cx.err(format!(
            "the subscripts `{subscripts}` name {} operands, but {} were given",
            terms.len(),
            shapes.len()
        )));
    }
    let mut dims: Vec<(char, PrimExpr)> = Vec::new();
    let mut counts: std::collections::BTreeMap<char, usize> = std::collections::BTreeMap::new();
    for (t, sh) in terms.iter().zip(shapes) {
        if t.chars().count() != sh.len() {
            return Err(cx.err(format!(
                "the subscript `{t}` has {} labels for an operand of rank {}",
                t.chars().count(),
                sh.len()
            )));
        }
        for (c, &d) in t.chars().zip(sh) {
            *counts.entry(c).or_default() += 1;
            match dims.iter().find(|(k, _)| *k == c) {
                Some(&(_, prev)) => {
                    if cx.as_int(prev) == Some(1) {
                        if let Some(slot) = dims.iter_mut().find(|(k, _)| *k == c) {
                            slot.1 = d;
                        }
                    }
                }
                None => dims.push((c, d)),
            }
        }
    }
    let out: String = match output {
        Some(o) => o,
        None => counts.iter().filter(|&(_, &n)| n == 1).map(|(&c, _)| c).collect(),
    };
    let mut res = Vec::new();
    for c in out.chars() {
        match dims.iter().find(|(k, _)| *k == c) {
            Some(&(_, d)) => res.push(d),
            None => return Err(cx.err(format!("the output label `{c}` of `{subscripts}` is not an input label"))),
        }
    }
    Ok(Some(res))
}
