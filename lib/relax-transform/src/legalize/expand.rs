//! Ops that TVM legalizes into other Relax expressions rather than a PrimFunc.
//!
//! * `grad.no_grad`, `grad.start_checkpoint`, `grad.end_checkpoint`
//!   (`legalize_ops/grad.py`): their argument (`y = x`).
//! * `size` (`legalize_ops/inspect_op.py`): `prod(shape_to_tensor(shape_of(x)))`, which
//!   TVM's block builder binds and legalizes in turn:
//!
//! ```text
//! lv: R.Shape([n, 3]) = R.shape_of(x)
//! lv1: R.Tensor((2,), dtype="int64") = R.call_pure_packed(ops::RUN_SHAPE_TO_TENSOR, lv, sinfo_args=...)
//! s = R.call_tir(cls.prod, (lv1,), out_sinfo=R.Tensor((), dtype="int64"))
//! ```
//!
//!   [`expand`] inserts the two bindings before the call's binding (named `lv`, `lv1`,
//!   ... in a dataflow block and `gv`, `gv1`, ... outside, from the pass's name supply,
//!   as TVM's `BlockBuilder` names emitted values), makes the second one the packed
//!   call, and turns the call itself into `R.prod(lv1)`, which the caller then legalizes
//!   as any other call.

use std::collections::HashMap;

use relax_ir::op::{OpId, OpRef, ops};
use relax_ir::{
    AttrValue, Attrs, Binding, BindingKind, Call, DataType, Expr, ExprData, RelaxFunction, TensorShape, TyData,
};

use super::rewrite;
use super::te::emit::fresh_name;

/// The block and position of the binding whose value is `value`.
fn binding_of(f: &RelaxFunction, value: Expr) -> Option<(relax_ir::Block, usize)> {
    f.blocks.iter().find_map(|(b, bd)| bd.bindings.iter().position(|x| x.value == value).map(|i| (b, i)))
}

/// The ops [`expand`] rewrites.
pub const EXPANDED: &[OpId] = &[ops::SIZE, ops::GRAD_NO_GRAD, ops::GRAD_START_CHECKPOINT, ops::GRAD_END_CHECKPOINT];

/// Rewrites the call at `value` of one of the [`EXPANDED`] ops (see the module
/// documentation); `names` is the pass's name supply. Returns false, changing nothing,
/// when the call is not one of them or cannot be rewritten.
pub fn expand(f: &mut RelaxFunction, value: Expr, names: &mut HashMap<String, i64>) -> bool {
    let ExprData::Call(call) = &f.exprs[value] else { return false };
    let ExprData::Op(op) = &f.exprs[call.callee] else { return false };
    match op.id() {
        Some(ops::SIZE) => size(f, value, names),
        Some(ops::GRAD_NO_GRAD) | Some(ops::GRAD_START_CHECKPOINT) | Some(ops::GRAD_END_CHECKPOINT) => {
            identity(f, value)
        }
        _ => false,
    }
}

/// The call's value becomes its argument (a variable or constant).
fn identity(f: &mut RelaxFunction, value: Expr) -> bool {
    let ExprData::Call(call) = &f.exprs[value] else { return false };
    let &[x] = f.list(call.args) else { return false };
    let data = f.exprs[x].clone();
    if !matches!(data, ExprData::Var(_) | ExprData::Const(_)) {
        return false;
    }
    let ty = f.ty_of(x);
    f.exprs[value] = data;
    f.expr_ty.set(value, ty);
    true
}

/// `R.size(x)`.
fn size(f: &mut RelaxFunction, value: Expr, names: &mut HashMap<String, i64>) -> bool {
    let ExprData::Call(call) = &f.exprs[value] else { return false };
    let &[x] = f.list(call.args) else { return false };
    let Some(TyData::Tensor { shape: TensorShape::Dims(dims), .. }) = f.ty_of(x).map(|t| f.pool.ty(t).clone()) else {
        return false;
    };
    let Some((block, at)) = binding_of(f, value) else { return false };
    // A fresh use of the argument (every use is its own node).
    let x_use = match f.exprs[x].clone() {
        d @ (ExprData::Var(_) | ExprData::Const(_)) => {
            let t = f.ty_of(x);
            f.add_expr(d, t)
        }
        _ => return false,
    };
    let dataflow = f.blocks[block].dataflow;
    let prefix = if dataflow { "lv" } else { "gv" };
    let (shape_of, to_tensor, prod) = (ops::SHAPE_OF, ops::SHAPE_TO_TENSOR, ops::PROD);
    let op = |f: &mut RelaxFunction, id| f.add_expr(ExprData::Op(OpRef::Known(id)), None);

    let shape_ty = f.pool.intern_ty(TyData::shape(dims.clone()));
    let callee = op(f, shape_of);
    let v1_value = f.add_call(callee, [x_use], Attrs::new(), Vec::new(), Some(shape_ty));
    let v1 = f.add_var(fresh_name(names, prefix, false), shape_ty, dataflow);

    let len = f.pool.i64(dims.len() as i64);
    let vec_ty = f.pool.intern_ty(TyData::tensor(vec![len], DataType::INT64));
    let v1_use = f.use_var(v1);
    let callee = op(f, to_tensor);
    let v2_value = f.add_call(callee, [v1_use], Attrs::new(), Vec::new(), Some(vec_ty));
    rewrite::packed(f, v2_value, "relax.run.shape_to_tensor", true);
    let v2 = f.add_var(fresh_name(names, prefix, false), vec_ty, dataflow);

    let v2_use = f.use_var(v2);
    let callee = op(f, prod);
    let attrs = Attrs(vec![("axis".to_string(), AttrValue::None), ("keepdims".to_string(), AttrValue::Bool(false))]);
    let args = f.new_list([v2_use]);
    f.exprs[value] = ExprData::Call(Call { callee, args, attrs, sinfo_args: Vec::new() });
    let bindings = &mut f.blocks[block].bindings;
    bindings.insert(at, Binding { var: v2, value: v2_value, kind: BindingKind::Value });
    bindings.insert(at, Binding { var: v1, value: v1_value, kind: BindingKind::Value });
    true
}
