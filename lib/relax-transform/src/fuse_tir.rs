//! `fuse-tir` (TVM's `FuseTIR`, `algorithms.md` §3): every `Primitive` Relax function
//! (made by `fuse-ops`) becomes one PrimFunc with the same name, and its callers call
//! that PrimFunc with `call_tir` (or `call_tir_inplace`). `docs/fusion.md` describes it.
//!
//! 1. [`params`]: tuple parameters of private functions are expanded and unused
//!    parameters removed (a fused function's `tir_vars` becomes scalar parameters);
//! 2. [`build`]: each `Primitive` function becomes a PrimFunc — kernels copied with
//!    fresh definitions ([`copy`]), their buffer shapes matched symbolically against the
//!    actual shapes ([`matcher`]), intermediate buffers allocated, block names made
//!    unique, outputs that are inputs computed in place;
//! 3. each call `cls.fused_x(a, b, R.prim_value(m))` becomes
//!    `R.call_tir(cls.fused_x, (a, b), out_sinfo=..., tir_vars=R.shape([m]))`;
//! 4. dead-code elimination removes the kernels nobody calls any more.
//!
//! A function that cannot become a PrimFunc (a kernel without a root block, an op that
//! was never legalized, shapes that do not match) is left as it is, called as a Relax
//! function, with a warning that says why: the pass never fails on it.

pub mod build;
pub mod copy;
pub mod matcher;
pub mod params;

use std::collections::HashMap;

use relax_ir::op::OpRef;
use relax_ir::ops;
use relax_ir::{
    AttrValue, Attrs, Call, Diagnostic, Expr, ExprData, Func, Global, Module, PrimExpr, RelaxFunction, TyData,
};
use relax_pass::{ModulePass, PassContext, PassResult};

use crate::walk::all_blocks;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "fuse-tir" {
        summary: "turn each Primitive function made by fuse-ops into one PrimFunc",
        new: |_| FuseTir,
    }
}

struct FuseTir;

impl ModulePass for FuseTir {
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        let (changed, warnings) = fuse_tir(m);
        cx.remarks.extend(warnings);
        Ok(changed)
    }
}

/// Runs the pass; returns whether the module changed and the warnings about functions
/// left unfused.
pub fn fuse_tir(m: &mut Module) -> (bool, Vec<Diagnostic>) {
    let mut changed = params::expand_tuple_arguments(m);
    changed |= params::remove_unused_parameters(m);
    let mut prims: Vec<(String, Global)> = m
        .live()
        .filter(|(_, gd)| matches!(&gd.func, Func::Relax(f) if is_primitive(f)))
        .map(|(g, gd)| (gd.name.clone(), g))
        .collect();
    prims.sort();
    let mut warnings = Vec::new();
    let mut fused = Vec::new();
    for (name, g) in prims {
        let Some(f) = m.relax(g) else { continue };
        match build::build(m, f) {
            Ok(b) => fused.push((g, b, f.func.params.clone())),
            Err(msg) => warnings.push(
                Diagnostic::warning(f.spans.func, format!("`{name}` is left unfused: {msg}"))
                    .with_note("it stays a Relax function that calls its kernels one by one"),
            ),
        }
    }
    let mut replaced: HashMap<Global, Vec<i64>> = HashMap::new();
    for (g, b, _) in fused {
        replaced.insert(g, b.inplace);
        m.globals[g].func = Func::Prim(Box::new(b.func));
    }
    if !replaced.is_empty() {
        let callers: Vec<Global> =
            m.live().filter(|(_, gd)| matches!(gd.func, Func::Relax(_))).map(|(g, _)| g).collect();
        for g in callers {
            let Some(mut f) = m.relax(g).cloned() else { continue };
            if rewrite_callers(&mut f, &replaced) {
                m.globals[g].func = Func::Relax(Box::new(f));
            }
        }
        changed = true;
    }
    changed |= params::dead_code_elimination(m);
    (changed, warnings)
}

/// True for a function with a non-zero `Primitive` attribute.
pub fn is_primitive(f: &RelaxFunction) -> bool {
    f.func.attrs.get("Primitive").is_some_and(|v| match v {
        AttrValue::Bool(b) => *b,
        AttrValue::Int(i) | AttrValue::PrimInt(_, i) => *i != 0,
        _ => false,
    })
}

/// Rewrites the calls of fused functions in `f`; returns true if any was rewritten.
fn rewrite_callers(f: &mut RelaxFunction, replaced: &HashMap<Global, Vec<i64>>) -> bool {
    let mut changed = false;
    for (_, b) in all_blocks(f) {
        for bd in f.blocks[b].bindings.clone() {
            let ExprData::Call(call) = f.exprs[bd.value].clone() else { continue };
            let ExprData::Global(g) = f.exprs[call.callee] else { continue };
            let Some(inplace) = replaced.get(&g) else { continue };
            let args = f.list(call.args).to_vec();
            let new = call_tir(f, g, &args, inplace, f.ty_of(bd.value).unwrap_or(f.vars[bd.var].ty));
            f.exprs[bd.value] = new;
            changed = true;
        }
    }
    changed
}

/// The `call_tir` of the fused PrimFunc `g` replacing a call with `args`.
fn call_tir(f: &mut RelaxFunction, g: Global, args: &[Expr], inplace: &[i64], ty: relax_ir::Ty) -> ExprData {
    let mut tensors = Vec::new();
    let mut scalars: Vec<PrimExpr> = Vec::new();
    for &a in args {
        let t = f.ty_of(a).map(|t| f.pool.ty(t).clone());
        match (&f.exprs[a], t) {
            (ExprData::Shape(dims), _) => scalars.extend(dims.iter().copied()),
            (ExprData::Prim(p), _) => scalars.push(*p),
            (_, Some(TyData::Shape { values: Some(vs), .. })) => scalars.extend(vs),
            (_, Some(TyData::Prim { value: Some(v), .. })) => scalars.push(v),
            _ => tensors.push(a),
        }
    }
    let object = f.pool.intern_ty(TyData::Object);
    let gexpr = f.add_expr(ExprData::Global(g), Some(object));
    let arg_tys: Vec<relax_ir::Ty> = tensors.iter().map(|&a| f.ty_of(a).unwrap_or(object)).collect();
    let tuple_ty = f.pool.intern_ty(TyData::Tuple(arg_tys));
    let tuple = f.add_tuple(tensors, Some(tuple_ty));
    let mut call_args = vec![gexpr, tuple];
    if !scalars.is_empty() {
        call_args.push(crate::emit::shape(f, scalars));
    }
    let (id, attrs) = if inplace.is_empty() {
        (ops::CALL_TIR, Attrs::new())
    } else {
        let mut a = Attrs::new();
        a.set("inplace_indices", AttrValue::List(inplace.iter().map(|&i| AttrValue::Int(i)).collect()));
        (ops::CALL_TIR_INPLACE, a)
    };
    let op = OpRef::Known(id);
    let callee = f.add_expr(ExprData::Op(op), None);
    let args = f.new_list(call_args);
    ExprData::Call(Call { callee, args, attrs, sinfo_args: vec![ty] })
}
