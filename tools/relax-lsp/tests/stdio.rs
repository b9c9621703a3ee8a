//! The `relax-lsp` binary speaks LSP over stdio: Content-Length framed JSON-RPC. A whole
//! session: initialize, a diagnostic on open, cleared by a fix, hover, definition,
//! formatting, position edge cases, shutdown and exit with status 0.

mod support;

use serde_json::{Value, json};
use support::{LspClient, Server};

const URI: &str = "file:///t.rlx";

#[test]
fn a_session_over_stdio() {
    let mut s = Server::start();
    assert_eq!(s.init["serverInfo"]["name"], "relax-lsp");
    assert_eq!(s.init["capabilities"]["hoverProvider"], true);
    assert_eq!(s.init["capabilities"]["positionEncoding"], "utf-16");

    let text = "@R.function\ndef f(x: R.Tensor((4,), dtype=\"float32\")):\n    y = R.foo(x)\n    return y\n";
    let diags = s.open(URI, text);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["message"], "unknown op `R.foo`");
    assert_eq!(diags[0]["range"]["start"], json!({"line": 2, "character": 8}));

    let fixed = text.replace("R.foo(x)", "R.exp(x)");
    assert_eq!(s.change(URI, 2, &fixed), Vec::<Value>::new());

    let hover = s.hover(URI, (3, 11)).unwrap();
    assert!(hover.contains("y: R.Tensor((4,), dtype=\"float32\")"), "{hover}");
    let call = s.hover(URI, (2, 11)).unwrap();
    assert!(call.contains("R.exp(x) -> R.Tensor((4,)"), "{call}");
    assert_eq!(s.definition(URI, (3, 11)), Some((2, 4, 2, 5)));
    let edits = s.format(URI).unwrap();
    let new_text = edits[0]["newText"].as_str().unwrap();
    assert!(new_text.starts_with("# from tvm.script import relax as R\n\n@R.function\n"), "{new_text}");

    assert!(s.shutdown().success());
}

#[test]
fn position_edge_cases() {
    let mut s = Server::start();
    // Line 3 is `    return y` (12 characters); line 4 is empty, the last line.
    let text = "@R.function\ndef f(x: R.Tensor((4,), dtype=\"float32\")):\n    y = R.exp(x)\n    return y\n";
    assert!(s.open(URI, text).is_empty());
    // The end of a line, right after a word: the word.
    assert!(s.hover(URI, (3, 12)).unwrap().contains("y: R.Tensor((4,)"));
    assert_eq!(s.definition(URI, (3, 12)), Some((2, 4, 2, 5)));
    // Past the end of the line: clamped to its end.
    assert!(s.hover(URI, (3, 500)).unwrap().contains("y: R.Tensor((4,)"));
    assert_eq!(s.definition(URI, (3, u32::MAX)), Some((2, 4, 2, 5)));
    // The empty last line, and lines past the end of the file: nothing, and no error.
    for pos in [(4, 0), (4, 7), (5, 0), (1000, 3), (u32::MAX, u32::MAX)] {
        assert_eq!(s.hover(URI, pos), None, "{pos:?}");
        assert_eq!(s.definition(URI, pos), None, "{pos:?}");
    }
    // The start of the file, on the decorator's `@`: no word.
    assert_eq!(s.hover(URI, (0, 0)), None);
    // Negative or missing positions are invalid parameters, not a crash.
    let bad = json!({"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}});
    assert_eq!(s.request("textDocument/hover", bad).unwrap_err()["code"], -32602);
    // An empty document: no diagnostics, no symbols, nothing under the cursor.
    let empty = "file:///empty.rlx";
    assert!(s.open(empty, "").is_empty());
    assert_eq!(s.hover(empty, (0, 0)), None);
    assert_eq!(s.call("textDocument/documentSymbol", json!({"textDocument": {"uri": empty}})), json!([]));
    // Columns are UTF-16 code units: `𝄞` (4 bytes) counts 2, `é` (2 bytes) counts 1.
    let wide = "file:///wide.rlx";
    let t = "@R.function\ndef f(x: R.Tensor((4,), dtype=\"float32\")):\n    y = R.call_pure_packed(\"é𝄞\", x, sinfo_args=(R.Object,))\n    return y\n";
    assert!(s.open(wide, t).is_empty());
    let x_col = "    y = R.call_pure_packed(\"é𝄞\", ".encode_utf16().count() as u32;
    assert_eq!(x_col, 34, "33 characters, 36 bytes");
    assert!(s.hover(wide, (2, x_col)).unwrap().contains("x: R.Tensor((4,)"));
    assert_eq!(s.definition(wide, (2, x_col)), Some((1, 6, 1, 7)));
    // A diagnostic after them: an undefined variable in a module.
    let m = format!("@I.ir_module\nclass M:\n{}", t.lines().map(|l| format!("    {l}\n")).collect::<String>());
    let d = s.change(wide, 2, &m.replace(", x, ", ", z, "));
    assert_eq!(d[0]["message"], "undefined variable `z`");
    let z = x_col as u64 + 4;
    assert_eq!(support::range(&d[0]["range"]), (4, z, 4, z + 1));
    // A CRLF document: columns ignore the `\r`.
    let crlf = "file:///crlf.rlx";
    assert!(s.open(crlf, &text.replace('\n', "\r\n")).is_empty());
    assert!(s.hover(crlf, (3, 400)).unwrap().contains("y: R.Tensor((4,)"));
    assert!(s.shutdown().success());
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let mut s = Server::start();
    s.notify("exit", Value::Null);
    let status = s.shutdown_abruptly();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn version_flag() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relax-lsp")).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("relax-lsp "));
}
