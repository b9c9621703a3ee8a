//! The JIT: PrimFuncs compiled by LLVM (`relax_codegen::llvm`), called from the Relax
//! interpreter through [`NativeKernels`] (`docs/codegen.md`).
//!
//! * [`compile`] turns every PrimFunc of a module into an object file of its own
//!   ([`objects`]: `default<O3>` for the host CPU, the kernels compiled on every CPU at
//!   once, each taken from the disk cache of [`cache`] when it holds it) and loads the
//!   objects with ORC's `LLJIT` ([`orc`]). A PrimFunc the code generator cannot handle
//!   is listed in [`JitKernels::failed`] and runs in the TIR interpreter. The module is
//!   lowered TIR (`relax_ir::tir_lower`): the caller lowers it once and hands the same
//!   module to the interpreter.
//! * A call first binds the arguments with the TIR interpreter's own binder (the same
//!   checks and messages), then fills the kernel's 8-byte slots (`relax_codegen::abi`)
//!   with tensor addresses and the symbolic variables' values, and calls
//!   `i32 name_packed(ptr)`. A non-zero result is the kernel's run-time error.
//! * The runtime functions kernels call: [`relax_parallel_for`] (the thread pool of
//!   [`pool`], `threads` threads in all, the calling thread included) and the math
//!   helpers of `relax_codegen::abi::MATH_HELPERS` ([`crate::kernel_rt`]), defined in the
//!   JIT by address; libm functions resolve from the process.
//! * [`provider`]: the compiled kernels as the [`crate::vm::KernelProvider`] of an
//!   executable, so the VM runs the Relax level instead of the interpreter.
#![expect(unsafe_code, reason = "the JIT calls machine code it generated and hands it raw tensor pointers")]

pub mod cache;
pub mod objects;
pub mod orc;
pub mod perfmap;
pub mod provider;

use std::collections::HashMap;
use std::path::PathBuf;

use relax_codegen::CodegenError;
use relax_codegen::abi::SlotKind;
use relax_codegen::llvm::{self, Kernel, Options};
use relax_entity::EntityRef;
use relax_ir::{Global, Module};

use crate::error::{RunError, RunResult};
use crate::kernel_rt::{pool, runtime_symbols};
use crate::native::NativeKernels;
use crate::scalar::Scalar;
use crate::value::Value;

use crate::vm::PackedFn;

/// The compiled kernels of a module.
pub struct JitKernels {
    kernels: HashMap<Global, (PackedFn, Kernel)>,
    /// PrimFuncs that could not be compiled (they run in the TIR interpreter), and why.
    pub failed: Vec<(Global, CodegenError)>,
    /// Seconds spent compiling (lowering, optimizing, machine code, loading).
    pub compile_seconds: f64,
    /// How many kernels came from the compile cache.
    pub cached: usize,
    /// CPU seconds the compiled kernels spent in each phase, summed over kernels (the
    /// phases run on several threads at once, so the sum can pass `compile_seconds`).
    pub phase_seconds: llvm::CompileTimes,
    /// Seconds spent in machine code since [`NativeKernels::take_kernel_seconds`].
    kernel_seconds: std::cell::Cell<f64>,
    /// The threads of the kernels' parallel loops.
    pool: pool::LazyPool,
    /// Parameters (kernel, index) each kernel overwrites before reading them.
    overwrites: std::collections::HashSet<(Global, usize)>,
}

/// How the JIT gets its code and runs it.
#[derive(Clone, Debug, Default)]
pub struct JitOptions {
    /// The directory of the compile cache ([`cache`]); `None`: compile every kernel and
    /// store nothing.
    pub cache_dir: Option<PathBuf>,
    /// Threads of the kernels' parallel loops (and of compiling them), the calling thread
    /// included (0: one per CPU).
    pub threads: usize,
    /// For each kernel, the indices of the parameters it writes completely before
    /// reading them (`relax_transform::analysis::full_writes`, found before scheduling):
    /// results passed there are not zero-filled first.
    pub overwrites: HashMap<Global, Vec<usize>>,
}

/// Compiles every PrimFunc of `m` (no cache) and calls `run` with the kernels, whose
/// parallel loops use every CPU; the machine code lives until `run` returns.
pub fn compile<T>(m: &Module, opts: &Options, run: impl FnOnce(&JitKernels) -> T) -> Result<T, CodegenError> {
    compile_with(m, opts, &JitOptions::default(), run)
}

