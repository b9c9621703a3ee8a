//! `legalize-ops` against TVM 0.25's LegalizeOps on the corpus (`test/Corpus/tvm-0.25`,
//! made by `utils/tvm/make_corpus.py`): for every case with a `<case>.built.rlx` (the
//! input) and a `<case>.legalized.rlx` (what TVM printed after `LegalizeOps`),
//! `relax-opt --legalize-ops` on the input must print exactly what relax prints for TVM's
//! result (apart from the data comments of constants that legalization creates, which
//! TVM's text omits).
//!
//! Cases that use ops not legalized yet (or that relax cannot legalize, such as calls on
//! opaque `metadata[...]` constants whose shape is unknown) are listed in
//! [`EXPECTED_DIFFERENT`] with the reason; an entry that starts to pass fails the test, so
//! the list stays current.

use std::path::PathBuf;

/// Cases whose legalization differs from TVM's, with the reason.
const EXPECTED_DIFFERENT: &[(&str, &str)] = &[
    ("ops_collapse_einsum", "einsum is not legalized yet"),
    ("ops_creation_more", "hamming_window is not legalized yet"),
    ("ops_image", "image ops are not legalized yet"),
    ("ops_nn_pool_variants", "adaptive pooling with windows of different sizes (nested blocks) is not legalized"),
    ("ops_quantize", "quantize and dequantize are not legalized yet"),
    ("relax_constants", "calls on opaque metadata constants (unknown shape) are left alone"),
    ("relax_tuples_items", "the parser rejects `empty: R.Tuple` (a declaration without a value)"),
];

fn run(args: &[&str], input: &str) -> (i32, String, String) {
    let mut stdin = input.as_bytes();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let status = {
        let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
        let mut argv: Vec<std::ffi::OsString> = vec!["relax-opt".into(), "-".into()];
        argv.extend(args.iter().map(|a| a.into()));
        relax_driver::opt_main(argv, &mut io)
    };
    (status, String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

#[test]
fn legalize_matches_tvm_on_the_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus/tvm-0.25");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".built.rlx").map(str::to_string))
        .filter(|c| dir.join(format!("{c}.legalized.rlx")).exists())
        .collect();
    cases.sort();
    assert!(cases.len() > 30, "expected the corpus cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let built = std::fs::read_to_string(dir.join(format!("{case}.built.rlx"))).expect("readable");
        let legalized = std::fs::read_to_string(dir.join(format!("{case}.legalized.rlx"))).expect("readable");
        let mut ours = run(&["--legalize-ops"], &built);
        // Constants that legalization creates (`arange` of constants) carry their data,
        // which relax prints as comments after the module; TVM's text omits it.
        ours.1 = ours.1.lines().filter(|l| !l.starts_with("# metadata[")).map(|l| format!("{l}\n")).collect();
        let theirs = run(&[], &legalized);
        let same = ours.0 == 0 && theirs.0 == 0 && ours.1 == theirs.1;
        let expected = EXPECTED_DIFFERENT.iter().any(|(c, _)| c == case);
        match (same, expected) {
            (true, true) => failures.push(format!("{case}: now matches TVM; remove it from EXPECTED_DIFFERENT")),
            (false, false) => {
                let first = ours.1.lines().zip(theirs.1.lines()).find(|(a, b)| a != b);
                let detail = match first {
                    Some((a, b)) => format!("\n    relax: {a}\n    tvm:   {b}"),
                    None if ours.0 != 0 => format!(" (relax-opt failed: {})", ours.2.lines().next().unwrap_or("")),
                    None => " (outputs differ in length)".to_string(),
                };
                failures.push(format!("{case}: differs from TVM's LegalizeOps{detail}"));
            }
            _ => {}
        }
    }
    for (c, _) in EXPECTED_DIFFERENT {
        if !cases.iter().any(|x| x == c) {
            failures.push(format!("{c}: listed in EXPECTED_DIFFERENT but not in the corpus"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
