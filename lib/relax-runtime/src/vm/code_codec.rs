//! Encoding of instructions: an opcode byte, then the operands in declaration order
//! (registers and table indices as `u32`, lists with a `u32` count).

use super::bytecode::{Callee, Instr, KillKind, Operands};
use super::wire::{Reader, Writer};
use crate::error::RunResult;

fn opt_reg(w: &mut Writer, r: Option<u32>) {
    w.bool(r.is_some());
    if let Some(r) = r {
        w.u32(r);
    }
}

fn opt_i64s(w: &mut Writer, v: Option<&[i64]>) {
    w.bool(v.is_some());
    if let Some(v) = v {
        w.i64s(v);
    }
}

fn operands(w: &mut Writer, o: &Operands) {
    match o {
        Operands::Regs(rs) => {
            w.u8(0);
            w.u32s(rs);
        }
        Operands::Tuple(r) => {
            w.u8(1);
            w.u32(*r);
        }
    }
}

/// Writes one instruction.
pub(crate) fn write(w: &mut Writer, i: &Instr) {
    match i {
        Instr::Move { dst, src } => {
            w.u8(0);
            w.u32(*dst);
            w.u32(*src);
        }
        Instr::Const { dst, index } => {
            w.u8(1);
            w.u32(*dst);
            w.u32(*index);
        }
        Instr::Func { dst, global } => {
            w.u8(2);
            w.u32(*dst);
            w.u32(*global);
        }
        Instr::Packed { dst, name } => {
            w.u8(3);
            w.u32(*dst);
            w.u32(*name);
        }
        Instr::Shape { dst, dims } => {
            w.u8(4);
            w.u32(*dst);
            w.u32s(dims);
        }
        Instr::Prim { dst, expr } => {
            w.u8(5);
            w.u32(*dst);
            w.u32(*expr);
        }
        Instr::Tuple { dst, fields } => {
            w.u8(6);
            w.u32(*dst);
            w.u32s(fields);
        }
        Instr::GetItem { dst, src, index } => {
            w.u8(7);
            w.u32(*dst);
            w.u32(*src);
            w.u32(*index);
        }
        Instr::Null { dst } => {
            w.u8(8);
            w.u32(*dst);
        }
        Instr::CallGlobal { dst, global, args } => {
            w.u8(9);
            w.u32(*dst);
            w.u32(*global);
            w.u32s(args);
        }
        Instr::CallPacked { dst, name, args } => {
            w.u8(10);
            w.u32(*dst);
            w.u32(*name);
            w.u32s(args);
        }
        Instr::CallValue { dst, callee, args } => {
            w.u8(11);
            w.u32(*dst);
            w.u32(*callee);
            w.u32s(args);
        }
        Instr::CallTir { dst, callee, inputs, tir_vars, outs, inplace, tuple } => {
            w.u8(12);
            w.u32(*dst);
            match callee {
                Callee::Global(g) => {
                    w.u8(0);
                    w.u32(*g);
                }
                Callee::Reg(r) => {
                    w.u8(1);
                    w.u32(*r);
                }
            }
            operands(w, inputs);
            opt_reg(w, *tir_vars);
            w.u32s(outs);
            opt_i64s(w, inplace.as_deref());
            w.bool(*tuple);
        }
        Instr::CallTirDyn { dst, callee, args } => three(w, 13, *dst, *callee, *args),
        Instr::CallDpsPacked { dst, callee, args, outs, tuple } => {
            w.u8(14);
            w.u32(*dst);
            w.u32(*callee);
            w.u32(*args);
            w.u32s(outs);
            w.bool(*tuple);
        }
        Instr::CallPurePacked { dst, callee, args, inplace } => {
            w.u8(15);
            w.u32(*dst);
            w.u32(*callee);
            w.u32s(args);
            opt_i64s(w, inplace.as_deref());
        }
        Instr::CallBuiltin { dst, callee, args } => three(w, 16, *dst, *callee, *args),
        Instr::InvokeClosure { dst, callee, args } => three(w, 17, *dst, *callee, *args),
        Instr::MakeClosure { dst, func, captured } => three(w, 18, *dst, *func, *captured),
        Instr::Print { dst, args } => {
            w.u8(19);
            w.u32(*dst);
            w.u32s(args);
        }
        Instr::AssertOp { dst, args } => {
            w.u8(20);
            w.u32(*dst);
            w.u32s(args);
        }
        Instr::Memory { dst, op, args } => {
            w.u8(21);
            w.u32(*dst);
            w.u32(*op);
            w.u32s(args);
        }
        Instr::Kill { dst, src, what } => {
            w.u8(22);
            w.u32(*dst);
            w.u32(*src);
            w.u8(*what as u8);
        }
        Instr::Op { dst, op, attrs, args, out } => {
            w.u8(23);
            w.u32(*dst);
            w.u32(*op);
            w.u32(*attrs);
            w.u32s(args);
            opt_reg(w, *out);
        }
        Instr::Closure { dst, func, self_reg } => {
            w.u8(28);
            w.u32(*dst);
            w.u32(*func);
            opt_reg(w, *self_reg);
        }
        Instr::MatchCast { src, ty, text, var } => {
            w.u8(24);
            w.u32(*src);
            w.u32(*ty);
            w.u32(*text);
            w.u32(*var);
        }
        Instr::JumpIfNot { cond, target } => {
            w.u8(25);
            w.u32(*cond);
            w.u32(*target);
        }
        Instr::Jump { target } => {
            w.u8(26);
            w.u32(*target);
        }
        Instr::Ret { src } => {
            w.u8(27);
            w.u32(*src);
        }
    }
}

