//! Phase 3 of memory planning: the plan written into the function (`algorithms.md` §5.5).
//!
//! * Before the first allocation a storage serves:
//!   `storage = R.memory.alloc_storage(R.shape([bytes]), dev, R.str(scope), R.dtype(dtype))`,
//!   with the storage's final (grown) size.
//! * A storage merged at run time into an earlier one `s` gets instead
//!
//!   ```text
//!   if R.prim_value(bytes <= held):
//!       storage1: R.Object = s
//!   else:
//!       storage2: R.Object = R.memory.alloc_storage(R.shape([bytes]), ...)
//!       storage1: R.Object = storage2
//!   ```
//!
//!   where `held` is what `s` holds at that point (`T.max` of the sizes merged so far).
//! * Each planned `R.builtin.alloc_tensor` becomes
//!   `R.memory.alloc_tensor(storage, R.prim_value(0), shape, R.dtype(dtype), dev)`.
//! * With `relax.memory_plan_dynamic_func_output`, every other allocation of a dynamic
//!   shape gets a storage of its upper-bound size (the attribute is then removed).

use std::collections::{HashMap, HashSet};

use relax_ir::ops;
use relax_ir::{BinOp, Binding, Block, Expr, ExprData, PrimExpr, RelaxFunction, TensorShape, TyData, Var};

use super::allocate::{MergeKind, Plan, StorageId};
use super::bounds::{Bounds, upper_bound_dim};
use super::tokens::{ReqId, Unit};
use crate::emit::{self, NameSupply};
use relax_ir::Seq;

/// What phase 3 needs besides the plan.
pub struct Rewriter<'a> {
    /// The unit planned.
    pub unit: &'a Unit,
    /// Its plan.
    pub plan: &'a Plan,
    /// Names of new variables.
    pub names: &'a mut NameSupply,
    /// Plan unplanned dynamic allocations at their upper bound
    /// (`relax.memory_plan_dynamic_func_output`), with these bounds.
    pub dynamic_output: Option<&'a Bounds>,
}

struct State {
    by_var: HashMap<Var, ReqId>,
    chain_var: HashMap<StorageId, Var>,
    /// Blocks the requests of each chain root live in.
    root_blocks: HashMap<StorageId, HashSet<Block>>,
}

