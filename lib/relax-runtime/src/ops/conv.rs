//! Convolution kernels: `nn.conv1d`, `nn.conv2d`, `nn.conv3d` in any layout the
//! legalization takes (data letters `N`, `C` and spatial dims, kernel letters `O`, `I`
//! and spatial dims, output layout equal to the data layout), with strides, padding,
//! dilation, groups and `out_dtype`.
//!
//! As TOPI's `conv` stage (see `relax-transform`'s `legalize/conv.rs`): each output
//! element sums, from zero in `out_dtype`, `x * w` with both operands cast to
//! `out_dtype`, over the input channels of its group (`rc`) and the kernel dims
//! (`ry, rx, rz`) nested in the order their letters have in the data layout; padded
//! positions read zero (and still add `0 * w`, as the padded copy does).

use relax_ir::attrs::complete_ints;
use relax_ir::layout::{inverse, permutation_to};
use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType, TypeCode};

use super::{Kernel, KernelArgs, unsupported};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_CONV1D => |k| conv(k, 1),
        ops::NN_CONV2D => |k| conv(k, 2),
        ops::NN_CONV3D => |k| conv(k, 3),
        _ => return None,
    })
}

/// Arithmetic of one accumulation dtype: native `f32`/`f64`, or [`Scalar`] for the others.
pub(super) trait Acc: Copy {
    fn of(s: Scalar) -> Self;
    fn zero(dt: DataType) -> Self;
    fn mul_add(acc: Self, a: Self, b: Self) -> RunResult<Self>;
    fn scalar(self, dt: DataType) -> Scalar;
}

impl Acc for f32 {
    fn of(s: Scalar) -> f32 {
        s.as_f64() as f32
    }
    fn zero(_: DataType) -> f32 {
        0.0
    }
    fn mul_add(acc: f32, a: f32, b: f32) -> RunResult<f32> {
        Ok(acc + a * b)
    }
    fn scalar(self, dt: DataType) -> Scalar {
        Scalar::float(dt, f64::from(self))
    }
}

impl Acc for f64 {
    fn of(s: Scalar) -> f64 {
        s.as_f64()
    }
    fn zero(_: DataType) -> f64 {
        0.0
    }
    fn mul_add(acc: f64, a: f64, b: f64) -> RunResult<f64> {
        Ok(acc + a * b)
    }
    fn scalar(self, dt: DataType) -> Scalar {
        Scalar::float(dt, self)
    }
}

impl Acc for Scalar {
    fn of(s: Scalar) -> Scalar {
        s
    }
    fn zero(dt: DataType) -> Scalar {
        Scalar::int(dt, 0)
    }
    fn mul_add(acc: Scalar, a: Scalar, b: Scalar) -> RunResult<Scalar> {
        let p = binary(BinOp::Mul, a, b).map_err(RunError::new)?;
        binary(BinOp::Add, acc, p).map_err(RunError::new)
    }
    fn scalar(self, _: DataType) -> Scalar {
        self
    }
}

/// A string attribute.
fn attr_str<'a>(k: &'a KernelArgs<'_>, key: &str) -> Option<&'a str> {
    match k.attr(key)? {
        relax_ir::AttrValue::Str(s) => Some(s.as_str()),
        _ => None,
    }
}

/// Everything a convolution needs, in canonical order (`N`, `C`, spatial dims).
struct Plan {
    /// Output shape in the data layout and the canonical index of each of its positions.
    out_shape: Vec<i64>,
    data_from: Vec<usize>,
    /// Data strides and dims, canonical.
    xst: Vec<i64>,
    xdims: Vec<i64>,
    /// Kernel strides, canonical (`O`, `I`, spatial).
    wst: Vec<i64>,
    strides: Vec<i64>,
    pad_begin: Vec<i64>,
    /// Channels per group of the input and of the output.
    cin_g: i64,
    cout_g: i64,
    groups: i64,
    /// The reduction, flattened in loop order: `(rc, spatial offsets r * dilation, kernel
    /// offset without the `O` part)`.
    red: Vec<(i64, Vec<i64>, i64)>,
}

