//! The FileCheck front: LLVM FileCheck-19's syntax and semantics, run in process.
//!
//! The front reads the same command line and check files as `FileCheck-19` and aims to give
//! the same verdict on every input (a differential test holds it to that). It implements the
//! matcher itself rather than mapping onto the `filecheck` crate: that crate's checker only
//! answers yes or no, so it cannot express FileCheck's labels, `-NEXT` line counting or
//! non-overlapping `-DAG` groups.
//!
//! Exit status as FileCheck's: 0 when the checks pass, 1 when they fail, 2 for a bad
//! command line, an unreadable or malformed check file, or an empty input.
//! A check prefix named `EXACT` switches on EXACT mode (see [`crate::exact`]).

mod diag;
mod directives;
mod matcher;
mod options;
mod pattern;
mod posix;
mod syntax;

use std::path::{Path, PathBuf};

pub use diag::{Source, canonicalize};
pub use directives::{Check, scan};
pub use options::{Options, parse as parse_options};
pub use pattern::{Kind, Pattern};

use crate::exact;

/// One FileCheck invocation.
pub struct Invocation<'a> {
    /// Arguments after the program name.
    pub args: &'a [String],
    /// Standard input (the output under test, unless `--input-file` is given).
    pub stdin: &'a [u8],
    /// Directory that relative paths are read from.
    pub cwd: &'a Path,
    /// Whether a failing EXACT block may be rewritten in place (`RELAX_TEST_BLESS=1`).
    pub bless: bool,
}

/// What a FileCheck invocation did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Exit status: 0 pass, 1 checks failed, 2 usage or input error.
    pub code: i32,
    /// Diagnostics, as FileCheck writes them to stderr.
    pub stderr: String,
    /// The check file whose EXACT block was rewritten, if blessing happened.
    pub blessed: Option<PathBuf>,
}

impl Outcome {
    fn error(code: i32, stderr: String) -> Self {
        Self { code, stderr, blessed: None }
    }
}

/// Runs FileCheck with `inv`'s arguments on its stdin.
pub fn run(inv: &Invocation) -> Outcome {
    let opts = match options::parse(inv.args) {
        Ok(o) => o,
        Err(e) => return Outcome::error(2, format!("FileCheck: {e}\n")),
    };
    if let Err(e) = exact::validate_options(&opts) {
        return Outcome::error(2, format!("FileCheck: {e}\n"));
    }
    let check_path = inv.cwd.join(&opts.check_file);
    let raw_check = match std::fs::read(&check_path) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(e) => {
            let msg = format!("Could not open check file '{}': {e}\n", opts.check_file);
            return Outcome::error(2, msg);
        }
    };
    let check_text = canonicalize(&raw_check, opts.strict_whitespace);
    let chk = Source::new(&opts.check_file, &check_text);
    let bless = inv.bless && exact::is_exact(&opts);
    let checks = match scan(&chk, &opts) {
        Ok(c) => c,
        // A test without an EXACT block yet: blessing writes one.
        Err((usize::MAX, _)) if bless => Vec::new(),
        Err((off, msg)) if off == usize::MAX => return Outcome::error(2, format!("error: {msg}\n")),
        Err((off, msg)) => return Outcome::error(2, chk.render(off, "error", &msg)),
    };
    if let Err((off, msg)) = exact::validate_checks(&opts, &checks) {
        return Outcome::error(2, chk.render(off, "error", &msg));
    }
    let (input_name, raw_input) = match read_input(inv, &opts) {
        Ok(x) => x,
        Err(e) => return Outcome::error(2, e),
    };
    if raw_input.is_empty() && !opts.allow_empty {
        return Outcome::error(2, format!("FileCheck error: '{input_name}' is empty.\n"));
    }
    let input_text = canonicalize(&raw_input, opts.strict_whitespace);
    let input = Source::new(&input_name, &input_text);
    let mut m = matcher::Matcher::new(&chk, &input);
    if !checks.is_empty() && m.run(&checks) {
        return Outcome::default();
    }
    let mut out = Outcome::error(1, m.errors);
    if exact::is_exact(&opts) {
        out.stderr.push_str(&exact::diff(&checks, &raw_input));
        if bless {
            match exact::bless(&check_path, &raw_input) {
                Ok(()) => return Outcome { code: 0, stderr: String::new(), blessed: Some(check_path) },
                Err(e) => out.stderr.push_str(&format!("cannot bless: {e}\n")),
            }
        }
    }
    out
}

/// The input's display name and text.
fn read_input(inv: &Invocation, opts: &Options) -> Result<(String, String), String> {
    match opts.input_file.as_deref() {
        None | Some("-") => Ok(("<stdin>".into(), String::from_utf8_lossy(inv.stdin).into_owned())),
        Some(file) => match std::fs::read(inv.cwd.join(file)) {
            Ok(t) => Ok((file.to_string(), String::from_utf8_lossy(&t).into_owned())),
            Err(e) => Err(format!("Could not open input file '{file}': {e}\n")),
        },
    }
}
