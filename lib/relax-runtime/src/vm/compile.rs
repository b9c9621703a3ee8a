//! Relax functions to bytecode ([`super::bytecode`]).
//!
//! Each binding becomes the instructions that compute its value into the variable's
//! register (a `R.match_cast` adds its check); `if` becomes a conditional jump over the
//! two branches, each writing the `if`'s register. What the VM cannot run without the
//! IR (a local function, an op with neither a reference kernel nor a lowering) is an
//! error naming the construct at its source line, and the caller runs the module in the
//! tree interpreter instead.

use relax_entity::EntityRef;
use relax_ir::op::{OpId, OpRef, ops};
use relax_ir::{BindingKind, Call, Expr, ExprData, Module, RelaxFunction, Seq, TyData};

use super::bytecode::{Callee, Constant, Function, Instr, InstrDebug, KillKind, Operands, Param, Reg};
pub(crate) use super::tables::Tables;
use crate::error::{RunError, RunResult};

/// Compiles one Relax function (global `g`).
pub(crate) fn function(m: &Module, g: relax_ir::Global, t: &mut Tables) -> RunResult<Function> {
    let name = m.globals[g].name.clone();
    let f = m.relax(g).ok_or_else(|| RunError::new(format!("`{name}` is not a Relax function")))?;
    node_function(m, g, f, &f.func, name, t)
}

/// Compiles a function node of `f` (the function itself or a local function in it).
fn node_function(
    m: &Module,
    g: relax_ir::Global,
    f: &RelaxFunction,
    node: &relax_ir::FunctionNode,
    name: String,
    t: &mut Tables,
) -> RunResult<Function> {
    let mut c = Compiler {
        m,
        g,
        f,
        t,
        code: Vec::new(),
        debug: Vec::new(),
        next: f.vars.len() as u32,
        cur: InstrDebug::default(),
        bound: None,
    };
    let mut params = Vec::with_capacity(node.params.len());
    for &p in &node.params {
        let ty = f.vars[p].ty;
        let text = relax_ir::printer::print_ty_in(f, ty);
        params.push(Param { reg: p.index() as u32, ty: ty.index() as u32, text: c.t.string(&text) });
    }
    let ret_text = relax_ir::printer::print_ty_in(f, node.ret);
    let ret = (node.ret.index() as u32, c.t.string(&ret_text));
    let out = c.seq(node.body, None)?;
    // Reading the result (a variable) fails at the result's span.
    c.cur = InstrDebug { site: 0, binding: c.t.span(*f.spans.exprs.get(f.seq(node.body).body)) };
    c.emit(Instr::Ret { src: out });
    let mut reg_names = vec![String::new(); c.next as usize];
    let mut reg_spans = vec![0u32; c.next as usize];
    for (v, d) in f.vars.iter() {
        reg_names[v.index()] = d.name.clone();
        reg_spans[v.index()] = c.t.span(*f.spans.vars.get(v));
    }
    let span = c.t.span(f.spans.func);
    Ok(Function {
        name,
        global: g.index() as u32,
        params,
        ret,
        span,
        num_regs: c.next,
        code: c.code,
        debug: c.debug,
        reg_names,
        reg_spans,
        pool: f.pool.clone(),
    })
}

struct Compiler<'a> {
    m: &'a Module,
    g: relax_ir::Global,
    f: &'a RelaxFunction,
    /// The variable the expression being compiled is bound to (a local function's name).
    bound: Option<relax_ir::Var>,
    t: &'a mut Tables,
    code: Vec<Instr>,
    debug: Vec<InstrDebug>,
    next: Reg,
    cur: InstrDebug,
}

fn var_reg(v: relax_ir::Var) -> Reg {
    v.index() as u32
}

