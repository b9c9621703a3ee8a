//! The default lowering pipeline of `relax-translate` and `relax-run --engine jit`.
//!
//! A module that still holds op calls with a legalization goes through
//! [`DEFAULT_PIPELINE`] (TVM's zero pipeline, then `schedule-cpu`); one whose only
//! unfinished business is unscheduled kernels gets `schedule-cpu` alone; anything else
//! is left as it is. A kernel counts as scheduled when it says so (`tirx.is_scheduled`)
//! or already has parallel, vectorized or unrolled loops. After it (or without it),
//! [`lower_tir`] turns the kernels into the lowered TIR the engines run. An op call the
//! pipeline leaves that nothing can run is an error here, at compile time
//! ([`crate::unlowered::check_runnable`]).

use relax_ir::{Diagnostic, ExprData, Module, PrimFunc};
use relax_pass::{PassContext, PassManager, Pipeline, PipelineError};

use crate::ir_text::{verify_diagnostics, verify_scope_diagnostics};

/// Lowers the PrimFuncs of `m` with blocks to lowered TIR (`relax_ir::tir_lower`, the
/// `lower-tir` pass) and verifies the result: the last step before a module reaches the
/// interpreter, the JIT or a code generator, which run lowered TIR only. It is not one of
/// the passes of the default pipeline (which `--verbose` names): it runs whether or not
/// the pipeline does.
pub fn lower_tir(m: &mut Module) -> Result<(), Vec<Diagnostic>> {
    if relax_ir::tir_lower::lower_module(m)? {
        verify_diagnostics(m)?;
    }
    Ok(())
}

/// The passes of the default pipeline, in order.
pub const DEFAULT_PIPELINE: &[&str] =
    &["legalize-ops", "annotate-tir-op-pattern", "fold-constant", "fuse-ops", "fuse-tir", "schedule-cpu"];

/// The pipeline of an imported GGUF model (`docs/llm.md`): the matmuls of the decode
/// step with a Q4_0 or Q8_0 weight on activations quantized to 8 bits
/// (`quantize-activations`, llama.cpp's numerics), then the default pipeline with
/// each quantized weight's decode (and each weight's transpose) fused into the matmul
/// that reads it, then memory planning sized by the actual prompt (not the context's
/// upper bound), and every value ended after its last use.
pub const LLM_PIPELINE: &[&str] = &[
    "quantize-activations",
    "legalize-ops",
    "annotate-tir-op-pattern",
    "fold-constant",
    "fuse-ops{matmul-operands=true}",
    "fuse-tir",
    "schedule-cpu",
    "plan-memory{upper-bounds=false}",
    "kill-after-last-use",
];

/// Runs [`LLM_PIPELINE`] on `m` with `schedule-cpu` for vector registers of
/// `vector_bits`, verifying after each pass.
pub fn run_llm_pipeline(m: &mut Module, vector_bits: u32) -> Result<(), Vec<Diagnostic>> {
    run_llm_pipeline_with(m, vector_bits, &mut |_| {})
}

/// [`run_llm_pipeline`], calling `before_schedule` with the module as it is before
/// `schedule-cpu` runs.
pub fn run_llm_pipeline_with(
    m: &mut Module,
    vector_bits: u32,
    before_schedule: &mut dyn FnMut(&Module),
) -> Result<(), Vec<Diagnostic>> {
    run_passes_split(m, &pass_texts(LLM_PIPELINE, vector_bits), before_schedule)
}

/// The pipeline text of each pass, `schedule-cpu` for vector registers of `vector_bits`.
fn pass_texts(passes: &[&str], vector_bits: u32) -> Vec<String> {
    passes
        .iter()
        .map(|&p| if p == "schedule-cpu" { format!("{p}{{vector-bits={vector_bits}}}") } else { p.to_string() })
        .collect()
}

/// True when some Relax function calls an op that legalization lowers.
fn has_high_level_ops(m: &Module) -> bool {
    m.live().any(|(g, _)| {
        m.relax(g).is_some_and(|f| {
            f.exprs.values().any(|e| match e {
                ExprData::Call(c) => match &f.exprs[c.callee] {
                    ExprData::Op(op) => op.id().and_then(relax_transform::legalize::legalization).is_some(),
                    _ => false,
                },
                _ => false,
            })
        })
    })
}

/// True when a kernel has blocks but neither the `tirx.is_scheduled` attribute nor a
/// parallel, vectorized or unrolled loop.
pub fn is_unscheduled(f: &PrimFunc) -> bool {
    relax_transform::schedule_cpu::is_unscheduled(f)
}

/// The vector width `schedule-cpu` gets for code for `cpu` (the host's when `None`).
pub fn vector_bits(cpu: Option<&str>) -> u32 {
    vector_bits_for(cpu, None, None)
}

/// [`vector_bits`] for the target triple `target` (the host's when `None`) and the
/// feature edits `features` (`--mattr`).
pub fn vector_bits_for(cpu: Option<&str>, target: Option<&str>, features: Option<&str>) -> u32 {
    #[cfg(feature = "llvm")]
    {
        let opts = relax_codegen::llvm::Options {
            cpu: cpu.map(str::to_string),
            triple: target.map(str::to_string),
            features: features.map(str::to_string),
            ..Default::default()
        };
        relax_codegen::llvm::vector_bits(&opts)
    }
    #[cfg(not(feature = "llvm"))]
    {
        let _ = (cpu, target, features);
        256
    }
}

