//! The kernel table: each PrimFunc the executable calls, with a signature that checks
//! and binds arguments and fills the ABI slots of `relax_codegen::abi` without the IR,
//! and [`KernelProvider`], through which an engine supplies the kernels' code.
//!
//! Binding follows the TIR interpreter's binder (`relax_tir_eval::tir::bind_args`) check
//! for check and message for message: the parameter count, each buffer's dtype and rank,
//! then its dims, strides and element offset, a bare unbound variable binding on first
//! sight and every other expression checked once all parameters are bound.
#![expect(unsafe_code, reason = "kernel slots hold raw tensor addresses")]

use relax_codegen::abi::{self, SlotKind};
use relax_entity::EntityRef;
use relax_ir::{DataType, Global, Module, Pool, PrimExpr, PrimExprData, Span, SymVar};

use crate::error::{RunError, RunResult};
use crate::relax::sym::{Syms, eval_sym};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, shape_text};

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

/// What a deferred check is about (named only when it fails).
#[derive(Clone, Copy)]
enum Field<'k> {
    Dim(usize, &'k str),
    Stride(usize, &'k str),
    Offset(&'k str),
}

impl std::fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Field::Dim(i, b) => write!(f, "dim {i} of buffer `{b}`"),
            Field::Stride(i, b) => write!(f, "stride {i} of buffer `{b}`"),
            Field::Offset(b) => write!(f, "element offset of buffer `{b}`"),
        }
    }
}

/// A deferred check: expression `expr` must equal `actual`.
struct Deferred<'k> {
    expr: u32,
    actual: i64,
    what: Field<'k>,
}

/// A kernel's arguments bound: the values of its variables.
pub struct Bound {
    /// By pool variable.
    pub vars: Vec<Option<Scalar>>,
}

impl KernelEntry {
    fn var_name(&self, v: u32) -> &str {
        self.pool.vars.get(SymVar::new(v as usize)).map_or("?", |d| d.name.as_str())
    }

