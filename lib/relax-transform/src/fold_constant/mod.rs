//! `fold-constant` (TVM's `FoldConstant`): evaluates kernel calls whose inputs are all
//! constants, in every Relax function, and replaces them by their results.
//!
//! In program order, for every binding:
//! * uses of variables bound to a constant become uses of the constant (anywhere in the
//!   function, as TVM's `LookupBinding` does);
//! * `R.call_tir(f, (constants...), out_sinfo=...)` with static output shapes and known
//!   dtypes is run by the [`ConstEvaluator`] and becomes the constant it computes (a
//!   tuple of constants for several outputs), unless it creates more than 1024 elements
//!   from no tensor input at all (cheap to compute at run time, large to store);
//! * in a high-level op call, an argument bound to a `R.shape([...])` is replaced by the
//!   shape itself; `R.tensor_to_shape` of a constant becomes the shape and
//!   `R.shape_to_tensor` of a constant int64 shape the constant tensor (dataflow blocks);
//!
//! then bindings left unused (and free of effects) are removed.
//!
//! Kernels run on a [`ConstEvaluator`] given to the pass when it is built
//! ([`FoldConstant::new`]); the registry's pass uses the TIR interpreter of
//! `relax-tir-eval` ([`TirInterpreter`]), which sits below the passes.

mod tir_eval;

use std::collections::HashMap;
use std::sync::Arc;

use relax_ir::op::OpRef;
use relax_ir::ops;
use relax_ir::{
    BindingKind, ConstData, ConstPayload, DataType, Expr, ExprData, Global, Module, PrimExprData, RelaxFunction,
    TensorShape, TyData, Var,
};
use relax_pass::{ModulePass, PassContext, PassResult};

relax_pass::declare_pass! {
    /// Registry entry: the pass with the TIR interpreter ([`FoldConstant::default`]).
    pub INFO: Module "fold-constant" {
        summary: "evaluate kernel calls whose inputs are all constants",
        new: |_| FoldConstant::default(),
    }
}

pub use tir_eval::TirInterpreter;

/// Runs kernels on constant inputs.
pub trait ConstEvaluator: Send + Sync {
    /// Runs the PrimFunc `func` of `m` on the constant tensors `args` (with data) and the
    /// scalar arguments `scalars` (`tir_vars`), producing one tensor per entry of
    /// `outputs` (static shape and dtype). `None` when it cannot (the kernel is not
    /// supported, or it fails).
    fn call_tir(
        &self,
        m: &Module,
        func: Global,
        args: &[&ConstData],
        scalars: &[i64],
        outputs: &[(Vec<i64>, DataType)],
    ) -> Option<Vec<ConstData>>;
}

/// The `fold-constant` pass with its evaluator.
pub struct FoldConstant {
    evaluator: Arc<dyn ConstEvaluator>,
}

impl FoldConstant {
    /// The pass, running kernels on `evaluator`.
    pub fn new(evaluator: Arc<dyn ConstEvaluator>) -> FoldConstant {
        FoldConstant { evaluator }
    }
}

impl Default for FoldConstant {
    /// The pass, running kernels on the TIR interpreter.
    fn default() -> FoldConstant {
        FoldConstant::new(Arc::new(TirInterpreter))
    }
}