impl Compiler<'_> {
    fn emit(&mut self, i: Instr) {
        self.code.push(i);
        self.debug.push(self.cur);
    }

    fn temp(&mut self) -> Reg {
        self.next += 1;
        self.next - 1
    }

    fn unsupported(&self, e: Expr, what: impl std::fmt::Display) -> RunError {
        RunError::at(
            *self.f.spans.exprs.get(e),
            format!("the VM cannot run {what}; the tree interpreter can (`--relax-exec=interp`)"),
        )
    }

    /// Compiles a sequence; its value goes to `dst` (or a fresh register).
    fn seq(&mut self, s: Seq, dst: Option<Reg>) -> RunResult<Reg> {
        let f = self.f;
        let sd = f.seq(s);
        let saved = self.cur;
        for &b in &sd.blocks {
            for bd in &f.blocks[b].bindings {
                let span = self.t.span(*f.spans.vars.get(bd.var));
                self.cur = InstrDebug { site: 0, binding: span };
                let r = var_reg(bd.var);
                self.bound = Some(bd.var);
                self.expr(bd.value, Some(r))?;
                if let BindingKind::MatchCast(ty) = &bd.kind {
                    let text = relax_ir::printer::print_ty_in(f, *ty);
                    let text = self.t.string(&text);
                    self.emit(Instr::MatchCast { src: r, ty: ty.index() as u32, text, var: r });
                }
            }
        }
        self.cur = InstrDebug { site: 0, binding: self.t.span(*f.spans.exprs.get(sd.body)) };
        let r = self.expr(sd.body, dst)?;
        self.cur = saved;
        Ok(r)
    }

    fn dst(&mut self, dst: Option<Reg>) -> Reg {
        dst.unwrap_or_else(|| self.temp())
    }

    /// Compiles an expression; its value goes to `dst` (or a register of its own: a
    /// variable's, or a fresh one).
    fn expr(&mut self, e: Expr, dst: Option<Reg>) -> RunResult<Reg> {
        let f = self.f;
        let bound = self.bound.take();
        match &f.exprs[e] {
            ExprData::Var(v) => match dst {
                Some(d) => {
                    self.emit(Instr::Move { dst: d, src: var_reg(*v) });
                    Ok(d)
                }
                None => Ok(var_reg(*v)),
            },
            ExprData::Global(g) => {
                let d = self.dst(dst);
                self.emit(Instr::Func { dst: d, global: g.index() as u32 });
                Ok(d)
            }
            ExprData::Op(op) => Err(self.unsupported(e, format_args!("the op `{}` used as a value", op.name()))),
            ExprData::ExternFunc(name) => {
                let d = self.dst(dst);
                let name = self.t.string(name);
                self.emit(Instr::Packed { dst: d, name });
                Ok(d)
            }
            ExprData::Call(call) => self.call(e, call, dst),
            ExprData::Tuple(fields) => {
                let mut regs = Vec::new();
                for &x in f.list(*fields) {
                    regs.push(self.expr(x, None)?);
                }
                let d = self.dst(dst);
                self.emit(Instr::Tuple { dst: d, fields: regs });
                Ok(d)
            }
            ExprData::GetItem { tuple, index } => {
                let src = self.expr(*tuple, None)?;
                let d = self.dst(dst);
                self.emit(Instr::GetItem { dst: d, src, index: *index });
                Ok(d)
            }
            ExprData::Shape(dims) => {
                let literal: Option<Vec<i64>> = dims
                    .iter()
                    .map(|&x| match f.pool.prim(x) {
                        relax_ir::PrimExprData::Int(dt, v) if !dt.is_float() => Some(*v),
                        _ => None,
                    })
                    .collect();
                if let Some(v) = literal {
                    let i = self.t.constant(Constant::Shape(v));
                    let d = self.dst(dst);
                    self.emit(Instr::Const { dst: d, index: i });
                    return Ok(d);
                }
                let d = self.dst(dst);
                self.emit(Instr::Shape { dst: d, dims: dims.iter().map(|x| x.index() as u32).collect() });
                Ok(d)
            }
            ExprData::Prim(p) => {
                if let Some(x) = crate::tir::literal(f.pool.prim(*p)) {
                    let i = self.t.constant(Constant::Prim(x));
                    let d = self.dst(dst);
                    self.emit(Instr::Const { dst: d, index: i });
                    return Ok(d);
                }
                let d = self.dst(dst);
                self.emit(Instr::Prim { dst: d, expr: p.index() as u32 });
                Ok(d)
            }
            ExprData::Str(s) => {
                let i = self.t.constant(Constant::Str(s.clone()));
                let d = self.dst(dst);
                self.emit(Instr::Const { dst: d, index: i });
                Ok(d)
            }
            ExprData::DType(dt) => {
                let i = self.t.constant(Constant::DType(*dt));
                let d = self.dst(dst);
                self.emit(Instr::Const { dst: d, index: i });
                Ok(d)
            }
            ExprData::Const(c) => {
                let i = self.t.module_constant(self.m, *c);
                let d = self.dst(dst);
                self.emit(Instr::Const { dst: d, index: i });
                Ok(d)
            }
            ExprData::If { cond, then_branch, else_branch } => {
                let c = self.expr(*cond, None)?;
                let d = self.dst(dst);
                let jump_else = self.code.len();
                self.emit(Instr::JumpIfNot { cond: c, target: 0 });
                self.seq(*then_branch, Some(d))?;
                let jump_end = self.code.len();
                self.emit(Instr::Jump { target: 0 });
                let else_at = self.code.len() as u32;
                self.seq(*else_branch, Some(d))?;
                let end = self.code.len() as u32;
                self.code[jump_else] = Instr::JumpIfNot { cond: c, target: else_at };
                self.code[jump_end] = Instr::Jump { target: end };
                Ok(d)
            }
            ExprData::Function(node) => {
                let name = bound.map_or("<local function>".to_string(), |v| f.vars[v].name.clone());
                let slot = self.t.locals.len();
                self.t.locals.push(None);
                let lf = node_function(self.m, self.g, f, node, name, self.t)?;
                self.t.locals[slot] = Some(lf);
                let d = self.dst(dst);
                let func = self.t.local_base + slot as u32;
                self.emit(Instr::Closure { dst: d, func, self_reg: bound.map(var_reg) });
                Ok(d)
            }
        }
    }

    fn args(&mut self, call: &Call) -> RunResult<Vec<Reg>> {
        let mut regs = Vec::new();
        for &a in self.f.list(call.args) {
            regs.push(self.expr(a, None)?);
        }
        Ok(regs)
    }

    /// The registers of a DPS operand list: the fields of a tuple literal one by one.
    fn operands(&mut self, e: Expr) -> RunResult<Operands> {
        if let ExprData::Tuple(fields) = &self.f.exprs[e] {
            let mut regs = Vec::new();
            for &x in self.f.list(*fields) {
                regs.push(self.expr(x, None)?);
            }
            return Ok(Operands::Regs(regs));
        }
        Ok(Operands::Tuple(self.expr(e, None)?))
    }

    /// The output types of a DPS call, tuple types flattened, and whether the result is
    /// a tuple.
    fn outs(&self, call: &Call) -> (Vec<u32>, bool) {
        let pool = &self.f.pool;
        let mut tys = Vec::new();
        for &t in &call.sinfo_args {
            match pool.ty(t) {
                TyData::Tuple(fs) => tys.extend(fs.iter().map(|x| x.index() as u32)),
                _ => tys.push(t.index() as u32),
            }
        }
        let tuple = call.sinfo_args.len() != 1
            || matches!(call.sinfo_args.first().map(|&t| pool.ty(t)), Some(TyData::Tuple(_)));
        (tys, tuple)
    }

    fn call(&mut self, e: Expr, call: &Call, dst: Option<Reg>) -> RunResult<Reg> {
        let f = self.f;
        let site = self.t.span(*f.spans.exprs.get(e));
        match &f.exprs[call.callee] {
            ExprData::Op(op) => self.op(e, call, op, dst, site),
            ExprData::Global(g) => {
                let args = self.args(call)?;
                let d = self.dst(dst);
                self.with_site(site, Instr::CallGlobal { dst: d, global: g.index() as u32, args });
                Ok(d)
            }
            ExprData::ExternFunc(name) => {
                let args = self.args(call)?;
                let d = self.dst(dst);
                let name = self.t.string(name);
                self.with_site(site, Instr::CallPacked { dst: d, name, args });
                Ok(d)
            }
            _ => {
                let callee = self.expr(call.callee, None)?;
                let args = self.args(call)?;
                let d = self.dst(dst);
                self.with_site(site, Instr::CallValue { dst: d, callee, args });
                Ok(d)
            }
        }
    }

    fn with_site(&mut self, site: u32, i: Instr) {
        let saved = self.cur;
        self.cur.site = site;
        self.emit(i);
        self.cur = saved;
    }

    fn op(&mut self, e: Expr, call: &Call, op: &OpRef, dst: Option<Reg>, site: u32) -> RunResult<Reg> {
        let Some(id) = op.id() else {
            return Err(self.unsupported(e, format_args!("the op `{}`, which has no reference kernel", op.name())));
        };
        let list = self.f.list(call.args).to_vec();
        let arg = |i: usize| list.get(i).copied();
        let need = |c: &Self, i: usize| {
            arg(i).ok_or_else(|| c.unsupported(e, format_args!("`R.{}` without argument {i}", id.def().text_name())))
        };
        let instr = match id {
            ops::CALL_TIR | ops::CALL_TIR_WITH_GRAD | ops::CALL_TIR_INPLACE => {
                let c = need(self, 0)?;
                let callee = match &self.f.exprs[c] {
                    ExprData::Global(g) => Callee::Global(g.index() as u32),
                    _ => Callee::Reg(self.expr(c, None)?),
                };
                let inputs = self.operands(need(self, 1)?)?;
                let tir_vars = match arg(2) {
                    Some(x) => Some(self.expr(x, None)?),
                    None => None,
                };
                let (outs, tuple) = self.outs(call);
                let inplace =
                    (id == ops::CALL_TIR_INPLACE).then(|| crate::relax::call::int_list(call, "inplace_indices"));
                let d = self.dst(dst);
                Instr::CallTir { dst: d, callee, inputs, tir_vars, outs, inplace, tuple }
            }
            ops::VM_CALL_TIR_DYN
            | ops::CALL_DPS_PACKED
            | ops::CALL_BUILTIN_WITH_CTX
            | ops::INVOKE_CLOSURE
            | ops::INVOKE_PURE_CLOSURE
            | ops::MAKE_CLOSURE => {
                let a = self.expr(need(self, 0)?, None)?;
                let b = self.expr(need(self, 1)?, None)?;
                let d = self.dst(dst);
                match id {
                    ops::VM_CALL_TIR_DYN => Instr::CallTirDyn { dst: d, callee: a, args: b },
                    ops::CALL_DPS_PACKED => {
                        let (outs, tuple) = self.outs(call);
                        Instr::CallDpsPacked { dst: d, callee: a, args: b, outs, tuple }
                    }
                    ops::CALL_BUILTIN_WITH_CTX => Instr::CallBuiltin { dst: d, callee: a, args: b },
                    ops::MAKE_CLOSURE => Instr::MakeClosure { dst: d, func: a, captured: b },
                    _ => Instr::InvokeClosure { dst: d, callee: a, args: b },
                }
            }
            ops::CALL_PURE_PACKED | ops::CALL_INPLACE_PACKED => {
                let mut args = self.args(call)?;
                if args.is_empty() {
                    return Err(self.unsupported(e, "a packed call without a callee"));
                }
                let callee = args.remove(0);
                let inplace =
                    (id == ops::CALL_INPLACE_PACKED).then(|| crate::relax::call::int_list(call, "inplace_indices"));
                let d = self.dst(dst);
                Instr::CallPurePacked { dst: d, callee, args, inplace }
            }
            ops::NULL_VALUE => Instr::Null { dst: self.dst(dst) },
            ops::PRINT | ops::ASSERT_OP => {
                let args = self.args(call)?;
                let d = self.dst(dst);
                if id == ops::PRINT { Instr::Print { dst: d, args } } else { Instr::AssertOp { dst: d, args } }
            }
            ops::MEMORY_KILL_STORAGE | ops::MEMORY_KILL_TENSOR | ops::VM_KILL_OBJECT => {
                let what = match id {
                    ops::MEMORY_KILL_STORAGE => KillKind::Storage,
                    ops::MEMORY_KILL_TENSOR => KillKind::Tensor,
                    _ => KillKind::Object,
                };
                let d = self.dst(dst);
                match arg(0).map(|a| &self.f.exprs[a]) {
                    Some(ExprData::Var(v)) => Instr::Kill { dst: d, src: var_reg(*v), what },
                    _ => Instr::Tuple { dst: d, fields: Vec::new() },
                }
            }
            _ if crate::relax::memory::MEMORY_OPS.contains(&id) => {
                let args = self.args(call)?;
                let d = self.dst(dst);
                let op = self.t.string(id.name());
                Instr::Memory { dst: d, op, args }
            }
            _ if crate::ops::runs_detached(id) && !crate::relax::call::runs_directly(id) => {
                let args = self.args(call)?;
                let out = self.f.ty_of(e).filter(|&t| matches!(self.f.pool.ty(t), TyData::Tensor { .. }));
                let d = self.dst(dst);
                let op = self.t.string(id.name());
                self.t.attrs.push(call.attrs.clone());
                let attrs = self.t.attrs.len() as u32 - 1;
                Instr::Op { dst: d, op, attrs, args, out: out.map(|t| t.index() as u32) }
            }
            _ => return Err(self.op_unsupported(e, id)),
        };
        let d = dst_of(&instr);
        self.with_site(site, instr);
        Ok(d)
    }

    fn op_unsupported(&self, e: Expr, id: OpId) -> RunError {
        self.unsupported(
            e,
            format_args!("the op `R.{}`, which has no reference kernel and is not legalized", id.def().text_name()),
        )
    }
}

