//! Index checks of a decoded executable: every register, table index, pool handle and
//! jump target in range, so that running it cannot index out of bounds.

use relax_codegen::abi::SlotKind;

use super::bytecode::{Callee, Function, Instr, Operands};
use super::{Executable, GlobalKind};
use crate::error::{RunError, RunResult};

fn bad(what: impl std::fmt::Display) -> RunError {
    RunError::new(format!("malformed executable: {what}"))
}

fn check(ok: bool, what: impl FnOnce() -> String) -> RunResult<()> {
    if ok { Ok(()) } else { Err(bad(what())) }
}

/// Checks every index of `e`.
pub(crate) fn verify(e: &Executable) -> RunResult<()> {
    check(!e.spans.is_empty(), || "the span table has no entry 0".to_string())?;
    for g in &e.globals {
        match g.kind {
            GlobalKind::Function(i) => {
                check((i as usize) < e.functions.len(), || format!("function {i} of `{}`", g.name))?
            }
            GlobalKind::Kernel(i) => check((i as usize) < e.kernels.len(), || format!("kernel {i} of `{}`", g.name))?,
            _ => {}
        }
    }
    for k in &e.kernels {
        let nv = k.pool.vars.len();
        let np = k.pool.prims.len();
        let name = &k.name;
        for p in &k.params {
            check((p.var as usize) < nv, || format!("kernel `{name}`: variable {}", p.var))?;
            if let Some(b) = &p.buffer {
                let exprs = b.shape.iter().chain(&b.strides).chain(b.elem_offset.iter());
                for &x in exprs {
                    check((x as usize) < np, || format!("kernel `{name}`: expression {x}"))?;
                }
            }
        }
        for s in &k.slots {
            check(s.kind == SlotKind::Ret || (s.var as usize) < nv, || {
                format!("kernel `{name}`: slot variable {}", s.var)
            })?;
        }
        for er in &k.errors {
            check((er.span as usize) < e.spans.len(), || format!("kernel `{name}`: span {}", er.span))?;
        }
    }
    e.functions.iter().try_for_each(|f| function(e, f))
}

fn function(e: &Executable, f: &Function) -> RunResult<()> {
    let name = &f.name;
    let n = f.num_regs as usize;
    check(f.reg_names.len() == n && f.reg_spans.len() == n, || format!("`{name}`: register tables"))?;
    check(f.debug.len() == f.code.len(), || format!("`{name}`: debug table"))?;
    super::pool_codec::check_shape_vars(&f.pool, f.num_regs)?;
    let reg = |r: u32| check((r as usize) < n, || format!("`{name}`: register {r}"));
    let regs = |rs: &[u32]| rs.iter().try_for_each(|&r| reg(r));
    let ty = |t: u32| check((t as usize) < f.pool.tys.len(), || format!("`{name}`: type {t}"));
    let prim = |x: u32| check((x as usize) < f.pool.prims.len(), || format!("`{name}`: expression {x}"));
    let string = |s: u32| check((s as usize) < e.strings.len(), || format!("`{name}`: string {s}"));
    let span = |s: u32| check((s as usize) < e.spans.len(), || format!("`{name}`: span {s}"));
    for p in &f.params {
        reg(p.reg)?;
        ty(p.ty)?;
        string(p.text)?;
    }
    ty(f.ret.0)?;
    string(f.ret.1)?;
    span(f.span)?;
    f.reg_spans.iter().try_for_each(|&s| span(s))?;
    for d in &f.debug {
        span(d.site)?;
        span(d.binding)?;
    }
    let target = |t: u32| check((t as usize) <= f.code.len(), || format!("`{name}`: jump target {t}"));
    for i in &f.code {
        let dst = super::compile::dst_of(i);
        reg(dst)?;
        match i {
            Instr::Move { src, .. } | Instr::GetItem { src, .. } | Instr::Kill { src, .. } => reg(*src)?,
            Instr::Const { index, .. } => {
                check((*index as usize) < e.constants.len(), || format!("`{name}`: constant {index}"))?;
            }
            Instr::Func { global, .. } => {
                check((*global as usize) < e.globals.len(), || format!("`{name}`: global {global}"))?;
            }
            Instr::Packed { name: s, .. } => string(*s)?,
            Instr::Shape { dims, .. } => dims.iter().try_for_each(|&x| prim(x))?,
            Instr::Prim { expr, .. } => prim(*expr)?,
            Instr::Tuple { fields: rs, .. } | Instr::Print { args: rs, .. } | Instr::AssertOp { args: rs, .. } => {
                regs(rs)?;
            }
            Instr::Null { .. } | Instr::Jump { .. } | Instr::Ret { .. } => {}
            Instr::CallGlobal { global, args, .. } => {
                check((*global as usize) < e.globals.len(), || format!("`{name}`: global {global}"))?;
                regs(args)?;
            }
            Instr::CallPacked { name: s, args, .. } => {
                string(*s)?;
                regs(args)?;
            }
            Instr::CallValue { callee, args, .. } | Instr::CallPurePacked { callee, args, .. } => {
                reg(*callee)?;
                regs(args)?;
            }
            Instr::CallTir { callee, inputs, tir_vars, outs, .. } => {
                match callee {
                    Callee::Reg(r) => reg(*r)?,
                    Callee::Global(g) => {
                        check((*g as usize) < e.globals.len(), || format!("`{name}`: global {g}"))?;
                    }
                }
                match inputs {
                    Operands::Regs(rs) => regs(rs)?,
                    Operands::Tuple(r) => reg(*r)?,
                }
                tir_vars.iter().try_for_each(|&r| reg(r))?;
                outs.iter().try_for_each(|&t| ty(t))?;
            }
            Instr::CallDpsPacked { callee, args, outs, .. } => {
                reg(*callee)?;
                reg(*args)?;
                outs.iter().try_for_each(|&t| ty(t))?;
            }
            Instr::CallTirDyn { callee, args, .. }
            | Instr::CallBuiltin { callee, args, .. }
            | Instr::InvokeClosure { callee, args, .. }
            | Instr::MakeClosure { func: callee, captured: args, .. } => {
                reg(*callee)?;
                reg(*args)?;
            }
            Instr::Memory { op, args, .. } => {
                string(*op)?;
                regs(args)?;
            }
            Instr::Op { op, attrs, args, out, .. } => {
                string(*op)?;
                check((*attrs as usize) < e.attrs.len(), || format!("`{name}`: attributes {attrs}"))?;
                regs(args)?;
                out.iter().try_for_each(|&t| ty(t))?;
            }
            Instr::MatchCast { ty: t, text, var, .. } => {
                ty(*t)?;
                string(*text)?;
                reg(*var)?;
            }
            Instr::JumpIfNot { target: t, .. } => target(*t)?,
            Instr::Closure { func, self_reg, .. } => {
                check((*func as usize) < e.functions.len(), || format!("`{name}`: function {func}"))?;
                self_reg.iter().try_for_each(|&r| reg(r))?;
            }
        }
        if let Instr::Jump { target: t } = i {
            target(*t)?;
        }
    }
    Ok(())
}
