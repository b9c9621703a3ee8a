//! Shape manipulation: `reshape`, `permute_dims`, `expand_dims`, `squeeze`, `flatten`,
//! `concat`, `stack`, `split`, `broadcast_to`, `repeat`, `tile`, `flip`,
//! `collapse_sum_like`, `collapse_sum_to`, the gathers and scatters, `index_tensor`,
//! `index_put`, `meshgrid`, `one_hot`, `layout_transform`.

use crate::dtype::DataType;
use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;
use crate::ty::{TensorShape, TyData, VDevice};

use super::cx::{OpCx, TensorInfo};
use super::simplify::ceildiv;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a manipulation op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::RESHAPE => reshape,
        ops::PERMUTE_DIMS => permute_dims,
        ops::EXPAND_DIMS => expand_dims,
        ops::SQUEEZE => squeeze,
        ops::FLATTEN => flatten,
        ops::CONCAT => concat,
        ops::STACK => stack,
        ops::SPLIT => split,
        ops::BROADCAST_TO => broadcast_to,
        ops::REPEAT => repeat,
        ops::TILE => tile,
        ops::FLIP => flip,
        ops::COLLAPSE_SUM_LIKE => collapse_sum_like,
        ops::COLLAPSE_SUM_TO => collapse_sum_to,
        ops::GATHER_ELEMENTS => gather_elements,
        ops::GATHER_ND => gather_nd,
        ops::SCATTER_ELEMENTS | ops::SCATTER_ND => scatter,
        ops::SLICE_SCATTER => slice_scatter,
        ops::INDEX_TENSOR => index_tensor,
        ops::INDEX_PUT => index_put,
        ops::MESHGRID => meshgrid,
        ops::ONE_HOT => one_hot,
        ops::LAYOUT_TRANSFORM => layout_transform,
        _ => return None,
    }))
}

/// TVM's `ComputeShapeProduct`: `1 * d0 * d1 * ...` with the folding constructors
/// (so `(n, 4)` has `n * 4` elements).
pub(super) fn shape_product(cx: &mut OpCx<'_>, dims: &[PrimExpr]) -> PrimExpr {
    let mut p = cx.i64(1);
    for &d in dims {
        p = cx.bin(BinOp::Mul, p, d);
    }
    p
}

fn reshape(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let ndim = cx.shape_arg_ndim(1)?;
    let new = cx.shape_arg_values(1);
    if let (Some(new), Some(old)) = (&new, &x.values) {
        let pn = shape_product(cx, new);
        let po = shape_product(cx, old);
        if cx.prove_not_equal(po, pn) {
            let target = match cx.arg(1) {
                Some(a) if matches!(cx.f.exprs[a], crate::relax::ExprData::Shape(_)) => {
                    let dims: Vec<String> = new.iter().map(|&d| cx.show_prim(d)).collect();
                    format!("`R.shape([{}])`", dims.join(", "))
                }
                _ => {
                    let t = cx.arg_ty(1);
                    cx.q(t)
                }
            };
            return Err(cx.err(format!(
                "cannot reshape {} ({} elements) to {target} ({} elements)",
                cx.q(x.ty),
                cx.qp(po),
                cx.qp(pn)
            )));
        }
    }
    let shape = match cx.arg(1).map(|a| cx.f.exprs[a].clone()) {
        Some(crate::relax::ExprData::Var(v)) => match new {
            Some(d) => TensorShape::Dims(d),
            None => TensorShape::Var(v),
        },
        _ => cx.shape_arg_as_shape(1),
    };
    Ok(cx.tensor(shape, x.dtype, ndim, x.vdevice))
}

fn permute_dims(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let axes = cx.attr_ints("axes");
    if axes.is_none() && x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    if let Some(a) = &axes
        && !x.unknown_ndim()
        && a.len() as i32 != x.ndim
    {
        return Err(cx.err(format!("{} axes were given for {} of rank {}", a.len(), cx.q(x.ty), x.ndim)));
    }
    let perm: Vec<usize> = match &axes {
        Some(a) => {
            if x.unknown_ndim() {
                return Ok(cx.tensor_ndim(x.dtype, a.len() as i32, x.vdevice));
            }
            cx.axes(x.ndim, a)?
        }
        None => (0..x.ndim as usize).rev().collect(),
    };
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.ty);
    }
    match x.dims() {
        Some(d) => {
            let dims = perm.iter().map(|&p| d[p]).collect();
            Ok(cx.tensor_dims(dims, x.dtype, x.vdevice.clone()))
        }
        None => Ok(cx.tensor_ndim(x.dtype, x.ndim, x.vdevice)),
    }
}

