//! Shared support of the integration tests: the sentences compared with llama.cpp, the
//! GGUF writer and reader, the trained test vocabularies, and the comparison runner.

#![allow(dead_code, reason = "each test binary uses part of the support")]

pub mod gguf;
pub mod train;

use relax_tokenizer::{DetokenizeOptions, Tokenizer, Vocab};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The comparison's test set: ASCII, accents, CJK, emoji, digits, code, whitespace
/// runs, special tokens, and the classes where pre-tokenizers differ.
pub const SENTENCES: &[&str] = &[
    "",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    " \n\n ",
    "\r\n",
    "Hello world",
    " Hello world",
    "Hello World",
    "HELLO WORLD",
    "  Hello   world  ",
    "hello\tworld\n",
    "The quick brown fox jumps over the lazy dog.",
    "It's 2024 and we're testing tokenizers: they'll split words.",
    "'s 'S 'LL 'Ll 're 'VE 'd 'M 't",
    "I'm I've I'd I'll you're don't",
    "Ça va? Les élèves français étudient à l'école.",
    "Größe, Straße, über, Ärger",
    "¿Dónde está la biblioteca?",
    "Привет, как дела?",
    "Ελληνικά γράμματα",
    "日本語のテキストです。東京は大きな都市です。",
    "中文分词测试，你好世界。",
    "한국어 문장입니다",
    "नमस्ते दुनिया",
    "สวัสดีครับ",
    "e\u{301}te\u{301} cafe\u{301}",
    "Emoji: 😀 🎉 👍🏽 🇫🇷 ❤️ 👨‍👩‍👧",
    "1 12 123 1234 12345 123456 1234567",
    "3.14159 1,000,000 -42 +7 1e10 0x1F",
    "Ⅻ ½ ² ٣ ३",
    "fn main() { let x = vec![1, 2, 3]; println!(\"{x:?}\"); }",
    "def hello(name):\n    return f\"Hello, {name}!\"\n",
    "    indented\n\tcode\n\n\n  end",
    "$100, 50%, a+b=c, x^2, ~tilde, <tag>, [list], |pipe|, `tick`, @at, #hash",
    "!!! ??? ... ,,, ;;; ::: --- ___ ***",
    "a\u{a0}b\u{3000}c\u{2003}d\u{85}e\u{2028}f",
    "x\u{200b}y\u{200d}z\u{feff}w",
    "\u{1}\u{1f}\u{7f}",
    "Ǆemo ǅemo ǆemo",
    "ـــ",
    "<s>hi</s>",
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>text<|endoftext|>",
    "<|user|>\n Hi there <|end|>\n<|assistant|>",
    "<tool_call> {\"a\": 1} <tool_call>",
    "<|im_start|><|im_start|>",
    "<unk> <0x41> ▁word",
    "the the the and and of of to to in in",
    "                    many spaces",
    "trailing spaces    ",
    "MiXeD CaSe WoRdS aNd CamelCase snake_case kebab-case",
];

/// What the comparison found for one vocabulary.
pub enum Outcome {
    /// llama.cpp could not be run; the reason.
    Skipped(String),
    /// The results compared, and the mismatches.
    Compared {
        /// The number of results compared.
        checked: usize,
        /// One line per mismatch.
        mismatches: Vec<String>,
    },
}

fn python() -> String {
    std::env::var("RELAX_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("relax-tokenizer-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `vocab` as GGUF to `path`.
pub fn write_gguf(vocab: &Vocab, path: &Path) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    gguf::write(vocab, &mut file).unwrap();
}

/// Runs llama.cpp on the vocabulary file `gguf` and compares every result with
/// `tokenizer`'s.
pub fn compare_with_llama_cpp(gguf: &Path, tokenizer: &Tokenizer, sentences: &[&str]) -> Outcome {
    let inputs = gguf.with_extension("inputs");
    let lines: String = sentences.iter().map(|s| hex(s.as_bytes()) + "\n").collect();
    std::fs::write(&inputs, lines).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/llama_cpp_tokenize.py");
    let output = match Command::new(python()).arg(&script).arg(gguf).arg(&inputs).output() {
        Ok(output) => output,
        Err(e) => return Outcome::Skipped(format!("cannot run {}: {e}", python())),
    };
    if output.status.code() == Some(77) {
        return Outcome::Skipped("llama-cpp-python is not installed (pip install llama-cpp-python)".into());
    }
    assert!(
        output.status.success(),
        "llama.cpp failed on {}:\n{}",
        gguf.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut checked = 0;
    let mut mismatches = Vec::new();
    let flag = |s: &str| s == "1";
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        checked += 1;
        match fields[0] {
            "T" => {
                let i: usize = fields[1].parse().unwrap();
                let (add, parse) = (flag(fields[2]), flag(fields[3]));
                let expected: Vec<u32> =
                    fields[4..].iter().filter(|f| !f.is_empty()).map(|f| f.parse().unwrap()).collect();
                let got = tokenizer.encode(sentences[i], add, parse);
                if got.as_ref() != Ok(&expected) {
                    mismatches.push(format!(
                        "encode({:?}, add_special={add}, parse_special={parse}): llama.cpp {expected:?}, relax {got:?}",
                        sentences[i]
                    ));
                }
            }
            "D" => {
                let i: usize = fields[1].parse().unwrap();
                let options = DetokenizeOptions { remove_special: flag(fields[2]), unparse_special: flag(fields[3]) };
                let expected = unhex(fields.get(4).copied().unwrap_or(""));
                let ids = tokenizer.encode(sentences[i], true, true).unwrap_or_default();
                let got = tokenizer.detokenize(&ids, options);
                if got.as_ref() != Ok(&expected) {
                    mismatches.push(format!(
                        "detokenize({ids:?}, {options:?}) of {:?}: llama.cpp {:?}, relax {:?}",
                        sentences[i],
                        String::from_utf8_lossy(&expected),
                        got.map(|g| String::from_utf8_lossy(&g).into_owned())
                    ));
                }
            }
            "P" => {
                let id: u32 = fields[1].parse().unwrap();
                let expected = unhex(fields.get(3).copied().unwrap_or(""));
                let got = tokenizer.token_to_piece(id, flag(fields[2]));
                if got != Ok(&expected[..]) {
                    mismatches.push(format!(
                        "token_to_piece({id}, special={}): llama.cpp {expected:?}, relax {got:?}",
                        fields[2]
                    ));
                }
            }
            _ => panic!("unexpected line from the llama.cpp script: {line}"),
        }
    }
    Outcome::Compared { checked, mismatches }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2).map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap()).collect()
}
