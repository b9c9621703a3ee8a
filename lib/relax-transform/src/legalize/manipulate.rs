//! Shape manipulation (`legalize_ops/manipulate.py`; TOPI's `transform.h`).
//!
//! | op | PrimFunc | stage | index of the input |
//! |---|---|---|---|
//! | `reshape`, `flatten` | `reshape` | `T_reshape` | unravel(ravel(out index, out shape), in shape) |
//! | `permute_dims` | `transpose` | `T_transpose` | permuted |
//! | `expand_dims` | `expand_dims` | `expand_dims` (`i0, ...`) | the non-inserted dims |
//! | `squeeze` | `squeeze` | `T_squeeze` | `0` at removed dims |
//! | `concat` | `concatenate` | `T_concat` | `if_then_else(i - offset >= 0, ...)` chain |
//! | `split` | `split` | `T_split_sections` / `T_split`, one stage per output | `i + begin` |
//! | `broadcast_to` | `broadcast_to` | `T_broadcast_to` | broadcast |
//! | `repeat` | `repeat` | `T_repeat` | `i // repeats` |
//! | `tile` | `tile` | `T_tile` | `i % dim` |
//! | `flip` | `flip` | `T_reverse_sequence` | `dim - 1 - i` |
//! | `stack` | `stack` | `T_stack` | `if_then_else(i == k, ...)` chain |
//! | `gather_elements` | `gather` | `T_gather` | the loaded index along the axis |
//! | `one_hot` | `one_hot` | `T_one_hot` | `T.Select(indices[...] == i, on, off)` |
//! | `meshgrid` | `meshgrid` | `T_meshgrid`, one stage per output | the input's own axis |
//! | `nn.pad` (constant) | `pad` | `PadInput` (`i0, ...`) | `i - before`, guarded by `if_then_else` |
//!
//! `flatten` takes its target shape from the call's type. `repeat` without an axis
//! first reshapes to 1-d (a `T_reshape` stage). `concat`'s output dim is the simplified
//! sum of the input dims. Indices go through TVM's simplifier, so a reshape of `(n, 4)`
//! to `(n * 4,)` reads `x[v // 4 % n, v % 4]` as TVM does.

use relax_ir::PrimExpr;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;

use super::binary::{broadcast_shape, equal_check, input_index};
use super::cx::{Cx, norm_axis};
use super::te::{Axes, Te, Tensor};
use super::{Legalize, Lowered};
use relax_ir::arith::tvm::simplify;

/// The legalization of a manipulation op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::RESHAPE => |cx| {
            let x = cx.tensor(0)?;
            let shape = cx.shape(1)?;
            Lowered::one("reshape", reshape(&mut cx.te, x, shape))
        },
        ops::FLATTEN => |cx| {
            let x = cx.tensor(0)?;
            let dims = cx.out().dims()?.to_vec();
            let shape: Vec<PrimExpr> = dims.iter().map(|&d| cx.import(d)).collect();
            for &d in &shape {
                cx.te.note_extra(d);
            }
            Lowered::one("reshape", reshape(&mut cx.te, x, shape))
        },
        ops::PERMUTE_DIMS => permute_dims,
        ops::EXPAND_DIMS => expand_dims,
        ops::SQUEEZE => squeeze,
        ops::CONCAT => concat,
        ops::SPLIT => split,
        ops::BROADCAST_TO => broadcast_to,
        ops::REPEAT => repeat,
        ops::TILE => tile,
        ops::FLIP => flip,
        ops::STACK => stack,
        ops::GATHER_ELEMENTS => gather_elements,
        ops::NN_PAD => pad,
        ops::ONE_HOT => one_hot,
        ops::MESHGRID => meshgrid,
        _ => return None,
    })
}

/// `topi.reshape`.
pub fn reshape(te: &mut Te, x: Tensor, shape: Vec<PrimExpr>) -> Tensor {
    let in_shape = te.shape(x);
    let empty = |te: &Te, s: &[PrimExpr]| s.iter().any(|&d| te.pool.as_int(d) == Some(0));
    if empty(te, &shape) || empty(te, &in_shape) {
        let dtype = te.dtype(x);
        return te.compute("T_reshape", shape, Axes::Ax, |te, _| te.const_i(dtype, 0));
    }
    let target = shape.clone();
    te.compute("T_reshape", shape, Axes::Ax, |te, idx| {
        // RavelIndex
        let mut flat = te.pool.int(relax_ir::DataType::INT32, 0);
        for (i, &ix) in idx.iter().enumerate() {
            flat = if i == 0 {
                ix
            } else {
                let m = te.mul(flat, target[i]);
                te.add(m, ix)
            };
        }
        // UnravelIndex
        let mut out = Vec::new();
        for &d in in_shape.iter().rev() {
            out.push(te.floormod(flat, d));
            flat = te.floordiv(flat, d);
        }
        out.reverse();
        te.load(x, &out)
    })
}

