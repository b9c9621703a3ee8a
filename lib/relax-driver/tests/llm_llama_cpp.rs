//! relax's generation on GGUF models against llama.cpp's (`docs/llm.md`, "Against
//! llama.cpp"): small random-weight files from `relax_gguf::generate` (Llama and Qwen2;
//! F32 and quantized types), `relax-run FILE.gguf --generate --logits-out` in process, and
//! `utils/llm/llama_cpp_logits.py` (llama-cpp-python, flash attention off) on the same
//! file, both with a float32 KV cache (`--cache-type f32`).
//!
//! * F32 (from `--prompt-text`, below): llama.cpp's greedy tokens must be relax's, and
//!   every logit within [`F32_TOLERANCE`] of the row's largest magnitude.
//! * Quantized types: llama.cpp multiplies 8-bit quantized activations (Q8_0 for Q4_0 and
//!   Q8_0 weights, Q8_K for the K-quants), relax float32 ones (which match a float64 numpy
//!   reference, `utils/llm/reference.py`, within 1e-6), so the logits differ by that
//!   rounding: llama.cpp is fed relax's tokens (teacher forcing, so both score the same
//!   sequence), every logit must be within [`QUANT_TOLERANCE`] of the row's largest
//!   magnitude, and llama.cpp's own argmax must be relax's token except at a near tie
//!   (relax's logits of the two tokens closer than that tolerance).
//! * The prompt as text: `--prompt-text` on F32 files of both architectures (the
//!   generator's SentencePiece and byte-level BPE vocabularies) gives llama.cpp's logits,
//!   and the ids relax-run tokenizes a set of sentences to (its own call,
//!   `relax_llm::vocab::tokenizer_from_gguf` then `encode(text, true, false)`) are
//!   llama.cpp's (`Llama.tokenize(text, add_bos=True, special=False)`). The tokenizer
//!   itself is compared with llama.cpp far more widely by relax-tokenizer's tests.
//!
//! Needs a python with `llama_cpp` (pip's `llama-cpp-python`, which brings numpy):
//! `$RELAX_LLAMA_CPP_PYTHON`, else the first of `python3`, `/usr/bin/python3` that imports
//! it. Without one, or without the JIT, each test says on stderr that it is skipped and
//! why, and passes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use relax_gguf::{FileType, ModelConfig};

/// Relative logit tolerance for F32 models (of the row's largest magnitude).
const F32_TOLERANCE: f32 = 1e-3;
/// Relative logit tolerance for quantized models (of the row's largest magnitude).
const QUANT_TOLERANCE: f32 = 5e-2;
const PROMPT: &str = "5,17,400,3,9";
const PROMPT_TEXT: &str = "Once upon a time, in a café";
const NEW_TOKENS: usize = 6;

/// Sentences whose ids relax-run and llama.cpp must agree on: spaces, punctuation,
/// digits, accents, CJK, emoji (byte fallback), control characters, special-token text.
const SENTENCES: &[&str] = &[
    "Once upon a time",
    "Hello, world! How are you?",
    "  two leading spaces and trailing  ",
    "numbers 1234567 and 3.14159",
    "naïve café, Zürich — 東京 🙂",
    "tabs\tand\nnew lines\n\n",
    "<s> literal </s> special text",
    "a",
];

/// Says something on stderr even when the test passes (libtest captures `eprintln!`).
fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script() -> PathBuf {
    repo().join("utils/llm/llama_cpp_logits.py")
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
                    Command::new(py).args(["-c", "import llama_cpp, numpy"]).output().is_ok_and(|o| o.status.success())
                })
                .ok_or_else(|| match env {
                    Some(p) => format!("$RELAX_LLAMA_CPP_PYTHON ({p}) cannot import llama_cpp and numpy"),
                    None => "no python3 that imports llama_cpp (pip install llama-cpp-python==0.3.36, or set \
                             RELAX_LLAMA_CPP_PYTHON)"
                        .to_string(),
                })
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// The python to run llama.cpp with, or `None` after saying why the test is skipped.
fn peer(test: &str) -> Option<&'static str> {
    if !relax_driver::features().contains(&"llvm") {
        say(&format!("{test}: skipped: this build has no JIT (the `llvm` feature)"));
        return None;
    }
    match python() {
        Ok(py) => Some(py),
        Err(why) => {
            say(&format!("{test}: skipped: {why}"));
            None
        }
    }
}

fn model(tag: &str, mut config: ModelConfig, file_type: FileType) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("llm-llama-cpp");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    config.file_type = file_type;
    let path = dir.join(format!("{tag}.gguf"));
    relax_gguf::generate::write_model_file(&config, &path).unwrap_or_else(|e| panic!("{tag}: {e}"));
    path
}

