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
//! * [`gpu`]: the launch description of kernels scheduled by `schedule-gpu`, shared by
//!   the GPU back ends and engines; `spirv` (feature `spirv`): TIR to SPIR-V with rspirv
//!   (`docs/gpu.md`); `nvptx` (feature `llvm`): the same kernels as PTX through LLVM's
//!   NVPTX backend, reusing the `llvm` lowering through its device hooks.
//!
//! Feature `llvm-dynamic` links `libLLVM-19.so` instead of the static libraries; it is
//! the only place in the workspace that picks an LLVM link mode.

pub mod abi;
pub mod error;
pub mod gpu;
#[cfg(feature = "llvm")]
pub mod llvm;
#[cfg(feature = "llvm")]
pub mod nvptx;
#[cfg(feature = "spirv")]
pub mod spirv;

pub use abi::{KernelAbi, Slot, SlotKind, kernel_abi};
pub use error::CodegenError;

/// The backends this build of the crate includes (`llvm`, `spirv`), for
/// `relax_driver::features`.
pub fn features() -> &'static [&'static str] {
    match (cfg!(feature = "llvm"), cfg!(feature = "spirv")) {
        (true, true) => &["llvm", "spirv"],
        (true, false) => &["llvm"],
        (false, true) => &["spirv"],
        (false, false) => &[],
    }
}
