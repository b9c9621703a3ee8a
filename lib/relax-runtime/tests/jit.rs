//! The JIT against the interpreter: every module of `test/Run/` and
//! `test/Transform/legalize-ops/` (each `# -----` chunk that parses), after
//! `legalize-ops` and `schedule-cpu`, gives
//!
//! 1. in the TIR interpreter (bounds-checked), the same bits as the unscheduled module
//!    (schedules keep the order of every computation), and
//! 2. through the JIT-compiled kernels, the same bits as the interpreter,
//!
//! with the same seeded inputs. Needs the `llvm` feature.
#![cfg(feature = "llvm")]

use std::path::{Path, PathBuf};

use relax_ir::Module;
use relax_runtime::{Interpreter, Value, inputs};

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test");
    let mut out = Vec::new();
    for dir in ["Run", "Transform/legalize-ops"] {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("test folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rlx"))
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

fn chunks(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim_end().starts_with("# -----") {
            out.push(String::new());
        } else {
            out.last_mut().expect("one chunk").push_str(line);
        }
    }
    out
}

/// Bit-exact equality (NaN equals NaN).
fn same(a: &Value, b: &Value) -> Result<(), String> {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            if x.shape != y.shape || x.dtype != y.dtype {
                return Err(format!("{} vs {}", a.describe(), b.describe()));
            }
            for (i, (p, q)) in x.scalars().into_iter().zip(y.scalars()).enumerate() {
                let ok = if p.is_float() {
                    let (u, v) = (p.as_f64(), q.as_f64());
                    u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan())
                } else {
                    p.as_i128() == q.as_i128()
                };
                if !ok {
                    return Err(format!("element {i}: {p:?} vs {q:?}"));
                }
            }
            Ok(())
        }
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            x.iter().zip(y.iter()).enumerate().try_for_each(|(i, (p, q))| same(p, q).map_err(|e| format!("[{i}] {e}")))
        }
        (Value::Shape(x), Value::Shape(y)) if x == y => Ok(()),
        (Value::Prim(x), Value::Prim(y)) if x == y => Ok(()),
        _ => Err(format!("{} vs {}", a.describe(), b.describe())),
    }
}

fn fresh(v: &Value) -> Value {
    match v {
        Value::Tensor(t) => Value::Tensor(t.deep_copy()),
        Value::Tuple(f) => Value::tuple(f.iter().map(fresh).collect()),
        other => other.clone(),
    }
}

fn run(
    m: &Module,
    name: &str,
    args: &[Value],
    native: Option<&relax_runtime::jit::JitKernels>,
) -> Result<Value, String> {
    let g = m.lookup(name).ok_or("no such function")?;
    let mut it = Interpreter::new(m);
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
            let funcs: Vec<(relax_ir::Global, String)> = legal
                .live()
                .filter(|(_, g)| matches!(g.func, relax_ir::Func::Relax(_)))
                .map(|(g, d)| (g, d.name.clone()))
                .collect();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let r = relax_runtime::jit::compile(&sched, &opts, |jk| {
                for (g, name) in &funcs {
                    let f = legal.relax(*g).expect("relax");
                    let syms: Vec<(String, i64)> = f
                        .pool
                        .vars
                        .iter()
                        .enumerate()
                        .map(|(i, (_, v))| (v.name.clone(), 2 + (i as i64 % 3)))
                        .collect();
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
