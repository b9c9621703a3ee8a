//! A test client for the relax language server: runs `relax_lsp::run` on a thread over
//! an in-memory connection and speaks JSON-RPC to it, as an editor would.

#![allow(dead_code, reason = "each test file uses part of the client")]

use std::collections::VecDeque;
use std::thread::JoinHandle;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, ResponseError};
use serde_json::{Value, json};

/// How long to wait for any one message before failing the test.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The client end of a session.
pub struct Client {
    conn: Connection,
    server: Option<JoinHandle<Result<relax_lsp::Exit, String>>>,
    next_id: i32,
    /// Notifications received while waiting for responses.
    pending: VecDeque<Notification>,
    /// The `initialize` result.
    pub init: Value,
}

impl Client {
    /// Starts a server and completes the initialize handshake.
    pub fn start() -> Client {
        let (server_end, client_end) = Connection::memory();
        let server = std::thread::spawn(move || relax_lsp::run(server_end));
        let mut c =
            Client { conn: client_end, server: Some(server), next_id: 0, pending: VecDeque::new(), init: Value::Null };
        let init = c.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": {}, "clientInfo": { "name": "test" } }),
        );
        c.init = init.expect("initialize succeeds");
        c.notify("initialized", json!({}));
        c
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.conn.sender.send(Notification::new(method.to_string(), params).into()).unwrap();
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ResponseError> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.conn.sender.send(Request::new(id.clone(), method.to_string(), params).into()).unwrap();
        loop {
            match self.conn.receiver.recv_timeout(TIMEOUT).unwrap_or_else(|_| panic!("no response to {method}")) {
                Message::Response(r) if r.id == id => return r.response_result,
                Message::Response(r) => panic!("unexpected response {r:?}"),
                Message::Notification(n) => self.pending.push_back(n),
                Message::Request(r) => panic!("unexpected server request {r:?}"),
            }
        }
    }

    /// Sends a request and returns its result, failing on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e:?}"))
    }

    /// The next notification of `method`.
    pub fn expect_notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|n| n.method == method) {
            return self.pending.remove(i).unwrap().params;
        }
        loop {
            match self.conn.receiver.recv_timeout(TIMEOUT).unwrap_or_else(|_| panic!("no {method} notification")) {
                Message::Notification(n) if n.method == method => return n.params,
                Message::Notification(n) => self.pending.push_back(n),
                other => panic!("unexpected message {other:?}"),
            }
        }
    }

    /// Opens a document and returns the diagnostics published for it.
    pub fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "relax", "version": 1, "text": text } }),
        );
        self.diagnostics(uri)
    }

    /// Replaces a document's text and returns the diagnostics published for it.
    pub fn change(&mut self, uri: &str, version: i32, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        self.diagnostics(uri)
    }

    /// The next diagnostics published for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let p = self.expect_notification("textDocument/publishDiagnostics");
            if p["uri"] == uri {
                return p["diagnostics"].as_array().cloned().unwrap_or_default();
            }
        }
    }

    /// `textDocument/hover` at a position; the markdown text, if any.
    pub fn hover(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<String> {
        let r = self.call("textDocument/hover", pos_params(uri, line, character));
        r["contents"]["value"].as_str().map(str::to_string)
    }

    /// `textDocument/definition` at a position: the target range as
    /// `(start line, start char, end line, end char)`.
    pub fn definition(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<(u64, u64, u64, u64)> {
        let r = self.call("textDocument/definition", pos_params(uri, line, character));
        if r.is_null() {
            return None;
        }
        assert_eq!(r["uri"], uri);
        Some(range(&r["range"]))
    }

    /// Shuts the server down (`shutdown`, `exit`) and returns how it ended.
    pub fn shutdown(mut self) -> relax_lsp::Exit {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap().unwrap()
    }
}

/// Parameters of a position request.
pub fn pos_params(uri: &str, line: u32, character: u32) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}

/// An LSP range as a tuple.
pub fn range(r: &Value) -> (u64, u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap();
    (n(&r["start"]["line"]), n(&r["start"]["character"]), n(&r["end"]["line"]), n(&r["end"]["character"]))
}

/// The 0-based line and UTF-16 column of the `|` marker in `marked`, which is looked up
/// in `text` without the marker (the first occurrence).
pub fn at(text: &str, marked: &str) -> (u32, u32) {
    let bar = marked.find('|').expect("a | marker");
    let needle = marked.replace('|', "");
    let start = text.find(&needle).unwrap_or_else(|| panic!("`{needle}` not in the text"));
    let off = start + bar;
    let line = text[..off].matches('\n').count() as u32;
    let line_start = text[..off].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..off].encode_utf16().count() as u32)
}
