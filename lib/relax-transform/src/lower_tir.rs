//! `lower-tir`: turn every PrimFunc with blocks into lowered TIR, the form the TIR
//! interpreter and the code generators run (blocks realized as `let`s, `T.where` as
//! `if`, `T.init` under its first-iteration test, block buffers as allocations,
//! `T.match_buffer` regions as buffer views). The lowering itself is
//! [`relax_ir::tir_lower`], which the tools also call directly before running or
//! compiling a module; this pass shows its result (`relax-opt --lower-tir`).

use relax_ir::tir_lower;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: PrimFunc "lower-tir" {
        summary: "lower the blocks of each PrimFunc: lets, ifs, allocations and buffer views (what the backends run)",
        run: |f, cx| tir_lower::lower_prim_func(cx.name(), f).map_err(|d| vec![d]),
    }
}