fn permute_dims(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    let axes: Vec<usize> = match cx.attr_ints("axes") {
        Some(a) => a.iter().map(|&v| norm_axis(v, ndim)).collect::<Option<_>>()?,
        None => (0..ndim).rev().collect(),
    };
    Lowered::one("transpose", transpose(&mut cx.te, x, &axes))
}

/// `topi.transpose` with normalized axes.
pub fn transpose(te: &mut Te, x: Tensor, axes: &[usize]) -> Tensor {
    let shape = te.shape(x);
    let out: Vec<PrimExpr> = axes.iter().map(|&a| shape[a]).collect();
    te.compute("T_transpose", out, Axes::Ax, |te, idx| {
        let mut real = idx.to_vec();
        for (i, &a) in axes.iter().enumerate() {
            real[a] = idx[i];
        }
        te.load(x, &real)
    })
}

fn expand_dims(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let axis = cx.attr_ints("axis")?;
    let shape = cx.te.shape(x);
    let out_ndim = shape.len() + axis.len();
    let inserted: Vec<usize> = axis.iter().map(|&a| norm_axis(a, out_ndim)).collect::<Option<_>>()?;
    let mut out = Vec::new();
    let mut data_dims = Vec::new();
    let mut it = shape.iter();
    for i in 0..out_ndim {
        if inserted.contains(&i) {
            out.push(cx.te.i64(1));
        } else {
            out.push(*it.next()?);
            data_dims.push(i);
        }
    }
    let t = cx.te.compute("expand_dims", out, Axes::I, |te, idx| {
        let real: Vec<PrimExpr> = data_dims.iter().map(|&d| idx[d]).collect();
        te.load(x, &real)
    });
    Lowered::one("expand_dims", t)
}

fn squeeze(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let shape = cx.te.shape(x);
    let ndim = shape.len();
    let is_one = |te: &Te, d: PrimExpr| te.pool.as_int(d) == Some(1);
    let axes: Vec<usize> = match cx.attr_ints("axis") {
        None => (0..ndim).filter(|&i| is_one(&cx.te, shape[i])).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for a in list {
                let a = norm_axis(a, ndim)?;
                let c = cx.te.pool.as_int(shape[a]);
                if c.is_none() || c == Some(1) {
                    v.push(a);
                }
            }
            v
        }
    };
    let out: Vec<PrimExpr> = (0..ndim).filter(|i| !axes.contains(i)).map(|i| shape[i]).collect();
    let t = cx.te.compute("T_squeeze", out, Axes::Ax, |te, idx| {
        let mut real = Vec::new();
        let mut flag = 0;
        for i in 0..ndim {
            if axes.contains(&i) {
                real.push(te.i64(0));
                flag += 1;
            } else {
                real.push(idx[i - flag]);
            }
        }
        te.load(x, &real)
    });
    Lowered::one("squeeze", t)
}

fn concat(cx: &mut Cx) -> Option<Lowered> {
    let fields = cx.tuple_fields(0)?;
    let mut inputs = Vec::new();
    for f in fields {
        inputs.push(cx.tensor_of(f)?);
    }
    let ndim = cx.te.ndim(*inputs.first()?);
    let axis = norm_axis(cx.attr_int("axis").unwrap_or(0), ndim)?;
    let te = &mut cx.te;
    let sizes: Vec<PrimExpr> = inputs.iter().map(|&t| te.shape(t)[axis]).collect();
    let mut join = sizes[0];
    for &s in &sizes[1..] {
        join = te.add(join, s);
    }
    let join = simplify(&mut te.pool, join);
    let mut out = te.shape(inputs[0]);
    out[axis] = join;
    let t = te.compute("T_concat", out, Axes::Ax, |te, idx| {
        let mut ret = te.load(inputs[0], idx);
        let mut ind = idx[axis];
        for i in 0..inputs.len() - 1 {
            ind = te.sub(ind, sizes[i]);
            let mut real = idx.to_vec();
            real[axis] = ind;
            let zero = te.pool.int(relax_ir::DataType::INT32, 0);
            let cond = te.bin(BinOp::Ge, ind, zero);
            let v = te.load(inputs[i + 1], &real);
            ret = te.if_then_else(cond, v, ret);
        }
        ret
    });
    Lowered::one("concatenate", t)
}

