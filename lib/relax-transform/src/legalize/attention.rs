//! Attention (`legalize_ops/nn.py`, `_te_attention`; TOPI's `nn/batch_matmul.py`).
//!
//! `nn.attention(q, k, v)` and `nn.attention_bias(q, k, v, bias)` over `(batch, seq,
//! heads, dim)` tensors become one PrimFunc (`attention`, `attention_bias`):
//! 1. `q`, `k`, `v` transposed to `(batch, heads, seq, dim)` (`T_transpose`) and
//!    reshaped to `(batch * heads, seq, dim)` (`T_reshape`);
//! 2. `p = batch_matmul(q, k)` with `k` transposed (`T_batch_matmul_NT`), annotated
//!    `{"layout_free_placeholders": [k]}` as TOPI annotates it;
//! 3. `p * scale` (`T_multiply`), or `p / sqrt(dim)` (`T_divide`) without a scale;
//! 4. with a bias: reshaped to `(batch, heads, seq, seq_kv)`, added, reshaped back;
//! 5. softmax along the last axis; with a causal mask (`TopLeft`: diagonal offset 0,
//!    `BottomRight`: `|seq - seq_kv|`), `trilu` before and after the exponential, the
//!    maximum and sum kept as `(…, 1)` (`trilu_red`), and a `T_divide`;
//! 6. `batch_matmul(s, v)` (`T_batch_matmul_NN`), reshaped to `(batch, heads, seq,
//!    dim_v)` and transposed back to `(batch, seq, heads, dim_v)`.
//!
//! Sliding-window attention (`window_size`) is not legalized, as in TVM.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{AttrValue, Attrs, DataType, PrimExpr};

use super::binary::broadcast;
use super::create::trilu_te;
use super::cx::Cx;
use super::manipulate::{reshape, transpose};
use super::nn::softmax_along;
use super::reduce::comm_reduce;
use super::te::{Axes, CombinerKind, Reduce, Te, Tensor};
use super::{Legalize, Lowered};

/// The legalization of an attention op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::NN_ATTENTION => |cx| attention(cx, false),
        ops::NN_ATTENTION_BIAS => |cx| attention(cx, true),
        _ => return None,
    })
}

/// `topi.nn.batch_matmul(a, b, oshape, transpose_b=...)` (never `transpose_a`).
pub fn batch_matmul(te: &mut Te, a: Tensor, b: Tensor, oshape: Vec<PrimExpr>, transpose_b: bool) -> Tensor {
    let (sa, sb) = (te.shape(a), te.shape(b));
    let out_dtype = te.dtype(a);
    let k_extent = sa[2];
    let (xb_one, yb_one) = (te.pool.as_int(sa[0]) == Some(1), te.pool.as_int(sb[0]) == Some(1));
    let name = if transpose_b { "T_batch_matmul_NT" } else { "T_batch_matmul_NN" };
    let attrs =
        Attrs(vec![("layout_free_placeholders".to_string(), AttrValue::List(vec![AttrValue::Buffer(te.buffer(b))]))]);
    te.compute_reduce_with_attrs(name, oshape, Axes::Named(&["b", "i", "j"]), attrs, |te, idx| {
        let (k, kv) = te.reduce_axis("k", k_extent);
        let zero = te.pool.int(DataType::INT32, 0);
        let (ba, bb) = (if xb_one { zero } else { idx[0] }, if yb_one { zero } else { idx[0] });
        let x = te.load(a, &[ba, idx[1], kv]);
        let y = if transpose_b { te.load(b, &[bb, idx[2], kv]) } else { te.load(b, &[bb, kv, idx[2]]) };
        let x = te.cast(out_dtype, x);
        let y = te.cast(out_dtype, y);
        let source = te.mul(x, y);
        Reduce { kind: CombinerKind::Sum, sources: vec![source], axes: vec![k] }
    })[0]
}

