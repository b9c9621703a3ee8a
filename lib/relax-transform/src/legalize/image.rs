//! Image ops (`legalize_ops/image.py`; TOPI's `image/resize.py`).
//!
//! `image.resize2d` becomes `resize2d`, one compute `resize` over the output (axes `i0,
//! i1, ...`), written as `_resize_2d` writes it: the output position mapped to an input
//! coordinate by the `coordinate_transformation_mode` (`half_pixel`, `align_corners`,
//! `asymmetric`, `pytorch_half_pixel`, `tf_half_pixel_for_nn`; the scale is
//! `float32(in) / float32(out)`), then
//!
//! * `nearest_neighbor`: the coordinate rounded by `rounding_method` (`round`, `floor`
//!   and `ceil` with TOPI's `1e-5` nudge, `round_prefer_floor`, `round_prefer_ceil`; an
//!   integer division when the output is an integer multiple of the input, `asymmetric`
//!   and `floor`, as TOPI's `can_convert_multiply_to_intdiv` decides);
//! * `linear`: the four neighbours `floor(coordinate) + {0, 1}` blended by
//!   `a * (1 - t) + b * t`, along the width first;
//! * `cubic`: the sixteen neighbours `floor(coordinate) - 1 .. + 2` weighted by the cubic
//!   spline of `cubic_alpha` (renormalized without the outside ones when
//!   `cubic_exclude`), rows first.
//!
//! Every neighbour index is clamped into the image, and pixels are read as float32. The
//! layouts are `NCHW` and `NHWC`; `tf_crop_and_resize` (which reads `roi`) and packed
//! layouts are not legalized. The value is cast to `out_dtype` when it is set, as TOPI's
//! `_cast_output` does when given one: TVM 0.25's legalization does not pass it on, so
//! its kernel returns the data's dtype where the op's type says `out_dtype` (a
//! deliberate difference, docs/legalize.md).
//!
//! `image.resize3d` becomes `resize3d` the same way after `_resize_3d` (`NCDHW`,
//! `NDHWC`; no integer division for nearest): trilinear blending along the width, then
//! the height, then the depth, and TOPI's cubic with its `cubic_exclude` quirk kept (the
//! depth weights are made from the width's, as TOPI writes them).
//!
//! `image.grid_sample(x, grid)` becomes `grid_sample` after TOPI's `_grid_sample_2d`:
//! one compute `compute` over `n, c, h, w` reading the grid as `(N, 2, H, W)` (x at
//! `grid[n, 0]`, y at `grid[n, 1]`), unnormalized by `align_corners`, then `bilinear`,
//! `nearest` (`nearbyint`) or `bicubic` (PyTorch's `A = -0.75`) sampling with
//! `padding_mode` `zeros` (out-of-image pixels read zero), `border` (coordinates
//! clipped) or `reflection`. Only `NCHW` data is legalized. The output is TOPI's `(N, C,
//! grid.shape[2], grid.shape[3])`, as in TVM whatever the call's type says (type
//! inference knows the shape only where TVM 0.25's `(N, H, W, 2)` and 0.27's `(N, 2, H,
//! W)` readings of the grid agree; TVM 0.25 legalizes `(N, H, W, 2)` grids to TOPI's
//! shape too).
//!
//! `image.affine_grid(theta, (h, w))` becomes `affine_grid`: `compute` over `n, dim, i,
//! j` of `theta[n, dim, 0] * x + theta[n, dim, 1] * y + theta[n, dim, 2]`, with `x`, `y`
//! stepping from -1 by `(2 - 1e-7) / (size - 1)`.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr};

use super::cx::Cx;
use super::te::{Axes, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of an image op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::IMAGE_RESIZE2D => resize2d,
        ops::IMAGE_RESIZE3D => resize3d,
        ops::IMAGE_GRID_SAMPLE => grid_sample,
        ops::IMAGE_AFFINE_GRID => affine_grid,
        _ => return None,
    })
}

const F32: DataType = DataType::FLOAT32;

fn f32c(te: &mut Te, v: f64) -> PrimExpr {
    te.const_f(F32, v)
}

fn i32c(te: &mut Te, v: i64) -> PrimExpr {
    te.pool.int(DataType::INT32, v)
}

fn call(te: &mut Te, name: Intrinsic, x: PrimExpr) -> PrimExpr {
    te.call(name, &[x])
}

/// The attributes that shape the computation.
struct Mode {
    method: String,
    ctm: String,
    rounding: String,
    alpha: f64,
    exclude: bool,
}

