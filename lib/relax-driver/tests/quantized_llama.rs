//! The Llama example quantized (`docs/llama.md`, "Running examples/llama quantized"):
//! `relax-opt --quantize-weights=TYPE` then the demo's pipeline with
//! `fuse-ops{matmul-operands=true}`, and `relax-run --generate --weights-dir` on the
//! float32 weights of `examples/llama/make_weights.py`, quantized on load. Against the
//! float32 model compiled the same way, each type must give the same tokens, and logits
//! within the documented tolerance at every step: the relative L2 error
//! `|q - f| / |f|` of the step's logits, and the largest absolute difference.
//!
//! Also: the packed files of `--convert-weights` give the same bits as quantizing on
//! load, and the interpreter runs the quantized model as written (one token).
//!
//! Needs python3 with numpy (the weights) and the JIT; without them the tests say so and
//! pass.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Per type: the largest relative L2 error of a step's logits, and the largest absolute
/// difference. Measured (docs/llama.md), over the steps whose inputs agree of 16 tokens
/// from three prompts: q8_0 0.014 / 0.059, q4_0 0.190 / 0.790, q4_k 0.160 / 0.600,
/// q6_k 0.040 / 0.161.
const TOLERANCE: &[(&str, f32, f32)] =
    &[("q8_0", 0.02, 0.1), ("q4_0", 0.25, 1.0), ("q4_k", 0.25, 1.0), ("q6_k", 0.06, 0.3)];

const PROMPT: &str = "5,17,400";
const NEW_TOKENS: &str = "4";

/// The demo's passes (`utils/demo.sh`), with decode and transpose fused into the matmul.
const PASSES: &[&str] = &[
    "--legalize-ops",
    "--annotate-tir-op-pattern",
    "--fold-constant",
    "--fuse-ops=matmul-operands=true",
    "--fuse-tir",
    "--schedule-cpu",
    "--plan-memory",
    "--lower-alloc-tensor",
    "--kill-after-last-use",
];

fn tool(main: relax_driver::ToolMain, args: &[&str]) -> (i32, String, String) {
    let mut stdin: &[u8] = &[];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = main(args.iter().map(Into::into).collect(), &mut io);
    (code, String::from_utf8(out).expect("utf-8"), String::from_utf8(err).expect("utf-8"))
}

