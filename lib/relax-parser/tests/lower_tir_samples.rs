//! Every PrimFunc of every sample section lowers without error and passes the verifier.
//!
//! The PrimFuncs of each section are cut out into a module of their own (with the
//! section's header and `TypeVar` lines), so the test does not depend on the Relax
//! functions of the section. The shared samples are read from
//! `CARGO_MANIFEST_DIR/../../../shared/samples` (skipped with a note when missing); the
//! copies in `tests/data` always run.

mod lower_tir_common;

use std::path::Path;

use lower_tir_common::{
    PrimFuncText, data_dir, preamble, prim_funcs, prim_module, render, rlx_files, samples_dir, sections,
};

/// Lowers the PrimFuncs of every section of every file under `dir`; returns the number
/// of PrimFuncs and the failures.
fn check_dir(dir: &Path) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut failures = Vec::new();
    for path in rlx_files(dir) {
        let text = std::fs::read_to_string(&path).expect("a sample is UTF-8");
        for (line, section) in sections(&text) {
            let funcs = prim_funcs(&section);
            if funcs.is_empty() {
                continue;
            }
            count += funcs.len();
            let refs: Vec<&PrimFuncText> = funcs.iter().collect();
            let src = prim_module(&preamble(&section), &refs);
            let names: Vec<&str> = funcs.iter().map(|f| f.name.as_str()).collect();
            match relax_parser::parse_module(&src) {
                Ok(m) => {
                    if let Err(errs) = relax_ir::verify::verify_module(&m) {
                        let msgs: Vec<String> = errs.iter().take(5).map(ToString::to_string).collect();
                        failures.push(format!(
                            "{} (section at line {line}, {names:?}): verifier: {}",
                            path.display(),
                            msgs.join("; ")
                        ));
                    }
                }
                Err(diags) => {
                    let shown: Vec<_> = diags.iter().take(5).cloned().collect();
                    failures.push(format!(
                        "{} (section at line {line}, {names:?}): {} errors\n{}",
                        path.display(),
                        diags.len(),
                        render(&src, &shown)
                    ));
                }
            }
        }
    }
    (count, failures)
}

#[test]
fn shared_sample_prim_funcs_lower() {
    let Some(dir) = samples_dir() else {
        eprintln!("note: shared/samples not found; skipping the shared samples");
        return;
    };
    let (count, failures) = check_dir(&dir);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(count > 100, "only {count} PrimFuncs found");
}

#[test]
fn local_sample_prim_funcs_lower() {
    let (count, failures) = check_dir(&data_dir());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(count >= 3, "only {count} PrimFuncs found");
}