/// `get_inx`: the input coordinate of output index `x`.
fn get_inx(te: &mut Te, x: PrimExpr, image: PrimExpr, target: PrimExpr, ctm: &str, int_div: bool) -> Option<PrimExpr> {
    let fi = te.cast(F32, image);
    let ft = te.cast(F32, target);
    let scale = te.bin(BinOp::Div, fi, ft);
    let half = |te: &mut Te| f32c(te, 0.5);
    Some(match ctm {
        "half_pixel" => {
            let h = half(te);
            let a = te.add(x, h);
            let b = te.mul(a, scale);
            let h = half(te);
            te.sub(b, h)
        }
        "align_corners" => {
            let one = te.i64(1);
            let im1 = te.sub(image, one);
            let im1 = te.cast(F32, im1);
            let one = te.i64(1);
            let tm1 = te.sub(target, one);
            let r = te.bin(BinOp::Div, im1, tm1);
            te.mul(r, x)
        }
        "asymmetric" if int_div => {
            let d = te.bin(BinOp::Div, target, image);
            te.bin(BinOp::Div, x, d)
        }
        "asymmetric" => te.mul(scale, x),
        "pytorch_half_pixel" => {
            let one = te.i64(1);
            let cond = te.bin(BinOp::Gt, target, one);
            let h = half(te);
            let a = te.add(x, h);
            let b = te.mul(a, scale);
            let h = half(te);
            let v = te.sub(b, h);
            let zero = f32c(te, 0.0);
            te.if_then_else(cond, v, zero)
        }
        "tf_half_pixel_for_nn" => {
            let h = half(te);
            let a = te.add(x, h);
            te.mul(a, scale)
        }
        _ => return None,
    })
}

/// `get_closest_index`.
fn closest(te: &mut Te, x: PrimExpr, rounding: &str, int_div: bool) -> Option<PrimExpr> {
    let i = |te: &mut Te, v: PrimExpr| te.cast(DataType::INT32, v);
    if int_div {
        return Some(i(te, x));
    }
    Some(match rounding {
        "round" => {
            let r = call(te, Intrinsic::Round, x);
            i(te, r)
        }
        "round_prefer_floor" => {
            let h = f32c(te, 0.5);
            let a = te.sub(x, h);
            let r = call(te, Intrinsic::Ceil, a);
            i(te, r)
        }
        "round_prefer_ceil" => {
            let h = f32c(te, 0.5);
            let a = te.add(x, h);
            let r = call(te, Intrinsic::Floor, a);
            i(te, r)
        }
        "floor" => {
            let e = f32c(te, 1e-5);
            let a = te.add(x, e);
            let r = call(te, Intrinsic::Floor, a);
            i(te, r)
        }
        "ceil" => {
            let e = f32c(te, 1e-5);
            let a = te.sub(x, e);
            let r = call(te, Intrinsic::Ceil, a);
            i(te, r)
        }
        _ => return None,
    })
}

/// `can_convert_multiply_to_intdiv`.
fn int_div_ok(te: &Te, origin: PrimExpr, scaled: PrimExpr) -> bool {
    let (Some(o), Some(s)) = (te.pool.as_int(origin), te.pool.as_int(scaled)) else { return false };
    if o == 0 {
        return false;
    }
    // TOPI computes in float32.
    let div = (s as f32) / (o as f32);
    if div % 1.0 != 0.0 {
        return false;
    }
    let eps = 1e-5f32;
    let check = 1.0 / (eps * o as f32 + eps);
    div <= check
}

/// `get_2d_pixel`: the clamped pixel, read as float32.
#[allow(clippy::too_many_arguments, reason = "TOPI's signature")]
fn pixel(
    te: &mut Te,
    data: Tensor,
    nhwc: bool,
    h: PrimExpr,
    w: PrimExpr,
    n: PrimExpr,
    c: PrimExpr,
    y: PrimExpr,
    x: PrimExpr,
) -> PrimExpr {
    let clamp = clamp_to;
    let y = clamp(te, y, h);
    let x = clamp(te, x, w);
    let idx = if nhwc { [n, y, x, c] } else { [n, c, y, x] };
    let v = te.load(data, &idx);
    te.cast(F32, v)
}

/// `a * (1.0 - t) + b * t`.
fn lerp(te: &mut Te, a: PrimExpr, b: PrimExpr, t: PrimExpr) -> PrimExpr {
    let one = f32c(te, 1.0);
    let s = te.sub(one, t);
    let l = te.mul(a, s);
    let r = te.mul(b, t);
    te.add(l, r)
}

