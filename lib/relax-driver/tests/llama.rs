//! The Llama example against its numpy reference (`docs/llama.md`): the weights come from
//! `examples/llama/make_weights.py`, `examples/llama/reference.py` generates a few tokens,
//! and `relax-run --generate` must give the same tokens with logits within 1e-3, with the
//! interpreter on the model as written and with the JIT after the demo's pipeline.
//!
//! Both scripts need python3 with numpy (`utils/install-deps.sh` installs
//! `python3-numpy`); without it the tests say so and pass.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A python with numpy: `python3` on `PATH` first, then the system's.
fn python() -> Option<&'static str> {
    static FOUND: OnceLock<Option<&'static str>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        ["python3", "/usr/bin/python3"]
            .into_iter()
            .find(|py| Command::new(py).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()))
    })
}

/// The scratch folder with the weights and the reference's output, made once.
struct Fixture {
    dir: PathBuf,
    tokens: String,
    logits: Vec<f32>,
}

const PROMPT: &str = "5,17,400";
const NEW_TOKENS: &str = "4";

fn fixture() -> Option<&'static Fixture> {
    static FIX: OnceLock<Option<Fixture>> = OnceLock::new();
    FIX.get_or_init(|| {
        let Some(py) = python() else {
            eprintln!("skipping the Llama reference test: no python3 with numpy (utils/install-deps.sh installs it)");
            return None;
        };
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("llama-test");
        let weights = dir.join("weights");
        let run = |args: &[&str]| {
            let out = Command::new(py).args(args).output().expect("run python");
            assert!(out.status.success(), "python3 {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).expect("utf-8")
        };
        let ex = repo().join("examples/llama");
        run(&[ex.join("make_weights.py").to_str().unwrap(), weights.to_str().unwrap()]);
        let ref_logits = dir.join("reference-logits.npy");
        let tokens = run(&[
            ex.join("reference.py").to_str().unwrap(),
            "--weights-dir",
            weights.to_str().unwrap(),
            "--prompt",
            PROMPT,
            "--max-new-tokens",
            NEW_TOKENS,
            "--logits-out",
            ref_logits.to_str().unwrap(),
        ]);
        let logits = read_f32(&ref_logits);
        Some(Fixture { dir, tokens: tokens.trim().to_string(), logits })
    })
    .as_ref()
}

fn read_f32(path: &Path) -> Vec<f32> {
    let t = relax_runtime::npy::read_file(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
    assert_eq!(t.dtype, relax_ir::DataType::FLOAT32);
    t.scalars().into_iter().map(|s| s.as_f64() as f32).collect()
}

fn tool(main: relax_driver::ToolMain, args: &[&str]) -> (i32, String, String) {
    let mut stdin: &[u8] = &[];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = main(args.iter().map(Into::into).collect(), &mut io);
    (code, String::from_utf8(out).expect("utf-8"), String::from_utf8(err).expect("utf-8"))
}

/// Generates with `relax-run` on `model` and compares with the reference.
fn check_against_reference(fix: &Fixture, model: &Path, extra: &[&str], tag: &str) {
    let logits_path = fix.dir.join(format!("{tag}-logits.npy"));
    let weights = fix.dir.join("weights");
    let mut args = vec![
        "relax-run",
        model.to_str().unwrap(),
        "--generate",
        "--weights-dir",
        weights.to_str().unwrap(),
        "--prompt",
        PROMPT,
        "--max-new-tokens",
        NEW_TOKENS,
        "--logits-out",
        logits_path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = tool(relax_driver::run_main, &args);
    assert_eq!(code, 0, "relax-run failed:\n{err}");
    assert_eq!(out.trim(), fix.tokens, "{tag}: the tokens differ from the numpy reference");
    let got = read_f32(&logits_path);
    assert_eq!(got.len(), fix.logits.len(), "{tag}: logits of another size");
    let worst = got.iter().zip(&fix.logits).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 1e-3, "{tag}: logits differ from the numpy reference by up to {worst}");
}

#[test]
fn interpreter_matches_numpy() {
    let Some(fix) = fixture() else { return };
    check_against_reference(fix, &repo().join("examples/llama/model.rlx"), &[], "interp");
}

#[test]
fn jit_after_the_demo_pipeline_matches_numpy() {
    if !relax_driver::features().contains(&"llvm") {
        eprintln!("skipping: this build has no JIT (the `llvm` feature)");
        return;
    }
    let Some(fix) = fixture() else { return };
    let compiled = fix.dir.join("model.opt.rlx");
    let model = repo().join("examples/llama/model.rlx");
    let mut args = vec!["relax-opt", model.to_str().unwrap()];
    args.extend(DEMO_PASSES);
    args.extend(["-o", compiled.to_str().unwrap()]);
    let (code, _, err) = tool(relax_driver::opt_main, &args);
    assert_eq!(code, 0, "relax-opt failed:\n{err}");
    check_against_reference(fix, &compiled, &["--engine", "jit"], "jit");
}

/// The passes of `utils/demo.sh`.
const DEMO_PASSES: &[&str] = &[
    "--legalize-ops",
    "--annotate-tir-op-pattern",
    "--fold-constant",
    "--fuse-ops",
    "--fuse-tir",
    "--schedule-cpu",
    "--plan-memory",
    "--lower-alloc-tensor",
    "--kill-after-last-use",
];
