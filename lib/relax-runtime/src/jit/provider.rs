//! The JIT as the kernel provider of the VM ([`crate::vm`]): each kernel of an
//! executable's table runs through its compiled packed function, in the JIT's thread
//! pool, or in the TIR interpreter when it could not be compiled.
#![expect(unsafe_code, reason = "calls machine code the JIT generated")]

use relax_codegen::llvm;
use relax_entity::EntityRef;
use relax_ir::{Global, Module};

use super::{JitKernels, PackedFn};
use crate::error::{RunError, RunResult};
use crate::kernel_rt::pool;
use crate::scalar::Scalar;
use crate::value::Value;
use crate::vm::{Executable, KernelProvider};

/// The kernels of an executable, by table index, from a JIT.
pub struct JitProvider<'a> {
    jit: &'a JitKernels,
    module: &'a Module,
    /// The compiled function and the global of each kernel of the table.
    table: Vec<(Option<PackedFn>, Global)>,
}

impl JitKernels {
    /// The provider of `exec`'s kernels, compiled from `module` (the module `exec` was
    /// compiled from; kernels without code run in its TIR interpreter).
    pub fn provider<'a>(&'a self, exec: &Executable, module: &'a Module) -> JitProvider<'a> {
        let table = exec
            .kernels()
            .iter()
            .map(|k| {
                let g = Global::new(k.global as usize);
                (self.kernels.get(&g).map(|(f, _)| *f), g)
            })
            .collect();
        JitProvider { jit: self, module, table }
    }

    /// Copies the compiled kernels' run-time error tables into `exec`.
    pub fn fill_errors(&self, exec: &mut Executable) -> RunResult<()> {
        let globals: Vec<u32> = exec.kernels().iter().map(|k| k.global).collect();
        for (i, g) in globals.into_iter().enumerate() {
            if let Some((_, k)) = self.kernels.get(&Global::new(g as usize)) {
                exec.set_kernel_errors(i, k.errors.iter().map(|e| (e.message.clone(), e.span)).collect())?;
            }
        }
        Ok(())
    }
}

impl KernelProvider for JitProvider<'_> {
    fn packed(&self, kernel: usize) -> Option<PackedFn> {
        self.table.get(kernel).and_then(|(f, _)| *f)
    }

    fn fallback(&self, kernel: usize, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let &(_, g) = self.table.get(kernel)?;
        Some(crate::vm::tir_kernels::prim_func_call(self.module, g, args))
    }

    unsafe fn invoke(&self, f: PackedFn, slots: &mut [u64]) -> i32 {
        let _pool = pool::Enter::new(&self.jit.pool);
        let t = std::time::Instant::now();
        // SAFETY: the caller's contract: the slots follow the kernel's ABI.
        let code = stacker::maybe_grow(llvm::KERNEL_STACK, 2 * llvm::KERNEL_STACK, || unsafe { f(slots.as_mut_ptr()) });
        self.jit.kernel_seconds.set(self.jit.kernel_seconds.get() + t.elapsed().as_secs_f64());
        code
    }

    fn complete(&self, code: i32, mut e: RunError) -> RunError {
        e.message = crate::kernel_rt::complete_message(code, &e.message);
        e
    }

    fn error(&self, kernel: usize, code: i32) -> Option<RunError> {
        let &(_, g) = self.table.get(kernel)?;
        let (_, k) = self.jit.kernels.get(&g)?;
        let e = k.errors.get((code as usize).checked_sub(1)?)?;
        Some(RunError::at(e.span, e.message.clone()))
    }
}
