//! Neural-network ops (`legalize_ops/nn.py`; TOPI's `nn/elemwise.py`, `nn/softmax.py`,
//! `nn/rms_norm.h`, `nn/layer_norm.h`).
//!
//! * `relu`: `compute = T.max(x, 0)`; `leakyrelu`, `softplus`, `prelu`: TOPI's Python
//!   selects; `batch_flatten`: a reshape to the call's shape.
//! * `silu`: `x * sigmoid(x)`, two stages (`compute`, `T_multiply`); `gelu`,
//!   `gelu_tanh`, `selu`: the chains of TOPI tensor operations of `nn.py`, one stage per
//!   operation (`T_multiply`, `T_add`, `compute`, ...).
//! * `softmax`: `T_softmax_maxelem`, `T_softmax_exp`, `T_softmax_expsum`,
//!   `T_softmax_norm` (annotated with the axis); `log_softmax`: `T_softmax_maxelem`,
//!   `compute` (the sum), `compute` (the result, annotated).
//! * `rms_norm`: in `float32` (`T_cast` stages), `T_multiply`, its sum, `rsqrt`,
//!   `T_rms_norm`, cast back; `layer_norm`: `<x>_sum`, `<x>_mean`, `<x>_var_sum`,
//!   `T_layer_norm`.
//!
//! `dropout` is not legalized (TVM leaves it to the frontend).

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{AttrValue, Attrs, DataType, PrimExpr};

use super::binary::{Rule, broadcast, broadcast_op};
use super::cx::{Cx, Operand, norm_axis};
use super::reduce::comm_reduce_1d;
use super::te::{Axes, CombinerKind, Reduce, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of an `nn` op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_RELU => |cx| {
            let x = cx.tensor(0)?;
            let t = map(&mut cx.te, x, |te, v| {
                let t = te.pool.dtype(v);
                let z = te.const_i(t, 0);
                te.bin(BinOp::Max, v, z)
            });
            Lowered::one("relu", t)
        },
        ops::NN_LEAKYRELU => |cx| {
            let x = cx.tensor(0)?;
            let alpha = cx.attr_f64("alpha")?;
            let t = map(&mut cx.te, x, move |te, v| {
                let t = te.pool.dtype(v);
                let z = te.pool.int(DataType::INT32, 0);
                let c = te.bin(BinOp::Gt, v, z);
                let a = te.const_f(t, alpha);
                let m = te.mul(v, a);
                te.select(c, v, m)
            });
            Lowered::one("leaky_relu", t)
        },
        ops::NN_SOFTPLUS => |cx| {
            let x = cx.tensor(0)?;
            let beta = cx.attr_f64("beta")?;
            let threshold = cx.attr_f64("threshold")?;
            let t = map(&mut cx.te, x, move |te, v| {
                let t = te.pool.dtype(v);
                let b = te.const_f(t, beta);
                let th = te.const_f(t, threshold);
                let bv = te.mul(b, v);
                let c = te.bin(BinOp::Gt, bv, th);
                let one = te.pool.int(DataType::INT32, 1);
                let inv = te.bin(BinOp::Div, one, b);
                let bv2 = te.mul(b, v);
                let e = te.call(Intrinsic::Exp, &[bv2]);
                let one2 = te.pool.int(DataType::INT32, 1);
                let s = te.add(one2, e);
                let l = te.call(Intrinsic::Log, &[s]);
                let r = te.mul(inv, l);
                te.select(c, v, r)
            });
            Lowered::one("softplus", t)
        },
        ops::NN_SILU => |cx| {
            let x = cx.tensor(0)?;
            let s = map(&mut cx.te, x, |te, v| te.call(Intrinsic::Sigmoid, &[v]));
            let t = broadcast(&mut cx.te, "T_multiply", x, s, MUL);
            Lowered::one("silu", t)
        },
        ops::NN_PRELU => prelu,
        ops::NN_BATCH_FLATTEN => |cx| {
            // A reshape to the call's shape, as `flatten`.
            let x = cx.tensor(0)?;
            let dims = cx.out().dims()?.to_vec();
            let shape: Vec<PrimExpr> = dims.iter().map(|&d| cx.import(d)).collect();
            for &d in &shape {
                cx.te.note_extra(d);
            }
            Lowered::one("reshape", super::manipulate::reshape(&mut cx.te, x, shape))
        },
        ops::NN_GELU => gelu,
        ops::NN_GELU_TANH => gelu_tanh,
        ops::NN_SELU => selu,
        ops::NN_SOFTMAX => softmax,
        ops::NN_LOG_SOFTMAX => log_softmax,
        ops::NN_RMS_NORM => rms_norm,
        ops::NN_LAYER_NORM => layer_norm,
        _ => return None,
    })
}

