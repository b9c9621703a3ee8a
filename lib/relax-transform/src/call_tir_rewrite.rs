//! `call-tir-rewrite`: explicit allocation and destination-passing calls, as TVM's
//! `CallTIRRewrite` (`algorithms.md` §4).
//!
//! `y = R.call_tir(f, (a, b), out_sinfo=T)` becomes
//!
//! ```text
//! alloc: T = R.builtin.alloc_tensor(R.shape(T.shape), R.dtype(T.dtype), R.prim_value(0), R.str("global"), sinfo_args=(T,))
//! f(a, b, alloc)
//! y: T = alloc
//! ```
//!
//! * Several outputs get one allocation each and `y = alloc, alloc1`; nested tuple
//!   outputs are flattened into the call and rebuilt for `y` (TVM HEAD's rule).
//! * `R.call_tir_inplace` passes the in-place inputs instead of allocating
//!   (`inplace_indices`), and only the outputs marked `-1` are allocated and appended.
//! * `tir_vars=R.shape([...])` makes the call `R.vm.call_tir_dyn(f, (a, b, alloc, R.shape([...])))`.
//! * `R.call_dps_packed("name", (a,), ...)` becomes the packed call
//!   `R.call_packed("name", a, alloc)` (typed `R.Object`).
//! * The device index is the position of the output's virtual device among the module's
//!   `vdevice` global infos (0 without one); the scope is the vdevice's (`global`).
//!
//! The output must have a known shape (a dims list or a shape variable); otherwise the
//! pass reports an error at the call. The emitted kernel calls are impure, so a function
//! the pass rewrites is first brought into the form TVM's pipeline has at this point:
//! its dataflow blocks become plain blocks (`to-non-dataflow`) and, when it is pure, it
//! is marked `relax.force_pure` (`remove-purity-checking`).

use relax_ir::diag::Diagnostic;
use relax_ir::{
    AttrValue, Binding, Expr, ExprData, Global, Module, RelaxFunction, TensorShape, Ty, TyData, VDeviceInfo,
};
use relax_ir::{OpId, ops};
use relax_pass::PassResult;

use crate::emit::{self, NameSupply};
use crate::walk::{all_blocks, tidy_blocks};
use relax_ir::Seq;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "call-tir-rewrite" {
        summary: "make allocations explicit: call_tir becomes alloc_tensor plus a destination-passing call",
        run: |m, _| call_tir_rewrite_module(m),
    }
}

/// The destination-passing ops this pass rewrites.
pub const DPS_OPS: &[OpId] = &[ops::CALL_TIR, ops::CALL_TIR_INPLACE, ops::CALL_DPS_PACKED];

/// True when some Relax function of `m` still calls `call_tir` or another DPS op.
pub fn has_dps_calls(m: &Module) -> bool {
    m.live().any(|(g, _)| m.relax(g).is_some_and(function_has_dps_calls))
}

/// True when `f` calls a destination-passing op.
pub fn function_has_dps_calls(f: &RelaxFunction) -> bool {
    let mut found = false;
    f.for_each_reachable(|_, d| {
        if let ExprData::Call(c) = d
            && f.callee_op(c).is_some_and(|id| DPS_OPS.contains(&id))
        {
            found = true;
        }
    });
    found
}

