//! The JIT against the interpreter: every module of `test/Run/` and
//! `test/Transform/legalize-ops/` (each `# -----` chunk that parses), after
//! `legalize-ops` and `schedule-cpu`, gives
//!
//! 1. in the TIR interpreter (bounds-checked), the same bits as the unscheduled module
//!    (schedules keep the order of every computation), and
//! 2. through the JIT-compiled kernels, the same bits as the interpreter, with the Relax
//!    level in the interpreter and on the VM (`relax_runtime::vm`),
//!
//! with the same seeded inputs (the TIR of both modules lowered, as the tools lower it).
//! Needs the `llvm` feature.
#![cfg(feature = "llvm")]

use relax_driver::lowering::Legalize;
use relax_ir::Module;
use relax_runtime::{Interpreter, Scalar, Value, inputs};
use support::interp::{chunks, files, fresh, seeded_syms};

mod support {
    pub mod interp;
}

/// Bit-exact equality of floats (NaN equals NaN).
fn same_bits(p: Scalar, q: Scalar) -> bool {
    let (u, v) = (p.as_f64(), q.as_f64());
    u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan())
}

/// Bit-exact equality of two results.
fn same(a: &Value, b: &Value) -> Result<(), String> {
    support::interp::compare(a, b, "result", same_bits)
}

fn run(
    m: &Module,
    name: &str,
    args: &[Value],
    native: Option<&relax_runtime::jit::JitKernels>,
) -> Result<Value, String> {
    let g = m.lookup(name).ok_or("no such function")?;
    let mut it = Interpreter::new(m).with_lowering(&Legalize);
    if let Some(k) = native {
        it.native = Some(k);
    }
    it.call_global(g, args.iter().map(fresh).collect(), relax_ir::Span::NONE).map_err(|e| e.message)
}

#[test]
fn jit_gives_the_interpreters_bits() {
    let opts = relax_codegen::llvm::Options::default();
    let bits = i64::from(relax_codegen::llvm::vector_bits(&opts));
    let mut compared = 0;
    let mut failures = Vec::new();
    for path in files() {
        let text = std::fs::read_to_string(&path).expect("readable");
        for (ci, chunk) in chunks(&text).iter().enumerate() {
            let Ok(m) = relax_parser::parse_module(chunk) else { continue };
            let mut legal = m.clone();
            relax_transform::legalize::legalize_module(&mut legal);
            let mut sched = legal.clone();
            let prims: Vec<_> = sched.live().filter(|(g, _)| sched.prim_func(*g).is_some()).map(|(g, _)| g).collect();
            for g in prims {
                relax_transform::schedule_cpu::schedule_prim_func(sched.prim_func_mut(g).expect("a PrimFunc"), bits);
            }
            // The engines run lowered TIR, as the tools hand it to them.
            if let Err(e) = relax_ir::tir_lower::lower_module(&mut legal)
                .and_then(|_| relax_ir::tir_lower::lower_module(&mut sched))
            {
                failures.push(format!("{}#{ci}: lowering failed: {e:?}", path.display()));
                continue;
            }
            let funcs: Vec<(relax_ir::Global, String)> = legal
                .live()
                .filter(|(_, g)| matches!(g.func, relax_ir::Func::Relax(_)))
                .map(|(g, d)| (g, d.name.clone()))
                .collect();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let exec = match relax_runtime::vm::Executable::compile(&sched) {
                Ok(e) => Some(e),
                Err(e) if e.message.contains("which has no reference kernel and is not legalized") => None,
                Err(e) => {
                    failures.push(format!("{}#{ci}: no executable: {}", path.display(), e.message));
                    None
                }
            };
            let r = relax_runtime::jit::compile(&sched, &opts, |jk| {
                let provider = exec.as_ref().map(|e| jk.provider(e, &sched));
                for (g, name) in &funcs {
                    let f = legal.relax(*g).expect("relax");
                    let syms = seeded_syms(f);
                    let Ok(args) = inputs::make_inputs(&legal, *g, &[], &syms, Some(1)) else { continue };
                    let what = format!("{file}#{ci} {name}");
                    let Ok(reference) = run(&legal, name, &args, None) else { continue };
                    match run(&sched, name, &args, None) {
                        Ok(v) => {
                            if let Err(e) = same(&reference, &v) {
                                failures.push(format!("{what}: scheduled (interpreter): {e}"));
                            }
                        }
                        Err(e) => failures.push(format!("{what}: scheduled module failed in the interpreter: {e}")),
                    }
                    match run(&sched, name, &args, Some(jk)) {
                        Ok(v) => {
                            if let Err(e) = same(&reference, &v) {
                                failures.push(format!("{what}: jit: {e}"));
                            }
                        }
                        Err(e) => failures.push(format!("{what}: jit failed: {e}")),
                    }
                    if let (Some(e), Some(p)) = (&exec, &provider) {
                        let vm = relax_runtime::vm::Vm::new(e, p, relax_runtime::vm::VmOptions::default());
                        match vm.call(name, args.iter().map(fresh).collect()) {
                            Ok(v) => {
                                if let Err(e) = same(&reference, &v) {
                                    failures.push(format!("{what}: jit on the VM: {e}"));
                                }
                            }
                            Err(e) => failures.push(format!("{what}: jit on the VM failed: {}", e.message)),
                        }
                    }
                    compared += 1;
                }
                if !jk.failed.is_empty() {
                    let names: Vec<String> =
                        jk.failed.iter().map(|(g, e)| format!("{}: {e}", sched.globals[*g].name)).collect();
                    failures.push(format!("{file}#{ci}: kernels the JIT could not compile: {}", names.join("; ")));
                }
            });
            if let Err(e) = r {
                failures.push(format!("{file}#{ci}: {e}"));
            }
        }
    }
    eprintln!("jit: {compared} functions compared");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    assert!(compared > 100, "only {compared} functions compared");
}
