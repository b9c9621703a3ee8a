//! The kernels of a module as object files: each PrimFunc taken from the disk cache
//! ([`super::cache`]) or compiled by LLVM in a context of its own, on as many threads as
//! there are CPUs (`relax_codegen::llvm::kernel_object`), new objects stored back.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use relax_codegen::CodegenError;
use relax_codegen::llvm::{KernelObject, Options, kernel_object};
use relax_ir::{Global, Module};

use super::cache::ObjectCache;

/// What [`build`] made.
pub struct Objects {
    /// The kernels that compiled or came from the cache, in the module's order.
    pub objects: Vec<KernelObject>,
    /// The PrimFuncs that could not be compiled, and why.
    pub failed: Vec<(Global, CodegenError)>,
    /// How many objects came from the cache.
    pub cached: usize,
}

/// The object of every PrimFunc of `m`, from `cache` when it has them, compiled on
/// `threads` threads (at least one) otherwise.
pub fn build(m: &Module, opts: &Options, cache: Option<&ObjectCache>, threads: usize) -> Objects {
    let globals: Vec<Global> = m.print_order().into_iter().filter(|&g| m.prim_func(g).is_some()).collect();
    let keys: Vec<Option<String>> = globals.iter().map(|&g| cache.map(|c| c.key(m, g))).collect();
    let mut slots: Vec<Option<Result<KernelObject, CodegenError>>> =
        globals.iter().zip(&keys).map(|(&g, key)| Some(Ok(cache?.load(key.as_ref()?, m, g)?))).collect();
    let cached = slots.iter().filter(|s| s.is_some()).count();
    let todo: Vec<usize> = (0..globals.len()).filter(|&i| slots[i].is_none()).collect();
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(todo.len()));
    let workers = threads.clamp(1, todo.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = todo.get(t) else { break };
                    let r = kernel_object(m, globals[i], opts);
                    if let (Ok(k), Some(c), Some(key)) = (&r, cache, &keys[i]) {
                        // A cache that cannot be written only costs the next start.
                        let _ = c.store(key, k);
                    }
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
                }
            });
        }
    });
    for (i, r) in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
        slots[i] = Some(r);
    }
    if let Some(c) = cache
        && cached < globals.len()
    {
        c.evict();
    }
    let mut objects = Vec::with_capacity(globals.len());
    let mut failed = Vec::new();
    for (g, slot) in globals.into_iter().zip(slots) {
        match slot {
            Some(Ok(k)) => objects.push(k),
            Some(Err(e)) => failed.push((g, e)),
            None => failed.push((g, CodegenError::new("internal error: a kernel was not compiled"))),
        }
    }
    Objects { objects, failed, cached }
}
