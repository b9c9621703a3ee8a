//! The command-line plumbing shared by `relax-opt`, `relax-run` and `relax-translate`:
//! clap errors, `--color`, reading the input, and diagnostics without a source line.

use relax_ir::Diagnostic;

use crate::Io;
use crate::render::render_all;
use crate::source::SourceFile;

/// Writes `TOOL: error: MSG` to standard error; returns the exit status 1.
pub(crate) fn fail(io: &mut Io<'_>, tool: &str, msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(io.stderr, "{tool}: error: {msg}");
    1
}

/// Handles a clap parse failure: `--help` and `--version` go to standard output with
/// status 0, every other error to standard error with status 1.
pub(crate) fn clap_exit(e: &clap::Error, io: &mut Io<'_>) -> i32 {
    let text = e.render().to_string();
    match e.kind() {
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
            let _ = io.stdout.write_all(text.as_bytes());
            0
        }
        _ => {
            let _ = io.stderr.write_all(text.as_bytes());
            1
        }
    }
}

/// The first argument that is not UTF-8, as an error naming it (clap's own message does
/// not say which); the tools take text paths and values.
pub(crate) fn non_utf8_arg(tool: &str, args: &[std::ffi::OsString]) -> Option<String> {
    let (i, a) = args.iter().enumerate().skip(1).find(|(_, a)| a.to_str().is_none())?;
    Some(format!(
        "{tool}: error: argument {i} (`{}`) is not valid UTF-8: file names and values must be UTF-8\n",
        a.to_string_lossy()
    ))
}

/// The value of `--color`: `never` or `auto` is false, `always` true.
pub(crate) fn parse_color(when: &str) -> Result<bool, String> {
    match when {
        "never" | "auto" => Ok(false),
        "always" => Ok(true),
        other => Err(format!("invalid value `{other}` for `--color` (never, always)")),
    }
}

/// Reads the input file, or standard input when it is `-` or absent: its display name
/// and its bytes.
pub(crate) fn read_input_bytes(input: Option<&str>, io: &mut Io<'_>) -> Result<(String, Vec<u8>), String> {
    match input {
        None | Some("-") => {
            let mut b = Vec::new();
            io.stdin.read_to_end(&mut b).map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(("<stdin>".to_string(), b))
        }
        Some(path) => Ok((path.to_string(), std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?)),
    }
}

/// Reads the input file or standard input as UTF-8 text.
pub(crate) fn read_input(input: Option<&str>, io: &mut Io<'_>) -> Result<SourceFile, String> {
    let (name, bytes) = read_input_bytes(input, io)?;
    let text = String::from_utf8(bytes).map_err(|_| format!("`{name}` is not valid UTF-8"))?;
    Ok(SourceFile::new(&name, text))
}

/// Renders one diagnostic: at its source line when it has a span, else as
/// `TOOL: error: MSG` with its notes.
pub(crate) fn render_diagnostic(tool: &str, file: &SourceFile, d: &Diagnostic, color: bool) -> String {
    if d.span.is_none() {
        let mut text = format!("{tool}: error: {}\n", d.message);
        for n in &d.notes {
            text.push_str(&format!("  = {n}\n"));
        }
        return text;
    }
    render_all(file, std::slice::from_ref(d), color)
}

/// Writes diagnostics to standard error (see [`render_diagnostic`]).
pub(crate) fn report(io: &mut Io<'_>, tool: &str, file: &SourceFile, diags: &[Diagnostic], color: bool) {
    for d in diags {
        let _ = io.stderr.write_all(render_diagnostic(tool, file, d, color).as_bytes());
    }
}