fn expand_dims(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let axes = cx.attr_ints("axis").unwrap_or_default();
    if axes.is_empty() {
        return Ok(x.ty);
    }
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    let out_ndim = x.ndim + axes.len() as i32;
    let axes = cx.axes(out_ndim, &axes)?;
    let Some(d) = x.dims() else {
        return Ok(cx.tensor_ndim(x.dtype, out_ndim, x.vdevice));
    };
    let d = d.to_vec();
    let one = cx.i64(1);
    let mut src = d.iter();
    let dims =
        (0..out_ndim as usize).map(|i| if axes.contains(&i) { one } else { *src.next().unwrap_or(&one) }).collect();
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

fn squeeze(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let axes = cx.attr_ints("axis");
    if axes.as_ref().is_some_and(|a| a.is_empty()) {
        return Ok(x.ty);
    }
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    let mut remove = vec![false; x.ndim as usize];
    match &axes {
        Some(a) => {
            let a = cx.axes(x.ndim, a)?;
            let Some(values) = x.values.clone() else {
                return Ok(cx.tensor_ndim(x.dtype, x.ndim - a.len() as i32, x.vdevice));
            };
            for &i in &a {
                match cx.as_int(values[i]) {
                    Some(1) | None => remove[i] = true,
                    Some(v) => {
                        return Err(
                            cx.err(format!("cannot squeeze axis {i} of {}: its length is {v}, not 1", cx.q(x.ty)))
                        );
                    }
                }
            }
        }
        None => {
            let Some(values) = x.values.clone() else {
                return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
            };
            for (i, &v) in values.iter().enumerate() {
                match cx.as_int(v) {
                    None => return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice)),
                    Some(1) => remove[i] = true,
                    Some(_) => {}
                }
            }
        }
    }
    let values = x.values.clone().unwrap_or_default();
    let dims: Vec<PrimExpr> = values.iter().zip(&remove).filter(|(_, r)| !**r).map(|(&d, _)| d).collect();
    if let TensorShape::Var(_) = x.shape {
        if dims.len() as i32 == x.ndim {
            return Ok(x.ty);
        }
        let nd = if axes.is_some() { dims.len() as i32 } else { -1 };
        return Ok(cx.tensor_ndim(x.dtype, nd, x.vdevice));
    }
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

fn flatten(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, 1, x.vdevice));
    }
    if x.ndim == 0 {
        let one = cx.i64(1);
        return Ok(cx.tensor_dims(vec![one], x.dtype, x.vdevice));
    }
    if x.ndim == 1 {
        return Ok(x.ty);
    }
    match x.dims() {
        Some(d) => {
            let d = d.to_vec();
            let p = shape_product(cx, &d);
            Ok(cx.tensor_dims(vec![p], x.dtype, x.vdevice))
        }
        None => Ok(cx.tensor_ndim(x.dtype, 1, x.vdevice)),
    }
}

/// Common dtype, rank and vdevice of a list of tensors (concat, stack): an unknown dtype
/// anywhere makes it unknown; different known dtypes are an error.
struct Joined {
    dtype: DataType,
    vdevice: Option<VDevice>,
    shapes: Vec<Vec<PrimExpr>>,
    shape_unknown: bool,
}

fn join(cx: &OpCx<'_>, ts: &[TensorInfo], what: &str) -> Result<Joined, InferError> {
    let mut dtype: Option<DataType> = None;
    let mut void = false;
    let mut vdevice: Option<VDevice> = None;
    let mut vdevice_unknown = false;
    let mut shapes = Vec::new();
    let mut shape_unknown = false;
    for t in ts {
        if t.dtype.is_void() {
            void = true;
        } else if let Some(d) = dtype {
            if d != t.dtype {
                return Err(cx.err(format!(
                    "{what} tensors of different dtypes `{d}` and `{}`: {} and {}",
                    t.dtype,
                    cx.q(ts[0].ty),
                    cx.q(t.ty)
                )));
            }
        } else {
            dtype = Some(t.dtype);
        }
        if let Some(v) = &t.vdevice {
            match &vdevice {
                None => vdevice = Some(v.clone()),
                Some(w) if w != v => vdevice_unknown = true,
                _ => {}
            }
        }
        match (t.dims(), &t.values) {
            (Some(d), _) => shapes.push(d.to_vec()),
            (None, v) => {
                shape_unknown = true;
                if let Some(v) = v {
                    shapes.push(v.clone());
                }
            }
        }
    }
    Ok(Joined {
        dtype: if void { DataType::VOID } else { dtype.unwrap_or(DataType::VOID) },
        vdevice: if vdevice_unknown { None } else { vdevice },
        shapes,
        shape_unknown,
    })
}

