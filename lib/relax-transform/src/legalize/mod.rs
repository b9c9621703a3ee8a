//! `legalize-ops`: every call of a high-level op becomes a `call_tir` of a PrimFunc in the
//! form TVM's `relax.transform.LegalizeOps` produces (`algorithms.md` §8).
//!
//! Bindings are visited in program order (entering `if` branches and local functions where
//! they appear, [`rewrite::bindings_in_order`]). For each call of an op with a
//! legalization:
//! 1. every argument type and the call's type must have known shapes (TVM's
//!    `KnowAllShapeValues`); otherwise the call is left as it is, as are ops without a
//!    legalization (a module may mix levels; [`unsupported`] lists them with the reason).
//!    The call's type is the one type inference gave it, or the binding's annotation when
//!    that knows the shape and the inferred type does not;
//! 2. the op's legalization describes the computation with the [`te`] builder, in the
//!    words of TOPI's compute definitions (one file per family: [`elementwise`],
//!    [`binary`], [`create`], [`manipulate`], [`index`], [`reduce`], [`nn`], [`linalg`],
//!    [`search`], [`attention`], [`conv`], [`conv_transpose`], [`pool`], [`norm`],
//!    [`layout`], [`scatter`], [`image`], [`qdq`], [`loss`]), with the arguments
//!    converted as `bb.call_te` converts them ([`cx`]);
//! 3. the PrimFunc is added to the module, unless a structurally equal one is there
//!    already ([`relax_ir::structural`]); a new one is named after the legalization (`add`, `tir_exp`,
//!    `matmul`), with a numeric suffix when the name is taken (`add1`, `add2`);
//! 4. the value becomes `R.call_tir(cls.f, (tensor args...), out_sinfo=...)`, with
//!    `tir_vars=R.shape([...])` for symbolic variables no buffer dim defines. The output
//!    type is the shape the computation produces (as `bb.call_te` does); the bound
//!    variable takes it, and so do variables bound to it and the function's result
//!    ([`rewrite::retype`]).
//!
//! Special cases, as in TVM: `arange` of constants and `astype` of a scalar constant
//! become constants; `size` becomes bindings of `shape_of` and `shape_to_tensor` and a
//! `prod`, and the gradient markers their argument ([`expand`]); ops with a runtime implementation (`print`, `assert_op`, `unique`,
//! ...) become `R.call_packed` / `R.call_pure_packed`; a call on a tensor with a virtual
//! device whose target the module knows calls a copy of the kernel with that target
//! (`add_cuda`), after which the module goes through dead-code elimination.

pub mod attention;
pub mod binary;
pub mod conv;
pub mod conv_transpose;
pub mod create;
pub mod cx;
pub mod elementwise;
pub mod expand;
pub mod image;
pub mod index;
pub mod layout;
pub mod linalg;
pub mod loss;
pub mod manipulate;
pub mod nn;
pub mod norm;
pub mod pool;
pub mod qdq;
pub mod reduce;
pub mod rewrite;
pub mod scatter;
pub mod search;
pub mod te;
pub mod unsupported;

use std::collections::HashMap;

use relax_ir::op::{OpId, OpRef, OpTable, ops};
use relax_ir::{
    DataType, Expr, ExprData, Func, Global, Module, PrimExpr, RelaxFunction, SymVar, TensorShape, Ty, TyData,
};
use relax_pass::{ModulePass, PassContext};

use cx::Cx;
use te::Tensor;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "legalize-ops" {
        summary: "lower high-level op calls to call_tir of TensorIR PrimFuncs",
        run: |m, _| Ok(legalize_module(m)),
    }
}

/// What a legalization produces: the PrimFunc's name hint and the output tensors.
#[derive(Debug)]
pub struct Lowered {
    /// The PrimFunc's name (`add`, `tir_exp`).
    pub name: String,
    /// The outputs, in order.
    pub outputs: Vec<Tensor>,
}

impl Lowered {
    /// One output.
    pub fn one(name: &str, t: Tensor) -> Option<Lowered> {
        Some(Lowered { name: name.to_string(), outputs: vec![t] })
    }
}