impl Rewriter<'_> {
    /// Rewrites the unit's sequences; `Err` on an inconsistent plan (an internal error).
    pub fn run(&mut self, f: &mut RelaxFunction) -> Result<(), String> {
        let Some(root) = self.unit.root else { return Ok(()) };
        let mut st = State { by_var: HashMap::new(), chain_var: HashMap::new(), root_blocks: HashMap::new() };
        for (r, req) in self.unit.requests.iter().enumerate() {
            if let Some(&s) = self.plan.assign.get(&r) {
                st.by_var.insert(req.var, r);
                st.root_blocks.entry(self.plan.root(s)).or_default().insert(req.block);
            }
        }
        self.seq(f, root, &mut st)
    }

    fn seq(&mut self, f: &mut RelaxFunction, loc: Seq, st: &mut State) -> Result<(), String> {
        let s = f.seq(loc).clone();
        for &b in &s.blocks {
            let bindings = std::mem::take(&mut f.blocks[b].bindings);
            let dataflow = f.blocks[b].dataflow;
            let mut out = Vec::with_capacity(bindings.len());
            for bd in bindings {
                if let ExprData::If { then_branch, else_branch, .. } = f.exprs[bd.value] {
                    let r = self.seq(f, then_branch, st).and_then(|()| self.seq(f, else_branch, st));
                    out.push(bd);
                    if r.is_err() {
                        f.blocks[b].bindings = out;
                        return r;
                    }
                    continue;
                }
                match self.binding(f, &bd, b, dataflow, st, &mut out) {
                    Ok(value) => out.push(Binding { value, ..bd }),
                    Err(e) => {
                        out.push(bd);
                        f.blocks[b].bindings = out;
                        return Err(e);
                    }
                }
            }
            f.blocks[b].bindings = out;
        }
        Ok(())
    }

    /// Emits what goes before the binding into `out` and returns its new value.
    fn binding(
        &mut self,
        f: &mut RelaxFunction,
        bd: &Binding,
        b: Block,
        dataflow: bool,
        st: &mut State,
        out: &mut Vec<Binding>,
    ) -> Result<Expr, String> {
        let missing = || "a storage is used before it is allocated".to_string();
        if let Some(&r) = st.by_var.get(&bd.var) {
            let s = *self.plan.assign.get(&r).ok_or_else(missing)?;
            let root = self.plan.root(s);
            let storage = &self.plan.storages[s];
            if storage.first == r {
                let local = dataflow && st.root_blocks.get(&root).is_some_and(|bs| bs.len() == 1 && bs.contains(&b));
                match &storage.merged {
                    None => {
                        let call = alloc_storage(f, bd.value, storage.bytes, &storage.scope, storage.dtype);
                        let var = self.emit_storage(f, call, local, out);
                        st.chain_var.insert(s, var);
                    }
                    Some(m) if m.kind == MergeKind::RunTime => {
                        let prev = *st.chain_var.get(&m.into).ok_or_else(missing)?;
                        let var = self.run_time_fit(f, bd.value, s, prev, m.held, out)?;
                        st.chain_var.insert(m.into, var);
                    }
                    Some(_) => {}
                }
            }
            let storage_var = *st.chain_var.get(&root).ok_or_else(missing)?;
            return Ok(alloc_tensor(f, bd.value, storage_var));
        }
        if let Some(bounds) = self.dynamic_output
            && let Some(bytes) = dynamic_bytes(f, bounds, bd.value)
        {
            let (scope, dtype) = scope_dtype(f, bd.value);
            let call = alloc_storage(f, bd.value, bytes, &scope, dtype);
            let var = self.emit_storage(f, call, false, out);
            return Ok(alloc_tensor(f, bd.value, var));
        }
        Ok(bd.value)
    }

    fn emit_storage(&mut self, f: &mut RelaxFunction, call: Expr, dataflow: bool, out: &mut Vec<Binding>) -> Var {
        let name = self.names.fresh("storage");
        let b = emit::bind(f, &name, call, dataflow);
        let var = b.var;
        out.push(b);
        var
    }

    /// `if bytes <= held: s = prev else: s = alloc_storage(bytes)`; returns `s`.
    fn run_time_fit(
        &mut self,
        f: &mut RelaxFunction,
        alloc: Expr,
        s: StorageId,
        prev: Var,
        held: PrimExpr,
        out: &mut Vec<Binding>,
    ) -> Result<Var, String> {
        let storage = &self.plan.storages[s];
        let name = self.names.fresh("storage");
        let fresh_name = self.names.fresh("storage");
        let cond_e = f.pool.binary(BinOp::Le, storage.bytes, held).map_err(|_| "storage sizes of different types")?;
        let cond = emit::prim(f, cond_e);
        let then_body = f.use_var(prev);
        let then_branch = f.add_seq(Vec::new(), then_body);
        let call = alloc_storage(f, alloc, storage.bytes, &storage.scope, storage.dtype);
        let fresh = emit::bind(f, &fresh_name, call, false);
        let fresh_var = fresh.var;
        let blk = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: vec![fresh] });
        let else_body = f.use_var(fresh_var);
        let else_branch = f.add_seq(vec![blk], else_body);
        let object = emit::object(f);
        let value = f.add_expr(ExprData::If { cond, then_branch, else_branch }, Some(object));
        let var = f.add_var(name, object, false);
        out.push(Binding { var, value, kind: relax_ir::BindingKind::Value });
        Ok(var)
    }
}

/// The scope and dtype of an `R.builtin.alloc_tensor` call.
fn scope_dtype(f: &RelaxFunction, alloc: Expr) -> (String, relax_ir::DataType) {
    let ExprData::Call(call) = &f.exprs[alloc] else { return ("global".into(), relax_ir::DataType::VOID) };
    let scope = match f.list(call.args).get(3).map(|&a| &f.exprs[a]) {
        Some(ExprData::Str(s)) => s.clone(),
        _ => "global".to_string(),
    };
    let dtype = match f.list(call.args).get(1).map(|&a| &f.exprs[a]) {
        Some(ExprData::DType(t)) => *t,
        _ => relax_ir::DataType::VOID,
    };
    (scope, dtype)
}