fn concat(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ts = cx.tensor_tuple_arg(0)?;
    if ts.is_empty() {
        return Err(cx.err("expects at least one tensor"));
    }
    let axis_attr = cx.attr_int("axis");
    let mut ndim: i32 = if axis_attr.is_some() { -1 } else { 1 };
    for t in &ts {
        if ndim == -1 {
            ndim = t.ndim;
        } else if t.ndim != -1 && t.ndim != ndim {
            return Err(cx.err(format!(
                "cannot concatenate tensors of different ranks: {} and {}",
                cx.q(ts[0].ty),
                cx.q(t.ty)
            )));
        }
    }
    let j = join(cx, &ts, "cannot concatenate")?;
    if ndim == -1 {
        return Ok(if ts.len() == 1 { ts[0].ty } else { cx.tensor_ndim(j.dtype, -1, j.vdevice) });
    }
    let axis = match axis_attr {
        Some(a) => cx.axis(ndim, a)?,
        None => 0,
    };
    if ts.len() == 1 {
        return Ok(ts[0].ty);
    }
    if j.shapes.is_empty() {
        return Ok(cx.tensor_ndim(j.dtype, ndim, j.vdevice));
    }
    let shapes = j.shapes;
    // The concatenated dim: `d * k` when all are the same, else the sum in order.
    let first = shapes[0][axis];
    let sum = if shapes.iter().all(|s| s[axis] == first) {
        let k = cx.i64(shapes.len() as i64);
        cx.bin(BinOp::Mul, first, k)
    } else {
        let mut s = cx.i64(0);
        for sh in &shapes {
            s = cx.bin(BinOp::Add, s, sh[axis]);
        }
        s
    };
    let mut unknown = false;
    for d in 0..shapes[0].len() {
        if d == axis {
            continue;
        }
        for sh in &shapes[1..] {
            if cx.prove_not_equal(sh[d], shapes[0][d]) {
                let i = shapes.iter().position(|s| std::ptr::eq(s, sh)).unwrap_or(1);
                return Err(cx.err(format!(
                    "cannot concatenate along axis {axis}: dim {d} is {} in {} but {} in {}",
                    cx.qp(shapes[0][d]),
                    cx.q(ts[0].ty),
                    cx.qp(sh[d]),
                    cx.q(ts[i].ty)
                )));
            }
            if !cx.prove_equal(sh[d], shapes[0][d]) {
                unknown = true;
            }
        }
    }
    if unknown || j.shape_unknown {
        return Ok(cx.tensor_ndim(j.dtype, ndim, j.vdevice));
    }
    let mut dims = shapes[0].clone();
    dims[axis] = sum;
    Ok(cx.tensor_dims(dims, j.dtype, j.vdevice))
}

fn stack(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ts = cx.tensor_tuple_arg(0)?;
    if ts.is_empty() {
        return Err(cx.err("expects at least one tensor"));
    }
    let ndim = if ts[0].ndim < 0 { -1 } else { ts[0].ndim + 1 };
    for t in &ts {
        if t.ndim != -1 && t.ndim != ts[0].ndim {
            return Err(cx.err(format!(
                "cannot stack tensors of different ranks: {} and {}",
                cx.q(ts[0].ty),
                cx.q(t.ty)
            )));
        }
    }
    let j = join(cx, &ts, "cannot stack")?;
    let axis = match cx.attr_int("axis") {
        Some(a) if ndim >= 0 => cx.axis(ndim, a)?,
        _ => 0,
    };
    if j.shapes.is_empty() {
        return Ok(cx.tensor_ndim(j.dtype, ndim, j.vdevice));
    }
    let shapes = j.shapes;
    if ts.len() > 1 {
        let mut unknown = false;
        for d in 0..shapes[0].len() {
            for (i, sh) in shapes.iter().enumerate().skip(1) {
                if cx.prove_not_equal(sh[d], shapes[0][d]) {
                    return Err(cx.err(format!(
                        "cannot stack tensors of different shapes: dim {d} is {} in {} but {} in {}",
                        cx.qp(shapes[0][d]),
                        cx.q(ts[0].ty),
                        cx.qp(sh[d]),
                        cx.q(ts[i.min(ts.len() - 1)].ty)
                    )));
                }
                if !cx.prove_equal(sh[d], shapes[0][d]) {
                    unknown = true;
                }
            }
        }
        if unknown || j.shape_unknown {
            return Ok(cx.tensor_ndim(j.dtype, ndim, j.vdevice));
        }
    }
    let k = cx.i64(ts.len() as i64);
    let mut dims = shapes[0].clone();
    dims.insert(axis.min(dims.len()), k);
    Ok(cx.tensor_dims(dims, j.dtype, j.vdevice))
}

/// The most sections `R.split` makes from an integer `indices_or_sections`.
const MAX_SECTIONS: i64 = 1 << 16;

