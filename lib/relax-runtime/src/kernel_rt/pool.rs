//! The thread pool of compiled kernels' parallel loops (`relax_parallel_for`), for the JIT and for loaded libraries.
//!
//! A parallel loop in a kernel lasts microseconds in a decode step, so what a launch
//! costs matters as much as the loop itself. The pool therefore:
//!
//! * lets the **calling thread work**: it claims chunks like any helper, so a loop
//!   finishes even when no helper wakes up in time (on a busy machine the helpers may
//!   not be scheduled at all), and a call never blocks waiting for a job to start;
//! * hands out **chunks dynamically** (one atomic counter), so a slow or descheduled
//!   thread holds up at most the chunk it claimed;
//! * keeps its `threads - 1` helpers **spinning** for [`SPIN`] after a job before they
//!   sleep on a condition variable, so the next loop of the same step finds them awake.
//!
//! The pool has one job slot. A job is published by making the `epoch` even and new;
//! before the slot is rewritten the epoch is made odd, and the caller waits until no
//! helper is inside the old job (`active == 0`). A helper announces itself in `active`
//! before checking the epoch again, so a helper that runs a chunk always reads the job
//! the caller published (both sides use sequentially consistent operations).

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `i32 body(ptr closure, i64 begin, i64 end)`: an outlined parallel loop body.
pub type BodyFn = unsafe extern "C" fn(*mut u8, i64, i64) -> i32;

/// How long an idle helper spins before it sleeps.
const SPIN: Duration = Duration::from_micros(200);
/// Chunks per thread a loop is cut into (when its minimum chunk allows).
const CHUNKS_PER_THREAD: i64 = 4;
/// The stack of a helper thread (kernels keep buffers of up to 512 KiB on the stack).
const STACK: usize = 4 * relax_codegen::abi::KERNEL_STACK;

/// What the caller and the helpers share.
struct Shared {
    /// Even: the job in the slot may be joined; odd: the slot is being rewritten.
    epoch: AtomicU64,
    /// Helpers inside the current job.
    active: AtomicUsize,
    /// The job: body, closure, iteration count, chunk size, the next unclaimed iteration
    /// and the first non-zero result.
    body: AtomicUsize,
    closure: AtomicUsize,
    n: AtomicI64,
    chunk: AtomicI64,
    next: AtomicI64,
    result: AtomicI32,
    /// Helpers asleep on `wake`; changed under `lock`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    stop: AtomicBool,
}

impl Shared {
    /// Claims and runs chunks of the current job until none is left.
    fn work(&self) {
        let (n, chunk) = (self.n.load(Relaxed), self.chunk.load(Relaxed));
        loop {
            let begin = self.next.fetch_add(chunk, Relaxed);
            if begin >= n {
                return;
            }
            if self.result.load(Relaxed) != 0 {
                continue;
            }
            let end = (begin + chunk).min(n);
            let body = self.body.load(Relaxed);
            // SAFETY: `body` was stored from a `BodyFn` by `Pool::run` for this job.
            let body = unsafe { std::mem::transmute::<usize, BodyFn>(body) };
            let closure = self.closure.load(Relaxed) as *mut u8;
            // SAFETY: the caller of `Pool::run` keeps the closure alive until every
            // helper has left the job; chunks are disjoint iteration ranges.
            let r = unsafe { body(closure, begin, end) };
            if r != 0 {
                let _ = self.result.compare_exchange(0, r, Relaxed, Relaxed);
            }
        }
    }

