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
    // Analysis recurses over expression trees as deep as the parser allows (1000 levels):
    // run it on a thread with a large stack, as the other tools do.
    let server = std::thread::Builder::new().stack_size(1 << 30).spawn(move || relax_lsp::run(connection));
    let result = match server.map(|h| h.join()) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(e) => {
            eprintln!("relax-lsp: error: cannot start the server thread: {e}");
            return ExitCode::from(1);
        }
    };
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
