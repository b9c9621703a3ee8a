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

    /// True when the compiled `g` writes every element of its parameter `param` before
    /// reading any (`relax_transform::analysis::full_writes`), so a result passed there
    /// need not be zero-filled first; false when not known.
    fn overwrites(&self, g: Global, param: usize) -> bool {
        let _ = (g, param);
        false
    }
}