fn three(w: &mut Writer, op: u8, a: u32, b: u32, c: u32) {
    w.u8(op);
    w.u32(a);
    w.u32(b);
    w.u32(c);
}

fn read_opt_reg(r: &mut Reader<'_>) -> RunResult<Option<u32>> {
    Ok(if r.bool()? { Some(r.u32()?) } else { None })
}

fn read_opt_i64s(r: &mut Reader<'_>) -> RunResult<Option<Vec<i64>>> {
    Ok(if r.bool()? { Some(r.i64s()?) } else { None })
}

/// Reads one instruction.
pub(crate) fn read(r: &mut Reader<'_>) -> RunResult<Instr> {
    let op = r.u8()?;
    Ok(match op {
        0 => Instr::Move { dst: r.u32()?, src: r.u32()? },
        1 => Instr::Const { dst: r.u32()?, index: r.u32()? },
        2 => Instr::Func { dst: r.u32()?, global: r.u32()? },
        3 => Instr::Packed { dst: r.u32()?, name: r.u32()? },
        4 => Instr::Shape { dst: r.u32()?, dims: r.u32s()? },
        5 => Instr::Prim { dst: r.u32()?, expr: r.u32()? },
        6 => Instr::Tuple { dst: r.u32()?, fields: r.u32s()? },
        7 => Instr::GetItem { dst: r.u32()?, src: r.u32()?, index: r.u32()? },
        8 => Instr::Null { dst: r.u32()? },
        9 => Instr::CallGlobal { dst: r.u32()?, global: r.u32()?, args: r.u32s()? },
        10 => Instr::CallPacked { dst: r.u32()?, name: r.u32()?, args: r.u32s()? },
        11 => Instr::CallValue { dst: r.u32()?, callee: r.u32()?, args: r.u32s()? },
        12 => {
            let dst = r.u32()?;
            let callee = match r.u8()? {
                0 => Callee::Global(r.u32()?),
                1 => Callee::Reg(r.u32()?),
                t => return Err(r.err(format!("bad callee tag {t}"))),
            };
            let inputs = match r.u8()? {
                0 => Operands::Regs(r.u32s()?),
                1 => Operands::Tuple(r.u32()?),
                t => return Err(r.err(format!("bad operand tag {t}"))),
            };
            Instr::CallTir {
                dst,
                callee,
                inputs,
                tir_vars: read_opt_reg(r)?,
                outs: r.u32s()?,
                inplace: read_opt_i64s(r)?,
                tuple: r.bool()?,
            }
        }
        13 => Instr::CallTirDyn { dst: r.u32()?, callee: r.u32()?, args: r.u32()? },
        14 => {
            Instr::CallDpsPacked { dst: r.u32()?, callee: r.u32()?, args: r.u32()?, outs: r.u32s()?, tuple: r.bool()? }
        }
        15 => Instr::CallPurePacked { dst: r.u32()?, callee: r.u32()?, args: r.u32s()?, inplace: read_opt_i64s(r)? },
        16 => Instr::CallBuiltin { dst: r.u32()?, callee: r.u32()?, args: r.u32()? },
        17 => Instr::InvokeClosure { dst: r.u32()?, callee: r.u32()?, args: r.u32()? },
        18 => Instr::MakeClosure { dst: r.u32()?, func: r.u32()?, captured: r.u32()? },
        19 => Instr::Print { dst: r.u32()?, args: r.u32s()? },
        20 => Instr::AssertOp { dst: r.u32()?, args: r.u32s()? },
        21 => Instr::Memory { dst: r.u32()?, op: r.u32()?, args: r.u32s()? },
        22 => {
            let dst = r.u32()?;
            let src = r.u32()?;
            let what = match r.u8()? {
                0 => KillKind::Storage,
                1 => KillKind::Tensor,
                2 => KillKind::Object,
                t => return Err(r.err(format!("bad kill kind {t}"))),
            };
            Instr::Kill { dst, src, what }
        }
        23 => Instr::Op { dst: r.u32()?, op: r.u32()?, attrs: r.u32()?, args: r.u32s()?, out: read_opt_reg(r)? },
        24 => Instr::MatchCast { src: r.u32()?, ty: r.u32()?, text: r.u32()?, var: r.u32()? },
        25 => Instr::JumpIfNot { cond: r.u32()?, target: r.u32()? },
        26 => Instr::Jump { target: r.u32()? },
        27 => Instr::Ret { src: r.u32()? },
        28 => Instr::Closure { dst: r.u32()?, func: r.u32()?, self_reg: read_opt_reg(r)? },
        t => return Err(r.err(format!("bad opcode {t}"))),
    })
}
