//! What the interpreter falls back to for op calls it has no reference kernel for.
//!
//! The interpreter does not depend on the passes: a driver hands it an [`OpLowering`]
//! (the tools hand in `legalize-ops`), and [`crate::ops`] runs such a call by copying it
//! alone into a scratch module, lowering that module and interpreting the result. An
//! interpreter without a lowering reports those calls as errors naming the op.

use relax_ir::{Module, OpId};

/// How a lowering treats an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowered {
    /// Calls become `call_tir` of generated PrimFuncs (a legalization).
    Kernel,
    /// Calls become other Relax expressions.
    Expanded,
    /// Calls become a call of the named packed function.
    Packed(&'static str),
    /// Calls are left as they are.
    No,
}

/// Lowers op calls into code the interpreter runs.
pub trait OpLowering {
    /// How calls of the op `op` are lowered.
    fn lowering_of(&self, op: OpId) -> Lowered;
    /// Lowers every op call of `m` it can, in place, and leaves the module's PrimFuncs as
    /// lowered TIR (`relax_ir::tir_lower`), the only TIR the interpreter runs. `m` is the
    /// scratch module of one call: a function `main` whose one binding calls the op on
    /// parameters of static shapes.
    fn lower(&self, m: &mut Module);
}
