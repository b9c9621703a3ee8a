//! Layout-aware ops: convolutions (`nn.conv1d` to `nn.conv3d` and their transposes),
//! pooling (`nn.max_pool*`, `nn.avg_pool*`, `nn.adaptive_avg_pool*`) and the image ops
//! (`image.resize2d`, `image.resize3d`, `image.grid_sample`, `image.affine_grid`).
//!
//! Shapes are moved into the canonical layout (`NCHW`, `OIHW`, ...), computed there and
//! moved back into the output layout. Layouts that permute the canonical axes are
//! supported; packed layouts (`NCHW4c`) give an unknown shape of the layout's rank.

use crate::entities::{PrimExpr, Ty};
use crate::prim::BinOp;
use crate::ty::VDevice;

use super::binary::{arith_dtype, binary_vdevice};
use super::cx::{OpCx, TensorInfo};
use super::simplify::if_then_else;
use super::{InferError, Rule};
use crate::op::{OpId, ops};

/// The rule of a convolution, pooling or image op.
pub(super) const fn rule(id: OpId) -> Option<Rule> {
    Some(Rule::Infer(match id {
        ops::NN_CONV1D => |cx| conv(cx, 1, false),
        ops::NN_CONV2D => |cx| conv(cx, 2, false),
        ops::NN_CONV3D => |cx| conv(cx, 3, false),
        ops::NN_CONV1D_TRANSPOSE => |cx| conv(cx, 1, true),
        ops::NN_CONV2D_TRANSPOSE => |cx| conv(cx, 2, true),
        ops::NN_CONV3D_TRANSPOSE => |cx| conv(cx, 3, true),
        ops::NN_MAX_POOL1D | ops::NN_AVG_POOL1D => |cx| pool(cx, 1),
        ops::NN_MAX_POOL2D | ops::NN_AVG_POOL2D => |cx| pool(cx, 2),
        ops::NN_MAX_POOL3D | ops::NN_AVG_POOL3D => |cx| pool(cx, 3),
        ops::NN_ADAPTIVE_AVG_POOL1D => |cx| adaptive_pool(cx, 1),
        ops::NN_ADAPTIVE_AVG_POOL2D => |cx| adaptive_pool(cx, 2),
        ops::NN_ADAPTIVE_AVG_POOL3D => |cx| adaptive_pool(cx, 3),
        ops::IMAGE_RESIZE2D => |cx| resize(cx, 2),
        ops::IMAGE_RESIZE3D => |cx| resize(cx, 3),
        ops::IMAGE_GRID_SAMPLE => grid_sample,
        ops::IMAGE_AFFINE_GRID => affine_grid,
        _ => return None,
    }))
}

/// The spatial axis letters of a rank.
fn spatial(d: usize) -> &'static str {
    match d {
        1 => "W",
        2 => "HW",
        _ => "DHW",
    }
}

/// A layout: its axis letters. `None` for packed layouts (sub-axes such as `4c`).
struct Layout {
    /// The layout as written.
    name: String,
    /// Primal axes in order, when the layout has no sub-axes.
    axes: Option<Vec<char>>,
}

impl Layout {
    fn new(name: &str) -> Layout {
        let axes = name.chars().all(|c| c.is_ascii_uppercase()).then(|| name.chars().collect());
        Layout { name: name.to_string(), axes }
    }
    /// The number of axes (sub-axes count as axes).
    fn ndim(&self) -> i32 {
        self.name.chars().filter(|c| c.is_ascii_alphabetic()).count() as i32
    }
    /// `shape` (in this layout) reordered into `target`'s axis order.
    fn forward(&self, shape: &[PrimExpr], target: &str) -> Option<Vec<PrimExpr>> {
        let axes = self.axes.as_ref()?;
        target.chars().map(|t| axes.iter().position(|&a| a == t).map(|i| shape[i])).collect()
    }
    /// `shape` (in `target`'s axis order) reordered into this layout.
    fn backward(&self, shape: &[PrimExpr], target: &str) -> Option<Vec<PrimExpr>> {
        let axes = self.axes.as_ref()?;
        let t: Vec<char> = target.chars().collect();
        axes.iter().map(|a| t.iter().position(|c| c == a).map(|i| shape[i])).collect()
    }
}

/// Checks that `layout` is made of `target`'s axes.
fn layout(cx: &OpCx<'_>, name: &str, target: &str, what: &str) -> Result<Layout, InferError> {
    let l = Layout::new(name);
    let mut primal: Vec<char> = name.chars().filter(|c| c.is_ascii_uppercase()).collect();
    primal.sort_unstable();
    let mut want: Vec<char> = target.chars().collect();
    want.sort_unstable();
    if primal != want {
        return Err(cx.err(format!("the {what} layout `{name}` does not have the axes of `{target}`")));
    }
    Ok(l)
}

