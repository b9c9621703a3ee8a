//! The interface through which compiled kernels replace the TIR interpreter.
//!
//! An [`crate::Interpreter`] given a [`NativeKernels`] (`Interpreter::with_native`) runs
//! every PrimFunc call through it first; where it has no code for a PrimFunc, the TIR
//! interpreter runs it. The Relax level (bindings, checks, ops without a kernel,
//! builtins) always stays in the interpreter, so both engines check and report alike.

use relax_ir::{Global, Module};

use crate::error::RunResult;
use crate::scalar::Scalar;
use crate::value::Value;

/// Compiled code for PrimFuncs.
pub trait NativeKernels {
    /// Runs PrimFunc `g` of `m` on `args` (tensors written in place, as the TIR
    /// interpreter does), returning the value of `T.ret` if any; `None` when there is no
    /// compiled code for `g`.
    fn call(&self, m: &Module, g: Global, args: &[Value]) -> Option<RunResult<Option<Scalar>>>;

    /// Seconds spent inside compiled code since the last call of this method (for
    /// `relax-run --repeat`); 0 when not measured.
    fn take_kernel_seconds(&self) -> f64 {
        0.0
    }
}