    fn bind_or_defer<'k>(
        &self,
        vars: &mut [Option<Scalar>],
        e: u32,
        actual: i64,
        what: Field<'k>,
        out: &mut Vec<Deferred<'k>>,
    ) {
        match self.pool.prim(PrimExpr::new(e as usize)) {
            PrimExprData::Var(v) if vars.get(v.index()).is_some_and(Option::is_none) => {
                vars[v.index()] = Some(Scalar::int(self.pool.vars[*v].dtype, actual));
            }
            // A constant that holds needs no check later (one that fails is reported in
            // order with the others).
            PrimExprData::Int(_, x) if *x == actual => {}
            _ => out.push(Deferred { expr: e, actual, what }),
        }
    }

    /// Checks `args` against the signature and binds the kernel's variables, with the
    /// TIR interpreter's messages.
    pub fn bind(&self, args: &[Value]) -> RunResult<Bound> {
        let fname = &self.name;
        if args.len() != self.params.len() {
            return Err(RunError::new(format!(
                "PrimFunc `{fname}` takes {} arguments, got {}",
                self.params.len(),
                args.len()
            )));
        }
        let mut vars: Vec<Option<Scalar>> = vec![None; self.pool.vars.len()];
        let mut deferred = Vec::new();
        for (i, (p, a)) in self.params.iter().zip(args).enumerate() {
            match (&p.buffer, a) {
                (Some(b), Value::Tensor(t)) => self.bind_buffer(b, t, &mut vars, &mut deferred)?,
                (None, Value::Tensor(_)) => {}
                (None, Value::Prim(s)) => vars[p.var as usize] = Some(*s),
                (None, Value::Shape(s)) if s.len() == 1 => {
                    vars[p.var as usize] = Some(Scalar::int(DataType::INT64, s[0]));
                }
                (_, other) => {
                    return Err(RunError::new(format!(
                        "PrimFunc `{fname}`: argument {i} (`{}`) must be {}, got {}",
                        self.var_name(p.var),
                        if p.buffer.is_some() { "a tensor" } else { "a scalar" },
                        other.describe()
                    )));
                }
            }
        }
        if deferred.is_empty() {
            return Ok(Bound { vars });
        }
        let syms = int_syms(&vars);
        for d in deferred {
            let v = eval_sym(&self.pool, PrimExpr::new(d.expr as usize), &syms)?.as_i64();
            if v != d.actual {
                return Err(RunError::new(format!(
                    "PrimFunc `{fname}`: {} is {}, but the argument has {}",
                    d.what, v, d.actual
                )));
            }
        }
        Ok(Bound { vars })
    }

    fn bind_buffer<'k>(
        &self,
        b: &'k BufferSig,
        t: &Tensor,
        vars: &mut [Option<Scalar>],
        deferred: &mut Vec<Deferred<'k>>,
    ) -> RunResult<()> {
        let fname = &self.name;
        if b.dtype != t.dtype {
            return Err(RunError::new(format!(
                "PrimFunc `{fname}`: buffer `{}` has dtype {}, but the argument is {}",
                b.name,
                b.dtype,
                Value::Tensor(t.clone()).describe()
            )));
        }
        if b.shape.len() != t.shape.len() {
            return Err(RunError::new(format!(
                "PrimFunc `{fname}`: buffer `{}` has {} dims, but the argument has shape {}",
                b.name,
                b.shape.len(),
                shape_text(&t.shape)
            )));
        }
        for (i, (&d, &a)) in b.shape.iter().zip(&t.shape).enumerate() {
            self.bind_or_defer(vars, d, a, Field::Dim(i, &b.name), deferred);
        }
        for (i, &s) in b.strides.iter().enumerate().take(t.shape.len()) {
            let a: i64 = t.shape[i + 1..].iter().map(|&d| d.max(0)).product();
            if t.shape[i] == 1 {
                // A unit dim's stride does not matter.
                if let PrimExprData::Var(v) = self.pool.prim(PrimExpr::new(s as usize))
                    && vars.get(v.index()).is_some_and(Option::is_none)
                {
                    vars[v.index()] = Some(Scalar::int(self.pool.vars[*v].dtype, a));
                }
                continue;
            }
            self.bind_or_defer(vars, s, a, Field::Stride(i, &b.name), deferred);
        }
        if let Some(off) = b.elem_offset {
            let elem = b.dtype.bytes() as usize;
            self.bind_or_defer(vars, off, (t.offset / elem.max(1)) as i64, Field::Offset(&b.name), deferred);
        }
        Ok(())
    }

    /// Fills the ABI slots from bound arguments; `ret` receives `T.ret`.
    pub fn fill_slots(&self, args: &[Value], bound: &Bound, ret: &mut u64) -> RunResult<Vec<u64>> {
        let mut slots = vec![0u64; self.slots.len()];
        for (i, s) in self.slots.iter().enumerate() {
            slots[i] = match s.kind {
                SlotKind::Handle => {
                    let idx = self.params.iter().position(|p| p.var == s.var).unwrap_or(usize::MAX);
                    match args.get(idx) {
                        Some(Value::Tensor(t)) => {
                            // SAFETY: the storage outlives the call; no `RefCell` borrow is
                            // held while the kernel writes through the pointer.
                            let base = unsafe { (*t.data.as_ptr()).as_mut_ptr() };
                            base.wrapping_add(t.offset) as u64
                        }
                        other => {
                            return Err(RunError::new(format!(
                                "PrimFunc `{}`: argument {idx} must be a tensor, got {}",
                                self.name,
                                other.map_or_else(|| "nothing".to_string(), Value::describe)
                            )));
                        }
                    }
                }
                SlotKind::Scalar | SlotKind::ShapeVar => match bound.vars.get(s.var as usize).copied().flatten() {
                    Some(Scalar::Float(x, _)) => x.to_bits(),
                    Some(Scalar::Int(x, _)) => x as u64,
                    None => {
                        return Err(RunError::new(format!(
                            "PrimFunc `{}`: variable `{}` is used before it has a value",
                            self.name,
                            self.var_name(s.var)
                        )));
                    }
                },
                SlotKind::Ret => std::ptr::from_mut(ret) as u64,
            };
        }
        Ok(slots)
    }

    /// The value of `T.ret` from its slot word.
    pub fn ret_value(&self, word: u64) -> Option<Scalar> {
        if self.ret.is_void() || !self.slots.iter().any(|s| s.kind == SlotKind::Ret) {
            return None;
        }
        let dt = self.ret;
        Some(if dt.is_float() { Scalar::float(dt, f64::from_bits(word)) } else { Scalar::int(dt, word as i64) })
    }

    /// The error of result code `code`, from the table.
    pub fn error(&self, code: i32, span: impl Fn(u32) -> Span) -> Option<RunError> {
        let e = self.errors.get((code as usize).checked_sub(1)?)?;
        Some(RunError::at(span(e.span), e.message.clone()))
    }
}

/// The integer variables of a binding, as symbolic values.
fn int_syms(vars: &[Option<Scalar>]) -> Syms {
    let mut s = Syms::new(vars.len());
    for (i, v) in vars.iter().enumerate() {
        if let Some(Scalar::Int(x, _)) = v {
            s.set(SymVar::new(i), *x);
        }
    }
    s
}
