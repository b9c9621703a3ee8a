//! Check 3, calls: purity (dataflow blocks and pure functions), arity of calls to Relax
//! functions and PrimFuncs, and the DPS calls (`call_tir`, `call_tir_inplace`,
//! `call_tir_with_grad`, `call_dps_packed`): callee kind, argument count against the
//! PrimFunc's parameters, `out_sinfo`, `tir_vars`, `inplace_indices`, and the type of the
//! variable the call is bound to.

use crate::entities::{Expr, Global, Ty, Var};
use crate::module::Func;
use crate::op::OpRef;
use crate::op::ops;
use crate::pool::Pool;
use crate::relax::{Call, ExprData};
use crate::ty::{TensorShape, TyData};

use super::error::Entity;
use super::names;
use super::relax_rules::RelaxChecker;

/// `1 argument`, `2 arguments`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
}

impl RelaxChecker<'_> {
    /// All call rules for the call `e`, bound to `bound_to` when it is a binding value.
    pub(super) fn check_call(&mut self, e: Expr, call: &Call, bound_to: Option<Var>) {
        self.check_purity(e, call);
        let f = self.f;
        match &f.exprs[call.callee] {
            ExprData::Op(op) => match op.id() {
                Some(ops::CALL_TIR | ops::CALL_TIR_INPLACE | ops::CALL_TIR_WITH_GRAD) => {
                    self.check_call_tir(e, call, op, bound_to)
                }
                Some(ops::CALL_DPS_PACKED) => self.check_dps_packed(e, call, op, bound_to),
                _ => {}
            },
            ExprData::Global(g) => self.check_global_call(e, call, *g),
            ExprData::Var(v) => {
                if let TyData::Callable { params: Some(ps), .. } = f.pool.ty(f.vars[*v].ty) {
                    let n = ps.len();
                    self.check_arity(e, self.f.list(call.args).len(), n, &names::var(f, *v));
                }
            }
            ExprData::ExternFunc(_)
            | ExprData::Call(_)
            | ExprData::If { .. }
            | ExprData::GetItem { .. }
            | ExprData::Function(_) => {}
            _ => {
                let d = names::describe(self.m, f, call.callee);
                self.err(Entity::Expr(e), format!("expected a function as the callee of a call, found {d}"));
            }
        }
    }

    fn check_arity(&mut self, e: Expr, found: usize, expected: usize, callee: &str) {
        if found != expected {
            let passes = plural(found, "argument");
            self.err(Entity::Expr(e), format!("call to `{callee}` passes {passes}, expected {expected}"));
        }
    }

    fn check_global_call(&mut self, e: Expr, call: &Call, g: Global) {
        let n = match &self.m.globals[g].func {
            Func::Relax(rf) => rf.func.params.len(),
            Func::Prim(pf) => pf.params.len(),
            Func::Extern(_) | Func::Unresolved | Func::Removed => return,
        };
        let gn = names::global(self.m, g);
        self.check_arity(e, self.f.list(call.args).len(), n, &gn);
    }

    /// Impure calls are errors in dataflow blocks and in pure, not force-pure functions.
    fn check_purity(&mut self, e: Expr, call: &Call) {
        let in_dataflow = self.cur_df.is_some();
        let check_pure = self.frames.last().is_some_and(|fr| fr.check_pure);
        if !in_dataflow && !check_pure {
            return;
        }
        let Some(desc) = self.impure_callee(call.callee) else { return };
        if in_dataflow {
            self.err(Entity::Expr(e), format!("impure call to `{desc}` in a dataflow block"))
                .notes
                .push("dataflow blocks may only contain pure calls".to_string());
        }
        if check_pure {
            let name = self.frames.last().map(|fr| fr.name.clone()).unwrap_or_default();
            self.err(Entity::Expr(e), format!("pure function `{name}` contains an impure call to `{desc}`"))
                .notes
                .push("declare it `@R.function(pure=False)` or set the attribute `relax.force_pure`".to_string());
        }
    }

    /// The name of the callee when calling it is impure; `None` when pure or unknown.
    fn impure_callee(&self, callee: Expr) -> Option<String> {
        let f = self.f;
        let frame = self.frames.last();
        let callable_pure = |pool: &Pool, t: Option<Ty>| match t.map(|t| pool.ty(t)) {
            Some(TyData::Callable { pure, .. }) => *pure,
            _ => false,
        };
        match &f.exprs[callee] {
            ExprData::Op(op) => op.def().filter(|d| !d.pure).map(|_| names::op(op)),
            ExprData::ExternFunc(s) => {
                (!callable_pure(&f.pool, f.ty_of(callee))).then(|| format!("R.call_packed(\"{s}\")"))
            }
            ExprData::Global(g) => {
                if frame.is_some_and(|fr| fr.self_global == Some(*g)) {
                    return None;
                }
                let impure = match &self.m.globals[*g].func {
                    Func::Relax(rf) => !rf.func.pure,
                    Func::Prim(_) => true,
                    Func::Extern(ef) => !callable_pure(&ef.pool, ef.ty),
                    Func::Unresolved | Func::Removed => false,
                };
                impure.then(|| names::global(self.m, *g))
            }
            ExprData::Var(v) => {
                if frame.is_some_and(|fr| fr.self_var == Some(*v)) {
                    return None;
                }
                match f.pool.ty(f.vars[*v].ty) {
                    TyData::Callable { pure: false, .. } => Some(names::var(f, *v)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `call_tir`, `call_tir_inplace`, `call_tir_with_grad`.
    fn check_call_tir(&mut self, e: Expr, call: &Call, op: &OpRef, bound_to: Option<Var>) {
        let (m, f) = (self.m, self.f);
        let on = names::op(op);
        let at = Entity::Expr(e);
        if !(2..=3).contains(&self.f.list(call.args).len()) {
            let n = self.f.list(call.args).len();
            self.err(at, format!("`{on}` takes 2 or 3 arguments, found {n}"));
            return;
        }
        let callee = self.f.list(call.args)[0];
        let prim = match &f.exprs[callee] {
            ExprData::Global(g) => match &m.globals[*g].func {
                Func::Prim(pf) => Some((pf, names::global(m, *g))),
                Func::Unresolved | Func::Removed => None,
                Func::Relax(_) => {
                    let gn = names::global(m, *g);
                    self.err(at, format!("expected a PrimFunc as the callee of `{on}`, found Relax function `{gn}`"));
                    None
                }
                Func::Extern(_) => {
                    let gn = names::global(m, *g);
                    self.err(at, format!("expected a PrimFunc as the callee of `{on}`, found extern function `{gn}`"));
                    None
                }
            },
            _ => {
                let d = names::describe(m, f, callee);
                self.err(at, format!("expected a PrimFunc global as the callee of `{on}`, found {d}"));
                None
            }
        };
        let n_in = self.tuple_len(e, self.f.list(call.args)[1], &on);
        let n_out = self.out_count(e, call, &on);
        // Outputs of `call_tir_inplace` that reuse an input are not passed again.
        let n_passed_out = match call.attrs.get("inplace_indices").and_then(|v| v.as_int_list()) {
            Some(indices) if op.is(ops::CALL_TIR_INPLACE) => {
                n_out.map(|o| o.saturating_sub(indices.iter().filter(|&&i| i >= 0).count()))
            }
            _ => n_out,
        };
        let n_tir = match self.f.list(call.args).get(2) {
            Some(&s) => self.shape_len(e, s, &on),
            None => Some(0),
        };
        let np = prim.as_ref().map(|(pf, _)| pf.params.len());
        if let (Some((pf, gn)), Some(a), Some(o), Some(t)) = (&prim, n_in, n_passed_out, n_tir)
            && a + o + t == pf.params.len()
            && !op.is(ops::CALL_TIR_INPLACE)
            && let [out] = call.sinfo_args.as_slice()
        {
            self.check_dps_outputs(e, &on, (pf, gn), a, *out);
        }
        if let (Some((_, gn)), Some(np), Some(a), Some(o), Some(t)) = (&prim, np, n_in, n_passed_out, n_tir)
            && a + o + t != np
        {
            let passes = plural(a + o + t, "argument");
            self.err(at, format!("call to `{gn}` passes {passes}, expected {np}")).notes.push(format!(
                "{} (scalars in the argument tuple included) + {} + {t} `tir_vars`, against the {} of `{gn}`",
                plural(a, "input"),
                plural(o, "output"),
                plural(np, "parameter")
            ));
        }
        if op.is(ops::CALL_TIR_INPLACE) {
            self.check_inplace(e, call, n_in, n_out, &on);
        }
        if let (Some(v), [out]) = (bound_to, call.sinfo_args.as_slice()) {
            self.check_bound_ty(v, *out, &on);
        }
    }

    /// `call_dps_packed`: an extern callee, a tuple of arguments, one `out_sinfo`.
    fn check_dps_packed(&mut self, e: Expr, call: &Call, op: &OpRef, bound_to: Option<Var>) {
        let (m, f) = (self.m, self.f);
        let on = names::op(op);
        let at = Entity::Expr(e);
        if self.f.list(call.args).len() != 2 {
            let n = self.f.list(call.args).len();
            self.err(at, format!("`{on}` takes 2 arguments, found {n}"));
            return;
        }
        let callee = self.f.list(call.args)[0];
        let ok = match &f.exprs[callee] {
            ExprData::ExternFunc(_) => true,
            ExprData::Global(g) => {
                matches!(m.globals[*g].func, Func::Extern(_) | Func::Unresolved | Func::Removed)
            }
            _ => false,
        };
        if !ok {
            let d = names::describe(m, f, callee);
            self.err(at, format!("expected an extern function as the callee of `{on}`, found {d}"));
        }
        self.tuple_len(e, self.f.list(call.args)[1], &on);
        self.out_count(e, call, &on);
        if let (Some(v), [out]) = (bound_to, call.sinfo_args.as_slice()) {
            self.check_bound_ty(v, *out, &on);
        }
    }

    /// The number of fields of the argument tuple, when known.
    fn tuple_len(&mut self, e: Expr, args: Expr, on: &str) -> Option<usize> {
        let f = self.f;
        if let ExprData::Tuple(fields) = &f.exprs[args] {
            return Some(fields.len());
        }
        let t = f.ty_of(args)?;
        match f.pool.ty(t) {
            TyData::Tuple(fields) => Some(fields.len()),
            TyData::Object => None,
            _ => {
                let found = names::ty(&f.pool, t);
                self.err(Entity::Expr(e), format!("expected a tuple of arguments for `{on}`, found `{found}`"));
                None
            }
        }
    }

    /// The number of outputs of a DPS call: one `out_sinfo`, a tensor or a tuple of tensors.
    fn out_count(&mut self, e: Expr, call: &Call, on: &str) -> Option<usize> {
        let pool = &self.f.pool;
        let [t] = call.sinfo_args.as_slice() else {
            let n = call.sinfo_args.len();
            self.err(Entity::Expr(e), format!("expected exactly one `out_sinfo` for `{on}`, found {n}"));
            return None;
        };
        let count = match pool.ty(*t) {
            TyData::Tensor { .. } => Some(1),
            TyData::Tuple(fields) if fields.iter().all(|&x| matches!(pool.ty(x), TyData::Tensor { .. })) => {
                Some(fields.len())
            }
            _ => None,
        };
        if count.is_none() {
            let found = names::ty(pool, *t);
            self.err(
                Entity::Expr(e),
                format!("expected a tensor or a tuple of tensors as the `out_sinfo` of `{on}`, found `{found}`"),
            );
        }
        count
    }

    /// The number of `tir_vars`, when known.
    fn shape_len(&mut self, e: Expr, s: Expr, on: &str) -> Option<usize> {
        let f = self.f;
        if let ExprData::Shape(vs) = &f.exprs[s] {
            return Some(vs.len());
        }
        let t = f.ty_of(s)?;
        match f.pool.ty(t) {
            TyData::Shape { values: Some(vs), .. } => Some(vs.len()),
            TyData::Shape { ndim, .. } => usize::try_from(*ndim).ok(),
            TyData::Object => None,
            _ => {
                let found = names::ty(&f.pool, t);
                self.err(Entity::Expr(e), format!("expected a shape as the `tir_vars` of `{on}`, found `{found}`"));
                None
            }
        }
    }

    fn check_inplace(&mut self, e: Expr, call: &Call, n_in: Option<usize>, n_out: Option<usize>, on: &str) {
        let at = Entity::Expr(e);
        let Some(value) = call.attrs.get("inplace_indices") else {
            self.err(at, format!("`{on}` has no `inplace_indices`"));
            return;
        };
        let Some(indices) = value.as_int_list() else {
            self.err(at, format!("expected a list of integers as the `inplace_indices` of `{on}`"));
            return;
        };
        if let Some(o) = n_out
            && indices.len() != o
        {
            let n = indices.len();
            self.err(at, format!("`{on}` has {n} `inplace_indices`, expected one per output ({o})"));
        }
        let mut used: Vec<i64> = Vec::new();
        for &i in &indices {
            let too_big = n_in.is_some_and(|a| i64::try_from(a).is_ok_and(|a| i >= a));
            if i < -1 || too_big {
                let args = n_in.map_or_else(String::new, |a| format!(" for {}", plural(a, "argument")));
                self.err(at, format!("inplace index {i} is out of range{args}"));
            } else if i >= 0 {
                if used.contains(&i) {
                    self.err(at, format!("inplace index {i} is used for more than one output"));
                }
                used.push(i);
            }
        }
    }

    /// The variable a DPS call is bound to has a type consistent with `out_sinfo`.
    fn check_bound_ty(&mut self, v: Var, out: Ty, on: &str) {
        let f = self.f;
        let vt = f.vars[v].ty;
        if let Some(why) = mismatch(&f.pool, vt, out) {
            let (vn, expected, found) = (names::var(f, v), names::ty(&f.pool, out), names::ty(&f.pool, vt));
            self.err(
                Entity::Var(v),
                format!(
                    "type of `{vn}` does not match the `out_sinfo` of `{on}`: expected `{expected}`, found `{found}`"
                ),
            )
            .notes
            .push(why);
        }
    }
}

/// Why a variable of type `var` cannot hold a value of type `out`: different kinds, ranks,
/// dtypes, or constant dims. Unknown parts never mismatch.
pub(super) fn mismatch(pool: &Pool, var: Ty, out: Ty) -> Option<String> {
    match (pool.ty(var), pool.ty(out)) {
        (TyData::Object, _) => None,
        (
            TyData::Tensor { shape: sa, dtype: da, ndim: na, .. },
            TyData::Tensor { shape: sb, dtype: db, ndim: nb, .. },
        ) => {
            if *na >= 0 && *nb >= 0 && na != nb {
                return Some(format!("the rank is {na}, expected {nb}"));
            }
            if !da.is_void() && !db.is_void() && da != db {
                return Some(format!("the dtype is `{da}`, expected `{db}`"));
            }
            if let (TensorShape::Dims(x), TensorShape::Dims(y)) = (sa, sb) {
                if x.len() != y.len() {
                    return Some(format!("the rank is {}, expected {}", x.len(), y.len()));
                }
                for (i, (&p, &q)) in x.iter().zip(y).enumerate() {
                    if let (Some(a), Some(b)) = (pool.as_int(p), pool.as_int(q))
                        && a != b
                    {
                        return Some(format!("dim {i} is {a}, expected {b}"));
                    }
                }
            }
            None
        }
        (TyData::Tuple(xs), TyData::Tuple(ys)) => {
            if xs.len() != ys.len() {
                return Some(format!("the tuple has {} fields, expected {}", xs.len(), ys.len()));
            }
            xs.iter()
                .zip(ys)
                .enumerate()
                .find_map(|(i, (&x, &y))| mismatch(pool, x, y).map(|w| format!("field {i}: {w}")))
        }
        (a, b) if std::mem::discriminant(a) == std::mem::discriminant(b) => None,
        _ => Some(format!("a `{}` cannot hold a `{}`", names::ty_kind(pool, var), names::ty_kind(pool, out))),
    }
}
