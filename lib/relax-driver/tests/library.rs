//! Compiled libraries (`relax-translate --emit=lib`, docs/library.md) against the
//! interpreter: every module of `test/Run/` (each `# -----` chunk the default pipeline
//! takes) becomes a shared library, which `relax_runtime::library::Program` loads with no
//! IR at hand (built with `--check-bounds`); every Relax function gives the
//! interpreter's result bit for bit on the same seeded inputs, or the same error at the
//! same place (random indices out of range included). Also: the library's own errors (not a
//! library, a truncated file, a missing function) and `relax-run model.so`. Needs the
//! `llvm` feature and a C compiler (`cc`).
#![cfg(feature = "llvm")]

use std::path::{Path, PathBuf};

use relax_driver::lowering::Legalize;
use relax_ir::Span;
use relax_runtime::library::Program;
use relax_runtime::{Interpreter, RunResult, Value, inputs};
use support::interp::{chunks, compare, fresh, seeded_syms};

mod support {
    pub mod interp;
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relax-library-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Runs a driver in process; (status, stdout, stderr).
fn tool(main: fn(Vec<std::ffi::OsString>, &mut relax_driver::Io<'_>) -> i32, args: &[&str]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut stdin = std::io::empty();
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = main(args.iter().map(Into::into).collect(), &mut io);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn translate_lib(src: &Path, out: &Path) -> (i32, String) {
    let (code, _, err) = tool(
        relax_driver::translate_main,
        &["relax-translate", src.to_str().unwrap(), "--emit=lib", "--check-bounds", "-o", out.to_str().unwrap()],
    );
    (code, err)
}

fn outcome(r: RunResult<Value>) -> Result<Value, (String, Span)> {
    r.map_err(|e| (e.message, e.span))
}

#[test]
fn libraries_give_the_interpreters_numbers_on_test_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Run");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("test/Run")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rlx"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let (mut compared, mut libraries) = (0, 0);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("?").to_string();
        for (i, chunk) in chunks(&text).iter().enumerate() {
            let Ok(mut m) = relax_parser::parse_module(chunk) else { continue };
            if relax_ir::verify::verify_module(&m).is_err() {
                continue;
            }
            let bits = relax_driver::pipeline::vector_bits(None);
            if relax_driver::pipeline::run_default_pipeline(&mut m, bits).is_err()
                || relax_driver::pipeline::lower_tir(&mut m).is_err()
                || relax_runtime::vm::Executable::compile(&m).is_err()
            {
                continue;
            }
            let name = format!("{file}#{i}");
            let src = scratch(&format!("{}-{i}.rlx", file.trim_end_matches(".rlx")));
            std::fs::write(&src, chunk).expect("write");
            let lib = src.with_extension("so");
            let (code, err) = translate_lib(&src, &lib);
            if code != 0 {
                failures.push(format!("{name}: --emit=lib failed: {err}"));
                continue;
            }
            let program = match Program::open(&lib, 2) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name}: does not load: {}", e.message));
                    continue;
                }
            };
            libraries += 1;
            for (g, gd) in m.globals.iter() {
                let Some(f) = m.relax(g) else { continue };
                let syms = seeded_syms(f);
                let Ok(args) = inputs::make_inputs(&m, g, &[], &syms, Some(7)) else { continue };
                let sig = program.signature(&gd.name).expect("every function is in the executable");
                let lib_args = inputs::make_inputs_for(&sig, &[], &syms, Some(7)).expect("the same inputs");
                let interp = Interpreter::new(&m).with_lowering(&Legalize);
                let want = outcome(interp.call_global(g, args.iter().map(fresh).collect(), Span::NONE));
                let got = outcome(program.call(&gd.name, lib_args));
                let what = format!("{name}: `{}`", gd.name);
                match (&want, &got) {
                    (Ok(a), Ok(b)) => {
                        if let Err(e) =
                            compare(a, b, "result", |x, y| x.as_f64().to_bits() == y.as_f64().to_bits() || x == y)
                        {
                            failures.push(format!("{what}: {e}"));
                        }
                    }
                    (Err(a), Err(b)) if a == b => {}
                    _ => failures.push(format!(
                        "{what}: interpreter {:?}, library {:?}",
                        want.as_ref().err(),
                        got.as_ref().err()
                    )),
                }
                compared += 1;
            }
        }
    }
    assert!(libraries > 10 && compared > 30, "only {libraries} libraries, {compared} functions compared");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn bad_libraries_are_clear_errors() {
    let not_lib = scratch("not-a-library.so");
    std::fs::write(&not_lib, b"\x7fELF not really").unwrap();
    let e = Program::open(&not_lib, 1).err().expect("an error");
    assert!(e.message.contains("cannot load library"), "{}", e.message);
    let missing = scratch("missing.so");
    let e = Program::open(&missing, 1).err().expect("an error");
    assert!(e.message.contains("no such file"), "{}", e.message);
    // A shared library that is not ours: no manifest.
    let foreign = scratch("foreign.so");
    let c = scratch("foreign.c");
    std::fs::write(&c, "int f(void) { return 1; }\n").unwrap();
    let ok = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o", foreign.to_str().unwrap(), c.to_str().unwrap()])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        let e = Program::open(&foreign, 1).err().expect("an error");
        assert!(e.message.contains("is not a relax library"), "{}", e.message);
    }
}

