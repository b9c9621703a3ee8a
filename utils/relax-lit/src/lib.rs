//! relax-lit: runs the lit-style `.rlx` tests in process, so that `cargo test` and LLVM's
//! `lit` (with `FileCheck-19`) run the same tree with the same verdicts.
//!
//! A test is a file whose `# RUN:` lines say how to check it (see `docs/testing.md`):
//!
//! ```text
//! # RUN: relax-opt %s | FileCheck %s
//! # CHECK-LABEL: def main(
//! # CHECK-NEXT:    return x
//! ```
//!
//! * [`run_line`] reads lit's directives, [`subst`] applies `%s`/`%t`/`%if`, and [`shell`]
//!   parses and runs the command: relax tools in process, FileCheck through [`filecheck`],
//!   other programs as processes.
//! * [`filecheck`] is a FileCheck-19 work-alike; [`exact`] adds EXACT mode and blessing.
//! * [`run_all`] runs many tests in parallel and [`report`] prints the results.

pub mod boolexpr;
pub mod collect;
pub mod exact;
pub mod features;
pub mod filecheck;
pub mod panic;
pub mod report;
pub mod run_line;
pub mod runner;
pub mod shell;
pub mod subst;

use std::panic::{AssertUnwindSafe, catch_unwind};

use rayon::prelude::*;

pub use features::Features;
pub use report::{Summary, report};
pub use runner::{Failure, RoundtripHook, RunConfig, Status, TestCase, TestResult, run_case};

/// Where Debian puts LLVM 19's `FileCheck`, `not` and friends.
pub const LLVM_BIN: &str = "/usr/lib/llvm-19/bin";

/// Runs `cases` in parallel, each under `catch_unwind`, and returns their results in the
/// order of `cases`. Panic messages are captured rather than printed.
pub fn run_all(cases: &[TestCase], config: &RunConfig) -> Vec<TestResult> {
    panic::quietly(|| {
        cases
            .par_iter()
            .map(|case| {
                catch_unwind(AssertUnwindSafe(|| run_case(case, config))).unwrap_or_else(|p| {
                    let reason = format!("the runner panicked: {}", panic::panic_message(p.as_ref()));
                    TestResult {
                        name: case.name.clone(),
                        status: Status::Failed(Failure { reason, ..Failure::default() }),
                        blessed: Vec::new(),
                    }
                })
            })
            .collect()
    })
}