fn split(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    let axis = norm_axis(cx.attr_int("axis").unwrap_or(0), ndim)?;
    let ios = cx.attr("indices_or_sections")?;
    let te = &mut cx.te;
    let src = te.shape(x)[axis];
    let (indices, name): (Vec<PrimExpr>, &str) = match ios.as_int() {
        Some(n) if n > 0 => {
            // split_n_sections: segments of (size + n - 1) // n.
            let k = te.pool.int(relax_ir::DataType::INT32, n);
            let one = te.pool.int(relax_ir::DataType::INT32, 1);
            let a = te.add(src, k);
            let b = te.sub(a, one);
            let seg = te.floordiv(b, k);
            let mut v = Vec::new();
            for i in 1..n {
                let c = te.pool.int(relax_ir::DataType::INT32, i);
                v.push(te.mul(seg, c));
            }
            (v, "T_split_sections")
        }
        _ => {
            let list = ios.as_int_list()?;
            (list.iter().map(|&i| te.i64(i)).collect(), "T_split")
        }
    };
    let mut begins = vec![te.pool.int(relax_ir::DataType::INT32, 0)];
    begins.extend(indices);
    let mut outputs = Vec::new();
    for i in 0..begins.len() {
        let size = if i == begins.len() - 1 { te.sub(src, begins[i]) } else { te.sub(begins[i + 1], begins[i]) };
        let mut shape = te.shape(x);
        shape[axis] = size;
        let begin = begins[i];
        let t = te.compute(name, shape, Axes::Ax, |te, idx| {
            let mut real = idx.to_vec();
            real[axis] = te.add(idx[axis], begin);
            te.load(x, &real)
        });
        outputs.push(t);
    }
    Some(Lowered { name: "split".to_string(), outputs })
}

fn broadcast_to(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let target = cx.shape(1)?;
    let te = &mut cx.te;
    let xs = te.shape(x);
    if target.len() < xs.len() {
        return None;
    }
    let (common, _, use2) = broadcast_shape(te, &target, &xs);
    let mut out = Vec::new();
    for (i, &d) in target.iter().enumerate() {
        if te.pool.as_int(d).is_none() {
            out.push(d);
        } else {
            if !equal_check(te, d, common[i]) {
                return None;
            }
            out.push(common[i]);
        }
    }
    let t = te.compute("T_broadcast_to", out, Axes::Ax, |te, idx| {
        let ix = input_index(te, idx, &use2, xs.len());
        te.load(x, &ix)
    });
    Lowered::one("broadcast_to", t)
}

fn repeat(cx: &mut Cx) -> Option<Lowered> {
    let mut x = cx.tensor(0)?;
    let repeats = cx.attr_int("repeats")?;
    let te = &mut cx.te;
    let axis = match cx.call.attrs.get("axis").and_then(|v| v.as_int()) {
        Some(a) => norm_axis(a, te.ndim(x))?,
        None => {
            // A 0-d tensor flattens to one element.
            let shape = te.shape(x);
            let mut total = match shape.first() {
                Some(&d) => d,
                None => te.i64(1),
            };
            for &d in shape.iter().skip(1) {
                total = te.mul(total, d);
            }
            x = reshape(te, x, vec![total]);
            0
        }
    };
    let mut out = te.shape(x);
    let r = te.pool.int(relax_ir::DataType::INT32, repeats);
    out[axis] = te.mul(r, out[axis]);
    let t = te.compute("T_repeat", out, Axes::Ax, |te, idx| {
        let mut real = idx.to_vec();
        let r = te.pool.int(relax_ir::DataType::INT32, repeats);
        real[axis] = te.floordiv(idx[axis], r);
        te.load(x, &real)
    });
    Lowered::one("repeat", t)
}