/// `_cubic_spline_weights`: the Python float coefficients are folded first.
fn spline(te: &mut Te, t: PrimExpr, alpha: f64) -> [PrimExpr; 4] {
    let t2 = te.mul(t, t);
    let tt = te.mul(t, t);
    let t3 = te.mul(tt, t);
    let c = |te: &mut Te, v: f64| f32c(te, v);
    // w1 = alpha * (t3 - 2 * t2 + t)
    let two = c(te, 2.0);
    let a = te.mul(two, t2);
    let a = te.sub(t3, a);
    let a = te.add(a, t);
    let al = c(te, alpha);
    let w1 = te.mul(al, a);
    // w2 = (alpha + 2) * t3 - (3 + alpha) * t2 + 1
    let k = c(te, alpha + 2.0);
    let a = te.mul(k, t3);
    let k = c(te, 3.0 + alpha);
    let b = te.mul(k, t2);
    let a = te.sub(a, b);
    let one = c(te, 1.0);
    let w2 = te.add(a, one);
    // w3 = -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t
    let k = c(te, -(alpha + 2.0));
    let a = te.mul(k, t3);
    let k = c(te, 3.0 + 2.0 * alpha);
    let b = te.mul(k, t2);
    let a = te.add(a, b);
    let k = c(te, alpha);
    let b = te.mul(k, t);
    let w3 = te.sub(a, b);
    // w4 = -alpha * t3 + alpha * t2
    let k = c(te, -alpha);
    let a = te.mul(k, t3);
    let k = c(te, alpha);
    let b = te.mul(k, t2);
    let w4 = te.add(a, b);
    [w1, w2, w3, w4]
}

/// `sum(a_i * w_i)`.
fn cubic_kernel(te: &mut Te, p: &[PrimExpr], w: &[PrimExpr]) -> PrimExpr {
    let mut acc = te.mul(p[0], w[0]);
    for i in 1..4 {
        let m = te.mul(p[i], w[i]);
        acc = te.add(acc, m);
    }
    acc
}

/// TOPI's `exclude_outside` weights: zero outside `[0, dim]`, renormalized.
fn exclude(te: &mut Te, w: [PrimExpr; 4], int: PrimExpr, dim: PrimExpr) -> [PrimExpr; 4] {
    let mut out = w;
    for (i, slot) in out.iter_mut().enumerate() {
        let a = i32c(te, i as i64 - 1);
        let lo = te.add(int, a);
        let zero = i32c(te, 0);
        let below = te.bin(BinOp::Lt, lo, zero);
        let b = i32c(te, i as i64);
        let hi = te.add(int, b);
        let above = te.bin(BinOp::Gt, hi, dim);
        let any = te.bin(BinOp::Or, below, above);
        let z = f32c(te, 0.0);
        *slot = te.if_then_else(any, z, *slot);
    }
    let mut sum = out[0];
    for &x in &out[1..] {
        sum = te.add(sum, x);
    }
    out.map(|x| te.bin(BinOp::Div, x, sum))
}

#[allow(clippy::too_many_arguments, reason = "the pieces of `_resize_2d`")]
fn resize_value(
    te: &mut Te,
    data: Tensor,
    nhwc: bool,
    (h, w): (PrimExpr, PrimExpr),
    (th, tw): (PrimExpr, PrimExpr),
    mode: &Mode,
    idx: &[PrimExpr],
) -> Option<PrimExpr> {
    let (n, c, y, x) = if nhwc { (idx[0], idx[3], idx[1], idx[2]) } else { (idx[0], idx[1], idx[2], idx[3]) };
    let nearest = mode.method == "nearest_neighbor";
    let (mut hdiv, mut wdiv) = (false, false);
    if nearest && mode.ctm == "asymmetric" && (mode.rounding == "floor" || mode.rounding.is_empty()) {
        hdiv = int_div_ok(te, h, th);
        wdiv = int_div_ok(te, w, tw);
    }
    let in_x = get_inx(te, x, w, tw, &mode.ctm, wdiv)?;
    let in_y = get_inx(te, y, h, th, &mode.ctm, hdiv)?;
    Some(match mode.method.as_str() {
        "nearest_neighbor" => {
            let rounding = match mode.rounding.as_str() {
                "" if mode.ctm == "align_corners" => "round",
                "" => "floor",
                r => r,
            };
            let cx = closest(te, in_x, rounding, wdiv)?;
            let cy = closest(te, in_y, rounding, hdiv)?;
            pixel(te, data, nhwc, h, w, n, c, cy, cx)
        }
        "linear" => {
            let fy = call(te, Intrinsic::Floor, in_y);
            let yi = te.cast(DataType::INT32, fy);
            let fx = call(te, Intrinsic::Floor, in_x);
            let xi = te.cast(DataType::INT32, fx);
            let yl = te.sub(in_y, yi);
            let xl = te.sub(in_x, xi);
            let mut p = [[yi; 2]; 2];
            for (j, row) in p.iter_mut().enumerate() {
                for (i, slot) in row.iter_mut().enumerate() {
                    let dj = i32c(te, j as i64);
                    let yy = te.add(yi, dj);
                    let di = i32c(te, i as i64);
                    let xx = te.add(xi, di);
                    *slot = pixel(te, data, nhwc, h, w, n, c, yy, xx);
                }
            }
            let top = lerp(te, p[0][0], p[0][1], xl);
            let bottom = lerp(te, p[1][0], p[1][1], xl);
            lerp(te, top, bottom, yl)
        }
        "cubic" => {
            let fx = call(te, Intrinsic::Floor, in_x);
            let xi = te.cast(DataType::INT32, fx);
            let fx = call(te, Intrinsic::Floor, in_x);
            let xf = te.sub(in_x, fx);
            let fy = call(te, Intrinsic::Floor, in_y);
            let yi = te.cast(DataType::INT32, fy);
            let fy = call(te, Intrinsic::Floor, in_y);
            let yf = te.sub(in_y, fy);
            let mut p = [[yi; 4]; 4];
            for (j, row) in p.iter_mut().enumerate() {
                for (i, slot) in row.iter_mut().enumerate() {
                    let dj = i32c(te, j as i64);
                    let yy = te.add(yi, dj);
                    let one = i32c(te, 1);
                    let yy = te.sub(yy, one);
                    let di = i32c(te, i as i64);
                    let xx = te.add(xi, di);
                    let one = i32c(te, 1);
                    let xx = te.sub(xx, one);
                    *slot = pixel(te, data, nhwc, h, w, n, c, yy, xx);
                }
            }
            let mut wx = spline(te, xf, mode.alpha);
            let mut wy = spline(te, yf, mode.alpha);
            if mode.exclude {
                wx = exclude(te, wx, xi, w);
                wy = exclude(te, wy, yi, h);
            }
            let cols: Vec<PrimExpr> = p.iter().map(|row| cubic_kernel(te, row, &wx)).collect();
            cubic_kernel(te, &cols, &wy)
        }
        _ => return None,
    })
}