fn split(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let axis_attr = cx.attr_int("axis").unwrap_or(0);
    let axis = if x.unknown_ndim() { None } else { Some(cx.axis(x.ndim, axis_attr)?) };
    let ios = cx.attr("indices_or_sections").cloned();
    let field_unknown = |cx: &mut OpCx<'_>| cx.tensor_ndim(x.dtype, x.ndim, x.vdevice.clone());
    match ios {
        Some(crate::attrs::AttrValue::List(items)) => {
            let indices: Vec<i64> = items.iter().filter_map(|v| v.as_int()).collect();
            if indices.is_empty() {
                return Ok(x.ty);
            }
            let (Some(d), Some(axis)) = (x.dims().map(<[PrimExpr]>::to_vec), axis) else {
                let t = field_unknown(cx);
                return Ok(cx.mk(TyData::Tuple(vec![t; indices.len() + 1])));
            };
            let len = d[axis];
            let zero = cx.i64(0);
            let mut fields = Vec::with_capacity(indices.len() + 1);
            for i in 0..=indices.len() {
                let left = if i == 0 { zero } else { cx.i64(indices[i - 1]) };
                let right = if i < indices.len() { cx.i64(indices[i]) } else { len };
                let left = clamp(cx, left, len);
                let right = clamp(cx, right, len);
                let diff = cx.bin(BinOp::Sub, right, left);
                let piece = cx.bin(BinOp::Max, diff, zero);
                let piece = cx.simplify(piece);
                let mut dims = d.clone();
                dims[axis] = piece;
                fields.push(cx.tensor_dims(dims, x.dtype, x.vdevice.clone()));
            }
            Ok(cx.mk(TyData::Tuple(fields)))
        }
        Some(v) => {
            let Some(n) = v.as_int() else { return Err(cx.err("`indices_or_sections` must be an integer or a list")) };
            if n <= 0 {
                return Err(cx.err(format!("the number of sections must be positive, but is {n}")));
            }
            // One tuple field per section: bound the work a small number in the text asks for.
            if n > MAX_SECTIONS {
                return Err(cx.err(format!("the number of sections must be at most {MAX_SECTIONS}, but is {n}")));
            }
            if n == 1 {
                return Ok(x.ty);
            }
            let (Some(d), Some(axis)) = (x.dims().map(<[PrimExpr]>::to_vec), axis) else {
                let t = field_unknown(cx);
                return Ok(cx.mk(TyData::Tuple(vec![t; n as usize])));
            };
            let len = d[axis];
            let k = cx.i64(n);
            let piece = ceildiv(&mut cx.f.pool, len, k);
            let piece = cx.simplify(piece);
            let mut dims = d.clone();
            dims[axis] = piece;
            let t = cx.tensor_dims(dims.clone(), x.dtype, x.vdevice.clone());
            let mut fields = vec![t; n as usize - 1];
            let km1 = cx.i64(n - 1);
            let used = cx.bin(BinOp::Mul, piece, km1);
            let last = cx.bin(BinOp::Sub, len, used);
            let last = cx.simplify(last);
            dims[axis] = last;
            fields.push(cx.tensor_dims(dims, x.dtype, x.vdevice.clone()));
            Ok(cx.mk(TyData::Tuple(fields)))
        }
        None => Err(cx.err("needs `indices_or_sections`")),
    }
}

/// `min(max(e, 0), len)`, folded.
fn clamp(cx: &mut OpCx<'_>, e: PrimExpr, len: PrimExpr) -> PrimExpr {
    let zero = cx.i64(0);
    let m = cx.bin(BinOp::Max, e, zero);
    cx.bin(BinOp::Min, m, len)
}

fn broadcast_to(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let tndim = cx.shape_arg_ndim(1)?;
    if !x.unknown_ndim() && tndim >= 0 && tndim < x.ndim {
        return Err(cx.err(format!("cannot broadcast {} to a shape of rank {tndim}", cx.q(x.ty))));
    }
    let shape = cx.shape_arg_as_shape(1);
    if let (Some(old), Some(new)) = (x.values.clone(), cx.shape_arg_values(1)) {
        let (on, nn) = (old.len(), new.len());
        for i in 0..on.min(nn) {
            let (o, t) = (old[on - 1 - i], new[nn - 1 - i]);
            if cx.as_int(o) == Some(1) {
                continue;
            }
            if cx.prove_not_equal(o, t) {
                return Err(cx.err(format!(
                    "cannot broadcast {} to {}: dim {} is {} but the target has {}",
                    cx.q(x.ty),
                    show_dims(cx, &new),
                    on - 1 - i,
                    cx.qp(o),
                    cx.qp(t)
                )));
            }
        }
    }
    Ok(cx.tensor(shape, x.dtype, tndim, x.vdevice))
}

fn show_dims(cx: &OpCx<'_>, d: &[PrimExpr]) -> String {
    let parts: Vec<String> = d.iter().map(|&e| cx.show_prim(e)).collect();
    if parts.len() == 1 { format!("`({},)`", parts[0]) } else { format!("`({})`", parts.join(", ")) }
}

fn repeat(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let repeats = cx.attr_int("repeats").unwrap_or(1);
    let axis = cx.attr_int("axis");
    if let Some(a) = axis
        && !x.unknown_ndim()
    {
        cx.axis(x.ndim, a)?;
    }
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(match axis {
            Some(_) if repeats == 1 => x.ty,
            Some(_) => cx.tensor_ndim(x.dtype, x.ndim, x.vdevice),
            None => cx.tensor_ndim(x.dtype, 1, x.vdevice),
        });
    };
    let r = cx.i64(repeats);
    match axis {
        None => {
            let p = shape_product(cx, &d);
            let p = cx.bin(BinOp::Mul, p, r);
            let p = cx.simplify(p);
            Ok(cx.tensor_dims(vec![p], x.dtype, x.vdevice))
        }
        Some(a) => {
            let a = cx.axis(x.ndim, a)?;
            let mut dims = d;
            let m = cx.bin(BinOp::Mul, dims[a], r);
            dims[a] = cx.simplify(m);
            Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
        }
    }
}

fn tile(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let reps = cx.attr_ints("repeats").unwrap_or_default();
    let l = reps.len() as i32;
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        if x.unknown_ndim() {
            return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
        }
        if l > x.ndim {
            return Ok(cx.tensor_ndim(x.dtype, l, x.vdevice));
        }
        if reps.iter().all(|&r| r == 1) {
            return Ok(x.ty);
        }
        return Ok(cx.tensor_ndim(x.dtype, x.ndim, x.vdevice));
    };
    let ndim = x.ndim;
    let out = l.max(ndim);
    let (l_delta, n_delta) = (out - l, out - ndim);
    let mut dims = Vec::with_capacity(out as usize);
    for i in 0..out {
        if i < l_delta {
            dims.push(d[(i - n_delta) as usize]);
        } else if i < n_delta {
            let r = cx.i64(reps[(i - l_delta) as usize]);
            dims.push(r);
        } else {
            let r = cx.i64(reps[(i - l_delta) as usize]);
            let m = cx.bin(BinOp::Mul, d[(i - n_delta) as usize], r);
            dims.push(cx.simplify(m));
        }
    }
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