/// A legalization: describes the call's computation in `cx.te`, or declines.
pub type Legalize = fn(&mut Cx) -> Option<Lowered>;

/// The legalization of each op, from the families' tables (one file each).
static LEGALIZATIONS: OpTable<Legalize> = relax_ir::op_table_of!(
    Legalize;
    elementwise::lookup,
    binary::lookup,
    create::lookup,
    manipulate::lookup,
    index::lookup,
    reduce::lookup,
    nn::lookup,
    linalg::lookup,
    search::lookup,
    attention::lookup,
    conv::lookup,
    conv_transpose::lookup,
    pool::lookup,
    norm::lookup,
    layout::lookup,
    scatter::lookup,
    image::lookup,
    qdq::lookup,
    loss::lookup,
);

/// The legalization of the op `id`, if it has one.
pub fn legalization(id: OpId) -> Option<Legalize> {
    LEGALIZATIONS.get(id)
}

/// True when a type's shape values are all known (TVM's `KnowAllShapeValues`).
fn know_all_shape_values(f: &RelaxFunction, t: Ty) -> bool {
    match f.pool.ty(t) {
        TyData::Tensor { shape: TensorShape::Dims(_), .. } => true,
        TyData::Shape { values: Some(_), .. } => true,
        TyData::Tuple(fields) => fields.iter().all(|&x| know_all_shape_values(f, x)),
        TyData::Prim { .. } => true,
        _ => false,
    }
}

/// A legalized call waiting to be written into its function.
#[derive(Debug)]
pub struct Pending {
    /// The PrimFunc.
    pub func: relax_ir::PrimFunc,
    /// Its name hint.
    pub name: String,
    /// The tensor arguments of the `call_tir`.
    pub call_args: Vec<Expr>,
    /// Output dims (PrimFunc expressions) and dtypes.
    pub outputs: Vec<(Vec<PrimExpr>, DataType)>,
    /// Scalar parameters (PrimFunc variables).
    pub scalars: Vec<SymVar>,
    /// PrimFunc variable → caller variable.
    pub inverse: HashMap<SymVar, SymVar>,
    /// The virtual device of the outputs (that of the first tensor argument with one).
    pub vdevice: Option<relax_ir::VDevice>,
}

/// Legalizes one call, if it can.
fn legalize_call(m: &Module, f: &RelaxFunction, value: Expr, annotation: Option<Ty>) -> Option<Pending> {
    let ExprData::Call(call) = &f.exprs[value] else { return None };
    let ExprData::Op(OpRef::Known(id)) = &f.exprs[call.callee] else { return None };
    let _op_name = id.name();
    let leg = legalization(*id)?;
    // The call's type; when it knows less than the binding's annotation, the annotation
    // (as TVM's parser gives the call the annotated type).
    let out_ty = match (f.ty_of(value), annotation) {
        (Some(t), _) if know_all_shape_values(f, t) => t,
        (_, Some(a)) if know_all_shape_values(f, a) => a,
        (t, _) => t?,
    };
    // `image.grid_sample`'s type is known only when TVM 0.25's and 0.27's readings of the
    // grid agree (docs/design.md); its legalization computes the shape TOPI computes.
    let shape_from_compute = *id == ops::IMAGE_GRID_SAMPLE;
    if !f.list(call.args).iter().all(|&a| f.ty_of(a).is_some_and(|t| know_all_shape_values(f, t)))
        || !(shape_from_compute || know_all_shape_values(f, out_ty))
    {
        return None;
    }
    let mut cx = Cx::new(m, f, call, out_ty);
    let lowered = leg(&mut cx)?;
    let Cx { te, var_map, call_args, .. } = cx;
    let built = te.build(&lowered.outputs);
    let mut inverse = HashMap::new();
    for (&cv, &img) in &var_map {
        if let Some(pv) = built.func.pool.as_var(img) {
            inverse.insert(pv, cv);
        }
    }
    // Every variable of the output shapes and scalar parameters must map back.
    let mut vars = Vec::new();
    for (dims, _) in &built.outputs {
        for &d in dims {
            built.func.pool.collect_vars(d, &mut vars);
        }
    }
    vars.extend(built.scalars.iter().copied());
    if vars.iter().any(|v| !inverse.contains_key(v)) {
        return None;
    }
    let vdevice = call_args.iter().find_map(|&a| match f.ty_of(a).map(|t| f.pool.ty(t)) {
        Some(TyData::Tensor { vdevice: Some(v), .. }) => Some(v.clone()),
        _ => None,
    });
    Some(Pending {
        func: built.func,
        name: lowered.name,
        call_args,
        outputs: built.outputs,
        scalars: built.scalars,
        inverse,
        vdevice,
    })
}

