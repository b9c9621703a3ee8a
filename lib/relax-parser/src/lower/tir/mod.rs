//! Lowering of TensorIR PrimFuncs.

use relax_ir::PrimFunc;

use super::LResult;
use super::module::{Decorator, ModuleCx};
use crate::ast;

/// Lowers one PrimFunc.
pub(crate) fn lower_prim_func(cx: &mut ModuleCx<'_>, def: &ast::FunctionDef, deco: &Decorator) -> LResult<PrimFunc> {
    let _ = deco;
    Err(cx.diags.error(def.name.span, "PrimFuncs are not supported yet"))
}
