//! The relax passes, one file each, and [`PASSES`], the list [`register_all`] puts in a
//! registry.
//!
//! Each pass file declares its registry entry with `relax_pass::declare_pass!` (name,
//! kind, summary and options) next to the code that runs it. The list of passes with
//! their anchors, summaries and options is generated from the registry: `relax-opt
//! --list-passes`, kept in `docs/passes.md` by a test. `docs/design.md` ("Adding a pass")
//! gives the recipe.
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
pub mod quant;
pub mod quantize_activations;
pub mod quantize_weights;
pub mod remove_purity_checking;
pub mod rewrite_dataflow_reshape;
pub mod schedule_cpu;
pub mod schedule_gpu;
pub mod to_non_dataflow;
pub mod walk;

pub use analysis::op_pattern::{OpPatternKind, analyze_prim_func, annotated_op_pattern, op_pattern};
use relax_pass::{PassInfo, PassRegistry, registry::DuplicateName};

/// Every pass of this crate, in registration order: one line per pass.
pub const PASSES: &[PassInfo] = &[
    normalize::INFO,
    canonicalize_bindings::INFO,
    dead_code_elimination::INFO,
    to_non_dataflow::INFO,
    fold_constant::INFO,
    fuse_ops::INFO,
    fuse_tir::INFO,
    legalize::INFO,
    annotate_tir_op_pattern::INFO,
    rewrite_dataflow_reshape::INFO,
    remove_purity_checking::INFO,
    call_tir_rewrite::INFO,
    plan_memory::INFO,
    lower_alloc_tensor::INFO,
    kill_after_last_use::INFO,
    schedule_cpu::INFO,
    schedule_gpu::INFO,
    lower_tir::INFO,
    quantize_weights::INFO,
    quantize_activations::INFO,
];

/// Registers every pass of this crate ([`PASSES`]) and its named pipelines.
pub fn register_all(r: &mut PassRegistry) -> Result<(), DuplicateName> {
    for &info in PASSES {
        r.register(info)?;
    }
    r.register_pipeline(fuse_ops::ZERO_PIPELINE)?;
    Ok(())
}

/// A registry holding every pass of this crate.
pub fn registry() -> PassRegistry {
    let mut r = PassRegistry::new();
    register_all(&mut r).expect("pass names are unique");
    r
}
