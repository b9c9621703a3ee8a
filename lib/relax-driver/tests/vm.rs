//! The VM against the tree interpreter: every module of `test/Run/` (each `# -----`
//! chunk that parses) compiles to an executable, survives `to_bytes` / `from_bytes`, and
//! every Relax function gives the interpreter's result, or the same error at the same
//! place, with the same seeded inputs. Kernels run in the TIR interpreter on both sides,
//! so the comparison is exact. Modules run as `relax-run` runs them: as written
//! (`--engine interp`) and after the default pipeline (`--engine jit`).

use relax_driver::lowering::Legalize;
use relax_ir::{Module, Span};
use relax_runtime::vm::{Executable, TirKernels, Vm, VmOptions};
use relax_runtime::{Interpreter, RunResult, Value, inputs};
use support::interp::{chunks, compare, fresh, seeded_syms};

mod support {
    pub mod interp;
}

fn run_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Run");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("tvm-frontend")] {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .expect("test folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rlx"))
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

fn outcome(r: RunResult<Value>) -> Result<Value, (String, Span)> {
    r.map_err(|e| (e.message, e.span))
}

/// Compares every function of `m` on both engines; returns the number compared. As
/// written (`legalized: false`), a module may use ops that only their legalization runs
/// (the interpreter legalizes them at run time); the VM refuses those by name.
fn compare_module(m: &Module, name: &str, legalized: bool, failures: &mut Vec<String>) -> usize {
    let exec = match Executable::compile(m) {
        Ok(e) => e,
        Err(e) if !legalized && e.message.contains("which has no reference kernel and is not legalized") => return 0,
        Err(e) => {
            failures.push(format!("{name}: does not compile: {} at {:?}", e.message, e.span));
            return 0;
        }
    };
    let exec = match Executable::from_bytes(&exec.to_bytes()) {
        Ok(e) => e,
        Err(e) => {
            failures.push(format!("{name}: does not read back: {}", e.message));
            return 0;
        }
    };
    let kernels = TirKernels::new(&exec, m);
    let mut n = 0;
    for (g, gd) in m.globals.iter() {
        let Some(f) = m.relax(g) else { continue };
        let Ok(args) = inputs::make_inputs(m, g, &[], &seeded_syms(f), Some(7)) else { continue };
        let interp = Interpreter::new(m).with_lowering(&Legalize);
        let want = outcome(interp.call_global(g, args.iter().map(fresh).collect(), Span::NONE));
        let vm = Vm::new(&exec, &kernels, VmOptions::default());
        let got = outcome(vm.call(&gd.name, args.iter().map(fresh).collect()));
        let printed = (interp.printed.borrow().clone(), vm.take_printed());
        let what = format!("{name}: `{}`", gd.name);
        match (&want, &got) {
            (Ok(a), Ok(b)) => {
                if let Err(e) = compare(a, b, "result", |x, y| x.as_f64().to_bits() == y.as_f64().to_bits() || x == y) {
                    failures.push(format!("{what}: {e}"));
                }
            }
            (Err(a), Err(b)) if a == b => {}
            _ => failures.push(format!("{what}: interpreter {:?}, VM {:?}", want.as_ref().err(), got.as_ref().err())),
        }
        if printed.0 != printed.1 {
            failures.push(format!("{what}: printed {:?} vs {:?}", printed.0, printed.1));
        }
        n += 1;
    }
    n
}

#[test]
fn vm_matches_the_interpreter_on_test_run() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for path in run_files() {
        let text = std::fs::read_to_string(&path).expect("readable");
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("?").to_string();
        for (i, chunk) in chunks(&text).iter().enumerate() {
            let Ok(mut m) = relax_parser::parse_module(chunk) else { continue };
            if relax_ir::verify::verify_module(&m).is_err() {
                continue;
            }
            let mut piped = m.clone();
            if relax_driver::pipeline::lower_tir(&mut m).is_ok() {
                compared += compare_module(&m, &format!("{file}#{i}"), false, &mut failures);
            }
            let bits = relax_driver::pipeline::vector_bits(None);
            if relax_driver::pipeline::run_default_pipeline(&mut piped, bits).is_ok()
                && relax_driver::pipeline::lower_tir(&mut piped).is_ok()
            {
                compared += compare_module(&piped, &format!("{file}#{i} (default pipeline)"), true, &mut failures);
            }
        }
    }
    assert!(compared > 50, "only {compared} functions compared");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}