/// The dims of `t` when its rank matches `l` (an error when it does not).
fn shape_in(cx: &OpCx<'_>, t: &TensorInfo, l: &Layout, what: &str) -> Result<Option<Vec<PrimExpr>>, InferError> {
    if !t.unknown_ndim() && t.ndim != l.ndim() {
        return Err(cx.err(format!("the {what} {} does not have the rank of its layout `{}`", cx.q(t.ty), l.name)));
    }
    Ok(t.dims().map(<[PrimExpr]>::to_vec))
}

/// A string attribute, or `default` when absent or `None`.
fn str_attr(cx: &OpCx<'_>, name: &str, default: &str) -> String {
    cx.attr_str(name).unwrap_or(default).to_string()
}

/// An integer-list attribute completed to `n` values ([`crate::attrs::complete_ints`]).
fn ints(cx: &OpCx<'_>, name: &str, n: usize, default: i64) -> Vec<i64> {
    crate::attrs::complete_ints(cx.attr_ints(name), n, default)
}

fn conv(cx: &mut OpCx<'_>, d: usize, transpose: bool) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let weight = cx.tensor_arg(1)?;
    let sp = spatial(d);
    let (dt, kt) = (format!("NC{sp}"), if transpose { format!("IO{sp}") } else { format!("OI{sp}") });
    let dl = str_attr(cx, "data_layout", &dt);
    let kl = str_attr(cx, "kernel_layout", &kt);
    let ol = cx.attr_str("out_layout").map_or_else(|| dl.clone(), str::to_string);
    let dl = layout(cx, &dl, &dt, "data")?;
    let kl = layout(cx, &kl, &kt, "kernel")?;
    let ol = layout(cx, &ol, &dt, "output")?;
    let ds = shape_in(cx, &data, &dl, "data")?;
    let ws = shape_in(cx, &weight, &kl, "weight")?;
    let dtype = match cx.attr_dtype("out_dtype") {
        Some(t) => t,
        None => arith_dtype(cx, (data.ty, data.dtype), (weight.ty, weight.dtype))?,
    };
    let vdevice = binary_vdevice(cx, (data.ty, data.vdevice.clone()), (weight.ty, weight.vdevice.clone()))?;
    let unknown = |cx: &mut OpCx<'_>, vd: Option<VDevice>| cx.tensor_ndim(dtype, ol.ndim(), vd);
    let (Some(ds), Some(ws)) = (ds, ws) else { return Ok(unknown(cx, vdevice)) };
    let (Some(dn), Some(wn)) = (dl.forward(&ds, &dt), kl.forward(&ws, &kt)) else {
        return Ok(unknown(cx, vdevice));
    };
    let groups = cx.attr_int("groups").unwrap_or(1);
    let g = cx.i64(groups);
    let strides = ints(cx, "strides", d, 1);
    let dilation = ints(cx, "dilation", d, 1);
    let padding = ints(cx, "padding", 2 * d, 0);
    let in_ch = dn[1];
    let mut out = vec![dn[0]];
    if transpose {
        let k_in = wn[0];
        if cx.prove_not_equal(in_ch, k_in) {
            return Err(cx.err(format!(
                "the data has {} channels but the weight expects {}: {} and {}",
                cx.qp(in_ch),
                cx.qp(k_in),
                cx.q(data.ty),
                cx.q(weight.ty)
            )));
        }
        let out_pad = ints(cx, "output_padding", d, 0);
        if out_pad.iter().zip(&strides).any(|(p, s)| p >= s) {
            return Err(cx.err(format!("the output padding {out_pad:?} is not less than the strides {strides:?}")));
        }
        out.push(cx.bin(BinOp::Mul, wn[1], g));
        for i in 0..d {
            // (in - 1) * stride - pad + dilation * (k - 1) + output_padding + 1
            let one = cx.i64(1);
            let a = cx.bin(BinOp::Sub, dn[2 + i], one);
            let s = cx.i64(strides[i]);
            let a = cx.bin(BinOp::Mul, a, s);
            let p = cx.i64(padding[i].wrapping_add(padding[i + d]));
            let a = cx.bin(BinOp::Sub, a, p);
            let k = cx.bin(BinOp::Sub, wn[2 + i], one);
            let dil = cx.i64(dilation[i]);
            let k = cx.bin(BinOp::Mul, dil, k);
            let a = cx.bin(BinOp::Add, a, k);
            let op = cx.i64(out_pad[i]);
            let a = cx.bin(BinOp::Add, a, op);
            let a = cx.bin(BinOp::Add, a, one);
            out.push(cx.simplify(a));
        }
    } else {
        let want = cx.bin(BinOp::Mul, wn[1], g);
        if cx.prove_not_equal(in_ch, want) {
            return Err(cx.err(format!(
                "the data has {} channels but the weight expects {} ({} per group, {groups} group{}): {} and {}",
                cx.qp(in_ch),
                cx.qp(want),
                cx.qp(wn[1]),
                if groups == 1 { "" } else { "s" },
                cx.q(data.ty),
                cx.q(weight.ty)
            )));
        }
        out.push(wn[0]);
        for i in 0..d {
            // (in + pad - dilation * (k - 1) - 1) // stride + 1
            let one = cx.i64(1);
            let p = cx.i64(padding[i].wrapping_add(padding[i + d]));
            let a = cx.bin(BinOp::Add, dn[2 + i], p);
            let k = cx.bin(BinOp::Sub, wn[2 + i], one);
            let dil = cx.i64(dilation[i]);
            let k = cx.bin(BinOp::Mul, dil, k);
            let a = cx.bin(BinOp::Sub, a, k);
            let a = cx.bin(BinOp::Sub, a, one);
            let s = cx.i64(strides[i]);
            let a = cx.bin(BinOp::FloorDiv, a, s);
            let a = cx.bin(BinOp::Add, a, one);
            out.push(cx.simplify(a));
        }
    }
    match ol.backward(&out, &dt) {
        Some(s) => Ok(cx.tensor_dims(s, dtype, vdevice)),
        None => Ok(unknown(cx, vdevice)),
    }
}