/// The passes of the default pipeline that `m` needs.
pub fn needed_passes(m: &Module) -> Vec<&'static str> {
    if has_high_level_ops(m) {
        return DEFAULT_PIPELINE.to_vec();
    }
    if m.live().any(|(g, _)| m.prim_func(g).is_some_and(is_unscheduled)) {
        return vec!["schedule-cpu"];
    }
    Vec::new()
}

/// Runs the passes of the default pipeline that `m` needs, verifying after each, with
/// `schedule-cpu` for vector registers of `vector_bits`; returns their names.
pub fn run_default_pipeline(m: &mut Module, vector_bits: u32) -> Result<Vec<&'static str>, Vec<Diagnostic>> {
    run_pipeline_for(m, Target::Cpu { vector_bits })
}

/// [`run_default_pipeline`], calling `before_schedule` with the module as it is before
/// `schedule-cpu` runs (or as it is after the pipeline, when nothing is scheduled).
pub fn run_default_pipeline_with(
    m: &mut Module,
    vector_bits: u32,
    before_schedule: &mut dyn FnMut(&Module),
) -> Result<Vec<&'static str>, Vec<Diagnostic>> {
    let passes = needed_passes(m);
    run_passes_split(m, &pass_texts(&passes, vector_bits), before_schedule)?;
    crate::unlowered::check_runnable(m)?;
    Ok(passes)
}

/// For each kernel of `m`, the parameters it overwrites completely before reading them
/// (`relax_transform::analysis::full_writes`): the JIT's results passed there need no
/// zero-filling. Meant for the module before `schedule-cpu`.
pub fn overwritten_params(m: &Module) -> std::collections::HashMap<relax_ir::Global, Vec<usize>> {
    m.live()
        .filter_map(|(g, _)| {
            let f = m.prim_func(g)?;
            let p = relax_transform::analysis::full_writes::full_writes(f);
            (!p.is_empty()).then_some((g, p))
        })
        .collect()
}

/// The target whose kernel schedule ends the default pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `schedule-cpu` for vector registers of `vector_bits`.
    Cpu {
        /// The vector register width.
        vector_bits: u32,
    },
    /// `schedule-gpu` (`docs/gpu.md`), for `--emit=ptx|spirv` and the GPU engines.
    Gpu,
}

/// [`run_default_pipeline`] for `target`: on a GPU, `schedule-gpu` takes the place of
/// `schedule-cpu`, and kernels without a thread binding count as unscheduled.
pub fn run_pipeline_for(m: &mut Module, target: Target) -> Result<Vec<&'static str>, Vec<Diagnostic>> {
    let mut passes = needed_passes(m);
    if target == Target::Gpu {
        passes.retain(|&p| p != "schedule-cpu");
        passes.push("schedule-gpu");
        if passes == ["schedule-gpu"]
            && !m.live().any(|(g, _)| m.prim_func(g).is_some_and(relax_transform::schedule_gpu::needs_gpu_schedule))
        {
            passes.clear();
        }
    }
    let vector_bits = match target {
        Target::Cpu { vector_bits } => vector_bits,
        Target::Gpu => 0,
    };
    run_passes(m, &pass_texts(&passes, vector_bits))?;
    crate::unlowered::check_runnable(m)?;
    Ok(passes)
}

/// [`run_passes`], calling `before_schedule` between the passes before `schedule-cpu`
/// and the rest (after all of them when there is no `schedule-cpu`).
fn run_passes_split(
    m: &mut Module,
    text: &[String],
    before_schedule: &mut dyn FnMut(&Module),
) -> Result<(), Vec<Diagnostic>> {
    let at = text.iter().position(|p| p.starts_with("schedule-cpu")).unwrap_or(text.len());
    run_passes(m, &text[..at])?;
    before_schedule(m);
    run_passes(m, &text[at..])
}

/// Runs the passes `text` (pipeline syntax, one pass each) with the verifier after each.
fn run_passes(m: &mut Module, text: &[String]) -> Result<(), Vec<Diagnostic>> {
    if text.is_empty() {
        return Ok(());
    }
    let registry = relax_transform::registry();
    let pipeline = Pipeline::parse(&text.join(","))
        .map_err(|e| vec![Diagnostic::error(relax_ir::Span::NONE, format!("internal error: {e}"))])?;
    let mut pm = PassManager::new(&registry, &pipeline)
        .map_err(|e| vec![Diagnostic::error(relax_ir::Span::NONE, format!("internal error: {e:?}"))])?;
    pm.set_verifier(Box::new(verify_scope_diagnostics));
    let mut cx = PassContext::default();
    pm.run(m, &mut cx).map_err(|e| match e {
        PipelineError::Invalid(msg) => vec![Diagnostic::error(relax_ir::Span::NONE, msg)],
        PipelineError::PassFailed { diagnostics, .. } | PipelineError::VerifyFailed { diagnostics, .. } => diagnostics,
    })?;
    Ok(())
}
