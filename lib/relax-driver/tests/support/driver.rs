//! Running `relax-opt` in process on one input and checking what it did, for the
//! robustness tests (`robustness.rs`, `malformed.rs`): the exit status, the form of every
//! line of standard error, and that accepted input prints text that reads back the same.
//! The corpus tests (`fusion_corpus.rs`, `legalize_corpus.rs`) run `relax-opt` through
//! [`run_opt_with`].

#![allow(dead_code, reason = "each includer uses a different part")]

use std::time::{Duration, Instant};

/// Runs `relax-opt -` on `input`; returns (status, stdout, stderr).
pub fn run_opt(input: &[u8]) -> (i32, String, String) {
    run_opt_with(input, &[])
}

/// Runs `relax-opt - FLAGS...` on `input`; returns (status, stdout, stderr).
pub fn run_opt_with(input: &[u8], flags: &[&str]) -> (i32, String, String) {
    let mut stdin = input;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut args: Vec<std::ffi::OsString> = vec!["relax-opt".into(), "-".into()];
    args.extend(flags.iter().map(Into::into));
    let status = {
        let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
        relax_driver::opt_main(args, &mut io)
    };
    (status, String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

const SEVERITIES: &[&str] = &["error", "warning", "note", "remark"];

/// `<stdin>:LINE:COL: SEVERITY: ` or `SEVERITY: <stdin>: `; returns the severity.
pub fn header_severity(line: &str) -> Option<&'static str> {
    if let Some(rest) = line.strip_prefix("<stdin>:") {
        let (l, rest) = rest.split_once(':')?;
        let (c, rest) = rest.split_once(": ")?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(l) || !digits(c) {
            return None;
        }
        return SEVERITIES.iter().copied().find(|s| rest.starts_with(&format!("{s}: ")));
    }
    SEVERITIES.iter().copied().find(|s| line.starts_with(&format!("{s}: <stdin>: ")))
}

/// A line of a rendered snippet: `  │`, `3 │ text`, `  │  ^^^ label`, `  = note: ...`.
pub fn is_snippet_line(line: &str) -> bool {
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches(' ');
    line.starts_with(' ') || line.is_empty() || rest.starts_with('│')
}

/// Checks one input; `Err` says what is wrong.
pub fn check(input: &str) -> Result<(), String> {
    check_bytes(input.as_bytes())
}

/// Checks one input, which need not be UTF-8; `Err` says what is wrong.
pub fn check_bytes(input: &[u8]) -> Result<(), String> {
    check_with(input, &[])
}

/// Checks one run of `relax-opt - FLAGS...`. With `--split-input-file` the output holds
/// several modules and is not read back.
pub fn check_with(input: &[u8], flags: &[&str]) -> Result<(), String> {
    let start = Instant::now();
    let result = std::panic::catch_unwind(|| run_opt_with(input, flags));
    let took = start.elapsed();
    let Ok((status, stdout, stderr)) = result else {
        return Err("relax-opt panicked".into());
    };
    // A guard against hangs, not a speed test: far above any input's time on a loaded
    // machine.
    if took > Duration::from_secs(30) {
        return Err(format!("took {took:?}"));
    }
    if status != 0 && status != 1 {
        return Err(format!("exit status {status}"));
    }
    let mut errors = 0;
    for line in stderr.lines() {
        match header_severity(line) {
            Some(sev) => errors += usize::from(sev == "error"),
            None if is_snippet_line(line) => {}
            None => return Err(format!("a stderr line is neither a diagnostic nor part of one: {line:?}\n{stderr}")),
        }
    }
    if status == 1 && errors == 0 {
        return Err(format!("exit status 1 without an error:\n{stderr}"));
    }
    if status == 0 {
        if errors > 0 {
            return Err(format!("exit status 0 with an error:\n{stderr}"));
        }
        if flags.contains(&"--split-input-file") {
            return Ok(());
        }
        let again = relax_parser::parse_module(&stdout)
            .map_err(|d| format!("the output does not parse again: {:?}\n{stdout}", d.first().map(|d| &d.message)))?;
        let second = relax_ir::printer::print_module(&again);
        if second != stdout {
            let line = stdout.lines().zip(second.lines()).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!(
                "printing is not idempotent at line {}:\n  first:  {}\n  second: {}",
                line + 1,
                stdout.lines().nth(line).unwrap_or(""),
                second.lines().nth(line).unwrap_or("")
            ));
        }
    }
    Ok(())
}
