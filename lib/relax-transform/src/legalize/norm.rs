//! Batch, group and instance normalization (`legalize_ops/nn.py`; TOPI's
//! `nn/batch_norm.py`, C++ `nn/group_norm.h`, `nn/instance_norm.h`).
//!
//! * `nn.batch_norm` (`batch_norm`, three outputs): TOPI's tensor expression chain.
//!   Inference: the moving mean and variance reshaped to `(1, C, 1, ...)`
//!   (`T_reshape`), `(x - mean) / sqrt(var + eps)` (`T_subtract`, `T_add`, `compute`,
//!   `T_divide`), times gamma and plus beta (reshaped likewise), and the moving
//!   statistics passed through `* 1` (`T_multiply`). Training: the mean and variance of
//!   the batch (`x_red`, `T_divide`, `T_multiply_red`) replace the moving ones, which
//!   are updated as `(1 - momentum) * moving + momentum * batch`.
//! * `nn.group_norm` (`group_norm`): the input reshaped to split the channels into
//!   groups, sums of `x` and `x * x` over each group in one reduction (`<x>_red_temp`,
//!   two outputs), `T_group_norm` computing `(x - mean) * rsqrt(mean(x²) - mean² + eps)
//!   * gamma + beta` with gamma and beta reshaped to `(groups, C / groups)`, reshaped
//!   back; `float16` data is reduced in `float32` (a `T_cast` stage).
//! * `nn.instance_norm` (`instance_norm`): the same reduction over `axes`, then
//!   `T_instance_norm` with gamma and beta indexed by the channel.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr, PrimExprData};

use super::binary::{broadcast, broadcast_op};
use super::cx::{Cx, Operand, norm_axis};
use super::manipulate::reshape;
use super::reduce::comm_reduce;
use super::te::{Axes, CombinerKind, RAxis, Reduce, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of a normalization op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_BATCH_NORM => batch_norm,
        ops::NN_GROUP_NORM => group_norm,
        ops::NN_INSTANCE_NORM => instance_norm,
        _ => return None,
    })
}

fn i32c(te: &mut Te, v: i64) -> PrimExpr {
    te.pool.int(DataType::INT32, v)
}

fn sub(te: &mut Te, a: Tensor, b: Tensor) -> Tensor {
    broadcast(te, "T_subtract", a, b, |te, x, y| te.sub(x, y))
}

fn mul(te: &mut Te, a: Tensor, b: Tensor) -> Tensor {
    broadcast(te, "T_multiply", a, b, |te, x, y| te.mul(x, y))
}

fn add(te: &mut Te, a: Tensor, b: Tensor) -> Tensor {
    broadcast(te, "T_add", a, b, |te, x, y| te.add(x, y))
}

/// `topi.<op>(a, b)` with a scalar operand (`Some` for tensor-scalar of the same kind).
fn scalar(te: &mut Te, name: &str, a: Operand, b: Operand, op: BinOp) -> Option<Tensor> {
    match op {
        BinOp::Mul => broadcast_op(te, name, a, b, |te, x, y| te.mul(x, y)),
        BinOp::Add => broadcast_op(te, name, a, b, |te, x, y| te.add(x, y)),
        _ => broadcast_op(te, name, a, b, |te, x, y| te.bin(BinOp::Div, x, y)),
    }
}