fn read_rows(path: &Path) -> Vec<Vec<f32>> {
    let t = relax_runtime::npy::read_file(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
    assert_eq!(t.dtype, relax_ir::DataType::FLOAT32, "{}", path.display());
    let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
    assert_eq!(shape.len(), 2, "{}: logits of shape {shape:?}", path.display());
    let v: Vec<f32> = t.scalars().into_iter().map(|s| s.as_f64() as f32).collect();
    v.chunks(shape[1]).map(<[f32]>::to_vec).collect()
}

fn ids(s: &str) -> Vec<usize> {
    s.trim().split(',').map(|t| t.trim().parse().unwrap_or_else(|_| panic!("not a token id list: {s:?}"))).collect()
}

/// How the prompt is given to both sides.
#[derive(Clone, Copy)]
enum Prompt {
    /// Token ids; llama.cpp is fed relax's tokens.
    Ids(&'static str),
    /// Text, tokenized by each side; each side generates greedily on its own.
    Text(&'static str),
}

/// `relax-run FILE --generate`, in process: stdout and the logits' rows.
fn relax(tag: &str, model: &Path, prompt: Prompt) -> (String, Vec<Vec<f32>>) {
    let logits = model.with_extension("relax.npy");
    let n = NEW_TOKENS.to_string();
    // A float32 KV cache, as llama_cpp_logits.py gives llama.cpp: no rounding to f16 on
    // either side, so F32 files can be held to 1e-3.
    let mut args =
        vec!["relax-run", model.to_str().unwrap(), "--generate", "--max-new-tokens", &n, "--cache-type", "f32"];
    match prompt {
        Prompt::Ids(p) => args.extend(["--prompt", p]),
        Prompt::Text(t) => args.extend(["--prompt-text", t, "--ignore-eos"]),
    }
    args.extend(["--logits-out", logits.to_str().unwrap()]);
    let mut stdin: &[u8] = &[];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
    let code = relax_driver::run_main(args.iter().map(Into::into).collect(), &mut io);
    assert_eq!(code, 0, "{tag}: relax-run failed:\n{}", String::from_utf8_lossy(&err));
    let rows = read_rows(&logits);
    assert_eq!(rows.len(), NEW_TOKENS, "{tag}: relax-run's rows of logits");
    (String::from_utf8(out).expect("utf-8"), rows)
}

/// llama_cpp_logits.py on the file: its stdout lines and the logits' rows.
fn llama_cpp(tag: &str, py: &str, model: &Path, prompt: Prompt, force: Option<&str>) -> (Vec<String>, Vec<Vec<f32>>) {
    let logits = model.with_extension("llama-cpp.npy");
    let mut cmd = Command::new(py);
    cmd.arg(script()).arg(model).args(["--max-new-tokens", &NEW_TOKENS.to_string(), "--logits-out"]).arg(&logits);
    match prompt {
        Prompt::Ids(p) => cmd.args(["--prompt", p]),
        Prompt::Text(t) => cmd.args(["--prompt-text", t]),
    };
    if let Some(f) = force {
        cmd.args(["--force", f]);
    }
    let o = cmd.output().expect("run python");
    assert!(o.status.success(), "{tag}: {} failed:\n{}", script().display(), String::from_utf8_lossy(&o.stderr));
    let lines = String::from_utf8(o.stdout).expect("utf-8").lines().map(str::to_string).collect();
    (lines, read_rows(&logits))
}

/// Generates with relax and with llama.cpp on `config` and compares.
fn check(tag: &str, config: ModelConfig, file_type: FileType, prompt: Prompt) {
    let Some(py) = peer(tag) else { return };
    let model = model(tag, config, file_type);
    let (relax_out, a) = relax(tag, &model, prompt);
    let relax_tokens = match prompt {
        Prompt::Ids(_) => Some(ids(&relax_out)),
        Prompt::Text(_) => None,
    };
    // Feed llama.cpp relax's tokens when there are ids to feed and the types may part.
    let force = match (&relax_tokens, file_type) {
        (Some(_), t) if t != FileType::F32 => Some(relax_out.trim()),
        _ => None,
    };
    let (lines, b) = llama_cpp(tag, py, &model, prompt, force);
    let own = ids(&lines[0]);
    assert_eq!(own.len(), NEW_TOKENS, "{tag}: llama.cpp's tokens");
    if let Prompt::Text(text) = prompt {
        let theirs = lines.iter().find_map(|l| l.strip_prefix("prompt: ")).expect("llama.cpp's prompt ids");
        let mine = relax_prompt_ids(&model, text);
        assert_eq!(mine, ids(theirs), "{tag}: `{text}` tokenizes differently");
    }

    assert_eq!(a.len(), b.len(), "{tag}: rows of logits");
    let tol = if file_type == FileType::F32 { F32_TOLERANCE } else { QUANT_TOLERANCE };
    let mut worst = 0.0f32;
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        assert_eq!(ra.len(), rb.len(), "{tag}: vocabulary sizes");
        let scale = rb.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(f32::MIN_POSITIVE);
        let diff = ra.iter().zip(rb).fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
        worst = worst.max(diff / scale);
        assert!(
            diff <= tol * scale,
            "{tag}: row {i}: logits differ by {diff} (scale {scale}; tolerance {tol} relative)"
        );
        // relax's token of this row: its own argmax (first index on ties).
        let mine = relax_tokens.as_ref().map_or_else(|| argmax(ra), |t| t[i]);
        let theirs = own[i];
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
    say(&format!("{tag}: llama.cpp's tokens {own:?}; logits within {worst:.2e} of the row's largest magnitude"));
}

fn argmax(row: &[f32]) -> usize {
    row.iter().enumerate().fold(0, |best, (i, &x)| if x > row[best] { i } else { best })
}

/// The ids `relax-run --prompt-text` gives `text`: its own tokenizer call.
fn relax_prompt_ids(model: &Path, text: &str) -> Vec<usize> {
    let file = relax_gguf::GgufFile::open(model).expect("open the model");
    let tok = relax_llm::vocab::tokenizer_from_gguf(file.metadata()).expect("the file's tokenizer");
    tok.encode(text, true, false).expect("tokenize").into_iter().map(|i| i as usize).collect()
}

/// The sentences tokenized by relax-run's tokenizer and by llama.cpp, on a file of each
/// vocabulary kind.
fn check_tokenizer(tag: &str, config: ModelConfig) {
    let Some(py) = peer(tag) else { return };
    let model = model(tag, config, FileType::F32);
    let json = format!(
        "[{}]",
        SENTENCES
            .iter()
            .map(|s| {
                let mut q = String::from("\"");
                for c in s.chars() {
                    match c {
                        '"' => q.push_str("\\\""),
                        '\\' => q.push_str("\\\\"),
                        ' '..='~' => q.push(c),
                        // Everything else as \uXXXX (UTF-16), whatever python's stdin encoding.
                        c => c.encode_utf16(&mut [0; 2]).iter().for_each(|u| q.push_str(&format!("\\u{u:04x}"))),
                    }
                }
                q.push('"');
                q
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut child = Command::new(py)
        .arg(script())
        .arg(&model)
        .arg("--tokenize")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    child.stdin.take().expect("stdin").write_all(json.as_bytes()).expect("write the sentences");
    let o = child.wait_with_output().expect("wait for python");
    assert!(o.status.success(), "{tag}: {} failed:\n{}", script().display(), String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).expect("utf-8");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), SENTENCES.len(), "{tag}: llama.cpp's lines:\n{out}");
    for (text, line) in SENTENCES.iter().zip(lines) {
        assert_eq!(relax_prompt_ids(&model, text), ids(line), "{tag}: {text:?} tokenizes differently");
    }
    say(&format!("{tag}: {} sentences tokenize to llama.cpp's ids", SENTENCES.len()));
}

#[test]
fn llama_f32_prompt_text() {
    check("llama-f32-text", ModelConfig::tiny(), FileType::F32, Prompt::Text(PROMPT_TEXT));
}

#[test]
fn llama_q8_0() {
    check("llama-q8_0", ModelConfig::tiny(), FileType::Q8_0, Prompt::Ids(PROMPT));
}

#[test]
fn llama_q4_k_m() {
    check("llama-q4_k_m", ModelConfig::tiny(), FileType::Q4_K_M, Prompt::Ids(PROMPT));
}

#[test]
fn qwen2_f32_prompt_text() {
    check("qwen2-f32-text", ModelConfig::tiny_qwen2(), FileType::F32, Prompt::Text(PROMPT_TEXT));
}

#[test]
fn qwen2_q4_0() {
    check("qwen2-q4_0", ModelConfig::tiny_qwen2(), FileType::Q4_0, Prompt::Ids(PROMPT));
}

#[test]
fn tokenizer_spm() {
    check_tokenizer("tokenize-spm", ModelConfig::tiny());
}

#[test]
fn tokenizer_bpe() {
    check_tokenizer("tokenize-bpe", ModelConfig::tiny_qwen2());
}
