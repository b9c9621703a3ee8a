//! `layout_transform` (`legalize_ops/manipulate.py`, `_layout_transform`).
//!
//! TVM builds a pass-through compute (`te.compute(x.shape, x)`) and applies
//! `sch.transform_layout` with the op's index map to its output:
//!
//! * a map that covers the output exactly (a transpose, a split whose factor divides the
//!   dim, a fusion) gives `te_layout_transform`: loops over the *input* shape (named
//!   `self, i0, i1, ...`, after the parameters of `Tensor.__call__`), each element stored
//!   at the mapped indices;
//! * a map that leaves padding (`j // 3, j % 3` of a dim of 5) gives
//!   `te_layout_transform_with_pad`: loops over the output shape (`axis0, axis1, ...`),
//!   each element read at the inverse-mapped indices, or `pad_value` (default zero)
//!   where the inverse falls outside the input. The inverse is found for maps whose
//!   outputs are parameters and `p // c`, `p % c` pairs; the padding predicate is the
//!   one `non_surjective_inverse` simplifies to: for each split whose factor does not
//!   divide the dim, the last quotient and a remainder at or past `dim % factor`
//!   (`v_axis1 == 1 and v_axis2 == 2`).
//!
//! The index map is the text kept by the parser (`T.index_map(lambda i, j: ...)`), read
//! by [`relax_ir::infer::index_map`]. `axis_separators` other than none are not
//! legalized (they only matter to flattened buffers).

use relax_ir::infer::index_map::{self, Ix};
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;
use relax_ir::{AttrValue, DataType, PrimExpr, TensorShape, TyData};

use super::cx::Cx;
use super::te::{Axes, Te};
use super::{Legalize, Lowered};

/// The legalization of `layout_transform` (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::LAYOUT_TRANSFORM => layout_transform,
        _ => return None,
    })
}

/// An index expression over `vars`.
fn expr(te: &mut Te, ix: &Ix, vars: &[PrimExpr]) -> Option<PrimExpr> {
    Some(match ix {
        Ix::Param(i) => *vars.get(*i)?,
        Ix::Const(c) => te.i64(*c),
        Ix::Bin(op, a, b) => {
            let (a, b) = (expr(te, a, vars)?, expr(te, b, vars)?);
            match op {
                '+' => te.add(a, b),
                '-' => te.sub(a, b),
                '*' => te.mul(a, b),
                '/' => te.floordiv(a, b),
                '%' => te.floormod(a, b),
                _ => return None,
            }
        }
    })
}

/// The value of `pad_value` (`R.prim_value(T.float32(1.5))`), or zero.
fn pad_value(te: &mut Te, v: Option<&AttrValue>, dtype: DataType) -> Option<PrimExpr> {
    let text = match v {
        None | Some(AttrValue::None) => return Some(te.const_i(dtype, 0)),
        Some(AttrValue::Text(t)) => t.as_str(),
        Some(AttrValue::Int(i)) => return Some(te.const_i(dtype, *i)),
        Some(AttrValue::Float(f)) => return Some(te.const_f(dtype, f.get())),
        Some(_) => return None,
    };
    // `R.prim_value(T.float32(1.5))`, `R.prim_value(2)`.
    let inner = text.trim().strip_prefix("R.prim_value(")?.strip_suffix(')')?.trim();
    let num = match inner.split_once('(') {
        Some((_, rest)) => rest.strip_suffix(')')?,
        None => inner,
    };
    if let Ok(i) = num.parse::<i64>() {
        return Some(te.const_i(dtype, i));
    }
    let f: f64 = num.parse().ok()?;
    Some(if dtype.is_float() { te.const_f(dtype, f) } else { te.const_i(dtype, f as i64) })
}

/// How one input index is recovered from the output indices: `(output, None)` for a
/// bare parameter, `(quotient output, Some((remainder output, factor)))` for a split.
type Source = (usize, Option<(usize, i64)>);

/// The [`Source`] of every input index.
fn inverse(map: &index_map::IndexMap) -> Option<Vec<Source>> {
    let mut inv: Vec<Option<Source>> = vec![None; map.params.len()];
    let mut quot: Vec<Option<(usize, i64)>> = vec![None; map.params.len()];
    let mut rem: Vec<Option<(usize, i64)>> = vec![None; map.params.len()];
    for (k, o) in map.outputs.iter().enumerate() {
        match o {
            Ix::Param(i) if inv[*i].is_none() => inv[*i] = Some((k, None)),
            Ix::Bin('/', a, b) => match (&**a, &**b) {
                (Ix::Param(i), Ix::Const(c)) if *c > 0 && quot[*i].is_none() => quot[*i] = Some((k, *c)),
                _ => return None,
            },
            Ix::Bin('%', a, b) => match (&**a, &**b) {
                (Ix::Param(i), Ix::Const(c)) if *c > 0 && rem[*i].is_none() => rem[*i] = Some((k, *c)),
                _ => return None,
            },
            _ => return None,
        }
    }
    (0..map.params.len())
        .map(|i| match (inv[i], quot[i], rem[i]) {
            (Some(x), None, None) => Some(x),
            (None, Some((q, c)), Some((r, c2))) if c == c2 => Some((q, Some((r, c)))),
            _ => None,
        })
        .collect()
}

