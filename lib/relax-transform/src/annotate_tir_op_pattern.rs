//! `annotate-tir-op-pattern` (TVM's `AnnotateTIROpPattern`): set the `op_pattern`
//! attribute of every PrimFunc to its pattern kind ([`analyze_prim_func`]), for FuseOps.
//!
//! As in TVM, a function whose `op_pattern` is already non-zero keeps it; one annotated 0
//! (or `False`) is analysed again. An `op_pattern` that is not an integer is an error (TVM
//! fails on it too); a typed integer (`T.int64(2)`), which TVM rejects, is accepted.

use relax_ir::printer::literals::{AttrCtx, write_attr};
use relax_ir::{AttrValue, Diagnostic, Global, Module};
use relax_pass::{Anchor, Pass, PassContext, PassInfo, PassOptions, PassResult};

use crate::analysis::op_pattern::{OP_PATTERN_ATTR, analyze_prim_func};

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "annotate-tir-op-pattern",
    aliases: &[],
    summary: "set the op_pattern attribute of each PrimFunc to its fusion pattern kind",
    anchor: Anchor::PrimFunc,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(AnnotateTirOpPattern))
}

struct AnnotateTirOpPattern;

impl Pass for AnnotateTirOpPattern {
    fn run_function(&self, m: &mut Module, g: Global, _cx: &mut PassContext) -> PassResult {
        let name = m.globals[g].name.clone();
        let Some(f) = m.prim_func_mut(g) else { return Ok(false) };
        let old = f.attrs.get(OP_PATTERN_ATTR).cloned();
        if let Some(v) = &old {
            match v.as_int() {
                Some(0) => {}
                Some(_) => return Ok(false),
                None => {
                    let mut text = String::new();
                    write_attr(&mut text, v, AttrCtx::Tir);
                    return Err(vec![Diagnostic::error(
                        f.spans.func,
                        format!("the `{OP_PATTERN_ATTR}` attribute of `{name}` must be an integer, found `{text}`"),
                    )]);
                }
            }
        }
        let new = AttrValue::Int(analyze_prim_func(f).value());
        if old.as_ref() == Some(&new) {
            return Ok(false);
        }
        f.attrs.set(OP_PATTERN_ATTR, new);
        Ok(true)
    }
}
