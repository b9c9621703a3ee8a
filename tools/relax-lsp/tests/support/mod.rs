//! A test client that spawns the real `relax-lsp` binary and speaks LSP to it over its
//! stdin and stdout: `Content-Length` framed JSON-RPC, as an editor does. A reader thread
//! parses the frames, so a server that hangs or dies fails the test after a timeout
//! instead of blocking it.

#![allow(dead_code, reason = "each test file uses part of the client")]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long to wait for any one message.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The client end of a session with a `relax-lsp` process.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: u64,
    /// Notifications received while waiting for a response.
    pending: VecDeque<Value>,
    /// The `initialize` result.
    pub init: Value,
}

/// Reads one framed message; `None` at the end of the stream.
fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap_or_else(|| panic!("bad header line `{line}`"));
        if name.eq_ignore_ascii_case("content-length") {
            len = Some(value.trim().parse::<usize>().expect("a numeric Content-Length"));
        }
    }
    let mut body = vec![0; len.expect("a Content-Length header")];
    r.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("the body is JSON"))
}

impl Server {
    /// Spawns the server and completes the initialize handshake.
    pub fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_relax-lsp"))
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("relax-lsp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(v) = read_frame(&mut r) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Server { child, stdin, incoming, next_id: 0, pending: VecDeque::new(), init: Value::Null };
        let init = s.request("initialize", json!({"processId": null, "rootUri": null, "capabilities": {}}));
        s.init = init.expect("initialize succeeds");
        s.notify("initialized", json!({}));
        s
    }

    /// Sends one framed message.
    pub fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        let stdin = self.stdin.as_mut().expect("stdin is open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self, what: &str) -> Value {
        match self.incoming.recv_timeout(TIMEOUT) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("no {what} within {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout while waiting for {what}"),
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error)`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv(&format!("response to {method}"));
            if m.get("id").is_some() && m.get("method").is_none() {
                assert_eq!(m["id"], id, "a response to another request: {m}");
                return match m.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(m["result"].clone()),
                };
            }
            assert!(m.get("id").is_none(), "the server sent a request: {m}");
            self.pending.push_back(m);
        }
    }

    /// Sends a request and returns its result, failing on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// The next `textDocument/publishDiagnostics` for `uri`: its diagnostics.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let m = match self.pending.iter().position(|n| n["method"] == "textDocument/publishDiagnostics") {
                Some(i) => self.pending.remove(i).unwrap(),
                None => {
                    assert!(Instant::now() < deadline, "no diagnostics for {uri}");
                    let m = self.recv("diagnostics");
                    if m["method"] != "textDocument/publishDiagnostics" {
                        self.pending.push_back(m);
                        continue;
                    }
                    m
                }
            };
            if m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            }
        }
    }

    /// Opens a document and returns its diagnostics.
    pub fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let doc = json!({"uri": uri, "languageId": "relax", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
        self.diagnostics(uri)
    }

    /// Replaces a document's text (full sync) and returns its diagnostics.
    pub fn change(&mut self, uri: &str, version: i32, text: &str) -> Vec<Value> {
        let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
        self.notify("textDocument/didChange", change);
        self.diagnostics(uri)
    }

    /// `textDocument/hover`: the markdown text, if any.
    pub fn hover(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<String> {
        let r = self.call("textDocument/hover", pos_params(uri, line, character));
        r["contents"]["value"].as_str().map(str::to_string)
    }

    /// `textDocument/definition`: the target range, if any.
    pub fn definition(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<(u64, u64, u64, u64)> {
        let r = self.call("textDocument/definition", pos_params(uri, line, character));
        if r.is_null() {
            return None;
        }
        assert_eq!(r["uri"], uri, "{r}");
        Some(range(&r["range"]))
    }

    /// `textDocument/formatting`.
    pub fn format(&mut self, uri: &str) -> Result<Value, Value> {
        let options = json!({"tabSize": 4, "insertSpaces": true});
        self.request("textDocument/formatting", json!({"textDocument": {"uri": uri}, "options": options}))
    }

    /// `shutdown`, `exit`; returns the exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        assert_eq!(self.call("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.stdin = None;
        self.child.wait().unwrap()
    }
}

impl Server {
    /// Closes stdin without `shutdown` and returns the exit status.
    pub fn shutdown_abruptly(mut self) -> ExitStatus {
        self.stdin = None;
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A failed test must not leave the process behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Parameters of a position request.
pub fn pos_params(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// An LSP range as `(start line, start character, end line, end character)`.
pub fn range(r: &Value) -> (u64, u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap();
    (n(&r["start"]["line"]), n(&r["start"]["character"]), n(&r["end"]["line"]), n(&r["end"]["character"]))
}

/// The text of `range` in `text` (UTF-16 columns).
pub fn slice(text: &str, (l0, c0, l1, c1): (u64, u64, u64, u64)) -> String {
    let offset = |line: u64, ch: u64| {
        let start: usize = text.split_inclusive('\n').take(line as usize).map(str::len).sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= ch as usize || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    text[offset(l0, c0)..offset(l1, c1)].to_string()
}
