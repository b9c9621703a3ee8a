//! A readable listing of an executable (`relax-translate --emit=bytecode`): the kernel
//! table, then each function's registers and code, one instruction a line with its
//! source line when the debug table has it.

use std::fmt::Write;

use relax_entity::EntityRef;

use relax_ir::{PrimExpr, Ty};

use super::bytecode::{Callee, Constant, Function, Instr, Operands, Reg};
use super::{Executable, GlobalKind};

/// The listing of `e`.
pub fn listing(e: &Executable) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "; relax executable, format version {}", super::format::VERSION);
    for (i, k) in e.kernels.iter().enumerate() {
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| match &p.buffer {
                Some(b) => {
                    let dims: Vec<String> = b
                        .shape
                        .iter()
                        .map(|&d| relax_ir::printer::print_prim_in(&k.pool, PrimExpr::new(d as usize)))
                        .collect();
                    format!("{}: {}[{}]", b.name, b.dtype, dims.join(", "))
                }
                None => {
                    let v = &k.pool.vars[relax_ir::SymVar::new(p.var as usize)];
                    format!("{}: {}", v.name, v.dtype)
                }
            })
            .collect();
        let slots: Vec<String> = k
            .slots
            .iter()
            .map(|sl| {
                let kind = format!("{:?}", sl.kind).to_lowercase();
                match k.pool.vars.get(relax_ir::SymVar::new(sl.var as usize)) {
                    Some(v) => format!("{kind} {}", v.name),
                    None => kind,
                }
            })
            .collect();
        let _ = writeln!(
            s,
            "kernel {i} @{} symbol {} ({}) slots [{}]",
            k.name,
            k.packed_symbol,
            params.join(", "),
            slots.join(", ")
        );
    }
    for f in &e.functions {
        function(&mut s, e, f);
    }
    s
}

fn function(s: &mut String, e: &Executable, f: &Function) {
    let params: Vec<String> =
        f.params.iter().map(|p| format!("{}: {}", reg(f, p.reg), e.strings[p.text as usize])).collect();
    let _ = writeln!(s, "\nfunction @{}({}) -> {} {{", f.name, params.join(", "), e.strings[f.ret.1 as usize]);
    let _ = writeln!(s, "  ; {} registers", f.num_regs);
    for (pc, i) in f.code.iter().enumerate() {
        let text = instr(e, f, i);
        let line = f
            .debug
            .get(pc)
            .map(|d| if d.site != 0 { d.site } else { d.binding })
            .and_then(|sp| e.spans.get(sp as usize).filter(|x| x.line != 0 && sp != 0))
            .map(|x| format!("  ; line {}", x.line))
            .unwrap_or_default();
        let _ = writeln!(s, "  {pc:>3}: {text}{line}");
    }
    let _ = writeln!(s, "}}");
}

fn reg(f: &Function, r: Reg) -> String {
    match f.reg_names.get(r as usize) {
        Some(n) if !n.is_empty() => format!("%{r}:{n}"),
        _ => format!("%{r}"),
    }
}

fn regs(f: &Function, rs: &[Reg]) -> String {
    rs.iter().map(|&r| reg(f, r)).collect::<Vec<_>>().join(", ")
}

fn ty(f: &Function, t: u32) -> String {
    relax_ir::printer::print_ty_pool(&f.pool, Ty::new(t as usize))
}

fn tys(f: &Function, ts: &[u32]) -> String {
    ts.iter().map(|&t| ty(f, t)).collect::<Vec<_>>().join(", ")
}

fn global(e: &Executable, g: u32) -> String {
    match e.globals.get(g as usize) {
        Some(x) => match &x.kind {
            GlobalKind::Kernel(k) => format!("@{} (kernel {k})", x.name),
            _ => format!("@{}", x.name),
        },
        None => format!("@{g}"),
    }
}

