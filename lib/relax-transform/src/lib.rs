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
//!
//! [`analysis`] holds analyses shared by passes: [`OpPatternKind`], the pattern kind of a
//! PrimFunc ([`analyze_prim_func`]) and of a high-level op ([`op_pattern`]).

pub mod analysis;
pub mod annotate_tir_op_pattern;
pub mod canonicalize_bindings;
pub mod dead_code_elimination;
pub mod legalize;
pub mod normalize;
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
    r.register(legalize::INFO)?;
    r.register(annotate_tir_op_pattern::INFO)?;
    Ok(())
}

/// A registry holding every pass of this crate.
pub fn registry() -> PassRegistry {
    let mut r = PassRegistry::new();
    register_all(&mut r).expect("pass names are unique");
    r
}
