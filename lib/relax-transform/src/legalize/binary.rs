//! Binary broadcasting ops (`legalize_ops/binary.py`; TOPI's `broadcast.h`).
//!
//! Every op is TOPI's `TOPI_DEFINE_BCAST_OP`: a stage `T_<op>` over `ax0, ax1, ...` in a
//! PrimFunc named after the op. Two tensors broadcast as `detail::BroadcastShape` does
//! (equal dims, a dim `1` on one side read at index 0, different symbolic dims giving
//! `T.max(n, m)`); a scalar constant argument (`R.const(1.0, "float32")`, the second one
//! checked first) is folded into the body and is no argument of the `call_tir`.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{DataType, PrimExpr};

use super::cx::{Cx, Operand};
use super::te::{Axes, Te, Tensor};
use super::{Legalize, Lowered};

/// The scalar rule of a binary op.
pub type Rule = fn(&mut Te, PrimExpr, PrimExpr) -> PrimExpr;

/// The legalization of a binary op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::ADD => |cx| binary(cx, "add", |te, a, b| te.add(a, b)),
        ops::SUBTRACT => |cx| binary(cx, "subtract", |te, a, b| te.sub(a, b)),
        ops::MULTIPLY => |cx| binary(cx, "multiply", |te, a, b| te.mul(a, b)),
        ops::DIVIDE => |cx| binary(cx, "divide", |te, a, b| te.bin(BinOp::Div, a, b)),
        ops::FLOOR_DIVIDE => |cx| binary(cx, "floor_divide", floor_divide),
        ops::MOD => |cx| binary(cx, "mod", |te, a, b| te.bin(BinOp::Mod, a, b)),
        ops::FLOOR_MOD => |cx| {
            binary(cx, "floor_mod", |te, a, b| {
                if is_int(te, a) {
                    return te.floormod(a, b);
                }
                let q = floor_divide(te, a, b);
                let qb = te.mul(q, b);
                te.sub(a, qb)
            })
        },
        ops::POWER => |cx| binary(cx, "power", |te, a, b| call2(te, Intrinsic::Pow, a, b)),
        ops::ATAN2 => |cx| binary(cx, "atan2", |te, a, b| call2(te, Intrinsic::Atan2, a, b)),
        ops::LOG_ADD_EXP => |cx| {
            binary(cx, "log_add_exp", |te, a, b| {
                let ea = te.call(Intrinsic::Exp, &[a]);
                let eb = te.call(Intrinsic::Exp, &[b]);
                let s = te.add(ea, eb);
                te.call(Intrinsic::Log, &[s])
            })
        },
        ops::MAXIMUM => |cx| binary(cx, "maximum", |te, a, b| te.bin(BinOp::Max, a, b)),
        ops::MINIMUM => |cx| binary(cx, "minimum", |te, a, b| te.bin(BinOp::Min, a, b)),
        ops::EQUAL => |cx| binary(cx, "equal", |te, a, b| te.bin(BinOp::Eq, a, b)),
        ops::NOT_EQUAL => |cx| binary(cx, "not_equal", |te, a, b| te.bin(BinOp::Ne, a, b)),
        ops::LESS => |cx| binary(cx, "less", |te, a, b| te.bin(BinOp::Lt, a, b)),
        ops::LESS_EQUAL => |cx| binary(cx, "less_equal", |te, a, b| te.bin(BinOp::Le, a, b)),
        ops::GREATER => |cx| binary(cx, "greater", |te, a, b| te.bin(BinOp::Gt, a, b)),
        ops::GREATER_EQUAL => |cx| binary(cx, "greater_equal", |te, a, b| te.bin(BinOp::Ge, a, b)),
        ops::LOGICAL_AND => |cx| binary(cx, "logical_and", |te, a, b| te.bin(BinOp::And, a, b)),
        ops::LOGICAL_OR => |cx| binary(cx, "logical_or", |te, a, b| te.bin(BinOp::Or, a, b)),
        ops::LOGICAL_XOR => |cx| binary(cx, "logical_xor", |te, a, b| bitwise(te, Intrinsic::BitwiseXor, a, b)),
        ops::BITWISE_AND => |cx| binary(cx, "bitwise_and", |te, a, b| bitwise(te, Intrinsic::BitwiseAnd, a, b)),
        ops::BITWISE_OR => |cx| binary(cx, "bitwise_or", |te, a, b| bitwise(te, Intrinsic::BitwiseOr, a, b)),
        ops::BITWISE_XOR => |cx| binary(cx, "bitwise_xor", |te, a, b| bitwise(te, Intrinsic::BitwiseXor, a, b)),
        ops::LEFT_SHIFT => |cx| binary(cx, "left_shift", |te, a, b| call2(te, Intrinsic::ShiftLeft, a, b)),
        ops::RIGHT_SHIFT => |cx| binary(cx, "right_shift", |te, a, b| call2(te, Intrinsic::ShiftRight, a, b)),
        _ => return None,
    })
}

fn is_int(te: &Te, a: PrimExpr) -> bool {
    te.pool.dtype(a).is_int()
}

/// TOPI's `floor_divide` rule.
fn floor_divide(te: &mut Te, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    if is_int(te, a) {
        return te.floordiv(a, b);
    }
    let d = te.bin(BinOp::Div, a, b);
    te.call(Intrinsic::Floor, &[d])
}

/// A call with matched operand types, typed as its first operand.
fn call2(te: &mut Te, op: Intrinsic, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let (a, b) = te.pool.match_types(a, b).unwrap_or((a, b));
    te.call(op, &[a, b])
}

