//! Typing whole functions and single new bindings: what `normalize` runs and what passes
//! call when they emit a binding.

use crate::arith::Analyzer;
use crate::entities::Seq;
use crate::entities::{Expr, Ty};
use crate::module::Module;
use crate::relax::{BindingKind, RelaxFunction};
use crate::ty::TyData;

use super::{InferError, infer_expr};

/// Recomputes the type of every reachable expression of `f`, bottom-up in program order,
/// with the inference rules. A variable keeps its type (its annotation), except that a
/// plainly bound variable typed `R.Object` (what a binding gets when no rule typed its
/// value) takes its value's type when that is known now. Expressions no rule types keep
/// the type they had.
///
/// Returns whether anything changed, or the errors found (each with the expression it is
/// about).
pub fn retype_function(
    f: &mut RelaxFunction,
    m: Option<&Module>,
    an: &Analyzer,
) -> Result<bool, Vec<(Expr, InferError)>> {
    let mut cx = Retyper { m, an, changed: false, errors: Vec::new() };
    let body = f.func.body;
    cx.seq(f, body);
    if cx.errors.is_empty() { Ok(cx.changed) } else { Err(cx.errors) }
}

/// Types a value about to be bound by a pass: its untyped operands first, then the value
/// itself. Returns the value's type (`R.Object` when no rule gives one), which is also
/// stored as the expression's type; the caller makes the variable with it.
pub fn type_new_value(f: &mut RelaxFunction, e: Expr, m: Option<&Module>, an: &Analyzer) -> Result<Ty, InferError> {
    let mut cx = Retyper { m, an, changed: false, errors: Vec::new() };
    cx.expr(f, e, true);
    if let Some((_, err)) = cx.errors.into_iter().next() {
        return Err(err);
    }
    Ok(match f.ty_of(e) {
        Some(t) => t,
        None => {
            let t = f.pool.intern_ty(TyData::Object);
            f.expr_ty.set(e, Some(t));
            t
        }
    })
}

struct Retyper<'a> {
    m: Option<&'a Module>,
    an: &'a Analyzer,
    changed: bool,
    errors: Vec<(Expr, InferError)>,
}

impl Retyper<'_> {
    fn seq(&mut self, f: &mut RelaxFunction, s: Seq) {
        let blocks = f.seq(s).blocks.clone();
        for b in blocks {
            let bindings = f.blocks[b].bindings.clone();
            for bd in bindings {
                self.expr(f, bd.value, false);
                if bd.kind != BindingKind::Value {
                    continue;
                }
                let vt = f.vars[bd.var].ty;
                if matches!(f.pool.ty(vt), TyData::Object)
                    && let Some(t) = f.ty_of(bd.value)
                    && t != vt
                {
                    f.vars[bd.var].ty = t;
                    self.changed = true;
                }
            }
        }
        let body = f.seq(s).body;
        self.expr(f, body, false);
    }

    /// Types `e` after its operands; with `only_untyped`, operands that already have a
    /// type are trusted.
    fn expr(&mut self, f: &mut RelaxFunction, e: Expr, only_untyped: bool) {
        // Operands first, then nested sequences (an `if`'s condition before its branches).
        for x in f.operands(e) {
            self.operand(f, x, only_untyped);
        }
        for s in f.exprs[e].nested_seqs() {
            self.seq(f, s);
        }
        match infer_expr(f, e, self.m, self.an) {
            Ok(Some(t)) => {
                if f.ty_of(e) != Some(t) {
                    f.expr_ty.set(e, Some(t));
                    self.changed = true;
                }
            }
            Ok(None) => {}
            Err(err) => self.errors.push((e, err)),
        }
    }

    fn operand(&mut self, f: &mut RelaxFunction, x: Expr, only_untyped: bool) {
        if only_untyped && f.ty_of(x).is_some() {
            return;
        }
        self.expr(f, x, only_untyped);
    }
}