/// [`compile`] with the JIT's own options.
pub fn compile_with<T>(
    m: &Module,
    opts: &Options,
    jit_opts: &JitOptions,
    run: impl FnOnce(&JitKernels) -> T,
) -> Result<T, CodegenError> {
    let start = std::time::Instant::now();
    let cache = jit_opts.cache_dir.clone().map(|d| cache::ObjectCache::new(d, opts));
    let threads = pool::resolve_threads(jit_opts.threads);
    let built = objects::build(m, opts, cache.as_ref(), threads);
    let jit = orc::OrcJit::new(&runtime_symbols())?;
    let mut kernels = HashMap::new();
    let mut failed = built.failed;
    let mut map = perfmap::asked().then(Vec::new);
    let mut phase_seconds = llvm::CompileTimes::default();
    for ko in built.objects {
        phase_seconds.lower += ko.times.lower;
        phase_seconds.optimize += ko.times.optimize;
        phase_seconds.machine_code += ko.times.machine_code;
        match link(&jit, &ko) {
            Ok((addr, k)) => {
                if let Some(map) = &mut map {
                    map.extend(perfmap::lines(&ko.object, &k.packed_symbol, addr));
                }
                // SAFETY: `name_packed` was generated with the signature `i32 (ptr)`.
                let f = unsafe { std::mem::transmute::<usize, PackedFn>(addr) };
                kernels.insert(k.global, (f, k));
            }
            Err(e) => failed.push((ko.kernel.global, e)),
        }
    }
    if let Some(map) = map {
        perfmap::write(&map);
    }
    failed.sort_by_key(|(g, _)| *g);
    let jk = JitKernels {
        kernels,
        failed,
        compile_seconds: start.elapsed().as_secs_f64(),
        cached: built.cached,
        phase_seconds,
        kernel_seconds: std::cell::Cell::new(0.0),
        pool: pool::LazyPool::new(jit_opts.threads),
        overwrites: jit_opts.overwrites.iter().flat_map(|(&g, ps)| ps.iter().map(move |&p| (g, p))).collect(),
    };
    let r = run(&jk);
    drop(jk);
    drop(jit);
    Ok(r)
}

/// Loads a kernel's object into `jit`: the address of its packed function.
fn link(jit: &orc::OrcJit, ko: &llvm::KernelObject) -> Result<(usize, Kernel), CodegenError> {
    jit.add_object(&ko.kernel.name, &ko.object)?;
    Ok((jit.lookup(&ko.kernel.packed_symbol)?, ko.kernel.clone()))
}

impl JitKernels {
    /// The number of compiled kernels.
    pub fn len(&self) -> usize {
        self.kernels.len()
    }
    /// True when nothing was compiled.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }
    /// True when `g` has compiled code.
    pub fn has(&self, g: Global) -> bool {
        self.kernels.contains_key(&g)
    }
    /// The number of threads parallel loops run on, the calling thread included.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    fn run(&self, m: &Module, g: Global, f: PackedFn, k: &Kernel, args: &[Value]) -> RunResult<Option<Scalar>> {
        let fr = crate::tir::bind_args(m, g, args)?;
        let pf = fr.f;
        let mut slots = vec![0u64; k.abi.slots.len()];
        let mut ret_word = 0u64;
        for (i, s) in k.abi.slots.iter().enumerate() {
            slots[i] = match (s.kind, s.var) {
                (SlotKind::Handle, Some(v)) => {
                    let idx = pf.params.iter().position(|&p| p == v).expect("a parameter");
                    match &args[idx] {
                        Value::Tensor(t) => {
                            // SAFETY: the storage outlives the call; no `RefCell` borrow is
                            // held while the kernel writes through the pointer.
                            let base = unsafe { (*t.data.as_ptr()).as_mut_ptr() };
                            base.wrapping_add(t.offset) as u64
                        }
                        other => {
                            return Err(RunError::new(format!(
                                "PrimFunc `{}`: argument {idx} must be a tensor, got {}",
                                k.name,
                                other.describe()
                            )));
                        }
                    }
                }
                (SlotKind::Scalar | SlotKind::ShapeVar, Some(v)) => match fr.vars[v.index()] {
                    Some(Scalar::Float(x, _)) => x.to_bits(),
                    Some(Scalar::Int(x, _)) => x as u64,
                    None => {
                        return Err(RunError::new(format!(
                            "PrimFunc `{}`: variable `{}` is used before it has a value",
                            k.name,
                            fr.var_name(v)
                        )));
                    }
                },
                (SlotKind::Ret, _) => std::ptr::from_mut(&mut ret_word) as u64,
                _ => 0,
            };
        }
        let _pool = pool::Enter::new(&self.pool);
        let t = std::time::Instant::now();
        // SAFETY: the slots follow the kernel's ABI; tensors were checked against its
        // buffers by `bind_call`.
        let code =
            stacker::maybe_grow(relax_codegen::abi::KERNEL_STACK, 2 * relax_codegen::abi::KERNEL_STACK, || unsafe {
                f(slots.as_mut_ptr())
            });
        self.kernel_seconds.set(self.kernel_seconds.get() + t.elapsed().as_secs_f64());
        if code != 0 {
            let e = k.errors.get(code as usize - 1);
            return Err(match e {
                Some(e) => RunError::at(e.span, crate::kernel_rt::complete_message(code, &e.message)),
                None => RunError::new(format!("PrimFunc `{}` failed with code {code}", k.name)),
            });
        }
        if k.abi.has_ret() {
            let dt = pf.ret;
            return Ok(Some(if dt.is_float() {
                Scalar::float(dt, f64::from_bits(ret_word))
            } else {
                Scalar::int(dt, ret_word as i64)
            }));
        }
        Ok(None)
    }
}

impl NativeKernels for JitKernels {
    fn call(&self, m: &Module, g: Global, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let (f, k) = self.kernels.get(&g)?;
        Some(self.run(m, g, *f, k, args))
    }

    fn take_kernel_seconds(&self) -> f64 {
        self.kernel_seconds.replace(0.0)
    }

    fn overwrites(&self, g: Global, param: usize) -> bool {
        self.kernels.contains_key(&g) && self.overwrites.contains(&(g, param))
    }
}