/// `topi.nn.batch_norm`.
fn batch_norm(cx: &mut Cx) -> Option<Lowered> {
    let (x, gamma, beta, mean, var) = (cx.tensor(0)?, cx.tensor(1)?, cx.tensor(2)?, cx.tensor(3)?, cx.tensor(4)?);
    let ndim = cx.te.ndim(x);
    let axis = norm_axis(cx.attr_int("axis").unwrap_or(1), ndim)?;
    let eps = cx.attr_f64("epsilon").unwrap_or(1e-5);
    let center = cx.attr_bool("center").unwrap_or(true);
    let scale = cx.attr_bool("scale").unwrap_or(true);
    let training = cx.attr_bool("training").unwrap_or(false);
    let momentum = cx.attr_f64("momentum").unwrap_or(0.1);
    let te = &mut cx.te;
    let xs = te.shape(x);
    let shape: Vec<PrimExpr> = (0..ndim).map(|i| if i == axis { xs[i] } else { i32c(te, 1) }).collect();
    let eps_c = te.pool.float(DataType::FLOAT32, eps);
    let (out, batch_stats) = if training {
        let axes: Vec<usize> = (0..ndim).filter(|&i| i != axis).collect();
        // reduce(lambda x, y: x * y, dims, 1): Python integers while the dims are.
        let mut prod = i32c(te, 1);
        let mut konst = Some(1i64);
        for &i in &axes {
            match (konst, te.pool.as_int(xs[i])) {
                (Some(k), Some(d)) => konst = Some(k * d),
                _ => {
                    let p = match konst.take() {
                        Some(k) => i32c(te, k),
                        None => prod,
                    };
                    prod = te.mul(p, xs[i]);
                }
            }
        }
        if let Some(k) = konst {
            prod = i32c(te, k);
        }
        let s = comm_reduce(te, x, &axes, false, CombinerKind::Sum);
        let data_mean = scalar(te, "T_divide", Operand::Tensor(s), Operand::Scalar(prod), BinOp::Div)?;
        let mean_rs = reshape(te, data_mean, shape.clone());
        let d1 = sub(te, x, mean_rs);
        let d2 = sub(te, x, mean_rs);
        let sq = mul(te, d1, d2);
        let s2 = comm_reduce(te, sq, &axes, false, CombinerKind::Sum);
        let data_var = scalar(te, "T_divide", Operand::Tensor(s2), Operand::Scalar(prod), BinOp::Div)?;
        let var_rs = reshape(te, data_var, shape.clone());
        let centered = sub(te, x, mean_rs);
        let ve = scalar(te, "T_add", Operand::Tensor(var_rs), Operand::Scalar(eps_c), BinOp::Add)?;
        let sd = sqrt(te, ve);
        let out = broadcast(te, "T_divide", centered, sd, |te, a, b| te.bin(BinOp::Div, a, b));
        (out, Some((data_mean, data_var)))
    } else {
        let mean_rs = reshape(te, mean, shape.clone());
        let var_rs = reshape(te, var, shape.clone());
        let centered = sub(te, x, mean_rs);
        let ve = scalar(te, "T_add", Operand::Tensor(var_rs), Operand::Scalar(eps_c), BinOp::Add)?;
        let sd = sqrt(te, ve);
        let out = broadcast(te, "T_divide", centered, sd, |te, a, b| te.bin(BinOp::Div, a, b));
        (out, None)
    };
    let mut out = out;
    if scale {
        let g = reshape(te, gamma, shape.clone());
        out = mul(te, out, g);
    }
    if center {
        let b = reshape(te, beta, shape);
        out = add(te, out, b);
    }
    let (m_out, v_out) = match batch_stats {
        Some((bm, bv)) => {
            let upd = |te: &mut Te, moving: Tensor, batch: Tensor| -> Option<Tensor> {
                let keep = te.pool.float(DataType::FLOAT32, 1.0 - momentum);
                let a = scalar(te, "T_multiply", Operand::Scalar(keep), Operand::Tensor(moving), BinOp::Mul)?;
                let mo = te.pool.float(DataType::FLOAT32, momentum);
                let b = scalar(te, "T_multiply", Operand::Scalar(mo), Operand::Tensor(batch), BinOp::Mul)?;
                Some(add(te, a, b))
            };
            (upd(te, mean, bm)?, upd(te, var, bv)?)
        }
        None => {
            let one = i32c(te, 1);
            let m = scalar(te, "T_multiply", Operand::Tensor(mean), Operand::Scalar(one), BinOp::Mul)?;
            let one = i32c(te, 1);
            let v = scalar(te, "T_multiply", Operand::Tensor(var), Operand::Scalar(one), BinOp::Mul)?;
            (m, v)
        }
    };
    Some(Lowered { name: "batch_norm".to_string(), outputs: vec![out, m_out, v_out] })
}

