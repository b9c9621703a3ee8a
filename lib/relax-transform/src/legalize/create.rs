//! Creation ops (`legalize_ops/create.py`; TOPI's `full`, `arange`, `trilu`).
//!
//! * `full`, `ones`, `zeros` and their `_like` forms: `T_full` over `ax0, ...` storing
//!   the constant cast to the result dtype; PrimFuncs `full`, `ones`, `zeros`. The shape's
//!   dims are scalar arguments of the PrimFunc, so a dim no output dim defines (`p + s`)
//!   makes its variables extra scalar parameters. The fill value must be a scalar
//!   constant (a Python number for TVM, rounded to `float32` on its way into TOPI).
//! * `arange(start, end, step)`: with constant arguments TVM makes a constant tensor
//!   (`np.arange`), as done here; otherwise `T_arange` storing
//!   `T.Cast(dtype, start + step * i)` over `(end - start + step - 1) // step`
//!   (simplified) elements.
//! * `eye`, `eye_like`: `eye[i, j] = if_then_else(i == j - k, 1, 0)`.
//! * `tril`, `triu`: TOPI's `trilu`, a stage `trilu` over `i0, ...` keeping
//!   `x[..., i, j]` where `i >= j - k` (`<=` for `triu`), else 0.
//! * `hamming_window(size, periodic, alpha, beta)` (constant arguments, as TVM reads
//!   their values): TOPI's chain `T_arange` over `size` (plus one when periodic),
//!   `T_multiply` by `2 * pi`, `T_divide` by the count minus one, `compute` (`cos`),
//!   `T_multiply_1` by beta, `T_subtract` from alpha, the cast `compute_1`, and for a
//!   periodic window `T_strided_slice` dropping the last element.

use relax_ir::Intrinsic;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::{ConstData, ConstPayload, DataType, PrimExpr};

use super::cx::Cx;
use super::te::{Axes, Te, Tensor};
use super::{Legalize, Lowered};
use relax_ir::arith::tvm::simplify;

/// The legalization of a creation op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::FULL => |cx| full(cx, false, None, "full"),
        ops::FULL_LIKE => |cx| full(cx, true, None, "full"),
        ops::ONES => |cx| full(cx, false, Some(1.0), "ones"),
        ops::ONES_LIKE => |cx| full(cx, true, Some(1.0), "ones"),
        ops::ZEROS => |cx| full(cx, false, Some(0.0), "zeros"),
        ops::ZEROS_LIKE => |cx| full(cx, true, Some(0.0), "zeros"),
        ops::ARANGE => arange,
        ops::EYE => eye,
        ops::EYE_LIKE => eye,
        ops::HAMMING_WINDOW => hamming_window,
        ops::TRIL => |cx| trilu(cx, false, "tril"),
        ops::TRIU => |cx| trilu(cx, true, "triu"),
        _ => return None,
    })
}

/// `topi.eye(n, m, k, dtype)`: `eye[i, j] = if_then_else(i == j - k, 1, 0)`; `eye_like`
/// takes `n`, `m` and the dtype from its argument.
fn eye(cx: &mut Cx) -> Option<Lowered> {
    let like = cx.nargs() == 2;
    let (n, m, k, dtype, name) = if like {
        let dims = cx.arg_ty(0)?.dims()?.to_vec();
        let dtype = cx.arg_ty(0)?.dtype()?;
        if dims.len() != 2 {
            return None;
        }
        let n = cx.import(dims[0]);
        let m = cx.import(dims[1]);
        cx.te.note_extra(n);
        cx.te.note_extra(m);
        (n, m, cx.prim(1)?, dtype, "eye_like")
    } else {
        (cx.prim(0)?, cx.prim(1)?, cx.prim(2)?, cx.attr_dtype("dtype")?, "eye")
    };
    let te = &mut cx.te;
    let t = te.compute("eye", vec![n, m], Axes::Named(&["i", "j"]), |te, idx| {
        let jk = te.sub(idx[1], k);
        let c = te.bin(BinOp::Eq, idx[0], jk);
        let one = te.const_i(dtype, 1);
        let zero = te.const_i(dtype, 0);
        te.if_then_else(c, one, zero)
    });
    Lowered::one(name, t)
}

/// The constant value of the `i`-th argument (`R.prim_value(...)`).
fn prim_const(cx: &Cx, i: usize) -> Option<f64> {
    let e = cx.arg(i)?;
    let relax_ir::ExprData::Prim(p) = &cx.f.exprs[e] else { return None };
    match cx.f.pool.prim(*p) {
        PrimExprData::Int(_, v) => Some(*v as f64),
        PrimExprData::Float(_, v) => Some(v.get()),
        _ => None,
    }
}

