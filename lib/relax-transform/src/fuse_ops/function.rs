//! Building the `Primitive` Relax function of one fusion group (TVM's `FunctionCreator`,
//! `algorithms.md` §2.6 steps 3–6).
//!
//! The bindings of a group are appended in block order ([`Creator::append`]); operands
//! defined outside the group become parameters, in first-use order, named after the
//! caller's variable (constants lifted as `param_0`, `param_1`, ...; a tuple used only
//! through items becomes one parameter per used item, `<tuple>_<index>`). Outputs are the
//! group's non-dataflow variables and the variables other groups use.
//!
//! [`Creator::build`] then writes the function in a fresh pool: parameters, one dataflow
//! block whose outputs are bound to new variables `gv`, `gv1`, ..., the single output or
//! a tuple as the result, a last parameter `tir_vars: R.Shape([...])` for the symbolic
//! variables the parameters do not define, and `{"Primitive": True}`. Every symbolic
//! variable is copied into the new function's own pool, so no variable is shared with
//! the caller.

use std::collections::{HashMap, HashSet};

use relax_ir::{
    AttrValue, Attrs, Binding, BindingKind, BlockData, Call, Constant, Expr, ExprData, FunctionNode, PrimExpr,
    RelaxFunction, SymVar, Ty, TyData, Var,
};

use super::graph::is_call_tir;

/// How a parameter's argument is identified (TVM compares argument objects).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKey {
    /// A variable.
    Var(Var),
    /// A module constant.
    Const(Constant),
    /// Any other leaf, by expression node.
    Expr(Expr),
}

/// What the caller passes for a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum CallerArg {
    /// The operand with this key (a use of the variable, the constant, or the leaf).
    Leaf(ArgKey, Expr),
    /// Item `index` of the tuple operand.
    Item(ArgKey, Expr, u32),
    /// `R.shape([...])` of the caller's symbolic variables.
    TirVars(Vec<SymVar>),
}

#[derive(Clone, Debug)]
struct Param {
    arg: CallerArg,
    name: String,
    /// The type, in the caller's pool (`None`: untyped, `R.Object`).
    ty: Option<Ty>,
}

/// The bindings of one group and what they need.
#[derive(Clone, Debug)]
pub struct Creator {
    /// The group's bindings, in block order (caller's).
    pub bindings: Vec<Binding>,
    /// The name hint: `fused` + `_<callee>` per call.
    pub name: String,
    params: Vec<Param>,
    defined: HashSet<Var>,
    /// Output variables, in result order.
    pub outputs: Vec<Var>,
    /// Tuple parameters used only through items: key and the items used, in order.
    partial: Vec<(ArgKey, Vec<u32>)>,
    n_const: usize,
}

/// The function built for a group, and how to call it.
#[derive(Debug)]
pub struct Built {
    /// The `Primitive` function.
    pub func: RelaxFunction,
    /// The caller's arguments, one per parameter.
    pub args: Vec<CallerArg>,
    /// The type of the call in the caller: each output's value type, a tuple for
    /// several (what deriving the call's type from the function's gives, without the
    /// round trip through the function's variables).
    pub call_ty: Vec<Ty>,
}

fn key_of(f: &RelaxFunction, e: Expr) -> ArgKey {
    match &f.exprs[e] {
        ExprData::Var(v) => ArgKey::Var(*v),
        ExprData::Const(c) => ArgKey::Const(*c),
        _ => ArgKey::Expr(e),
    }
}

fn is_tuple_ty(f: &RelaxFunction, e: Expr) -> bool {
    f.ty_of(e).is_some_and(|t| matches!(f.pool.ty(t), TyData::Tuple(_)))
}

impl Default for Creator {
    fn default() -> Creator {
        Creator {
            bindings: Vec::new(),
            name: "fused".to_string(),
            params: Vec::new(),
            defined: HashSet::new(),
            outputs: Vec::new(),
            partial: Vec::new(),
            n_const: 0,
        }
    }
}

impl Creator {
    /// An empty group (named `fused` until calls are appended).
    pub fn new() -> Creator {
        Creator::default()
    }