fn plan(k: &KernelArgs<'_>, x: &Tensor, w: &Tensor, dim: usize) -> RunResult<Option<Plan>> {
    let (Some(data_layout), Some(kernel_layout)) = (attr_str(k, "data_layout"), attr_str(k, "kernel_layout")) else {
        return Ok(None);
    };
    let out_layout = attr_str(k, "out_layout").unwrap_or(data_layout);
    if out_layout != data_layout || data_layout.len() != dim + 2 || kernel_layout.len() != dim + 2 {
        return Ok(None);
    }
    if x.shape.len() != dim + 2 || w.shape.len() != dim + 2 {
        return Ok(None);
    }
    let strides = complete_ints(k.attr_ints("strides"), dim, 1);
    let padding = complete_ints(k.attr_ints("padding"), 2 * dim, 0);
    let dilation = complete_ints(k.attr_ints("dilation"), dim, 1);
    let groups = k.attr_int("groups").unwrap_or(1);
    let (Some(data_to), Some(kernel_to)) =
        (permutation_to(data_layout, 'N', 'C'), permutation_to(kernel_layout, 'O', 'I'))
    else {
        return Ok(None);
    };
    let data_from = inverse(&data_to);
    let mut red_from: Vec<usize> = data_from[1..].to_vec();
    for r in red_from.iter_mut() {
        if *r > data_from[0] {
            *r -= 1;
        }
    }
    let xs_rm = row_major_strides(&x.shape);
    let ws_rm = row_major_strides(&w.shape);
    let xdims: Vec<i64> = data_to.iter().map(|&i| x.shape[i]).collect();
    let xst: Vec<i64> = data_to.iter().map(|&i| xs_rm[i]).collect();
    let wdims: Vec<i64> = kernel_to.iter().map(|&i| w.shape[i]).collect();
    let wst: Vec<i64> = kernel_to.iter().map(|&i| ws_rm[i]).collect();
    let (cin, cout) = (xdims[1], wdims[0]);
    if groups < 1 || cin % groups != 0 || cout % groups != 0 || wdims[1] < cin / groups {
        return Ok(None);
    }
    // Attributes beyond `int32` are not legalized (the window arithmetic's type); the
    // legalization reports those.
    let fit = |v: &i64| i32::try_from(*v).is_ok();
    if !strides.iter().chain(&dilation).chain(&padding).all(fit)
        || strides.iter().chain(&dilation).any(|&v| v < 1)
        || padding.iter().any(|&p| p < 0)
    {
        return Ok(None);
    }
    let mut canon_out = vec![xdims[0], cout];
    for i in 0..dim {
        let ext = (wdims[2 + i] - 1) * dilation[i];
        let n = (xdims[2 + i] - ext - 1 + padding[i] + padding[dim + i]).div_euclid(strides[i]) + 1;
        if n < 0 {
            return Ok(None);
        }
        canon_out.push(n);
    }
    let out_shape: Vec<i64> = data_from.iter().map(|&i| canon_out[i]).collect();
    // Reduction axes in loop order: red_from picks among [rc, r0, r1, ...].
    let extents: Vec<i64> = std::iter::once(cin / groups).chain(wdims[2..].iter().copied()).collect();
    let order: Vec<usize> = red_from.clone();
    let total: i64 = extents.iter().product();
    let mut red = Vec::with_capacity(total.max(0) as usize);
    let mut idx = vec![0i64; dim + 1];
    for _ in 0..total.max(0) {
        let offs: Vec<i64> = (0..dim).map(|i| idx[1 + i] * dilation[i]).collect();
        let mut wo = idx[0] * wst[1];
        for i in 0..dim {
            wo += idx[1 + i] * wst[2 + i];
        }
        red.push((idx[0], offs, wo));
        // Advance the odometer: the last axis of `order` is the innermost.
        for &ax in order.iter().rev() {
            idx[ax] += 1;
            if idx[ax] < extents[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    Ok(Some(Plan {
        out_shape,
        data_from,
        xst,
        xdims,
        wst,
        strides,
        pad_begin: padding[..dim].to_vec(),
        cin_g: cin / groups,
        cout_g: cout / groups,
        groups,
        red,
    }))
}

fn run<A: Acc>(p: &Plan, xv: &[A], wv: &[A], zero_x: A, out: DataType, dim: usize) -> RunResult<Vec<Scalar>> {
    let n_out: i64 = p.out_shape.iter().product();
    let mut res = Vec::with_capacity(n_out.max(0) as usize);
    let mut oidx = vec![0i64; p.out_shape.len()];
    let mut canon = vec![0i64; dim + 2];
    let mut base = vec![0i64; dim];
    for _ in 0..n_out.max(0) {
        for (pos, &c) in p.data_from.iter().enumerate() {
            canon[c] = oidx[pos];
        }
        let (n, ff) = (canon[0], canon[1]);
        let chan0 = if p.groups == 1 { 0 } else { ff.div_euclid(p.cout_g) * p.cin_g };
        for i in 0..dim {
            base[i] = canon[2 + i] * p.strides[i] - p.pad_begin[i];
        }
        let xbase = n * p.xst[0];
        let wbase = ff * p.wst[0];
        let mut acc = A::zero(out);
        for (rc, offs, wo) in &p.red {
            let mut xo = xbase + (chan0 + rc) * p.xst[1];
            let mut inside = true;
            for i in 0..dim {
                let c = base[i] + offs[i];
                if c < 0 || c >= p.xdims[2 + i] {
                    inside = false;
                    break;
                }
                xo += c * p.xst[2 + i];
            }
            let xval = if inside { xv[xo as usize] } else { zero_x };
            acc = A::mul_add(acc, xval, wv[(wbase + wo) as usize])?;
        }
        res.push(acc.scalar(out));
        for pos in (0..oidx.len()).rev() {
            oidx[pos] += 1;
            if oidx[pos] < p.out_shape[pos] {
                break;
            }
            oidx[pos] = 0;
        }
    }
    Ok(res)
}

fn conv(k: &KernelArgs<'_>, dim: usize) -> RunResult<Value> {
    let x = k.tensor(0)?;
    let w = k.tensor(1)?;
    let Some(p) = plan(k, x, w, dim)? else { return Err(unsupported()) };
    let out = k.attr_dtype("out_dtype").unwrap_or(x.dtype);
    let cast = |t: &Tensor| -> Vec<Scalar> { t.scalars().into_iter().map(|s| s.cast(out)).collect() };
    // The padded copy holds zeros of the data's dtype, cast to `out` like the data.
    let zero = Scalar::int(x.dtype, 0).cast(out);
    let (xv, wv) = (cast(x), cast(w));
    let res = match (out.code, out.bits) {
        (TypeCode::Float, 32) => {
            let f = |v: &[Scalar]| v.iter().map(|&s| f32::of(s)).collect::<Vec<_>>();
            run(&p, &f(&xv), &f(&wv), f32::of(zero), out, dim)?
        }
        (TypeCode::Float, 64) => {
            let f = |v: &[Scalar]| v.iter().map(|&s| f64::of(s)).collect::<Vec<_>>();
            run(&p, &f(&xv), &f(&wv), f64::of(zero), out, dim)?
        }
        _ => run(&p, &xv, &wv, zero, out, dim)?,
    };
    Ok(Value::Tensor(Tensor::from_scalars(&p.out_shape, out, res)))
}
