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

mod support {
    pub mod corpus;
    pub mod driver;
}

use support::corpus::{ExpectedDifferent, check_case, check_listed, read_case, without_data};
use support::driver::run_opt_with;

/// Cases whose legalization differs from TVM's, with the reason.
const EXPECTED_DIFFERENT: ExpectedDifferent = &[
    ("ops_collapse_einsum", "einsum is not legalized yet"),
    (
        "ops_creation_more",
        "eye_like legalizes to its argument's dtype (int32, not the float16 of `dtype`), as in TVM; TVM's text then gives `main` that result type, relax keeps the annotated one",
    ),
    (
        "ops_image",
        "resize2d with an out_dtype casts to it (TVM's legalization drops it); grid_sample legalizes to TOPI's shape, as in TVM, where TVM's text then gives `main` that result type",
    ),
    (
        "ops_nn_pool_variants",
        "adaptive pooling with windows of different sizes: TVM nests a block in another, relax reduces over the widest window (same numbers, docs/legalize.md)",
    ),
    ("relax_constants", "calls on opaque metadata constants (unknown shape) are left alone"),
    ("relax_tuples_items", "the parser rejects `empty: R.Tuple` (a declaration without a value)"),
];

fn run(args: &[&str], input: &str) -> (i32, String, String) {
    run_opt_with(input.as_bytes(), args)
}

#[test]
fn legalize_matches_tvm_on_the_corpus() {
    let dir = support::corpus::corpus_dir("tvm-0.25");
    let cases = support::corpus::cases(&dir, "built", "legalized");
    assert!(cases.len() > 30, "expected the corpus cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let built = read_case(&dir, case, "built");
        let legalized = read_case(&dir, case, "legalized");
        let mut ours = run(&["--legalize-ops"], &built);
        // Constants that legalization creates (`arange` of constants) carry their data,
        // which relax prints as comments after the module; TVM's text omits it.
        ours.1 = without_data(&ours.1);
        let theirs = run(&[], &legalized);
        check_case(case, &ours, &theirs, EXPECTED_DIFFERENT, "TVM's LegalizeOps", &mut failures);
    }
    check_listed(&cases, EXPECTED_DIFFERENT, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