/// `topi.math.sqrt`.
fn sqrt(te: &mut Te, x: Tensor) -> Tensor {
    let shape = te.shape(x);
    te.compute("compute", shape, Axes::I, |te, i| {
        let v = te.load(x, i);
        te.call(Intrinsic::Sqrt, &[v])
    })
}

/// The tuple-sum reduction of `x` and `x * x` over `axes` (`<named>_red_temp`, after
/// the op's input), with the sources cast to `float32` when `f16`; returns the two sums.
fn sums(te: &mut Te, x: Tensor, named: Tensor, axes: &[usize], f16: bool) -> (Tensor, Tensor) {
    let shape = te.shape(x);
    let ndim = shape.len();
    let mut target: Vec<PrimExpr> = (0..ndim).filter(|i| !axes.contains(i)).map(|i| shape[i]).collect();
    if target.is_empty() {
        target.push(te.i64(1));
    }
    let name = format!("{}_red_temp", te.buffers[te.buffer(named)].name);
    let t = te.compute_reduce(&name, target, Axes::Ax, |te, idx| {
        let rs: Vec<(RAxis, PrimExpr)> = axes.iter().map(|&i| te.reduce_axis(&format!("k{i}"), shape[i])).collect();
        let (mut a, mut r) = (0, 0);
        let eval: Vec<PrimExpr> = (0..ndim)
            .map(|i| {
                if axes.contains(&i) {
                    r += 1;
                    rs[r - 1].1
                } else {
                    a += 1;
                    idx[a - 1]
                }
            })
            .collect();
        let cast = |te: &mut Te, v: PrimExpr| {
            if f16 { te.pool.raw(PrimExprData::Cast(DataType::FLOAT32, v)) } else { v }
        };
        let v = te.load(x, &eval);
        let v0 = cast(te, v);
        let (l, r2) = (te.load(x, &eval), te.load(x, &eval));
        let (l, r2) = (cast(te, l), cast(te, r2));
        let v1 = te.mul(l, r2);
        Reduce { kind: CombinerKind::TupleSum, sources: vec![v0, v1], axes: rs.iter().map(|r| r.0).collect() }
    });
    (t[0], t[1])
}

/// The normalized value `(x - mean) * rsqrt(E[x²] - mean² + eps)` from the two sums.
fn normalized(te: &mut Te, xv: PrimExpr, s: PrimExpr, s2: PrimExpr, extent: PrimExpr, eps: PrimExpr) -> PrimExpr {
    let mean = te.bin(BinOp::Div, s, extent);
    let ex2 = te.bin(BinOp::Div, s2, extent);
    let m2 = te.mul(mean, mean);
    let var = te.sub(ex2, m2);
    let d = te.sub(xv, mean);
    let ve = te.add(var, eps);
    let r = te.call(Intrinsic::Rsqrt, &[ve]);
    te.mul(d, r)
}