/// A copy of the device-index argument of an `R.builtin.alloc_tensor` call.
fn device_arg(f: &mut RelaxFunction, alloc: Expr) -> Expr {
    let arg = match &f.exprs[alloc] {
        ExprData::Call(call) => f.list(call.args).get(2).copied(),
        _ => None,
    };
    match arg {
        Some(a) => {
            let data = f.exprs[a].clone();
            let ty = f.ty_of(a);
            f.add_expr(data, ty)
        }
        None => emit::prim_i64(f, 0),
    }
}

/// `R.memory.alloc_storage(R.shape([bytes]), dev, R.str(scope), R.dtype(dtype))`, with the
/// device of the allocation `alloc`.
pub fn alloc_storage(
    f: &mut RelaxFunction,
    alloc: Expr,
    bytes: PrimExpr,
    scope: &str,
    dtype: relax_ir::DataType,
) -> Expr {
    let size = emit::shape(f, vec![bytes]);
    let dev = device_arg(f, alloc);
    let scope = emit::str_lit(f, scope);
    let dt = emit::dtype(f, dtype);
    let object = emit::object(f);
    emit::call_op(f, ops::MEMORY_ALLOC_STORAGE, vec![size, dev, scope, dt], Vec::new(), object)
}

/// `R.memory.alloc_tensor(storage, R.prim_value(0), shape, R.dtype(dtype), dev)` for the
/// `R.builtin.alloc_tensor` call `alloc` (typed as it).
pub fn alloc_tensor(f: &mut RelaxFunction, alloc: Expr, storage: Var) -> Expr {
    let ty = f.ty_of(alloc).unwrap_or_else(|| emit::object(f));
    let (shape, dtype) = match f.pool.ty(ty).clone() {
        TyData::Tensor { shape: TensorShape::Dims(d), dtype, .. } => (Some(d), dtype),
        TyData::Tensor { dtype, .. } => (None, dtype),
        _ => (None, relax_ir::DataType::VOID),
    };
    let shape_arg = match shape {
        Some(d) => emit::shape(f, d),
        None => match &f.exprs[alloc] {
            ExprData::Call(call) if !call.args.is_empty() => {
                let a = f.list(call.args)[0];
                let data = f.exprs[a].clone();
                let t = f.ty_of(a);
                f.add_expr(data, t)
            }
            _ => emit::shape(f, Vec::new()),
        },
    };
    let s = f.use_var(storage);
    let offset = emit::prim_i64(f, 0);
    let dt = emit::dtype(f, dtype);
    let dev = device_arg(f, alloc);
    emit::call_op(f, ops::MEMORY_ALLOC_TENSOR, vec![s, offset, shape_arg, dt, dev], Vec::new(), ty)
}

/// For an `R.builtin.alloc_tensor` of a dynamic shape: the bytes of its upper-bound
/// shape, `ub0 * ub1 * ... * elem_bytes` (TVM's order).
fn dynamic_bytes(f: &mut RelaxFunction, bounds: &Bounds, value: Expr) -> Option<PrimExpr> {
    if f.called_op(value) != Some(ops::BUILTIN_ALLOC_TENSOR) {
        return None;
    }
    let ty = f.ty_of(value)?;
    let TyData::Tensor { shape: TensorShape::Dims(dims), dtype, .. } = f.pool.ty(ty).clone() else { return None };
    if dims.iter().all(|&d| f.pool.as_int(d).is_some()) || dims.is_empty() || dtype.is_void() {
        return None;
    }
    let an = bounds.analyzer();
    let ub: Vec<PrimExpr> = dims.iter().map(|&d| upper_bound_dim(f, &an, bounds, d)).collect();
    let mut bytes = ub[0];
    for &d in &ub[1..] {
        bytes = f.pool.binary(BinOp::Mul, bytes, d).ok()?;
    }
    let eb = f.pool.i64(dtype.bytes() as i64);
    f.pool.binary(BinOp::Mul, bytes, eb).ok()
}
