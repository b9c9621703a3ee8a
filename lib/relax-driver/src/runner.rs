//! What runs the Relax level for `relax-run`: the tree interpreter (the oracle,
//! `--engine interp` and `--relax-exec=interp`) or the VM over the module's executable
//! (`--engine jit`'s default, docs/executable.md).

use relax_ir::{Global, Module, Span};
use relax_runtime::vm::{KernelProvider, Vm, VmOptions};
use relax_runtime::{Interpreter, RunResult, Value};

/// Runs functions of one module.
pub(crate) enum Runner<'a> {
    /// The tree interpreter.
    Interp(Interpreter<'a>),
    /// The VM.
    Vm {
        /// The VM.
        vm: Vm<'a>,
        /// The module the executable was compiled from (for names of globals).
        module: &'a Module,
        /// Text printed so far.
        printed: std::cell::RefCell<String>,
    },
}

impl<'a> Runner<'a> {
    /// The interpreter, PrimFuncs through `native` when given.
    pub fn interp(
        module: &'a Module,
        options: relax_runtime::Options,
        native: Option<&'a dyn relax_runtime::native::NativeKernels>,
    ) -> Runner<'a> {
        let mut interp = Interpreter::with_options(module, options).with_lowering(&crate::lowering::Legalize);
        interp.native = native;
        Runner::Interp(interp)
    }

    /// The VM over `exec` (compiled from `module`) with `kernels`.
    pub fn vm(
        exec: &'a relax_runtime::vm::Executable,
        kernels: &'a dyn KernelProvider,
        module: &'a Module,
    ) -> Runner<'a> {
        Runner::Vm { vm: Vm::new(exec, kernels, VmOptions::default()), module, printed: Default::default() }
    }

    /// Calls module function `g`.
    pub fn call_global(&self, g: Global, args: Vec<Value>) -> RunResult<Value> {
        match self {
            Runner::Interp(i) => i.call_global(g, args, Span::NONE),
            Runner::Vm { vm, module, printed } => {
                let r = vm.call(&module.globals[g].name, args);
                printed.borrow_mut().push_str(&vm.take_printed());
                r
            }
        }
    }

    /// Everything `R.print` printed so far.
    pub fn printed(&self) -> String {
        match self {
            Runner::Interp(i) => i.printed.borrow().clone(),
            Runner::Vm { printed, .. } => printed.borrow().clone(),
        }
    }
}
