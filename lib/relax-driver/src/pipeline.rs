//! The default lowering pipeline of `relax-translate` and `relax-run --engine jit`.
//!
//! A module that still holds op calls with a legalization goes through
//! [`DEFAULT_PIPELINE`] (TVM's zero pipeline, then `schedule-cpu`); one whose only
//! unfinished business is unscheduled kernels gets `schedule-cpu` alone; anything else
//! is left as it is. A kernel counts as scheduled when it says so (`tir.is_scheduled`)
//! or already has parallel, vectorized or unrolled loops.

use relax_ir::{AttrValue, Diagnostic, ExprData, ForKind, Module, PrimFunc, StmtData};
use relax_pass::{PassContext, PassManager, Pipeline, PipelineError};

use crate::ir_text::verify_diagnostics;

/// The passes of the default pipeline, in order.
pub const DEFAULT_PIPELINE: &[&str] =
    &["legalize-ops", "annotate-tir-op-pattern", "fold-constant", "fuse-ops", "fuse-tir"];

/// True when some Relax function calls an op that legalization lowers.
fn has_high_level_ops(m: &Module) -> bool {
    m.live().any(|(g, _)| {
        m.relax(g).is_some_and(|f| {
            f.exprs.values().any(|e| match e {
                ExprData::Call(c) => match &f.exprs[c.callee] {
                    ExprData::Op(op) => relax_transform::legalize::legalization(op.name()).is_some(),
                    _ => false,
                },
                _ => false,
            })
        })
    })
}

/// True when a kernel has blocks but neither the `tir.is_scheduled` attribute nor a
/// parallel, vectorized or unrolled loop.
pub fn is_unscheduled(f: &PrimFunc) -> bool {
    let marked = ["tir.is_scheduled", "tirx.is_scheduled"].iter().any(|k| match f.attrs.get(k) {
        Some(AttrValue::Bool(b)) => *b,
        Some(v) => v.as_int().is_some_and(|i| i != 0),
        None => false,
    });
    if marked || !f.s_tir {
        return false;
    }
    let mut scheduled = false;
    f.walk(f.body, |_, s| {
        if let StmtData::For { kind: ForKind::Parallel | ForKind::Vectorized | ForKind::Unrolled, .. } = s {
            scheduled = true;
        }
    });
    !scheduled
}

/// The passes of the default pipeline that `m` needs.
pub fn needed_passes(m: &Module) -> Vec<&'static str> {
    if has_high_level_ops(m) {
        return DEFAULT_PIPELINE.to_vec();
    }
    Vec::new()
}

/// Runs the passes of the default pipeline that `m` needs, verifying after each;
/// returns their names.
pub fn run_default_pipeline(m: &mut Module) -> Result<Vec<&'static str>, Vec<Diagnostic>> {
    let passes = needed_passes(m);
    if passes.is_empty() {
        return Ok(passes);
    }
    crate::fold_eval::install();
    let registry = relax_transform::registry();
    let pipeline = Pipeline::of(&passes);
    let mut pm = PassManager::new(&registry, &pipeline)
        .map_err(|e| vec![Diagnostic::error(relax_ir::Span::NONE, format!("internal error: {e:?}"))])?;
    pm.set_verifier(Box::new(|m: &Module| verify_diagnostics(m)));
    let mut cx = PassContext::default();
    pm.run(m, &mut cx).map_err(|e| match e {
        PipelineError::Invalid(msg) => vec![Diagnostic::error(relax_ir::Span::NONE, msg)],
        PipelineError::PassFailed { diagnostics, .. } | PipelineError::VerifyFailed { diagnostics, .. } => diagnostics,
    })?;
    Ok(passes)
}
