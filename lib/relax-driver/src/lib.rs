//! The drivers behind `relax-opt`, `relax-run` and `relax-translate`.
//!
//! Each driver is a plain function over an argument vector and an [`Io`] bundle, so the
//! binaries under `tools/` and the test runner call the very same code: the binaries pass
//! the process's stdio, the runner passes in-memory buffers.

mod cli;
pub mod expected;
mod generate;
mod gpu;
pub mod ir_text;
#[cfg(feature = "llvm")]
mod library;
#[cfg(feature = "llvm")]
mod link;
pub mod llm;
pub mod lowering;
mod opt;
pub mod pipeline;
pub mod render;
mod run;
mod runner;
pub mod source;
mod translate;
pub mod unlowered;
pub mod verify_semantics;
pub mod weights;

use std::ffi::OsString;
use std::io::{Read, Write};

pub use gpu::cuda_device;
pub use opt::opt_main;
pub use run::run_main;
pub use translate::translate_main;

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

/// The `main` of the binaries under `tools/`: runs `tool` over the process's arguments and
/// stdio, and turns a panic into the message `NAME: error: internal error: the WHAT
/// panicked; ...` and exit status 1.
pub fn process_main(tool: ToolMain, name: &str, what: &str) -> std::process::ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    let code = on_large_stack(|| {
        std::panic::catch_unwind(|| {
            let mut stdin = std::io::stdin().lock();
            let mut stdout = std::io::stdout().lock();
            let mut stderr = std::io::stderr().lock();
            let mut io = Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
            tool(args, &mut io)
        })
    })
    .unwrap_or_else(|_| {
        eprintln!("{name}: error: internal error: the {what} panicked; please report this input");
        1
    });
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The stack of [`on_large_stack`]'s thread: 1 GiB of address space, of which only the
/// pages a deep input touches are ever committed.
pub const LARGE_STACK: usize = 1 << 30;

/// Runs `f` on a thread with a [`LARGE_STACK`] and returns its result (a panic resumes in
/// the caller). Parsing, passes, the interpreter and code generation recurse over
/// expression trees, which the parser lets nest up to `relax_parser::layout::MAX_NESTING`
/// levels; the tools and the in-process test runner call the drivers through this.
pub fn on_large_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new().stack_size(LARGE_STACK).spawn_scoped(s, f);
        match handle {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(e) => {
                eprintln!("error: cannot start a thread for the compiler: {e}");
                std::process::exit(1)
            }
        }
    })
}

/// The tools the drivers implement, by command name.
pub fn tools() -> &'static [(&'static str, ToolMain)] {
    &[("relax-opt", opt_main), ("relax-run", run_main), ("relax-translate", translate_main)]
}

/// The `--version` text of the tools: the version and the backends built in, which
/// `test/lit.cfg.py` reads for the `llvm` and `spirv` lit features.
pub(crate) const LONG_VERSION: &str = match (cfg!(feature = "llvm"), cfg!(feature = "spirv")) {
    (true, true) => concat!(env!("CARGO_PKG_VERSION"), " (backends: llvm, spirv)"),
    (true, false) => concat!(env!("CARGO_PKG_VERSION"), " (backends: llvm)"),
    (false, true) => concat!(env!("CARGO_PKG_VERSION"), " (backends: spirv)"),
    (false, false) => concat!(env!("CARGO_PKG_VERSION"), " (backends: none)"),
};

/// The backends this build includes (`llvm`, `spirv`), for the test runner's
/// `REQUIRES:` features.
pub fn features() -> &'static [&'static str] {
    relax_codegen::features()
}

/// Parses, prints, parses and prints again; `Err` says how the two prints differ, or why
/// the first print does not parse. Used by the test runner's idempotence check on every
/// test input that parses.
pub fn roundtrip_check(_path: &std::path::Path, text: &str) -> Result<(), String> {
    on_large_stack(|| roundtrip(text))
}

fn roundtrip(text: &str) -> Result<(), String> {
    let Ok(m) = relax_parser::parse_module(text) else { return Ok(()) };
    let first = ir_text::print_module(&m);
    let m2 = relax_parser::parse_module(&first)
        .map_err(|d| format!("the printed module does not parse: {}", d.first().map_or("", |x| x.message.as_str())))?;
    let second = ir_text::print_module(&m2);
    if first == second {
        return Ok(());
    }
    let line = first.lines().zip(second.lines()).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!(
        "printing is not idempotent at line {}:\n  first:  {}\n  second: {}",
        line + 1,
        first.lines().nth(line).unwrap_or(""),
        second.lines().nth(line).unwrap_or("")
    ))
}
