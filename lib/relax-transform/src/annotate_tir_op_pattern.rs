//! `annotate-tir-op-pattern` (TVM's `AnnotateTIROpPattern`): set the `op_pattern`
//! attribute of every PrimFunc to its pattern kind ([`analyze_prim_func`]), for FuseOps.
//!
//! As in TVM, a function whose `op_pattern` is already non-zero keeps it; one annotated 0
//! (or `False`) is analysed again. An `op_pattern` that is not an integer is an error (TVM
//! fails on it too); a typed integer (`T.int64(2)`), which TVM rejects, is accepted.

use relax_ir::printer::literals::{AttrCtx, write_attr};
use relax_ir::{AttrValue, Diagnostic, PrimFunc};
use relax_pass::{FunctionContext, PassResult, PrimFuncPass};

use crate::analysis::op_pattern::{OP_PATTERN_ATTR, analyze_prim_func};

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: PrimFunc "annotate-tir-op-pattern" {
        summary: "set the op_pattern attribute of each PrimFunc to its fusion pattern kind",
        new: |_| AnnotateTirOpPattern,
    }
}

struct AnnotateTirOpPattern;

impl PrimFuncPass for AnnotateTirOpPattern {
    fn run(&self, f: &mut PrimFunc, cx: &mut FunctionContext<'_>) -> PassResult {
        let name = cx.name();
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
