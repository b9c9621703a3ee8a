//! The kernel table: each PrimFunc the executable calls, with a signature that checks
//! and binds arguments and fills the ABI slots of `relax_codegen::abi` without the IR,
//! and [`KernelProvider`], through which an engine supplies the kernels' code. Binding
//! and slot filling are in [`super::bind`].
#![expect(unsafe_code, reason = "the provider's `invoke` calls machine code")]

use relax_codegen::abi::{self, SlotKind};
use relax_entity::EntityRef;
use relax_ir::{DataType, Global, Module, Pool, PrimExpr, PrimExprData, SymVar};

use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::Value;

/// `i32 name_packed(u64* slots)`: the one signature of compiled kernels.
pub type PackedFn = unsafe extern "C" fn(*mut u64) -> i32;

/// A buffer a parameter is bound to.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSig {
    /// The buffer's name.
    pub name: String,
    /// Its element type.
    pub dtype: DataType,
    /// Its dims (expressions of the kernel's pool).
    pub shape: Vec<u32>,
    /// Its strides (empty: row-major).
    pub strides: Vec<u32>,
    /// Its element offset, if declared.
    pub elem_offset: Option<u32>,
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelParam {
    /// The parameter's variable in the kernel's pool (a handle or a scalar).
    pub var: u32,
    /// The buffer it is bound to, for a tensor parameter.
    pub buffer: Option<BufferSig>,
}

/// An 8-byte slot of the kernel's ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSlot {
    /// What it holds.
    pub kind: SlotKind,
    /// The variable it holds (the pool variable); unused for [`SlotKind::Ret`].
    pub var: u32,
}

/// A run-time error a compiled kernel reports by its result code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError {
    /// The message.
    pub message: String,
    /// The failing statement (a span table index).
    pub span: u32,
}

/// One kernel of the table.
#[derive(Clone, Debug)]
pub struct KernelEntry {
    /// The PrimFunc's name.
    pub name: String,
    /// The symbol of its packed function (`relax_codegen::llvm::Kernel::packed_symbol`).
    pub packed_symbol: String,
    /// Its global's index in the module it was compiled from.
    pub global: u32,
    /// The parameters.
    pub params: Vec<KernelParam>,
    /// The ABI slots.
    pub slots: Vec<KernelSlot>,
    /// The dtype of `T.ret` (`void` when it returns nothing).
    pub ret: DataType,
    /// The kernel's variables and the expressions of its buffers.
    pub pool: Pool,
    /// Its run-time errors, by result code minus one (filled in by whoever compiles the
    /// kernel: [`crate::vm::Executable::set_kernel_errors`]).
    pub errors: Vec<KernelError>,
    /// Parameters the compiled kernel writes completely before reading them (results
    /// passed there need no zero-filling).
    pub overwrites: Vec<u32>,
}

/// The code of an executable's kernels.
pub trait KernelProvider {
    /// The compiled packed function of kernel `kernel` (an index into
    /// [`crate::vm::Executable::kernels`]); `None` when it has none.
    fn packed(&self, kernel: usize) -> Option<PackedFn>;

    /// Runs a kernel without compiled code some other way (the JIT: the TIR
    /// interpreter), tensors written in place, returning the value of `T.ret` if any;
    /// `None` when it cannot.
    fn fallback(&self, kernel: usize, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let _ = (kernel, args);
        None
    }

    /// Calls compiled code on its slots. The default calls it directly; an engine wraps
    /// it (the JIT enters its thread pool for `relax_parallel_for`, grows the stack and
    /// times it).
    ///
    /// # Safety
    ///
    /// `slots` must follow the kernel's ABI.
    unsafe fn invoke(&self, f: PackedFn, slots: &mut [u64]) -> i32 {
        // SAFETY: the caller's contract.
        unsafe { f(slots.as_mut_ptr()) }
    }

    /// A kernel's run-time error with the values only the run knows filled in (the
    /// indices of an out-of-bounds access: `crate::kernel_rt::complete_message`); the
    /// default leaves it as it is.
    fn complete(&self, code: i32, e: RunError) -> RunError {
        let _ = code;
        e
    }

    /// The error of result code `code` of kernel `kernel`, when the executable's table
    /// has none.
    fn error(&self, kernel: usize, code: i32) -> Option<RunError> {
        let _ = (kernel, code);
        None
    }
}

/// Kernels with no code at all: every call is an error (an executable whose functions
/// call no kernel, or a test).
pub struct NoKernels;

impl KernelProvider for NoKernels {
    fn packed(&self, _: usize) -> Option<PackedFn> {
        None
    }
}

/// Builds the table entry of PrimFunc `g` of `m`.
pub fn entry(m: &Module, g: Global) -> Result<KernelEntry, String> {
    let name = m.globals[g].name.clone();
    let f = m.prim_func(g).ok_or_else(|| format!("`{name}` is not a PrimFunc"))?;
    let mut pool = Pool::new();
    let mut map = std::collections::HashMap::new();
    let var_of = |pool: &mut Pool, v: SymVar, map: &mut std::collections::HashMap<SymVar, PrimExpr>| {
        let img = match map.get(&v) {
            Some(&img) => img,
            None => {
                let nv = pool.vars.push(f.pool.vars[v].clone());
                let img = pool.raw(PrimExprData::Var(nv));
                map.insert(v, img);
                img
            }
        };
        match pool.prim(img) {
            PrimExprData::Var(nv) => Ok(nv.index() as u32),
            _ => Err(format!("kernel `{name}`: a parameter is not a variable")),
        }
    };
    let abi = abi::kernel_abi(f);
    let mut params = Vec::with_capacity(f.params.len());
    for &p in &f.params {
        let var = var_of(&mut pool, p, &mut map)?;
        let buffer = match f.param_buffer(p) {
            None => None,
            Some(b) => {
                let bd = f.buffer(b);
                let mut imp = |e: PrimExpr| pool.import_prim(&f.pool, e, &mut map).index() as u32;
                Some(BufferSig {
                    name: bd.name.clone(),
                    dtype: bd.dtype,
                    shape: bd.shape.iter().map(|&e| imp(e)).collect(),
                    strides: bd.strides.iter().map(|&e| imp(e)).collect(),
                    elem_offset: bd.elem_offset.map(imp),
                })
            }
        };
        params.push(KernelParam { var, buffer });
    }
    let mut slots = Vec::with_capacity(abi.slots.len());
    for s in &abi.slots {
        let var = match s.var {
            Some(v) => var_of(&mut pool, v, &mut map)?,
            None => u32::MAX,
        };
        slots.push(KernelSlot { kind: s.kind, var });
    }
    Ok(KernelEntry {
        packed_symbol: format!("{name}_packed"),
        name,
        global: g.index() as u32,
        params,
        slots,
        ret: f.ret,
        pool,
        errors: Vec::new(),
        overwrites: Vec::new(),
    })
}