fn instr(e: &Executable, f: &Function, i: &Instr) -> String {
    let st = |x: u32| e.strings.get(x as usize).cloned().unwrap_or_default();
    let prim = |x: u32| relax_ir::printer::print_prim_in(&f.pool, PrimExpr::new(x as usize));
    let r = |x: Reg| reg(f, x);
    let inplace = |v: &Option<Vec<i64>>| v.as_ref().map(|v| format!(" inplace {v:?}")).unwrap_or_default();
    match i {
        Instr::Move { dst, src } => format!("{} = move {}", r(*dst), r(*src)),
        Instr::Const { dst, index } => {
            let c = match e.constants.get(*index as usize) {
                Some(Constant::Tensor { index: m, dtype, shape, .. }) => format!("tensor {m} {dtype}{shape:?}"),
                Some(Constant::Str(x)) => format!("{x:?}"),
                Some(Constant::DType(d)) => format!("dtype {d}"),
                Some(Constant::Shape(v)) => format!("shape {v:?}"),
                Some(Constant::Prim(x)) => crate::print::value_text(&crate::value::Value::Prim(*x)),
                None => "?".to_string(),
            };
            format!("{} = const {index} ({c})", r(*dst))
        }
        Instr::Func { dst, global: g } => format!("{} = func {}", r(*dst), global(e, *g)),
        Instr::Packed { dst, name } => format!("{} = packed {:?}", r(*dst), st(*name)),
        Instr::Shape { dst, dims } => {
            format!("{} = shape ({})", r(*dst), dims.iter().map(|&d| prim(d)).collect::<Vec<_>>().join(", "))
        }
        Instr::Prim { dst, expr } => format!("{} = prim {}", r(*dst), prim(*expr)),
        Instr::Tuple { dst, fields } => format!("{} = tuple ({})", r(*dst), regs(f, fields)),
        Instr::GetItem { dst, src, index } => format!("{} = {}[{index}]", r(*dst), r(*src)),
        Instr::Null { dst } => format!("{} = null", r(*dst)),
        Instr::CallGlobal { dst, global: g, args } => {
            format!("{} = call {}({})", r(*dst), global(e, *g), regs(f, args))
        }
        Instr::CallPacked { dst, name, args } => {
            format!("{} = call_packed {:?}({})", r(*dst), st(*name), regs(f, args))
        }
        Instr::CallValue { dst, callee, args } => format!("{} = call {}({})", r(*dst), r(*callee), regs(f, args)),
        Instr::CallTir { dst, callee, inputs, tir_vars, outs, inplace: ip, tuple } => {
            let ins = match inputs {
                Operands::Regs(rs) => format!("({})", regs(f, rs)),
                Operands::Tuple(t) => format!("{}...", r(*t)),
            };
            let tv = tir_vars.map(|t| format!(" tir_vars {}", r(t))).unwrap_or_default();
            let tup = if *tuple { " tuple" } else { "" };
            let callee = match callee {
                Callee::Global(g) => global(e, *g),
                Callee::Reg(x) => r(*x),
            };
            format!("{} = call_tir {callee} {ins} outs [{}]{tv}{}{tup}", r(*dst), tys(f, outs), inplace(ip))
        }
        Instr::CallTirDyn { dst, callee, args } => format!("{} = call_tir_dyn {} {}", r(*dst), r(*callee), r(*args)),
        Instr::CallDpsPacked { dst, callee, args, outs, .. } => {
            format!("{} = call_dps_packed {} {} outs [{}]", r(*dst), r(*callee), r(*args), tys(f, outs))
        }
        Instr::CallPurePacked { dst, callee, args, inplace: ip } => {
            format!("{} = call_pure_packed {}({}){}", r(*dst), r(*callee), regs(f, args), inplace(ip))
        }
        Instr::CallBuiltin { dst, callee, args } => format!("{} = call_builtin {} {}", r(*dst), r(*callee), r(*args)),
        Instr::InvokeClosure { dst, callee, args } => {
            format!("{} = invoke_closure {} {}", r(*dst), r(*callee), r(*args))
        }
        Instr::MakeClosure { dst, func, captured } => {
            format!("{} = make_closure {} {}", r(*dst), r(*func), r(*captured))
        }
        Instr::Print { dst, args } => format!("{} = print({})", r(*dst), regs(f, args)),
        Instr::AssertOp { dst, args } => format!("{} = assert({})", r(*dst), regs(f, args)),
        Instr::Memory { dst, op, args } => format!("{} = {}({})", r(*dst), st(*op), regs(f, args)),
        Instr::Kill { dst, src, what } => format!("{} = kill {} ({})", r(*dst), r(*src), what.op_name()),
        Instr::Op { dst, op, attrs, args, .. } => {
            let a = e
                .attrs
                .get(*attrs as usize)
                .map(|a| a.0.iter().map(|(k, v)| format!("{k}={v:?}")).collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            let a = if a.is_empty() { String::new() } else { format!(" {{{a}}}") };
            format!("{} = op {}({}){a}", r(*dst), st(*op), regs(f, args))
        }
        Instr::Closure { dst, func, .. } => format!(
            "{} = closure {} (function {func})",
            r(*dst),
            e.functions.get(*func as usize).map_or("?", |x| x.name.as_str())
        ),
        Instr::MatchCast { src, text, .. } => format!("match_cast {} : {}", r(*src), st(*text)),
        Instr::JumpIfNot { cond, target } => format!("if not {} goto {target}", r(*cond)),
        Instr::Jump { target } => format!("goto {target}"),
        Instr::Ret { src } => format!("ret {}", r(*src)),
    }
}