/// Calls that TVM legalizes into a constant: `arange` of constants (`np.arange`) and
/// `astype` of a scalar constant (`relax.const(value, dtype)`).
fn constant_result(m: &Module, f: &RelaxFunction, value: Expr) -> Option<relax_ir::ConstData> {
    let ExprData::Call(call) = &f.exprs[value] else { return None };
    let ExprData::Op(OpRef::Known(id)) = &f.exprs[call.callee] else { return None };
    let num = |e: Expr| -> Option<f64> {
        let ExprData::Prim(p) = f.exprs[e] else { return None };
        match f.pool.prim(p) {
            relax_ir::PrimExprData::Int(_, v) => Some(*v as f64),
            relax_ir::PrimExprData::Float(_, v) => Some(v.get()),
            _ => None,
        }
    };
    match *id {
        ops::ARANGE => {
            let [a, b, c] = f.list(call.args)[..] else { return None };
            let dtype = f.ty_of(value).and_then(|t| f.pool.ty(t).dtype()).filter(|d| !d.is_void())?;
            create::const_arange(num(a)?, num(b)?, num(c)?, dtype)
        }
        ops::ASTYPE => {
            let &[x] = f.list(call.args) else { return None };
            let mut cx = Cx::new(m, f, call, f.ty_of(value)?);
            let v = cx.scalar_const(0)?;
            let dtype = cx.attr_dtype("dtype")?;
            let n = match cx.te.pool.prim(v) {
                relax_ir::PrimExprData::Int(_, i) => *i as f64,
                relax_ir::PrimExprData::Float(_, x) => x.get(),
                _ => return None,
            };
            let _ = x;
            elementwise::scalar_constant(n, dtype)
        }
        _ => None,
    }
}

/// The state shared by the legalization of a whole module.
struct Adder {
    /// Fingerprints of the module's PrimFuncs.
    known: HashMap<String, Global>,
    /// `UniqueNameSupply` of the builder.
    names: HashMap<String, i64>,
    /// The builder's names of emitted bindings (`lv`, `lv1`, `gv`, ...).
    var_names: HashMap<String, i64>,
}

impl Adder {
    fn new(m: &Module) -> Adder {
        let mut known = HashMap::new();
        for (g, gd) in m.live() {
            if let Func::Prim(p) = &gd.func {
                known.entry(relax_ir::structural::prim_func(p)).or_insert(g);
            }
        }
        Adder { known, names: HashMap::new(), var_names: HashMap::new() }
    }

    /// `BlockBuilder::AddFunction`: an equal PrimFunc's global, or a new one.
    fn add(&mut self, m: &mut Module, func: relax_ir::PrimFunc, hint: &str, current: &str) -> Global {
        let fp = relax_ir::structural::prim_func(&func);
        if let Some(&g) = self.known.get(&fp) {
            return g;
        }
        let mut name = te::emit::fresh_name(&mut self.names, hint, false);
        while m.lookup(&name).is_some() || name == current {
            name = te::emit::fresh_name(&mut self.names, hint, false);
        }
        let g = m.add(name, Func::Prim(Box::new(func)));
        self.known.insert(fp, g);
        g
    }
}