fn pool(cx: &mut OpCx<'_>, d: usize) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let dt = format!("NC{}", spatial(d));
    let dl = str_attr(cx, "layout", &dt);
    let ol = cx.attr_str("out_layout").map_or_else(|| dl.clone(), str::to_string);
    let dl = layout(cx, &dl, &dt, "data")?;
    let ol = layout(cx, &ol, &dt, "output")?;
    let ds = shape_in(cx, &data, &dl, "data")?;
    let unknown = |cx: &mut OpCx<'_>| cx.tensor_ndim(data.dtype, ol.ndim(), data.vdevice.clone());
    let Some(dn) = ds.and_then(|s| dl.forward(&s, &dt)) else { return Ok(unknown(cx)) };
    let pool_size = ints(cx, "pool_size", d, 1);
    let strides = ints(cx, "strides", d, 1);
    let dilation = ints(cx, "dilation", d, 1);
    let padding = ints(cx, "padding", 2 * d, 0);
    let ceil_mode = cx.attr_bool("ceil_mode", false);
    let mut out = vec![dn[0], dn[1]];
    for i in 0..d {
        let one = cx.i64(1);
        let p = cx.i64(padding[i].wrapping_add(padding[i + d]));
        let a = cx.bin(BinOp::Add, dn[2 + i], p);
        let k = cx.i64(dilation[i].wrapping_mul(pool_size[i].wrapping_sub(1)));
        let a = cx.bin(BinOp::Sub, a, k);
        let mut a = cx.bin(BinOp::Sub, a, one);
        let s = cx.i64(strides[i]);
        if ceil_mode {
            let sm1 = cx.i64(strides[i].wrapping_sub(1));
            a = cx.bin(BinOp::Add, a, sm1);
        }
        let a = cx.bin(BinOp::FloorDiv, a, s);
        let raw = cx.bin(BinOp::Add, a, one);
        let r = if ceil_mode {
            let last = cx.bin(BinOp::Sub, raw, one);
            let start = cx.bin(BinOp::Mul, last, s);
            let pb = cx.i64(padding[i]);
            let lim = cx.bin(BinOp::Add, dn[2 + i], pb);
            let invalid = cx.bin(BinOp::Ge, start, lim);
            if_then_else(&mut cx.f.pool, invalid, last, raw)
        } else {
            raw
        };
        out.push(cx.simplify(r));
    }
    match ol.backward(&out, &dt) {
        Some(s) => Ok(cx.tensor_dims(s, data.dtype, data.vdevice.clone())),
        None => Ok(unknown(cx)),
    }
}

fn adaptive_pool(cx: &mut OpCx<'_>, d: usize) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let dt = format!("NC{}", spatial(d));
    let dl_name = str_attr(cx, "layout", &dt);
    let ol_name = cx.attr_str("out_layout").map_or_else(|| dl_name.clone(), str::to_string);
    let dl = layout(cx, &dl_name, &dt, "data")?;
    let ol = layout(cx, &ol_name, &dt, "output")?;
    let output_size = cx.attr_ints("output_size");
    let ds = shape_in(cx, &data, &dl, "data")?;
    let Some(dn) = ds.and_then(|s| dl.forward(&s, &dt)) else {
        if data.has_shape() && ol_name == dl_name && output_size.is_none() {
            return Ok(data.ty);
        }
        return Ok(cx.tensor_ndim(data.dtype, ol.ndim(), data.vdevice));
    };
    let mut out = dn;
    if let Some(sz) = output_size {
        for i in 0..d {
            let v = if sz.len() == 1 { sz[0] } else { sz.get(i).copied().unwrap_or(1) };
            out[2 + i] = cx.i64(v);
        }
    }
    match ol.backward(&out, &dt) {
        Some(s) => Ok(cx.tensor_dims(s, data.dtype, data.vdevice)),
        None => Ok(cx.tensor_ndim(data.dtype, ol.ndim(), data.vdevice)),
    }
}

