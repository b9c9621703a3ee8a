//! The calling convention of compiled kernels.
//!
//! Every PrimFunc `f` compiles to two functions:
//!
//! * `i32 f(<slot types>...)`: one LLVM parameter per slot below, pointers `noalias`
//!   when the PrimFunc says `tirx.noalias`;
//! * `i32 f_packed(ptr args)`: the same, with the slots read from an array of 8-byte
//!   words, so every kernel is called through one signature.
//!
//! The slots, in order:
//!
//! 1. each parameter: a handle is the address of element 0 of its tensor (the view's
//!    byte offset already applied); a scalar is its value (integers sign- or
//!    zero-extended to 64 bits, floats as the bits of a `double`);
//! 2. each symbolic variable bound by a parameter buffer (a bare dim, stride or element
//!    offset that is not itself a parameter), as an `int64` value, in order of first
//!    appearance in the buffer map;
//! 3. when the function returns a value (`T.ret`), the address of an 8-byte word that
//!    receives it (integers as `int64`, floats as `double`).
//!
//! The result is 0 on success and `k > 0` when run-time error `k` happened (a failed
//! `assert`, an integer division by zero); the code generator lists the messages. The
//! caller binds the symbolic variables and checks the arguments against the buffers
//! (dtype, rank, dims), exactly as the TIR interpreter does, so kernels trust their
//! slots.

use relax_ir::{DataType, PrimExprData, PrimFunc, SymVar};

/// The runtime function that runs an outlined parallel loop:
/// `i32 relax_parallel_for(ptr body, ptr closure, i64 n, i64 min_chunk)` calls
/// `i32 body(ptr closure, i64 begin, i64 end)` on chunks of `[0, n)` (each at least
/// `min_chunk` iterations long, except the last) from a thread pool, and returns the
/// first non-zero result, or 0.
pub const PARALLEL_FOR: &str = "relax_parallel_for";

/// The stack a compiled kernel may need, in bytes: allocations of up to 512 KiB live on
/// the stack (in the kernel, and in each thread running a parallel loop body), so a
/// caller runs kernels with at least this much stack left, and the threads of a pool
/// that runs parallel loops have at least this much.
pub const KERNEL_STACK: usize = 1 << 20;

/// Math functions the kernels call whose results must match the Rust functions the
/// interpreter uses (the `libm` crate's `erf`, `nextafter`; Rust's own `asinh`, `acosh`,
/// `atanh`): `f32 name_f32(f32 ...)` / `f64 name_f64(f64 ...)`. The runtime defines them
/// (`relax_runtime::kernel_rt`): the JIT maps them by address, a compiled library reaches
/// them through the pointers its loader sets.
pub const MATH_HELPERS: &[&str] = &[
    "relax_erf_f32",
    "relax_erf_f64",
    "relax_asinh_f32",
    "relax_asinh_f64",
    "relax_acosh_f32",
    "relax_acosh_f64",
    "relax_atanh_f32",
    "relax_atanh_f64",
    "relax_nextafter_f32",
    "relax_nextafter_f64",
];

/// The runtime function a kernel compiled with bounds checks calls when an index is out
/// of range: `i32 relax_index_error(i32 code, ptr indices, ptr dims, i64 n)` records the
/// access (`n` indices and the buffer's `n` dims) and returns `code`, the kernel's
/// run-time error, whose message is a template ([`INDEX_TEMPLATE`]) the runtime fills in
/// with the recorded values.
pub const INDEX_ERROR: &str = "relax_index_error";

/// The placeholders of an out-of-bounds message: the index, its dim, the dim's extent and
/// all indices (`1, 7`), as the interpreter writes them.
pub const INDEX_TEMPLATE: [&str; 4] = ["{index}", "{dim}", "{extent}", "{indices}"];

/// In a compiled library (`--emit=lib`), the runtime function `name` above is reached
/// through an exported pointer `relax_rt_ptr_<name>` that the loader sets
/// (`relax_codegen::llvm::library_object`).
pub const IMPORT_PREFIX: &str = "relax_rt_ptr_";

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// A handle parameter: a data pointer.
    Handle,
    /// A scalar parameter.
    Scalar,
    /// A symbolic variable bound from a parameter buffer's shape, strides or offset.
    ShapeVar,
    /// The address where `T.ret` stores the result.
    Ret,
}

/// One 8-byte argument slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The kind.
    pub kind: SlotKind,
    /// The variable it binds (the parameter or symbolic variable); `None` for [`SlotKind::Ret`].
    pub var: Option<SymVar>,
    /// The value's type (`handle` for pointers).
    pub dtype: DataType,
}

/// The slots of a kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelAbi {
    /// The slots, in order.
    pub slots: Vec<Slot>,
}

impl KernelAbi {
    /// The index of the slot of `v`, if it has one.
    pub fn slot_of(&self, v: SymVar) -> Option<usize> {
        self.slots.iter().position(|s| s.var == Some(v))
    }
    /// True when the function returns a value through a [`SlotKind::Ret`] slot.
    pub fn has_ret(&self) -> bool {
        self.slots.iter().any(|s| s.kind == SlotKind::Ret)
    }
}

/// The slots of a PrimFunc.
pub fn kernel_abi(f: &PrimFunc) -> KernelAbi {
    let mut slots = Vec::new();
    for &p in &f.params {
        let dt = f.pool.vars[p].dtype;
        let kind = if dt.is_handle() { SlotKind::Handle } else { SlotKind::Scalar };
        slots.push(Slot { kind, var: Some(p), dtype: if dt.is_handle() { DataType::HANDLE } else { dt } });
    }
    let mut bound: Vec<SymVar> = Vec::new();
    for &(_, b) in &f.buffer_map {
        let bd = f.buffer(b);
        let exprs = bd.shape.iter().chain(&bd.strides).chain(bd.elem_offset.iter());
        for &e in exprs {
            if let PrimExprData::Var(v) = f.pool.prim(e)
                && !f.params.contains(v)
                && !bound.contains(v)
            {
                bound.push(*v);
            }
        }
    }
    for v in bound {
        slots.push(Slot { kind: SlotKind::ShapeVar, var: Some(v), dtype: f.pool.vars[v].dtype });
    }
    if !f.ret.is_void() {
        slots.push(Slot { kind: SlotKind::Ret, var: None, dtype: f.ret });
    }
    KernelAbi { slots }
}