/// `get_3d_pixel`: the clamped pixel, read as float32.
fn pixel3(
    te: &mut Te,
    data: Tensor,
    ndhwc: bool,
    dims: [PrimExpr; 3],
    n: PrimExpr,
    c: PrimExpr,
    at: [PrimExpr; 3],
) -> PrimExpr {
    let clamp = clamp_to;
    let z = clamp(te, at[0], dims[0]);
    let y = clamp(te, at[1], dims[1]);
    let x = clamp(te, at[2], dims[2]);
    let idx = if ndhwc { [n, z, y, x, c] } else { [n, c, z, y, x] };
    let v = te.load(data, &idx);
    te.cast(F32, v)
}

/// `_resize_3d`'s value at output position `idx`.
fn resize3_value(
    te: &mut Te,
    data: Tensor,
    ndhwc: bool,
    dims: [PrimExpr; 3],
    target: [PrimExpr; 3],
    mode: &Mode,
    idx: &[PrimExpr],
) -> Option<PrimExpr> {
    let (n, c, z, y, x) =
        if ndhwc { (idx[0], idx[4], idx[1], idx[2], idx[3]) } else { (idx[0], idx[1], idx[2], idx[3], idx[4]) };
    let in_z = get_inx(te, z, dims[0], target[0], &mode.ctm, false)?;
    let in_y = get_inx(te, y, dims[1], target[1], &mode.ctm, false)?;
    let in_x = get_inx(te, x, dims[2], target[2], &mode.ctm, false)?;
    let ins = [in_z, in_y, in_x];
    Some(match mode.method.as_str() {
        "nearest_neighbor" => {
            let rounding = match mode.rounding.as_str() {
                "" if mode.ctm == "align_corners" => "round",
                "" => "floor",
                r => r,
            };
            let mut at = [z; 3];
            for (slot, &v) in at.iter_mut().zip(&ins) {
                *slot = closest(te, v, rounding, false)?;
            }
            pixel3(te, data, ndhwc, dims, n, c, at)
        }
        "linear" => {
            let mut ints = [z; 3];
            for (slot, &v) in ints.iter_mut().zip(&ins) {
                let f = call(te, Intrinsic::Floor, v);
                *slot = te.cast(DataType::INT32, f);
            }
            let mut lerps = [z; 3];
            for d in 0..3 {
                lerps[d] = te.sub(ins[d], ints[d]);
            }
            let mut p = [[[z; 2]; 2]; 2];
            for (k, plane) in p.iter_mut().enumerate() {
                for (j, row) in plane.iter_mut().enumerate() {
                    for (i, slot) in row.iter_mut().enumerate() {
                        let mut at = [z; 3];
                        for (d, off) in [k, j, i].into_iter().enumerate() {
                            let o = i32c(te, off as i64);
                            at[d] = te.add(ints[d], o);
                        }
                        *slot = pixel3(te, data, ndhwc, dims, n, c, at);
                    }
                }
            }
            let mut l = [[z; 2]; 2];
            for j in 0..2 {
                for i in 0..2 {
                    l[j][i] = lerp(te, p[j][i][0], p[j][i][1], lerps[2]);
                }
            }
            let top = lerp(te, l[0][0], l[0][1], lerps[1]);
            let bottom = lerp(te, l[1][0], l[1][1], lerps[1]);
            lerp(te, top, bottom, lerps[0])
        }
        "cubic" => {
            let mut ints = [z; 3];
            let mut fracts = [z; 3];
            for d in 0..3 {
                let f = call(te, Intrinsic::Floor, ins[d]);
                ints[d] = te.cast(DataType::INT32, f);
                let f = call(te, Intrinsic::Floor, ins[d]);
                fracts[d] = te.sub(ins[d], f);
            }
            let mut p = [[[z; 4]; 4]; 4];
            for (k, plane) in p.iter_mut().enumerate() {
                for (j, row) in plane.iter_mut().enumerate() {
                    for (i, slot) in row.iter_mut().enumerate() {
                        let mut at = [z; 3];
                        for (d, off) in [k, j, i].into_iter().enumerate() {
                            let o = i32c(te, off as i64);
                            let a = te.add(ints[d], o);
                            let one = i32c(te, 1);
                            at[d] = te.sub(a, one);
                        }
                        *slot = pixel3(te, data, ndhwc, dims, n, c, at);
                    }
                }
            }
            let mut wz = spline(te, fracts[0], mode.alpha);
            let mut wy = spline(te, fracts[1], mode.alpha);
            let mut wx = spline(te, fracts[2], mode.alpha);
            if mode.exclude {
                // As TOPI: the depth weights test the width index against the height and
                // take the width's weights.
                let wx_in = wx;
                wz = exclude(te, wx_in, ints[2], dims[1]);
                wy = exclude(te, wy, ints[1], dims[1]);
                wx = exclude(te, wx_in, ints[2], dims[2]);
            }
            let mut l = [[z; 4]; 4];
            for j in 0..4 {
                for i in 0..4 {
                    l[j][i] = cubic_kernel(te, &p[j][i], &wx);
                }
            }
            let cols: Vec<PrimExpr> = l.iter().map(|row| cubic_kernel(te, row, &wy)).collect();
            cubic_kernel(te, &cols, &wz)
        }
        _ => return None,
    })
}

