//! Native code for relax PrimFuncs (`docs/codegen.md`).
//!
//! * [`abi`]: the calling convention of compiled kernels (which 8-byte slot holds which
//!   parameter, buffer pointer or symbolic dim), shared by the code generator and the JIT.
//!   It needs no LLVM.
//! * `llvm` (feature `llvm`): TIR to LLVM IR, the `default<O3>` pipeline for the host
//!   CPU, and `.ll` / `.s` / `.o` output. Blocks, `T.init`, every loop kind (parallel
//!   loops are outlined and run through the runtime's `relax_parallel_for`), buffers with
//!   symbolic shapes and strides, and the scalar language of the interpreter.
//!
//! Feature `llvm-dynamic` links `libLLVM-19.so` instead of the static libraries; it is
//! the only place in the workspace that picks an LLVM link mode.

pub mod abi;
pub mod error;
#[cfg(feature = "llvm")]
pub mod llvm;

pub use abi::{KernelAbi, Slot, SlotKind, kernel_abi};
pub use error::CodegenError;

/// The backends this build of the crate includes (`llvm`), for `relax_driver::features`.
pub fn features() -> &'static [&'static str] {
    if cfg!(feature = "llvm") { &["llvm"] } else { &[] }
}
