//! Compiled libraries (`relax-translate --emit=lib`, `docs/library.md`), opened with the
//! system's dynamic loader: no LLVM and no parser at run time.
//!
//! [`Library::open`] loads the shared object, checks and reads its [`manifest`] and its
//! executable (the `relax_manifest` and `relax_executable` byte arrays), points the
//! library's runtime imports (`relax_rt_ptr_<name>`, `relax_codegen::abi::IMPORT_PREFIX`)
//! at this process's [`crate::kernel_rt`] functions, and resolves every kernel's packed
//! entry point. [`Library::invoke`] runs one kernel on filled ABI slots on the library's
//! thread pool; [`Program`] runs the executable on the VM with those kernels.
#![expect(unsafe_code, reason = "a loaded library is machine code called through raw pointers")]

pub mod manifest;
pub mod program;

pub use program::{LibraryKernels, Program};

use std::path::Path;

use relax_codegen::abi::{IMPORT_PREFIX, KERNEL_STACK};

use crate::error::{RunError, RunResult};
use crate::kernel_rt::{pool, runtime_symbols};
pub use crate::vm::PackedFn;
use manifest::Manifest;

/// The symbol of the manifest's bytes (`<symbol>_size` holds their length).
pub const MANIFEST_SYMBOL: &str = "relax_manifest";
/// The symbol of the executable's bytes (`<symbol>_size` holds their length).
pub const EXECUTABLE_SYMBOL: &str = "relax_executable";

/// An opened library.
pub struct Library {
    /// What it holds besides code.
    pub manifest: Manifest,
    /// The kernels' entry points, by manifest index.
    kernels: Vec<PackedFn>,
    /// The executable's bytes (copied out of the library).
    executable: Vec<u8>,
    /// The threads of the kernels' parallel loops.
    pool: pool::LazyPool,
    /// Keeps the code mapped; dropped last.
    _lib: libloading::Library,
}

impl Library {
    /// Opens the library at `path`; its parallel loops use `threads` threads in all, the
    /// calling thread included (0: one per CPU).
    pub fn open(path: &Path, threads: usize) -> RunResult<Library> {
        let shown = path.display();
        if !path.exists() {
            return Err(RunError::new(format!("cannot open library `{shown}`: no such file")));
        }
        check_machine(path)?;
        // The loader searches its library path for a name without a `/`: name the file.
        let path =
            std::fs::canonicalize(path).map_err(|e| RunError::new(format!("cannot open library `{shown}`: {e}")))?;
        // SAFETY: loading runs the library's initializers; a relax library has none of
        // its own (it is kernels and data), and a foreign one is rejected below before
        // any of its code is called.
        let lib = unsafe { libloading::Library::new(&path) }
            .map_err(|e| RunError::new(format!("cannot load library `{shown}`: {e}")))?;
        let manifest_bytes = data(&lib, MANIFEST_SYMBOL).ok_or_else(|| {
            RunError::new(format!("`{shown}` is not a relax library (it has no `{MANIFEST_SYMBOL}`)"))
        })?;
        let manifest = Manifest::from_bytes(manifest_bytes).map_err(|e| RunError::new(format!("`{shown}`: {e}")))?;
        let executable = data(&lib, EXECUTABLE_SYMBOL)
            .ok_or_else(|| RunError::new(format!("`{shown}` has no executable (`{EXECUTABLE_SYMBOL}`)")))?
            .to_vec();
        for (name, addr) in runtime_symbols() {
            let slot = format!("{IMPORT_PREFIX}{name}");
            // SAFETY: `relax_rt_ptr_<name>` is a pointer-sized, writable global of the
            // library (`relax_codegen::llvm::library_object`), read only by its kernels.
            if let Ok(sym) = unsafe { lib.get::<*mut usize>(slot.as_bytes()) } {
                unsafe { (*sym).write(addr) };
            }
        }
        let mut kernels = Vec::with_capacity(manifest.kernels.len());
        for k in &manifest.kernels {
            // SAFETY: the manifest names the `i32 (ptr)` entry point of each kernel.
            let f = unsafe { lib.get::<PackedFn>(k.symbol.as_bytes()) }.map_err(|e| {
                RunError::new(format!("`{shown}`: kernel `{}` has no entry point `{}`: {e}", k.name, k.symbol))
            })?;
            kernels.push(*f);
        }
        Ok(Library { manifest, kernels, executable, pool: pool::LazyPool::new(threads), _lib: lib })
    }