/// The resize attributes (`rounding` defaults to the op's default).
fn mode(cx: &Cx, rounding: &str) -> Mode {
    let s = |k: &str, d: &str| cx.attr(k).and_then(|v| v.as_str()).unwrap_or(d).to_string();
    Mode {
        method: s("method", "linear"),
        ctm: s("coordinate_transformation_mode", "half_pixel"),
        rounding: s("rounding_method", rounding),
        alpha: cx.attr_f64("cubic_alpha").unwrap_or(-0.75),
        exclude: cx.attr_int("cubic_exclude").unwrap_or(0) != 0,
    }
}

fn resize2d(cx: &mut Cx) -> Option<Lowered> {
    resize(cx, 2)
}

fn resize3d(cx: &mut Cx) -> Option<Lowered> {
    resize(cx, 3)
}

/// `image.resize2d` (`spatial` = 2) and `image.resize3d` (3), channels first or last.
fn resize(cx: &mut Cx, spatial: usize) -> Option<Lowered> {
    let (first, last, rounding, name) =
        if spatial == 2 { ("NCHW", "NHWC", "round", "resize2d") } else { ("NCDHW", "NDHWC", "", "resize3d") };
    let layout = cx.attr("layout").and_then(|v| v.as_str()).unwrap_or(first);
    let channels_last = match layout {
        l if l == first => false,
        l if l == last => true,
        _ => return None,
    };
    let mode = mode(cx, rounding);
    let size = cx.shape(1)?;
    let x = cx.tensor(0)?;
    let dtype = cx.attr_dtype("out_dtype").unwrap_or(cx.te.dtype(x));
    if size.len() != spatial || !cx.te.dtype(x).is_float() {
        return None;
    }
    let te = &mut cx.te;
    let shape = te.shape(x);
    if shape.len() != spatial + 2 {
        return None;
    }
    let dims: Vec<PrimExpr> = if channels_last { shape[1..=spatial].to_vec() } else { shape[2..].to_vec() };
    let out: Vec<PrimExpr> = if channels_last {
        [&shape[..1], &size[..], &shape[spatial + 1..]].concat()
    } else {
        [&shape[..2], &size[..]].concat()
    };
    let mut ok = true;
    let t = te.compute("resize", out, Axes::I, |te, idx| {
        let v = if spatial == 2 {
            resize_value(te, x, channels_last, (dims[0], dims[1]), (size[0], size[1]), &mode, idx)
        } else {
            resize3_value(te, x, channels_last, [dims[0], dims[1], dims[2]], [size[0], size[1], size[2]], &mode, idx)
        };
        match v {
            Some(v) => te.cast(dtype, v),
            None => {
                ok = false;
                idx[0]
            }
        }
    });
    ok.then(|| Lowered::one(name, t))?
}