/// `topi.hamming_window`.
fn hamming_window(cx: &mut Cx) -> Option<Lowered> {
    let dtype = cx.attr_dtype("dtype")?;
    let size = prim_const(cx, 0)?;
    let periodic = prim_const(cx, 1)? != 0.0;
    let (alpha, beta) = (prim_const(cx, 2)?, prim_const(cx, 3)?);
    // A window of one is TOPI's `const_vector`; sizes must be positive integers.
    if !dtype.is_float() || size.fract() != 0.0 || size < 2.0 || size > f64::from(i32::MAX) {
        return None;
    }
    let n = size as i64 + i64::from(periodic);
    let te = &mut cx.te;
    let len = te.i64(n);
    let index = te.compute("T_arange", vec![len], Axes::Ax, |te, i| te.cast(dtype, i[0]));
    let scaled = te.compute("T_multiply", vec![len], Axes::Ax, |te, i| {
        let c = te.const_f(dtype, 2.0 * std::f64::consts::PI);
        let v = te.load(index, i);
        te.mul(c, v)
    });
    let angular = te.compute("T_divide", vec![len], Axes::Ax, |te, i| {
        let v = te.load(scaled, i);
        let d = te.const_f(dtype, (n - 1) as f64);
        te.bin(BinOp::Div, v, d)
    });
    let cos = te.compute("compute", vec![len], Axes::I, |te, i| {
        let v = te.load(angular, i);
        te.call(Intrinsic::Cos, &[v])
    });
    let weighted = te.compute("T_multiply", vec![len], Axes::Ax, |te, i| {
        let c = te.const_f(dtype, beta);
        let v = te.load(cos, i);
        te.mul(c, v)
    });
    let window = te.compute("T_subtract", vec![len], Axes::Ax, |te, i| {
        let c = te.const_f(dtype, alpha);
        let v = te.load(weighted, i);
        te.sub(c, v)
    });
    let cast = te.compute("compute", vec![len], Axes::I, |te, i| {
        let v = te.load(window, i);
        te.cast(dtype, v)
    });
    if !periodic {
        return Lowered::one("hamming_window", cast);
    }
    let out = te.i64(n - 1);
    let t = te.compute("T_strided_slice", vec![out], Axes::Ax, |te, i| te.load(cast, i));
    Lowered::one("hamming_window", t)
}

/// The Python value of a scalar constant (`python_native=True`): floats as doubles,
/// integers and booleans as integers.
enum Native {
    Float(f64),
    Int(i64),
}

fn full(cx: &mut Cx, like: bool, fill: Option<f64>, name: &str) -> Option<Lowered> {
    let value = match fill {
        Some(v) => Native::Float(v),
        None => match cx.scalar_const(1) {
            Some(c) => match *cx.te.pool.prim(c) {
                PrimExprData::Float(_, f) => Native::Float(f.get()),
                PrimExprData::Int(_, v) => Native::Int(v),
                _ => return None,
            },
            None => return full_from_tensor(cx, like, name),
        },
    };
    let dtype = cx.out_dtype()?;
    let shape = if like {
        let dims = cx.arg_ty(0)?.dims()?.to_vec();
        let out: Vec<PrimExpr> = dims.iter().map(|&d| cx.import(d)).collect();
        for &d in &out {
            cx.te.note_extra(d);
        }
        out
    } else {
        cx.shape(0)?
    };
    let te = &mut cx.te;
    // A Python float becomes a float32 literal, an int an int32 one, then `cast(dtype, v)`.
    let v = match value {
        Native::Float(f) => te.pool.float(DataType::FLOAT32, f64::from(f as f32)),
        Native::Int(i) if i32::try_from(i).is_ok() => te.pool.int(DataType::INT32, i),
        Native::Int(i) => te.pool.int(DataType::INT64, i),
    };
    let v = te.cast(dtype, v);
    let t = te.compute("T_full", shape, Axes::Ax, |_, _| v);
    Lowered::one(name, t)
}

/// `full` whose fill value is a 0-d tensor: `T_full[...] = T.Cast(dtype, f[()])`.
fn full_from_tensor(cx: &mut Cx, like: bool, name: &str) -> Option<Lowered> {
    let dtype = cx.out_dtype()?;
    let _ = like;
    let dims = cx.arg_ty(0)?.dims()?.to_vec();
    let shape: Vec<PrimExpr> = dims.iter().map(|&d| cx.import(d)).collect();
    for &d in &shape {
        cx.te.note_extra(d);
    }
    let f = cx.tensor(1)?;
    if cx.te.ndim(f) != 0 {
        return None;
    }
    let t = cx.te.compute("T_full", shape, Axes::Ax, |te, _| {
        let v = te.load(f, &[]);
        te.cast(dtype, v)
    });
    Lowered::one(name, t)
}

