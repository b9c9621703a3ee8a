//! Running a kernel: every thread of the grid, block by block.
//!
//! Without barriers or warp shuffles, the threads of a block run one after another,
//! each to its end (nothing it could observe differs). With them, the block's threads
//! run in phases: each runs until it reaches a barrier (`bar.sync`), a `shfl.sync` or
//! its end; a warp whose live threads all wait at the same `shfl.sync` exchanges its
//! values, and when every live thread waits at the barrier, all continue. Threads that
//! exited count as arrived. Shared memory is per block and zeroed, local memory per
//! thread and zeroed, registers start at zero.
//!
//! Every memory access is checked: the address must be aligned to the access size
//! and the bytes must lie inside one allocation (global), the block's shared memory or
//! the thread's local memory; otherwise the launch stops with a [`Fault`] naming the
//! kernel, block, thread, source line and address.

use crate::alu;
use crate::decode::{Kernel, Program, mask};
use crate::inst::{Addr, NSREG, Op, Opnd, ShflMode, Sreg};
use crate::memory::{DeviceMemory, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::parse::Space;

/// A launch's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_shared: u32,
}

/// What went wrong in a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The launch configuration is invalid (`CUDA_ERROR_INVALID_VALUE`).
    InvalidLaunch,
    /// An access outside memory (`CUDA_ERROR_ILLEGAL_ADDRESS`).
    IllegalAddress,
    /// A misaligned access (`CUDA_ERROR_MISALIGNED_ADDRESS`).
    Misaligned,
    /// `trap` (`CUDA_ERROR_ILLEGAL_INSTRUCTION`, as on current GPUs).
    Trap,
    /// Threads that wait for each other forever (`CUDA_ERROR_LAUNCH_FAILED`).
    Deadlock,
    /// The block's threads need more registers and local memory than the simulator
    /// holds at once (`CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`).
    OutOfResources,
    /// The launch ran more instructions than [`step_limit`] allows
    /// (`CUDA_ERROR_LAUNCH_TIMEOUT`).
    Timeout,
}

/// The environment variable that sets [`step_limit`].
pub const STEP_LIMIT_ENV: &str = "RELAX_CUDA_SIM_MAX_STEPS";

/// The default of [`step_limit`]: under a minute of simulation in a debug build (about
/// 50 million instructions a second; five times that optimized).
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 31;

/// How many instructions (all threads together) a launch may execute before it is
/// stopped as hung: `RELAX_CUDA_SIM_MAX_STEPS` when set to a number, else
/// [`DEFAULT_STEP_LIMIT`]. Read once per process.
pub fn step_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var(STEP_LIMIT_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_STEP_LIMIT)
    })
}

/// The most memory the registers and local memory of a block's threads may take when
/// they run in phases (all at once).
pub const MAX_BLOCK_STATE_BYTES: u64 = 256 << 20;

/// A failed launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The kind of failure.
    pub kind: FaultKind,
    /// What happened, where.
    pub message: String,
}

impl Fault {
    fn new(kind: FaultKind, message: impl Into<String>) -> Fault {
        Fault { kind, message: message.into() }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// It can run.
    Ready,
    /// It waits at the barrier instruction at its `pc`.
    Barrier,
    /// It waits at the `shfl.sync` at its `pc`.
    Shuffle,
    /// It exited.
    Done,
}

struct Thread {
    pc: usize,
    regs: Vec<u64>,
    sreg: [u64; NSREG],
    local: Vec<u8>,
    state: State,
    /// `%tid` as x, y, z.
    tid: [u32; 3],
}

/// The state shared by the threads of a block.
struct Machine<'a> {
    k: &'a Kernel,
    mem: &'a mut DeviceMemory,
    params: &'a [u8],
    shared: Vec<u8>,
    hint: usize,
    steps: u64,
    limit: u64,
}