    /// `AppendBinding`: adds a binding of the group.
    pub fn append(&mut self, m: &relax_ir::Module, f: &RelaxFunction, bd: &Binding) {
        if bd.kind == BindingKind::Value {
            match &f.exprs[bd.value] {
                ExprData::Call(call) => self.append_call(m, f, call),
                ExprData::GetItem { tuple, index } => {
                    self.check_def(f, *tuple, true);
                    let key = key_of(f, *tuple);
                    if let Some((_, items)) = self.partial.iter_mut().find(|(k, _)| *k == key) {
                        items.push(*index);
                    }
                }
                _ => {}
            }
            self.defined.insert(bd.var);
            if !f.vars[bd.var].dataflow {
                self.add_output(bd.var);
            }
        }
        self.bindings.push(bd.clone());
    }

    fn append_call(&mut self, m: &relax_ir::Module, f: &RelaxFunction, call: &Call) {
        match &f.exprs[call.callee] {
            ExprData::Op(op) if is_call_tir(op) => {
                if let Some(&ExprData::Global(g)) = f.list(call.args).first().map(|&a| &f.exprs[a]) {
                    self.name.push('_');
                    self.name.push_str(&m.globals[g].name);
                }
                if let Some(&t) = f.list(call.args).get(1) {
                    let fields = match &f.exprs[t] {
                        ExprData::Tuple(fields) => f.list(fields).to_vec(),
                        _ => vec![t],
                    };
                    for a in fields {
                        self.check_def(f, a, true);
                    }
                }
            }
            callee => {
                match callee {
                    ExprData::Op(op) => {
                        self.name.push('_');
                        self.name.push_str(op.name());
                    }
                    ExprData::Global(g) => {
                        let n = &m.globals[*g].name;
                        self.name.push('_');
                        self.name.push_str(n.strip_prefix("fused_").unwrap_or(n));
                    }
                    _ => {}
                }
                for &a in f.list(call.args) {
                    match &f.exprs[a] {
                        ExprData::Tuple(fields) => {
                            for &x in f.list(fields) {
                                self.check_def(f, x, false);
                            }
                        }
                        _ => self.check_def(f, a, false),
                    }
                    if is_tuple_ty(f, a) {
                        let key = key_of(f, a);
                        self.partial.retain(|(k, _)| *k != key);
                    }
                }
            }
        }
    }

    /// `CheckDefAndUpdateParam`: makes `e` a parameter unless the group defines it, it is
    /// one already, or it is a constant shape or prim value (inlined). Operands of calls
    /// other than `call_tir` (`kernel` false: high-level ops) that are shapes, prim
    /// values, strings or dtypes are always inlined.
    fn check_def(&mut self, f: &RelaxFunction, e: Expr, kernel: bool) {
        let key = key_of(f, e);
        if self.params.iter().any(|p| matches!(p.arg, CallerArg::Leaf(k, _) if k == key)) {
            return;
        }
        if let ArgKey::Var(v) = key
            && self.defined.contains(&v)
        {
            return;
        }
        let name = match key {
            ArgKey::Var(v) => f.vars[v].name.clone(),
            _ => {
                self.n_const += 1;
                format!("param_{}", self.n_const - 1)
            }
        };
        let inline = match &f.exprs[e] {
            ExprData::Shape(dims) => !kernel || dims.iter().all(|&d| f.pool.free_vars(d).is_empty()),
            ExprData::Prim(p) => !kernel || f.pool.free_vars(*p).is_empty(),
            ExprData::Str(_) | ExprData::DType(_) => !kernel,
            // A scalar constant of a high-level op stays in the group: legalization folds
            // it into the kernel.
            ExprData::Const(_) => {
                !kernel && f.ty_of(e).and_then(|t| f.pool.ty(t).dims().map(<[_]>::is_empty)).unwrap_or(false)
            }
            _ => false,
        };
        if inline {
            return;
        }
        let ty = match key {
            ArgKey::Var(v) => Some(f.vars[v].ty),
            _ => f.ty_of(e),
        };
        self.params.push(Param { arg: CallerArg::Leaf(key, e), name, ty });
        if ty.is_some_and(|t| matches!(f.pool.ty(t), TyData::Tuple(_))) {
            self.partial.push((key, Vec::new()));
        }
    }

