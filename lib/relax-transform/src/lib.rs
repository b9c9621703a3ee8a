//! The relax passes, one file each, and [`register_all`] which puts them in a registry.
//!
//! | pass | anchor | what it does |
//! |---|---|---|
//! | `normalize` | relax.function | ANF, block merging, missing types |
//! | `canonicalize-bindings` | relax.function | copy propagation, trivial match_cast removal, tuple-item folding, constant inlining |
//! | `dead-code-elimination` | module | unused pure bindings and unreachable functions |
//! | `to-non-dataflow` | relax.function | dataflow blocks become plain blocks |
//! | `legalize-ops` | module | op calls become `call_tir` of generated PrimFuncs |
//! | `annotate-tir-op-pattern` | tir.prim_func | `op_pattern` attribute of PrimFuncs, for fusion |
//! | `rewrite-dataflow-reshape` | relax.function | reshape kernels in dataflow blocks become `R.reshape` views |
//! | `remove-purity-checking` | relax.function | `relax.force_pure`, pure packed calls become plain ones |
//! | `call-tir-rewrite` | module | explicit `alloc_tensor` and destination-passing kernel calls |
//! | `fold-constant` | module | kernel calls on constants become constants |
//! | `fuse-ops` | module | groups of bindings become `Primitive` functions (`docs/fusion.md`) |
//! | `fuse-tir` | module | each `Primitive` function becomes one PrimFunc |
//! | `plan-memory` | module | storage reuse for explicit allocations (`docs/memory.md`) |
//! | `lower-alloc-tensor` | relax.function | a storage of its own for every unplanned allocation |
//! | `kill-after-last-use` | relax.function | kills after last uses |
//! | `schedule-cpu` | tir.prim_func | default CPU schedules: parallel, vectorized, tiled (`docs/codegen.md`) |
//! | `schedule-gpu` | tir.prim_func | stages bound to `blockIdx.x` / `threadIdx.x` (`docs/gpu.md`) |
//! | `lower-tir` | tir.prim_func | blocks lowered: what the interpreter and the backends run (`relax_ir::tir_lower`) |
//!
//! [`analysis`] holds analyses shared by passes: [`OpPatternKind`], the pattern kind of a
//! PrimFunc ([`analyze_prim_func`]) and of a high-level op ([`op_pattern`]).

pub mod analysis;
pub mod annotate_tir_op_pattern;
pub mod call_tir_rewrite;
pub mod canonicalize_bindings;
pub mod dead_code_elimination;
pub mod emit;
pub mod fold_constant;
pub mod fuse_ops;
pub mod fuse_tir;
pub mod kill_after_last_use;
pub mod legalize;
pub mod lower_alloc_tensor;
pub mod lower_tir;
pub mod normalize;
pub mod plan_memory;
pub mod remove_purity_checking;
pub mod rewrite_dataflow_reshape;
pub mod schedule_cpu;
pub mod schedule_gpu;
pub mod to_non_dataflow;
pub mod walk;

pub use analysis::op_pattern::{OpPatternKind, analyze_prim_func, annotated_op_pattern, op_pattern};
use relax_pass::{PassRegistry, registry::DuplicateName};

/// Registers every pass of this crate.
pub fn register_all(r: &mut PassRegistry) -> Result<(), DuplicateName> {
    r.register(normalize::INFO)?;
    r.register(canonicalize_bindings::INFO)?;
    r.register(dead_code_elimination::INFO)?;
    r.register(to_non_dataflow::INFO)?;
    r.register(fold_constant::INFO)?;
    r.register(fuse_ops::INFO)?;
    r.register(fuse_tir::INFO)?;
    r.register(legalize::INFO)?;
    r.register(annotate_tir_op_pattern::INFO)?;
    r.register(rewrite_dataflow_reshape::INFO)?;
    r.register(remove_purity_checking::INFO)?;
    r.register(call_tir_rewrite::INFO)?;
    r.register(plan_memory::INFO)?;
    r.register(lower_alloc_tensor::INFO)?;
    r.register(kill_after_last_use::INFO)?;
    r.register(schedule_cpu::INFO)?;
    r.register(schedule_gpu::INFO)?;
    r.register(lower_tir::INFO)?;
    r.register_pipeline(fuse_ops::ZERO_PIPELINE)?;
    Ok(())
}

/// A registry holding every pass of this crate.
pub fn registry() -> PassRegistry {
    let mut r = PassRegistry::new();
    register_all(&mut r).expect("pass names are unique");
    r
}
