//! Calls from the VM: module functions, kernels (bound against the kernel table and run
//! through the [`KernelProvider`](super::KernelProvider)), function values and closures,
//! packed functions, and `call_tir` with its outputs allocated per their types.
#![expect(unsafe_code, reason = "calls kernels' machine code through their packed functions")]

use std::rc::Rc;

use relax_entity::EntityRef;
use relax_ir::{Global, Span, Ty, TyData};

use super::GlobalKind;
use super::bytecode::{Callee, Function, Operands, Reg};
use super::exec::{Closure, Frame, Slot, Vm, ty_h};
use crate::builtins;
use crate::error::{RunError, RunResult};
use crate::relax::call::fields;
use crate::relax::sym::eval_dim;
use crate::scalar::Scalar;
use crate::value::{FuncValue, Tensor, Value};

impl Vm<'_> {
    /// Calls module function `g` (a Relax function, a kernel or an extern function).
    pub(super) fn call_global(&self, g: usize, args: Vec<Value>, site: Span) -> RunResult<Value> {
        // A function value may come from outside (an argument): check its global.
        let Some(entry) = self.exec.globals.get(g) else {
            return Err(RunError::at(site, format!("function {g} is not in the executable")));
        };
        match &entry.kind {
            GlobalKind::Function(i) => self.call_function(*i as usize, args, site, None),
            GlobalKind::Kernel(k) => {
                let r = self.call_kernel(*k as usize, &args).map_err(|e| e.or_at(site))?;
                Ok(match r {
                    Some(s) => Value::Prim(s),
                    None => Value::unit(),
                })
            }
            GlobalKind::Extern(sym) => builtins::call_packed(self, sym, &args),
            GlobalKind::Other => Err(RunError::at(site, format!("`{}` cannot be called", entry.name))),
        }
    }

    /// Calls kernel `k`: bound and run through its compiled code, or the provider's
    /// fallback.
    fn call_kernel(&self, k: usize, args: &[Value]) -> RunResult<Option<Scalar>> {
        let entry = &self.exec.kernels[k];
        let Some(code) = self.kernels.packed(k) else {
            return self
                .kernels
                .fallback(k, args)
                .unwrap_or_else(|| Err(RunError::new(format!("kernel `{}` has no code", entry.name))));
        };
        let bound = entry.bind(args)?;
        let mut ret = 0u64;
        let mut slots = entry.fill_slots(args, &bound, &mut ret)?;
        // SAFETY: the slots follow the kernel's ABI; tensors were checked against its
        // buffers by `bind`.
        let rc = unsafe { self.kernels.invoke(code, &mut slots) };
        if rc != 0 {
            let e = entry
                .error(rc, |s| self.span(s))
                .or_else(|| self.kernels.error(k, rc))
                .unwrap_or_else(|| RunError::new(format!("PrimFunc `{}` failed with code {rc}", entry.name)));
            return Err(self.kernels.complete(rc, e));
        }
        Ok(entry.ret_value(ret))
    }

    /// Calls a function value.
    pub(super) fn call_value(&self, callee: &Value, args: Vec<Value>, site: Span) -> RunResult<Value> {
        let Value::Func(fv) = callee else {
            return Err(RunError::at(site, format!("cannot call {}", callee.kind())));
        };
        match &**fv {
            FuncValue::Global(g) => self.call_global(g.index(), args, site),
            FuncValue::Packed(name) => builtins::call_packed(self, name, &args).map_err(|x| x.or_at(site)),
            FuncValue::Closure { func, captured } => {
                let mut all = captured.clone();
                all.extend(args);
                self.call_value(&Value::Func(func.clone()), all, site)
            }
            // The VM's closures keep their function's index in `owner`.
            FuncValue::Local { owner, self_var, env, .. } => {
                if owner.index() >= self.exec.functions.len() {
                    return Err(RunError::at(site, "a closure of another engine"));
                }
                self.call_function(owner.index(), args, site, Some(Closure { env, self_var: *self_var, value: callee }))
            }
        }
    }

    /// Calls a packed function given as a value (an extern function or a global).
    pub(super) fn call_packed_value(&self, callee: &Value, args: &[Value]) -> RunResult<Value> {
        match callee {
            Value::Func(fv) => match &**fv {
                FuncValue::Packed(name) => builtins::call_packed(self, name, args),
                FuncValue::Global(g) => self.call_global(g.index(), args.to_vec(), Span::NONE),
                _ => self.call_value(callee, args.to_vec(), Span::NONE),
            },
            Value::Str(name) => builtins::call_packed(self, name, args),
            other => Err(RunError::new(format!("cannot call {}", other.kind()))),
        }
    }

    /// Allocates outputs of the pool types `tys`; output `k` may hold stale bytes when
    /// `overwritten(k)`.
    pub(super) fn alloc_outputs(
        &self,
        f: &Function,
        fr: &Frame,
        tys: &[u32],
        overwritten: &dyn Fn(usize) -> bool,
    ) -> RunResult<Vec<Tensor>> {
        let mut outs = Vec::with_capacity(tys.len());
        for &t in tys {
            let (shape, dtype) = concrete_tensor(f, fr, ty_h(t))?;
            if !crate::scalar::is_supported_dtype(dtype) {
                return Err(RunError::new(format!("tensors of dtype {dtype} are not supported by the interpreter")));
            }
            let bytes = crate::value::numel(&shape) * dtype.bytes() as usize;
            let storage = self.recycler.storage(bytes, !overwritten(outs.len()));
            outs.push(Tensor::view(&storage, 0, &shape, dtype));
        }
        Ok(outs)
    }

    #[expect(clippy::too_many_arguments, reason = "the operands of one instruction")]
    pub(super) fn call_tir(
        &self,
        f: &Function,
        fr: &mut Frame,
        callee: Callee,
        inputs: &Operands,
        tir_vars: Option<Reg>,
        outs: &[u32],
        inplace: Option<&[i64]>,
        tuple: bool,
    ) -> RunResult<Value> {
        // The kernel called, when the callee is one (its results the compiled code
        // overwrites completely need no clearing); otherwise the function value.
        let kernel_of = |g: usize| match self.exec.globals.get(g).map(|e| &e.kind) {
            Some(GlobalKind::Kernel(k)) => Some(*k as usize),
            _ => None,
        };
        let (kernel, callee) = match callee {
            Callee::Global(g) => match kernel_of(g as usize) {
                Some(k) => (Some(k), Value::Null),
                None => (None, Value::Func(Rc::new(FuncValue::Global(Global::new(g as usize))))),
            },
            Callee::Reg(r) => {
                let v = self.get(f, fr, r)?;
                let k = match &v {
                    Value::Func(fv) => match &**fv {
                        FuncValue::Global(g) => kernel_of(g.index()),
                        _ => None,
                    },
                    _ => None,
                };
                (k, v)
            }
        };
        let inputs = match inputs {
            Operands::Regs(rs) => self.gets(f, fr, rs)?,
            Operands::Tuple(r) => fields(self.get(f, fr, *r)?),
        };
        let mut scalars = Vec::new();
        if let Some(r) = tir_vars
            && let Value::Shape(s) = self.get(f, fr, r)?
        {
            scalars.extend(s.iter().map(|&x| Value::Prim(Scalar::int(relax_ir::DataType::INT64, x))));
        }
        let n_in = inputs.len() as u32;
        let overwritten = |k: usize| {
            inplace.is_none()
                && kernel.is_some_and(|kk| {
                    self.kernels.packed(kk).is_some() && self.exec.kernels[kk].overwrites.contains(&(n_in + k as u32))
                })
        };
        let outs = self.alloc_outputs(f, fr, outs, &overwritten)?;
        let mut all = inputs;
        let result: Vec<Tensor> = match inplace {
            Some(idx) => {
                let mut res = Vec::with_capacity(outs.len());
                for (k, out) in outs.into_iter().enumerate() {
                    match idx.get(k) {
                        Some(&i) if i >= 0 => match all.get(i as usize).filter(|_| i < i64::from(n_in)) {
                            Some(Value::Tensor(t)) => res.push(t.clone()),
                            _ => {
                                return Err(RunError::new(format!(
                                    "`inplace_indices` names argument {i}, which is not a tensor"
                                )));
                            }
                        },
                        _ => {
                            all.push(Value::Tensor(out.clone()));
                            res.push(out);
                        }
                    }
                }
                res
            }
            None => {
                all.extend(outs.iter().cloned().map(Value::Tensor));
                outs
            }
        };
        all.extend(scalars);
        match kernel {
            Some(k) => {
                self.call_kernel(k, &all)?;
            }
            None => {
                self.call_value(&callee, all, Span::NONE)?;
            }
        }
        Ok(pack(result, tuple))
    }
}

