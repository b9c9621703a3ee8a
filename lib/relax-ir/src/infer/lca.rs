//! The join of two types (`algorithms.md` §9.5), used for the result of `if`: the most
//! precise type both are subtypes of, as far as the arithmetic can tell.

use crate::arith::Analyzer;
use crate::entities::{PrimExpr, Ty};
use crate::pool::Pool;
use crate::ty::{TensorShape, TyData};

/// The least common ancestor of two types of `pool`.
pub fn lca(pool: &mut Pool, a: Ty, b: Ty, an: &Analyzer) -> Ty {
    if a == b {
        return a;
    }
    let (da, db) = (pool.ty(a).clone(), pool.ty(b).clone());
    let object = |pool: &mut Pool| pool.intern_ty(TyData::Object);
    match (da, db) {
        (TyData::Object, _) => a,
        (TyData::Prim { dtype, value }, TyData::Prim { dtype: d2, value: v2 }) => {
            if dtype != d2 {
                return object(pool);
            }
            match (value, v2) {
                (Some(x), Some(y)) if an.prove_equal(pool, x, y) => a,
                (None, _) => a,
                _ => pool.intern_ty(TyData::Prim { dtype, value: None }),
            }
        }
        (TyData::Shape { values, ndim }, TyData::Shape { values: v2, ndim: n2 }) => {
            let nd = if ndim == n2 { ndim } else { -1 };
            let same = ndim == n2
                && match (&values, &v2) {
                    (Some(x), Some(y)) => dims_equal(pool, an, x, y),
                    _ => false,
                };
            if same || (values.is_none() && ndim == nd) {
                a
            } else {
                pool.intern_ty(TyData::Shape { values: None, ndim: nd })
            }
        }
        (
            TyData::Tensor { shape, dtype, ndim, vdevice },
            TyData::Tensor { shape: s2, dtype: t2, ndim: n2, vdevice: vd2 },
        ) => {
            let dt = if !dtype.is_void() && dtype == t2 { dtype } else { crate::dtype::DataType::VOID };
            let nd = if ndim == n2 { ndim } else { -1 };
            let vd = if vdevice.is_some() && vdevice == vd2 { vdevice.clone() } else { None };
            let same_shape = ndim == n2
                && match (&shape, &s2) {
                    (TensorShape::Dims(x), TensorShape::Dims(y)) => dims_equal(pool, an, x, y),
                    (TensorShape::Var(x), TensorShape::Var(y)) => x == y,
                    _ => false,
                };
            if !same_shape {
                if matches!(shape, TensorShape::Unknown)
                    && dtype == dt
                    && ndim == nd
                    && (vdevice.is_none() || vd.is_some())
                {
                    return a;
                }
                return pool.intern_ty(TyData::Tensor {
                    shape: TensorShape::Unknown,
                    dtype: dt,
                    ndim: nd,
                    vdevice: vd,
                });
            }
            if dtype != dt || (vdevice.is_some() && vd.is_none()) {
                pool.intern_ty(TyData::Tensor { shape, dtype: dt, ndim: nd, vdevice: vd })
            } else {
                a
            }
        }
        (TyData::Tuple(fa), TyData::Tuple(fb)) => {
            if fa.len() != fb.len() {
                return object(pool);
            }
            let fields: Vec<Ty> = fa.iter().zip(&fb).map(|(&x, &y)| lca(pool, x, y, an)).collect();
            if fields == fa { a } else { pool.intern_ty(TyData::Tuple(fields)) }
        }
        (TyData::Callable { params, ret, pure }, TyData::Callable { params: p2, ret: r2, pure: pure2 }) => {
            let purity = pure && pure2;
            let r = lca(pool, ret, r2, an);
            match (params, p2) {
                (Some(pa), Some(pb)) if pa.len() == pb.len() => {
                    let ps: Vec<Ty> = pa.iter().zip(&pb).map(|(&x, &y)| lca(pool, x, y, an)).collect();
                    if ps == pa && r == ret && purity == pure {
                        a
                    } else {
                        pool.intern_ty(TyData::Callable { params: Some(ps), ret: r, pure: purity })
                    }
                }
                (None, _) if r == ret && purity == pure => a,
                _ => pool.intern_ty(TyData::Callable { params: None, ret: r, pure: purity }),
            }
        }
        _ => object(pool),
    }
}

fn dims_equal(pool: &Pool, an: &Analyzer, a: &[PrimExpr], b: &[PrimExpr]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| an.prove_equal(pool, x, y))
}
