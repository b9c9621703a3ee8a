//! `IndexDataTypeNormalizer(int64)`, which `te.create_prim_func(..., "int64")` applies
//! last: integer expressions in index positions (buffer indices, loop ranges, block
//! bindings, buffer shapes) and in integer comparisons inside conditions (`T.Select`
//! and `T.if_then_else` conditions) are widened to `int64`.
//!
//! The builder makes every index, range and shape `int64` from the start, so what is
//! left to do is the condition rule: in `T.Select(0 <= x, ...)` over an `int32` `x`, the
//! constant becomes `T.int64(0)` and the comparison casts the other side,
//! `T.int64(0) <= T.Cast("int64", x)`. An `int32`-or-wider `T.Cast` in such a position is
//! unwrapped and redone to `int64`. Operators whose operands change are rebuilt with
//! TVM's folding constructors (which match the operand types).

use relax_ir::Intrinsic;
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::{DataType, Pool, PrimExpr};

/// Normalizes a stored value.
pub fn normalize(pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    norm(pool, e, false, false)
}

/// Normalizes an expression in an index position (shapes, ranges): every integer
/// constant and cast of 32 bits or more becomes `int64`.
pub fn normalize_index(pool: &mut Pool, e: PrimExpr) -> PrimExpr {
    norm(pool, e, false, true)
}

fn rewritable(t: DataType) -> bool {
    t.is_signed_int() && t.bits >= 32 && t.lanes <= 1
}

fn rebuild(pool: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    pool.binary(op, a, b).unwrap_or_else(|_| pool.raw(PrimExprData::Bin(op, a, b)))
}

fn norm(pool: &mut Pool, e: PrimExpr, cond: bool, enabled: bool) -> PrimExpr {
    let data = pool.prim(e).clone();
    match data {
        PrimExprData::Int(t, v) if enabled && rewritable(t) => pool.int(DataType::INT64, v),
        PrimExprData::Cast(t, v) => {
            if enabled && rewritable(t) {
                let nv = norm(pool, v, cond, enabled);
                if pool.dtype(nv) == DataType::INT64 { nv } else { pool.raw(PrimExprData::Cast(DataType::INT64, nv)) }
            } else {
                let nv = norm(pool, v, cond, enabled);
                if nv == v { e } else { pool.cast(t, nv) }
            }
        }
        PrimExprData::Bin(op, a, b) => {
            let en = if op.is_compare() {
                cond && pool.dtype(a).is_signed_int() && pool.dtype(b).is_signed_int()
            } else {
                enabled
            };
            let (na, nb) = (norm(pool, a, cond, en), norm(pool, b, cond, en));
            if (na, nb) == (a, b) && pool.dtype(na) == pool.dtype(nb) { e } else { rebuild(pool, op, na, nb) }
        }
        PrimExprData::Not(a) => {
            let na = norm(pool, a, cond, enabled);
            if na == a { e } else { pool.not(na) }
        }
        PrimExprData::Select(c, t, f) => {
            let nc = norm(pool, c, true, enabled);
            let (nt, nf) = (norm(pool, t, cond, enabled), norm(pool, f, cond, enabled));
            if (nc, nt, nf) == (c, t, f) && pool.dtype(nt) == pool.dtype(nf) {
                return e;
            }
            let (tt, tf) = (pool.dtype(nt), pool.dtype(nf));
            let bits = tt.bits.max(tf.bits);
            let target = DataType { bits, ..tt };
            let nt = if tt == target { nt } else { pool.cast(target, nt) };
            let nf = if tf == target { nf } else { pool.cast(target, nf) };
            pool.raw(PrimExprData::Select(nc, nt, nf))
        }
        PrimExprData::Call { dtype, op, args } => {
            let new: Vec<PrimExpr> = args
                .iter()
                .enumerate()
                .map(|(i, &a)| {
                    let c = if op.is(Intrinsic::IfThenElse) && i == 0 { true } else { cond };
                    norm(pool, a, c, enabled)
                })
                .collect();
            if new == args { e } else { pool.raw(PrimExprData::Call { dtype, op, args: new }) }
        }
        PrimExprData::Load { dtype, buffer, indices } => {
            let new: Vec<PrimExpr> = indices.iter().map(|&i| norm(pool, i, cond, true)).collect();
            if new == indices { e } else { pool.raw(PrimExprData::Load { dtype, buffer, indices: new }) }
        }
        _ => e,
    }
}