fn arange(cx: &mut Cx) -> Option<Lowered> {
    let dtype = cx.out_dtype()?;
    let consts: Vec<Option<PrimExpr>> = (0..3)
        .map(|i| match cx.arg(i).map(|e| &cx.f.exprs[e]) {
            Some(relax_ir::ExprData::Prim(p)) => Some(*p),
            _ => None,
        })
        .collect();
    let consts: Vec<PrimExpr> = consts.into_iter().collect::<Option<_>>()?;
    let is_const = |p: PrimExpr| matches!(cx.f.pool.prim(p), PrimExprData::Int(..) | PrimExprData::Float(..));
    if consts.iter().all(|&p| is_const(p)) {
        // TVM evaluates `np.arange` into a constant: see `legalize_const_arange`.
        return None;
    }
    let start = cx.prim(0)?;
    let end = cx.prim(1)?;
    let step = cx.prim(2)?;
    let te = &mut cx.te;
    let all_int = [start, end, step].iter().all(|&e| te.pool.dtype(e).is_int());
    let step_c = te.pool.as_int(step);
    let num = if all_int && step_c.is_some_and(|s| s >= 1) {
        let d = te.sub(end, start);
        let d = te.add(d, step);
        let one = te.pool.int(DataType::INT32, 1);
        let d = te.sub(d, one);
        te.floordiv(d, step)
    } else if all_int && step_c.is_some_and(|s| s < 0) {
        let d = te.sub(start, end);
        let d = te.sub(d, step);
        let one = te.pool.int(DataType::INT32, 1);
        let d = te.sub(d, one);
        let ns = te.pool.neg(step);
        te.floordiv(d, ns)
    } else {
        let d = te.sub(end, start);
        let d = te.cast(DataType::FLOAT32, d);
        let q = te.bin(BinOp::Div, d, step);
        let c = te.call(Intrinsic::Ceil, &[q]);
        te.cast(DataType::INT64, c)
    };
    let num = simplify(&mut te.pool, num);
    let t = te.compute("T_arange", vec![num], Axes::Ax, |te, idx| {
        let m = te.mul(step, idx[0]);
        let s = te.add(start, m);
        te.cast(dtype, s)
    });
    Lowered::one("arange", t)
}

/// `arange` with constant arguments: the constant tensor `np.arange` gives.
pub fn const_arange(start: f64, end: f64, step: f64, dtype: DataType) -> Option<ConstData> {
    if step == 0.0 {
        return None;
    }
    let n = ((end - start) / step).ceil().max(0.0) as usize;
    let mut bytes = Vec::new();
    for i in 0..n {
        let v = start + step * i as f64;
        match (dtype.code, dtype.bits) {
            (relax_ir::TypeCode::Float, 32) => bytes.extend((v as f32).to_le_bytes()),
            (relax_ir::TypeCode::Float, 64) => bytes.extend(v.to_le_bytes()),
            (relax_ir::TypeCode::Int, 32) => bytes.extend((v as i32).to_le_bytes()),
            (relax_ir::TypeCode::Int, 64) => bytes.extend((v as i64).to_le_bytes()),
            _ => return None,
        }
    }
    Some(ConstData { dtype, shape: Some(vec![n as i64]), payload: ConstPayload::Data(bytes) })
}

fn trilu(cx: &mut Cx, upper: bool, name: &str) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let k = cx.prim(1)?;
    if cx.te.ndim(x) < 2 {
        return None;
    }
    Lowered::one(name, trilu_te(&mut cx.te, x, k, upper))
}

/// `topi.trilu` of a tensor of rank 2 or more.
pub fn trilu_te(te: &mut Te, x: Tensor, k: PrimExpr, upper: bool) -> Tensor {
    let k = if te.pool.dtype(k) == DataType::INT32 { k } else { te.pool.raw(PrimExprData::Cast(DataType::INT32, k)) };
    let shape = te.shape(x);
    te.compute("trilu", shape, Axes::I, |te, idx| {
        let n = idx.len();
        let (row, col) = (idx[n - 2], idx[n - 1]);
        let ck = te.sub(col, k);
        let op = if upper { BinOp::Le } else { BinOp::Ge };
        let (row, ck) = te.pool.match_types(row, ck).unwrap_or((row, ck));
        let check = te.pool.raw(PrimExprData::Bin(op, row, ck));
        let v = te.load(x, idx);
        let dtype = te.dtype(x);
        let zero = te.const_i(dtype, 0);
        te.select(check, v, zero)
    })
}