    /// Waits for a job newer than `seen`; `None` when the pool stops.
    fn wait(&self, seen: u64) -> Option<u64> {
        let fresh = |e: u64| e != seen && e % 2 == 0;
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.stop.load(Acquire) {
                return None;
            }
            let e = self.epoch.load(Acquire);
            if fresh(e) {
                return Some(e);
            }
            spins = spins.wrapping_add(1);
            if spins % 256 != 0 || start.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_add(1, SeqCst);
            loop {
                let e = self.epoch.load(SeqCst);
                if self.stop.load(SeqCst) || fresh(e) {
                    break;
                }
                guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
            }
            self.sleepers.fetch_sub(1, SeqCst);
            drop(guard);
            spins = 0;
        }
    }

    /// A helper thread's life.
    fn helper(&self) {
        let mut seen = self.epoch.load(Acquire);
        while let Some(e) = self.wait(seen) {
            seen = e;
            self.active.fetch_add(1, SeqCst);
            if self.epoch.load(SeqCst) == e {
                self.work();
            }
            self.active.fetch_sub(1, Release);
        }
    }

    /// Spins until no helper is inside a job.
    fn drain(&self) {
        let mut spins = 0u32;
        while self.active.load(SeqCst) != 0 {
            spins = spins.wrapping_add(1);
            if spins % 64 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// A pool of `threads - 1` helper threads and the calling thread.
pub struct Pool {
    shared: Arc<Shared>,
    threads: usize,
    helpers: Vec<std::thread::JoinHandle<()>>,
    /// Held by the thread running a job (a second caller runs its loop serially).
    busy: Mutex<()>,
}

impl Pool {
    /// A pool for `threads` threads in all (at least 1), the caller included.
    pub fn new(threads: usize) -> Pool {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            body: AtomicUsize::new(0),
            closure: AtomicUsize::new(0),
            n: AtomicI64::new(0),
            chunk: AtomicI64::new(1),
            next: AtomicI64::new(0),
            result: AtomicI32::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let threads = threads.max(1);
        let mut helpers = Vec::new();
        for k in 1..threads {
            let sh = shared.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("relax-pool-{k}"))
                .stack_size(STACK)
                .spawn(move || sh.helper());
            match spawned {
                Ok(h) => helpers.push(h),
                Err(_) => break,
            }
        }
        let threads = helpers.len() + 1;
        Pool { shared, threads, helpers, busy: Mutex::new(()) }
    }

    /// The number of threads that run a loop, the caller included.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `body` on `[0, n)` in chunks of at least `min_chunk` iterations (except the
    /// last); the first non-zero result, or 0.
    ///
    /// # Safety
    ///
    /// `body` must be safe to call with `closure` on any disjoint subranges of `[0, n)`
    /// from several threads at once, and `closure` must stay valid until this returns.
    pub unsafe fn run(&self, body: BodyFn, closure: *mut u8, n: i64, min_chunk: i64) -> i32 {
        if n <= 0 {
            return 0;
        }
        let threads = self.threads as i64;
        let chunk = min_chunk.max(1).max((n + threads * CHUNKS_PER_THREAD - 1) / (threads * CHUNKS_PER_THREAD));
        let guard = if threads > 1 && n > chunk { self.busy.try_lock().ok() } else { None };
        let Some(_guard) = guard else {
            // SAFETY: `body` is an outlined loop body generated for this closure.
            return unsafe { body(closure, 0, n) };
        };
        let sh = &*self.shared;
        let e = sh.epoch.load(Relaxed);
        sh.epoch.store(e + 1, SeqCst);
        sh.drain();
        sh.body.store(body as usize, Relaxed);
        sh.closure.store(closure as usize, Relaxed);
        sh.n.store(n, Relaxed);
        sh.chunk.store(chunk, Relaxed);
        sh.next.store(0, Relaxed);
        sh.result.store(0, Relaxed);
        sh.epoch.store(e + 2, SeqCst);
        if sh.sleepers.load(SeqCst) > 0 {
            let _l = sh.lock.lock().unwrap_or_else(|e| e.into_inner());
            sh.wake.notify_all();
        }
        sh.work();
        sh.drain();
        sh.result.load(Acquire)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, SeqCst);
        {
            let _l = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        for h in self.helpers.drain(..) {
            let _ = h.join();
        }
    }
}

/// A pool made on first use, for `threads` threads (0: one per CPU).
pub struct LazyPool {
    threads: usize,
    pool: OnceLock<Pool>,
}

impl LazyPool {
    /// A pool of `threads` threads (0: [`std::thread::available_parallelism`]), started
    /// by the first loop that needs it.
    pub fn new(threads: usize) -> LazyPool {
        LazyPool { threads: resolve_threads(threads), pool: OnceLock::new() }
    }

    /// The number of threads a loop runs on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// See [`Pool::run`]; serial with one thread.
    ///
    /// # Safety
    ///
    /// As for [`Pool::run`].
    pub unsafe fn run(&self, body: BodyFn, closure: *mut u8, n: i64, min_chunk: i64) -> i32 {
        if self.threads <= 1 || n <= min_chunk.max(1) {
            // SAFETY: `body` is an outlined loop body generated for this closure.
            return unsafe { body(closure, 0, n.max(0)) };
        }
        let pool = self.pool.get_or_init(|| Pool::new(self.threads));
        // SAFETY: the caller's contract is `Pool::run`'s.
        unsafe { pool.run(body, closure, n, min_chunk) }
    }
}

/// `threads`, or one per CPU for 0.
pub fn resolve_threads(threads: usize) -> usize {
    if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads }
}

