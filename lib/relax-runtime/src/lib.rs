//! The reference interpreter of relax modules (`docs/runtime.md`).
//!
//! It is the oracle for passes and for the JIT, so it is simple, complete and exact:
//!
//! * [`value`]: run-time values; a tensor is a view into shared byte storage, so an
//!   aliasing mistake in a pass shows up as wrong numbers.
//! * [`scalar`], [`math`]: typed scalars with exact dtype semantics and the math of TIR
//!   intrinsics, shared by the TIR interpreter and the reference kernels.
//! * [`tir`]: the TIR interpreter.
//! * [`relax`]: the Relax interpreter; [`check`]: run-time type checks; [`builtins`]: the
//!   packed functions; [`ops`]: the reference kernels and the legalization fallback.
//! * [`npy`]: `.npy` files; [`inputs`]: seeded random inputs; [`print`]: the text form
//!   of values; [`exec_check`]: `# EXEC:` comments; [`error`]: run-time errors.
//! * [`native`]: the interface through which compiled kernels replace the TIR
//!   interpreter; `jit` (feature `llvm`): PrimFuncs compiled by LLVM (`docs/codegen.md`);
//!   `vulkan` (feature `vulkan`): SPIR-V kernels on a Vulkan device; `cuda` (feature
//!   `cuda`): PTX kernels on an NVIDIA GPU through the driver API (`docs/gpu.md`).

pub mod builtins;
pub mod check;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod error;
pub mod exec_check;
#[cfg(any(feature = "vulkan", feature = "cuda"))]
mod gpu_host;
pub mod hugepage;
pub mod inputs;
#[cfg(feature = "llvm")]
pub mod jit;
pub mod math;
pub mod native;
pub mod npy;
pub mod ops;
pub mod print;
pub mod relax;
pub mod scalar;
pub mod tir;
pub mod value;
#[cfg(feature = "vulkan")]
pub mod vulkan;

pub use error::{RunError, RunResult};
pub use relax::{Interpreter, Options};
pub use scalar::Scalar;
pub use value::{Tensor, Value};
