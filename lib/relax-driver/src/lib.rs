//! The drivers behind `relax-opt`, `relax-run` and `relax-translate`.
//!
//! Each driver is a plain function over an argument vector and an [`Io`] bundle, so the
//! binaries under `tools/` and the test runner call the very same code: the binaries pass
//! the process's stdio, the runner passes in-memory buffers.

use std::ffi::OsString;
use std::io::{Read, Write};

/// The standard streams a driver reads and writes.
pub struct Io<'a> {
    /// Standard input (read only when the input file is `-` or absent).
    pub stdin: &'a mut dyn Read,
    /// Standard output.
    pub stdout: &'a mut dyn Write,
    /// Standard error: diagnostics.
    pub stderr: &'a mut dyn Write,
}

/// The signature shared by every driver: `args[0]` is the program name; the result is the
/// process exit status.
pub type ToolMain = fn(args: Vec<OsString>, io: &mut Io<'_>) -> i32;

/// `relax-opt`: parse, verify, run passes, print.
pub fn opt_main(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    // Placeholder body replaced by the real driver; echoes its input.
    let mut text = Vec::new();
    let path = args.get(1).cloned();
    match path {
        Some(p) if p != "-" => match std::fs::read(&p) {
            Ok(t) => text = t,
            Err(e) => {
                let _ = writeln!(io.stderr, "error: cannot read {}: {e}", p.to_string_lossy());
                return 1;
            }
        },
        _ => {
            if io.stdin.read_to_end(&mut text).is_err() {
                return 1;
            }
        }
    }
    if io.stdout.write_all(&text).is_err() {
        return 1;
    }
    0
}

/// The tools the drivers implement, by command name.
pub fn tools() -> &'static [(&'static str, ToolMain)] {
    &[("relax-opt", opt_main)]
}
