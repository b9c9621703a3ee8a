//! The `relax-gguf` tool: `gen` writes models that `info` (and the library) read back,
//! flags override presets, and every error is `relax-gguf: error: ...` with status 1.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relax-gguf")).args(args).output().expect("run relax-gguf")
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("relax-gguf-cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn gen_then_info() {
    let path = dir().join("tiny.gguf");
    let p = path.to_str().unwrap();
    let o = tool(&["gen", "--preset", "tiny", "--seed", "3", "-o", p]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(text(&o).0.starts_with(&format!("wrote {p}: llama Q4_K_M, 2 layers, hidden 256, 21 tensors")));
    let o = tool(&["info", p]);
    assert!(o.status.success());
    let (out, _) = text(&o);
    assert!(out.starts_with(&format!("{p}: GGUF version 3, ")), "{out}");
    assert!(out.contains("| llama.block_count = 2\n"), "{out}");
    assert!(
        out.contains(": [STRING]   |      512 | tokenizer.ggml.tokens = [\"<unk>\", \"<s>\", \"</s>\", \"<0x00>\""),
        "{out}"
    );
    assert!(out.contains("|   256,   512,     1,     1 | Q6_K    | output.weight\n"), "{out}");
    assert!(out.ends_with("* types: F32 × 5, Q4_K × 13, Q6_K × 3\n"), "{out}");
    let all = text(&tool(&["info", "--all", p])).0;
    assert!(all.contains("\"<0xFF>\"") && !all.contains("...]"));
    // The same flags and seed write the same bytes.
    let again = dir().join("tiny-again.gguf");
    assert!(tool(&["gen", "--seed", "3", "-o", again.to_str().unwrap()]).status.success());
    assert!(std::fs::read(&path).unwrap() == std::fs::read(&again).unwrap());
}

#[test]
fn flags_override_the_preset() {
    let path = dir().join("custom.gguf");
    let p = path.to_str().unwrap();
    let o = tool(&[
        "gen",
        "--arch",
        "qwen2",
        "--layers",
        "1",
        "--hidden",
        "128",
        "--heads",
        "2",
        "--kv-heads",
        "1",
        "--ffn",
        "256",
        "--vocab",
        "400",
        "--ctx",
        "64",
        "--type",
        "q8_0",
        "--rope-scaling",
        "linear:2",
        "--name",
        "custom",
        "-o",
        p,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let f = relax_gguf::GgufFile::open(&path).unwrap();
    let md = f.metadata();
    assert_eq!(md.architecture().unwrap(), "qwen2");
    assert_eq!(md.get_u32("qwen2.embedding_length").unwrap(), 128);
    assert_eq!(md.get_u32("qwen2.attention.head_count_kv").unwrap(), 1);
    assert_eq!(md.get_f32("qwen2.rope.scaling.factor").unwrap(), 2.0);
    assert_eq!(md.get_str("general.name").unwrap(), "custom");
    assert_eq!(md.get_str("tokenizer.ggml.model").unwrap(), "gpt2");
    assert_eq!(f.tensor("blk.0.attn_q.weight").unwrap().ggml_type, relax_gguf::GgmlType::Q8_0);
    assert!(f.get_tensor("blk.0.attn_v.bias").is_some());
}

#[test]
fn errors_are_reported_not_panicked() {
    let out = dir().join("never.gguf");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["gen", "--preset", "huge", "-o", o],
            "relax-gguf: error: unknown preset `huge` (presets: tiny, tinyllama, tiny-qwen2)\n",
        ),
        (
            &["gen", "--type", "q5_k", "-o", o],
            "relax-gguf: error: unknown file type `q5_k` (f32, f16, bf16, q8_0, q4_0, q6_k, q4_k_m)\n",
        ),
        (
            &["gen", "--heads", "3", "-o", o],
            "relax-gguf: error: the hidden size 256 is not a multiple of the 3 heads\n",
        ),
        (
            &["gen", "--hidden", "64", "--heads", "2", "-o", o],
            "relax-gguf: error: Q4_K_M: tensor `token_embd.weight` has rows of 64, not a multiple of 256; llama.cpp would fall back to Q5_0, which relax does not support (use sizes that are multiples of 256)\n",
        ),
        (
            &["gen", "--vocab", "10", "-o", o],
            "relax-gguf: error: a SentencePiece vocabulary needs at least 260 tokens (3 special, 256 bytes, 1 piece); 10 asked\n",
        ),
        (
            &["gen", "--rope-scaling", "yarn:2", "-o", o],
            "relax-gguf: error: invalid value `yarn:2` for `--rope-scaling` (linear:FACTOR or llama3:FACTOR[:LOW:HIGH:CTX])\n",
        ),
        (
            &["info", "/nonexistent/x.gguf"],
            "relax-gguf: error: /nonexistent/x.gguf: No such file or directory (os error 2)\n",
        ),
        (
            &["gen", "-o", "/nonexistent/dir/x.gguf"],
            "relax-gguf: error: /nonexistent/dir/x.gguf: No such file or directory (os error 2)\n",
        ),
    ];
    for (args, expected) in cases {
        let r = tool(args);
        assert_eq!((r.status.code(), text(&r).1.as_str()), (Some(1), expected), "{args:?}");
    }
    assert!(!out.exists());
    let bad = dir().join("bad.gguf");
    std::fs::write(&bad, b"GGUF\x03\0\0\0\xff\xff").unwrap();
    let r = tool(&["info", bad.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r).1.contains(": truncated file: the tensor count at byte 8 needs 8 bytes"), "{:?}", text(&r));
    for args in [&["gen"][..], &["frobnicate"], &[], &["gen", "--layers", "x", "-o", o]] {
        let r = tool(args);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        assert!(text(&r).1.contains("error") || text(&r).1.contains("Usage"), "{args:?}");
    }
    assert_eq!(tool(&["--help"]).status.code(), Some(0));
}
