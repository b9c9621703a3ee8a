//! Check 3 for Relax functions: types present, SSA and scoping of variables and symbolic
//! variables, dataflow blocks, A-normal form. Call-specific rules live in
//! [`super::relax_calls`].
//!
//! One walk visits the body in order, keeping a "visible" state per variable and a trail
//! of definitions to close when a scope (an `if` branch, a local function, a dataflow
//! block for its dataflow variables) ends, so the walk is linear in the function's size.

use relax_entity::EntityRef;

use crate::entities::Seq;
use crate::entities::{Block, Expr, Global, SymVar, Ty, Var};
use crate::module::Module;
use crate::relax::{Binding, BindingKind, ExprData, FunctionNode, RelaxFunction};
use crate::ty::TyData;

use super::error::{Entity, VerifyError};
use super::facts::{self, PrimScan, TyFacts};
use super::handles::expr_children;
use super::names;

/// Nesting of `if`s, local functions and tuples beyond this is reported, not walked.
const MAX_DEPTH: u32 = 500;

/// Why a variable stopped being visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Closer {
    /// The `if` branch that defined it ended.
    Branch,
    /// The local function that defined it ended.
    Function,
    /// The dataflow block that defined it ended.
    Dataflow,
}

/// The state of a variable during the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VState {
    /// Not defined yet.
    Undefined,
    /// Defined and in scope.
    Visible,
    /// Defined in a scope that has ended.
    Closed(Closer),
}

/// One function (top-level or local) being walked, for the purity rules.
pub(super) struct Frame {
    /// Its name in messages.
    pub name: String,
    /// True when it is pure and not forced pure: impure calls are errors.
    pub check_pure: bool,
    /// How it refers to itself (recursive calls are not impure calls).
    pub self_global: Option<Global>,
    /// The binding variable of a local function.
    pub self_var: Option<Var>,
}

/// The walker of one Relax function.
pub(super) struct RelaxChecker<'a> {
    pub m: &'a Module,
    pub g: Global,
    pub f: &'a RelaxFunction,
    pub fname: &'a str,
    pub out: &'a mut Vec<VerifyError>,
    pub tyf: Vec<TyFacts>,
    pub scan: PrimScan,
    pub vstate: Vec<VState>,
    /// Variables defined somewhere in the function (for messages).
    pub var_anywhere: Vec<bool>,
    /// The dataflow block that defined each dataflow variable.
    pub df_block: Vec<Option<Block>>,
    /// Binding variables of local functions, visible inside their own body.
    pub recur: Vec<bool>,
    pub trail: Vec<Var>,
    pub df_trail: Vec<Var>,
    pub cur_df: Option<Block>,
    pub sstate: Vec<VState>,
    /// Symbolic variables defined somewhere in the function (for messages).
    pub sym_anywhere: Vec<bool>,
    pub sym_trail: Vec<SymVar>,
    /// The statement (binding, parameter, signature) each symbolic variable was last
    /// reported in, so that one statement reports a variable once.
    pub sym_reported: Vec<u32>,
    /// Counts statements for `sym_reported`.
    pub stmt_no: u32,
    pub visited: Vec<bool>,
    /// Sequences already walked (each may appear in one place only).
    pub seqs_visited: Vec<bool>,
    pub depth: u32,
    pub frames: Vec<Frame>,
}