/// Legalizes every Relax function of the module; returns true if anything changed.
pub fn legalize_module(m: &mut Module) -> bool {
    let mut adder = Adder::new(m);
    let globals: Vec<Global> = m.live().filter(|(_, g)| matches!(g.func, Func::Relax(_))).map(|(g, _)| g).collect();
    let mut changed = false;
    let mut targeted = false;
    for g in globals {
        let Some(mut f) = m.relax(g).cloned() else { continue };
        let current = m.globals[g].name.clone();
        let mut any = false;
        // Legalizing rewrites values in place and adds no bindings, so the list of
        // bindings stays valid.
        for (value, var) in rewrite::bindings_in_order(&f) {
            if let Some(cd) = constant_result(m, &f, value) {
                let dims: Vec<PrimExpr> = cd.shape.iter().flatten().map(|&d| f.pool.i64(d)).collect();
                let ty = f.pool.intern_ty(TyData::tensor(dims, cd.dtype));
                let c = m.constants.push(cd);
                f.exprs[value] = ExprData::Const(c);
                f.expr_ty.set(value, Some(ty));
                if let Some(v) = var {
                    rewrite::set_var_type(&mut f, v, ty);
                }
                any = true;
                continue;
            }
            if expand::expand(&mut f, value, &mut adder.var_names) {
                // `size` is now `R.prod` of new bindings, legalized below; the markers
                // are their argument.
                any = true;
            }
            if let ExprData::Call(call) = &f.exprs[value]
                && let ExprData::Op(OpRef::Known(id)) = &f.exprs[call.callee]
                && legalization(*id).is_none()
                && let Some(name) = unsupported::packed_name(*id)
            {
                let pure = id.def().pure;
                rewrite::packed(&mut f, value, name, pure);
                any = true;
                continue;
            }
            let ann = var.map(|v| f.vars[v].ty);
            let Some(p) = legalize_call(m, &f, value, ann) else { continue };
            let mut callee = adder.add(m, p.func.clone(), &p.name, &current);
            if let Some((kind, target)) = p.vdevice.as_ref().and_then(|v| vdevice_target(m, v)) {
                // TVM's `BindTarget`: a copy of the kernel with the device's target.
                let has = m.prim_func(callee).and_then(|pf| pf.attrs.get("target")).and_then(target_kind);
                if has.as_deref() != Some(kind.as_str()) {
                    let mut tf = m.prim_func(callee).expect("a PrimFunc").clone();
                    tf.attrs.set("target", target);
                    let name = format!("{}_{kind}", m.globals[callee].name);
                    callee = adder.add(m, tf, &name, &current);
                    targeted = true;
                }
            }
            rewrite::call_tir(&mut f, value, callee, p);
            any = true;
        }
        if any {
            rewrite::retype(&mut f);
        }
        if any {
            m.globals[g].func = Func::Relax(Box::new(f));
            changed = true;
        }
    }
    if targeted {
        // As TVM: kernels made for a device may leave the generic ones unused, so the
        // module goes through dead-code elimination.
        let _ = crate::dead_code_elimination::DeadCodeElimination.run(m, &mut PassContext::default());
    }
    changed
}

/// The target kind of a `target` attribute (`T.target({"kind": "cuda", ...})`,
/// `T.target("llvm -mcpu=...")`).
fn target_kind(v: &relax_ir::AttrValue) -> Option<String> {
    use relax_ir::AttrValue;
    match v {
        AttrValue::Target(inner) => target_kind(inner),
        AttrValue::Dict(kv) => kv.iter().find(|(k, _)| k == "kind").and_then(|(_, v)| v.as_str()).map(str::to_string),
        AttrValue::Str(s) => s.split_whitespace().next().map(str::to_string),
        _ => None,
    }
}

/// The target kind and `target` attribute of a virtual device of the module: the
/// `index`-th `I.vdevice` whose target has the device's kind.
fn vdevice_target(m: &Module, v: &relax_ir::VDevice) -> Option<(String, relax_ir::AttrValue)> {
    let info = m
        .vdevices
        .iter()
        .filter(|d| target_kind(&d.target).as_deref() == Some(v.kind.as_str()))
        .nth(v.index as usize)?;
    let target = match &info.target {
        t @ relax_ir::AttrValue::Target(_) => t.clone(),
        t => relax_ir::AttrValue::Target(Box::new(t.clone())),
    };
    Some((v.kind.clone(), target))
}
