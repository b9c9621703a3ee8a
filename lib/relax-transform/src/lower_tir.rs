//! `lower-tir`: turn every PrimFunc with blocks into lowered TIR, the form the TIR
//! interpreter and the code generators run (blocks realized as `let`s, `T.where` as
//! `if`, `T.init` under its first-iteration test, block buffers as allocations,
//! `T.match_buffer` regions as buffer views). The lowering itself is
//! [`relax_ir::tir_lower`], which the tools also call directly before running or
//! compiling a module; this pass shows its result (`relax-opt --lower-tir`).

use relax_ir::{Global, Module, tir_lower};
use relax_pass::{Anchor, FunctionFn, Pass, PassContext, PassInfo, PassOptions, PassResult};

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "lower-tir",
    aliases: &[],
    summary: "lower the blocks of each PrimFunc: lets, ifs, allocations and buffer views (what the backends run)",
    anchor: Anchor::PrimFunc,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(FunctionFn(run)))
}

fn run(m: &mut Module, g: Global, _cx: &mut PassContext) -> PassResult {
    let name = m.globals[g].name.clone();
    let Some(f) = m.prim_func_mut(g) else { return Ok(false) };
    tir_lower::lower_prim_func(&name, f).map_err(|d| vec![d])
}
