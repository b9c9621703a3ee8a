//! `relax-gguf`: generates random-weight GGUF models (`gen`) and dumps GGUF files (`info`).
//!
//! Errors are `relax-gguf: error: MESSAGE` on standard error with exit status 1; the tool
//! never panics (an internal error would be reported the same way).

mod gen_cmd;
mod info;

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "relax-gguf", version, about = "Generate random GGUF models and dump GGUF files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write a Llama / Qwen2 model with random weights and a synthetic vocabulary.
    Gen(Box<gen_cmd::GenArgs>),
    /// Print a GGUF file's header, metadata and tensor table.
    Info(info::InfoArgs),
}

/// Runs the tool on `args`; returns the exit status.
fn run(args: Vec<OsString>, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    let _ = stdout.write_all(text.as_bytes());
                    0
                }
                _ => {
                    let _ = stderr.write_all(text.as_bytes());
                    1
                }
            };
        }
    };
    let result = match cli.command {
        Command::Gen(a) => gen_cmd::run(*a, stdout),
        Command::Info(a) => info::run(a, stdout),
    };
    match result {
        Ok(()) => 0,
        Err(msg) => {
            let _ = writeln!(stderr, "relax-gguf: error: {msg}");
            1
        }
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let code = std::panic::catch_unwind(|| {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        run(args, &mut out, &mut err)
    })
    .unwrap_or_else(|_| {
        eprintln!("relax-gguf: error: internal error: the tool panicked; please report this input");
        1
    });
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}