/// `max(min(v, dim - 1), 0)`: an index clamped into a dim of length `dim`.
fn clamp_to(te: &mut Te, v: PrimExpr, dim: PrimExpr) -> PrimExpr {
    let one = te.i64(1);
    let hi = te.sub(dim, one);
    let m = te.bin(BinOp::Min, v, hi);
    let zero = i32c(te, 0);
    te.bin(BinOp::Max, m, zero)
}

/// `_get_pixel_value`: zero outside the image.
fn grid_pixel(
    te: &mut Te,
    data: Tensor,
    dims: (PrimExpr, PrimExpr),
    n: PrimExpr,
    c: PrimExpr,
    h: PrimExpr,
    w: PrimExpr,
) -> PrimExpr {
    let zero = i32c(te, 0);
    let a = te.bin(BinOp::Ge, h, zero);
    let zero = i32c(te, 0);
    let b = te.bin(BinOp::Ge, w, zero);
    let c1 = te.bin(BinOp::Lt, h, dims.0);
    let c2 = te.bin(BinOp::Lt, w, dims.1);
    let all = te.bin(BinOp::And, a, b);
    let all = te.bin(BinOp::And, all, c1);
    let all = te.bin(BinOp::And, all, c2);
    let v = te.load(data, &[n, c, h, w]);
    let dtype = te.dtype(data);
    let z = te.const_f(dtype, 0.0);
    te.if_then_else(all, v, z)
}

/// `_clip_coordinates`: `min(max(x, 0), size - 1)`.
fn clip(te: &mut Te, x: PrimExpr, size: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    let zero = te.const_i(t, 0);
    let m = te.bin(BinOp::Max, x, zero);
    let one = te.i64(1);
    let hi = te.sub(size, one);
    te.bin(BinOp::Min, m, hi)
}

/// `te.abs`: `fabs` for floats, a select for integers.
fn abs(te: &mut Te, x: PrimExpr) -> PrimExpr {
    let t = te.pool.dtype(x);
    if t.is_float() {
        return te.call(Intrinsic::Fabs, &[x]);
    }
    if let Some(c) = te.pool.as_int(x) {
        return te.const_i(t, c.abs());
    }
    let zero = te.const_i(t, 0);
    let cond = te.bin(BinOp::Ge, x, zero);
    let n = te.pool.neg(x);
    te.select(cond, x, n)
}

/// `_reflect_coordinates`.
fn reflect(te: &mut Te, x: PrimExpr, size: PrimExpr, align_corners: bool) -> PrimExpr {
    // `__refelection(x, size - 1, 0)` or `__refelection(x, size, -0.5)`.
    let (size, corner) = if align_corners {
        let one = te.i64(1);
        let s = te.sub(size, one);
        let xt = te.pool.dtype(x);
        (s, te.const_i(xt, 0))
    } else {
        (size, te.const_f(DataType::FLOAT32, -0.5))
    };
    let d = te.sub(corner, x);
    let index = abs(te, d);
    let i32v = te.cast(DataType::INT32, index);
    let q = te.bin(BinOp::Div, i32v, size);
    let times = te.cast(DataType::INT32, q);
    let two = i32c(te, 2);
    let t = te.pool.raw(relax_ir::PrimExprData::Bin(BinOp::Mod, times, two));
    let ts = te.mul(times, size);
    let extra = te.sub(index, ts);
    let zero = i32c(te, 0);
    let even = te.pool.raw(relax_ir::PrimExprData::Bin(BinOp::Eq, t, zero));
    let a = te.add(extra, corner);
    let b = te.sub(size, extra);
    let b = te.add(b, corner);
    let reflected = te.if_then_else(even, a, b);
    let lo = te.bin(BinOp::Ge, x, corner);
    let top = te.add(size, corner);
    let hi = te.bin(BinOp::Le, x, top);
    let inside = te.bin(BinOp::And, lo, hi);
    te.if_then_else(inside, x, reflected)
}

