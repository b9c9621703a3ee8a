//! The report: a line per failure (file, line, RUN command, reason) with indented details,
//! a line per blessed file, then `N passed, N failed, N unsupported`.

use std::io::Write;

use crate::runner::{Status, TestResult};

/// Counts of results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Tests that passed (blessed ones included).
    pub passed: usize,
    /// Tests that failed.
    pub failed: usize,
    /// Tests ruled out by `REQUIRES:` / `UNSUPPORTED:`.
    pub unsupported: usize,
}

/// Writes the report for `results`, in order, and returns the counts.
pub fn report(results: &[TestResult], out: &mut dyn Write) -> std::io::Result<Summary> {
    let mut s = Summary::default();
    for r in results {
        for file in &r.blessed {
            writeln!(out, "BLESSED {}: rewrote the EXACT block of {}", r.name, file.display())?;
        }
        match &r.status {
            Status::Passed => s.passed += 1,
            Status::Unsupported(_) => s.unsupported += 1,
            Status::Failed(f) => {
                s.failed += 1;
                let at = if f.line > 0 { format!("{}:{}", r.name, f.line) } else { r.name.clone() };
                if f.run.is_empty() {
                    writeln!(out, "FAIL {at}: {}", f.reason)?;
                } else {
                    writeln!(out, "FAIL {at}: RUN: {}: {}", f.run, f.reason)?;
                }
                for line in f.details.lines() {
                    writeln!(out, "    {line}")?;
                }
            }
        }
    }
    writeln!(out, "{} passed, {} failed, {} unsupported", s.passed, s.failed, s.unsupported)?;
    Ok(s)
}