const MUL: Rule = |te, a, b| te.mul(a, b);
const ADD: Rule = |te, a, b| te.add(a, b);
const SUB: Rule = |te, a, b| te.sub(a, b);

/// `te.compute(x.shape, lambda *i: f(x(*i)))`.
fn map(te: &mut Te, x: Tensor, f: impl FnOnce(&mut Te, PrimExpr) -> PrimExpr) -> Tensor {
    let shape = te.shape(x);
    te.compute("compute", shape, Axes::I, |te, i| {
        let v = te.load(x, i);
        f(te, v)
    })
}

/// A TOPI tensor operation `a <op> b` (`T_<op>`), tensors or scalars.
fn op(te: &mut Te, name: &str, a: Operand, b: Operand, rule: Rule) -> Option<Tensor> {
    broadcast_op(te, name, a, b, rule)
}

fn tensor(t: Tensor) -> Operand {
    Operand::Tensor(t)
}

/// `topi.erf`, computed in `float32` for `float16` inputs.
fn erf(te: &mut Te, x: Tensor) -> Tensor {
    if te.dtype(x) == DataType::FLOAT16 {
        let a = map(te, x, |te, v| te.cast(DataType::FLOAT32, v));
        let b = map(te, a, |te, v| te.call(Intrinsic::Erf, &[v]));
        return map(te, b, |te, v| te.cast(DataType::FLOAT16, v));
    }
    map(te, x, |te, v| te.call(Intrinsic::Erf, &[v]))
}

/// TOPI's `prelu`: `Select(x > 0, x, x * alpha[c])` along `axis` (a 1-element `alpha`
/// is first broadcast to the channel count, `slope_broadcasted`).
fn prelu(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let mut slope = cx.tensor(1)?;
    let te = &mut cx.te;
    let ndim = te.ndim(x);
    let axis = norm_axis(cx.call.attrs.get("axis").and_then(|v| v.as_int()).unwrap_or(1), ndim)?;
    let xs = te.shape(x);
    let ss = te.shape(slope);
    if ss.len() != 1 || te.pool.as_int(xs[axis]).is_none() {
        return None;
    }
    if te.pool.as_int(ss[0]) == Some(1) {
        let s0 = slope;
        let c = te.i64(te.pool.as_int(xs[axis])?);
        slope = te.compute("slope_broadcasted", vec![c], Axes::Named(&["c"]), |te, _| {
            let z = te.pool.int(DataType::INT32, 0);
            te.load(s0, &[z])
        });
    }
    let t = te.compute("compute", xs, Axes::I, |te, idx| {
        let v = te.load(x, idx);
        let z = te.pool.int(DataType::INT32, 0);
        let c = te.bin(BinOp::Gt, v, z);
        let a = te.load(slope, &idx[axis..=axis]);
        let m = te.mul(v, a);
        te.select(c, v, m)
    });
    Lowered::one("prelu", t)
}

fn gelu(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    let c = te.const_f(dtype, 0.5f64.sqrt());
    let erf_inp = op(te, "T_multiply", tensor(x), Operand::Scalar(c), MUL)?;
    let e = erf(te, erf_inp);
    let half = te.const_f(dtype, 0.5);
    let eh = op(te, "T_multiply", tensor(e), Operand::Scalar(half), MUL)?;
    let half2 = te.const_f(dtype, 0.5);
    let s = op(te, "T_add", Operand::Scalar(half2), tensor(eh), ADD)?;
    let t = broadcast(te, "T_multiply", x, s, MUL);
    Lowered::one("gelu", t)
}

