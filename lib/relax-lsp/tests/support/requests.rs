//! The LSP requests of the test clients, over any transport: the in-process client of
//! this crate's tests (`lsp_server::Connection::memory`) and the stdio client of the
//! `relax-lsp` binary's tests (`tools/relax-lsp/tests/support`, which includes this file
//! by path), so that both sessions speak the protocol the same way.

use serde_json::{Value, json};

/// A client session: the transport supplies the three primitives, the requests an editor
/// makes are built on them.
pub trait LspClient {
    /// The error of a failed request.
    type Error: std::fmt::Debug;

    /// Sends a notification.
    fn notify(&mut self, method: &str, params: Value);

    /// Sends a request and waits for its response; notifications arriving meanwhile are
    /// kept for [`LspClient::notification`].
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Self::Error>;

    /// The parameters of the next notification of `method` (kept or yet to come); others
    /// are kept.
    fn notification(&mut self, method: &str) -> Value;

    /// Sends a request and returns its result, failing on an error response.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params).unwrap_or_else(|e| panic!("{method} failed: {e:?}"))
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let p = self.notification("textDocument/publishDiagnostics");
            if p["uri"] == uri {
                return p["diagnostics"].as_array().cloned().unwrap_or_default();
            }
        }
    }

    /// Opens a document and returns the diagnostics published for it.
    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        let doc = json!({ "uri": uri, "languageId": "relax", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
        self.diagnostics(uri)
    }

    /// Replaces a document's text (full sync) and returns the diagnostics published for it.
    fn change(&mut self, uri: &str, version: i32, text: &str) -> Vec<Value> {
        let change =
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] });
        self.notify("textDocument/didChange", change);
        self.diagnostics(uri)
    }

    /// `textDocument/hover` at a position; the markdown text, if any.
    fn hover(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<String> {
        let r = self.call("textDocument/hover", pos_params(uri, line, character));
        r["contents"]["value"].as_str().map(str::to_string)
    }

    /// `textDocument/definition` at a position: the target range as
    /// `(start line, start char, end line, end char)`.
    fn definition(&mut self, uri: &str, (line, character): (u32, u32)) -> Option<(u64, u64, u64, u64)> {
        let r = self.call("textDocument/definition", pos_params(uri, line, character));
        if r.is_null() {
            return None;
        }
        assert_eq!(r["uri"], uri, "{r}");
        Some(range(&r["range"]))
    }

    /// `textDocument/formatting` with four-space indentation.
    fn format(&mut self, uri: &str) -> Result<Value, Self::Error> {
        let options = json!({ "tabSize": 4, "insertSpaces": true });
        self.request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": options }))
    }
}

/// Parameters of a position request.
pub fn pos_params(uri: &str, line: u32, character: u32) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}

/// An LSP range as `(start line, start character, end line, end character)`.
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
