//! The server's diagnostics are `relax-opt`'s: for test files full of errors (parser,
//! lowering, type inference, verifier; split by `# -----` or not), the diagnostics
//! published over LSP have the CLI's messages at the CLI's lines and columns.

mod support;

use std::path::{Path, PathBuf};

use support::{Client, LspClient, range};

/// Runs `relax-opt` in process and returns its diagnostic headers as
/// `(0-based line, UTF-16 column, severity, message)`.
fn cli_diagnostics(path: &Path, text: &str) -> Vec<(u64, u64, String, String)> {
    let mut args: Vec<std::ffi::OsString> = vec!["relax-opt".into(), path.into()];
    if text.lines().any(|l| l.trim_end().starts_with("# -----")) {
        args.push("--split-input-file".into());
    }
    let (mut stdin, mut stdout, mut stderr) = (std::io::empty(), Vec::new(), Vec::new());
    let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    relax_driver::opt_main(args, &mut io);
    let stderr = String::from_utf8(stderr).unwrap();
    let prefix = format!("{}:", path.display());
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    for l in stderr.lines() {
        let Some(rest) = l.strip_prefix(&prefix) else { continue };
        let mut parts = rest.splitn(3, ':');
        let (Some(line), Some(col), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("no location in `{l}`")
        };
        let (line, col): (usize, usize) = (line.parse().unwrap(), col.parse().unwrap());
        let (sev, msg) = tail.trim_start().split_once(": ").unwrap();
        // The CLI counts characters; LSP counts UTF-16 units.
        let src = lines.get(line - 1).copied().unwrap_or("");
        let utf16: usize = src.chars().take(col - 1).map(char::len_utf16).sum();
        out.push(((line - 1) as u64, utf16 as u64, sev.to_string(), msg.to_string()));
    }
    out
}

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut v = vec![
        root.join("test/Verifier/errors.rlx"),
        root.join("test/Verifier/relax.rlx"),
        root.join("test/Parser/infer/errors.rlx"),
        root.join("lib/relax-lsp/tests/data/dataflow-escape.rlx"),
    ];
    let mut parser_errors: Vec<PathBuf> = std::fs::read_dir(root.join("test/Parser/errors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rlx"))
        .collect();
    parser_errors.sort();
    v.extend(parser_errors);
    v.retain(|p| p.exists());
    v
}

#[test]
fn published_diagnostics_are_the_clis() {
    let mut c = Client::start();
    let mut total = 0;
    for path in files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = cli_diagnostics(&path, &text);
        let uri = format!("file://{}", path.display());
        let got: Vec<(u64, u64, String, String)> = c
            .open(&uri, &text)
            .iter()
            .map(|d| {
                let (l, ch, _, _) = range(&d["range"]);
                let sev = match d["severity"].as_u64() {
                    Some(1) => "error",
                    Some(2) => "warning",
                    Some(3) => "note",
                    _ => "remark",
                };
                (l, ch, sev.to_string(), d["message"].as_str().unwrap().to_string())
            })
            .collect();
        assert_eq!(got, expected, "{}", path.display());
        total += expected.len();
    }
    assert!(total > 20, "only {total} diagnostics compared");
    assert_eq!(c.shutdown(), relax_lsp::Exit::Clean);
}