fn gelu_tanh(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    let half = te.const_f(dtype, 0.5);
    let a = op(te, "T_multiply", Operand::Scalar(half), tensor(x), MUL)?;
    let k = te.const_f(dtype, (2.0 / std::f64::consts::PI).sqrt());
    let b = op(te, "T_multiply", Operand::Scalar(k), tensor(x), MUL)?;
    let c0 = te.const_f(dtype, 0.044715);
    let c = op(te, "T_multiply", Operand::Scalar(c0), tensor(x), MUL)?;
    let d = broadcast(te, "T_multiply", c, x, MUL);
    let one = te.pool.int(DataType::INT32, 1);
    let e = op(te, "T_add", Operand::Scalar(one), tensor(d), ADD)?;
    let f = broadcast(te, "T_multiply", b, e, MUL);
    let g = map(te, f, |te, v| te.call(Intrinsic::Tanh, &[v]));
    let one_f = te.const_f(dtype, 1.0);
    let h = op(te, "T_add", Operand::Scalar(one_f), tensor(g), ADD)?;
    let t = broadcast(te, "T_multiply", a, h, MUL);
    Lowered::one("gelu_tanh", t)
}

fn selu(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    let alpha = te.const_f(dtype, 1.673_263_242_354_377_2);
    let scale = te.const_f(dtype, 1.050_700_987_355_480_5);
    let z = te.const_i(dtype, 0);
    let pos = op(te, "T_maximum", tensor(x), Operand::Scalar(z), |te, a, b| te.bin(BinOp::Max, a, b))?;
    let e = map(te, x, |te, v| te.call(Intrinsic::Exp, &[v]));
    let one = te.const_i(dtype, 1);
    let em1 = op(te, "T_subtract", tensor(e), Operand::Scalar(one), SUB)?;
    let ae = op(te, "T_multiply", Operand::Scalar(alpha), tensor(em1), MUL)?;
    let z2 = te.const_i(dtype, 0);
    let neg = op(te, "T_minimum", Operand::Scalar(z2), tensor(ae), |te, a, b| te.bin(BinOp::Min, a, b))?;
    let s = broadcast(te, "T_add", pos, neg, ADD);
    let t = op(te, "T_multiply", Operand::Scalar(scale), tensor(s), MUL)?;
    Lowered::one("selu", t)
}

/// Inserts `r` at `axis` into `idx`.
fn insert(idx: &[PrimExpr], axis: usize, r: PrimExpr) -> Vec<PrimExpr> {
    let mut v = idx[..axis].to_vec();
    v.push(r);
    v.extend_from_slice(&idx[axis..]);
    v
}

/// `idx` without position `axis`.
fn remove(idx: &[PrimExpr], axis: usize) -> Vec<PrimExpr> {
    idx.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &v)| v).collect()
}

fn axis_attrs(axis: usize) -> Attrs {
    Attrs(vec![("axis".to_string(), AttrValue::Int(axis as i64))])
}

fn softmax(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    let axis = norm_axis(cx.call.attrs.get("axis").and_then(|v| v.as_int()).unwrap_or(-1), ndim)?;
    Lowered::one("softmax", softmax_along(&mut cx.te, x, axis))
}

/// `topi.nn.softmax` along a normalized axis.
pub fn softmax_along(te: &mut Te, x: Tensor, axis: usize) -> Tensor {
    let shape = te.shape(x);
    let reduced = remove(&shape, axis);
    let ext = shape[axis];
    let max_elem = te.compute_reduce("T_softmax_maxelem", reduced.clone(), Axes::I, |te, idx| {
        let (k, kv) = te.reduce_axis("k", ext);
        let s = te.load(x, &insert(idx, axis, kv));
        Reduce { kind: CombinerKind::Max, sources: vec![s], axes: vec![k] }
    })[0];
    let exp = te.compute("T_softmax_exp", shape.clone(), Axes::I, |te, idx| {
        let a = te.load(x, idx);
        let b = te.load(max_elem, &remove(idx, axis));
        let d = te.sub(a, b);
        te.call(Intrinsic::Exp, &[d])
    });
    let expsum = te.compute_reduce("T_softmax_expsum", reduced, Axes::I, |te, idx| {
        let (k, kv) = te.reduce_axis("k", ext);
        let s = te.load(exp, &insert(idx, axis, kv));
        Reduce { kind: CombinerKind::Sum, sources: vec![s], axes: vec![k] }
    })[0];
    te.compute_with_attrs("T_softmax_norm", shape, Axes::I, axis_attrs(axis), |te, idx| {
        let a = te.load(exp, idx);
        let b = te.load(expsum, &remove(idx, axis));
        te.bin(BinOp::Div, a, b)
    })
}

