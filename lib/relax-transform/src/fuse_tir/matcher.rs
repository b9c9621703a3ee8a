//! Symbolic matching of a kernel's parameter shapes against the buffers it is called with
//! (TVM's `SymbolicMatcher`, `algorithms.md` §3 step 2).
//!
//! A kernel variable meeting an expression binds to it (`n` → `16`, `n` → `m + 1`); a
//! bound variable compares its value instead. Equal constants and operators of the same
//! kind recurse. Anything else adds `kernel_expr == actual_expr` to a must-prove list,
//! which is checked with [`relax_ir::arith`] as soon as every kernel variable in it is
//! bound: provably false is an error (the call cannot be fused). **Project rule**: a
//! condition that is still not proved once all calls are matched is an error too (TVM
//! accepts it silently, and the fused kernel would then skip a check the unfused kernel
//! makes at run time).
//!
//! So a kernel written for `(n, m, n * m)` accepts `(16, 16, 256)`, and a dynamic kernel
//! called with static shapes becomes static.

use std::collections::HashMap;

use relax_ir::arith::Analyzer;
use relax_ir::prim::PrimExprData;
use relax_ir::{Pool, PrimExpr, SymVar};

/// The bindings of one fused function's kernel variables.
#[derive(Debug, Default)]
pub struct Matcher {
    /// Kernel variable → target expression. Kernel variables are those of the kernel
    /// being matched (every kernel is copied afresh, so keys never collide between
    /// calls as long as `call` tells the calls apart).
    pub map: HashMap<(usize, SymVar), PrimExpr>,
    /// Conditions not decided yet: (call, kernel expression, target expression).
    pending: Vec<(usize, PrimExpr, PrimExpr)>,
}

/// A match failure, as a message.
pub type MatchError = String;

impl Matcher {
    /// Matches the kernel expression `k` (of kernel `call`, in `kp`) against the target
    /// expression `t` (in `tp`), then re-checks the pending conditions.
    pub fn matches(
        &mut self,
        call: usize,
        kp: &Pool,
        k: PrimExpr,
        tp: &mut Pool,
        t: PrimExpr,
    ) -> Result<(), MatchError> {
        self.visit(call, kp, k, tp, t)?;
        self.check(kp, tp, false)
    }

    /// Matches the kernel's scalar parameter `v` against the target expression `t`.
    pub fn bind(&mut self, call: usize, kp: &Pool, v: SymVar, tp: &mut Pool, t: PrimExpr) -> Result<(), MatchError> {
        match self.map.get(&(call, v)) {
            Some(&bound) if bound != t => {
                let an = Analyzer::new();
                if !an.prove_equal(tp, bound, t) {
                    return Err(format!(
                        "the kernel's `{}` is both `{}` and `{}`",
                        kp.vars[v].name,
                        relax_ir::printer::print_prim_in(tp, bound),
                        relax_ir::printer::print_prim_in(tp, t)
                    ));
                }
            }
            Some(_) => {}
            None => {
                self.map.insert((call, v), t);
            }
        }
        self.check(kp, tp, false)
    }

    fn visit(&mut self, call: usize, kp: &Pool, k: PrimExpr, tp: &mut Pool, t: PrimExpr) -> Result<(), MatchError> {
        let (kt, tt) = (kp.dtype(k), tp.dtype(t));
        if kt.code != tt.code {
            return Err(format!(
                "`{}` ({kt}) cannot match `{}` ({tt})",
                relax_ir::printer::print_prim_in(kp, k),
                relax_ir::printer::print_prim_in(tp, t)
            ));
        }
        match (kp.prim(k).clone(), tp.prim(t).clone()) {
            (PrimExprData::Var(v), _) => match self.map.get(&(call, v)) {
                Some(&bound) => {
                    if bound != t {
                        self.pending.push((call, k, t));
                    }
                }
                None => {
                    self.map.insert((call, v), t);
                }
            },
            (PrimExprData::Int(_, a), PrimExprData::Int(_, b)) if a == b => {}
            (PrimExprData::Int(..), _) => {
                // TVM requires an equal integer literal; a provably equal expression is
                // accepted here.
                self.pending.push((call, k, t));
            }
            (PrimExprData::Float(_, a), PrimExprData::Float(_, b)) if a == b => {}
            (PrimExprData::Cast(_, a), PrimExprData::Cast(_, b)) => self.visit(call, kp, a, tp, b)?,
            (PrimExprData::Bin(op, a1, b1), PrimExprData::Bin(op2, a2, b2)) if op == op2 => {
                self.visit(call, kp, a1, tp, a2)?;
                self.visit(call, kp, b1, tp, b2)?;
            }
            (PrimExprData::Select(_, t1, f1), PrimExprData::Select(_, t2, f2)) => {
                self.visit(call, kp, t1, tp, t2)?;
                self.visit(call, kp, f1, tp, f2)?;
            }
            _ => self.pending.push((call, k, t)),
        }
        Ok(())
    }

    /// Decides the pending conditions whose variables are all bound; with `last`, every
    /// condition must be decided and true.
    pub fn check(&mut self, kp: &Pool, tp: &mut Pool, last: bool) -> Result<(), MatchError> {
        let an = Analyzer::new();
        let mut keep = Vec::new();
        for (call, k, t) in std::mem::take(&mut self.pending) {
            let vars = kp.free_vars(k);
            if vars.iter().any(|v| !self.map.contains_key(&(call, *v))) {
                if last {
                    return Err(format!(
                        "the kernel's `{}` cannot be determined from its arguments",
                        relax_ir::printer::print_prim_in(kp, k)
                    ));
                }
                keep.push((call, k, t));
                continue;
            }
            let subst: HashMap<SymVar, PrimExpr> = vars.iter().map(|&v| (v, self.map[&(call, v)])).collect();
            let ke = import(kp, k, tp, &subst);
            if an.prove_equal(tp, ke, t) {
                continue;
            }
            let shown = |tp: &Pool, why: &str| {
                format!(
                    "the kernel's `{}` must equal the argument's `{}`, {why}",
                    relax_ir::printer::print_prim_in(tp, ke),
                    relax_ir::printer::print_prim_in(tp, t)
                )
            };
            if an.prove_not_equal(tp, ke, t) {
                return Err(shown(tp, "which is false"));
            }
            if last {
                return Err(shown(tp, "which cannot be proved"));
            }
            keep.push((call, k, t));
        }
        self.pending = keep;
        Ok(())
    }
}

/// Copies a kernel expression into the target pool, substituting its variables (with
/// TVM's folding constructors, as the must-prove condition is simplified anyway).
fn import(kp: &Pool, k: PrimExpr, tp: &mut Pool, subst: &HashMap<SymVar, PrimExpr>) -> PrimExpr {
    let mut map: HashMap<SymVar, PrimExpr> = subst.clone();
    let e = tp.import_prim(kp, k, &mut map);
    relax_ir::infer::simplify(&Analyzer::new(), tp, e)
}
