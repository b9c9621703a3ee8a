//! Binding a kernel's arguments against its signature in the kernel table, and filling
//! its ABI slots (`relax_codegen::abi`).
//!
//! Binding follows the TIR interpreter's binder (`relax_tir_eval::tir::bind_args`) check
//! for check and message for message: the parameter count, each buffer's dtype and rank,
//! then its dims, strides and element offset, a bare unbound variable binding on first
//! sight and every other expression checked once all parameters are bound.
#![expect(unsafe_code, reason = "kernel slots hold raw tensor addresses")]

use relax_codegen::abi::SlotKind;
use relax_entity::EntityRef;
use relax_ir::{DataType, PrimExpr, PrimExprData, Span, SymVar};

use super::kernels::{BufferSig, KernelEntry};
use crate::error::{RunError, RunResult};
use crate::relax::sym::{Syms, eval_sym};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, shape_text};

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