fn log_softmax(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let te = &mut cx.te;
    let shape = te.shape(x);
    let axis = norm_axis(cx.call.attrs.get("axis").and_then(|v| v.as_int()).unwrap_or(-1), shape.len())?;
    let reduced = remove(&shape, axis);
    let ext = shape[axis];
    let max_elem = te.compute_reduce("T_softmax_maxelem", reduced.clone(), Axes::I, |te, idx| {
        let (k, kv) = te.reduce_axis("k", ext);
        let s = te.load(x, &insert(idx, axis, kv));
        Reduce { kind: CombinerKind::Max, sources: vec![s], axes: vec![k] }
    })[0];
    let expsum = te.compute_reduce("compute", reduced, Axes::I, |te, idx| {
        let (k, kv) = te.reduce_axis("k", ext);
        let a = te.load(x, &insert(idx, axis, kv));
        let b = te.load(max_elem, idx);
        let d = te.sub(a, b);
        let e = te.call(Intrinsic::Exp, &[d]);
        Reduce { kind: CombinerKind::Sum, sources: vec![e], axes: vec![k] }
    })[0];
    let t = te.compute_with_attrs("compute", shape, Axes::I, axis_attrs(axis), |te, idx| {
        let nr = remove(idx, axis);
        let a = te.load(x, idx);
        let m = te.load(max_elem, &nr);
        let d = te.sub(a, m);
        let s = te.load(expsum, &nr);
        let l = te.call(Intrinsic::Log, &[s]);
        te.sub(d, l)
    });
    Lowered::one("log_softmax", t)
}

/// TOPI's C++ `cast`: a stage even when the type does not change.
fn topi_cast(te: &mut Te, x: Tensor, dtype: DataType) -> Tensor {
    let shape = te.shape(x);
    te.compute("T_cast", shape, Axes::Ax, |te, i| {
        let v = te.load(x, i);
        te.cast(dtype, v)
    })
}

/// The sorted, unique reduction axes of `axes` for a tensor of rank `ndim`.
fn real_axes(axes: &[i64], ndim: usize) -> Option<Vec<usize>> {
    let mut v: Vec<usize> = axes.iter().map(|&a| norm_axis(a, ndim)).collect::<Option<_>>()?;
    v.sort_unstable();
    v.dedup();
    Some(v)
}

fn rms_norm(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let w = cx.tensor(1)?;
    let axes = cx.attr_ints("axes")?;
    let eps = cx.attr_f64("epsilon")?;
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    if te.dtype(w) != dtype {
        return None;
    }
    let ndim = te.ndim(x);
    let real = real_axes(&axes, ndim)?;
    let xf = topi_cast(te, x, DataType::FLOAT32);
    let wf = topi_cast(te, w, DataType::FLOAT32);
    let sq = broadcast(te, "T_multiply", xf, xf, MUL);
    let sum = comm_reduce_1d(te, sq, &real, false, true, CombinerKind::Sum);
    let shape = te.shape(xf);
    let mut extent = te.const_f(DataType::FLOAT32, 1.0);
    for &i in &real {
        extent = te.mul(extent, shape[i]);
    }
    let rshape: Vec<PrimExpr> = (0..ndim).filter(|i| !real.contains(i)).map(|i| shape[i]).collect();
    let rsqrt = te.compute("rsqrt", rshape, Axes::Ax, |te, idx| {
        let v = te.load(sum, idx);
        let d = te.bin(BinOp::Div, v, extent);
        let e = te.pool.float(dtype, eps);
        let s = te.add(d, e);
        te.call(Intrinsic::Rsqrt, &[s])
    });
    let norm = te.compute("T_rms_norm", shape, Axes::Ax, |te, idx| {
        let nr: Vec<PrimExpr> = (0..ndim).filter(|i| !real.contains(i)).map(|i| idx[i]).collect();
        let r: Vec<PrimExpr> = real.iter().map(|&i| idx[i]).collect();
        let a = te.load(rsqrt, &nr);
        let b = te.load(xf, idx);
        let c = te.load(wf, &r);
        let ab = te.mul(a, b);
        te.mul(ab, c)
    });
    let t = topi_cast(te, norm, dtype);
    Lowered::one("rms_norm", t)
}