/// Runs the Relax rules on a function whose handles are valid.
pub(super) fn check_relax_function(m: &Module, g: Global, fname: &str, f: &RelaxFunction, out: &mut Vec<VerifyError>) {
    let mut scan = PrimScan::new(&f.pool);
    let tyf = facts::ty_facts(&f.pool, &mut scan);
    let mut cx = RelaxChecker {
        m,
        g,
        f,
        fname,
        out,
        tyf,
        scan,
        vstate: vec![VState::Undefined; f.vars.len()],
        var_anywhere: vec![false; f.vars.len()],
        df_block: vec![None; f.vars.len()],
        recur: vec![false; f.vars.len()],
        trail: Vec::new(),
        df_trail: Vec::new(),
        cur_df: None,
        sstate: vec![VState::Undefined; f.pool.vars.len()],
        sym_anywhere: vec![false; f.pool.vars.len()],
        sym_trail: Vec::new(),
        sym_reported: vec![0; f.pool.vars.len()],
        stmt_no: 1,
        visited: vec![false; f.exprs.len()],
        seqs_visited: vec![false; f.seqs.len()],
        depth: 0,
        frames: Vec::new(),
    };
    cx.find_definitions();
    cx.walk_function(&f.func, fname.to_string(), Some(g), None, Entity::Function);
}

