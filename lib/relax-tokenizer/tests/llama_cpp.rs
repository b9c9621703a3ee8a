//! The comparison with llama.cpp itself: vocabularies are written as GGUF files, and
//! llama.cpp (through llama-cpp-python, `Llama(path, vocab_only=True)`) tokenizes the
//! test sentences with every combination of `add_special` and `parse_special`,
//! detokenizes them with every combination of `remove_special` and
//! `unparse_special`, and prints every token's piece; every result must equal this
//! crate's. When llama-cpp-python is not installed the comparison says so on stderr
//! and passes.
//!
//! `RELAX_LLAMA_VOCAB_DIR=<dir>` adds llama.cpp's own vocabulary files
//! (`models/ggml-vocab-*.gguf` of its repository, with their `.inp`/`.out` test
//! cases) to the comparison.

mod support;

use relax_tokenizer::{Tokenizer, Vocab};
use std::io::Write;
use std::path::Path;
use support::train::{bpe_vocab, spm_vocab};
use support::{Outcome, SENTENCES, compare_with_llama_cpp, scratch, write_gguf};

/// Says something on stderr even when the test passes (libtest captures `eprintln!`).
fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// The BPE pre-tokenizers compared, one name for each pattern set and flag set.
const BPE_PRES: &[&str] = &[
    "default",
    "gpt-2",
    "llama-bpe",
    "dbrx",
    "chatglm-bpe",
    "qwen2",
    "stablelm2",
    "qwen35",
    "starcoder",
    "smollm",
    "falcon",
    "deepseek-llm",
    "deepseek-coder",
    "deepseek-v3",
    "bloom",
    "viking",
    "tekken",
    "chameleon",
    "gpt-4o",
    "seed-coder",
    "bailingmoe",
    "ufakzeka",
    "minicpm5",
    "exaone-moe",
];

/// The vocabularies compared: trained SPM and BPE ones under every flag that changes
/// what encoding and decoding do.
fn vocabularies() -> Vec<(String, Vocab)> {
    let mut out = vec![("spm".to_string(), spm_vocab(900))];
    let mut v = spm_vocab(900);
    v.add_bos = Some(false);
    v.add_eos = Some(true);
    v.add_space_prefix = Some(false);
    out.push(("spm-no-prefix-eos".into(), v));
    let mut v = spm_vocab(900);
    v.general_name = Some("Phi-3 mini".into());
    out.push(("spm-phi3".into(), v));
    for pre in BPE_PRES {
        out.push((format!("bpe-{pre}"), bpe_vocab(pre, 500)));
    }
    let mut v = bpe_vocab("llama-bpe", 500);
    v.add_bos = Some(false);
    v.add_eos = Some(true);
    out.push(("bpe-llama-bpe-eos".into(), v));
    let mut v = bpe_vocab("default", 500);
    v.pre = None;
    out.push(("bpe-no-pre".into(), v));
    out
}

fn report(name: &str, outcome: Outcome, failures: &mut Vec<String>) -> bool {
    match outcome {
        Outcome::Skipped(reason) => {
            say(&format!("llama.cpp comparison skipped: {reason}"));
            false
        }
        Outcome::Compared { checked, mismatches } => {
            say(&format!("llama.cpp comparison {name}: {checked} results, {} mismatches", mismatches.len()));
            failures.extend(mismatches.into_iter().take(20).map(|m| format!("{name}: {m}")));
            true
        }
    }
}

#[test]
fn same_ids_and_text_as_llama_cpp() {
    let dir = scratch("compare");
    let mut failures = Vec::new();
    for (name, vocab) in vocabularies() {
        let tokenizer = Tokenizer::new(vocab.clone()).unwrap();
        let path = dir.join(format!("{name}.gguf"));
        write_gguf(&vocab, &path);
        let ran = report(&name, compare_with_llama_cpp(&path, &tokenizer, SENTENCES), &mut failures);
        if !ran {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "differences from llama.cpp:\n{}", failures.join("\n"));
}

/// llama.cpp's test cases: inputs separated by `\n__ggml_vocab_test__\n`, one line of
/// expected ids (without BOS) per input.
fn read_cases(inp: &Path, out: &Path) -> Option<Vec<(String, Vec<u32>)>> {
    let raw = std::fs::read_to_string(inp).ok().filter(|raw| !raw.is_empty())?;
    let expected = std::fs::read_to_string(out).ok()?;
    let inputs: Vec<&str> = raw.split("\n__ggml_vocab_test__\n").collect();
    let inputs = match inputs.last() {
        Some(&"") => &inputs[..inputs.len() - 1],
        _ => &inputs[..],
    };
    let outputs: Vec<Vec<u32>> =
        expected.lines().map(|l| l.split_whitespace().map(|n| n.parse().unwrap()).collect()).collect();
    (inputs.len() == outputs.len()).then(|| inputs.iter().map(|s| s.to_string()).zip(outputs).collect())
}

#[test]
fn llama_cpp_vocabulary_files() {
    let Ok(dir) = std::env::var("RELAX_LLAMA_VOCAB_DIR") else {
        say("llama.cpp vocabulary files skipped: set RELAX_LLAMA_VOCAB_DIR to llama.cpp's models/");
        return;
    };
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    let mut llama_cpp = true;
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let vocab = match support::gguf::read(&mut std::fs::File::open(&path).unwrap()) {
            Ok(vocab) => vocab,
            Err(e) => {
                say(&format!("{name}: not compared: {e}"));
                continue;
            }
        };
        let tokenizer = match Tokenizer::new(vocab) {
            Ok(t) => t,
            Err(e) => {
                say(&format!("{name}: not compared: {e}"));
                continue;
            }
        };
        let cases = read_cases(&path.with_extension("gguf.inp"), &path.with_extension("gguf.out"));
        let mut sentences: Vec<&str> = SENTENCES.to_vec();
        if let Some(cases) = &cases {
            let mut wrong = 0;
            for (text, expected) in cases {
                let got = tokenizer.encode(text, false, false);
                if got.as_ref() != Ok(expected) {
                    wrong += 1;
                    failures.push(format!("{name}: {text:?}: expected {expected:?}, got {got:?}"));
                }
            }
            say(&format!("{name}: {} test cases of llama.cpp, {wrong} wrong", cases.len()));
            sentences.extend(cases.iter().map(|(t, _)| t.as_str()));
        }
        if llama_cpp {
            llama_cpp = report(&name, compare_with_llama_cpp(&path, &tokenizer, &sentences), &mut failures);
        }
    }
    assert!(failures.is_empty(), "differences:\n{}", failures.join("\n"));
}