#[test]
fn relax_run_runs_a_library() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mlp.rlx");
    let lib = scratch("mlp.so");
    let (code, err) = translate_lib(&src, &lib);
    assert_eq!(code, 0, "{err}");
    let lib_s = lib.to_str().unwrap();
    let src_s = src.to_str().unwrap();
    let (c1, from_lib, e1) = tool(relax_driver::run_main, &["relax-run", lib_s, "--seed", "3"]);
    let (c2, from_text, e2) = tool(relax_driver::run_main, &["relax-run", src_s, "--seed", "3"]);
    assert_eq!((c1, c2), (0, 0), "{e1}{e2}");
    assert_eq!(from_lib, from_text);
    let (c, _, e) = tool(relax_driver::run_main, &["relax-run", lib_s, "--entry", "mpl", "--seed", "3"]);
    assert_eq!(c, 1);
    assert!(e.contains("no function `mpl`; did you mean `mlp`?"), "{e}");
    let (c, _, e) = tool(relax_driver::run_main, &["relax-run", lib_s, "--engine", "jit", "--seed", "3"]);
    assert_eq!(c, 1);
    assert!(e.contains("`--engine` is for modules"), "{e}");
    let (c, _, e) = tool(relax_driver::run_main, &["relax-run", lib_s, "--entry", "mlp", "--seed", "3"]);
    assert_eq!(c, 1);
    assert!(e.contains("symbolic variable `n` has no value"), "{e}");
    let (c, out, e) =
        tool(relax_driver::run_main, &["relax-run", lib_s, "--entry", "mlp", "--seed", "3", "--sym", "n=2"]);
    assert_eq!(c, 0, "{e}");
    assert!(out.starts_with("array([["), "{out}");
}

/// Two kernels, one with an `assert` on its scalar parameter (shared with `jit_cache.rs`).
const ASSERTING: &str = include_str!("support/asserting.rlx");

#[test]
fn run_time_errors_keep_their_source_line() {
    let src = scratch("asserting.rlx");
    std::fs::write(&src, ASSERTING).unwrap();
    let lib = src.with_extension("so");
    let (code, err) = translate_lib(&src, &lib);
    assert_eq!(code, 0, "{err}");
    let program = Program::open(&lib, 1).expect("loads");
    let sig = program.signature("main").expect("main");
    let call = |k: i64| {
        let syms = [("n".to_string(), 5), ("k".to_string(), k)];
        let args = inputs::make_inputs_for(&sig, &[], &syms, Some(1)).expect("inputs");
        program.call("main", args)
    };
    assert!(call(3).is_ok());
    let e = call(12).expect_err("the kernel's assert fails");
    let text = program.render_error(&e);
    assert!(
        text.contains("asserting.rlx:9:9: error: PrimFunc `scale`: assertion failed: k must be below 10"),
        "{text}"
    );
    assert!(text.contains("assert k < T.int64(10)"), "{text}");
    // A parameter check of the Relax level: a tensor of the wrong rank.
    let bad = Value::Tensor(relax_runtime::Tensor::zeros(&[2, 2], relax_ir::DataType::FLOAT32));
    let e = program.call("main", vec![bad, Value::Prim(relax_runtime::Scalar::int(relax_ir::DataType::INT64, 1))]);
    let text = program.render_error(&e.expect_err("a rank error"));
    let main_line = ASSERTING.lines().position(|l| l.contains("def main")).expect("main") + 1;
    assert!(text.contains(&format!("asserting.rlx:{main_line}:")), "{text}");
}

/// `relax-run model.so --generate`: a GGUF model compiled into a library generates the
/// tokens and logits of `relax-run model.gguf --generate`, weights and vocabulary taken
/// from the GGUF file at run time.
#[test]
fn a_model_library_generates_the_jits_tokens() {
    use relax_gguf::generate::{FileType, ModelConfig};
    let config = ModelConfig { file_type: FileType::Q4_0, seed: 5, ..ModelConfig::tiny() };
    let gguf = scratch("tiny-q4_0.gguf");
    relax_gguf::generate::write_model_file(&config, &gguf).expect("writes the model");
    let lib = scratch("tiny-q4_0.so");
    let (g, l) = (gguf.to_str().unwrap(), lib.to_str().unwrap());
    let (code, _, err) =
        tool(relax_driver::translate_main, &["relax-translate", g, "--emit=lib", "--context", "64", "-o", l]);
    assert_eq!(code, 0, "{err}");
    let run = |input: &str, extra: &[&str], logits: &Path| {
        let mut args = vec!["relax-run", input, "--generate", "--prompt", "1,7,3,9", "--max-new-tokens", "6"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--logits-out", logits.to_str().unwrap()]);
        let (code, out, err) = tool(relax_driver::run_main, &args);
        assert_eq!(code, 0, "{err}");
        (out, relax_runtime::npy::read_file(logits).expect("logits").bytes())
    };
    let from_lib = run(l, &["--weights", g], &scratch("lib-logits.npy"));
    let from_jit = run(g, &["--context", "64"], &scratch("jit-logits.npy"));
    assert_eq!(from_lib, from_jit);
    let (code, _, err) = tool(relax_driver::run_main, &["relax-run", l, "--generate", "--prompt", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("`--generate` needs weights"), "{err}");
}