/// A bitwise operator (constants fold).
fn bitwise(te: &mut Te, op: Intrinsic, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let (a, b) = te.pool.match_types(a, b).unwrap_or((a, b));
    if let (Some(x), Some(y)) = (te.pool.as_int(a), te.pool.as_int(b)) {
        let t = te.pool.dtype(a);
        let v = match op {
            Intrinsic::BitwiseAnd => x & y,
            Intrinsic::BitwiseOr => x | y,
            _ => x ^ y,
        };
        return te.pool.int(t, v);
    }
    te.call(op, &[a, b])
}

/// `_binary(topi.<op>)`: scalar constants folded, tensors converted in argument order.
fn binary(cx: &mut Cx, op: &str, rule: Rule) -> Option<Lowered> {
    let s1 = cx.scalar_const(1);
    let s0 = if s1.is_none() { cx.scalar_const(0) } else { None };
    let a = match s0 {
        Some(s) => Operand::Scalar(s),
        None => Operand::Tensor(cx.tensor(0)?),
    };
    let b = match s1 {
        Some(s) => Operand::Scalar(s),
        None => Operand::Tensor(cx.tensor(1)?),
    };
    let name = format!("T_{op}");
    let t = broadcast_op(&mut cx.te, &name, a, b, rule)?;
    Lowered::one(op, t)
}

/// `topi.<op>(a, b)` for tensors or scalars.
pub fn broadcast_op(te: &mut Te, name: &str, a: Operand, b: Operand, rule: Rule) -> Option<Tensor> {
    Some(match (a, b) {
        (Operand::Tensor(x), Operand::Tensor(y)) => broadcast(te, name, x, y, rule),
        (Operand::Tensor(x), Operand::Scalar(s)) => {
            let shape = te.shape(x);
            te.compute(name, shape, Axes::Ax, |te, i| {
                let v = te.load(x, i);
                rule(te, v, s)
            })
        }
        (Operand::Scalar(s), Operand::Tensor(y)) => {
            let shape = te.shape(y);
            te.compute(name, shape, Axes::Ax, |te, i| {
                let v = te.load(y, i);
                rule(te, s, v)
            })
        }
        (Operand::Scalar(_), Operand::Scalar(_)) => return None,
    })
}

/// `EqualCheck`: deep equality, or a difference that simplifies to 0.
pub fn equal_check(te: &mut Te, a: PrimExpr, b: PrimExpr) -> bool {
    if a == b {
        return true;
    }
    let d = te.sub(a, b);
    let s = relax_ir::arith::tvm::simplify(&mut te.pool, d);
    te.pool.as_int(s) == Some(0)
}

/// `detail::BroadcastShape`: the output shape, and for each output dim whether each
/// operand reads it (`false` reads index 0, or the dim is missing from the operand).
pub fn broadcast_shape(te: &mut Te, s1: &[PrimExpr], s2: &[PrimExpr]) -> (Vec<PrimExpr>, Vec<bool>, Vec<bool>) {
    let (n1, n2) = (s1.len(), s2.len());
    let n = n1.max(n2);
    let mut shape = vec![te.i64(0); n];
    let mut use1 = vec![false; n];
    let mut use2 = vec![false; n];
    let one = te.pool.int(DataType::INT32, 1);
    for i in 1..=n1.min(n2) {
        let (a, b) = (s1[n1 - i], s2[n2 - i]);
        let o = n - i;
        let (sa, sb) = (te.pool.as_int(a).is_some(), te.pool.as_int(b).is_some());
        if equal_check(te, a, b) {
            shape[o] = a;
            use1[o] = true;
            use2[o] = true;
        } else if equal_check(te, one, a) {
            shape[o] = b;
            use2[o] = true;
        } else if equal_check(te, one, b) {
            shape[o] = a;
            use1[o] = true;
        } else if !sa && !sb {
            shape[o] = te.bin(BinOp::Max, a, b);
            use1[o] = true;
            use2[o] = true;
        } else if !sa {
            shape[o] = b;
            use1[o] = true;
            use2[o] = true;
        } else {
            shape[o] = a;
            use1[o] = true;
            use2[o] = true;
        }
    }
    let longer = if n1 > n2 { s1 } else { s2 };
    for i in n1.min(n2) + 1..=n {
        shape[n - i] = longer[n - i];
        if n1 > n2 {
            use1[n - i] = true;
        } else {
            use2[n - i] = true;
        }
    }
    (shape, use1, use2)
}

/// `InputIndexFromBroadcast`: the indices of an operand of rank `ndim`.
pub fn input_index(te: &mut Te, out: &[PrimExpr], uses: &[bool], ndim: usize) -> Vec<PrimExpr> {
    let mut idx = Vec::new();
    for (i, &o) in out.iter().enumerate() {
        if uses[i] {
            idx.push(o);
        } else if out.len() - i <= ndim {
            idx.push(te.i64(0));
        }
    }
    idx
}

/// `detail::WithBroadcast`.
pub fn broadcast(te: &mut Te, name: &str, x: Tensor, y: Tensor, rule: Rule) -> Tensor {
    let (sx, sy) = (te.shape(x), te.shape(y));
    let (shape, u1, u2) = broadcast_shape(te, &sx, &sy);
    te.compute(name, shape, Axes::Ax, |te, i| {
        let ix = input_index(te, i, &u1, sx.len());
        let iy = input_index(te, i, &u2, sy.len());
        let a = te.load(x, &ix);
        let b = te.load(y, &iy);
        rule(te, a, b)
    })
}