thread_local! {
    /// The pool of the kernel call in progress on this thread (null outside one).
    static CURRENT: Cell<*const LazyPool> = const { Cell::new(std::ptr::null()) };
}

/// Makes `pool` the current pool of this thread until dropped.
pub struct Enter {
    old: *const LazyPool,
}

impl Enter {
    /// Enters `pool`; it must outlive the guard.
    pub fn new(pool: &LazyPool) -> Enter {
        Enter { old: CURRENT.with(|c| c.replace(pool)) }
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.old));
    }
}

/// Runs a parallel loop on the current pool, or serially outside a kernel call.
///
/// # Safety
///
/// As for [`Pool::run`].
pub unsafe fn run_current(body: BodyFn, closure: *mut u8, n: i64, min_chunk: i64) -> i32 {
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        // SAFETY: `body` is an outlined loop body generated for this closure.
        return unsafe { body(closure, 0, n.max(0)) };
    }
    // SAFETY: `Enter` keeps the pool alive while it is current; the caller's contract is
    // `Pool::run`'s.
    unsafe { (*p).run(body, closure, n, min_chunk) }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn add_range(closure: *mut u8, begin: i64, end: i64) -> i32 {
        // SAFETY: the tests pass an `AtomicI64`.
        let sum = unsafe { &*(closure as *const AtomicI64) };
        for i in begin..end {
            sum.fetch_add(i, Relaxed);
        }
        0
    }

    unsafe extern "C" fn fail_at_7(_: *mut u8, begin: i64, end: i64) -> i32 {
        if (begin..end).contains(&7) { 3 } else { 0 }
    }

    #[test]
    fn every_iteration_runs_once() {
        for threads in [1, 2, 3, 8] {
            let pool = Pool::new(threads);
            for n in [0i64, 1, 5, 100, 10_000] {
                for _ in 0..20 {
                    let sum = AtomicI64::new(0);
                    // SAFETY: `add_range` only adds to the atomic `sum`, which outlives the call.
                    let r = unsafe { pool.run(add_range, (&raw const sum) as *mut u8, n, 1) };
                    assert_eq!(r, 0);
                    assert_eq!(sum.load(Relaxed), n * (n - 1).max(0) / 2, "threads {threads}, n {n}");
                }
            }
        }
    }

    #[test]
    fn errors_come_back() {
        let pool = Pool::new(3);
        // SAFETY: `fail_at_7` reads nothing through its closure.
        assert_eq!(unsafe { pool.run(fail_at_7, std::ptr::null_mut(), 1000, 1) }, 3);
        // SAFETY: as above.
        assert_eq!(unsafe { pool.run(fail_at_7, std::ptr::null_mut(), 5, 1) }, 0);
    }

    #[test]
    fn serial_outside_a_kernel_call() {
        let sum = AtomicI64::new(0);
        // SAFETY: `add_range` only adds to the atomic `sum`, which outlives the call.
        assert_eq!(unsafe { run_current(add_range, (&raw const sum) as *mut u8, 10, 1) }, 0);
        assert_eq!(sum.load(Relaxed), 45);
        let lazy = LazyPool::new(2);
        let _e = Enter::new(&lazy);
        let sum = AtomicI64::new(0);
        // SAFETY: as above.
        assert_eq!(unsafe { run_current(add_range, (&raw const sum) as *mut u8, 1000, 1) }, 0);
        assert_eq!(sum.load(Relaxed), 499_500);
    }
}