fn layer_norm(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let gamma = cx.tensor(1)?;
    let beta = cx.tensor(2)?;
    let axes = cx.attr_ints("axes")?;
    let eps = cx.attr_f64("epsilon")?;
    let te = &mut cx.te;
    let dtype = te.dtype(x);
    if !(dtype == DataType::FLOAT32 || dtype == DataType::FLOAT16) {
        return None;
    }
    let f16 = dtype == DataType::FLOAT16;
    let shape = te.shape(x);
    let ndim = shape.len();
    let real = real_axes(&axes, ndim)?;
    let xname = te.buffers[te.buffer(x)].name.clone();
    let target: Vec<PrimExpr> = (0..ndim).filter(|i| !real.contains(i)).map(|i| shape[i]).collect();
    let red_names: Vec<String> = real.iter().map(|i| format!("k{i}")).collect();
    let eval = |idx: &[PrimExpr], rv: &[PrimExpr]| -> Vec<PrimExpr> {
        let (mut a, mut r) = (0, 0);
        (0..ndim)
            .map(|i| {
                if real.contains(&i) {
                    r += 1;
                    rv[r - 1]
                } else {
                    a += 1;
                    idx[a - 1]
                }
            })
            .collect()
    };
    let sum = te.compute_reduce(&format!("{xname}_sum"), target.clone(), Axes::Ax, |te, idx| {
        let rs: Vec<_> = real.iter().zip(&red_names).map(|(&i, n)| te.reduce_axis(n, shape[i])).collect();
        let rv: Vec<PrimExpr> = rs.iter().map(|r| r.1).collect();
        let mut v = te.load(x, &eval(idx, &rv));
        if f16 {
            v = te.pool.raw(relax_ir::PrimExprData::Cast(DataType::FLOAT32, v));
        }
        Reduce { kind: CombinerKind::Sum, sources: vec![v], axes: rs.iter().map(|r| r.0).collect() }
    })[0];
    let rdtype = if f16 { DataType::FLOAT32 } else { dtype };
    let mut extent = te.const_f(rdtype, 1.0);
    for &i in &real {
        extent = te.mul(extent, shape[i]);
    }
    let mean = te.compute(&format!("{xname}_mean"), target.clone(), Axes::Ax, |te, idx| {
        let v = te.load(sum, idx);
        te.bin(BinOp::Div, v, extent)
    });
    let var_sum = te.compute_reduce(&format!("{xname}_var_sum"), target, Axes::Ax, |te, idx| {
        let rs: Vec<_> = real.iter().zip(&red_names).map(|(&i, n)| te.reduce_axis(n, shape[i])).collect();
        let rv: Vec<PrimExpr> = rs.iter().map(|r| r.1).collect();
        let mut v = te.load(x, &eval(idx, &rv));
        if f16 {
            v = te.pool.raw(relax_ir::PrimExprData::Cast(DataType::FLOAT32, v));
        }
        let m = te.load(mean, idx);
        let d = te.sub(v, m);
        let sq = te.mul(d, d);
        Reduce { kind: CombinerKind::Sum, sources: vec![sq], axes: rs.iter().map(|r| r.0).collect() }
    })[0];
    let t = te.compute("T_layer_norm", shape.clone(), Axes::Ax, |te, idx| {
        let nr: Vec<PrimExpr> = (0..ndim).filter(|i| !real.contains(i)).map(|i| idx[i]).collect();
        let r: Vec<PrimExpr> = real.iter().map(|&i| idx[i]).collect();
        let m = te.load(mean, &nr);
        let vs = te.load(var_sum, &nr);
        let var = te.bin(BinOp::Div, vs, extent);
        let xv = te.load(x, idx);
        let d = te.sub(xv, m);
        let vt = te.pool.dtype(var);
        let e = te.pool.float(vt, eps);
        let ve = te.add(var, e);
        let rs = te.call(Intrinsic::Rsqrt, &[ve]);
        let mut ln = te.mul(d, rs);
        if f16 {
            ln = te.pool.raw(relax_ir::PrimExprData::Cast(DataType::FLOAT16, ln));
        }
        let g = te.load(gamma, &r);
        ln = te.mul(ln, g);
        let b = te.load(beta, &r);
        te.add(ln, b)
    });
    Lowered::one("layer_norm", t)
}
