//! What TVM's Python op constructors compute before inference sees a call, for text
//! written by hand: `R.reshape` resolves `-1` and `0` in a literal shape from the input's
//! shape (C++ `ConvertNewShapeToExpr`), and `R.arange` without a dtype picks `int64`
//! when every bound is an integer, else `float32`. TVM prints the resolved forms, so the
//! parser applies these to the call before typing it.

use crate::arith::Analyzer;
use crate::attrs::{AttrValue, Attrs};
use crate::dtype::DataType;
use crate::entities::{Expr, PrimExpr};
use crate::op::{OpId, ops};
use crate::prim::BinOp;
use crate::relax::{ExprData, RelaxFunction};
use crate::ty::TyData;

use super::simplify::{bin, simplify};

/// Rewrites the arguments and attributes of a call of `op` as TVM's Python constructor
/// would have built them. Does nothing for other ops, or when the information needed is
/// missing (TVM would then reject the call).
pub fn apply_python_conveniences(f: &mut RelaxFunction, op: OpId, args: &mut [Expr], attrs: &mut Attrs) {
    match op {
        ops::RESHAPE => reshape(f, args),
        ops::ARANGE => arange(f, args, attrs),
        _ => {}
    }
}

fn reshape(f: &mut RelaxFunction, args: &mut [Expr]) {
    let [x, shape] = args else { return };
    let ExprData::Shape(dims) = f.exprs[*shape].clone() else { return };
    let special: Vec<Option<i64>> = dims.iter().map(|&d| f.pool.as_int(d).filter(|&v| v == 0 || v == -1)).collect();
    if special.iter().all(Option::is_none) || special.iter().filter(|s| **s == Some(-1)).count() > 1 {
        return;
    }
    let Some(old) = f.ty_of(*x).and_then(|t| match f.pool.ty(t) {
        TyData::Tensor { .. } => f.pool.ty(t).dims().map(<[PrimExpr]>::to_vec),
        _ => None,
    }) else {
        return;
    };
    let mut new = dims.clone();
    for (i, s) in special.iter().enumerate() {
        if *s == Some(0) {
            let Some(&d) = old.get(i) else { return };
            new[i] = d;
        }
    }
    if let Some(at) = special.iter().position(|s| *s == Some(-1)) {
        let mut known = f.pool.i64(1);
        for (i, &d) in new.iter().enumerate() {
            if i != at {
                known = bin(&mut f.pool, BinOp::Mul, known, d);
            }
        }
        let mut total = f.pool.i64(1);
        for &d in &old {
            total = bin(&mut f.pool, BinOp::Mul, total, d);
        }
        let q = bin(&mut f.pool, BinOp::FloorDiv, total, known);
        new[at] = simplify(&Analyzer::new(), &mut f.pool, q);
    }
    let ty = f.pool.intern_ty(TyData::shape(new.clone()));
    let span = *f.spans.exprs.get(*shape);
    let e = f.add_expr(ExprData::Shape(new), Some(ty));
    f.spans.exprs.set(e, span);
    *shape = e;
}

fn arange(f: &mut RelaxFunction, args: &[Expr], attrs: &mut Attrs) {
    let void = match attrs.get("dtype") {
        None | Some(AttrValue::None) => true,
        Some(AttrValue::Str(s)) => s == "void",
        _ => false,
    };
    if !void {
        return;
    }
    let is_int = |e: Expr| match &f.exprs[e] {
        ExprData::Prim(p) => f.pool.dtype(*p).is_signed_int(),
        _ => false,
    };
    let dtype = if args.iter().all(|&a| is_int(a)) { DataType::INT64 } else { DataType::FLOAT32 };
    attrs.set("dtype", AttrValue::Str(dtype.to_string()));
}
