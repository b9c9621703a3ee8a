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
        Some(prim_func_call(self.module, g, args))
    }
}

/// Runs PrimFunc `g` of `m` in the TIR interpreter; a global that is not one (an
/// executable that does not belong to `m`) is an error.
pub fn prim_func_call(m: &Module, g: Global, args: &[Value]) -> RunResult<Option<Scalar>> {
    if g.index() >= m.globals.len() || m.prim_func(g).is_none() {
        return Err(crate::error::RunError::new(format!("kernel {} is not a PrimFunc of the module", g.index())));
    }
    crate::tir::call_prim_func(m, g, args)
}