    /// Marks a variable of the group as an output (once).
    pub fn add_output(&mut self, v: Var) {
        if !self.outputs.contains(&v) {
            self.outputs.push(v);
        }
    }

    /// True when `v` is bound by a binding of the group.
    pub fn defines(&self, v: Var) -> bool {
        self.defined.contains(&v)
    }

    /// The bound variable of the group's last binding.
    pub fn last_var(&self) -> Option<Var> {
        self.bindings.last().map(|b| b.var)
    }

    /// `CreateFunction`: the `Primitive` function, or `None` when the group has no
    /// outputs (dead code).
    pub fn build(&self, f: &RelaxFunction) -> Option<Built> {
        if self.outputs.is_empty() {
            return None;
        }
        // Tuple parameters used only through items: one parameter per item.
        let mut params = self.params.clone();
        let mut item_params: HashMap<(ArgKey, u32), usize> = HashMap::new();
        for (key, items) in self.partial.iter().rev() {
            let Some(pi) = params.iter().position(|p| matches!(p.arg, CallerArg::Leaf(k, _) if k == *key)) else {
                continue;
            };
            let p = params.remove(pi);
            let CallerArg::Leaf(_, e) = p.arg else { continue };
            let fields = match p.ty.map(|t| f.pool.ty(t)) {
                Some(TyData::Tuple(fields)) => fields.clone(),
                _ => continue,
            };
            let mut seen = Vec::new();
            for &i in items {
                if seen.contains(&i) {
                    continue;
                }
                seen.push(i);
            }
            let new: Vec<Param> = seen
                .iter()
                .map(|&i| Param {
                    arg: CallerArg::Item(*key, e, i),
                    name: format!("{}_{i}", p.name),
                    ty: fields.get(i as usize).copied().or(p.ty),
                })
                .collect();
            for (k, np) in new.into_iter().enumerate() {
                params.insert(pi + k, np);
            }
        }
        for (i, p) in params.iter().enumerate() {
            if let CallerArg::Item(key, _, idx) = p.arg {
                item_params.insert((key, idx), i);
            }
        }

        // Symbolic variables the parameters do not define: a `tir_vars` parameter.
        let free = self.free_symbolic_vars(f, &params);

        let mut cx = Copier::new(f);
        let mut new_params = Vec::new();
        for p in &params {
            let ty = match p.ty {
                Some(t) => cx.ty(t),
                None => cx.to.pool.intern_ty(TyData::Object),
            };
            let v = cx.to.add_var(p.name.clone(), ty, false);
            new_params.push(v);
            match p.arg {
                CallerArg::Leaf(key, _) => {
                    cx.args.insert(key, v);
                }
                CallerArg::Item(..) | CallerArg::TirVars(_) => {}
            }
        }
        let mut args: Vec<CallerArg> = params.iter().map(|p| p.arg.clone()).collect();
        if !free.is_empty() {
            let dims: Vec<PrimExpr> = free.iter().map(|&v| cx.sym(v)).collect();
            let ty = cx.to.pool.intern_ty(TyData::shape(dims));
            let v = cx.to.add_var("tir_vars", ty, false);
            new_params.push(v);
            args.push(CallerArg::TirVars(free.clone()));
        }

        // The body: one dataflow block.
        let mut names = super::Names::default();
        let mut bindings = Vec::new();
        let mut outputs: Vec<Option<Var>> = vec![None; self.outputs.len()];
        let mut call_ty: Vec<Option<Ty>> = vec![None; self.outputs.len()];
        for bd in &self.bindings {
            if let ExprData::GetItem { tuple, index } = f.exprs[bd.value]
                && let Some(&pi) = item_params.get(&(key_of(f, tuple), index))
            {
                let pv = new_params[pi];
                cx.vars.insert(bd.var, pv);
                if let Some(oi) = self.outputs.iter().position(|&o| o == bd.var) {
                    outputs[oi] = Some(pv);
                    call_ty[oi] = params[pi].ty;
                }
                continue;
            }
            let value = cx.expr(bd.value);
            let vty = cx.to.ty_of(value).unwrap_or_else(|| cx.ty(f.vars[bd.var].ty));
            let kind = match &bd.kind {
                BindingKind::Value => BindingKind::Value,
                BindingKind::MatchCast(t) => BindingKind::MatchCast(cx.ty(*t)),
            };
            let nv = match self.outputs.iter().position(|&o| o == bd.var) {
                Some(oi) => {
                    let v = cx.to.add_var(names.fresh("gv"), vty, false);
                    outputs[oi] = Some(v);
                    call_ty[oi] = Some(f.ty_of(bd.value).unwrap_or(f.vars[bd.var].ty));
                    v
                }
                None => cx.to.add_var(f.vars[bd.var].name.clone(), vty, f.vars[bd.var].dataflow),
            };
            cx.vars.insert(bd.var, nv);
            bindings.push(Binding { var: nv, value, kind });
        }
        let outs: Vec<Var> = outputs.into_iter().flatten().collect();
        let to = &mut cx.to;
        let body = if outs.len() == 1 {
            to.use_var(outs[0])
        } else {
            let fields: Vec<Expr> = outs.iter().map(|&v| to.use_var(v)).collect();
            let tys: Vec<Ty> = outs.iter().map(|&v| to.vars[v].ty).collect();
            let t = to.pool.intern_ty(TyData::Tuple(tys));
            to.add_tuple(fields, Some(t))
        };
        let ret = to.ty_of(body).expect("typed result");
        let block = to.blocks.push(BlockData { dataflow: true, bindings });
        let mut attrs = Attrs::new();
        attrs.set("Primitive", AttrValue::Bool(true));
        let body = to.add_seq(vec![block], body);
        to.func = FunctionNode { params: new_params, ret, body, attrs, pure: true };
        let call_ty = call_ty.into_iter().flatten().collect();
        Some(Built { func: cx.to, args, call_ty })
    }