    /// The executable's bytes.
    pub fn executable(&self) -> &[u8] {
        &self.executable
    }

    /// The manifest index of the kernel with packed symbol `symbol`.
    pub fn kernel_index(&self, symbol: &str) -> Option<usize> {
        self.manifest.kernels.iter().position(|k| k.symbol == symbol)
    }

    /// The entry point of kernel `index`.
    pub fn kernel(&self, index: usize) -> Option<PackedFn> {
        self.kernels.get(index).copied()
    }

    /// Calls a kernel's entry point `f` on `slots` on the library's thread pool, with the
    /// stack kernels need; the kernel's result code.
    ///
    /// # Safety
    /// `f` is one of this library's kernels and `slots` follow its ABI: tensor addresses
    /// of buffers checked against its parameters, symbolic variables' values, a result
    /// word where it has one.
    pub unsafe fn invoke(&self, f: PackedFn, slots: &mut [u64]) -> i32 {
        let _pool = pool::Enter::new(&self.pool);
        // SAFETY: the caller's contract.
        stacker::maybe_grow(KERNEL_STACK, 2 * KERNEL_STACK, || unsafe { f(slots.as_mut_ptr()) })
    }
}

/// ELF's `e_machine` of this process's architecture (`None`: not checked).
const HOST_MACHINE: Option<(u16, &str)> = if cfg!(target_arch = "x86_64") {
    Some((62, "x86-64"))
} else if cfg!(target_arch = "aarch64") {
    Some((183, "aarch64"))
} else if cfg!(target_arch = "riscv64") {
    Some((243, "riscv64"))
} else {
    None
};

/// A library built for another architecture is an error naming both (the system's
/// loader only says it cannot open the file).
fn check_machine(path: &Path) -> RunResult<()> {
    let mut head = [0u8; 20];
    let read = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
    if read.is_err() || &head[..4] != b"\x7fELF" {
        return Ok(()); // The loader's own message says what is wrong.
    }
    let little = head[5] == 1;
    let machine =
        if little { u16::from_le_bytes([head[18], head[19]]) } else { u16::from_be_bytes([head[18], head[19]]) };
    let Some((host, host_name)) = HOST_MACHINE else { return Ok(()) };
    if machine == host {
        return Ok(());
    }
    let name = match machine {
        62 => "x86-64",
        183 => "aarch64",
        243 => "riscv64",
        _ => "another architecture",
    };
    Err(RunError::new(format!(
        "`{}` is a library for {name} (ELF machine {machine}), and this machine is {host_name}: run it there, or build it without `--target`",
        path.display()
    )))
}

/// The bytes of the data array `name` (with its `<name>_size`) of `lib`.
fn data<'l>(lib: &'l libloading::Library, name: &str) -> Option<&'l [u8]> {
    // SAFETY: `name` and `name_size` are a constant byte array and its 64-bit length,
    // written together by `relax_codegen::llvm::library_object`; the bytes live as long
    // as the library stays loaded, which `'l` ties them to.
    unsafe {
        let at = lib.get::<*const u8>(name.as_bytes()).ok()?;
        let size = lib.get::<*const u64>(format!("{name}_size").as_bytes()).ok()?;
        let n = usize::try_from((*size).read_unaligned()).ok()?;
        Some(std::slice::from_raw_parts(*at, n))
    }
}
