//! Building Relax expressions inside passes: typed leaves, op calls, bindings and the
//! fresh names TVM's `BlockBuilder` would give them.
//!
//! The memory passes (`call-tir-rewrite`, `plan-memory`, `lower-alloc-tensor`,
//! `kill-after-last-use`) emit many small bindings; these helpers build each expression
//! with the type TVM gives it, so the printed text matches TVM's.

use std::collections::{HashMap, HashSet};

use relax_ir::op::{OpId, OpRef};
use relax_ir::{Attrs, Binding, BindingKind, DataType, Expr, ExprData, PrimExpr, RelaxFunction, Ty, TyData, Var};

/// An expression naming the op `id` (`ops::MEMORY_ALLOC_STORAGE`), used as a callee.
pub fn op(f: &mut RelaxFunction, id: OpId) -> Expr {
    f.add_expr(ExprData::Op(OpRef::Known(id)), None)
}

/// A call of the op `id` with positional `args`, typed `ty`.
pub fn call_op(f: &mut RelaxFunction, id: OpId, args: Vec<Expr>, sinfo_args: Vec<Ty>, ty: Ty) -> Expr {
    let callee = op(f, id);
    f.add_call(callee, args, Attrs::new(), sinfo_args, Some(ty))
}

/// `R.shape([dims...])`.
pub fn shape(f: &mut RelaxFunction, dims: Vec<PrimExpr>) -> Expr {
    let ty = f.pool.intern_ty(TyData::shape(dims.clone()));
    f.add_expr(ExprData::Shape(dims), Some(ty))
}

/// `R.prim_value(e)`.
pub fn prim(f: &mut RelaxFunction, e: PrimExpr) -> Expr {
    let dtype = f.pool.dtype(e);
    let ty = f.pool.intern_ty(TyData::Prim { dtype, value: Some(e) });
    f.add_expr(ExprData::Prim(e), Some(ty))
}

/// `R.prim_value(v)` of an int64 constant.
pub fn prim_i64(f: &mut RelaxFunction, v: i64) -> Expr {
    let e = f.pool.i64(v);
    prim(f, e)
}

/// `R.str("...")`.
pub fn str_lit(f: &mut RelaxFunction, s: &str) -> Expr {
    let ty = object(f);
    f.add_expr(ExprData::Str(s.to_string()), Some(ty))
}

/// `R.dtype("...")`.
pub fn dtype(f: &mut RelaxFunction, t: DataType) -> Expr {
    let ty = object(f);
    f.add_expr(ExprData::DType(t), Some(ty))
}

/// The type `R.Object`.
pub fn object(f: &mut RelaxFunction) -> Ty {
    f.pool.intern_ty(TyData::Object)
}

/// The empty tuple type (effects).
pub fn void(f: &mut RelaxFunction) -> Ty {
    f.pool.intern_ty(TyData::void())
}

/// A plain binding of `value` to a new variable named `name`, typed as `value`.
pub fn bind(f: &mut RelaxFunction, name: &str, value: Expr, dataflow: bool) -> Binding {
    let ty = f.ty_of(value).unwrap_or_else(|| object(f));
    let var = f.add_var(name, ty, dataflow);
    Binding { var, value, kind: BindingKind::Value }
}

/// An effect statement: `value` bound to `_` (printed as an expression statement when the
/// value is void).
pub fn effect(f: &mut RelaxFunction, value: Expr, dataflow: bool) -> Binding {
    bind(f, "_", value, dataflow)
}

/// A use of `v`.
pub fn use_var(f: &mut RelaxFunction, v: Var) -> Expr {
    f.use_var(v)
}

/// Fresh names as TVM's `BlockBuilder` hands them out within one pass: the first request
/// for a hint gets the hint itself, later ones `hint1`, `hint2`, ... (the printer then
/// resolves clashes with names the function already has, as TVM's printer does).
#[derive(Clone, Debug, Default)]
pub struct NameSupply {
    next: HashMap<String, u32>,
    taken: HashSet<String>,
}

impl NameSupply {
    /// An empty supply.
    pub fn new() -> NameSupply {
        NameSupply::default()
    }
    /// A fresh name for `hint`.
    pub fn fresh(&mut self, hint: &str) -> String {
        if self.taken.insert(hint.to_string()) {
            self.next.insert(hint.to_string(), 0);
            return hint.to_string();
        }
        loop {
            let k = self.next.entry(hint.to_string()).or_insert(0);
            *k += 1;
            let name = format!("{hint}{k}");
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NameSupply;

    #[test]
    fn names_follow_the_block_builder() {
        let mut s = NameSupply::new();
        assert_eq!(s.fresh("alloc"), "alloc");
        assert_eq!(s.fresh("alloc"), "alloc1");
        assert_eq!(s.fresh("storage"), "storage");
        assert_eq!(s.fresh("alloc"), "alloc2");
        assert_eq!(s.fresh("alloc1"), "alloc11");
    }
}
