//! `relax-lsp`: the relax language server over stdio (`relax_lsp::run`).
//!
//! Editors start it with no arguments (VS Code's client adds `--stdio`, which is
//! accepted). The exit status is 0 after `shutdown` and `exit`, 1 otherwise.

use std::process::ExitCode;

fn main() -> ExitCode {
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--stdio" => {}
            "--version" | "-V" => {
                println!("relax-lsp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            "--help" | "-h" => {
                println!("relax-lsp: the relax language server; speaks LSP on stdin and stdout (see docs/editor.md)");
                return ExitCode::SUCCESS;
            }
            other => eprintln!("relax-lsp: warning: ignoring argument `{other}`"),
        }
    }
    let (connection, io_threads) = lsp_server::Connection::stdio();
    let result = relax_lsp::run(connection);
    let joined = io_threads.join();
    match (result, joined) {
        (Ok(relax_lsp::Exit::Clean), Ok(())) => ExitCode::SUCCESS,
        (Ok(relax_lsp::Exit::Abrupt), _) => ExitCode::from(1),
        (Err(e), _) => {
            eprintln!("relax-lsp: error: {e}");
            ExitCode::from(1)
        }
        (_, Err(e)) => {
            eprintln!("relax-lsp: error: {e}");
            ExitCode::from(1)
        }
    }
}
