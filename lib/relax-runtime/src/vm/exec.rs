//! The VM: runs the bytecode of an [`Executable`], calling kernels through a
//! [`KernelProvider`]. A Relax call is a frame of registers and symbolic values; the
//! loop runs its instructions with the interpreter's checks and messages.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use relax_entity::EntityRef;
use relax_ir::op::OpId;
use relax_ir::{Global, PrimExpr, Span, Ty, Var};

use super::Executable;
use super::bytecode::{Constant, Function, Instr, KillKind, Reg};
use super::calls::{concrete_tensor, pack};
use super::kernels::KernelProvider;
use crate::builtins::{self, Host};
use crate::check::Checker;
use crate::error::{RunError, RunResult};
use crate::relax::MAX_DEPTH;
use crate::relax::call::{fields, format_values};
use crate::relax::exec::scalar_of;
use crate::relax::recycle::Recycler;
use crate::relax::sym::{Syms, eval_sym};
use crate::scalar::Scalar;
use crate::value::{Captured, FuncValue, Tensor, Value};

/// Options of a VM.
#[derive(Clone, Debug)]
pub struct VmOptions {
    /// Check the result of every Relax function call against its declared type.
    pub check_results: bool,
}

impl Default for VmOptions {
    fn default() -> VmOptions {
        VmOptions { check_results: true }
    }
}

/// A register.
#[derive(Clone)]
pub(super) enum Slot {
    Empty,
    Val(Value),
    Killed(KillKind),
}

/// The state of one Relax call.
pub(super) struct Frame {
    pub(super) regs: Vec<Slot>,
    pub(super) syms: Syms,
}

/// A VM over an executable and the code of its kernels.
pub struct Vm<'a> {
    pub(super) exec: &'a Executable,
    pub(super) kernels: &'a dyn KernelProvider,
    options: VmOptions,
    /// The op of each string of the executable that names one.
    ops: Vec<Option<OpId>>,
    printed: RefCell<String>,
    depth: Cell<usize>,
    pub(super) recycler: Recycler,
}

