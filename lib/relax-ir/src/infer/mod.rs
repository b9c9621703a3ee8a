//! Type inference: TVM's struct-info inference (`algorithms.md` §9).
//!
//! * [`base_check`] (§9.2): is one type a base of (at least as general as) another, and
//!   if not, how badly does it fail ([`CheckLevel`]).
//! * [`lca`] (§9.5): the join of two types, used for the result of `if`.
//! * [`erase_to_well_defined`] (§9.4): substitute known variables into a type and drop
//!   shapes and values that still mention variables the caller cannot name.
//! * [`derive_call`] (§9.3): the result type of a call of a Relax function, matching the
//!   callee's parameter types against the argument types.
//! * [`infer_op`] (§9.6): the result type of an op call, one rule per op of the table,
//!   organised one family per file (`unary`, `binary`, `matmul`, `nn`, `conv`,
//!   `manipulate`, `reduce`, `create`, `index`, `search`, `vision`, `misc`). Ops typed by their `sinfo_args`
//!   (`call_tir`, packed calls) are marked as such.
//! * [`infer_expr`]: the type of any expression from its operands' types;
//!   [`retype_function`] recomputes every type of a function in program order (the
//!   `normalize` pass); [`type_new_value`] types a value a pass is about to bind.
//! * [`erase_to_signature`]: the result type of a function without a declared one.
//!
//! Rules follow TVM's `InferStructInfo*` functions: what can be proved wrong is an error
//! ([`InferError`], a message naming the op and the types involved); what cannot be
//! proved gives the less specific type (unknown shape, rank kept). Shapes are built with
//! TVM's folding constructors in the order TVM builds them (`m + n` for a concat of
//! `(m, 4)` and `(n, 4)`, `n * 4` for the element count of `(n, 4)`), and simplified with
//! [`crate::arith`] where TVM simplifies.

mod binary;
mod call;
mod check;
mod conv;
mod create;
mod cx;
mod erase;
mod expr;
mod index;
mod lca;
mod manipulate;
mod matmul;
mod misc;
mod nn;
mod python;
mod reduce;
mod retype;
mod search;
mod simplify;
mod unary;
mod vision;

#[cfg(test)]
mod tests;

use crate::arith::Analyzer;
use crate::entities::Ty;
use crate::op::{OpClass, OpId, OpRef, OpTable};
use crate::relax::{Call, ExprData, RelaxFunction};

pub use call::{CalleeSig, derive_call};
pub use check::{CheckLevel, base_check};
pub use cx::OpCx;
pub use erase::{VarMap, erase_to_signature, erase_to_well_defined};
pub use expr::{infer_expr, infer_leaf};
pub use lca::lca;
pub use manipulate::index_map;
pub use python::apply_python_conveniences;
pub use retype::{retype_function, type_new_value};
pub use simplify::simplify;

/// A type error found by inference: the message names the op (`R.add: ...`) and the
/// types involved, as they print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InferError {
    /// The message (lowercase, no final period).
    pub message: String,
}

impl InferError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> InferError {
        InferError { message: message.into() }
    }
}

impl std::fmt::Display for InferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InferError {}

/// How an op gets its result type.
#[derive(Clone, Copy)]
pub enum Rule {
    /// Computed from the arguments and attributes.
    Infer(fn(&mut OpCx<'_>) -> Result<Ty, InferError>),
    /// Given by the call's `sinfo_args` (`call_tir`'s `out_sinfo`, packed calls).
    SinfoArgs,
}

/// The inference rule of each op, from the families' tables (one file each).
static RULES: OpTable<Rule> = crate::op_table_of!(
    Rule;
    unary::rule,
    binary::rule,
    matmul::rule,
    nn::rule,
    conv::rule,
    manipulate::rule,
    reduce::rule,
    create::rule,
    index::rule,
    search::rule,
    vision::rule,
    misc::rule,
);

/// The inference rule of the op `id`, if it has one.
pub fn rule(id: OpId) -> Option<Rule> {
    RULES.get(id)
}

/// The result type of an op call, from its arguments' types (argument expressions are
/// leaves already typed in `f`) and attributes.
///
/// `Ok(None)` when no rule applies: the callee is not an op, the op is not in the table
/// (and the call has no `sinfo_args`), or a sinfo-typed call has none. Ops typed by
/// `sinfo_args` take them: none is `R.Object`, one is itself, several a tuple.
pub fn infer_op(f: &mut RelaxFunction, call: &Call, an: &Analyzer) -> Result<Option<Ty>, InferError> {
    let ExprData::Op(op) = &f.exprs[call.callee] else { return Ok(None) };
    let op = op.clone();
    let (id, def) = match &op {
        OpRef::Known(id) => (*id, id.def()),
        OpRef::Custom(_) => {
            return Ok((!call.sinfo_args.is_empty()).then(|| sinfo_result(f, &call.sinfo_args)));
        }
    };
    match rule(id) {
        Some(Rule::Infer(rule)) => {
            let mut cx = OpCx::new(f, call, id, an)?;
            rule(&mut cx).map(Some)
        }
        Some(Rule::SinfoArgs) => Ok(Some(match def.class {
            OpClass::DpsCall => match call.sinfo_args.as_slice() {
                [] => f.pool.intern_ty(crate::ty::TyData::Object),
                [one] => *one,
                many => f.pool.intern_ty(crate::ty::TyData::Tuple(many.to_vec())),
            },
            _ => sinfo_result(f, &call.sinfo_args),
        })),
        None => Ok((!call.sinfo_args.is_empty()).then(|| sinfo_result(f, &call.sinfo_args))),
    }
}

/// The type given by `sinfo_args`: none is `R.Object`, one is itself, several a tuple.
pub fn sinfo_result(f: &mut RelaxFunction, sinfo: &[Ty]) -> Ty {
    match sinfo {
        [] => f.pool.intern_ty(crate::ty::TyData::Object),
        [one] => *one,
        many => f.pool.intern_ty(crate::ty::TyData::Tuple(many.to_vec())),
    }
}