/// PyTorch's cubic weights (`A = -0.75`).
fn cubic_interp(te: &mut Te, p: [PrimExpr; 4], f: PrimExpr) -> PrimExpr {
    let a = -0.75f64;
    let c = |te: &mut Te, v: f64| f32c(te, v);
    let w1 = |te: &mut Te, f: PrimExpr| {
        let k = c(te, a + 2.0);
        let x = te.mul(k, f);
        let k = c(te, a + 3.0);
        let x = te.sub(x, k);
        let x = te.mul(x, f);
        let x = te.mul(x, f);
        let one = c(te, 1.0);
        te.add(x, one)
    };
    let w2 = |te: &mut Te, f: PrimExpr| {
        let k = c(te, a);
        let x = te.mul(k, f);
        let k = c(te, 5.0 * a);
        let x = te.sub(x, k);
        let x = te.mul(x, f);
        let k = c(te, 8.0 * a);
        let x = te.add(x, k);
        let x = te.mul(x, f);
        let k = c(te, 4.0 * a);
        te.sub(x, k)
    };
    let one = c(te, 1.0);
    let f1 = te.add(f, one);
    let wa = w2(te, f1);
    let wb = w1(te, f);
    let one = c(te, 1.0);
    let f2 = te.sub(one, f);
    let wc = w1(te, f2);
    let two = c(te, 2.0);
    let f3 = te.sub(two, f);
    let wd = w2(te, f3);
    let mut acc = te.mul(p[0], wa);
    for (pv, w) in [(p[1], wb), (p[2], wc), (p[3], wd)] {
        let m = te.mul(pv, w);
        acc = te.add(acc, m);
    }
    acc
}

fn grid_sample(cx: &mut Cx) -> Option<Lowered> {
    let s = |cx: &Cx, k: &str, d: &str| cx.attr(k).and_then(|v| v.as_str()).unwrap_or(d).to_string();
    let method = s(cx, "method", "bilinear");
    let layout = s(cx, "layout", "NCHW");
    let padding = s(cx, "padding_mode", "zeros");
    let align = cx.attr_bool("align_corners").unwrap_or(false);
    if layout != "NCHW"
        || !["bilinear", "nearest", "bicubic"].contains(&method.as_str())
        || !["zeros", "border", "reflection"].contains(&padding.as_str())
    {
        return None;
    }
    let (x, grid) = (cx.tensor(0)?, cx.tensor(1)?);
    let te = &mut cx.te;
    let (xs, gs) = (te.shape(x), te.shape(grid));
    if xs.len() != 4 || gs.len() != 4 || !te.dtype(x).is_float() || te.dtype(grid) != DataType::FLOAT32 {
        return None;
    }
    let shape = vec![xs[0], xs[1], gs[2], gs[3]];
    let (h_in, w_in) = (xs[2], xs[3]);
    let unnormalize = |te: &mut Te, g: PrimExpr, size: PrimExpr| {
        let one = f32c(te, 1.0);
        let a = te.add(g, one);
        let two = f32c(te, 2.0);
        if align {
            let one = te.i64(1);
            let sm1 = te.sub(size, one);
            let b = te.mul(a, sm1);
            te.bin(BinOp::Div, b, two)
        } else {
            let b = te.mul(a, size);
            let b = te.bin(BinOp::Div, b, two);
            let h = f32c(te, -0.5);
            te.add(h, b)
        }
    };
    let t = te.compute("compute", shape, Axes::Named(&["n", "c", "h", "w"]), |te, idx| {
        let (n, c, h, w) = (idx[0], idx[1], idx[2], idx[3]);
        let one = te.i64(1);
        let gy = te.load(grid, &[n, one, h, w]);
        let zero = te.i64(0);
        let gx = te.load(grid, &[n, zero, h, w]);
        let y = unnormalize(te, gy, h_in);
        let xx = unnormalize(te, gx, w_in);
        let source = |te: &mut Te, y: PrimExpr, x: PrimExpr| match padding.as_str() {
            "reflection" => {
                let y = reflect(te, y, h_in, align);
                let x = reflect(te, x, w_in, align);
                (clip(te, y, h_in), clip(te, x, w_in))
            }
            "border" => (clip(te, y, h_in), clip(te, x, w_in)),
            _ => (y, x),
        };
        match method.as_str() {
            "bilinear" => {
                let (y, xx) = source(te, y, xx);
                let fy = te.call(Intrinsic::Floor, &[y]);
                let y0 = te.cast(DataType::INT32, fy);
                let fx = te.call(Intrinsic::Floor, &[xx]);
                let x0 = te.cast(DataType::INT32, fx);
                let one = i32c(te, 1);
                let y1 = te.add(y0, one);
                let one = i32c(te, 1);
                let x1 = te.add(x0, one);
                let dy = |te: &mut Te| te.sub(y, y0);
                let dx = |te: &mut Te| te.sub(xx, x0);
                let inv = |te: &mut Te, d: PrimExpr| {
                    let one = f32c(te, 1.0);
                    te.sub(one, d)
                };
                let mut terms = Vec::new();
                for (yy, xi, wy_inv, wx_inv) in
                    [(y0, x0, true, true), (y0, x1, true, false), (y1, x0, false, true), (y1, x1, false, false)]
                {
                    let p = grid_pixel(te, x, (h_in, w_in), n, c, yy, xi);
                    let a = dy(te);
                    let a = if wy_inv { inv(te, a) } else { a };
                    let b = dx(te);
                    let b = if wx_inv { inv(te, b) } else { b };
                    let m = te.mul(p, a);
                    terms.push(te.mul(m, b));
                }
                let mut acc = terms[0];
                for &t in &terms[1..] {
                    acc = te.add(acc, t);
                }
                acc
            }
            "nearest" => {
                let (y, xx) = source(te, y, xx);
                let ry = te.call(Intrinsic::Nearbyint, &[y]);
                let yn = te.cast(DataType::INT32, ry);
                let rx = te.call(Intrinsic::Nearbyint, &[xx]);
                let xn = te.cast(DataType::INT32, rx);
                grid_pixel(te, x, (h_in, w_in), n, c, yn, xn)
            }
            _ => {
                let fy = te.call(Intrinsic::Floor, &[y]);
                let y_floor = te.cast(DataType::INT32, fy);
                let fx = te.call(Intrinsic::Floor, &[xx]);
                let x_floor = te.cast(DataType::INT32, fx);
                let y_frac = te.sub(y, y_floor);
                let x_frac = te.sub(xx, x_floor);
                let mut coeffs = [y_frac; 4];
                for (i, slot) in coeffs.iter_mut().enumerate() {
                    let one = i32c(te, 1);
                    let a = te.sub(y_floor, one);
                    let ii = i32c(te, i as i64);
                    let mut yy = te.add(a, ii);
                    let mut xv = [x_floor; 4];
                    for (k, v) in xv.iter_mut().enumerate() {
                        let o = i32c(te, k as i64 - 1);
                        *v = te.add(x_floor, o);
                    }
                    let fix = |te: &mut Te, v: PrimExpr, size: PrimExpr| match padding.as_str() {
                        "border" => {
                            let c = clip(te, v, size);
                            te.cast(DataType::INT32, c)
                        }
                        "reflection" => {
                            let r = reflect(te, v, size, align);
                            let c = clip(te, r, size);
                            te.cast(DataType::INT32, c)
                        }
                        _ => v,
                    };
                    yy = fix(te, yy, h_in);
                    for v in xv.iter_mut() {
                        *v = fix(te, *v, w_in);
                    }
                    let p = xv.map(|xi| grid_pixel(te, x, (h_in, w_in), n, c, yy, xi));
                    *slot = cubic_interp(te, p, x_frac);
                }
                cubic_interp(te, coeffs, y_frac)
            }
        }
    });
    Lowered::one("grid_sample", t)
}