/// The register an instruction writes.
pub(crate) fn dst_of(i: &Instr) -> Reg {
    match i {
        Instr::Move { dst, .. }
        | Instr::Const { dst, .. }
        | Instr::Func { dst, .. }
        | Instr::Packed { dst, .. }
        | Instr::Shape { dst, .. }
        | Instr::Prim { dst, .. }
        | Instr::Tuple { dst, .. }
        | Instr::GetItem { dst, .. }
        | Instr::Null { dst }
        | Instr::CallGlobal { dst, .. }
        | Instr::CallPacked { dst, .. }
        | Instr::CallValue { dst, .. }
        | Instr::CallTir { dst, .. }
        | Instr::CallTirDyn { dst, .. }
        | Instr::CallDpsPacked { dst, .. }
        | Instr::CallPurePacked { dst, .. }
        | Instr::CallBuiltin { dst, .. }
        | Instr::InvokeClosure { dst, .. }
        | Instr::MakeClosure { dst, .. }
        | Instr::Print { dst, .. }
        | Instr::AssertOp { dst, .. }
        | Instr::Memory { dst, .. }
        | Instr::Kill { dst, .. }
        | Instr::Op { dst, .. }
        | Instr::Closure { dst, .. } => *dst,
        Instr::MatchCast { src, .. } | Instr::Ret { src } => *src,
        Instr::JumpIfNot { cond, .. } => *cond,
        Instr::Jump { .. } => 0,
    }
}
