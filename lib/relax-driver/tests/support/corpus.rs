//! The TVM corpus (`test/Corpus`, made by `utils/tvm/make_corpus.py`) for the tests that
//! compare a relax pipeline with TVM's result case by case (`fusion_corpus.rs`,
//! `legalize_corpus.rs`): the case list, and the bookkeeping of [`ExpectedDifferent`]
//! lists.

#![allow(dead_code, reason = "each includer uses a different part")]

use std::path::{Path, PathBuf};

/// A corpus folder, e.g. `tvm-0.25`.
pub fn corpus_dir(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus").join(version)
}

/// The cases of `dir` that have both `<case>.<input>.rlx` and `<case>.<output>.rlx`,
/// sorted.
pub fn cases(dir: &Path, input: &str, output: &str) -> Vec<String> {
    let suffix = format!(".{input}.rlx");
    let mut cases: Vec<String> = std::fs::read_dir(dir)
        .expect("the corpus folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(suffix.as_str()).map(str::to_string))
        .filter(|c| dir.join(format!("{c}.{output}.rlx")).exists())
        .collect();
    cases.sort();
    cases
}

/// Reads `<case>.<kind>.rlx` from `dir`.
pub fn read_case(dir: &Path, case: &str, kind: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{case}.{kind}.rlx"))).expect("readable")
}

/// `text` without the data comments of constants (`# metadata[...]` lines), which TVM's
/// text omits.
pub fn without_data(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with("# metadata[")).map(|l| format!("{l}\n")).collect()
}

/// Cases whose result differs from TVM's, with the reason.
pub type ExpectedDifferent = &'static [(&'static str, &'static str)];

/// Records in `failures` what is wrong with one case: it differs from TVM's result
/// (`what`) though it is not in `expected`, or it matches though it is listed. `ours` and
/// `theirs` are (status, stdout, stderr) of `relax-opt`.
pub fn check_case(
    case: &str,
    ours: &(i32, String, String),
    theirs: &(i32, String, String),
    expected: ExpectedDifferent,
    what: &str,
    failures: &mut Vec<String>,
) {
    let same = ours.0 == 0 && theirs.0 == 0 && ours.1 == theirs.1;
    let listed = expected.iter().any(|(c, _)| *c == case);
    match (same, listed) {
        (true, true) => failures.push(format!("{case}: now matches TVM; remove it from EXPECTED_DIFFERENT")),
        (false, false) => {
            let first = ours.1.lines().zip(theirs.1.lines()).find(|(a, b)| a != b);
            let detail = match first {
                Some((a, b)) => format!("\n    relax: {a}\n    tvm:   {b}"),
                None if ours.0 != 0 => format!(" (relax-opt failed: {})", ours.2.lines().next().unwrap_or("")),
                None => " (outputs differ in length)".to_string(),
            };
            failures.push(format!("{case}: differs from {what}{detail}"));
        }
        _ => {}
    }
}

/// Records in `failures` every entry of `expected` that is not a case of the corpus.
pub fn check_listed(cases: &[String], expected: ExpectedDifferent, failures: &mut Vec<String>) {
    for (c, _) in expected {
        if !cases.iter().any(|x| x == c) {
            failures.push(format!("{c}: listed in EXPECTED_DIFFERENT but not in the corpus"));
        }
    }
}