    /// `FreeSymbolicVars`: symbolic variables used by the function (parameter types, the
    /// values and types of the group's bindings) that no parameter defines as a whole
    /// dim or value, in first-use order.
    fn free_symbolic_vars(&self, f: &RelaxFunction, params: &[Param]) -> Vec<SymVar> {
        let mut defined: HashSet<SymVar> = HashSet::new();
        for p in params.iter().filter_map(|p| p.ty) {
            defining_vars(f, p, &mut defined);
        }
        let mut used = Vec::new();
        for p in params.iter().filter_map(|p| p.ty) {
            f.pool.ty_vars(p, &mut used);
        }
        for bd in &self.bindings {
            expr_vars(f, bd.value, &mut used);
            if let BindingKind::MatchCast(t) = bd.kind {
                f.pool.ty_vars(t, &mut used);
            }
        }
        used.into_iter().filter(|v| !defined.contains(v)).collect()
    }
}

/// The symbolic variables a type defines: bare dims and prim values.
pub fn defining_vars(f: &RelaxFunction, t: Ty, out: &mut HashSet<SymVar>) {
    match f.pool.ty(t) {
        TyData::Tensor { .. } | TyData::Shape { .. } => {
            for &d in f.pool.ty(t).dims().unwrap_or(&[]) {
                if let Some(v) = f.pool.as_var(d) {
                    out.insert(v);
                }
            }
        }
        TyData::Prim { value: Some(v), .. } => {
            if let Some(v) = f.pool.as_var(*v) {
                out.insert(v);
            }
        }
        TyData::Tuple(fields) => {
            for &x in fields {
                defining_vars(f, x, out);
            }
        }
        _ => {}
    }
}