fn tile(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let reps = cx.attr_ints("repeats")?;
    let te = &mut cx.te;
    let xs = te.shape(x);
    let (ndim, rdim) = (xs.len(), reps.len());
    let one = te.pool.int(relax_ir::DataType::INT32, 1);
    let mut data_shape = Vec::new();
    let mut reps_shape = Vec::new();
    if ndim >= rdim {
        data_shape.extend(xs.iter().copied());
        reps_shape.extend(std::iter::repeat_n(one, ndim - rdim));
    } else {
        data_shape.extend(std::iter::repeat_n(one, rdim - ndim));
        data_shape.extend(xs.iter().copied());
    }
    for &r in &reps {
        reps_shape.push(te.i64(r));
    }
    let out: Vec<PrimExpr> = data_shape.iter().zip(&reps_shape).map(|(&d, &r)| te.mul(d, r)).collect();
    if out.iter().any(|&d| te.pool.as_int(d) == Some(0)) {
        let dtype = te.dtype(x);
        let t = te.compute("T_tile", out, Axes::Ax, |te, _| te.const_i(dtype, 0));
        return Lowered::one("tile", t);
    }
    let t = te.compute("T_tile", out, Axes::Ax, |te, idx| {
        let off = rdim.saturating_sub(ndim);
        let real: Vec<PrimExpr> = (0..ndim).map(|i| te.floormod(idx[off + i], xs[i])).collect();
        te.load(x, &real)
    });
    Lowered::one("tile", t)
}

fn flip(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ndim = cx.te.ndim(x);
    let axis = norm_axis(cx.attr_int("axis")?, ndim)?;
    let shape = cx.te.shape(x);
    let t = cx.te.compute("T_reverse_sequence", shape.clone(), Axes::Ax, |te, idx| {
        let mut real = idx.to_vec();
        let one = te.pool.int(relax_ir::DataType::INT32, 1);
        let last = te.sub(shape[axis], one);
        real[axis] = te.sub(last, idx[axis]);
        te.load(x, &real)
    });
    Lowered::one("flip", t)
}

fn stack(cx: &mut Cx) -> Option<Lowered> {
    let fields = cx.tuple_fields(0)?;
    let mut inputs = Vec::new();
    for f in fields {
        inputs.push(cx.tensor_of(f)?);
    }
    let ndim = cx.te.ndim(*inputs.first()?);
    let axis = norm_axis(cx.attr_int("axis").unwrap_or(0), ndim + 1)?;
    let te = &mut cx.te;
    let mut out = te.shape(inputs[0]);
    let n = te.pool.int(relax_ir::DataType::INT32, inputs.len() as i64);
    out.insert(axis, n);
    let t = te.compute("T_stack", out, Axes::Ax, |te, idx| {
        let real: Vec<PrimExpr> = idx.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &v)| v).collect();
        let ind = idx[axis];
        let mut ret = te.load(inputs[0], &real);
        for (i, &inp) in inputs.iter().enumerate().skip(1) {
            let c = te.pool.int(relax_ir::DataType::INT32, i as i64);
            let cond = te.bin(BinOp::Eq, ind, c);
            let v = te.load(inp, &real);
            ret = te.if_then_else(cond, v, ret);
        }
        ret
    });
    Lowered::one("stack", t)
}

/// `topi.gather(data, axis, indices)`: the output has the indices' shape and reads
/// `data` at the loaded index along `axis`.
fn gather_elements(cx: &mut Cx) -> Option<Lowered> {
    let x = cx.tensor(0)?;
    let ind = cx.tensor(1)?;
    let ndim = cx.te.ndim(x);
    let axis = norm_axis(cx.attr_int("axis").unwrap_or(0), ndim)?;
    if cx.te.ndim(ind) != ndim {
        return None;
    }
    let shape = cx.te.shape(ind);
    let t = cx.te.compute("T_gather", shape, Axes::Ax, |te, idx| {
        let mut real = idx.to_vec();
        real[axis] = te.load(ind, idx);
        te.load(x, &real)
    });
    Lowered::one("gather", t)
}

/// `topi.nn.pad` (constant mode): `PadInput[i] = if_then_else(all(i >= before,
/// i < dim + before), x[i - before], value)`; dims without padding index directly.
fn pad(cx: &mut Cx) -> Option<Lowered> {
    if cx.attr("pad_mode").and_then(|v| v.as_str()).unwrap_or("constant") != "constant" {
        return None;
    }
    let x = cx.tensor(0)?;
    let widths = cx.attr_ints("pad_width")?;
    let value = cx.attr_f64("pad_value").unwrap_or(0.0);
    let te = &mut cx.te;
    let shape = te.shape(x);
    let n = shape.len();
    if widths.len() != 2 * n {
        return None;
    }
    let before: Vec<i64> = widths.iter().step_by(2).copied().collect();
    let after: Vec<i64> = widths.iter().skip(1).step_by(2).copied().collect();
    Lowered::one("pad", pad_te(te, x, &before, &after, value, "PadInput"))
}

