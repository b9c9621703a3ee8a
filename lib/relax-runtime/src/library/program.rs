//! A loaded library with its executable: the Rust API of compiled libraries
//! (`docs/library.md`), which the C API and `relax-run model.so` use.
//!
//! [`Program::open`] loads the library ([`super::Library`]), reads its executable
//! (`crate::vm::Executable::from_bytes`, every malformed byte an error) and matches each
//! kernel of the executable's table with the library's code by symbol; a kernel without
//! code is an error then, not at its first call. Calls run on the VM with the library's
//! kernels ([`LibraryKernels`], a [`KernelProvider`]).
#![expect(unsafe_code, reason = "kernels are machine code called through raw pointers")]

use std::path::Path;

use relax_entity::EntityRef;
use relax_ir::Ty;

use super::Library;
use crate::error::{RunError, RunResult};
use crate::inputs::Signature;
use crate::value::Value;
use crate::vm::{Executable, KernelProvider, PackedFn, Vm, VmOptions};

/// A library ready to call.
pub struct Program {
    library: Library,
    exec: Executable,
    /// The library's kernel index of each kernel of the executable's table.
    table: Vec<usize>,
}

impl Program {
    /// Opens the library at `path` (`threads` threads for parallel loops, 0: one per CPU).
    pub fn open(path: &Path, threads: usize) -> RunResult<Program> {
        let library = Library::open(path, threads)?;
        let shown = path.display();
        let exec = Executable::from_bytes(library.executable())
            .map_err(|e| RunError::new(format!("`{shown}`: its executable cannot be read: {}", e.message)))?;
        let mut table = Vec::with_capacity(exec.kernels().len());
        for k in exec.kernels() {
            let i = library.kernel_index(&k.packed_symbol).ok_or_else(|| {
                RunError::new(format!("`{shown}`: the executable calls kernel `{}`, which the library lacks", k.name))
            })?;
            table.push(i);
        }
        Ok(Program { library, exec, table })
    }

    /// The executable.
    pub fn executable(&self) -> &Executable {
        &self.exec
    }

    /// The library.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// The names of the functions the program can call.
    pub fn function_names(&self) -> Vec<String> {
        self.exec.functions().iter().map(|f| f.name.clone()).collect()
    }

    /// The parameters of function `name`, for making inputs ([`crate::inputs`]).
    pub fn signature(&self, name: &str) -> Option<Signature<'_>> {
        let f = self.exec.function(name)?;
        let params = f
            .params
            .iter()
            .map(|p| (f.reg_names.get(p.reg as usize).map_or("", String::as_str), Ty::new(p.ty as usize)))
            .collect();
        Some(Signature { name: &f.name, pool: &f.pool, params })
    }

    /// The library's kernels as the VM's provider.
    pub fn kernels(&self) -> LibraryKernels<'_> {
        LibraryKernels { program: self }
    }

    /// A VM over the program (keep it for many calls: it recycles results' storage).
    pub fn vm<'a>(&'a self, kernels: &'a LibraryKernels<'a>) -> Vm<'a> {
        Vm::new(&self.exec, kernels, VmOptions::default())
    }

    /// Calls function `name` on `args` (a VM of its own).
    pub fn call(&self, name: &str, args: Vec<Value>) -> RunResult<Value> {
        let kernels = self.kernels();
        self.vm(&kernels).call(name, args)
    }

    /// `e` as text: `FILE:LINE:COL: error: message` and the source line when the
    /// executable's debug table has its location ([`Executable::render_error`]).
    pub fn render_error(&self, e: &RunError) -> String {
        self.exec.render_error(e)
    }
}

/// The kernels of a [`Program`]'s library, by the executable's table.
pub struct LibraryKernels<'a> {
    program: &'a Program,
}

impl KernelProvider for LibraryKernels<'_> {
    fn packed(&self, kernel: usize) -> Option<PackedFn> {
        self.program.library.kernel(*self.program.table.get(kernel)?)
    }

    unsafe fn invoke(&self, f: PackedFn, slots: &mut [u64]) -> i32 {
        // SAFETY: the caller fills the slots per the kernel's ABI.
        unsafe { self.program.library.invoke(f, slots) }
    }

    fn complete(&self, code: i32, mut e: RunError) -> RunError {
        e.message = crate::kernel_rt::complete_message(code, &e.message);
        e
    }

    fn error(&self, kernel: usize, code: i32) -> Option<RunError> {
        let info = &self.program.library.manifest.kernels[*self.program.table.get(kernel)?];
        let e = info.errors.get((code as usize).checked_sub(1)?)?;
        Some(RunError::at(e.span, e.message.clone()))
    }
}