fn resize(cx: &mut OpCx<'_>, d: usize) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let nd = cx.shape_arg_ndim(1)?;
    if nd != d as i32 {
        return Err(cx.err(format!("expects a size of {d} dims, but was given one of rank {nd}")));
    }
    let dt = format!("NC{}", spatial(d));
    let dl = str_attr(cx, "layout", &dt);
    let dl = layout(cx, &dl, &dt, "data")?;
    let dtype = cx.attr_dtype("out_dtype").unwrap_or(data.dtype);
    let ds = shape_in(cx, &data, &dl, "data")?;
    let size = match cx.arg(1).map(|a| cx.f.exprs[a].clone()) {
        Some(crate::relax::ExprData::Shape(s)) => Some(s),
        _ => None,
    };
    let (Some(dn), Some(size)) = (ds.and_then(|s| dl.forward(&s, &dt)), size) else {
        return Ok(cx.tensor_ndim(dtype, dl.ndim(), data.vdevice));
    };
    let mut out = dn;
    if size.len() < d {
        return Ok(cx.tensor_ndim(dtype, dl.ndim(), data.vdevice));
    }
    out[2..2 + d].copy_from_slice(&size[..d]);
    match dl.backward(&out, &dt) {
        Some(s) => Ok(cx.tensor_dims(s, dtype, data.vdevice)),
        None => Ok(cx.tensor_ndim(dtype, dl.ndim(), data.vdevice)),
    }
}

fn grid_sample(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let grid = cx.tensor_arg(1)?;
    let name = str_attr(cx, "layout", "NCHW");
    let dt = if name == "NCDHW" { "NCDHW" } else { "NCHW" };
    let dl = layout(cx, &name, dt, "data")?;
    let ds = shape_in(cx, &data, &dl, "data")?;
    let (Some(dn), Some(gs)) = (ds.and_then(|s| dl.forward(&s, dt)), grid.dims().map(<[PrimExpr]>::to_vec)) else {
        return Ok(cx.tensor_ndim(data.dtype, dl.ndim(), data.vdevice));
    };
    let sp = dt.len() - 2;
    if gs.len() < 2 + sp {
        return Err(cx.err(format!("the grid {} has too few dims", cx.q(grid.ty))));
    }
    let mut out = dn;
    // TVM 0.25 reads the output size from a grid laid out `(N, H, W, 2)`, TVM 0.27 from
    // one laid out `(N, 2, H, W)`; text of either release must read, so the size is
    // only known when both readings agree.
    let same = (0..sp).all(|i| cx.prove_equal(gs[1 + i], gs[2 + i]));
    if !same {
        return Ok(cx.tensor_ndim(data.dtype, dl.ndim(), data.vdevice));
    }
    out[2..2 + sp].copy_from_slice(&gs[1..1 + sp]);
    match dl.backward(&out, dt) {
        Some(s) => Ok(cx.tensor_dims(s, data.dtype, data.vdevice)),
        None => Ok(cx.tensor_ndim(data.dtype, dl.ndim(), data.vdevice)),
    }
}

fn affine_grid(cx: &mut OpCx<'_>) -> Result<Ty, InferError> {
    let data = cx.tensor_arg(0)?;
    let sp = cx.shape_arg_ndim(1)?;
    if sp != 2 && sp != 3 {
        return Err(cx.err(format!("expects a size of 2 or 3 dims, but was given one of rank {sp}")));
    }
    if data.ndim != -1 && data.ndim != 3 {
        return Err(cx.err(format!("expects a rank-3 theta, but was given {}", cx.q(data.ty))));
    }
    let size = match cx.arg(1).map(|a| cx.f.exprs[a].clone()) {
        Some(crate::relax::ExprData::Shape(s)) => Some(s),
        _ => None,
    };
    let (Some(d), Some(size)) = (data.dims().map(<[PrimExpr]>::to_vec), size) else {
        return Ok(cx.tensor_ndim(data.dtype, sp + 2, data.vdevice));
    };
    let mut out = vec![d[0], cx.i64(i64::from(sp))];
    out.extend(size.iter().copied());
    Ok(cx.tensor_dims(out, data.dtype, data.vdevice))
}
