//! Fusion against TVM on the corpus (`test/Corpus`, made by `utils/tvm/make_corpus.py`):
//! for every case with a `<case>.built.rlx` (the input) and a `<case>.fused.rlx` (what TVM
//! printed after its zero pipeline: LegalizeOps, AnnotateTIROpPattern, FoldConstant,
//! FuseOps, FuseTIR):
//!
//! * `relax-opt --zero` must leave no more kernel calls in any Relax function than TVM
//!   left (TVM 0.25 and 0.27 alike);
//! * for TVM 0.25, it must print exactly what relax prints for TVM's result (apart from
//!   the data comments of constants, which TVM's text omits), except for the cases in
//!   [`EXPECTED_DIFFERENT`]; an entry that starts to match fails the test.
//!
//! `relax_fuseops_primitive` has no input: its FuseOps result (`.fuseops.rlx`) through
//! `--fuse-tir` must print as TVM's FuseTIR result.

use std::collections::BTreeMap;
mod support {
    pub mod corpus;
    pub mod driver;
}

use support::corpus::{ExpectedDifferent, cases, check_case, check_listed, corpus_dir, read_case, without_data};
use support::driver::run_opt_with;

use relax_ir::{ExprData, Func, Module};

/// TVM 0.25 cases whose zero-pipeline result relax does not reproduce, with the reason.
const EXPECTED_DIFFERENT: ExpectedDifferent = &[
    ("relax_constants", "calls on opaque metadata constants (unknown shape) are not legalized"),
    ("relax_tuples_items", "the parser rejects `empty: R.Tuple` (a declaration without a value)"),
];

fn run(args: &[&str], input: &str) -> (i32, String, String) {
    run_opt_with(input.as_bytes(), args)
}

/// Kernel calls (`call_tir`, `call_tir_inplace`) per Relax function that is not
/// `Primitive`.
fn kernel_counts(m: &Module) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (_, gd) in m.live() {
        let Func::Relax(f) = &gd.func else { continue };
        if relax_transform::fuse_tir::is_primitive(f) {
            continue;
        }
        let mut n = 0;
        f.for_each_reachable(|_, d| {
            if let ExprData::Call(c) = d
                && let ExprData::Op(op) = &f.exprs[c.callee]
                && matches!(op.name(), "relax.call_tir" | "relax.call_tir_inplace")
            {
                n += 1;
            }
        });
        out.insert(gd.name.clone(), n);
    }
    out
}

/// Compares the kernel counts of our result with TVM's; `None` when a side does not
/// parse.
fn count_failure(case: &str, ours: &str, theirs: &str) -> Option<String> {
    let ours = relax_parser::parse_module(ours).ok()?;
    let theirs = relax_parser::parse_module(theirs).ok()?;
    let (oc, tc) = (kernel_counts(&ours), kernel_counts(&theirs));
    let more: Vec<String> = tc
        .iter()
        .filter(|(f, n)| oc.get(*f).is_some_and(|o| o > n))
        .map(|(f, n)| format!("`{f}`: {} kernel calls, TVM {n}", oc[f]))
        .collect();
    (!more.is_empty()).then(|| format!("{case}: more kernels than TVM: {}", more.join(", ")))
}

#[test]
fn zero_pipeline_matches_tvm_025() {
    let dir = corpus_dir("tvm-0.25");
    let cases = cases(&dir, "fused", "built");
    assert!(cases.len() > 20, "expected the corpus cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let built = read_case(&dir, case, "built");
        let fused = read_case(&dir, case, "fused");
        let ours = run(&["--zero"], &built);
        let theirs = run(&[], &fused);
        if ours.0 == 0
            && theirs.0 == 0
            && let Some(f) = count_failure(case, &ours.1, &theirs.1)
        {
            failures.push(f);
        }
        let ours = (ours.0, without_data(&ours.1), ours.2);
        check_case(case, &ours, &theirs, EXPECTED_DIFFERENT, "TVM's zero pipeline", &mut failures);
    }
    check_listed(&cases, EXPECTED_DIFFERENT, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn zero_pipeline_kernel_counts_against_tvm_027() {
    let dir = corpus_dir("tvm-0.27");
    let cases = cases(&dir, "fused", "built");
    assert!(cases.len() > 20, "expected the corpus cases, found {}", cases.len());
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in &cases {
        let built = read_case(&dir, case, "built");
        let fused = read_case(&dir, case, "fused");
        let ours = run(&["--zero"], &built);
        if ours.0 != 0 {
            continue;
        }
        if relax_parser::parse_module(&fused).is_ok() {
            compared += 1;
        }
        failures.extend(count_failure(case, &ours.1, &fused));
    }
    assert!(compared > 20, "only {compared} cases compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fuse_tir_matches_tvm_on_a_fuse_ops_result() {
    let dir = corpus_dir("tvm-0.25");
    let fuseops = std::fs::read_to_string(dir.join("relax_fuseops_primitive.fuseops.rlx")).expect("readable");
    let fused = std::fs::read_to_string(dir.join("relax_fuseops_primitive.fused.rlx")).expect("readable");
    let ours = run(&["--fuse-tir"], &fuseops);
    let theirs = run(&[], &fused);
    assert_eq!((ours.0, theirs.0), (0, 0), "{}{}", ours.2, theirs.2);
    assert_eq!(ours.1, theirs.1);
}