impl<'a> Vm<'a> {
    /// A VM running `exec` with the kernels of `kernels`.
    pub fn new(exec: &'a Executable, kernels: &'a dyn KernelProvider, options: VmOptions) -> Vm<'a> {
        let ops = exec.strings.iter().map(|s| relax_ir::op::lookup(s)).collect();
        Vm {
            exec,
            kernels,
            options,
            ops,
            printed: RefCell::new(String::new()),
            depth: Cell::new(0),
            recycler: Recycler::default(),
        }
    }

    /// Calls the function named `entry` with arguments (checked against its parameters).
    pub fn call(&self, entry: &str, args: Vec<Value>) -> RunResult<Value> {
        let Some(i) = self.exec.function_index(entry) else {
            return Err(RunError::new(format!("the module has no function `{entry}`")));
        };
        self.call_function(i, args, Span::NONE, None)
    }

    /// Text printed by `R.print` and `relax.run.print` so far (taken).
    pub fn take_printed(&self) -> String {
        std::mem::take(&mut self.printed.borrow_mut())
    }

    pub(super) fn span(&self, i: u32) -> Span {
        self.exec.span(i)
    }

    /// Calls function `fi`; a closure's call starts from its captured environment and
    /// binds its own variable to the closure.
    pub(super) fn call_function(
        &self,
        fi: usize,
        args: Vec<Value>,
        site: Span,
        closure: Option<Closure<'_>>,
    ) -> RunResult<Value> {
        let f = &self.exec.functions[fi];
        if self.depth.get() >= MAX_DEPTH {
            return Err(RunError::at(site, format!("calls nest deeper than {MAX_DEPTH} levels (in `{}`)", f.name)));
        }
        self.depth.set(self.depth.get() + 1);
        let r = crate::tir::grow(|| self.call_inner(f, args, site, closure));
        self.depth.set(self.depth.get() - 1);
        r
    }

    fn call_inner(&self, f: &Function, args: Vec<Value>, site: Span, closure: Option<Closure<'_>>) -> RunResult<Value> {
        if args.len() != f.params.len() {
            return Err(RunError::at(
                site,
                format!("`{}` takes {} arguments, got {}", f.name, f.params.len(), args.len()),
            ));
        }
        let mut fr = Frame { regs: vec![Slot::Empty; f.num_regs as usize], syms: Syms::new(f.pool.vars.len()) };
        if let Some(c) = closure {
            for (v, x) in &c.env.vars {
                if let Some(slot) = fr.regs.get_mut(v.index()) {
                    *slot = Slot::Val(x.clone());
                }
            }
            for (s, x) in &c.env.syms {
                fr.syms.set(*s, *x);
            }
            if let Some(slot) = c.self_var.and_then(|v| fr.regs.get_mut(v.index())) {
                *slot = Slot::Val(c.value.clone());
            }
        }
        for (p, a) in f.params.iter().zip(args) {
            fr.regs[p.reg as usize] = Slot::Val(a);
        }
        self.check_params(f, &mut fr)?;
        let out = self.run(f, &mut fr)?;
        if self.options.check_results {
            let (ty, text) = f.ret;
            let Frame { regs, syms } = &mut fr;
            let lookup = |v: Var| shape_in(regs, v);
            let mut ck = Checker::new(&f.pool, syms, &lookup);
            ck.item_name = "the result".to_string();
            let r = ck.match_value(0, ty_h(ty), &out, "").and_then(|()| ck.finish());
            r.map_err(|m| {
                RunError::at(
                    self.span(f.span),
                    format!(
                        "the result of `{}` does not match its declared type: expected {}, got {}",
                        f.name,
                        self.exec.strings[text as usize],
                        out.describe()
                    ),
                )
                .with_note(m.detail)
            })?;
        }
        Ok(out)
    }

    fn check_params(&self, f: &Function, fr: &mut Frame) -> RunResult<()> {
        let Frame { regs, syms } = fr;
        let lookup = |v: Var| shape_in(regs, v);
        let mut ck = Checker::new(&f.pool, syms, &lookup);
        let mut result = Ok(());
        for (i, p) in f.params.iter().enumerate() {
            ck.item_name = format!("parameter `{}`", f.reg_names[p.reg as usize]);
            let Slot::Val(a) = &regs[p.reg as usize] else { continue };
            if let Err(m) = ck.match_value(i, ty_h(p.ty), a, "") {
                result = Err(m);
                break;
            }
        }
        if result.is_ok() {
            result = ck.finish();
        }
        result.map_err(|m| {
            let p = &f.params[m.item];
            let got = match &regs[p.reg as usize] {
                Slot::Val(v) => v.describe(),
                _ => String::new(),
            };
            RunError::at(
                self.span(f.reg_spans[p.reg as usize]),
                format!(
                    "parameter `{}` of `{}`: expected {}, got {got}",
                    f.reg_names[p.reg as usize], f.name, self.exec.strings[p.text as usize]
                ),
            )
            .with_note(m.detail)
        })
    }

    /// Runs a function's code in its frame.
    fn run(&self, f: &Function, fr: &mut Frame) -> RunResult<Value> {
        let mut pc = 0usize;
        loop {
            let Some(ins) = f.code.get(pc) else {
                return Err(RunError::new(format!("`{}`: the code ends without a return", f.name)));
            };
            pc += 1;
            match self.step(f, fr, ins) {
                Ok(Flow::Next) => {}
                Ok(Flow::Jump(t)) => pc = t as usize,
                Ok(Flow::Ret(v)) => return Ok(v),
                Err(e) => {
                    let d = f.debug.get(pc - 1).copied().unwrap_or_default();
                    return Err(e.or_at(self.span(d.site)).or_at(self.span(d.binding)));
                }
            }
        }
    }

    pub(super) fn get(&self, f: &Function, fr: &Frame, r: Reg) -> RunResult<Value> {
        match &fr.regs[r as usize] {
            Slot::Val(v) => Ok(v.clone()),
            Slot::Empty => {
                Err(RunError::new(format!("variable `{}` is used before it has a value", f.reg_names[r as usize])))
            }
            Slot::Killed(k) => Err(RunError::new(format!(
                "variable `{}` is used after `{}` ended it",
                f.reg_names[r as usize],
                k.op_name()
            ))),
        }
    }

    pub(super) fn gets(&self, f: &Function, fr: &Frame, rs: &[Reg]) -> RunResult<Vec<Value>> {
        rs.iter().map(|&r| self.get(f, fr, r)).collect()
    }

    fn step(&self, f: &Function, fr: &mut Frame, ins: &Instr) -> RunResult<Flow> {
        let set = |fr: &mut Frame, dst: Reg, v: Value| {
            fr.regs[dst as usize] = Slot::Val(v);
            Ok(Flow::Next)
        };
        match ins {
            Instr::Move { dst, src } => {
                let v = self.get(f, fr, *src)?;
                set(fr, *dst, v)
            }
            Instr::Const { dst, index } => set(fr, *dst, self.constant(*index)?),
            Instr::Func { dst, global } => {
                set(fr, *dst, Value::Func(Rc::new(FuncValue::Global(Global::new(*global as usize)))))
            }
            Instr::Packed { dst, name } => {
                let name = self.exec.strings[*name as usize].clone();
                set(fr, *dst, Value::Func(Rc::new(FuncValue::Packed(name))))
            }
            Instr::Shape { dst, dims } => {
                let mut s = Vec::with_capacity(dims.len());
                for &d in dims {
                    s.push(eval_sym(&f.pool, prim_h(d), &fr.syms)?.as_i64());
                }
                set(fr, *dst, Value::Shape(s))
            }
            Instr::Prim { dst, expr } => {
                let v = eval_sym(&f.pool, prim_h(*expr), &fr.syms)?;
                set(fr, *dst, Value::Prim(v))
            }
            Instr::Tuple { dst, fields } => {
                let vs = self.gets(f, fr, fields)?;
                set(fr, *dst, Value::tuple(vs))
            }
            Instr::GetItem { dst, src, index } => {
                let v = match self.get(f, fr, *src)? {
                    Value::Tuple(fs) => fs.get(*index as usize).cloned().ok_or_else(|| {
                        RunError::new(format!("tuple index {index} out of range for a tuple of {} fields", fs.len()))
                    })?,
                    other => return Err(RunError::new(format!("`[{index}]` applied to {}", other.kind()))),
                };
                set(fr, *dst, v)
            }
            Instr::Null { dst } => set(fr, *dst, Value::Null),
            Instr::CallGlobal { dst, global, args } => {
                let args = self.gets(f, fr, args)?;
                let v = self.call_global(*global as usize, args, Span::NONE)?;
                set(fr, *dst, v)
            }
            Instr::CallPacked { dst, name, args } => {
                let args = self.gets(f, fr, args)?;
                let v = builtins::call_packed(self, &self.exec.strings[*name as usize], &args)?;
                set(fr, *dst, v)
            }
            Instr::CallValue { dst, callee, args } => {
                let callee = self.get(f, fr, *callee)?;
                let args = self.gets(f, fr, args)?;
                let v = self.call_value(&callee, args, Span::NONE)?;
                set(fr, *dst, v)
            }
            Instr::CallTir { dst, callee, inputs, tir_vars, outs, inplace, tuple } => {
                let v = self.call_tir(f, fr, *callee, inputs, *tir_vars, outs, inplace.as_deref(), *tuple)?;
                set(fr, *dst, v)
            }
            Instr::CallTirDyn { dst, callee, args } => {
                let callee = self.get(f, fr, *callee)?;
                let mut flat = Vec::new();
                for v in fields(self.get(f, fr, *args)?) {
                    match v {
                        Value::Shape(s) => {
                            flat.extend(s.into_iter().map(|x| Value::Prim(Scalar::int(relax_ir::DataType::INT64, x))))
                        }
                        other => flat.push(other),
                    }
                }
                self.call_value(&callee, flat, Span::NONE)?;
                set(fr, *dst, Value::unit())
            }
            Instr::CallDpsPacked { dst, callee, args, outs, tuple } => {
                let callee = self.get(f, fr, *callee)?;
                let mut all = fields(self.get(f, fr, *args)?);
                let outs = self.alloc_outputs(f, fr, outs, &|_| false)?;
                all.extend(outs.iter().cloned().map(Value::Tensor));
                self.call_packed_value(&callee, &all)?;
                set(fr, *dst, pack(outs, *tuple))
            }
            Instr::CallPurePacked { dst, callee, args, inplace } => {
                let callee = self.get(f, fr, *callee)?;
                let args = self.gets(f, fr, args)?;
                let r = self.call_packed_value(&callee, &args)?;
                let v = match inplace {
                    Some(idx) => {
                        let outs: Vec<Value> =
                            idx.iter()
                                .map(|&i| {
                                    if i >= 0 {
                                        args.get(i as usize).cloned().unwrap_or(Value::Null)
                                    } else {
                                        r.clone()
                                    }
                                })
                                .collect();
                        if outs.len() == 1 { outs[0].clone() } else { Value::tuple(outs) }
                    }
                    None => r,
                };
                set(fr, *dst, v)
            }
            Instr::CallBuiltin { dst, callee, args } => {
                let callee = self.get(f, fr, *callee)?;
                let args = fields(self.get(f, fr, *args)?);
                let v = self.call_packed_value(&callee, &args)?;
                set(fr, *dst, v)
            }
            Instr::InvokeClosure { dst, callee, args } => {
                let callee = self.get(f, fr, *callee)?;
                let args = fields(self.get(f, fr, *args)?);
                let v = self.call_value(&callee, args, Span::NONE)?;
                set(fr, *dst, v)
            }
            Instr::MakeClosure { dst, func, captured } => {
                let func = self.get(f, fr, *func)?;
                let Value::Func(fv) = &func else {
                    return Err(RunError::new(format!("`R.make_closure` of {}", func.kind())));
                };
                let captured = fields(self.get(f, fr, *captured)?);
                set(fr, *dst, Value::Func(Rc::new(FuncValue::Closure { func: fv.clone(), captured })))
            }
            Instr::Print { dst, args } => {
                let args = self.gets(f, fr, args)?;
                let fmt = args.first().cloned().unwrap_or(Value::Str(String::new()));
                self.print_line(&format_values(&fmt, args.get(1..).unwrap_or(&[])));
                set(fr, *dst, Value::unit())
            }
            Instr::AssertOp { dst, args } => {
                let args = self.gets(f, fr, args)?;
                let ok = args
                    .first()
                    .and_then(scalar_of)
                    .ok_or_else(|| RunError::new("the condition of `R.assert_op` is not a scalar"))?;
                if !ok.is_true() {
                    let fmt = args.get(1).cloned().unwrap_or(Value::Str(String::new()));
                    let text = format_values(&fmt, args.get(2..).unwrap_or(&[]));
                    let text = if text.is_empty() { "assertion failed".to_string() } else { text };
                    return Err(RunError::new(format!("`R.assert_op` failed: {text}")));
                }
                set(fr, *dst, Value::unit())
            }
            Instr::Memory { dst, op, args } => {
                let args = self.gets(f, fr, args)?;
                let v = crate::relax::memory::run_memory_op(self.op(*op)?, &args)?;
                set(fr, *dst, v)
            }
            Instr::Kill { dst, src, what } => {
                self.get(f, fr, *src)?;
                fr.regs[*src as usize] = Slot::Killed(*what);
                set(fr, *dst, Value::unit())
            }
            Instr::Op { dst, op, attrs, args, out } => {
                let args = self.gets(f, fr, args)?;
                let out = out.and_then(|t| concrete_tensor(f, fr, ty_h(t)).ok());
                let v = crate::ops::run_detached(self.op(*op)?, args, &self.exec.attrs[*attrs as usize], out)?;
                set(fr, *dst, v)
            }
            Instr::Closure { dst, func, self_reg } => {
                let mut env = Captured::default();
                for (i, s) in fr.regs.iter().enumerate() {
                    if let Slot::Val(v) = s
                        && !f.reg_names[i].is_empty()
                    {
                        env.vars.insert(Var::new(i), v.clone());
                    }
                }
                env.syms = fr.syms.bound().collect();
                let local = FuncValue::Local {
                    owner: Global::new(*func as usize),
                    node: relax_ir::Expr::new(0),
                    self_var: self_reg.map(|r| Var::new(r as usize)),
                    env: Rc::new(env),
                };
                set(fr, *dst, Value::Func(Rc::new(local)))
            }
            Instr::MatchCast { src, ty, text, var } => {
                let v = self.get(f, fr, *src)?;
                let Frame { regs, syms } = fr;
                let lookup = |x: Var| shape_in(regs, x);
                let mut ck = Checker::new(&f.pool, syms, &lookup);
                let name = &f.reg_names[*var as usize];
                ck.item_name = format!("`{name}`");
                let r = ck.match_value(0, ty_h(*ty), &v, "").and_then(|()| ck.finish());
                r.map_err(|m| {
                    RunError::at(
                        self.span(f.reg_spans[*var as usize]),
                        format!(
                            "match_cast of `{name}` failed: expected {}, got {}",
                            self.exec.strings[*text as usize],
                            v.describe()
                        ),
                    )
                    .with_note(m.detail)
                })?;
                Ok(Flow::Next)
            }
            Instr::JumpIfNot { cond, target } => {
                let c = match self.get(f, fr, *cond)? {
                    Value::Prim(s) => s.is_true(),
                    Value::Tensor(t) if t.numel() == 1 => t.get(0).is_true(),
                    other => return Err(RunError::new(format!("the condition of `if` is {}", other.describe()))),
                };
                Ok(if c { Flow::Next } else { Flow::Jump(*target) })
            }
            Instr::Jump { target } => Ok(Flow::Jump(*target)),
            Instr::Ret { src } => Ok(Flow::Ret(self.get(f, fr, *src)?)),
        }
    }

    fn op(&self, s: u32) -> RunResult<OpId> {
        self.ops[s as usize].ok_or_else(|| RunError::new(format!("unknown op `{}`", self.exec.strings[s as usize])))
    }

    fn constant(&self, i: u32) -> RunResult<Value> {
        Ok(match &self.exec.constants[i as usize] {
            Constant::Str(s) => Value::Str(s.clone()),
            Constant::DType(d) => Value::DType(*d),
            Constant::Shape(v) => Value::Shape(v.clone()),
            Constant::Prim(x) => Value::Prim(*x),
            Constant::Tensor { index, dtype, shape, data } => {
                let Some(bytes) = data else {
                    return Err(RunError::new(format!(
                        "constant `metadata[\"relax.expr.Constant\"][{index}]` has no data (TVM's printer omits it)"
                    )));
                };
                if !crate::scalar::is_supported_dtype(*dtype) {
                    return Err(RunError::new(format!("constants of dtype {dtype} are not supported")));
                }
                let t = Tensor::zeros(shape, *dtype);
                if bytes.len() != t.nbytes() {
                    return Err(RunError::new(format!(
                        "constant {index} holds {} bytes, but its shape needs {}",
                        bytes.len(),
                        t.nbytes()
                    )));
                }
                t.data.borrow_mut().copy_from_slice(bytes);
                Value::Tensor(t)
            }
        })
    }
}

impl Host for Vm<'_> {
    fn call_value(&self, callee: &Value, args: Vec<Value>) -> RunResult<Value> {
        Vm::call_value(self, callee, args, Span::NONE)
    }
    fn print_line(&self, text: &str) {
        let mut p = self.printed.borrow_mut();
        p.push_str(text);
        p.push('\n');
    }
}

/// A closure being called: what it captured, its own variable and itself.
pub(super) struct Closure<'v> {
    pub(super) env: &'v Captured,
    pub(super) self_var: Option<Var>,
    pub(super) value: &'v Value,
}

/// What the loop does after an instruction.
enum Flow {
    Next,
    Jump(u32),
    Ret(Value),
}

pub(super) fn ty_h(i: u32) -> Ty {
    Ty::new(i as usize)
}

fn prim_h(i: u32) -> PrimExpr {
    PrimExpr::new(i as usize)
}

/// The shape held by register `v` (a shape variable typing a tensor).
fn shape_in(regs: &[Slot], v: Var) -> Option<Vec<i64>> {
    match regs.get(v.index()) {
        Some(Slot::Val(Value::Shape(s))) => Some(s.clone()),
        _ => None,
    }
}
