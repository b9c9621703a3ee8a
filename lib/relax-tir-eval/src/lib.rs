//! The TIR evaluator, the part of execution that the passes need too (`fold-constant`
//! runs kernels on constants with it) and that the Relax interpreter builds on:
//!
//! * [`value`]: run-time values; a tensor is a view into shared byte storage, so an
//!   aliasing mistake in a pass shows up as wrong numbers.
//! * [`scalar`], [`math`]: typed scalars with exact dtype semantics and the math of TIR
//!   intrinsics, shared by the TIR interpreter and the reference kernels.
//! * [`tir`]: the TIR interpreter.
//! * [`bytes`]: the bytes behind a storage, owned or a mapped file.
//! * [`print`]: the text form of values; [`error`]: run-time errors; [`hugepage`]:
//!   zeroed tensor storage backed by huge pages where the system has them.
//!
//! It depends on the IR only: no parser, no passes, no code generator.

pub mod bytes;
pub mod error;
pub mod hugepage;
pub mod math;
pub mod print;
pub mod scalar;
pub mod tir;
pub mod value;

pub use error::{RunError, RunResult};
pub use scalar::Scalar;
pub use value::{Tensor, Value};
