//! One kernel as an object file: a PrimFunc lowered into an LLVM context of its own,
//! optimized and compiled to machine code. Contexts are independent, so the JIT compiles
//! the kernels of a module on several threads at once and caches each object on disk
//! (`relax_runtime::jit`); the object's symbols are the kernel's (`name_packed` and its
//! outlined parallel bodies), its imports the runtime functions ([`super::PARALLEL_FOR`],
//! [`super::MATH_HELPERS`]) and libm.

use inkwell::context::Context;
use inkwell::targets::FileType;
use relax_ir::{Global, Module};

use super::{Kernel, Options, host_machine, lower_kernel_module, optimize};
use crate::error::CodegenError;

/// The machine code of one kernel.
#[derive(Clone, Debug)]
pub struct KernelObject {
    /// The kernel's symbol, ABI and run-time errors.
    pub kernel: Kernel,
    /// A relocatable object file for the host (or `opts.cpu`) holding its code.
    pub object: Vec<u8>,
    /// Where compiling it took its time (zero for an object from a cache).
    pub times: CompileTimes,
}

/// Seconds one kernel spent in each phase of compiling.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompileTimes {
    /// TIR to LLVM IR (with LLVM's verifier).
    pub lower: f64,
    /// LLVM's `default<On>` pipeline.
    pub optimize: f64,
    /// Instruction selection, register allocation, the object file.
    pub machine_code: f64,
}

impl CompileTimes {
    /// The sum of the phases.
    pub fn total(&self) -> f64 {
        self.lower + self.optimize + self.machine_code
    }
}

/// Compiles the PrimFunc `g` of `m` to an object file: lowered in a fresh context, the
/// `default<On>` pipeline of `opts`, then machine code for the host target.
pub fn kernel_object(m: &Module, g: Global, opts: &Options) -> Result<KernelObject, CodegenError> {
    let t0 = std::time::Instant::now();
    let tm = host_machine(opts)?;
    let cx = Context::create();
    let (module, kernel) = lower_kernel_module(&cx, m, g, &tm, opts)?;
    let t1 = std::time::Instant::now();
    optimize(&module, &tm, opts)?;
    let t2 = std::time::Instant::now();
    let buf = tm
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| CodegenError::new(format!("LLVM cannot emit code for `{}`: {e}", kernel.name)))?;
    let times = CompileTimes {
        lower: (t1 - t0).as_secs_f64(),
        optimize: (t2 - t1).as_secs_f64(),
        machine_code: t2.elapsed().as_secs_f64(),
    };
    Ok(KernelObject { kernel, object: buf.as_slice().to_vec(), times })
}
