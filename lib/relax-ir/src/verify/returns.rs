//! Check 3, return types: a Relax function's body must be able to produce a value of its
//! declared return type. Only a provable mismatch is an error (`BaseCheck` level L0: a
//! different kind, rank or dtype, or dims that are provably different); symbolic dims
//! that may be equal and less precise body types are accepted, as TVM accepts them.

use crate::arith::Analyzer;
use crate::entities::{Seq, Ty};
use crate::infer::{CheckLevel, base_check};

use super::error::Entity;
use super::names;
use super::relax_rules::RelaxChecker;

impl RelaxChecker<'_> {
    /// The result of the body `body` of the function `name` against its return type
    /// `ret`; the error is at the result (the `return`), naming both types.
    pub(super) fn check_body_ty(&mut self, body: Seq, ret: Ty, name: &str) {
        let f = self.f;
        let Some(seq) = f.seqs.get(body) else { return };
        let result = seq.body;
        let Some(found) = f.ty_of(result) else { return };
        if base_check(&f.pool, ret, &f.pool, found, &Analyzer::new()) != CheckLevel::FailL0 {
            return;
        }
        let (want, have) = (names::ty(&f.pool, ret), names::ty(&f.pool, found));
        self.err(
            Entity::Expr(result),
            format!("`{name}` returns `{have}`, which does not match its return type `{want}`"),
        )
        .notes
        .push("the return annotation must describe the value the body returns".to_string());
    }
}
