//! Calls: module functions, closures, packed functions and ops (the DPS and packed-call
//! ops here; memory ops in [`super::memory`]; compute ops in [`crate::ops`]).

use std::rc::Rc;

use relax_ir::op::{OpId, OpRef, ops};
use relax_ir::{Call, Expr, ExprData, Span, Ty, TyData};

use super::exec::{concrete_tensor, scalar_of};
use super::{Frame, Interpreter};
use crate::builtins;
use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{FuncValue, Tensor, Value};

/// The ops the interpreter runs itself (calls of PrimFuncs, packed functions and
/// closures, effects), rather than as compute ops of [`crate::ops`]; the memory ops of
/// [`super::memory`] too ([`runs_directly`]).
pub const DIRECT_OPS: &[OpId] = &[
    ops::CALL_TIR,
    ops::CALL_TIR_WITH_GRAD,
    ops::CALL_TIR_INPLACE,
    ops::VM_CALL_TIR_DYN,
    ops::CALL_DPS_PACKED,
    ops::CALL_PURE_PACKED,
    ops::CALL_INPLACE_PACKED,
    ops::CALL_BUILTIN_WITH_CTX,
    ops::INVOKE_CLOSURE,
    ops::INVOKE_PURE_CLOSURE,
    ops::MAKE_CLOSURE,
    ops::NULL_VALUE,
    ops::PRINT,
    ops::ASSERT_OP,
];

/// True for an op the interpreter runs itself: [`DIRECT_OPS`] and the memory ops
/// ([`super::memory::MEMORY_OPS`]).
pub fn runs_directly(id: OpId) -> bool {
    DIRECT_OPS.contains(&id) || super::memory::MEMORY_OPS.contains(&id)
}

/// The fields of a tuple value (a single non-tuple value is one field).
pub(crate) fn fields(v: Value) -> Vec<Value> {
    match v {
        Value::Tuple(f) => f.as_ref().clone(),
        other => vec![other],
    }
}

impl builtins::Host for Interpreter<'_> {
    fn call_value(&self, callee: &Value, args: Vec<Value>) -> RunResult<Value> {
        Interpreter::call_value(self, callee, args, Span::NONE)
    }
    fn print_line(&self, text: &str) {
        let mut p = self.printed.borrow_mut();
        p.push_str(text);
        p.push('\n');
    }
}

impl<'m> Interpreter<'m> {
    pub(crate) fn eval_args(&self, fr: &mut Frame<'m>, args: &[Expr]) -> RunResult<Vec<Value>> {
        let mut out = Vec::with_capacity(args.len());
        for &a in args {
            out.push(self.eval(fr, a, None)?);
        }
        Ok(out)
    }