/// Checks the configuration of a launch of kernel `k` with a parameter buffer of
/// `params` bytes.
pub fn check_launch(k: &Kernel, dims: &LaunchDims, params: usize) -> Result<(), Fault> {
    let invalid = |m: String| Err(Fault::new(FaultKind::InvalidLaunch, m));
    let [bx, by, bz] = dims.block;
    let [gx, gy, gz] = dims.grid;
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    if threads == 0 || gx == 0 || gy == 0 || gz == 0 {
        return invalid(format!("kernel `{}`: a grid or block dimension is 0", k.name));
    }
    if bx > 1024 || by > 1024 || bz > 64 || threads > 1024 {
        return invalid(format!(
            "kernel `{}`: a block of {bx}x{by}x{bz} threads exceeds 1024x1024x64 / 1024 threads",
            k.name
        ));
    }
    if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
        return invalid(format!("kernel `{}`: a grid of {gx}x{gy}x{gz} blocks is too large", k.name));
    }
    if let Some([x, y, z]) = k.maxntid
        && threads > u64::from(x) * u64::from(y) * u64::from(z)
    {
        return invalid(format!("kernel `{}`: {threads} threads per block exceed its .maxntid {x}, {y}, {z}", k.name));
    }
    if let Some(r) = k.reqntid
        && r != dims.block
    {
        return invalid(format!("kernel `{}`: the block must be {}x{}x{} (.reqntid)", k.name, r[0], r[1], r[2]));
    }
    if k.shared_bytes as u64 + u64::from(dims.dynamic_shared) > crate::decode::MAX_SHARED_BYTES {
        return invalid(format!(
            "kernel `{}`: {} bytes of static and {} of dynamic shared memory exceed {}",
            k.name,
            k.shared_bytes,
            dims.dynamic_shared,
            crate::decode::MAX_SHARED_BYTES
        ));
    }
    let per_thread = 8 * k.reg_bits.len() as u64 + k.local_bytes as u64;
    let live = if k.lockstep { threads } else { 1 };
    if per_thread * live > MAX_BLOCK_STATE_BYTES {
        return Err(Fault::new(
            FaultKind::OutOfResources,
            format!(
                "kernel `{}`: {live} threads of {per_thread} bytes of registers and local memory exceed the simulator's {MAX_BLOCK_STATE_BYTES} bytes",
                k.name
            ),
        ));
    }
    if params != k.param_bytes {
        return invalid(format!("kernel `{}` takes {} bytes of parameters, got {params}", k.name, k.param_bytes));
    }
    Ok(())
}

/// Runs kernel `k` of `prog` on `dims` with the parameter buffer `params` (laid out as
/// [`Kernel::params`] says), stopping it after [`step_limit`] instructions.
pub fn launch(prog: &Program, k: usize, dims: &LaunchDims, params: &[u8], mem: &mut DeviceMemory) -> Result<(), Fault> {
    launch_limited(prog, k, dims, params, mem, step_limit())
}

