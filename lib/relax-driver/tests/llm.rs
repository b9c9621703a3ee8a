//! GGUF models end to end (`docs/llm.md`): small random-weight files of every supported
//! tensor type and both architectures, written by relax-gguf's generator, imported and
//! run by `relax-run FILE.gguf --generate` (the JIT after the LLM pipeline), against
//! `utils/llm/reference.py`, a numpy implementation of the same model that reads the file
//! with gguf-py: the same greedy tokens and logits within 1e-3. Each quantized type's
//! logits are also compared with the float32 file's of the same seed, within the
//! tolerances `docs/llm.md` records.
//!
//! The reference needs a python3 with numpy and gguf-py (`utils/install-deps.sh` puts
//! gguf-py in `~/.cache/relax-tools/python`); without one the comparison says it is
//! skipped, and the rest still runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use relax_gguf::{Architecture, FileType, ModelConfig, RopeScaling};

const PROMPT: &str = "1,7,42,300,5,99";
const NEW_TOKENS: usize = 5;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("llm-test");
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `~/.cache/relax-tools/python`, where install-deps puts gguf-py.
fn tools_python_dir() -> PathBuf {
    match std::env::var_os("RELAX_TOOLS_DIR") {
        Some(d) => PathBuf::from(d).join("python"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/relax-tools/python"),
    }
}

fn python_command(py: &str) -> Command {
    let mut c = Command::new(py);
    let mut path = std::ffi::OsString::from(tools_python_dir());
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        path.push(":");
        path.push(old);
    }
    c.env("PYTHONPATH", path);
    c
}

/// A python3 that imports numpy and gguf.
fn python() -> Option<&'static str> {
    static FOUND: OnceLock<Option<&'static str>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let found = ["python3", "/usr/bin/python3"].into_iter().find(|py| {
            python_command(py).args(["-c", "import numpy, gguf"]).output().is_ok_and(|o| o.status.success())
        });
        if found.is_none() {
            eprintln!("llm.rs: the numpy reference comparison is skipped: no python3 with numpy and gguf-py");
        }
        found
    })
}