impl RelaxChecker<'_> {
    /// Reports an error in this function.
    pub(super) fn err(&mut self, entity: Entity, message: String) -> &mut VerifyError {
        self.out.push(VerifyError::new(Some(self.g), entity, message));
        let n = self.out.len();
        &mut self.out[n - 1]
    }

    /// The type facts of `t`.
    pub(super) fn tf(&self, t: Ty) -> &TyFacts {
        facts::of(&self.tyf, t)
    }

    /// Marks every variable and symbolic variable that some parameter or binding defines,
    /// so that messages can tell "defined later" from "never defined".
    fn find_definitions(&mut self) {
        let f = self.f;
        let mark_fn = |cx: &mut Self, node: &FunctionNode| {
            for &p in &node.params {
                cx.var_anywhere[p.index()] = true;
                let defs = cx.tf(f.vars[p].ty).defs.clone();
                for v in defs {
                    cx.sym_anywhere[v.index()] = true;
                }
            }
        };
        mark_fn(self, &f.func);
        let mut seen = vec![false; f.exprs.len()];
        let mut stack: Vec<Expr> = Vec::new();
        let mut blocks: Vec<Block> = f.body().blocks.clone();
        let mut kids = Vec::new();
        super::handles::seq_children(f, f.func.body, &mut stack);
        loop {
            for b in blocks.drain(..) {
                for bd in &f.blocks[b].bindings {
                    self.var_anywhere[bd.var.index()] = true;
                    if let BindingKind::MatchCast(t) = bd.kind {
                        for &v in &facts::of(&self.tyf, t).defs {
                            self.sym_anywhere[v.index()] = true;
                        }
                    }
                }
            }
            let Some(e) = stack.pop() else { break };
            if std::mem::replace(&mut seen[e.index()], true) {
                continue;
            }
            if let ExprData::Function(node) = &f.exprs[e] {
                mark_fn(self, node);
            }
            for s in f.exprs[e].nested_seqs() {
                blocks.extend(f.seq(s).blocks.iter().copied());
            }
            kids.clear();
            expr_children(f, e, &mut kids);
            stack.extend(kids.iter().copied());
        }
    }

    /// Walks a function (top-level or local): parameters, return type, body.
    fn walk_function(
        &mut self,
        node: &FunctionNode,
        name: String,
        self_global: Option<Global>,
        self_var: Option<Var>,
        at: Entity,
    ) {
        let f = self.f;
        let var_mark = self.trail.len();
        let sym_mark = self.sym_trail.len();
        let saved_df = self.cur_df.take();
        let force_pure = node.attrs.get("relax.force_pure").and_then(|v| v.as_bool()).unwrap_or(false);
        if force_pure && !node.pure {
            self.err(at, format!("function `{name}` has `relax.force_pure` set but is not pure"))
                .notes
                .push("`relax.force_pure` may only be set on pure functions".to_string());
        }
        // Parameters: each defined once, never a dataflow variable.
        for &p in &node.params {
            if f.vars[p].dataflow {
                let pn = names::var(f, p);
                self.err(Entity::Var(p), format!("dataflow variable `{pn}` is a parameter of `{name}`"));
            }
            self.define_var(p, None);
        }
        // Symbolic variables: bare dims of every parameter define, then every use is checked.
        for &p in &node.params {
            let t = f.vars[p].ty;
            self.define_syms(t);
        }
        for &p in &node.params {
            let t = f.vars[p].ty;
            self.stmt_no += 1;
            self.check_ty_uses(t, Entity::Var(p));
        }
        self.stmt_no += 1;
        // The return type sees only what the parameters define.
        self.check_ret_ty(node.ret, &name, at);
        self.frames.push(Frame { name, check_pure: node.pure && !force_pure, self_global, self_var });
        self.walk_seq(node.body, "the result of a function");
        let name = self.frames.last().map(|fr| fr.name.clone()).unwrap_or_default();
        self.check_body_ty(node.body, node.ret, &name);
        self.frames.pop();
        self.close_vars(var_mark, Closer::Function);
        self.close_syms(sym_mark);
        self.cur_df = saved_df;
    }

    fn check_ret_ty(&mut self, t: Ty, name: &str, at: Entity) {
        let tf = self.tf(t);
        let (uses, vars) = (tf.uses.clone(), tf.vars.clone());
        for v in uses {
            if self.sstate[v.index()] != VState::Visible {
                let sn = names::sym(&self.f.pool, v);
                self.err(
                    at,
                    format!("symbolic variable `{sn}` in the return type of `{name}` is not defined by its parameters"),
                )
                .notes
                .push("callers derive the return type from the arguments".to_string());
            }
        }
        for v in vars {
            self.use_var(v, at);
        }
    }

    /// Walks a sequence: its blocks in order, then its result (a leaf).
    fn walk_seq(&mut self, s: Seq, result_what: &str) {
        if std::mem::replace(&mut self.seqs_visited[s.index()], true) {
            self.err(Entity::Function, format!("sequence `{s:?}` appears in more than one place"))
                .notes
                .push("each `if` branch and function body is a sequence of its own".to_string());
            return;
        }
        let seq = &self.f.seqs[s];
        for &b in &seq.blocks {
            self.walk_block(b);
        }
        self.require_leaf(seq.body, result_what);
        self.walk_expr(seq.body, None);
    }

    fn walk_block(&mut self, b: Block) {
        let data = &self.f.blocks[b];
        let df_mark = self.df_trail.len();
        if data.dataflow {
            self.cur_df = Some(b);
        }
        for bd in &data.bindings {
            self.walk_binding(bd, b, data.dataflow);
        }
        if data.dataflow {
            while self.df_trail.len() > df_mark {
                if let Some(v) = self.df_trail.pop() {
                    self.vstate[v.index()] = VState::Closed(Closer::Dataflow);
                }
            }
            self.cur_df = None;
        }
    }

    fn walk_binding(&mut self, bd: &Binding, b: Block, dataflow: bool) {
        let f = self.f;
        self.stmt_no += 1;
        let value = &f.exprs[bd.value];
        if dataflow && matches!(value, ExprData::If { .. }) {
            let vn = names::var(f, bd.var);
            self.err(Entity::Expr(bd.value), format!("`if` binding `{vn}` is not allowed in a dataflow block"));
        }
        let is_fn = matches!(value, ExprData::Function(_));
        if is_fn {
            self.recur[bd.var.index()] = true;
        }
        self.walk_expr(bd.value, Some(bd.var));
        if is_fn {
            self.recur[bd.var.index()] = false;
        }
        if let BindingKind::MatchCast(t) = bd.kind {
            self.check_match_cast(bd, t);
            self.define_syms(t);
            self.check_ty_uses(t, Entity::Var(bd.var));
        }
        let vd = &f.vars[bd.var];
        if vd.dataflow && !dataflow {
            let vn = names::var(f, bd.var);
            self.err(Entity::Var(bd.var), format!("dataflow variable `{vn}` is defined outside a dataflow block"));
        }
        self.define_var(bd.var, if dataflow { Some(b) } else { None });
        self.check_ty_uses(vd.ty, Entity::Var(bd.var));
    }

    /// A match_cast type must be of the value's kind (or either is `R.Object`), and its
    /// variable has exactly the cast's type (the text annotates it with that type, and
    /// TVM's parser, like relax's, rejects any other annotation).
    fn check_match_cast(&mut self, bd: &Binding, t: Ty) {
        let pool = &self.f.pool;
        if let Some(vd) = self.f.vars.get(bd.var)
            && vd.ty != t
        {
            let vn = names::var(self.f, bd.var);
            let (have, cast) = (names::ty(pool, vd.ty), names::ty(pool, t));
            self.err(
                Entity::Var(bd.var),
                format!("match cast variable `{vn}` has type `{have}`, not the type it casts to, `{cast}`"),
            );
        }
        let Some(vt) = self.f.ty_of(bd.value) else { return };
        let (a, b) = (pool.ty(vt), pool.ty(t));
        if matches!(a, TyData::Object) || matches!(b, TyData::Object) {
            return;
        }
        if std::mem::discriminant(a) != std::mem::discriminant(b) {
            let (found, expected) = (names::ty(pool, t), names::ty(pool, vt));
            self.err(
                Entity::Var(bd.var),
                format!(
                    "expected a `R.match_cast` type of the value's kind `{}`, found `{found}`",
                    names::ty_kind(pool, vt)
                ),
            )
            .notes
            .push(format!("the value has type `{expected}`"));
        }
    }

    /// Defines a Relax variable; reports a second definition.
    fn define_var(&mut self, v: Var, dataflow_block: Option<Block>) {
        let i = v.index();
        if self.vstate[i] != VState::Undefined {
            let vn = names::var(self.f, v);
            self.err(Entity::Var(v), format!("variable `{vn}` is defined more than once"));
            if self.vstate[i] == VState::Visible {
                return;
            }
        }
        self.vstate[i] = VState::Visible;
        if self.f.vars[v].dataflow && dataflow_block.is_some() {
            self.df_block[i] = dataflow_block;
            self.df_trail.push(v);
        } else {
            self.trail.push(v);
        }
    }

    fn close_vars(&mut self, mark: usize, closer: Closer) {
        while self.trail.len() > mark {
            if let Some(v) = self.trail.pop() {
                self.vstate[v.index()] = VState::Closed(closer);
            }
        }
    }

    fn close_syms(&mut self, mark: usize) {
        while self.sym_trail.len() > mark {
            if let Some(v) = self.sym_trail.pop() {
                self.sstate[v.index()] = VState::Closed(Closer::Branch);
            }
        }
    }

    /// A use of a Relax variable at `at`.
    pub(super) fn use_var(&mut self, v: Var, at: Entity) {
        let f = self.f;
        let i = v.index();
        let vn = names::var(f, v);
        let dataflow = f.vars[v].dataflow;
        match self.vstate[i] {
            VState::Visible => {
                if dataflow && self.df_block[i].is_some() && self.df_block[i] != self.cur_df {
                    self.err(at, format!("dataflow variable `{vn}` is used outside its dataflow block"));
                }
            }
            _ if self.recur[i] => {}
            VState::Closed(Closer::Dataflow) => {
                self.err(at, format!("dataflow variable `{vn}` is used outside its dataflow block"))
                    .notes
                    .push("only variables named in `R.output` are visible after a dataflow block".to_string());
            }
            VState::Closed(Closer::Branch) => {
                self.err(at, format!("variable `{vn}` is used outside the `if` branch that defines it"));
            }
            VState::Closed(Closer::Function) => {
                self.err(at, format!("variable `{vn}` is used outside the local function that defines it"));
            }
            VState::Undefined if self.var_anywhere[i] => {
                self.err(at, format!("variable `{vn}` is used before it is defined"));
            }
            VState::Undefined => {
                let fname = self.fname;
                self.err(at, format!("variable `{vn}` is not defined in function `{fname}`"));
            }
        }
    }

    /// Defines the symbolic variables at definable positions of `t` not yet visible.
    fn define_syms(&mut self, t: Ty) {
        for k in 0..self.tf(t).defs.len() {
            let v = self.tf(t).defs[k];
            if self.sstate[v.index()] != VState::Visible {
                self.sstate[v.index()] = VState::Visible;
                self.sym_trail.push(v);
            }
        }
    }

    /// Checks that every symbolic and Relax variable `t` uses is visible.
    pub(super) fn check_ty_uses(&mut self, t: Ty, at: Entity) {
        for k in 0..self.tf(t).uses.len() {
            let v = self.tf(t).uses[k];
            self.use_sym(v, at);
        }
        for k in 0..self.tf(t).vars.len() {
            let v = self.tf(t).vars[k];
            self.use_var(v, at);
        }
    }

    /// A use of a symbolic variable.
    pub(super) fn use_sym(&mut self, v: SymVar, at: Entity) {
        let i = v.index();
        if self.sstate[i] == VState::Visible
            || std::mem::replace(&mut self.sym_reported[i], self.stmt_no) == self.stmt_no
        {
            return;
        }
        let sn = names::sym(&self.f.pool, v);
        match self.sstate[i] {
            VState::Visible => {}
            VState::Closed(_) => {
                self.err(at, format!("symbolic variable `{sn}` is used outside the scope that defines it"));
            }
            VState::Undefined if self.sym_anywhere[i] => {
                self.err(at, format!("symbolic variable `{sn}` is used before it is defined"))
                    .notes
                    .push("a symbolic variable is defined by a parameter annotation or by `R.match_cast`".to_string());
            }
            VState::Undefined => {
                let fname = self.fname;
                self.err(at, format!("symbolic variable `{sn}` is not defined in function `{fname}`"))
                    .notes
                    .push("a symbolic variable is defined by a parameter annotation or by `R.match_cast`".to_string());
            }
        }
    }

    /// Reports `e` if it is not a leaf (what ANF allows as operands).
    pub(super) fn require_leaf(&mut self, e: Expr, what: &str) {
        let non_leaf = matches!(
            self.f.exprs[e],
            ExprData::Call(_) | ExprData::GetItem { .. } | ExprData::If { .. } | ExprData::Function(_)
        );
        if non_leaf {
            let d = names::describe(self.m, self.f, e);
            self.err(Entity::Expr(e), format!("expected a leaf expression as {what}, found {d}")).notes.push(
                "in A-normal form only binding values may be calls, `if`s, item accesses or functions".to_string(),
            );
        }
    }

    /// Walks an expression; `bound_to` is the variable of the binding whose value it is.
    pub(super) fn walk_expr(&mut self, e: Expr, bound_to: Option<Var>) {
        let f = self.f;
        let data = &f.exprs[e];
        let compound = matches!(
            data,
            ExprData::Call(_)
                | ExprData::Tuple(_)
                | ExprData::GetItem { .. }
                | ExprData::If { .. }
                | ExprData::Function(_)
        );
        if compound {
            if std::mem::replace(&mut self.visited[e.index()], true) {
                if matches!(data, ExprData::If { .. } | ExprData::Function(_)) {
                    let d = names::describe(self.m, f, e);
                    self.err(Entity::Expr(e), format!("{d} appears in more than one place"))
                        .notes
                        .push("the variables it defines would be defined twice".to_string());
                }
                return;
            }
            if self.depth >= MAX_DEPTH {
                self.err(Entity::Expr(e), format!("expressions are nested more than {MAX_DEPTH} levels deep"));
                return;
            }
        }
        // Every expression but an operator has a type, and its variables are visible.
        match f.ty_of(e) {
            None if !matches!(data, ExprData::Op(_)) => {
                let d = names::describe(self.m, f, e);
                self.err(Entity::Expr(e), format!("{d} has no type"));
            }
            Some(t) => self.check_ty_uses(t, Entity::Expr(e)),
            None => {}
        }
        self.depth += 1;
        match data {
            ExprData::Var(v) => self.use_var(*v, Entity::Expr(e)),
            ExprData::Global(g) => self.check_global_ref(e, *g),
            ExprData::Op(_) | ExprData::ExternFunc(_) | ExprData::Str(_) | ExprData::DType(_) | ExprData::Const(_) => {}
            ExprData::Shape(dims) => {
                for &d in dims {
                    self.check_prim_uses(d, Entity::Expr(e));
                }
            }
            ExprData::Prim(p) => self.check_prim_uses(*p, Entity::Expr(e)),
            ExprData::Tuple(fields) => {
                for (i, &x) in f.list(*fields).iter().enumerate() {
                    self.require_leaf(x, &format!("field {i} of a tuple"));
                    self.walk_expr(x, None);
                }
            }
            ExprData::GetItem { tuple, index } => {
                self.require_leaf(*tuple, "the tuple of an item access");
                self.walk_expr(*tuple, None);
                self.check_get_item(e, *tuple, *index);
            }
            ExprData::Call(call) => {
                let callee_name = names::callee(self.m, f, call.callee);
                self.require_leaf(call.callee, "the callee of a call");
                self.walk_expr(call.callee, None);
                for (i, &a) in f.list(call.args).iter().enumerate() {
                    self.require_leaf(a, &format!("argument {i} of `{callee_name}`"));
                    self.walk_expr(a, None);
                }
                for &t in &call.sinfo_args {
                    self.check_ty_uses(t, Entity::Expr(e));
                }
                self.check_call(e, call, bound_to);
            }
            ExprData::If { cond, then_branch, else_branch } => {
                self.require_leaf(*cond, "the condition of an `if`");
                self.walk_expr(*cond, None);
                self.check_if_cond(*cond);
                for &branch in [then_branch, else_branch] {
                    let (vm, sm) = (self.trail.len(), self.sym_trail.len());
                    self.walk_seq(branch, "the result of an `if` branch");
                    self.close_vars(vm, Closer::Branch);
                    self.close_syms(sm);
                }
            }
            ExprData::Function(node) => {
                let name = bound_to.map_or_else(|| format!("{e:?}"), |v| names::var(f, v));
                self.walk_function(node, name, None, bound_to, Entity::Expr(e));
            }
        }
        self.depth -= 1;
    }

    fn check_prim_uses(&mut self, p: crate::entities::PrimExpr, at: Entity) {
        let facts = self.scan.facts(&self.f.pool, p);
        for &v in &facts.vars {
            self.use_sym(v, at);
        }
    }

    fn check_global_ref(&mut self, e: Expr, g: Global) {
        if matches!(self.m.globals[g].func, crate::module::Func::Removed) {
            let gn = names::global(self.m, g);
            self.err(Entity::Expr(e), format!("`{gn}` refers to a removed function"));
        }
    }

    fn check_get_item(&mut self, e: Expr, tuple: Expr, index: u32) {
        let pool = &self.f.pool;
        let Some(t) = self.f.ty_of(tuple) else { return };
        match pool.ty(t) {
            TyData::Tuple(fields) if index as usize >= fields.len() => {
                let n = fields.len();
                let d = names::describe(self.m, self.f, tuple);
                self.err(Entity::Expr(e), format!("tuple index {index} is out of range for {d} with {n} fields"));
            }
            TyData::Tuple(_) | TyData::Object => {}
            _ => {
                let found = names::ty(pool, t);
                self.err(Entity::Expr(e), format!("expected a tuple in an item access, found `{found}`"));
            }
        }
    }

    fn check_if_cond(&mut self, cond: Expr) {
        let pool = &self.f.pool;
        let Some(t) = self.f.ty_of(cond) else { return };
        if !matches!(pool.ty(t), TyData::Tensor { .. } | TyData::Prim { .. } | TyData::Object) {
            let found = names::ty(pool, t);
            self.err(Entity::Expr(cond), format!("expected an `if` condition of tensor or prim type, found `{found}`"));
        }
    }
}