    /// Evaluates a call expression.
    pub(crate) fn eval_call(&self, fr: &mut Frame<'m>, e: Expr, call: &'m Call) -> RunResult<Value> {
        let f = fr.f;
        let site = *f.spans.exprs.get(e);
        match &f.exprs[call.callee] {
            ExprData::Op(op) => self.call_op(fr, e, call, op).map_err(|x| x.or_at(site)),
            ExprData::Global(g) => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                self.call_global(*g, args, site)
            }
            ExprData::ExternFunc(name) => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                builtins::call_packed(self, name, &args).map_err(|x| x.or_at(site))
            }
            _ => {
                let callee = self.eval(fr, call.callee, None)?;
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                self.call_value(&callee, args, site)
            }
        }
    }

    /// Calls a function value.
    pub fn call_value(&self, callee: &Value, args: Vec<Value>, site: Span) -> RunResult<Value> {
        let Value::Func(fv) = callee else {
            return Err(RunError::at(site, format!("cannot call {}", callee.kind())));
        };
        match &**fv {
            FuncValue::Global(g) => self.call_global(*g, args, site),
            FuncValue::Packed(name) => builtins::call_packed(self, name, &args).map_err(|x| x.or_at(site)),
            FuncValue::Local { owner, node, self_var, env } => {
                let f = self.module.relax(*owner).ok_or_else(|| RunError::new("a closure of a removed function"))?;
                let ExprData::Function(fnode) = &f.exprs[*node] else {
                    return Err(RunError::new("a closure without a function"));
                };
                let mut fr = Frame::new(*owner, f);
                for (v, x) in &env.vars {
                    fr.set(*v, x.clone());
                }
                for (s, x) in &env.syms {
                    fr.syms.set(*s, *x);
                }
                if let Some(sv) = self_var {
                    fr.set(*sv, callee.clone());
                }
                let name = self_var.map_or("<local function>".to_string(), |v| f.vars[v].name.clone());
                self.call_relax(&mut fr, fnode, args, &name, site)
            }
            FuncValue::Closure { func, captured } => {
                let mut all = captured.clone();
                all.extend(args);
                self.call_value(&Value::Func(func.clone()), all, site)
            }
        }
    }

    fn call_op(&self, fr: &mut Frame<'m>, e: Expr, call: &'m Call, op: &OpRef) -> RunResult<Value> {
        // Only the listed ops reach the arms below (so the list is what runs here).
        let Some(id) = op.id().filter(|&id| runs_directly(id)) else {
            return crate::ops::run_op(self, fr, e, call, op);
        };
        match id {
            ops::CALL_TIR | ops::CALL_TIR_WITH_GRAD | ops::CALL_TIR_INPLACE => self.call_tir(fr, call, id),
            ops::VM_CALL_TIR_DYN => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let mut flat = Vec::new();
                for v in fields(args[1].clone()) {
                    match v {
                        Value::Shape(s) => {
                            flat.extend(s.into_iter().map(|x| Value::Prim(Scalar::int(relax_ir::DataType::INT64, x))))
                        }
                        other => flat.push(other),
                    }
                }
                self.call_value(&args[0], flat, Span::NONE)?;
                Ok(Value::unit())
            }
            ops::CALL_DPS_PACKED => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let outs = self.alloc_outputs(fr, &call.sinfo_args)?;
                let mut all = fields(args[1].clone());
                all.extend(outs.iter().cloned().map(Value::Tensor));
                self.call_packed_value(&args[0], &all)?;
                Ok(pack_outputs(outs, &call.sinfo_args, fr))
            }
            ops::CALL_PURE_PACKED | ops::CALL_INPLACE_PACKED => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let r = self.call_packed_value(&args[0], &args[1..])?;
                if id == ops::CALL_INPLACE_PACKED {
                    let idx = int_list(call, "inplace_indices");
                    let outs: Vec<Value> =
                        idx.iter().map(|&i| if i >= 0 { args[1 + i as usize].clone() } else { r.clone() }).collect();
                    return Ok(if outs.len() == 1 { outs[0].clone() } else { Value::tuple(outs) });
                }
                Ok(r)
            }
            ops::CALL_BUILTIN_WITH_CTX => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                self.call_packed_value(&args[0], &fields(args[1].clone()))
            }
            ops::INVOKE_CLOSURE | ops::INVOKE_PURE_CLOSURE => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                self.call_value(&args[0], fields(args[1].clone()), Span::NONE)
            }
            ops::MAKE_CLOSURE => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let Value::Func(fv) = &args[0] else {
                    return Err(RunError::new(format!("`R.make_closure` of {}", args[0].kind())));
                };
                Ok(Value::Func(Rc::new(FuncValue::Closure { func: fv.clone(), captured: fields(args[1].clone()) })))
            }
            ops::NULL_VALUE => Ok(Value::Null),
            ops::PRINT => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let text = format_values(&args[0], &args[1..]);
                self.printed.borrow_mut().push_str(&text);
                self.printed.borrow_mut().push('\n');
                Ok(Value::unit())
            }
            ops::ASSERT_OP => {
                let args = self.eval_args(fr, fr.f.list(call.args))?;
                let ok = scalar_of(&args[0])
                    .ok_or_else(|| RunError::new("the condition of `R.assert_op` is not a scalar"))?;
                if !ok.is_true() {
                    let fmt = args.get(1).cloned().unwrap_or(Value::Str(String::new()));
                    let text = format_values(&fmt, args.get(2..).unwrap_or(&[]));
                    let text = if text.is_empty() { "assertion failed".to_string() } else { text };
                    return Err(RunError::new(format!("`R.assert_op` failed: {text}")));
                }
                Ok(Value::unit())
            }
            _ if super::memory::MEMORY_OPS.contains(&id) => self.memory_op(fr, call, id),
            _ => crate::ops::run_op(self, fr, e, call, op),
        }
    }

    /// Calls a packed function given as a value (an extern function or a global).
    pub(crate) fn call_packed_value(&self, callee: &Value, args: &[Value]) -> RunResult<Value> {
        match callee {
            Value::Func(fv) => match &**fv {
                FuncValue::Packed(name) => builtins::call_packed(self, name, args),
                FuncValue::Global(g) => match &self.module.globals[*g].func {
                    relax_ir::Func::Extern(ef) => builtins::call_packed(self, &ef.symbol, args),
                    _ => self.call_global(*g, args.to_vec(), Span::NONE),
                },
                _ => self.call_value(callee, args.to_vec(), Span::NONE),
            },
            Value::Str(name) => builtins::call_packed(self, name, args),
            other => Err(RunError::new(format!("cannot call {}", other.kind()))),
        }
    }

    /// Allocates zero-filled outputs for `out_sinfo` (one type, several, or a tuple type).
    pub(crate) fn alloc_outputs(&self, fr: &Frame<'m>, sinfo: &[Ty]) -> RunResult<Vec<Tensor>> {
        self.alloc_outputs_for(fr, sinfo, &|_| false)
    }

    /// [`Self::alloc_outputs`]; output `k` may hold stale bytes when `overwritten(k)`
    /// (the kernel writes all of it before reading it).
    fn alloc_outputs_for(
        &self,
        fr: &Frame<'m>,
        sinfo: &[Ty],
        overwritten: &dyn Fn(usize) -> bool,
    ) -> RunResult<Vec<Tensor>> {
        let mut tys = Vec::new();
        for &t in sinfo {
            match fr.f.pool.ty(t) {
                TyData::Tuple(fs) => tys.extend(fs.iter().copied()),
                _ => tys.push(t),
            }
        }
        let mut outs = Vec::with_capacity(tys.len());
        for t in tys {
            let (shape, dtype) = concrete_tensor(fr, t)?;
            if !crate::scalar::is_supported_dtype(dtype) {
                return Err(RunError::new(format!("tensors of dtype {dtype} are not supported by the interpreter")));
            }
            let bytes = crate::value::numel(&shape) * dtype.bytes() as usize;
            let storage = self.recycler.storage(bytes, !overwritten(outs.len()));
            outs.push(Tensor::view(&storage, 0, &shape, dtype));
        }
        Ok(outs)
    }

    fn call_tir(&self, fr: &mut Frame<'m>, call: &'m Call, id: OpId) -> RunResult<Value> {
        let args = self.eval_args(fr, fr.f.list(call.args))?;
        let inputs = fields(args[1].clone());
        let mut scalars = Vec::new();
        if let Some(Value::Shape(s)) = args.get(2) {
            scalars.extend(s.iter().map(|&x| Value::Prim(Scalar::int(relax_ir::DataType::INT64, x))));
        }
        // Results the compiled kernel overwrites completely need no clearing.
        let callee = match &args[0] {
            Value::Func(fv) => match &**fv {
                crate::value::FuncValue::Global(g) => Some(*g),
                _ => None,
            },
            _ => None,
        };
        let overwritten = |k: usize| {
            id != ops::CALL_TIR_INPLACE
                && callee.zip(self.native).is_some_and(|(g, n)| n.overwrites(g, inputs.len() + k))
        };
        let outs = self.alloc_outputs_for(fr, &call.sinfo_args, &overwritten)?;
        let mut all = inputs.clone();
        let result: Vec<Tensor> = if id == ops::CALL_TIR_INPLACE {
            let idx = int_list(call, "inplace_indices");
            let mut res = Vec::with_capacity(outs.len());
            for (k, out) in outs.into_iter().enumerate() {
                match idx.get(k) {
                    Some(&i) if i >= 0 => match inputs.get(i as usize) {
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
        } else {
            all.extend(outs.iter().cloned().map(Value::Tensor));
            outs
        };
        all.extend(scalars);
        self.call_value(&args[0], all, Span::NONE)?;
        Ok(pack_outputs(result, &call.sinfo_args, fr))
    }
}

/// The value of DPS outputs: one tensor, or a tuple when `out_sinfo` lists several or is a
/// tuple type.
fn pack_outputs(outs: Vec<Tensor>, sinfo: &[Ty], fr: &Frame<'_>) -> Value {
    let tuple = sinfo.len() != 1 || matches!(sinfo.first().map(|&t| fr.f.pool.ty(t)), Some(TyData::Tuple(_)));
    if tuple {
        Value::tuple(outs.into_iter().map(Value::Tensor).collect())
    } else {
        Value::Tensor(outs.into_iter().next().expect("one output"))
    }
}

/// An integer-list attribute of a call.
pub(crate) fn int_list(call: &Call, key: &str) -> Vec<i64> {
    match call.attrs.get(key) {
        Some(relax_ir::AttrValue::List(v)) => v.iter().filter_map(|x| x.as_int()).collect(),
        Some(x) => x.as_int().into_iter().collect(),
        None => Vec::new(),
    }
}

/// `R.print` / `R.assert_op` formatting: Python's `str.format` with `{}` placeholders
/// (values in the print format); an empty format joins the values with spaces.
pub(crate) fn format_values(fmt: &Value, vals: &[Value]) -> String {
    let fmt = match fmt {
        Value::Str(s) => s.clone(),
        _ => String::new(),
    };
    let texts: Vec<String> = vals.iter().map(crate::print::value_text).collect();
    if fmt.is_empty() {
        return texts.join(" ");
    }
    let mut out = String::new();
    let mut next = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut idx = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    idx.push(d);
                }
                let i = idx.split(':').next().and_then(|s| s.parse::<usize>().ok()).unwrap_or_else(|| {
                    next += 1;
                    next - 1
                });
                out.push_str(texts.get(i).map_or("", String::as_str));
            }
            _ => out.push(c),
        }
    }
    out
}