/// Runs the pass on every Relax function of `m`.
pub fn call_tir_rewrite_module(m: &mut Module) -> PassResult {
    let vdevices = m.vdevices.clone();
    let globals: Vec<Global> = m.live().map(|(g, _)| g).collect();
    let mut changed = false;
    let mut errors = Vec::new();
    for g in globals {
        let Some(f) = m.relax_mut(g) else { continue };
        match call_tir_rewrite(f, &vdevices) {
            Ok(c) => changed |= c,
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() { Ok(changed) } else { Err(errors) }
}

/// Rewrites the DPS calls of one function (`vdevices`: the module's virtual devices).
pub fn call_tir_rewrite(f: &mut RelaxFunction, vdevices: &[VDeviceInfo]) -> Result<bool, Vec<Diagnostic>> {
    if !function_has_dps_calls(f) {
        return Ok(false);
    }
    // Preconditions: plain blocks and no purity checking.
    make_non_dataflow(f);
    crate::remove_purity_checking::remove_purity_checking(f);

    let mut names = NameSupply::new();
    let mut errors = Vec::new();
    let body = f.func.body;
    rewrite_seq(f, body, vdevices, &mut names, &mut errors);
    if errors.is_empty() { Ok(true) } else { Err(errors) }
}

/// Rewrites the sequence at `loc` in TVM's visiting order (nested sequences when their
/// binding is reached), which decides the names `alloc`, `alloc1`, ...
fn rewrite_seq(
    f: &mut RelaxFunction,
    loc: Seq,
    vdevices: &[VDeviceInfo],
    names: &mut NameSupply,
    errors: &mut Vec<Diagnostic>,
) {
    for b in f.seq(loc).blocks.clone() {
        let bindings = std::mem::take(&mut f.blocks[b].bindings);
        let mut out: Vec<Binding> = Vec::with_capacity(bindings.len());
        for bd in bindings {
            let nested: Vec<Seq> = f.exprs[bd.value].nested_seqs().collect();
            for s in nested {
                rewrite_seq(f, s, vdevices, names, errors);
            }
            match rewrite_binding(f, &bd, vdevices, names, &mut out) {
                Ok(Some(value)) => out.push(Binding { value, ..bd }),
                Ok(None) => out.push(bd),
                Err(d) => {
                    errors.push(d);
                    out.push(bd);
                }
            }
        }
        f.blocks[b].bindings = out;
    }
}

/// What `to-non-dataflow` does: every block and variable of `f` becomes plain, and
/// adjacent blocks merge. Returns true if anything changed.
pub fn make_non_dataflow(f: &mut RelaxFunction) -> bool {
    let mut changed = false;
    for (_, b) in all_blocks(f) {
        changed |= std::mem::replace(&mut f.blocks[b].dataflow, false);
        for i in 0..f.blocks[b].bindings.len() {
            let v = f.blocks[b].bindings[i].var;
            changed |= std::mem::replace(&mut f.vars[v].dataflow, false);
        }
    }
    changed | tidy_blocks(f)
}

/// Rewrites one binding's DPS call: emits the allocations and the call into `out` and
/// returns the binding's new value (the outputs), or `None` when it is not a DPS call.
fn rewrite_binding(
    f: &mut RelaxFunction,
    bd: &Binding,
    vdevices: &[VDeviceInfo],
    names: &mut NameSupply,
    out: &mut Vec<Binding>,
) -> Result<Option<Expr>, Diagnostic> {
    let ExprData::Call(call) = f.exprs[bd.value].clone() else { return Ok(None) };
    let cargs = f.list(call.args).to_vec();
    let Some(op) = f.callee_op(&call) else { return Ok(None) };
    if !DPS_OPS.contains(&op) || cargs.len() < 2 {
        return Ok(None);
    }
    let span = *f.spans.exprs.get(bd.value);
    let err = |msg: String| Diagnostic::error(span, msg);
    let out_ty = match f.ty_of(bd.value) {
        Some(t) => t,
        None => emit::object(f),
    };
    let inplace: Vec<i64> = match call.attrs.get("inplace_indices") {
        Some(v) => v.as_int_list().unwrap_or_default(),
        None => Vec::new(),
    };
    let is_inplace = op == ops::CALL_TIR_INPLACE;
    let single = matches!(f.pool.ty(out_ty), TyData::Tensor { .. });
    let mut leaves = Vec::new();
    flatten_tensors(f, out_ty, &mut leaves).map_err(|t| {
        err(format!(
            "call-tir-rewrite: `{op}` must return tensors of known shape (or tuples of them), but returns `{t}`",
            op = op.name().trim_start_matches("relax."),
        ))
    })?;
    if is_inplace && leaves.len() != inplace.len() {
        return Err(err("call-tir-rewrite: `inplace_indices` must have one entry per output".to_string()));
    }
    let dataflow = false;
    let arg_fields: Option<Vec<Expr>> = match &f.exprs[cargs[1]] {
        ExprData::Tuple(fields) => Some(f.list(*fields).to_vec()),
        _ => None,
    };
    // The outputs, in order: fresh allocations or in-place inputs.
    let mut outs: Vec<(Expr, bool)> = Vec::new();
    for (i, &t) in leaves.iter().enumerate() {
        let idx = if is_inplace { inplace.get(i).copied().unwrap_or(-1) } else { -1 };
        if idx >= 0 {
            let Some(src) = arg_fields.as_ref().and_then(|a| a.get(idx as usize)).copied() else {
                return Err(err(format!("call-tir-rewrite: in-place index {idx} is out of range")));
            };
            outs.push((src, false));
            continue;
        }
        let (dev, scope) = device_of(f, t, vdevices, single);
        let alloc = alloc_tensor(f, t, dev, &scope);
        let name = names.fresh("alloc");
        let b = emit::bind(f, &name, alloc, dataflow);
        let var = b.var;
        out.push(b);
        let use_ = f.use_var(var);
        outs.push((use_, true));
    }
    // The call.
    let callee = cargs[0];
    let call_expr = match arg_fields {
        Some(fields) => {
            let mut args = fields;
            for (o, fresh) in &outs {
                if *fresh {
                    args.push(*o);
                }
            }
            if cargs.len() > 2 {
                args.push(cargs[2]);
                let tys: Vec<Ty> = args.iter().map(|&a| f.ty_of(a).unwrap_or_else(|| emit::object(f))).collect();
                let tt = f.pool.intern_ty(TyData::Tuple(tys));
                let tuple = f.add_tuple(args, Some(tt));
                let void = emit::void(f);
                emit::call_op(f, ops::VM_CALL_TIR_DYN, vec![callee, tuple], Vec::new(), void)
            } else {
                plain_call(f, callee, args)
            }
        }
        None => {
            let mut args = vec![cargs[1]];
            args.extend(outs.iter().filter(|(_, fresh)| *fresh).map(|(o, _)| *o));
            plain_call(f, callee, args)
        }
    };
    let eff = emit::effect(f, call_expr, dataflow);
    out.push(eff);
    // The binding's new value: the outputs, as the call's type nests them. In-place
    // inputs are used a second time, so they get fresh nodes.
    let mut exprs = Vec::new();
    for (o, fresh) in outs {
        exprs.push(if fresh { o } else { reuse(f, o) });
    }
    let value = if single {
        exprs[0]
    } else {
        let mut it = exprs.into_iter();
        rebuild(f, out_ty, &mut it)
    };
    Ok(Some(value))
}

/// A second use of a leaf expression.
fn reuse(f: &mut RelaxFunction, e: Expr) -> Expr {
    match f.exprs[e].clone() {
        ExprData::Var(v) => f.use_var(v),
        data => {
            let ty = f.ty_of(e);
            f.add_expr(data, ty)
        }
    }
}

/// `callee(args...)`: a PrimFunc call is an effect; a packed call is typed `R.Object`.
fn plain_call(f: &mut RelaxFunction, callee: Expr, args: Vec<Expr>) -> Expr {
    let ty = match f.exprs[callee] {
        ExprData::ExternFunc(_) => emit::object(f),
        _ => emit::void(f),
    };
    f.add_call(callee, args, relax_ir::Attrs::new(), Vec::new(), Some(ty))
}

/// The tensor leaves of an output type, in order; `Err` with the printed type when a
/// leaf is not a tensor of known shape.
fn flatten_tensors(f: &RelaxFunction, t: Ty, out: &mut Vec<Ty>) -> Result<(), String> {
    match f.pool.ty(t) {
        TyData::Tensor { shape: TensorShape::Dims(_) | TensorShape::Var(_), dtype, .. } if !dtype.is_void() => {
            out.push(t);
            Ok(())
        }
        TyData::Tuple(fields) if !fields.is_empty() => {
            for &x in fields {
                flatten_tensors(f, x, out)?;
            }
            Ok(())
        }
        _ => Err(relax_ir::printer::print_ty_in(f, t)),
    }
}

/// The outputs as a (nested) tuple shaped like `t`.
fn rebuild(f: &mut RelaxFunction, t: Ty, it: &mut impl Iterator<Item = Expr>) -> Expr {
    match f.pool.ty(t).clone() {
        TyData::Tuple(fields) => {
            let items: Vec<Expr> = fields.iter().map(|&x| rebuild(f, x, it)).collect();
            f.add_tuple(items, Some(t))
        }
        // One output per tensor leaf, by construction.
        _ => it.next().unwrap_or_else(|| f.add_tuple([], None)),
    }
}

/// `R.builtin.alloc_tensor(shape, dtype, R.prim_value(dev), R.str(scope), sinfo_args=(t,))`.
pub fn alloc_tensor(f: &mut RelaxFunction, t: Ty, dev: i64, scope: &str) -> Expr {
    let (shape, dtype) = match f.pool.ty(t).clone() {
        TyData::Tensor { shape, dtype, .. } => (shape, dtype),
        _ => (TensorShape::Unknown, relax_ir::DataType::VOID),
    };
    let shape_arg = match shape {
        TensorShape::Dims(d) => emit::shape(f, d),
        TensorShape::Var(v) => f.use_var(v),
        TensorShape::Unknown => emit::shape(f, Vec::new()),
    };
    let dt = emit::dtype(f, dtype);
    let dev = emit::prim_i64(f, dev);
    let scope = emit::str_lit(f, scope);
    emit::call_op(f, ops::BUILTIN_ALLOC_TENSOR, vec![shape_arg, dt, dev, scope], vec![t], t)
}

/// The runtime device index and storage scope of an output of type `t`: the position of
/// its vdevice among the module's, or (for a single output without one) the first
/// vdevice of scope `global`; 0 and `global` by default.
fn device_of(f: &RelaxFunction, t: Ty, vdevices: &[VDeviceInfo], single: bool) -> (i64, String) {
    let vd = match f.pool.ty(t) {
        TyData::Tensor { vdevice, .. } => vdevice.clone(),
        _ => None,
    };
    match vd {
        Some(vd) => {
            let mut seen = 0u32;
            for (i, info) in vdevices.iter().enumerate() {
                if target_kind(&info.target) == vd.kind {
                    if seen == vd.index && info.scope == vd.scope {
                        return (i as i64, vd.scope.clone());
                    }
                    seen += 1;
                }
            }
            (0, vd.scope.clone())
        }
        None if single => (vdevices.iter().position(|v| v.scope == "global").unwrap_or(0) as i64, "global".into()),
        None => (0, "global".into()),
    }
}

/// The target kind of a vdevice's target (`{"kind": "cuda", ...}` or `"cuda -arch=..."`).
fn target_kind(t: &AttrValue) -> String {
    match t {
        AttrValue::Dict(items) => {
            items.iter().find(|(k, _)| k == "kind").and_then(|(_, v)| v.as_str()).unwrap_or("").to_string()
        }
        AttrValue::Str(s) => s.split_whitespace().next().unwrap_or("").to_string(),
        AttrValue::Target(inner) => target_kind(inner),
        _ => String::new(),
    }
}
