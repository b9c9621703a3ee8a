//! The `relax-lsp` binary speaks LSP over stdio: Content-Length framed JSON-RPC. A whole
//! session: initialize, a diagnostic on open, cleared by a fix, hover, definition,
//! formatting, shutdown and exit with status 0.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The client end of the pipes.
struct Pipes {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Pipes {
    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut len = None;
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = Some(v.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; len.expect("a Content-Length header")];
        std::io::Read::read_exact(&mut self.stdout, &mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its result (the server sends nothing else meanwhile).
    fn request(&mut self, id: u32, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let r = self.recv();
        assert_eq!(r["id"], id, "{r}");
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }
}

const URI: &str = "file:///t.rlx";

fn at(line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}})
}

#[test]
fn a_session_over_stdio() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_relax-lsp"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut p = Pipes { stdin: child.stdin.take().unwrap(), stdout: BufReader::new(child.stdout.take().unwrap()) };

    let init = p.request(1, "initialize", json!({"processId": null, "rootUri": null, "capabilities": {}}));
    assert_eq!(init["serverInfo"]["name"], "relax-lsp");
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    p.notify("initialized", json!({}));

    let text = "@R.function\ndef f(x: R.Tensor((4,), dtype=\"float32\")):\n    y = R.foo(x)\n    return y\n";
    let doc = json!({"uri": URI, "languageId": "relax", "version": 1, "text": text});
    p.notify("textDocument/didOpen", json!({ "textDocument": doc }));
    let diags = p.recv();
    assert_eq!(diags["method"], "textDocument/publishDiagnostics");
    assert_eq!(diags["params"]["diagnostics"][0]["message"], "unknown op `R.foo`");
    assert_eq!(diags["params"]["diagnostics"][0]["range"]["start"], json!({"line": 2, "character": 8}));

    let fixed = text.replace("R.foo(x)", "R.exp(x)");
    let change = json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": fixed}]});
    p.notify("textDocument/didChange", change);
    assert_eq!(p.recv()["params"]["diagnostics"], json!([]));

    let hover = p.request(2, "textDocument/hover", at(3, 11));
    assert!(hover["contents"]["value"].as_str().unwrap().contains("y: R.Tensor((4,), dtype=\"float32\")"), "{hover}");
    let call = p.request(3, "textDocument/hover", at(2, 11));
    assert!(call["contents"]["value"].as_str().unwrap().contains("R.exp(x) -> R.Tensor((4,)"), "{call}");
    let def = p.request(4, "textDocument/definition", at(3, 11));
    assert_eq!(def["range"]["start"], json!({"line": 2, "character": 4}));
    let options = json!({"tabSize": 4, "insertSpaces": true});
    let edits = p.request(5, "textDocument/formatting", json!({"textDocument": {"uri": URI}, "options": options}));
    let new_text = edits[0]["newText"].as_str().unwrap();
    assert!(new_text.starts_with("# from tvm.script import relax as R\n\n@R.function\n"), "{new_text}");

    assert_eq!(p.request(6, "shutdown", Value::Null), Value::Null);
    p.notify("exit", Value::Null);
    drop(p);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn version_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_relax-lsp")).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("relax-lsp "));
}
