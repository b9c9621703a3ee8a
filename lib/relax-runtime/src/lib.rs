//! The reference interpreter of relax modules (`docs/runtime.md`).
//!
//! It is the oracle for passes and for the JIT, so it is simple, complete and exact:
//!
//! * [`value`], [`scalar`], [`math`], [`tir`], [`print`], [`error`]: the TIR evaluator
//!   of the `relax-tir-eval` crate (values, typed scalars and their math, the TIR
//!   interpreter), re-exported; the passes use it too, so it sits below them.
//! * [`relax`]: the Relax interpreter; [`check`]: run-time type checks; [`builtins`]: the
//!   packed functions; [`ops`]: the reference kernels and the legalization fallback.
//! * [`npy`]: `.npy` files; [`inputs`]: seeded random inputs; [`exec_check`]: `# EXEC:`
//!   comments.
//! * [`lowering`]: what the interpreter falls back to for ops without a reference kernel
//!   (the driver hands in `legalize-ops`); the interpreter does not depend on the passes.
//! * [`vm`]: the executable form of the Relax level (bytecode, constant pool, kernel
//!   table, debug table; serializable) and the VM that runs it (`docs/executable.md`).
//! * [`native`]: the interface through which compiled kernels replace the TIR
//!   interpreter; `kernel_rt` (feature `native`): what compiled kernels call at run time
//!   (no LLVM); `library` (feature `native`): compiled libraries opened with the system's
//!   loader (`docs/library.md`); `jit` (feature `llvm`): PrimFuncs compiled by LLVM (`docs/codegen.md`);
//!   `vulkan` (feature `vulkan`): SPIR-V kernels on a Vulkan device; `cuda` (feature
//!   `cuda`): PTX kernels on an NVIDIA GPU through the driver API (`docs/gpu.md`).

pub mod builtins;
pub mod check;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod exec_check;
#[cfg(any(feature = "vulkan", feature = "cuda"))]
mod gpu_host;
pub mod inputs;
#[cfg(feature = "llvm")]
pub mod jit;
#[cfg(feature = "native")]
pub mod kernel_rt;
#[cfg(feature = "native")]
pub mod library;
pub mod lowering;
pub mod native;
pub mod npy;
pub mod ops;
pub mod relax;
pub mod unique;
pub mod vm;
#[cfg(feature = "vulkan")]
pub mod vulkan;

pub use relax_tir_eval::{error, hugepage, math, print, scalar, tir, value};

pub use error::{RunError, RunResult};
pub use lowering::OpLowering;
pub use relax::{Interpreter, Options};
pub use scalar::Scalar;
pub use value::{Tensor, Value};
