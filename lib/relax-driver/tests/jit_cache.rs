//! The JIT's compile cache (`relax_runtime::jit::cache`): a second compile of the same
//! module takes every kernel from the cache and gives the same bits and the same
//! run-time error (message and source line) as compiled code; another name, other
//! options or an edited kernel miss; a damaged entry is compiled again and rewritten.
//! Needs the `llvm` feature.
#![cfg(feature = "llvm")]

use std::path::Path;

use relax_codegen::llvm::Options;
use relax_ir::Module;
use relax_runtime::jit::{JitKernels, JitOptions, compile_with};
use relax_runtime::{Interpreter, Value, inputs};

/// Two kernels, one with an `assert` on its scalar parameter (shared with `library.rs`).
const MODULE: &str = include_str!("support/asserting.rlx");

fn module(text: &str) -> Module {
    let mut m = relax_parser::parse_module(text).expect("parses");
    relax_ir::tir_lower::lower_module(&mut m).expect("lowers");
    m
}

/// `main` on 37 seeded values and `k`: the result, or the error message with its span.
fn call(m: &Module, jk: &JitKernels, k: i64) -> Result<Value, String> {
    let g = m.lookup("main").expect("main");
    let syms = [("n".to_string(), 37), ("k".to_string(), k)];
    let args = inputs::make_inputs(m, g, &[], &syms, Some(7)).expect("inputs");
    let mut it = Interpreter::new(m);
    it.native = Some(jk);
    it.call_global(g, args, relax_ir::Span::NONE).map_err(|e| format!("{} at {:?}", e.message, e.span))
}

/// Compiles `m` with the cache in `dir`: (kernels taken from the cache, result of
/// `k = 3`, error of `k = 12`).
fn run(m: &Module, dir: &Path, opts: &Options) -> (usize, Vec<u8>, String) {
    let jo = JitOptions { cache_dir: Some(dir.to_path_buf()), ..Default::default() };
    compile_with(m, opts, &jo, |jk| {
        assert!(jk.failed.is_empty(), "kernels failed: {:?}", jk.failed);
        assert_eq!(jk.len(), 2);
        let ok = match call(m, jk, 3).expect("k = 3 runs") {
            Value::Tensor(t) => t.bytes(),
            other => panic!("expected a tensor, got {}", other.describe()),
        };
        let err = call(m, jk, 12).expect_err("k = 12 fails the assertion");
        (jk.cached, ok, err)
    })
    .expect("compiles")
}

fn objects(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("the cache exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    v.sort();
    v
}

#[test]
fn cached_kernels_give_the_compiled_bits_and_errors() {
    let dir = std::env::temp_dir().join(format!("relax-jit-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let m = module(MODULE);
    let opts = Options::default();

    let (cached, cold, cold_err) = run(&m, &dir, &opts);
    assert_eq!(cached, 0, "an empty cache has nothing");
    assert!(cold_err.contains("k must be below 10"), "{cold_err}");
    assert_eq!(objects(&dir).len(), 2);

    let (cached, warm, warm_err) = run(&m, &dir, &opts);
    assert_eq!(cached, 2, "every kernel comes from the cache");
    assert_eq!(warm, cold, "cached code gives the compiled bits");
    assert_eq!(warm_err, cold_err, "cached code reports the same error at the same place");

    // Other options are other code.
    let (cached, o1, _) = run(&m, &dir, &Options { opt_level: 1, ..Options::default() });
    assert_eq!(cached, 0);
    assert_eq!(o1, cold);
    assert_eq!(objects(&dir).len(), 4);

    // An edited kernel misses; the other one still hits.
    let edited = module(&MODULE.replace("T.float32(0.5)", "T.float32(1.5)"));
    let (cached, changed, _) = run(&edited, &dir, &opts);
    assert_eq!(cached, 1);
    assert_ne!(changed, cold);

    // A damaged object is a miss, compiled again and stored again.
    for p in objects(&dir) {
        let bytes = std::fs::read(&p).expect("readable");
        std::fs::write(&p, &bytes[..bytes.len() / 2]).expect("writable");
    }
    let (cached, again, _) = run(&m, &dir, &opts);
    assert_eq!(cached, 0, "damaged entries are not used");
    assert_eq!(again, cold);
    let (cached, _, _) = run(&m, &dir, &opts);
    assert_eq!(cached, 2, "damaged entries were rewritten");

    let _ = std::fs::remove_dir_all(&dir);
}
