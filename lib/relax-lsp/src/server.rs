//! The server: the initialize handshake, the main loop, documents and request dispatch.
//!
//! Documents are synchronised in full (`TextDocumentSyncKind::FULL`). Each open or change
//! re-analyses the text and publishes its diagnostics. Hover and definition use the
//! current analysis where the text parses; while it has errors they use the last version
//! that parsed, provided the word under the cursor is the same in both. Every handler runs
//! under `catch_unwind`: a panic (a bug) answers the request with an internal error, or
//! publishes an internal-error diagnostic, and the server goes on.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest, Request as _, Shutdown};
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DocumentSymbolResponse,
    GotoDefinitionResponse, HoverProviderCapability, InitializeResult, Location, OneOf, Position, PositionEncodingKind,
    PublishDiagnosticsParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextEdit, Uri,
};

use crate::analysis::Analysis;
use crate::lookup::word_at;

/// What the server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit` after `shutdown`: exit status 0.
    Clean,
    /// `exit` without `shutdown`, or the client went away: exit status 1.
    Abrupt,
}

/// Runs a whole session on `connection`: the initialize handshake, then requests and
/// notifications until `exit` or until the client closes the connection.
pub fn run(connection: Connection) -> Result<Exit, String> {
    let (id, _params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let result = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "relax-lsp".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    connection.initialize_finish(id, result).map_err(|e| e.to_string())?;
    let mut server = Server { connection, docs: HashMap::new(), shut_down: false };
    Ok(server.main_loop())
}

struct Document {
    current: Rc<Analysis>,
    /// The last version whose every unit parsed.
    last_good: Option<Rc<Analysis>>,
}

struct Server {
    connection: Connection,
    docs: HashMap<Uri, Document>,
    shut_down: bool,
}

/// A request's answer: a result, or an error code and message.
type Reply = Result<serde_json::Value, (ErrorCode, String)>;

impl Server {
    fn main_loop(&mut self) -> Exit {
        while let Ok(msg) = self.connection.receiver.recv() {
            match msg {
                Message::Request(req) => {
                    let id = req.id.clone();
                    let reply = catch_unwind(AssertUnwindSafe(|| self.request(req))).unwrap_or_else(|_| {
                        Err((ErrorCode::InternalError, "internal error: the relax language server panicked".into()))
                    });
                    self.respond(id, reply);
                }
                Message::Notification(n) => {
                    if n.method == "exit" {
                        return if self.shut_down { Exit::Clean } else { Exit::Abrupt };
                    }
                    let _ = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
                }
                Message::Response(_) => {}
            }
        }
        Exit::Abrupt
    }

    fn respond(&self, id: RequestId, reply: Reply) {
        let resp = match reply {
            Ok(v) => Response::new_ok(id, v),
            Err((code, msg)) => Response::new_err(id, code as i32, msg),
        };
        let _ = self.connection.sender.send(resp.into());
    }

    fn request(&mut self, req: Request) -> Reply {
        if self.shut_down {
            return Err((ErrorCode::InvalidRequest, "the server is shutting down".into()));
        }
        match req.method.as_str() {
            Shutdown::METHOD => {
                self.shut_down = true;
                result::<Shutdown>(())
            }
            HoverRequest::METHOD => {
                let p = params::<HoverRequest>(req)?;
                let pos = p.text_document_position_params;
                let h = self.at(&pos.text_document.uri, pos.position, crate::hover::hover);
                result::<HoverRequest>(h.map(|(h, _)| h))
            }
            GotoDefinition::METHOD => {
                let p = params::<GotoDefinition>(req)?;
                let pos = p.text_document_position_params;
                let uri = pos.text_document.uri;
                let found = self.at(&uri, pos.position, crate::definition::definition);
                let loc = found.map(|((s, e), a)| Location { uri: uri.clone(), range: a.lines.range(s, e) });
                result::<GotoDefinition>(loc.map(GotoDefinitionResponse::Scalar))
            }
            DocumentSymbolRequest::METHOD => {
                let p = params::<DocumentSymbolRequest>(req)?;
                let doc = self.doc(&p.text_document.uri)?;
                result::<DocumentSymbolRequest>(Some(DocumentSymbolResponse::Nested(crate::symbols::document_symbols(
                    &doc.current,
                ))))
            }
            Formatting::METHOD => {
                let p = params::<Formatting>(req)?;
                let doc = self.doc(&p.text_document.uri)?;
                let a = &doc.current;
                let text = crate::format::format(a).map_err(|e| (ErrorCode::RequestFailed, e))?;
                let edits = if text == a.text() {
                    Vec::new()
                } else {
                    vec![TextEdit { range: a.lines.full_range(), new_text: text }]
                };
                result::<Formatting>(Some(edits))
            }
            m => Err((ErrorCode::MethodNotFound, format!("unsupported request `{m}`"))),
        }
    }

    fn doc(&self, uri: &Uri) -> Result<&Document, (ErrorCode, String)> {
        self.docs.get(uri).ok_or_else(|| (ErrorCode::InvalidParams, format!("document not open: {}", uri.as_str())))
    }

    /// Runs a lookup at a position, on the current analysis where the unit there parsed,
    /// else on the last good one when the word under the cursor is the same there.
    fn at<T>(&self, uri: &Uri, pos: Position, f: impl Fn(&Analysis, usize) -> Option<T>) -> Option<(T, Rc<Analysis>)> {
        let doc = self.docs.get(uri)?;
        let cur = &doc.current;
        let off = cur.lines.offset(pos);
        if cur.unit_at(off).is_some_and(|u| u.module.is_some()) {
            return f(cur, off).map(|t| (t, cur.clone()));
        }
        let old = doc.last_good.as_ref()?;
        let old_off = old.lines.offset(pos);
        let same = match (word_at(cur, off), word_at(old, old_off)) {
            (Some(a), Some(b)) => a.name == b.name && cur.lines.position(a.start) == old.lines.position(b.start),
            _ => false,
        };
        if !same {
            return None;
        }
        f(old, old_off).map(|t| (t, old.clone()))
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else { return };
                let d = p.text_document;
                self.update(d.uri, d.version, d.text, None);
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else { return };
                let uri = p.text_document.uri;
                let Some(doc) = self.docs.get(&uri) else { return };
                let mut text = doc.current.text().to_string();
                for change in p.content_changes {
                    match change.range {
                        None => text = change.text,
                        Some(r) => {
                            // Incremental changes, in case a client sends them anyway.
                            let idx = crate::line_index::LineIndex::new(&text);
                            let (s, e) = (idx.offset(r.start), idx.offset(r.end));
                            text.replace_range(s..e.max(s), &change.text);
                        }
                    }
                }
                let last_good = doc.last_good.clone();
                self.update(uri, p.text_document.version, text, last_good);
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else { return };
                self.docs.remove(&p.text_document.uri);
                self.publish(p.text_document.uri, Vec::new(), None);
            }
            _ => {}
        }
    }

    /// Analyses a new version of a document and publishes its diagnostics.
    fn update(&mut self, uri: Uri, version: i32, text: String, last_good: Option<Rc<Analysis>>) {
        let analysis = match catch_unwind(|| Analysis::new(&text)) {
            Ok(a) => Rc::new(a),
            Err(_) => {
                let lines = crate::line_index::LineIndex::new(&text);
                let d = relax_ir::Diagnostic::error(
                    relax_ir::Span::new(0, 0),
                    "internal error: the compiler panicked on this text; please report it",
                );
                self.publish(uri.clone(), vec![crate::diagnostics::to_lsp(&uri, &lines, &d)], Some(version));
                self.docs.remove(&uri);
                return;
            }
        };
        let diags = analysis.diagnostics.iter().map(|d| crate::diagnostics::to_lsp(&uri, &analysis.lines, d)).collect();
        let last_good = if analysis.has_parse_errors() { last_good } else { Some(analysis.clone()) };
        self.docs.insert(uri.clone(), Document { current: analysis, last_good });
        self.publish(uri, diags, Some(version));
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        let n = Notification::new(PublishDiagnostics::METHOD.to_string(), params);
        let _ = self.connection.sender.send(n.into());
    }
}

/// The parameters of request `R`.
fn params<R: lsp_types::request::Request>(req: Request) -> Result<R::Params, (ErrorCode, String)> {
    serde_json::from_value(req.params).map_err(|e| (ErrorCode::InvalidParams, format!("invalid parameters: {e}")))
}

/// The answer to request `R`.
fn result<R: lsp_types::request::Request>(v: R::Result) -> Reply {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}