/// `topi.nn.group_norm`.
fn group_norm(cx: &mut Cx) -> Option<Lowered> {
    let (x, gamma, beta) = (cx.tensor(0)?, cx.tensor(1)?, cx.tensor(2)?);
    let groups = cx.attr_int("num_groups")?;
    let axes_attr = cx.attr_ints("axes")?;
    let eps = cx.attr_f64("epsilon").unwrap_or(1e-5);
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    if !(dtype == DataType::FLOAT32 || dtype == DataType::FLOAT16) || te.dtype(gamma) != dtype || groups < 1 {
        return None;
    }
    let f16 = dtype == DataType::FLOAT16;
    let shape = te.shape(x);
    let ndim = shape.len();
    let c = norm_axis(cx.call.attrs.get("channel_axis")?.as_int()?, ndim)?;
    let g = i32c(te, groups);
    let group_size = te.floordiv(shape[c], g);
    let mut new_shape = Vec::new();
    for (i, &d) in shape.iter().enumerate() {
        if i == c {
            new_shape.push(i32c(te, groups));
            new_shape.push(group_size);
        } else {
            new_shape.push(d);
        }
    }
    let mut data = reshape(te, x, new_shape);
    if f16 {
        let s = te.shape(data);
        data = te.compute("T_cast", s, Axes::Ax, |te, i| {
            let v = te.load(data, i);
            te.cast(DataType::FLOAT32, v)
        });
    }
    let gs = vec![i32c(te, groups), group_size];
    let gamma_r = reshape(te, gamma, gs.clone());
    let beta_r = reshape(te, beta, gs);
    let mut new_axes = vec![c + 1];
    for &a in &axes_attr {
        let a = norm_axis(a, ndim)?;
        match a.cmp(&c) {
            std::cmp::Ordering::Less => new_axes.push(a),
            std::cmp::Ordering::Greater => new_axes.push(a + 1),
            std::cmp::Ordering::Equal => return None,
        }
    }
    new_axes.sort_unstable();
    let (sx, sx2) = sums(te, data, x, &new_axes, false);
    let dshape = te.shape(data);
    let mut extent = te.pool.float(DataType::FLOAT32, 1.0);
    for &a in &new_axes {
        extent = te.mul(extent, dshape[a]);
    }
    let t = te.compute("T_group_norm", dshape, Axes::Ax, |te, idx| {
        let nr: Vec<PrimExpr> = (0..idx.len()).filter(|i| !new_axes.contains(i)).map(|i| idx[i]).collect();
        let gi = [idx[c], idx[c + 1]];
        let s = te.load(sx, &nr);
        let s2 = te.load(sx2, &nr);
        let xv = te.load(data, idx);
        let e = te.pool.float(dtype, eps);
        let mut v = normalized(te, xv, s, s2, extent, e);
        if f16 {
            v = te.pool.raw(PrimExprData::Cast(DataType::FLOAT16, v));
        }
        let gv = te.load(gamma_r, &gi);
        v = te.mul(v, gv);
        let bv = te.load(beta_r, &gi);
        te.add(v, bv)
    });
    Lowered::one("group_norm", reshape(te, t, shape))
}

/// `topi.nn.instance_norm`.
fn instance_norm(cx: &mut Cx) -> Option<Lowered> {
    let (x, gamma, beta) = (cx.tensor(0)?, cx.tensor(1)?, cx.tensor(2)?);
    let axes_attr = cx.attr_ints("axes")?;
    let eps = cx.attr_f64("epsilon").unwrap_or(1e-5);
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    if !(dtype == DataType::FLOAT32 || dtype == DataType::FLOAT16) || te.dtype(gamma) != dtype {
        return None;
    }
    let f16 = dtype == DataType::FLOAT16;
    let shape = te.shape(x);
    let ndim = shape.len();
    let c = norm_axis(cx.call.attrs.get("channel_axis")?.as_int()?, ndim)?;
    let mut axes: Vec<usize> = axes_attr.iter().map(|&a| norm_axis(a, ndim)).collect::<Option<_>>()?;
    axes.sort_unstable();
    axes.dedup();
    let (sx, sx2) = sums(te, x, x, &axes, f16);
    let mut extent = te.const_i(dtype, 1);
    for &a in &axes {
        extent = te.mul(extent, shape[a]);
    }
    let t = te.compute("T_instance_norm", shape, Axes::Ax, |te, idx| {
        let nr: Vec<PrimExpr> = (0..idx.len()).filter(|i| !axes.contains(i)).map(|i| idx[i]).collect();
        let s = te.load(sx, &nr);
        let s2 = te.load(sx2, &nr);
        let xv = te.load(x, idx);
        let vt = te.pool.dtype(s);
        let e = te.pool.float(vt, eps);
        let mut v = normalized(te, xv, s, s2, extent, e);
        if f16 {
            v = te.pool.raw(PrimExprData::Cast(DataType::FLOAT16, v));
        }
        let gv = te.load(gamma, &[idx[c]]);
        v = te.mul(v, gv);
        let bv = te.load(beta, &[idx[c]]);
        te.add(v, bv)
    });
    Lowered::one("instance_norm", t)
}