fn flip(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    if !x.unknown_ndim() {
        cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(0))?;
    }
    Ok(x.ty)
}

/// Checks that `data` collapses to `target` (TVM's `CheckCollapseShape`).
fn check_collapse(cx: &OpCx<'_>, data: (Ty, &[PrimExpr]), target: &[PrimExpr]) -> Result<(), InferError> {
    let (dt, d) = data;
    let mut ti = target.len() as i64 - 1;
    for di in (0..d.len()).rev() {
        if ti < 0 {
            continue;
        }
        let (a, b) = (d[di], target[ti as usize]);
        if cx.prove_equal(a, b) || cx.as_int(b) == Some(1) {
            ti -= 1;
        } else if let (Some(x), Some(y)) = (cx.as_int(a), cx.as_int(b))
            && x != y
        {
            return Err(cx.err(format!(
                "cannot collapse {} to {}: dim {di} is `{x}` but the target has `{y}`",
                cx.q(dt),
                show_dims(cx, target)
            )));
        } else {
            return Err(cx.err(format!(
                "cannot match dim {di} ({}) of {} with {} of the target {}; use `R.match_cast` first",
                cx.qp(a),
                cx.q(dt),
                cx.qp(b),
                show_dims(cx, target)
            )));
        }
    }
    Ok(())
}

fn collapse_sum_like(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let t = cx.tensor_arg(1)?;
    if let (Some(d), Some(tv)) = (&x.values, &t.values) {
        check_collapse(cx, (x.ty, d), tv)?;
    }
    Ok(cx.tensor(t.shape, x.dtype, t.ndim, t.vdevice))
}

fn collapse_sum_to(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let ndim = cx.shape_arg_ndim(1)?;
    if let (Some(d), Some(tv)) = (x.values.clone(), cx.shape_arg_values(1)) {
        check_collapse(cx, (x.ty, &d), &tv)?;
    }
    let shape = cx.shape_arg_as_shape(1);
    Ok(cx.tensor(shape, x.dtype, ndim, x.vdevice))
}

fn gather_elements(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let idx = cx.tensor_arg(1)?;
    if !idx.dtype.is_void() && !idx.dtype.is_signed_int() {
        return Err(cx.err(format!("expects integer indices, but was given {}", cx.q(idx.ty))));
    }
    if x.unknown_ndim() || idx.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(0))?;
    if x.ndim != idx.ndim {
        return Err(cx.err(format!("the data {} and the indices {} have different ranks", cx.q(x.ty), cx.q(idx.ty))));
    }
    Ok(cx.tensor(idx.shape, x.dtype, idx.ndim, x.vdevice))
}

fn gather_nd(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let idx = cx.tensor_arg(1)?;
    let b = cx.attr_int("batch_dims").unwrap_or(0);
    if !idx.dtype.is_void() && idx.dtype != DataType::INT64 {
        return Err(cx.err(format!("expects `int64` indices, but was given {}", cx.q(idx.ty))));
    }
    if x.unknown_ndim() || idx.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    if b < 0 || b > i64::from(x.ndim) || b > i64::from(idx.ndim) - 1 {
        return Err(cx.err(format!("`batch_dims` {b} is out of range for {} and {}", cx.q(x.ty), cx.q(idx.ty))));
    }
    let Some(id) = idx.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    };
    let Some(l) = id.last().and_then(|&e| cx.as_int(e)) else {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    };
    // Checked before any arithmetic: `l` is a dim of the indices' type, any int64.
    if l < 0 || l > i64::from(x.ndim) - b {
        return Err(cx.err(format!(
            "the indices {} index {l} dims, but {} has only {} after {b} batch dims",
            cx.q(idx.ty),
            cx.q(x.ty),
            i64::from(x.ndim) - b
        )));
    }
    let out_ndim = idx.ndim as i64 + i64::from(x.ndim) - l - 1 - b;
    let Some(d) = x.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(cx.tensor_ndim(x.dtype, out_ndim as i32, x.vdevice));
    };
    let mut dims: Vec<PrimExpr> = id[..id.len() - 1].to_vec();
    dims.extend_from_slice(&d[(b + l) as usize..]);
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

fn scatter(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let idx = cx.tensor_arg(1)?;
    let upd = cx.tensor_arg(2)?;
    if !idx.dtype.is_void() && !idx.dtype.is_int() {
        return Err(cx.err(format!("expects integer indices, but was given {}", cx.q(idx.ty))));
    }
    if !x.dtype.is_void() && !upd.dtype.is_void() && x.dtype != upd.dtype {
        return Err(cx.err(format!("the data {} and the updates {} have different dtypes", cx.q(x.ty), cx.q(upd.ty))));
    }
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    if cx.id == crate::op::ops::SCATTER_ELEMENTS {
        cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(0))?;
    }
    match x.dims().map(<[PrimExpr]>::to_vec) {
        Some(d) => Ok(cx.tensor_dims(d, x.dtype, x.vdevice)),
        None => Ok(cx.tensor_ndim(x.dtype, x.ndim, x.vdevice)),
    }
}

