//! `cargo test` entry point for the `.rlx` test tree (`harness = false`).
//!
//! Runs every `*.rlx` file under `test/` and every ```` ```rlx ```` block under `docs/`,
//! prints a line per failure and `N passed, N failed, N unsupported`, and exits non-zero
//! on any failure.
//!
//! * `RELAX_LIT_FILTER=substring` (or a plain argument after `--`) selects tests by name.
//! * `RELAX_TEST_BLESS=1` rewrites failing EXACT blocks with the actual output.
//!
//! Each file whose RUN lines pass also goes through `relax_driver::roundtrip_check`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use relax_lit::{RunConfig, collect, report, run_all};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let temp_root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("relax-lit");
    let mut config = RunConfig::new(root.clone(), temp_root.clone());
    config.bless = std::env::var("RELAX_TEST_BLESS").is_ok_and(|v| v == "1");
    // Parse, print, parse, print, compare: every input must print idempotently.
    config.roundtrip = Some(relax_driver::roundtrip_check);

    let mut cases = collect::test_files(&root, &root.join("test"));
    cases.extend(collect::doc_blocks(&root, &root.join("docs"), &temp_root));
    let filter = std::env::var("RELAX_LIT_FILTER").ok().or_else(|| args.iter().find(|a| !a.starts_with('-')).cloned());
    if let Some(f) = &filter {
        cases.retain(|c| c.name.contains(f.as_str()));
    }
    if args.iter().any(|a| a == "--list") {
        for c in &cases {
            println!("{}: test", c.name);
        }
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--ignored") {
        return ExitCode::SUCCESS; // There are no ignored tests.
    }
    let results = run_all(&cases, &config);
    let mut out = std::io::stdout().lock();
    match report(&results, &mut out) {
        Ok(s) if s.failed == 0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
