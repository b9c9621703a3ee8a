//! A test client that spawns the real `relax-lsp` binary and speaks LSP to it over its
//! stdin and stdout: `Content-Length` framed JSON-RPC, as an editor does. A reader thread
//! parses the frames, so a server that hangs or dies fails the test after a timeout
//! instead of blocking it. The requests are those of the in-process client of
//! `lib/relax-lsp/tests/support`, whose `requests.rs` is included by path.

#![allow(dead_code, unused_imports, reason = "each test file uses part of the client")]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

#[path = "../../../../lib/relax-lsp/tests/support/requests.rs"]
mod requests;
pub use requests::{LspClient, at, pos_params, range, slice};

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

    /// `shutdown`, `exit`; returns the exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        assert_eq!(self.call("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.stdin = None;
        self.child.wait().unwrap()
    }
}

impl LspClient for Server {
    type Error = Value;

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
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

    fn notification(&mut self, method: &str) -> Value {
        loop {
            let m = match self.pending.iter().position(|n| n["method"] == method) {
                Some(i) => self.pending.remove(i).unwrap(),
                None => self.recv(&format!("{method} notification")),
            };
            if m["method"] == method {
                return m["params"].clone();
            }
            assert!(m.get("id").is_none(), "the server sent a request or a stray response: {m}");
            self.pending.push_back(m);
        }
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
