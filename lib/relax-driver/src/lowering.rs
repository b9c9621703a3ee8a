//! The lowering the tools give the interpreter for ops without a reference kernel:
//! `legalize-ops`, then the kernels' lowering to lowered TIR (`relax_ir::tir_lower`)
//! ([`relax_runtime::lowering`]). The interpreter does not depend on the passes; this is
//! where the two meet.

use relax_ir::{Module, OpId};
use relax_runtime::lowering::{Lowered, OpLowering};
use relax_transform::legalize::{legalization, legalize_module, unsupported};

/// `legalize-ops` as the interpreter's fallback.
#[derive(Clone, Copy, Debug, Default)]
pub struct Legalize;

impl OpLowering for Legalize {
    fn lowering_of(&self, op: OpId) -> Lowered {
        if legalization(op).is_some() {
            Lowered::Kernel
        } else if unsupported::EXPANDED.contains(&op) {
            Lowered::Expanded
        } else if let Some(f) = unsupported::packed_name(op) {
            Lowered::Packed(f)
        } else {
            Lowered::No
        }
    }

    fn lower(&self, m: &mut Module) {
        legalize_module(m);
        // The interpreter runs lowered TIR. Legalized kernels always lower; were one not
        // to, the interpreter would report its block as an internal error.
        let _ = relax_ir::tir_lower::lower_module(m);
    }
}