fn affine_grid(cx: &mut Cx) -> Option<Lowered> {
    let size = cx.shape(1)?;
    let theta = cx.tensor(0)?;
    let te = &mut cx.te;
    let (Some(th), Some(tw)) = (te.pool.as_int(size[0]), te.pool.as_int(size[1])) else { return None };
    let ts = te.shape(theta);
    if ts.len() != 3 || th <= 1 || tw <= 1 {
        return None;
    }
    let dtype = te.dtype(theta);
    let shape = vec![ts[0], te.i64(2), size[0], size[1]];
    let t = te.compute("compute", shape, Axes::Named(&["n", "dim", "i", "j"]), |te, idx| {
        let (n, dim, i, j) = (idx[0], idx[1], idx[2], idx[3]);
        let y_step = te.const_f(dtype, (2.0 - 1e-7) / (th - 1) as f64);
        let x_step = te.const_f(dtype, (2.0 - 1e-7) / (tw - 1) as f64);
        let start = te.const_f(dtype, -1.0);
        let a = te.mul(i, y_step);
        let y = te.add(start, a);
        let start = te.const_f(dtype, -1.0);
        let b = te.mul(j, x_step);
        let x = te.add(start, b);
        let zero = te.i64(0);
        let t0 = te.load(theta, &[n, dim, zero]);
        let one = te.i64(1);
        let t1 = te.load(theta, &[n, dim, one]);
        let two = te.i64(2);
        let t2 = te.load(theta, &[n, dim, two]);
        let p = te.mul(t0, x);
        let q = te.mul(t1, y);
        let r = te.add(p, q);
        te.add(r, t2)
    });
    Lowered::one("affine_grid", t)
}