fn slice_scatter(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let src = cx.tensor_arg(1)?;
    if !x.dtype.is_void() && !src.dtype.is_void() && x.dtype != src.dtype {
        return Err(cx.err(format!("the input {} and the source {} have different dtypes", cx.q(x.ty), cx.q(src.ty))));
    }
    if !x.unknown_ndim() {
        cx.axis(x.ndim, cx.attr_int("axis").unwrap_or(0))?;
        if !src.unknown_ndim() && src.ndim != x.ndim {
            return Err(cx.err(format!(
                "the input {} and the source {} have different ranks",
                cx.q(x.ty),
                cx.q(src.ty)
            )));
        }
    }
    Ok(cx.tensor(x.shape, x.dtype, x.ndim, x.vdevice))
}

fn index_tensor(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let ids = cx.tensor_tuple_arg(1)?;
    if ids.is_empty() {
        return Err(cx.err("expects at least one index tensor"));
    }
    for t in &ids {
        if !t.dtype.is_void() && !t.dtype.is_signed_int() {
            return Err(cx.err(format!("expects integer index tensors, but was given {}", cx.q(t.ty))));
        }
    }
    let n = ids.len() as i32;
    if !x.unknown_ndim() && n > x.ndim {
        return Err(cx.err(format!("{n} index tensors were given for {} of rank {}", cx.q(x.ty), x.ndim)));
    }
    let mut all_known = true;
    let mut shapes: Vec<Vec<PrimExpr>> = Vec::new();
    let mut max_nd = 0usize;
    for t in &ids {
        match t.dims() {
            Some(d) => {
                max_nd = max_nd.max(d.len());
                shapes.push(d.to_vec());
            }
            None => all_known = false,
        }
        if t.ndim >= 0 {
            max_nd = max_nd.max(t.ndim as usize);
        }
    }
    let mut unknown = !all_known;
    let mut out: Option<Vec<PrimExpr>> = None;
    if all_known {
        let one = cx.i64(1);
        let mut o = vec![one; max_nd];
        'outer: for s in &shapes {
            for k in 0..s.len().min(max_nd) {
                let (li, ri) = (max_nd - 1 - k, s.len() - 1 - k);
                let (l, r) = (o[li], s[ri]);
                if cx.as_int(l) == Some(1) {
                    o[li] = r;
                    continue;
                }
                if cx.as_int(r) == Some(1) {
                    continue;
                }
                if let (Some(a), Some(b)) = (cx.as_int(l), cx.as_int(r))
                    && a != b
                {
                    return Err(cx.err(format!("cannot broadcast index dims `{a}` and `{b}`")));
                }
                if !cx.prove_equal(l, r) {
                    unknown = true;
                    break 'outer;
                }
            }
        }
        if !unknown {
            out = Some(o);
        }
    }
    let out_ndim = if x.unknown_ndim() {
        -1
    } else if let Some(o) = &out {
        o.len() as i32 + x.ndim - n
    } else if !unknown {
        max_nd as i32 + x.ndim - n
    } else {
        -1
    };
    if let (Some(mut o), Some(d)) = (out, x.dims()) {
        o.extend_from_slice(&d[n as usize..]);
        return Ok(cx.tensor_dims(o, x.dtype, x.vdevice.clone()));
    }
    Ok(cx.tensor_ndim(x.dtype, out_ndim, x.vdevice))
}

fn index_put(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    let vals = cx.tensor_arg(2)?;
    let it = cx.arg_ty(1);
    let ids: Vec<TensorInfo> = match cx.f.pool.ty(it).clone() {
        TyData::Tuple(_) => cx.tensor_tuple_arg(1)?,
        TyData::Tensor { .. } => vec![cx.tensor_arg(1)?],
        _ => {
            return Err(
                cx.err(format!("expects a tensor or a tuple of tensors for `indices`, but was given {}", cx.q(it)))
            );
        }
    };
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice));
    }
    for t in &ids {
        if t.ndim == 0 {
            return Err(cx.err(format!("expects index tensors of rank at least 1, but was given {}", cx.q(t.ty))));
        }
        if !t.dtype.is_void() && !t.dtype.is_int() {
            return Err(cx.err(format!("expects integer index tensors, but was given {}", cx.q(t.ty))));
        }
    }
    if ids.len() != x.ndim as usize {
        return Err(cx.err(format!("{} index tensors were given for {} of rank {}", ids.len(), cx.q(x.ty), x.ndim)));
    }
    if !x.dtype.is_void() && !vals.dtype.is_void() && x.dtype != vals.dtype {
        return Err(cx.err(format!("the data {} and the values {} have different dtypes", cx.q(x.ty), cx.q(vals.ty))));
    }
    match x.dims().map(<[PrimExpr]>::to_vec) {
        Some(d) => Ok(cx.tensor_dims(d, x.dtype, x.vdevice)),
        None => Ok(cx.tensor_ndim(x.dtype, x.ndim, x.vdevice)),
    }
}