fn layout_transform(cx: &mut Cx) -> Option<Lowered> {
    if cx.attr_ints("axis_separators").is_some_and(|v| !v.is_empty())
        || cx.attr_ints("input_axis_separators").is_some_and(|v| !v.is_empty())
    {
        return None;
    }
    let Some(AttrValue::Text(text)) = cx.attr("index_map") else { return None };
    let map = index_map::parse(text)?;
    let TyData::Tensor { shape: TensorShape::Dims(out_dims), .. } = cx.out() else { return None };
    let out_dims = out_dims.clone();
    let pad_attr = cx.attr("pad_value");
    let x = cx.tensor(0)?;
    let out_shape: Vec<PrimExpr> = out_dims.iter().map(|&d| cx.import(d)).collect();
    let te = &mut cx.te;
    let in_shape = te.shape(x);
    if map.params.len() != in_shape.len() || map.outputs.len() != out_shape.len() {
        return None;
    }
    let consts = |te: &Te, s: &[PrimExpr]| -> Option<Vec<i64>> { s.iter().map(|&d| te.pool.as_int(d)).collect() };
    let padded = match (consts(te, &in_shape), consts(te, &out_shape)) {
        (Some(a), Some(b)) => a.iter().product::<i64>() != b.iter().product::<i64>(),
        // Symbolic dims: only bare parameters have known extents, a permutation.
        _ => false,
    };
    let dtype = te.dtype(x);
    if !padded {
        let names: Vec<String> =
            std::iter::once("self".to_string()).chain((1..in_shape.len()).map(|i| format!("i{}", i - 1))).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut ok = true;
        let t = te.compute_mapped("te_layout_transform", in_shape, Axes::Named(&names), out_shape, |te, idx| {
            let store: Vec<PrimExpr> = map
                .outputs
                .iter()
                .map(|o| {
                    expr(te, o, idx).unwrap_or_else(|| {
                        ok = false;
                        idx[0]
                    })
                })
                .collect();
            (store, te.load(x, idx))
        });
        return ok.then(|| Lowered::one("te_layout_transform", t))?;
    }
    let inv = inverse(&map)?;
    let value = pad_value(te, pad_attr, dtype)?;
    let names: Vec<String> = (0..out_shape.len()).map(|i| format!("axis{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    // The padding: the last quotient with a remainder at or past `extent % factor`,
    // terms ordered by the quotient's output position, as TVM's simplified predicate.
    let mut pads: Vec<(usize, usize, i64, i64)> = Vec::new();
    for (i, &(k, split)) in inv.iter().enumerate() {
        if let Some((r, c)) = split {
            let e = te.pool.as_int(in_shape[i])?;
            if e % c != 0 {
                pads.push((k, r, (e + c - 1) / c - 1, e % c));
            }
        }
    }
    pads.sort_unstable();
    let t = te.compute("te_layout_transform_with_pad", out_shape, Axes::Named(&names), |te, idx| {
        let mut read = Vec::new();
        for &(k, split) in &inv {
            read.push(match split {
                None => idx[k],
                Some((r, c)) => {
                    let c = te.i64(c);
                    let q = te.mul(idx[k], c);
                    te.add(q, idx[r])
                }
            });
        }
        let v = te.load(x, &read);
        let mut cond: Option<PrimExpr> = None;
        for &(k, r, last, rem) in &pads {
            let c = te.i64(last);
            let on_last = te.bin(BinOp::Eq, idx[k], c);
            let factor = match inv.iter().find_map(|&(kk, s)| s.filter(|_| kk == k)) {
                Some((_, f)) => f,
                None => continue,
            };
            let rc = te.i64(rem);
            let past = if rem == factor - 1 { te.bin(BinOp::Eq, idx[r], rc) } else { te.bin(BinOp::Le, rc, idx[r]) };
            let term = te.bin(BinOp::And, on_last, past);
            cond = Some(match cond {
                Some(a) => te.bin(BinOp::Or, a, term),
                None => term,
            });
        }
        match cond {
            Some(c) => te.if_then_else(c, value, v),
            None => v,
        }
    });
    Lowered::one("te_layout_transform_with_pad", t)
}