impl ModulePass for FoldConstant {
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
        let ev = Some(self.evaluator.as_ref());
        let globals: Vec<Global> =
            m.live().filter(|(_, gd)| matches!(gd.func, relax_ir::Func::Relax(_))).map(|(g, _)| g).collect();
        let mut changed = false;
        for g in globals {
            let Some(mut f) = m.relax(g).cloned() else { continue };
            if fold_function(m, &mut f, ev) {
                m.globals[g].func = relax_ir::Func::Relax(Box::new(f));
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// Folds one function (a working copy of a function of `m`); returns true if anything
/// changed. New constants are added to `m`.
pub fn fold_function(m: &mut Module, f: &mut RelaxFunction, ev: Option<&dyn ConstEvaluator>) -> bool {
    let mut changed = false;
    let mut consts: HashMap<Var, Expr> = HashMap::new();
    let mut shapes: HashMap<Var, Expr> = HashMap::new();
    for loc in f.all_seqs() {
        let blocks = f.seq(loc).blocks.clone();
        for b in blocks {
            let dataflow = f.blocks[b].dataflow;
            for i in 0..f.blocks[b].bindings.len() {
                let bd = f.blocks[b].bindings[i].clone();
                changed |= inline_constants(f, bd.value, &consts);
                if bd.kind == BindingKind::Value {
                    changed |= fold_value(m, f, bd.value, dataflow, &shapes, ev);
                    match &f.exprs[bd.value] {
                        ExprData::Const(_) => {
                            consts.insert(bd.var, bd.value);
                        }
                        ExprData::Shape(_) => {
                            shapes.insert(bd.var, bd.value);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    // Every other use (results, conditions).
    let mut uses = Vec::new();
    f.for_each_reachable(|e, d| {
        if let ExprData::Var(v) = d
            && consts.contains_key(v)
        {
            uses.push(e);
        }
    });
    for e in uses {
        let ExprData::Var(v) = f.exprs[e] else { continue };
        let c = consts[&v];
        f.exprs[e] = f.exprs[c].clone();
        let t = f.ty_of(c);
        f.expr_ty.set(e, t);
        changed = true;
    }
    changed |= remove_unused(m, f);
    changed
}

/// Replaces uses of constant-bound variables among the operands of `e`.
fn inline_constants(f: &mut RelaxFunction, e: Expr, consts: &HashMap<Var, Expr>) -> bool {
    let mut changed = false;
    let mut stack = f.operands(e);
    while let Some(x) = stack.pop() {
        match f.exprs[x].clone() {
            ExprData::Var(v) => {
                if let Some(&c) = consts.get(&v) {
                    f.exprs[x] = f.exprs[c].clone();
                    let t = f.ty_of(c);
                    f.expr_ty.set(x, t);
                    changed = true;
                }
            }
            ExprData::Tuple(fields) => stack.extend(f.list(fields).iter().copied()),
            _ => {}
        }
    }
    changed
}

const MAX_FOLD_ELEMENTS: i64 = 1024;

/// The static shape and dtype of a tensor type.
fn static_tensor(f: &RelaxFunction, t: relax_ir::Ty) -> Option<(Vec<i64>, DataType)> {
    match f.pool.ty(t) {
        TyData::Tensor { shape: TensorShape::Dims(d), dtype, .. } if !dtype.is_void() => {
            let dims: Option<Vec<i64>> = d.iter().map(|&x| f.pool.as_int(x)).collect();
            Some((dims?, *dtype))
        }
        _ => None,
    }
}

/// `ShouldBeFolded`: not a creation of more than 1024 elements from no tensor input.
fn should_fold(f: &RelaxFunction, value: Expr, tensor_inputs: bool) -> bool {
    let Some(t) = f.ty_of(value) else { return true };
    let Some((dims, _)) = static_tensor(f, t) else { return true };
    let mut n: i64 = 1;
    for d in dims {
        if d <= 0 {
            return true;
        }
        n = n.saturating_mul(d);
    }
    n <= MAX_FOLD_ELEMENTS || tensor_inputs
}

fn fold_value(
    m: &mut Module,
    f: &mut RelaxFunction,
    value: Expr,
    dataflow: bool,
    shapes: &HashMap<Var, Expr>,
    ev: Option<&dyn ConstEvaluator>,
) -> bool {
    let ExprData::Call(call) = f.exprs[value].clone() else { return false };
    let args = f.list(call.args).to_vec();
    let ExprData::Op(op) = &f.exprs[call.callee] else { return false };
    let id = op.id();
    if id == Some(ops::CALL_TIR) {
        let Some(ev) = ev else { return false };
        return fold_call_tir(m, f, value, &call, ev);
    }
    if !matches!(op, OpRef::Known(_)) {
        return false;
    }
    let mut changed = false;
    // Shape arguments bound to variables are propagated.
    for &a in &args {
        if let ExprData::Var(v) = f.exprs[a]
            && let Some(&s) = shapes.get(&v)
        {
            f.exprs[a] = f.exprs[s].clone();
            let t = f.ty_of(s);
            f.expr_ty.set(a, t);
            changed = true;
        }
    }
    if changed {
        // The result type may have named the shape variable (`R.Tensor(s, ...)`).
        let old = f.ty_of(value);
        f.expr_ty.set(value, None);
        let an = relax_ir::arith::Analyzer::new();
        let t = relax_ir::infer::infer_expr(f, value, Some(m), &an).ok().flatten().or(old);
        f.expr_ty.set(value, t);
    }
    if !dataflow {
        return changed;
    }
    match id {
        Some(ops::TENSOR_TO_SHAPE) => {
            let Some(&arg) = args.first() else { return changed };
            let ExprData::Const(c) = f.exprs[arg] else { return changed };
            let data = &m.constants[c];
            let (ConstPayload::Data(bytes), Some(shape)) = (&data.payload, &data.shape) else { return changed };
            if data.dtype != DataType::INT64 || shape.len() != 1 {
                return changed;
            }
            let vals: Vec<i64> =
                bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
            let dims: Vec<relax_ir::PrimExpr> = vals.iter().map(|&v| f.pool.i64(v)).collect();
            let ty = f.pool.intern_ty(TyData::shape(dims.clone()));
            f.exprs[value] = ExprData::Shape(dims);
            f.expr_ty.set(value, Some(ty));
            true
        }
        Some(ops::SHAPE_TO_TENSOR) => {
            let Some(&arg) = args.first() else { return changed };
            let ExprData::Shape(dims) = f.exprs[arg].clone() else { return changed };
            let mut bytes = Vec::new();
            for d in &dims {
                match f.pool.prim(*d) {
                    PrimExprData::Int(t, v) if *t == DataType::INT64 => bytes.extend_from_slice(&v.to_le_bytes()),
                    _ => return changed,
                }
            }
            let cd = ConstData {
                dtype: DataType::INT64,
                shape: Some(vec![dims.len() as i64]),
                payload: ConstPayload::Data(bytes),
            };
            set_const(m, f, value, cd);
            true
        }
        _ => {
            let tensors = args.iter().any(|&a| contains_tensor(f, a));
            match ev {
                Some(ev) if should_fold(f, value, tensors) => fold_op(m, f, value, ev) || changed,
                _ => changed,
            }
        }
    }
}

/// `ExprContainsTensor`: a tensor-typed operand, or a tuple with one.
fn contains_tensor(f: &RelaxFunction, e: Expr) -> bool {
    if f.ty_of(e).is_some_and(|t| matches!(f.pool.ty(t), TyData::Tensor { .. })) {
        return true;
    }
    matches!(&f.exprs[e], ExprData::Tuple(fields) if f.list(*fields).iter().any(|&x| contains_tensor(f, x)))
}

/// True when `e` is a constant operand: a constant with data, a shape or prim value
/// without symbolic variables, a string or dtype, or a tuple of those.
fn constant_operand(m: &Module, f: &RelaxFunction, e: Expr) -> bool {
    match &f.exprs[e] {
        ExprData::Const(c) => matches!(m.constants[*c].payload, ConstPayload::Data(_)),
        ExprData::Shape(dims) => dims.iter().all(|&d| f.pool.free_vars(d).is_empty()),
        ExprData::Prim(p) => f.pool.free_vars(*p).is_empty(),
        ExprData::Str(_) | ExprData::DType(_) => true,
        ExprData::Tuple(fields) => f.list(*fields).iter().all(|&x| constant_operand(m, f, x)),
        _ => false,
    }
}

/// Folds a high-level op call on constants (in a dataflow block): the call alone is
/// legalized in a scratch module and its kernel run, as TVM's FoldConstant legalizes it.
fn fold_op(m: &mut Module, f: &mut RelaxFunction, value: Expr, ev: &dyn ConstEvaluator) -> bool {
    let ExprData::Call(call) = &f.exprs[value] else { return false };
    let ExprData::Op(op) = &f.exprs[call.callee] else { return false };
    if op.id().and_then(crate::legalize::legalization).is_none()
        || call.args.is_empty()
        || !f.list(call.args).iter().all(|&a| constant_operand(m, f, a))
    {
        return false;
    }
    let Some(ty) = f.ty_of(value) else { return false };
    if static_tensor(f, ty).is_none() && !matches!(f.pool.ty(ty), TyData::Tuple(_)) {
        return false;
    }
    // The scratch module: the module's constants and PrimFuncs, and a copy of `f` whose
    // body is this one call.
    let mut scratch = Module { constants: m.constants.clone(), ..Module::new() };
    for (_, gd) in m.live() {
        if let relax_ir::Func::Prim(p) = &gd.func {
            scratch.add(gd.name.clone(), relax_ir::Func::Prim(p.clone()));
        }
    }
    let mut g = f.clone();
    let var = g.add_var("lv", ty, false);
    let block = g.blocks.push(relax_ir::BlockData {
        dataflow: false,
        bindings: vec![relax_ir::Binding { var, value, kind: BindingKind::Value }],
    });
    let body = g.use_var(var);
    g.func.body = g.add_seq(vec![block], body);
    g.func.ret = ty;
    g.func.params.clear();
    g.func.attrs = relax_ir::Attrs::new();
    let sg = scratch.add("main", relax_ir::Func::Relax(Box::new(g)));
    crate::legalize::legalize_module(&mut scratch);
    let Some(g) = scratch.relax(sg) else { return false };
    let folded = match &g.exprs[value] {
        ExprData::Const(c) => Some(vec![scratch.constants[*c].clone()]),
        ExprData::Call(c) => {
            let mut gf = g.clone();
            let mut tmp = scratch.clone();
            fold_call_tir(&mut tmp, &mut gf, value, c, ev).then(|| match &gf.exprs[value] {
                ExprData::Const(k) => vec![tmp.constants[*k].clone()],
                ExprData::Tuple(fields) => gf
                    .list(*fields)
                    .iter()
                    .filter_map(|&x| match gf.exprs[x] {
                        ExprData::Const(k) => Some(tmp.constants[k].clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
        }
        _ => None,
    };
    let Some(results) = folded.filter(|r| !r.is_empty()) else { return false };
    if results.len() == 1 && !matches!(f.pool.ty(ty), TyData::Tuple(_)) {
        set_const(m, f, value, results.into_iter().next().expect("one result"));
    } else {
        set_const_tuple(m, f, value, results);
    }
    true
}

/// Replaces `value` by a tuple of new constants.
fn set_const_tuple(m: &mut Module, f: &mut RelaxFunction, value: Expr, results: Vec<ConstData>) {
    let mut fields = Vec::new();
    for r in results {
        let e = f.add_tuple([], None);
        set_const(m, f, e, r);
        fields.push(e);
    }
    let tys: Vec<relax_ir::Ty> = fields.iter().map(|&e| f.ty_of(e).expect("typed")).collect();
    let ty = f.pool.intern_ty(TyData::Tuple(tys));
    f.exprs[value] = ExprData::Tuple(f.new_list(fields));
    f.expr_ty.set(value, Some(ty));
}

/// Replaces `value` by a new constant.
fn set_const(m: &mut Module, f: &mut RelaxFunction, value: Expr, cd: ConstData) {
    let dims: Vec<relax_ir::PrimExpr> = cd.shape.iter().flatten().map(|&d| f.pool.i64(d)).collect();
    let ty = f.pool.intern_ty(TyData::tensor(dims, cd.dtype));
    let c = m.constants.push(cd);
    f.exprs[value] = ExprData::Const(c);
    f.expr_ty.set(value, Some(ty));
}

fn fold_call_tir(
    m: &mut Module,
    f: &mut RelaxFunction,
    value: Expr,
    call: &relax_ir::Call,
    ev: &dyn ConstEvaluator,
) -> bool {
    let args = f.list(call.args).to_vec();
    let Some(&ExprData::Global(callee)) = args.first().map(|&g| &f.exprs[g]) else { return false };
    if m.prim_func(callee).is_none() {
        return false;
    }
    let Some(ExprData::Tuple(fields)) = args.get(1).map(|&t| &f.exprs[t]) else { return false };
    let mut consts = Vec::new();
    for &x in f.list(*fields) {
        let ExprData::Const(c) = f.exprs[x] else { return false };
        if !matches!(m.constants[c].payload, ConstPayload::Data(_)) {
            return false;
        }
        consts.push(c);
    }
    let mut scalars = Vec::new();
    if let Some(&s) = args.get(2) {
        let ExprData::Shape(dims) = &f.exprs[s] else { return false };
        for &d in dims {
            let Some(v) = f.pool.as_int(d) else { return false };
            scalars.push(v);
        }
    }
    if !should_fold(f, value, args.get(1).is_some_and(|&t| contains_tensor(f, t))) {
        return false;
    }
    let [out] = call.sinfo_args[..] else { return false };
    let outs: Vec<(Vec<i64>, DataType)> = match f.pool.ty(out).clone() {
        TyData::Tuple(fields) => {
            let v: Option<Vec<_>> = fields.iter().map(|&t| static_tensor(f, t)).collect();
            let Some(v) = v else { return false };
            v
        }
        _ => match static_tensor(f, out) {
            Some(o) => vec![o],
            None => return false,
        },
    };
    let args: Vec<&ConstData> = consts.iter().map(|&c| &m.constants[c]).collect();
    let Some(results) = ev.call_tir(m, callee, &args, &scalars, &outs) else { return false };
    if results.len() != outs.len() {
        return false;
    }
    if matches!(f.pool.ty(out), TyData::Tuple(_)) {
        set_const_tuple(m, f, value, results);
    } else {
        let r = results.into_iter().next().expect("one result");
        set_const(m, f, value, r);
    }
    true
}

/// `RemoveAllUnused` on a function of `m`.
fn remove_unused(m: &Module, f: &mut RelaxFunction) -> bool {
    let impure: std::collections::HashSet<Global> = m
        .live()
        .filter(|(_, gd)| match &gd.func {
            relax_ir::Func::Relax(x) => !x.func.pure,
            _ => true,
        })
        .map(|(g, _)| g)
        .collect();
    remove_unused_in(f, &impure)
}

/// `RemoveAllUnused`: removes plain bindings whose variable is unused and whose value
/// has no effect (`match_cast` bindings are kept, as in TVM); `impure` are the module's
/// functions whose calls have effects. Returns true if anything was removed.
pub fn remove_unused_in(f: &mut RelaxFunction, impure: &std::collections::HashSet<Global>) -> bool {
    crate::dead_code_elimination::remove_bindings_until_fixpoint(f, |f, bd| {
        matches!(bd.kind, BindingKind::MatchCast(_)) || crate::dead_code_elimination::has_effect(f, bd.value, impure)
    })
}