/// One tensor, or a tuple of them.
pub(super) fn pack(outs: Vec<Tensor>, tuple: bool) -> Value {
    if tuple || outs.len() != 1 {
        Value::tuple(outs.into_iter().map(Value::Tensor).collect())
    } else {
        Value::Tensor(outs.into_iter().next().unwrap_or_else(|| Tensor::zeros(&[], relax_ir::DataType::INT64)))
    }
}

/// A tensor type with its dims evaluated: for allocating outputs.
pub(super) fn concrete_tensor(f: &Function, fr: &Frame, ty: Ty) -> RunResult<(Vec<i64>, relax_ir::DataType)> {
    match f.pool.ty(ty) {
        TyData::Tensor { shape: relax_ir::TensorShape::Dims(d), dtype, .. } => {
            let mut s = Vec::with_capacity(d.len());
            for &x in d {
                s.push(eval_dim(&f.pool, x, &fr.syms)?);
            }
            if dtype.is_void() {
                return Err(RunError::new("an output type has no dtype"));
            }
            Ok((s, *dtype))
        }
        TyData::Tensor { shape: relax_ir::TensorShape::Var(v), dtype, .. } => match fr.regs.get(v.index()) {
            Some(Slot::Val(Value::Shape(s))) => Ok((s.clone(), *dtype)),
            Some(Slot::Val(other)) => {
                Err(RunError::new(format!("the shape of an output type is {}", other.describe())))
            }
            _ => Err(RunError::new(format!(
                "variable `{}` is used before it has a value",
                f.reg_names.get(v.index()).map_or("?", String::as_str)
            ))),
        },
        _ => Err(RunError::new(format!(
            "cannot allocate an output of type {}: its shape is not known",
            relax_ir::printer::print_ty_pool(&f.pool, ty)
        ))),
    }
}