/// `topi.nn.pad(x, before, after, value, name)` with a constant value.
pub fn pad_te(te: &mut Te, x: Tensor, before: &[i64], after: &[i64], value: f64, name: &str) -> Tensor {
    let shape = te.shape(x);
    let n = shape.len();
    let out: Vec<PrimExpr> = (0..n)
        .map(|i| {
            let b = te.pool.int(relax_ir::DataType::INT32, before[i]);
            let a = te.pool.int(relax_ir::DataType::INT32, after[i]);
            let s = te.add(shape[i], b);
            let s = te.add(s, a);
            simplify(&mut te.pool, s)
        })
        .collect();
    let dtype = te.dtype(x);
    te.compute(name, out, Axes::I, |te, idx| {
        let mut conds = Vec::new();
        let mut real = Vec::new();
        for i in 0..n {
            if before[i] == 0 && after[i] == 0 {
                real.push(idx[i]);
                continue;
            }
            let b = te.pool.int(relax_ir::DataType::INT32, before[i]);
            real.push(te.sub(idx[i], b));
            conds.push(te.bin(BinOp::Ge, idx[i], b));
            let hi = te.add(shape[i], b);
            conds.push(te.bin(BinOp::Lt, idx[i], hi));
        }
        let v = te.load(x, &real);
        if conds.is_empty() {
            return v;
        }
        let mut all = conds[0];
        for &c in &conds[1..] {
            all = te.bin(BinOp::And, all, c);
        }
        let pv = te.const_f(dtype, value);
        te.if_then_else(all, v, pv)
    })
}

/// `topi.one_hot`: `T_one_hot[...] = T.Select(indices[...] == i_axis, on, off)`.
fn one_hot(cx: &mut Cx) -> Option<Lowered> {
    let ind = cx.tensor(0)?;
    let on = cx.prim(1)?;
    let off = cx.prim(2)?;
    let depth = cx.attr_int("depth")?;
    let axis = cx.attr_int("axis").unwrap_or(-1);
    let te = &mut cx.te;
    let dtype = te.pool.dtype(on);
    let ishape = te.shape(ind);
    let ndim = ishape.len() + 1;
    let true_axis = if axis == -1 { ishape.len() } else { usize::try_from(axis).ok()? };
    if true_axis >= ndim {
        return None;
    }
    let mut out = Vec::new();
    let mut k = 0;
    for i in 0..ndim {
        if i == true_axis {
            out.push(te.pool.int(relax_ir::DataType::INT32, depth));
        } else {
            out.push(ishape[k]);
            k += 1;
        }
    }
    let on = te.cast(dtype, on);
    let off = te.cast(dtype, off);
    let t = te.compute("T_one_hot", out, Axes::Ax, |te, idx| {
        let pos: Vec<PrimExpr> = idx.iter().enumerate().filter(|&(i, _)| i != true_axis).map(|(_, &v)| v).collect();
        let v = te.load(ind, &pos);
        let c = te.bin(BinOp::Eq, v, idx[true_axis]);
        te.select(c, on, off)
    });
    Lowered::one("one_hot", t)
}

/// `topi.meshgrid`: one `T_meshgrid` stage per input.
fn meshgrid(cx: &mut Cx) -> Option<Lowered> {
    let fields = cx.tuple_fields(0)?;
    let mut inputs = Vec::new();
    for f in fields {
        inputs.push(cx.tensor_of(f)?);
    }
    let indexing = cx.attr("indexing").and_then(|v| v.as_str()).unwrap_or("ij").to_string();
    let te = &mut cx.te;
    let cart = indexing == "xy" && inputs.len() >= 2;
    let src = |i: usize| if cart && i < 2 { 1 - i } else { i };
    let mut out_shape = Vec::new();
    for i in 0..inputs.len() {
        let s = te.shape(inputs[src(i)]);
        out_shape.push(if s.is_empty() { te.pool.int(relax_ir::DataType::INT32, 1) } else { s[0] });
    }
    let mut outputs = Vec::new();
    for (i, &inp) in inputs.iter().enumerate() {
        let nd = te.ndim(inp);
        let t = te.compute("T_meshgrid", out_shape.clone(), Axes::Ax, |te, idx| {
            let real: Vec<PrimExpr> = if nd > 0 { vec![idx[src(i)]] } else { Vec::new() };
            te.load(inp, &real)
        });
        outputs.push(t);
    }
    Some(Lowered { name: "meshgrid".to_string(), outputs })
}
