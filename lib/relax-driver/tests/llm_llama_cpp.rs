//! relax's generation on GGUF models against llama.cpp's (`docs/llm.md`, "Figures"): small
//! random-weight files from `relax_gguf::generate` (Llama and Qwen2; F32 and quantized
//! types), `relax-run FILE.gguf --generate --logits-out` in process, and
//! `utils/llm/llama_cpp_logits.py` (llama-cpp-python, float32 KV cache, flash attention
//! off) fed relax's tokens (teacher forcing), so both score the same sequence.
//!
//! * F32: llama.cpp's own greedy tokens must be relax's, and every logit within
//!   [`F32_TOLERANCE`] of the row's largest magnitude (measured: below 1e-6).
//! * Quantized types: llama.cpp multiplies 8-bit quantized activations (Q8_0 for Q4_0 and
//!   Q8_0 weights, Q8_K for the K-quants), relax float32 ones (which match a float64 numpy
//!   reference, `utils/llm/reference.py`, within 1e-6), so the logits differ by that
//!   rounding: within [`QUANT_TOLERANCE`] of the row's largest magnitude (measured: 1.5e-2
//!   to 2.1e-2 on these files). llama.cpp's own argmax must be relax's token except at a
//!   near tie (relax's logits of the two tokens closer than that tolerance).
//!
//! Needs a python with `llama_cpp` (pip's `llama-cpp-python`, which brings numpy):
//! `$RELAX_LLAMA_CPP_PYTHON`, else the first of `python3`, `/usr/bin/python3` that imports
//! it. Without one, or without the JIT, each test prints `skipped: ...` and passes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use relax_gguf::{FileType, ModelConfig};

/// Relative logit tolerance for F32 models (of the row's largest magnitude).
const F32_TOLERANCE: f32 = 1e-4;
/// Relative logit tolerance for quantized models (of the row's largest magnitude).
const QUANT_TOLERANCE: f32 = 5e-2;
const PROMPT: &str = "5,17,400,3,9";
const NEW_TOKENS: usize = 8;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A python that imports llama_cpp and numpy, or why there is none.
fn python() -> Result<&'static str, String> {
    static FOUND: OnceLock<Result<String, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let env = std::env::var("RELAX_LLAMA_CPP_PYTHON").ok();
            let candidates: Vec<String> = match &env {
                Some(p) => vec![p.clone()],
                None => vec!["python3".into(), "/usr/bin/python3".into()],
            };
            candidates
                .into_iter()
                .find(|py| {
                    Command::new(py)
                        .args(["-c", "import llama_cpp, numpy"])
                        .output()
                        .is_ok_and(|o| o.status.success())
                })
                .ok_or_else(|| match env {
                    Some(p) => format!("$RELAX_LLAMA_CPP_PYTHON ({p}) cannot import llama_cpp and numpy"),
                    None => "no python3 that imports llama_cpp (pip install llama-cpp-python, or set \
                             RELAX_LLAMA_CPP_PYTHON)"
                        .to_string(),
                })
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