/// [`launch`] with at most `limit` instructions.
pub fn launch_limited(
    prog: &Program,
    k: usize,
    dims: &LaunchDims,
    params: &[u8],
    mem: &mut DeviceMemory,
    limit: u64,
) -> Result<(), Fault> {
    let kernel = &prog.kernels[k];
    check_launch(kernel, dims, params.len())?;
    let shared_size = kernel.shared_bytes + dims.dynamic_shared as usize;
    let mut m = Machine { k: kernel, mem, params, shared: vec![0; shared_size], hint: 0, steps: 0, limit };
    let [bx, by, bz] = dims.block;
    let nthreads = (bx * by * bz) as usize;
    let nregs = kernel.reg_bits.len();
    let mut seq = Thread::new(nregs, kernel.local_bytes);
    for cz in 0..dims.grid[2] {
        for cy in 0..dims.grid[1] {
            for cx in 0..dims.grid[0] {
                let ctaid = [cx, cy, cz];
                if ctaid != [0, 0, 0] {
                    m.shared.fill(0);
                }
                let result = if kernel.lockstep {
                    let mut threads: Vec<Thread> = (0..nthreads)
                        .map(|i| {
                            let mut t = Thread::new(nregs, kernel.local_bytes);
                            t.setup(i, dims, ctaid);
                            t
                        })
                        .collect();
                    m.block_phases(&mut threads)
                } else {
                    let mut r = Ok(());
                    for i in 0..nthreads {
                        seq.reset();
                        seq.setup(i, dims, ctaid);
                        if let Err(e) = m.run(&mut seq) {
                            r = Err((e, seq.tid, seq.pc));
                            break;
                        }
                    }
                    r
                };
                if let Err((e, tid, pc)) = result {
                    let line = kernel.lines.get(pc).copied().unwrap_or(0);
                    return Err(Fault::new(
                        e.kind,
                        format!(
                            "kernel `{}`, block ({cx}, {cy}, {cz}), thread ({}, {}, {}), line {line} `{}`: {}",
                            kernel.name,
                            tid[0],
                            tid[1],
                            tid[2],
                            prog.line_text(line),
                            e.message
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

impl Thread {
    fn new(nregs: usize, local: usize) -> Thread {
        Thread {
            pc: 0,
            regs: vec![0; nregs],
            sreg: [0; NSREG],
            local: vec![0; local],
            state: State::Ready,
            tid: [0; 3],
        }
    }

    fn reset(&mut self) {
        self.regs.fill(0);
        self.local.fill(0);
        self.pc = 0;
        self.state = State::Ready;
    }

    /// Sets the special registers of thread `i` (linear index) of block `ctaid`.
    fn setup(&mut self, i: usize, dims: &LaunchDims, ctaid: [u32; 3]) {
        let [bx, by, bz] = dims.block;
        let i = i as u32;
        let tid = [i % bx, (i / bx) % by, i / (bx * by)];
        let lane = i % 32;
        let s = &mut self.sreg;
        s[Sreg::TidX as usize] = tid[0].into();
        s[Sreg::TidY as usize] = tid[1].into();
        s[Sreg::TidZ as usize] = tid[2].into();
        s[Sreg::NtidX as usize] = bx.into();
        s[Sreg::NtidY as usize] = by.into();
        s[Sreg::NtidZ as usize] = bz.into();
        s[Sreg::CtaidX as usize] = ctaid[0].into();
        s[Sreg::CtaidY as usize] = ctaid[1].into();
        s[Sreg::CtaidZ as usize] = ctaid[2].into();
        s[Sreg::NctaidX as usize] = dims.grid[0].into();
        s[Sreg::NctaidY as usize] = dims.grid[1].into();
        s[Sreg::NctaidZ as usize] = dims.grid[2].into();
        s[Sreg::Laneid as usize] = lane.into();
        s[Sreg::Warpid as usize] = (i / 32).into();
        s[Sreg::Nwarpid as usize] = (bx * by * bz).div_ceil(32).into();
        s[Sreg::LanemaskEq as usize] = 1u64 << lane;
        s[Sreg::LanemaskLt as usize] = (1u64 << lane) - 1;
        s[Sreg::LanemaskLe as usize] = (1u64 << (lane + 1)) - 1;
        s[Sreg::LanemaskGt as usize] = mask(!((1u64 << (lane + 1)) - 1), 32);
        s[Sreg::LanemaskGe as usize] = mask(!((1u64 << lane) - 1), 32);
        s[Sreg::Smid as usize] = 0;
        s[Sreg::Nsmid as usize] = 1;
        s[Sreg::Gridid as usize] = 1;
        self.tid = tid;
    }
}

/// Reads `n` bytes (1, 2, 4 or 8) little-endian.
#[inline]
fn get(b: &[u8]) -> u64 {
    match b.len() {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
        4 => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

/// Writes the low `b.len()` bytes of `v`.
#[inline]
fn put(b: &mut [u8], v: u64) {
    let n = b.len();
    b.copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Where an access lands: an allocation and an offset in it, or an offset in the
/// block's shared memory, the thread's local memory or the parameters.
enum At {
    Global(usize, usize),
    Shared(usize),
    Local(usize),
    Param(usize),
}

/// A failure and the thread (its `%tid` and `pc`) that caused it.
type ThreadFault = (Fault, [u32; 3], usize);

impl Machine<'_> {
    /// Finds the `len` bytes at `addr` in `space` for an access of `align`-byte
    /// alignment by a thread with `local_len` bytes of local memory.
    #[inline]
    fn locate(
        &mut self,
        local_len: usize,
        space: Space,
        addr: u64,
        len: usize,
        align: usize,
        write: bool,
    ) -> Result<At, Fault> {
        let what = if write { "write" } else { "read" };
        if addr % align as u64 != 0 {
            return Err(Fault::new(
                FaultKind::Misaligned,
                format!("misaligned {len}-byte {} {what} at 0x{addr:x}", space.name()),
            ));
        }
        let (space, off) = match space {
            Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) => {
                (Space::Shared, addr - SHARED_WINDOW)
            }
            Space::Generic if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) => {
                (Space::Local, addr - LOCAL_WINDOW)
            }
            Space::Generic | Space::Const => (Space::Global, addr),
            s => (s, addr),
        };
        if space == Space::Global {
            return match self.mem.find(addr, len as u64, &mut self.hint) {
                Some(i) => Ok(At::Global(i, (addr - self.mem.region(i).base) as usize)),
                None => Err(Fault::new(
                    FaultKind::IllegalAddress,
                    format!("out-of-bounds {len}-byte global {what} at 0x{addr:x}: no allocation holds it"),
                )),
            };
        }
        if space == Space::Param && write {
            return Err(Fault::new(FaultKind::IllegalAddress, "kernel parameters are read-only"));
        }
        let size = match space {
            Space::Shared => self.shared.len(),
            Space::Local => local_len,
            _ => self.params.len(),
        };
        match usize::try_from(off).ok().filter(|o| o.checked_add(len).is_some_and(|e| e <= size)) {
            Some(o) => Ok(match space {
                Space::Shared => At::Shared(o),
                Space::Local => At::Local(o),
                _ => At::Param(o),
            }),
            None => Err(Fault::new(
                FaultKind::IllegalAddress,
                format!(
                    "out-of-bounds {len}-byte {} {what} at 0x{off:x} (the {} memory holds {size} bytes)",
                    space.name(),
                    space.name()
                ),
            )),
        }
    }

    /// An operand's value for thread `t`.
    #[inline(always)]
    fn val(&self, t: &Thread, o: Opnd) -> u64 {
        match o {
            Opnd::R(r) => t.regs[r as usize],
            Opnd::I(v) => v,
            Opnd::S(s) if s >= Sreg::Clock as u8 => self.steps,
            Opnd::S(s) => t.sreg[s as usize],
        }
    }

    /// The address an [`Addr`] names for thread `t`.
    #[inline(always)]
    fn address(&self, t: &Thread, a: &Addr) -> u64 {
        self.val(t, a.base).wrapping_add(a.off as u64)
    }

    /// Runs thread `t` until it exits or waits at a barrier or shuffle.
    fn run(&mut self, t: &mut Thread) -> Result<State, Fault> {
        let k = self.k;
        loop {
            let inst = &k.code[t.pc];
            self.steps += 1;
            if self.steps > self.limit {
                return Err(Fault::new(
                    FaultKind::Timeout,
                    format!("the launch ran {} instructions, the limit ({STEP_LIMIT_ENV})", self.limit),
                ));
            }
            if let Some((p, neg)) = inst.guard
                && (t.regs[p as usize] != 0) == neg
            {
                t.pc += 1;
                continue;
            }
            match &inst.op {
                Op::Bin { op, ty, m, d, a, b } => {
                    t.regs[*d as usize] = alu::bin(*op, *ty, *m, self.val(t, *a), self.val(t, *b));
                }
                Op::Un { op, ty, m, d, a } => t.regs[*d as usize] = alu::un(*op, *ty, *m, self.val(t, *a)),
                Op::Tern { op, ty, m, d, a, b, c } => {
                    t.regs[*d as usize] = alu::tern(*op, *ty, *m, self.val(t, *a), self.val(t, *b), self.val(t, *c));
                }
                Op::Bfi { ty, d, a, b, c, e } => {
                    t.regs[*d as usize] =
                        alu::bfi(*ty, self.val(t, *a), self.val(t, *b), self.val(t, *c), self.val(t, *e));
                }
                Op::Setp { cmp, ty, ftz, d, d2, a, b, comb } => {
                    let r = alu::compare(*cmp, *ty, *ftz, self.val(t, *a), self.val(t, *b));
                    let (p, q) = match comb {
                        None => (r, !r),
                        Some((op, c, neg)) => {
                            let c = (self.val(t, *c) != 0) ^ neg;
                            let f = |x: bool| match op {
                                crate::inst::BoolOp::And => x && c,
                                crate::inst::BoolOp::Or => x || c,
                                crate::inst::BoolOp::Xor => x ^ c,
                            };
                            (f(r), f(!r))
                        }
                    };
                    if let Some(d) = d {
                        t.regs[*d as usize] = u64::from(p);
                    }
                    if let Some(d2) = d2 {
                        t.regs[*d2 as usize] = u64::from(q);
                    }
                }
                Op::Selp { d, a, b, p } => {
                    t.regs[*d as usize] = if self.val(t, *p) != 0 { self.val(t, *a) } else { self.val(t, *b) };
                }
                Op::Cvt { dt, st, m, d, a, ext } => t.regs[*d as usize] = alu::cvt(*dt, *st, *m, self.val(t, *a), *ext),
                Op::Mov { d, a } => t.regs[*d as usize] = self.val(t, *a),
                Op::Pack { d, parts, bits } => {
                    let mut v = 0u64;
                    for (i, p) in parts.iter().enumerate() {
                        v |= mask(self.val(t, *p), u32::from(*bits)) << (i as u32 * u32::from(*bits));
                    }
                    t.regs[*d as usize] = v;
                }
                Op::Unpack { ds, a, bits } => {
                    let v = self.val(t, *a);
                    for (i, d) in ds.iter().enumerate() {
                        if let Some(d) = d {
                            t.regs[*d as usize] = mask(v >> (i as u32 * u32::from(*bits)), u32::from(*bits));
                        }
                    }
                }
                Op::Cvta { space, to_generic, d, a } => {
                    let window = if *space == Space::Shared { SHARED_WINDOW } else { LOCAL_WINDOW };
                    let v = self.val(t, *a);
                    t.regs[*d as usize] = if *to_generic { v.wrapping_add(window) } else { v.wrapping_sub(window) };
                }
                Op::Ld { ty, n, ds, addr, ext } => {
                    let sz = ty.bytes() as usize;
                    let total = sz * *n as usize;
                    let a = self.address(t, addr);
                    let at = self.locate(t.local.len(), addr.space, a, total, total, false)?;
                    let bytes: &[u8] = match at {
                        At::Global(i, o) => &self.mem.region(i).data[o..o + total],
                        At::Shared(o) => &self.shared[o..o + total],
                        At::Local(o) => &t.local[o..o + total],
                        At::Param(o) => &self.params[o..o + total],
                    };
                    let bits = ty.bits();
                    for (i, d) in ds.iter().enumerate().take(*n as usize) {
                        if let Some(d) = d {
                            let raw = get(&bytes[i * sz..(i + 1) * sz]);
                            t.regs[*d as usize] = if ty.is_signed() && u32::from(*ext) > bits {
                                mask(alu::sext(raw, bits) as u64, u32::from(*ext))
                            } else {
                                raw
                            };
                        }
                    }
                }
                Op::St { ty, n, vals, addr } => {
                    let sz = ty.bytes() as usize;
                    let total = sz * *n as usize;
                    let mut v = [0u64; 4];
                    for i in 0..*n as usize {
                        v[i] = self.val(t, vals[i]);
                    }
                    let a = self.address(t, addr);
                    let at = self.locate(t.local.len(), addr.space, a, total, total, true)?;
                    let bytes: &mut [u8] = match at {
                        At::Global(i, o) => &mut self.mem.region_mut(i).data[o..o + total],
                        At::Shared(o) => &mut self.shared[o..o + total],
                        At::Local(o) => &mut t.local[o..o + total],
                        At::Param(_) => unreachable!("rejected by locate"),
                    };
                    for i in 0..*n as usize {
                        put(&mut bytes[i * sz..(i + 1) * sz], v[i]);
                    }
                }
                Op::Atom { op, ty, d, addr, b, c } => {
                    let sz = ty.bytes() as usize;
                    let (b, c) = (self.val(t, *b), self.val(t, *c));
                    let a = self.address(t, addr);
                    let at = self.locate(t.local.len(), addr.space, a, sz, sz, true)?;
                    let bytes: &mut [u8] = match at {
                        At::Global(i, o) => &mut self.mem.region_mut(i).data[o..o + sz],
                        At::Shared(o) => &mut self.shared[o..o + sz],
                        At::Local(o) => &mut t.local[o..o + sz],
                        At::Param(_) => unreachable!("rejected by locate"),
                    };
                    let old = get(bytes);
                    put(bytes, alu::atom(*op, *ty, old, b, c));
                    if let Some(d) = d {
                        t.regs[*d as usize] = old;
                    }
                }
                Op::Bra { target } => {
                    t.pc = *target as usize;
                    continue;
                }
                Op::Exit => return Ok(State::Done),
                Op::Trap => return Err(Fault::new(FaultKind::Trap, "`trap` executed")),
                Op::Bar { .. } => return Ok(State::Barrier),
                Op::Shfl { .. } => return Ok(State::Shuffle),
                Op::Nop => {}
            }
            t.pc += 1;
        }
    }

    /// Runs the threads of a block in phases between barriers and shuffles.
    fn block_phases(&mut self, threads: &mut [Thread]) -> Result<(), ThreadFault> {
        let n = threads.len();
        loop {
            for t in threads.iter_mut() {
                if t.state == State::Ready {
                    t.state = self.run(t).map_err(|e| (e, t.tid, t.pc))?;
                }
            }
            let mut progress = false;
            for w in 0..n.div_ceil(32) {
                let warp = &mut threads[w * 32..((w + 1) * 32).min(n)];
                if warp.iter().any(|t| t.state == State::Shuffle)
                    && warp.iter().all(|t| matches!(t.state, State::Shuffle | State::Done))
                {
                    self.shuffle(warp)?;
                    progress = true;
                }
            }
            if progress {
                continue;
            }
            let Some(first) = threads.iter().find(|t| t.state != State::Done) else { return Ok(()) };
            if threads.iter().any(|t| t.state == State::Shuffle) {
                let t = threads.iter().find(|t| t.state == State::Shuffle).unwrap_or(first);
                return Err((
                    Fault::new(FaultKind::Deadlock, "`shfl.sync` waits for threads of its warp that wait at a barrier"),
                    t.tid,
                    t.pc,
                ));
            }
            // Every live thread waits at a barrier: they must agree on which.
            let id_of = |m: &Self, t: &Thread| match &m.k.code[t.pc].op {
                Op::Bar { id, count } => (m.val(t, *id), count.map(|c| m.val(t, c))),
                _ => (u64::MAX, None),
            };
            let (id, _) = id_of(self, first);
            let padded = (n as u64).next_multiple_of(32);
            for t in threads.iter().filter(|t| t.state != State::Done) {
                let (i, c) = id_of(self, t);
                if i != id {
                    return Err((
                        Fault::new(
                            FaultKind::Deadlock,
                            format!("threads wait at different barriers ({id} and {i}) and never meet"),
                        ),
                        t.tid,
                        t.pc,
                    ));
                }
                if let Some(c) = c
                    && c != padded
                {
                    return Err((
                        Fault::new(
                            FaultKind::Deadlock,
                            format!("a barrier for {c} threads in a block of {n} is not supported by the simulator"),
                        ),
                        t.tid,
                        t.pc,
                    ));
                }
            }
            for t in threads.iter_mut().filter(|t| t.state != State::Done) {
                t.pc += 1;
                t.state = State::Ready;
            }
        }
    }

    /// Exchanges the values of a warp whose live threads all wait at a `shfl.sync`.
    fn shuffle(&mut self, warp: &mut [Thread]) -> Result<(), ThreadFault> {
        let live: Vec<usize> = (0..warp.len()).filter(|&i| warp[i].state == State::Shuffle).collect();
        let pc = warp[live[0]].pc;
        let mut vals = [0u64; 32];
        let mut args = [(0u64, 0u64); 32];
        for &i in &live {
            let t = &warp[i];
            if t.pc != pc {
                return Err((
                    Fault::new(FaultKind::Deadlock, "threads of a warp wait at different `shfl.sync` instructions"),
                    t.tid,
                    t.pc,
                ));
            }
            let Op::Shfl { a, b, c, .. } = &self.k.code[pc].op else { unreachable!("a thread waits at a shuffle") };
            vals[i] = self.val(t, *a);
            args[i] = (self.val(t, *b), self.val(t, *c));
        }
        let Op::Shfl { mode, d, p, .. } = &self.k.code[pc].op else { unreachable!("a thread waits at a shuffle") };
        for &i in &live {
            let lane = i as u64;
            let (b, c) = args[i];
            let (cval, segmask) = (c & 0x1f, (c >> 8) & 0x1f);
            let max_lane = (lane & segmask) | (cval & !segmask);
            let min_lane = lane & segmask;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane.wrapping_sub(b & 0x1f);
                    (j, lane >= (b & 0x1f) && j >= max_lane)
                }
                ShflMode::Down => {
                    let j = lane + (b & 0x1f);
                    (j, j <= max_lane)
                }
                ShflMode::Bfly => {
                    let j = lane ^ (b & 0x1f);
                    (j, j <= max_lane)
                }
                ShflMode::Idx => {
                    let j = min_lane | ((b & 0x1f) & !segmask);
                    (j, j <= max_lane)
                }
            };
            // A lane that does not take part (exited, or past the block) gives nothing.
            let src = if ok && live.contains(&(j as usize)) { j as usize } else { i };
            let t = &mut warp[i];
            t.regs[*d as usize] = vals[src];
            if let Some(p) = p {
                t.regs[*p as usize] = u64::from(ok);
            }
            t.pc += 1;
            t.state = State::Ready;
        }
        Ok(())
    }
}
