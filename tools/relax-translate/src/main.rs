//! `relax-translate`: the thin binary over `relax_driver::translate_main`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    let code = std::panic::catch_unwind(|| {
        let mut stdin = std::io::stdin().lock();
        let mut stdout = std::io::stdout().lock();
        let mut stderr = std::io::stderr().lock();
        let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
        relax_driver::translate_main(args, &mut io)
    })
    .unwrap_or_else(|_| {
        eprintln!("relax-translate: error: internal error: the translator panicked; please report this input");
        1
    });
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
