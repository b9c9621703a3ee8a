//! Kernels run by the TIR interpreter: the [`KernelProvider`] of a VM without compiled
//! code (tests, and builds without LLVM). It needs the module the executable was
//! compiled from.

use relax_entity::EntityRef;
use relax_ir::{Global, Module};

use super::Executable;
use super::kernels::{KernelProvider, PackedFn};
use crate::error::RunResult;
use crate::scalar::Scalar;
use crate::value::Value;

/// Every kernel of an executable through the TIR interpreter.
pub struct TirKernels<'m> {
    module: &'m Module,
    globals: Vec<Global>,
}

impl<'m> TirKernels<'m> {
    /// The kernels of `exec`, compiled from `module`.
    pub fn new(exec: &Executable, module: &'m Module) -> TirKernels<'m> {
        TirKernels { module, globals: exec.kernels().iter().map(|k| Global::new(k.global as usize)).collect() }
    }
}

impl KernelProvider for TirKernels<'_> {
    fn packed(&self, _: usize) -> Option<PackedFn> {
        None
    }

    fn fallback(&self, kernel: usize, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let g = *self.globals.get(kernel)?;
        Some(crate::tir::call_prim_func(self.module, g, args))
    }
}