/// `_te_attention`.
fn attention(cx: &mut Cx, with_bias: bool) -> Option<Lowered> {
    // `R.nn.attention(q, k, v, bias)` is TVM's `attention_bias`.
    let with_bias = with_bias || cx.nargs() > 3;
    if cx.attr("window_size").is_some_and(|v| *v != AttrValue::None) {
        return None;
    }
    let scale = match cx.attr("scale") {
        None | Some(AttrValue::None) => None,
        Some(AttrValue::PrimFloat(dt, v)) => Some((*dt, v.get())),
        Some(v) => Some((DataType::FLOAT32, v.as_f64()?)),
    };
    let causal = match cx.attr("causal_mask") {
        None | Some(AttrValue::None) => None,
        Some(v) => Some(v.as_str()?.to_string()),
    };
    let q = cx.tensor(0)?;
    let k = cx.tensor(1)?;
    let v = cx.tensor(2)?;
    let bias = if with_bias { Some(cx.tensor(3)?) } else { None };
    let te = &mut cx.te;
    let (qs, vs) = (te.shape(q), te.shape(v));
    if qs.len() != 4 || vs.len() != 4 || te.ndim(k) != 4 {
        return None;
    }
    let (batch, seq, heads, dim) = (qs[0], qs[1], qs[2], qs[3]);
    let (seq_kv, dim_v) = (vs[1], vs[3]);
    let swap = [0, 2, 1, 3];
    let q = transpose(te, q, &swap);
    let k = transpose(te, k, &swap);
    let v = transpose(te, v, &swap);
    let bs = te.mul(batch, heads);
    let q = reshape(te, q, vec![bs, seq, dim]);
    let k = reshape(te, k, vec![bs, seq_kv, dim]);
    let v = reshape(te, v, vec![bs, seq_kv, dim_v]);
    let mut p = batch_matmul(te, q, k, vec![bs, seq, seq_kv], true);
    let pd = te.dtype(p);
    p = match scale {
        Some((dt, s)) => {
            let c = te.const_f(dt, s);
            scalar_op(te, "T_multiply", p, c, true)
        }
        None => {
            let c = te.pool.raw(relax_ir::PrimExprData::Cast(pd, dim));
            let r = te.call(Intrinsic::Sqrt, &[c]);
            scalar_op(te, "T_divide", p, r, false)
        }
    };
    if let Some(bias) = bias {
        p = reshape(te, p, vec![batch, heads, seq, seq_kv]);
        p = broadcast(te, "T_add", p, bias, |te, a, b| te.add(a, b));
        p = reshape(te, p, vec![bs, seq, seq_kv]);
    }
    let s = match causal.as_deref() {
        None => softmax_along(te, p, 2),
        Some(mask) => {
            let offset = match mask {
                "TopLeft" => te.pool.int(DataType::INT32, 0),
                "BottomRight" => {
                    let d = te.sub(seq, seq_kv);
                    let a = int_abs(te, d);
                    te.cast(DataType::INT32, a)
                }
                _ => return None,
            };
            let masked = trilu_te(te, p, offset, false);
            let max = comm_reduce(te, masked, &[2], true, CombinerKind::Max);
            let shifted = broadcast(te, "T_subtract", masked, max, |te, a, b| te.sub(a, b));
            let shape = te.shape(shifted);
            let exp = te.compute("compute", shape, Axes::I, |te, i| {
                let x = te.load(shifted, i);
                te.call(Intrinsic::Exp, &[x])
            });
            let masked_exp = trilu_te(te, exp, offset, false);
            let sum = comm_reduce(te, masked_exp, &[2], true, CombinerKind::Sum);
            broadcast(te, "T_divide", masked_exp, sum, |te, a, b| te.bin(BinOp::Div, a, b))
        }
    };
    let o = batch_matmul(te, s, v, vec![bs, seq, dim_v], false);
    let o = reshape(te, o, vec![batch, heads, seq, dim_v]);
    let out = transpose(te, o, &swap);
    let name = if with_bias { "attention_bias" } else { "attention" };
    Lowered::one(name, out)
}

/// `topi.multiply(x, s)` (`mul`) or `topi.divide(x, s)`.
fn scalar_op(te: &mut Te, name: &str, x: Tensor, s: PrimExpr, mul: bool) -> Tensor {
    let shape = te.shape(x);
    te.compute(name, shape, Axes::Ax, |te, i| {
        let v = te.load(x, i);
        te.bin(if mul { BinOp::Mul } else { BinOp::Div }, v, s)
    })
}

/// `tvm.tirx.abs` of an integer expression.
fn int_abs(te: &mut Te, x: PrimExpr) -> PrimExpr {
    if let Some(c) = te.pool.as_int(x) {
        let t = te.pool.dtype(x);
        return te.const_i(t, c.abs());
    }
    let t = te.pool.dtype(x);
    let zero = te.const_i(t, 0);
    let c = te.bin(BinOp::Ge, x, zero);
    let n = te.pool.neg(x);
    te.select(c, x, n)
}
