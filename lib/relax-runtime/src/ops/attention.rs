//! Attention kernels: `nn.attention(q, k, v)` and `nn.attention_bias(q, k, v, bias)` over
//! `(batch, seq, heads, dim)` tensors, computed as the stages of their legalization
//! (`relax-transform`'s `legalize/attention.rs`), each operation rounded to the dtype:
//!
//! 1. `p[i, j] = sum_k q[i, k] * k[j, k]` per batch and head, from zero in order of `k`;
//! 2. `p * scale`, or `p / sqrt(dim)` without a scale;
//! 3. plus the bias (broadcast to `(batch, heads, seq, seq_kv)`);
//! 4. softmax along `j`; with a causal mask (`TopLeft`: keep `j <= i`, `BottomRight`:
//!    keep `j <= i + |seq - seq_kv|`) masked entries are zero before the maximum and
//!    after the exponential, as TOPI's `trilu` makes them;
//! 5. `o[i, d] = sum_j s[i, j] * v[j, d]`, laid out `(batch, seq, heads, dim_v)`.
//!
//! The kernels take float32 tensors and no sliding window (which TVM does not legalize
//! either); other cases run through the legalization.

use relax_ir::op::{OpId, ops};
use relax_ir::{AttrValue, BinOp, DataType};

use super::elementwise::{broadcast_strides, unary_rule};
use super::{Kernel, KernelArgs, unsupported};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, row_major_strides};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::NN_ATTENTION | ops::NN_ATTENTION_BIAS => attention,
        _ => return None,
    })
}

fn bin(op: BinOp, a: Scalar, b: Scalar) -> RunResult<Scalar> {
    binary(op, a, b).map_err(RunError::new)
}

fn attention(k: &KernelArgs<'_>) -> RunResult<Value> {
    let (q, kt, v) = (k.tensor(0)?, k.tensor(1)?, k.tensor(2)?);
    let bias = if k.args.len() > 3 { Some(k.tensor(3)?) } else { None };
    let t = DataType::FLOAT32;
    let all_f32 = [q, kt, v].iter().chain(bias.as_ref()).all(|x| x.dtype == t);
    if !all_f32 || q.shape.len() != 4 || kt.shape.len() != 4 || v.shape.len() != 4 || k.attr("window_size").is_some() {
        return Err(unsupported());
    }
    let scale = match k.attr("scale") {
        None => None,
        Some(AttrValue::PrimFloat(dt, s)) => Some(Scalar::float(*dt, s.get())),
        Some(other) => Some(Scalar::float(t, other.as_f64().ok_or_else(unsupported)?)),
    };
    let offset = match k.attr("causal_mask") {
        None => None,
        Some(AttrValue::Str(s)) if s == "TopLeft" => Some(0),
        Some(AttrValue::Str(s)) if s == "BottomRight" => Some((q.shape[1] - kt.shape[1]).abs()),
        Some(_) => return Err(unsupported()),
    };
    let (batch, seq, heads, dim) = (q.shape[0], q.shape[1], q.shape[2], q.shape[3]);
    let (seq_kv, dim_v) = (v.shape[1], v.shape[3]);
    if kt.shape != [batch, seq_kv, heads, dim] || v.shape[..3] != [batch, seq_kv, heads] {
        return Err(unsupported());
    }
    let bias_at = match bias {
        Some(b) => {
            let full = [batch, heads, seq, seq_kv];
            if b.shape.len() > 4 || super::elementwise::broadcast_shape(&b.shape, &full)? != full {
                return Err(unsupported());
            }
            Some((b.scalars(), broadcast_strides(&b.shape, 4)))
        }
        None => None,
    };
    let (qv, kv, vv) = (q.scalars(), kt.scalars(), v.scalars());
    let (qs, ks, vs) = (row_major_strides(&q.shape), row_major_strides(&kt.shape), row_major_strides(&v.shape));
    let divisor = unary_rule(ops::SQRT, Scalar::int(DataType::INT64, dim).cast(t))?;
    let zero = Scalar::float(t, 0.0);
    let mut out = vec![zero; (batch * seq * heads * dim_v).max(0) as usize];
    let os = row_major_strides(&[batch, seq, heads, dim_v]);
    let mut p = vec![zero; seq_kv.max(0) as usize];
    for b in 0..batch {
        for h in 0..heads {
            for i in 0..seq {
                for j in 0..seq_kv {
                    let mut acc = zero;
                    for d in 0..dim {
                        let a = qv[(b * qs[0] + i * qs[1] + h * qs[2] + d) as usize];
                        let c = kv[(b * ks[0] + j * ks[1] + h * ks[2] + d) as usize];
                        acc = bin(BinOp::Add, acc, bin(BinOp::Mul, a, c)?)?;
                    }
                    acc = match scale {
                        Some(s) => bin(BinOp::Mul, acc, s)?,
                        None => bin(BinOp::Div, acc, divisor)?,
                    };
                    if let Some((bv, bs)) = &bias_at {
                        let at = b * bs[0] + h * bs[1] + i * bs[2] + j * bs[3];
                        acc = bin(BinOp::Add, acc, bv[at as usize])?;
                    }
                    p[j as usize] = acc;
                }
                let keep = |j: i64| offset.is_none_or(|o| j <= i + o);
                for j in 0..seq_kv {
                    if !keep(j) {
                        p[j as usize] = zero;
                    }
                }
                let mut max = super::reduce::min_value(t);
                for &x in &p {
                    max = bin(BinOp::Max, max, x)?;
                }
                let mut sum = zero;
                for j in 0..seq_kv {
                    let e = unary_rule(ops::EXP, bin(BinOp::Sub, p[j as usize], max)?)?;
                    p[j as usize] = if keep(j) { e } else { zero };
                    sum = bin(BinOp::Add, sum, p[j as usize])?;
                }
                for x in p.iter_mut() {
                    *x = bin(BinOp::Div, *x, sum)?;
                }
                for d in 0..dim_v {
                    let mut acc = zero;
                    for j in 0..seq_kv {
                        let w = vv[(b * vs[0] + j * vs[1] + h * vs[2] + d) as usize];
                        acc = bin(BinOp::Add, acc, bin(BinOp::Mul, p[j as usize], w)?)?;
                    }
                    out[(b * os[0] + i * os[1] + h * os[2] + d) as usize] = acc;
                }
            }
        }
    }
    Ok(Value::Tensor(Tensor::from_scalars(&[batch, seq, heads, dim_v], t, out)))
}