fn read_f32(path: &Path) -> Vec<f32> {
    let t = relax_runtime::npy::read_file(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
    assert_eq!(t.dtype, relax_ir::DataType::FLOAT32);
    t.scalars().into_iter().map(|s| s.as_f64() as f32).collect()
}

/// Tokens and logits of one generation.
struct Run {
    tokens: String,
    logits: Vec<f32>,
}

struct Fixture {
    dir: PathBuf,
    weights: PathBuf,
    float: Run,
}

/// Compiles `model` (after `extra` passes, then [`PASSES`]) to `DIR/tag.rlx`.
fn compile(dir: &Path, extra: &[&str], tag: &str) -> PathBuf {
    let out = dir.join(format!("{tag}.rlx"));
    let model = repo().join("examples/llama/model.rlx");
    let mut args = vec!["relax-opt", model.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend_from_slice(PASSES);
    args.extend(["-o", out.to_str().unwrap()]);
    let (code, _, err) = tool(relax_driver::opt_main, &args);
    assert_eq!(code, 0, "relax-opt {tag} failed:\n{err}");
    out
}

/// `relax-run --generate` on `model` with the weights of `weights`.
fn generate(model: &Path, weights: &Path, tokens: &str, engine: &str, tag: &str, dir: &Path) -> Run {
    let logits = dir.join(format!("{tag}-logits.npy"));
    let args = [
        "relax-run",
        model.to_str().unwrap(),
        "--engine",
        engine,
        "--generate",
        "--weights-dir",
        weights.to_str().unwrap(),
        "--prompt",
        PROMPT,
        "--max-new-tokens",
        tokens,
        "--logits-out",
        logits.to_str().unwrap(),
    ];
    let (code, out, err) = tool(relax_driver::run_main, &args);
    assert_eq!(code, 0, "relax-run {tag} failed:\n{err}");
    Run { tokens: out.trim().to_string(), logits: read_f32(&logits) }
}

fn fixture() -> Option<&'static Fixture> {
    static FIX: OnceLock<Option<Fixture>> = OnceLock::new();
    FIX.get_or_init(|| {
        if !relax_driver::features().contains(&"llvm") {
            eprintln!("skipping: this build has no JIT (the `llvm` feature)");
            return None;
        }
        let py = ["python3", "/usr/bin/python3"]
            .into_iter()
            .find(|py| Command::new(py).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()));
        let Some(py) = py else {
            eprintln!("skipping the quantized Llama test: no python3 with numpy (utils/install-deps.sh installs it)");
            return None;
        };
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("quantized-llama");
        let weights = dir.join("weights");
        let script = repo().join("examples/llama/make_weights.py");
        let out =
            Command::new(py).args([script.to_str().unwrap(), weights.to_str().unwrap()]).output().expect("python");
        assert!(out.status.success(), "make_weights.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let model = compile(&dir, &[], "float32");
        let float = generate(&model, &weights, NEW_TOKENS, "jit", "float32", &dir);
        Some(Fixture { dir, weights, float })
    })
    .as_ref()
}

/// (largest relative L2 error of a step, largest absolute difference).
fn errors(q: &[f32], f: &[f32], steps: usize) -> (f32, f32) {
    assert_eq!(q.len(), f.len(), "logits of another size");
    let vocab = f.len() / steps;
    let mut rel = 0f32;
    let mut abs = 0f32;
    for (qs, fs) in q.chunks(vocab).zip(f.chunks(vocab)) {
        let d: f32 = qs.iter().zip(fs).map(|(a, b)| (a - b) * (a - b)).sum::<f32>().sqrt();
        let n: f32 = fs.iter().map(|b| b * b).sum::<f32>().sqrt();
        rel = rel.max(d / n);
        abs = qs.iter().zip(fs).map(|(a, b)| (a - b).abs()).fold(abs, f32::max);
    }
    (rel, abs)
}

fn check_type(ty: &str) -> Option<(&'static Fixture, PathBuf, Run)> {
    let fix = fixture()?;
    let flag = format!("--quantize-weights={ty}");
    let model = compile(&fix.dir, &[&flag], ty);
    let q = generate(&model, &fix.weights, NEW_TOKENS, "jit", ty, &fix.dir);
    assert_eq!(q.tokens, fix.float.tokens, "{ty}: other tokens than the float32 model");
    let steps: usize = NEW_TOKENS.parse().unwrap();
    let (rel, abs) = errors(&q.logits, &fix.float.logits, steps);
    let &(_, max_rel, max_abs) = TOLERANCE.iter().find(|t| t.0 == ty).expect("a tolerance");
    eprintln!("{ty}: logits within {rel:.4} (relative L2) and {abs:.4} (absolute) of float32");
    assert!(rel <= max_rel, "{ty}: logits {rel} (relative L2) from float32, above {max_rel}");
    assert!(abs <= max_abs, "{ty}: logits {abs} (absolute) from float32, above {max_abs}");
    // Quantizing is not a no-op.
    assert!(rel > 1e-4, "{ty}: logits equal to float32's ({rel}): were the weights quantized?");
    Some((fix, model, q))
}

#[test]
fn q8_0_is_close_to_float32() {
    check_type("q8_0");
}

#[test]
fn q4_0_is_close_to_float32_and_runs_in_the_interpreter() {
    let Some((fix, _, q)) = check_type("q4_0") else { return };
    // The interpreter on the model as `quantize-weights` leaves it (no other pass): the
    // first token, with logits close to the JIT's (which sums in another order).
    let model = fix.dir.join("q4_0-plain.rlx");
    let src = repo().join("examples/llama/model.rlx");
    let args = ["relax-opt", src.to_str().unwrap(), "--quantize-weights=q4_0", "-o", model.to_str().unwrap()];
    let (code, _, err) = tool(relax_driver::opt_main, &args);
    assert_eq!(code, 0, "{err}");
    let interp = generate(&model, &fix.weights, "1", "interp", "q4_0-interp", &fix.dir);
    assert!(q.tokens.starts_with(&interp.tokens), "interpreter: {} vs JIT {}", interp.tokens, q.tokens);
    let vocab = interp.logits.len();
    let (rel, _) = errors(&interp.logits, &q.logits[..vocab], 1);
    assert!(rel < 1e-5, "interpreter and JIT logits differ by {rel} (relative L2)");
}

#[test]
fn q4_k_is_close_to_float32_and_converted_files_give_the_same_bits() {
    let Some((fix, model, q)) = check_type("q4_k") else { return };
    let packed = fix.dir.join("q4_k-packed");
    let args = [
        "relax-run",
        model.to_str().unwrap(),
        "--weights-dir",
        fix.weights.to_str().unwrap(),
        "--convert-weights",
        packed.to_str().unwrap(),
    ];
    let (code, _, err) = tool(relax_driver::run_main, &args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 15 weights"), "{err}");
    assert!(err.contains("9 quantized"), "{err}");
    let from_files = generate(&model, &packed, NEW_TOKENS, "jit", "q4_k-packed", &fix.dir);
    assert_eq!(from_files.tokens, q.tokens);
    let same = from_files.logits.iter().zip(&q.logits).all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same, "packed files and quantizing on load give different logits");
}

#[test]
fn q6_k_is_close_to_float32() {
    check_type("q6_k");
}
