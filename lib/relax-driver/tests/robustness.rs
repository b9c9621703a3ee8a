//! Randomised robustness test of the whole front end, run in process on every
//! `cargo test`: a few thousand mutated real modules (`support/mutate.rs`: lines deleted,
//! duplicated, moved and re-indented; identifiers, numbers, strings and brackets replaced)
//! go through `relax-opt` (`relax_driver::opt_main` over in-memory streams), and for each:
//!
//! * the exit status is 0 or 1, and the driver does not panic;
//! * standard error holds only diagnostics in the documented form: every header line is
//!   `<stdin>:LINE:COL: SEVERITY: message` (or `SEVERITY: <stdin>: message` without a
//!   location), and every other line belongs to a snippet (`N │ ...`, `  │ ...`,
//!   `  = note: ...`); exit status 1 comes with at least one error;
//! * on exit status 0, the output parses again and prints identically;
//! * the same holds with the passes run (`--legalize-ops`, `--annotate-tir-op-pattern`,
//!   `--normalize`, `--canonicalize-bindings`, `--dead-code-elimination`,
//!   `--to-non-dataflow`), and `--split-input-file
//!   --verify-diagnostics` checks mutated expectations without breaking;
//! * no input takes long (a few seconds in a debug build at most).
//!
//! The seed is fixed, so a failure reproduces; the failing input is printed in full.
//! `RELAX_ROBUST_ITERS` sets the number of inputs (default 2,000) and `RELAX_ROBUST_SEED`
//! the seed. The cargo-fuzz target `mutate_module` (`utils/fuzz`) runs the same mutator
//! under libFuzzer.

mod support {
    pub mod driver;
    pub mod mutate;
}

use std::path::{Path, PathBuf};

use support::driver::{check, check_with, header_severity, is_snippet_line};
use support::mutate::{Rng, mutate, sections};

/// Samples larger than this are left out: they make each run slow in a debug build
/// without exercising anything the smaller ones do not.
const MAX_SAMPLE_BYTES: usize = 12_000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rlx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rlx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rlx") {
            out.push(p);
        }
    }
}

/// The seed texts: every section of the shared samples and the lit tests of the parser,
/// verifier, transforms and pass manager.
fn samples() -> Vec<String> {
    let root = repo();
    let mut files = Vec::new();
    rlx_files(&root.join("test/Corpus/shared-samples"), &mut files);
    for dir in ["Parser", "Verifier", "Transform", "PassManager"] {
        rlx_files(&root.join("test").join(dir), &mut files);
    }
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        out.extend(sections(&text).into_iter().filter(|s| s.len() <= MAX_SAMPLE_BYTES));
    }
    assert!(out.len() >= 20, "too few samples found under {}", root.display());
    out
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn mutated_samples_never_break_the_driver() {
    let samples = samples();
    let donors: Vec<&str> = samples.iter().map(String::as_str).collect();
    let iters = env_or("RELAX_ROBUST_ITERS", 2_000);
    let mut rng = Rng::new(env_or("RELAX_ROBUST_SEED", 0x5eed));
    let mut failures = Vec::new();
    for i in 0..iters {
        let sample = &samples[rng.below(samples.len())];
        let input = mutate(sample, &mut rng, &donors, 4);
        // Mostly the plain driver; also the passes, and split files with expected
        // diagnostics (the directives of the lit tests get mutated too).
        let flags: &[&str] = match i % 8 {
            5 => &["--legalize-ops", "--annotate-tir-op-pattern"],
            6 => &["--normalize", "--canonicalize-bindings", "--dead-code-elimination", "--to-non-dataflow"],
            7 => &["--split-input-file", "--verify-diagnostics"],
            _ => &[],
        };
        if let Err(why) = check_with(input.as_bytes(), flags) {
            failures.push(format!("input #{i} ({}): {why}\n--- input\n{input}\n---", flags.join(" ")));
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn unmutated_samples_pass_the_same_checks() {
    for s in samples() {
        if let Err(why) = check(&s) {
            panic!("{why}\n--- input\n{s}");
        }
    }
}

#[test]
fn the_checker_accepts_the_documented_forms() {
    assert_eq!(header_severity("<stdin>:3:9: error: unknown op `R.foo`"), Some("error"));
    assert_eq!(header_severity("error: <stdin>: the printed module does not parse"), Some("error"));
    assert_eq!(header_severity("<stdin>:3: error: x"), None);
    assert!(is_snippet_line("  │"));
    assert!(is_snippet_line("12 │         y = R.foo(x)"));
    assert!(is_snippet_line("  = note: in pass `x`"));
    assert!(!is_snippet_line("error: x"));
}