fn read_rows(path: &Path) -> Vec<Vec<f32>> {
    let t = relax_runtime::npy::read_file(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
    assert_eq!(t.dtype, relax_ir::DataType::FLOAT32, "{}", path.display());
    let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
    assert_eq!(shape.len(), 2, "{}: logits of shape {shape:?}", path.display());
    let v: Vec<f32> = t.scalars().into_iter().map(|s| s.as_f64() as f32).collect();
    v.chunks(shape[1]).map(<[f32]>::to_vec).collect()
}

fn tokens(s: &str) -> Vec<usize> {
    s.trim().split(',').map(|t| t.trim().parse().unwrap_or_else(|_| panic!("not a token id list: {s:?}"))).collect()
}

/// Generates with relax and with llama.cpp on `config` and compares.
fn check(tag: &str, mut config: ModelConfig, file_type: FileType) {
    let py = match python() {
        Ok(py) => py,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    if !relax_driver::features().contains(&"llvm") {
        eprintln!("skipped: this build has no JIT (the `llvm` feature)");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("llm-llama-cpp");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    config.file_type = file_type;
    let model = dir.join(format!("{tag}.gguf"));
    relax_gguf::generate::write_model_file(&config, &model).expect("write the model");

    // relax
    let relax_logits = dir.join(format!("{tag}-relax.npy"));
    let n = NEW_TOKENS.to_string();
    let args = [
        "relax-run",
        model.to_str().unwrap(),
        "--generate",
        "--prompt",
        PROMPT,
        "--max-new-tokens",
        &n,
        "--logits-out",
        relax_logits.to_str().unwrap(),
    ];
    let mut stdin: &[u8] = &[];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = relax_driver::run_main(args.iter().map(Into::into).collect(), &mut io);
    assert_eq!(code, 0, "{tag}: relax-run failed:\n{}", String::from_utf8_lossy(&err));
    let relax_tokens_text = String::from_utf8(out).expect("utf-8");
    let relax_tokens = tokens(&relax_tokens_text);
    assert_eq!(relax_tokens.len(), NEW_TOKENS);

    // llama.cpp, fed relax's tokens
    let peer_logits = dir.join(format!("{tag}-llama-cpp.npy"));
    let script = repo().join("utils/llm/llama_cpp_logits.py");
    let o = Command::new(py)
        .arg(&script)
        .arg(&model)
        .args(["--prompt", PROMPT, "--max-new-tokens", &n, "--force", relax_tokens_text.trim(), "--logits-out"])
        .arg(&peer_logits)
        .output()
        .expect("run python");
    assert!(o.status.success(), "{tag}: {} failed:\n{}", script.display(), String::from_utf8_lossy(&o.stderr));
    let own = tokens(&String::from_utf8(o.stdout).expect("utf-8"));

    let (a, b) = (read_rows(&relax_logits), read_rows(&peer_logits));
    assert_eq!(a.len(), b.len(), "{tag}: rows of logits");
    let tol = if file_type == FileType::F32 { F32_TOLERANCE } else { QUANT_TOLERANCE };
    let mut worst = 0.0f32;
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(ra.len(), rb.len(), "{tag}: vocabulary sizes");
        let scale = rb.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(f32::MIN_POSITIVE);
        let diff = ra.iter().zip(rb).fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
        worst = worst.max(diff / scale);
        assert!(diff <= tol * scale, "{tag}: row {i}: logits differ by {diff} (scale {scale}; tolerance {tol} relative)");
        let (mine, theirs) = (relax_tokens[i], own[i]);
        if mine != theirs {
            let gap = (ra[mine] - ra[theirs]).abs();
            assert!(
                file_type != FileType::F32 && gap <= tol * scale,
                "{tag}: token {i}: llama.cpp picks {theirs}, relax {mine} (relax's logits {} and {})",
                ra[theirs],
                ra[mine]
            );
        }
    }
    eprintln!("{tag}: tokens {}, llama.cpp's own {:?}; logits within {worst:.2e} relative", relax_tokens_text.trim(), own);
}

#[test]
fn llama_f32() {
    check("llama-f32", ModelConfig::tiny(), FileType::F32);
}

#[test]
fn llama_q8_0() {
    check("llama-q8_0", ModelConfig::tiny(), FileType::Q8_0);
}

#[test]
fn llama_q4_k_m() {
    check("llama-q4_k_m", ModelConfig::tiny(), FileType::Q4_K_M);
}

#[test]
fn qwen2_f32() {
    check("qwen2-f32", ModelConfig::tiny_qwen2(), FileType::F32);
}

#[test]
fn qwen2_q4_0() {
    check("qwen2-q4_0", ModelConfig::tiny_qwen2(), FileType::Q4_0);
}