fn tool(main: relax_driver::ToolMain, args: &[&str]) -> (i32, String, String) {
    let mut stdin: &[u8] = &[];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = {
        let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
        main(args.iter().map(Into::into).collect(), &mut io)
    };
    (status, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

fn read_f32(path: &Path) -> Vec<f32> {
    let t = relax_runtime::npy::read_file(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
    t.scalars().into_iter().map(|s| s.as_f64() as f32).collect()
}

/// Writes the model of `config` as `NAME.gguf` in the scratch folder.
fn model(name: &str, config: &ModelConfig) -> PathBuf {
    let path = scratch().join(format!("{name}.gguf"));
    relax_gguf::generate::write_model_file(config, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
    path
}

/// `relax-run FILE --generate`: the tokens and the logits of each new token.
fn relax_generate(path: &Path, extra: &[&str]) -> (String, Vec<f32>) {
    let logits = path.with_extension("relax.npy");
    let n = NEW_TOKENS.to_string();
    let mut args = vec![
        "relax-run",
        path.to_str().unwrap(),
        "--generate",
        "--prompt",
        PROMPT,
        "--max-new-tokens",
        &n,
        "--logits-out",
        logits.to_str().unwrap(),
    ];
    args.extend(extra);
    let (status, out, err) = tool(relax_driver::run_main, &args);
    assert_eq!(status, 0, "relax-run {}: {err}", path.display());
    (out.trim().to_string(), read_f32(&logits))
}

/// The numpy reference on the same file, with a KV cache of `cache_type`.
fn reference(py: &str, path: &Path, cache_type: &str) -> (String, Vec<f32>) {
    let logits = path.with_extension("ref.npy");
    let out = python_command(py)
        .arg(repo().join("utils/llm/reference.py"))
        .arg(path)
        .args(["--prompt", PROMPT, "--max-new-tokens", &NEW_TOKENS.to_string(), "--cache-type", cache_type])
        // relax's LLM pipeline rounds the activations of Q4_0 / Q8_0 matmuls of one row
        // to 8 bits (`quantize-activations`); the reference does the same.
        .arg("--q8-activations")
        .arg("--logits-out")
        .arg(&logits)
        .output()
        .expect("run the reference");
    assert!(out.status.success(), "reference.py {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).trim().to_string(), read_f32(&logits))
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "logit counts differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn tiny(arch: Architecture, file_type: FileType, seed: u64) -> ModelConfig {
    let base = match arch {
        Architecture::Llama => ModelConfig::tiny(),
        Architecture::Qwen2 => ModelConfig::tiny_qwen2(),
    };
    ModelConfig { file_type, seed, ..base }
}

/// Every tensor type, both architectures and both kinds of RoPE scaling against the
/// numpy reference; and the llama files of every type, which share a seed (so the same
/// underlying weights), against the float32 file: the relative RMS error of the prompt's
/// logits (centered) within the tolerances of `docs/llm.md`. The KV cache is float16 (the
/// default) but for one float32 case, on both sides.
#[test]
fn gguf_models_match_the_numpy_reference() {
    let llama = |ty| tiny(Architecture::Llama, ty, 11);
    let mut cases: Vec<(&str, ModelConfig, Option<f64>)> = vec![
        ("llama-f32", llama(FileType::F32), None),
        ("llama-f16", llama(FileType::F16), Some(0.005)),
        ("llama-bf16", llama(FileType::BF16), Some(0.02)),
        ("llama-q8_0", llama(FileType::Q8_0), Some(0.05)),
        ("llama-q6_k", llama(FileType::Q6_K), Some(0.1)),
        ("llama-q4_0", llama(FileType::Q4_0), Some(0.3)),
        ("llama-q4_k_m", llama(FileType::Q4_K_M), Some(0.3)),
        ("qwen2-q8_0", tiny(Architecture::Qwen2, FileType::Q8_0, 12), None),
    ];
    let mut linear = tiny(Architecture::Llama, FileType::F32, 13);
    linear.rope_scaling = Some(RopeScaling::Linear { factor: 2.0 });
    cases.push(("llama-linear-rope", linear, None));
    let mut llama3 = tiny(Architecture::Llama, FileType::Q6_K, 14);
    llama3.rope_scaling =
        Some(RopeScaling::Llama3 { factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_context: 64 });
    cases.push(("llama3-rope-q6_k", llama3, None));
    cases.push(("llama-f32-cache-f32", llama(FileType::F32), None));
    let mut float_logits: Option<Vec<f32>> = None;
    for (name, config, tolerance) in &cases {
        let path = model(name, config);
        let cache_type = if name.ends_with("cache-f32") { "f32" } else { "f16" };
        let (tokens, logits) = relax_generate(&path, &["--cache-type", cache_type]);
        assert_eq!(tokens.split(',').count(), NEW_TOKENS, "{name}: {tokens}");
        let vocab = logits.len() / NEW_TOKENS;
        match (tolerance, &float_logits) {
            (None, None) => float_logits = Some(logits[..vocab].to_vec()),
            (Some(tol), Some(f)) => {
                let e = rel_rms(&logits[..vocab], f);
                assert!(e < *tol, "{name}: relative RMS error {e:.4} of the prompt's logits against F32, above {tol}");
            }
            _ => {}
        }
        let Some(py) = python() else { continue };
        let (ref_tokens, ref_logits) = reference(py, &path, cache_type);
        assert_eq!(tokens, ref_tokens, "{name}: greedy tokens differ from the reference");
        let d = max_abs_diff(&logits, &ref_logits);
        assert!(d < 1e-3, "{name}: logits differ from the reference by {d}");
    }
}

/// The relative RMS difference of two logit rows, each centered (a shift of all logits
/// changes no probability).
fn rel_rms(x: &[f32], f: &[f32]) -> f64 {
    let mean = |v: &[f32]| v.iter().map(|&a| f64::from(a)).sum::<f64>() / v.len() as f64;
    let (mx, mf) = (mean(x), mean(f));
    let num: f64 = x.iter().zip(f).map(|(&a, &b)| ((f64::from(a) - mx) - (f64::from(b) - mf)).powi(2)).sum();
    let den: f64 = f.iter().map(|&b| (f64::from(b) - mf).powi(2)).sum();
    (num / den).sqrt()
}

/// The imported module printed by `relax-translate --import-gguf`, run with `--weights`,
/// gives the same tokens as the GGUF input; the interpreter (the oracle, which runs the
/// module as written, unfused) agrees with the JIT on the prompt.
#[test]
fn imported_text_and_weights_flag_agree() {
    for ty in [FileType::Q8_0, FileType::F32] {
        let mut config = tiny(Architecture::Llama, ty, 31);
        config.n_layers = 1;
        let path = model(&format!("import-{ty:?}"), &config);
        let rlx = scratch().join(format!("import-{ty:?}.rlx"));
        let (status, _, err) = tool(
            relax_driver::translate_main,
            &[
                "relax-translate",
                "--import-gguf",
                path.to_str().unwrap(),
                "--context",
                "32",
                "-o",
                rlx.to_str().unwrap(),
            ],
        );
        assert_eq!(status, 0, "{err}");
        let text = std::fs::read_to_string(&rlx).unwrap();
        assert!(text.contains("def prefill(") && text.contains("def decode(") && text.contains("blk_0_attn_q_weight"));
        let (direct, direct_logits) = relax_generate(&path, &["--context", "32"]);
        if ty == FileType::Q8_0 {
            let (via_text, _) = relax_generate(&rlx, &["--weights", path.to_str().unwrap(), "--engine", "jit"]);
            assert_eq!(direct, via_text);
            continue;
        }
        // The interpreter on the prompt (it runs every kernel element by element).
        let logits = scratch().join("interp.npy");
        let p = path.to_str().unwrap();
        let args = [
            "relax-run",
            rlx.to_str().unwrap(),
            "--weights",
            p,
            "--generate",
            "--prompt",
            PROMPT,
            "--max-new-tokens",
            "1",
        ];
        let (status, out, err) =
            tool(relax_driver::run_main, &[&args[..], &["--logits-out", logits.to_str().unwrap()]].concat());
        assert_eq!(status, 0, "{err}");
        assert!(direct.starts_with(out.trim()), "interpreter {out} vs JIT {direct}");
        let interp = read_f32(&logits);
        let d = max_abs_diff(&interp, &direct_logits[..interp.len()]);
        assert!(d < 1e-4, "interpreter and JIT logits differ by {d}");
    }
}

/// Text in, text out with the file's vocabulary: the prompt is tokenized as the
/// tokenizer does (so `--prompt-text` and `--prompt` with those ids agree), and the
/// output is text.
#[test]
fn text_prompts_use_the_files_vocabulary() {
    for (name, arch) in [("text-spm", Architecture::Llama), ("text-bpe", Architecture::Qwen2)] {
        let mut config = tiny(arch, FileType::Q8_0, 41);
        config.n_layers = 1;
        let path = model(name, &config);
        let file = relax_gguf::GgufFile::open(&path).unwrap();
        let tok = relax_llm::vocab::tokenizer_from_gguf(file.metadata()).unwrap();
        let text = "Hello world, this is relax.";
        let ids: Vec<String> = tok.encode(text, true, false).unwrap().iter().map(u32::to_string).collect();
        let p = path.to_str().unwrap();
        let (s1, out_text, err) = tool(
            relax_driver::run_main,
            &["relax-run", p, "--generate", "--prompt-text", text, "--max-new-tokens", "6", "--ignore-eos"],
        );
        assert_eq!(s1, 0, "{err}");
        let joined = ids.join(",");
        let (s2, out_ids, err) =
            tool(relax_driver::run_main, &["relax-run", p, "--generate", "--prompt", &joined, "--max-new-tokens", "6"]);
        assert_eq!(s2, 0, "{err}");
        let generated: Vec<u32> = out_ids.trim().split(',').map(|t| t.parse().unwrap()).collect();
        assert_eq!(out_text.trim_end_matches('\n'), tok.decode(&generated).unwrap(), "{name}");
    }
}

/// Bad files and flags: an error naming what is wrong, exit status 1, no panic.
#[test]
fn malformed_models_are_errors() {
    let good = model("good", &ModelConfig { n_layers: 1, ..tiny(Architecture::Llama, FileType::Q8_0, 51) });
    let bytes = std::fs::read(&good).unwrap();
    let bad = |name: &str, data: &[u8]| {
        let p = scratch().join(name);
        std::fs::write(&p, data).unwrap();
        p
    };
    let run = |p: &Path, extra: &[&str]| {
        let mut args = vec!["relax-run", p.to_str().unwrap(), "--generate", "--prompt", "1,2"];
        args.extend(extra);
        tool(relax_driver::run_main, &args)
    };
    // Truncated in the tensor data: the GGUF reader's check.
    let (s, _, err) = run(&bad("truncated.gguf", &bytes[..bytes.len() - 100]), &[]);
    assert_eq!(s, 1);
    assert!(err.contains("error:") && !err.contains("panicked"), "{err}");
    // Unknown architecture, with the nearest known one.
    let arch = bytes.windows(5).position(|w| w == b"llama").expect("the architecture string");
    let mut other = bytes.clone();
    other[arch..arch + 5].copy_from_slice(b"llamb");
    let (s, _, err) = run(&bad("arch.gguf", &other), &[]);
    assert_eq!(s, 1);
    assert!(err.contains("`llamb`") && err.contains("did you mean `llama`"), "{err}");
    // A context longer than the model's.
    let (s, _, err) = run(&good, &["--context", "100000"]);
    assert_eq!(s, 1);
    assert!(err.contains("longer than the model's"), "{err}");
    // A cache type that is not one, with the nearest.
    let (s, _, err) = run(&good, &["--cache-type", "f61"]);
    assert_eq!(s, 1);
    assert!(err.contains("--cache-type") && err.contains("`f61`") && err.contains("did you mean `f16`"), "{err}");
    // A missing tensor: written without the last layer's down projection.
    let cfg = ModelConfig { n_layers: 1, ..tiny(Architecture::Llama, FileType::F32, 52) };
    let full = model("full", &cfg);
    let f = relax_gguf::GgufFile::open(&full).unwrap();
    let mut w = relax_gguf::GgufWriter::new();
    for (k, v) in f.metadata().iter() {
        w.add(k, v.clone()).unwrap();
    }
    for t in f.tensors().iter().filter(|t| t.name != "blk.0.ffn_down.weight") {
        w.add_tensor(&t.name, &t.dims, t.ggml_type, f.data(t).to_vec()).unwrap();
    }
    let missing = scratch().join("missing.gguf");
    w.write_file(&missing).unwrap();
    let (s, _, err) = run(&missing, &[]);
    assert_eq!(s, 1);
    assert!(err.contains("blk.0.ffn_down.weight"), "{err}");
    // A prompt past the context.
    let long: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let (s, _, err) = tool(
        relax_driver::run_main,
        &["relax-run", good.to_str().unwrap(), "--context", "32", "--generate", "--prompt", &long.join(",")],
    );
    assert_eq!(s, 1);
    assert!(err.contains("seq_len") || err.contains("context"), "{err}");
    // Text without a vocabulary.
    let (s, _, err) = tool(relax_driver::run_main, &["relax-run", "/dev/null", "--generate", "--prompt-text", "hi"]);
    assert_eq!(s, 1);
    assert!(err.contains("--prompt-text") || err.contains("error"), "{err}");
}

/// A prompt run in chunks (`prefill` on the first, `extend` on each next, `--ubatch`)
/// gives the tokens and the logits of one `prefill` over the whole prompt.
#[test]
fn chunked_prompts_match_one_prefill() {
    let path = model("chunked", &tiny(Architecture::Llama, FileType::Q8_0, 61));
    let prompt: Vec<String> = (1..=40).map(|i| (i * 7 % 500).to_string()).collect();
    let prompt = prompt.join(",");
    let run = |extra: &[&str]| {
        let logits = path.with_extension(format!("u{}.npy", extra.len()));
        let mut args = vec![
            "relax-run",
            path.to_str().unwrap(),
            "--generate",
            "--prompt",
            &prompt,
            "--max-new-tokens",
            "4",
            "--context",
            "64",
            "--logits-out",
            logits.to_str().unwrap(),
        ];
        args.extend(extra);
        let (status, out, err) = tool(relax_driver::run_main, &args);
        assert_eq!(status, 0, "{err}");
        (out.trim().to_string(), read_f32(&logits))
    };
    let (whole, whole_logits) = run(&[]);
    let (chunked, chunked_logits) = run(&["--ubatch", "7"]);
    assert_eq!(whole, chunked);
    let d = max_abs_diff(&whole_logits, &chunked_logits);
    assert!(d < 1e-4, "chunked logits differ by {d}");
    let (s, _, err) = tool(
        relax_driver::run_main,
        &["relax-run", path.to_str().unwrap(), "--generate", "--prompt", "1", "--ubatch", "0"],
    );
    assert_eq!(s, 1);
    assert!(err.contains("--ubatch"), "{err}");
}
