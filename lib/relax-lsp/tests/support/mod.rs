//! A test client for the relax language server: runs `relax_lsp::run` on a thread over
//! an in-memory connection and speaks JSON-RPC to it, as an editor would. The requests
//! are those of [`requests`], shared with the stdio client of the `relax-lsp` binary's
//! tests.

#![allow(dead_code, unused_imports, reason = "each test file uses part of the client")]

use std::collections::VecDeque;
use std::thread::JoinHandle;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, ResponseError};
use serde_json::{Value, json};

mod requests;
pub use requests::{LspClient, at, pos_params, range, slice};

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

    /// Shuts the server down (`shutdown`, `exit`) and returns how it ended.
    pub fn shutdown(mut self) -> relax_lsp::Exit {
        self.call("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap().unwrap()
    }
}

impl LspClient for Client {
    type Error = ResponseError;

    fn notify(&mut self, method: &str, params: Value) {
        self.conn.sender.send(Notification::new(method.to_string(), params).into()).unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, ResponseError> {
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

    fn notification(&mut self, method: &str) -> Value {
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
}
