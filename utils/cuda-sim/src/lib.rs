//! A CUDA driver simulator: `librelax_cuda_sim.so` exports the part of the CUDA
//! driver API that relax's CUDA engine uses (`cuInit` … `cuLaunchKernel`,
//! `cuGetErrorString`), so the engine runs on machines without an NVIDIA GPU when it
//! opens this library instead of `libcuda.so.1` (`RELAX_CUDA_DRIVER` or
//! `relax-run --cuda-driver`; `docs/gpu.md`, section "PTX simulator").
//!
//! * [`parse`]: PTX text to a syntax tree; [`decode`]: the tree to instructions with
//!   register indices and resolved labels and symbols (`inst`), checked against what
//!   the simulator implements;
//! * [`exec`]: runs every thread of a grid (in phases between barriers when a kernel
//!   has them) with checked memory accesses; `alu`: the arithmetic, IEEE-exact for
//!   the rounded float operations;
//! * [`memory`]: device memory as host allocations at device addresses;
//! * [`driver`]: the device, contexts, modules, functions and error codes;
//!   `ffi`: the exported C functions.
//!
//! It is a test tool: it models one device of compute capability 8.0, runs kernels
//! synchronously and one thread at a time, and knows nothing of warps' timing,
//! caches or the memory model beyond barriers.

mod alu;
pub mod decode;
pub mod driver;
pub mod exec;
mod ffi;
mod inst;
pub mod memory;
pub mod parse;

#[cfg(test)]
mod tests;

pub use decode::{Kernel, Program};
pub use driver::{CuError, Driver, Failure};
pub use exec::{Fault, FaultKind, LaunchDims, launch, launch_limited};
pub use memory::DeviceMemory;

/// An error in PTX text: its line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxError {
    /// The 1-based line.
    pub line: u32,
    /// What is wrong.
    pub message: String,
    /// The PTX ISA version is too new (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`).
    pub version: bool,
}

impl PtxError {
    /// An error at `line`.
    pub fn new(line: u32, message: impl Into<String>) -> PtxError {
        PtxError { line, message: message.into(), version: false }
    }

    /// An unsupported PTX ISA version.
    pub fn version(message: impl Into<String>) -> PtxError {
        PtxError { line: 1, message: message.into(), version: true }
    }
}

impl std::fmt::Display for PtxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}