/// The symbolic variables an expression mentions: in its operands, its type, the
/// `sinfo_args` of calls and the values of shapes and prim values.
fn expr_vars(f: &RelaxFunction, e: Expr, out: &mut Vec<SymVar>) {
    match &f.exprs[e] {
        ExprData::Call(c) => {
            for &t in &c.sinfo_args {
                f.pool.ty_vars(t, out);
            }
            for &a in f.list(c.args) {
                expr_vars(f, a, out);
            }
        }
        ExprData::Tuple(fields) => {
            for &x in f.list(fields) {
                expr_vars(f, x, out);
            }
        }
        ExprData::GetItem { tuple, .. } => expr_vars(f, *tuple, out),
        ExprData::Shape(dims) => {
            for &d in dims {
                f.pool.collect_vars(d, out);
            }
        }
        ExprData::Prim(p) => f.pool.collect_vars(*p, out),
        _ => {}
    }
    if let Some(t) = f.ty_of(e) {
        f.pool.ty_vars(t, out);
    }
}

/// Copies expressions of the caller into the new function.
struct Copier<'a> {
    from: &'a RelaxFunction,
    to: RelaxFunction,
    /// Caller variable → new variable.
    vars: HashMap<Var, Var>,
    /// Operands passed as arguments → their parameters.
    args: HashMap<ArgKey, Var>,
    /// Caller symbolic variable → its copy.
    syms: HashMap<SymVar, PrimExpr>,
}

impl<'a> Copier<'a> {
    fn new(from: &'a RelaxFunction) -> Copier<'a> {
        let to = RelaxFunction {
            pool: relax_ir::Pool::new(),
            vars: Default::default(),
            exprs: Default::default(),
            expr_ty: Default::default(),
            blocks: Default::default(),
            seqs: Default::default(),
            lists: Default::default(),
            // The body is set when the group's bindings are copied.
            func: from.func.clone(),
            spans: Default::default(),
        };
        Copier { from, to, vars: HashMap::new(), args: HashMap::new(), syms: HashMap::new() }
    }

    fn ty(&mut self, t: Ty) -> Ty {
        self.to.pool.import_ty(&self.from.pool, t, &mut self.syms)
    }

    fn prim(&mut self, e: PrimExpr) -> PrimExpr {
        self.to.pool.import_prim(&self.from.pool, e, &mut self.syms)
    }

    fn sym(&mut self, v: SymVar) -> PrimExpr {
        if let Some(&img) = self.syms.get(&v) {
            return img;
        }
        let nv = self.to.pool.vars.push(self.from.pool.vars[v].clone());
        let img = self.to.pool.var_ref(nv);
        self.syms.insert(v, img);
        img
    }

    fn expr(&mut self, e: Expr) -> Expr {
        let from = self.from;
        let key = key_of(from, e);
        if let Some(&p) = self.args.get(&key) {
            return self.to.use_var(p);
        }
        let data = match &from.exprs[e] {
            ExprData::Var(v) => {
                let nv = self.vars.get(v).copied().unwrap_or_else(|| {
                    // A variable of the caller that is neither a parameter nor bound in
                    // the group (cannot happen for groups of one block).
                    let ty = self.ty(from.vars[*v].ty);
                    let nv = self.to.add_var(from.vars[*v].name.clone(), ty, false);
                    self.vars.insert(*v, nv);
                    nv
                });
                return self.to.use_var(nv);
            }
            ExprData::Call(c) => {
                let callee = self.expr(c.callee);
                let args: Vec<Expr> = from.list(c.args).iter().map(|&a| self.expr(a)).collect();
                let sinfo_args = c.sinfo_args.iter().map(|&t| self.ty(t)).collect();
                let args = self.to.new_list(args);
                ExprData::Call(Call { callee, args, attrs: c.attrs.clone(), sinfo_args })
            }
            ExprData::Tuple(fields) => {
                let fields: Vec<Expr> = from.list(fields).iter().map(|&x| self.expr(x)).collect();
                ExprData::Tuple(self.to.new_list(fields))
            }
            ExprData::GetItem { tuple, index } => ExprData::GetItem { tuple: self.expr(*tuple), index: *index },
            ExprData::Shape(dims) => ExprData::Shape(dims.iter().map(|&d| self.prim(d)).collect()),
            ExprData::Prim(p) => ExprData::Prim(self.prim(*p)),
            other => other.clone(),
        };
        let ty = from.ty_of(e).map(|t| self.ty(t));
        self.to.add_expr(data, ty)
    }
}