fn meshgrid(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let ts = cx.tensor_tuple_arg(0)?;
    if ts.is_empty() {
        return Err(cx.err("expects at least one tensor"));
    }
    let mut dtype: Option<DataType> = None;
    let mut lengths: Vec<PrimExpr> = Vec::new();
    let mut shape_unknown = false;
    let mut vdevice: Option<VDevice> = None;
    let mut vdevice_unknown = false;
    for t in &ts {
        if t.ndim != 1 {
            return Err(cx.err(format!("expects 1-d tensors, but was given {}", cx.q(t.ty))));
        }
        if t.dtype.is_void() {
            continue;
        }
        match dtype {
            None => dtype = Some(t.dtype),
            Some(d) if d != t.dtype => {
                return Err(cx.err(format!("expects tensors of one dtype, but was given `{d}` and `{}`", t.dtype)));
            }
            _ => {}
        }
        match t.dims() {
            Some(d) => lengths.push(d[0]),
            None => shape_unknown = true,
        }
        if let Some(v) = &t.vdevice {
            match &vdevice {
                None => vdevice = Some(v.clone()),
                Some(w) if w != v => vdevice_unknown = true,
                _ => {}
            }
        }
    }
    let dtype = dtype.unwrap_or(DataType::VOID);
    let vdevice = if vdevice_unknown { None } else { vdevice };
    let field = if !shape_unknown && lengths.len() == ts.len() {
        // TVM 0.25 gives `xy` indexing the same shape as `ij`.
        cx.tensor_dims(lengths, dtype, vdevice)
    } else {
        cx.tensor_ndim(dtype, ts.len() as i32, vdevice)
    };
    Ok(cx.mk(TyData::Tuple(vec![field; ts.len()])))
}

fn one_hot(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let idx = cx.tensor_arg(0)?;
    let (on, off) = (cx.arg_ty(1), cx.arg_ty(2));
    let (Some(on_t), Some(off_t)) = (cx.f.pool.ty(on).dtype(), cx.f.pool.ty(off).dtype()) else {
        return Err(cx.err("expects scalar `on_value` and `off_value`"));
    };
    if on_t != off_t {
        return Err(cx.err(format!("`on_value` and `off_value` have different dtypes `{on_t}` and `{off_t}`")));
    }
    if !idx.dtype.is_void() && !idx.dtype.is_int() {
        return Err(cx.err(format!("expects integer indices, but was given {}", cx.q(idx.ty))));
    }
    if idx.unknown_ndim() {
        return Ok(cx.tensor_ndim(on_t, -1, idx.vdevice));
    }
    let Some(d) = idx.dims().map(<[PrimExpr]>::to_vec) else {
        return Ok(cx.tensor_ndim(on_t, idx.ndim + 1, idx.vdevice));
    };
    let mut axis = cx.attr_int("axis").unwrap_or(-1);
    if axis < 0 {
        axis += d.len() as i64 + 1;
    }
    if axis < 0 || axis > d.len() as i64 {
        return Err(cx.err(format!("axis {axis} is out of range for {}", cx.q(idx.ty))));
    }
    let depth = cx.i64(cx.attr_int("depth").unwrap_or(0));
    let mut dims = d;
    dims.insert(axis as usize, depth);
    Ok(cx.tensor_dims(dims, on_t, idx.vdevice))
}

fn layout_transform(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let x = cx.tensor_arg(0)?;
    // The index map is kept as the text written (`T.index_map(lambda i, j: (...))`); a
    // lambda of `+ - * // %` over its parameters and integers is evaluated here.
    let map = match cx.attr("index_map") {
        Some(crate::attrs::AttrValue::Text(t)) => index_map::parse(t),
        _ => None,
    };
    let Some(map) = map else { return Ok(cx.tensor_ndim(x.dtype, -1, x.vdevice)) };
    let out_ndim = map.outputs.len() as i32;
    if x.unknown_ndim() {
        return Ok(cx.tensor_ndim(x.dtype, out_ndim, x.vdevice));
    }
    if map.params.len() != x.ndim as usize {
        return Err(cx.err(format!(
            "the index map takes {} indices, but {} has rank {}",
            map.params.len(),
            cx.q(x.ty),
            x.ndim
        )));
    }
    let Some(values) = x.values.clone() else { return Ok(cx.tensor_ndim(x.dtype, out_ndim, x.vdevice)) };
    // Each output's extent: the dim itself for a bare parameter, else `max - min + 1` over
    // the constant input ranges.
    let mut dims = Vec::with_capacity(map.outputs.len());
    for o in &map.outputs {
        if let index_map::Ix::Param(i) = o {
            dims.push(values[*i]);
            continue;
        }
        let ranges: Option<Vec<(i64, i64)>> =
            values.iter().map(|&d| cx.as_int(d).and_then(|n| Some((0, n.checked_sub(1)?)))).collect();
        // Dims are any int64: overflowing arithmetic means "unknown".
        match ranges.and_then(|r| o.range(&r)).and_then(|(lo, hi)| hi.checked_sub(lo)?.checked_add(1)) {
            Some(extent) => dims.push(cx.i64(extent)),
            None => return Ok(cx.tensor_ndim(x.dtype, out_ndim, x.vdevice)),
        }
    }
    Ok(cx.tensor_dims(dims, x.dtype, x.vdevice))
}

/// The lambdas of `T.index_map(...)` texts (also read by `legalize-ops`).
pub mod index_map {
    /// An index expression.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Ix {
        /// The `i`-th parameter.
        Param(usize),
        /// An integer.
        Const(i64),
        /// `a op b` with `op` one of `+ - * / %` (`/` is `//`).
        Bin(char, Box<Ix>, Box<Ix>),
    }

    /// `lambda params: (outputs)`.
    #[derive(Clone, Debug)]
    pub struct IndexMap {
        /// The parameter names.
        pub params: Vec<String>,
        /// One expression per output index.
        pub outputs: Vec<Ix>,
    }

    impl Ix {
        /// The range of the expression given the parameters' ranges (`/` is `//`).
        pub fn range(&self, r: &[(i64, i64)]) -> Option<(i64, i64)> {
            Some(match self {
                Ix::Param(i) => *r.get(*i)?,
                Ix::Const(c) => (*c, *c),
                Ix::Bin(op, a, b) => {
                    let (a, b) = (a.range(r)?, b.range(r)?);
                    match op {
                        '+' => (a.0.checked_add(b.0)?, a.1.checked_add(b.1)?),
                        '-' => (a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?),
                        '*' => {
                            let c = [
                                a.0.checked_mul(b.0)?,
                                a.0.checked_mul(b.1)?,
                                a.1.checked_mul(b.0)?,
                                a.1.checked_mul(b.1)?,
                            ];
                            (*c.iter().min()?, *c.iter().max()?)
                        }
                        '/' if b.0 == b.1 && b.0 > 0 => (a.0.div_euclid(b.0), a.1.div_euclid(b.0)),
                        '%' if b.0 == b.1 && b.0 > 0 => {
                            if a.0 >= 0 && a.1 < b.0 {
                                a
                            } else if a.0.div_euclid(b.0) == a.1.div_euclid(b.0) {
                                (a.0.rem_euclid(b.0), a.1.rem_euclid(b.0))
                            } else {
                                (0, b.0 - 1)
                            }
                        }
                        _ => return None,
                    }
                }
            })
        }
    }

    /// Parses `T.index_map(lambda i, j: (e1, e2, ...))`.
    pub fn parse(text: &str) -> Option<IndexMap> {
        let body = text.trim().strip_prefix("T.index_map(")?.strip_suffix(')')?.trim();
        let body = body.strip_prefix("lambda")?;
        let (params, rest) = body.split_once(':')?;
        let params: Vec<String> = params.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
        let toks = tokens(rest)?;
        let mut p = Parser { toks, pos: 0, params: &params };
        let outputs = if p.peek() == Some("(") {
            p.pos += 1;
            let mut out = Vec::new();
            loop {
                if p.peek() == Some(")") {
                    p.pos += 1;
                    break;
                }
                out.push(p.expr()?);
                match p.next()?.as_str() {
                    "," => {}
                    ")" => break,
                    _ => return None,
                }
            }
            out
        } else {
            vec![p.expr()?]
        };
        (p.pos == p.toks.len()).then_some(IndexMap { params, outputs })
    }

    fn tokens(s: &str) -> Option<Vec<String>> {
        let cs: Vec<char> = s.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_alphanumeric() || c == '_' {
                let st = i;
                while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                    i += 1;
                }
                out.push(cs[st..i].iter().collect());
            } else if c == '/' && cs.get(i + 1) == Some(&'/') {
                out.push("//".into());
                i += 2;
            } else if "+-*%(),".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else {
                return None;
            }
        }
        Some(out)
    }

    struct Parser<'a> {
        toks: Vec<String>,
        pos: usize,
        params: &'a [String],
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<&str> {
            self.toks.get(self.pos).map(String::as_str)
        }
        fn next(&mut self) -> Option<String> {
            let t = self.toks.get(self.pos)?.clone();
            self.pos += 1;
            Some(t)
        }
        fn expr(&mut self) -> Option<Ix> {
            let mut a = self.term()?;
            while let Some(op @ ("+" | "-")) = self.peek() {
                let c = op.chars().next()?;
                self.pos += 1;
                a = Ix::Bin(c, Box::new(a), Box::new(self.term()?));
            }
            Some(a)
        }
        fn term(&mut self) -> Option<Ix> {
            let mut a = self.atom()?;
            while let Some(op @ ("*" | "//" | "%")) = self.peek() {
                let c = if op == "//" { '/' } else { op.chars().next()? };
                self.pos += 1;
                a = Ix::Bin(c, Box::new(a), Box::new(self.atom()?));
            }
            Some(a)
        }
        fn atom(&mut self) -> Option<Ix> {
            let t = self.next()?;
            if t == "(" {
                let e = self.expr()?;
                return (self.next()? == ")").then_some(e);
            }
            if let Ok(v) = t.parse::<i64>() {
                return Some(Ix::Const(v));
            }
            self.params.iter().position(|p| *p == t).map(Ix::Param)
        }
    }
}
