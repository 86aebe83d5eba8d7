//! The fd language server (`fdc lsp`): diagnostics, hover, go-to-definition, completion
//! and document symbols over the Language Server Protocol on stdio.
//!
//! Knows the front end's public API (`fdc_frontend`: analysis, AST, diagnostics), the
//! lowering's entry point and its errors (`fdc_lower`, only to report them), and the
//! stdlib's embedded sources; every answer comes from one [`fdc_frontend::Analysis`]
//! per open document (plus its lowering errors), so the editor shows exactly what `fdc
//! check` prints. Must not know the IR, backend or runtime, and never panics on broken
//! text: a handler that fails answers with an error and the server goes on.
//!
//! Positions: the front end speaks byte offsets, LSP speaks UTF-16 code units per line;
//! [`position::LineIndex`] converts.
//!
//! Entry points: [`run_stdio`] (what `fdc lsp` calls) and [`Server`], the same handler
//! without the pipe (tests and the benchmark). Text sync is incremental (or full, as
//! the client likes); each change re-runs the front end on the whole document (about 5–10
//! ms for 1,000 lines). The lowering takes about 70 ms there, so it runs on open and,
//! after changes, once the client has been quiet for [`LOWER_AFTER`] ([`Server::idle`]).
//! `use`d files are read from disk, never from other open documents (the front end
//! reads them itself).

mod document;
mod features;
pub mod lifecycle;
mod lookup;
pub mod position;
pub mod transport;

pub use document::stdlib_dir;

use document::Document;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, Request as _,
};
use lsp_types::*;
use std::collections::{BTreeSet, HashMap};
use std::process::ExitCode;

/// What the server announces in its `initialize` answer.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".into(), "(".into(), "{".into(), " ".into()]),
            ..Default::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        position_encoding: Some(PositionEncodingKind::UTF16),
        ..Default::default()
    }
}

/// The state of the server: the open documents. Feed it messages with [`Server::handle`].
#[derive(Default)]
pub struct Server {
    docs: HashMap<Url, Document>,
    /// For each open document, the other files (`use`d) it last published diagnostics
    /// for, so that fixed ones are cleared.
    published: HashMap<Url, BTreeSet<Url>>,
    /// Documents whose front end is clean but whose current text has not been lowered
    /// yet: [`Server::idle`] lowers them.
    pending: BTreeSet<Url>,
}

impl Server {
    pub fn new() -> Server {
        Server::default()
    }

    /// Handles one request or notification (after `initialize`) and returns the
    /// messages to send back. A handler that panics becomes an error response.
    pub fn handle(&mut self, msg: Message) -> Vec<Message> {
        let id = match &msg {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // Hover and definition walk the syntax tree recursively, as deep as the front
        // end lets a statement nest: on the compile stack (in place under `run_stdio`).
        let handled = fdc_frontend::stack::with_compile_stack(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.dispatch(msg)))
        });
        match handled {
            Ok(out) => out,
            Err(_) => match id {
                Some(id) => vec![Message::Response(Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    "internal error in fdc lsp (this is a bug)".into(),
                ))],
                None => Vec::new(),
            },
        }
    }

    fn dispatch(&mut self, msg: Message) -> Vec<Message> {
        match msg {
            Message::Request(r) => vec![Message::Response(self.request(r))],
            Message::Notification(n) => self.notification(n),
            Message::Response(_) => Vec::new(),
        }
    }

    fn notification(&mut self, n: Notification) -> Vec<Message> {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                self.update(p.text_document.uri, p.text_document.text, true)
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let text = self.changed_text(&p);
                self.update(p.text_document.uri, text, false)
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let uri = p.text_document.uri;
                self.docs.remove(&uri);
                self.pending.remove(&uri);
                let mut out = vec![publish(uri.clone(), Vec::new())];
                for other in self.published.remove(&uri).unwrap_or_default() {
                    out.push(publish(other, Vec::new()));
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// The document's text after the edits of a didChange, in order: a change with a
    /// range replaces that range (UTF-16 positions), one without replaces everything.
    fn changed_text(&self, p: &DidChangeTextDocumentParams) -> String {
        let uri = &p.text_document.uri;
        let mut text = self
            .docs
            .get(uri)
            .map(|d| d.text.clone())
            .unwrap_or_default();
        for c in &p.content_changes {
            match c.range {
                Some(r) => {
                    let idx = position::LineIndex::new(&text);
                    let start = idx.offset(&text, r.start);
                    let end = idx.offset(&text, r.end).max(start);
                    text.replace_range(start..end, &c.text);
                }
                None => text.clone_from(&c.text),
            }
        }
        text
    }

    /// Applies a didChange to the text only, without analysis: for a change that the
    /// next message (another change of the same document) supersedes.
    pub fn absorb_change(&mut self, msg: Message) {
        let Message::Notification(n) = msg else {
            return;
        };
        let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else {
            return;
        };
        let text = self.changed_text(&p);
        // The analysis is stale until the next change, which comes before any request.
        if let Some(d) = self.docs.get_mut(&p.text_document.uri) {
            d.text = text;
        }
    }

    /// Re-analyzes a document and publishes its diagnostics (and those of its `use`d
    /// files). The front end runs at once; the lowering (tens of ms on a big model) too
    /// when `lower_now` (a document just opened), else it waits for [`Server::idle`].
    fn update(&mut self, uri: Url, text: String, lower_now: bool) -> Vec<Message> {
        let mut doc = Document::new(uri.clone(), text);
        if lower_now {
            doc.lower();
        } else if let Some(old) = self.docs.get(&uri) {
            doc.carry_over(old);
        }
        if doc.can_lower() && !lower_now {
            self.pending.insert(uri.clone());
        } else {
            self.pending.remove(&uri);
        }
        self.docs.insert(uri.clone(), doc);
        self.publish(uri)
    }

    /// Whether a document waits for its lowering ([`Server::idle`]).
    pub fn lowering_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Lowers the documents changed since their last lowering; call it when no message
    /// has come for a while (`fdc lsp` waits [`LOWER_AFTER`]). Publishes the diagnostics
    /// of each document whose lowering found something other than what is shown.
    pub fn idle(&mut self) -> Vec<Message> {
        let mut out = Vec::new();
        for uri in std::mem::take(&mut self.pending) {
            let Some(doc) = self.docs.get_mut(&uri) else {
                continue;
            };
            let before = std::mem::take(&mut doc.lowering);
            // Lowering never panics on a checked model; if it did, the server goes on
            // with what the front end found.
            let lowered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                doc.lower();
            }));
            if lowered.is_err() {
                doc.lowering = Vec::new();
            }
            if doc.lowering != before {
                out.extend(self.publish(uri));
            }
        }
        out
    }

    /// Publishes the current diagnostics of a document and its `use`d files, and clears
    /// those of `use`d files it no longer has any for.
    fn publish(&mut self, uri: Url) -> Vec<Message> {
        let Some(doc) = self.docs.get(&uri) else {
            return Vec::new();
        };
        let groups = features::diagnostics(doc);
        let now: BTreeSet<Url> = groups.keys().filter(|u| **u != uri).cloned().collect();
        let before = self
            .published
            .insert(uri.clone(), now.clone())
            .unwrap_or_default();
        let mut out: Vec<Message> = groups.into_iter().map(|(u, d)| publish(u, d)).collect();
        out.extend(
            before
                .difference(&now)
                .map(|u| publish(u.clone(), Vec::new())),
        );
        out
    }

    fn doc_offset(&self, p: &TextDocumentPositionParams) -> Option<(&Document, usize)> {
        let doc = self.docs.get(&p.text_document.uri)?;
        let off = position::LineIndex::new(&doc.text).offset(&doc.text, p.position);
        Some((doc, off))
    }

    fn request(&mut self, r: Request) -> Response {
        let id = r.id.clone();
        let result = match r.method.as_str() {
            HoverRequest::METHOD => parse::<HoverParams>(r).map(|p| {
                let h = self
                    .doc_offset(&p.text_document_position_params)
                    .and_then(|(d, o)| features::hover(d, o));
                serde_json::to_value(h)
            }),
            GotoDefinition::METHOD => parse::<GotoDefinitionParams>(r).map(|p| {
                let l = self
                    .doc_offset(&p.text_document_position_params)
                    .and_then(|(d, o)| features::definition(d, o))
                    .map(GotoDefinitionResponse::Scalar);
                serde_json::to_value(l)
            }),
            Completion::METHOD => parse::<CompletionParams>(r).map(|p| {
                let items = self
                    .doc_offset(&p.text_document_position)
                    .map(|(d, o)| features::completion(d, o))
                    .unwrap_or_default();
                serde_json::to_value(CompletionResponse::Array(items))
            }),
            DocumentSymbolRequest::METHOD => parse::<DocumentSymbolParams>(r).map(|p| {
                let s = self.docs.get(&p.text_document.uri).map(features::symbols);
                serde_json::to_value(s.map(DocumentSymbolResponse::Nested))
            }),
            other => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("fdc lsp does not answer `{other}`"),
                )
            }
        };
        match result {
            Ok(Ok(v)) => Response::new_ok(id, v),
            Ok(Err(e)) | Err(e) => {
                Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string())
            }
        }
    }
}

fn parse<P: serde::de::DeserializeOwned>(r: Request) -> Result<P, serde_json::Error> {
    serde_json::from_value(r.params)
}

fn publish(uri: Url, diagnostics: Vec<Diagnostic>) -> Message {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics,
        version: None,
    };
    Message::Notification(Notification::new(PublishDiagnostics::METHOD.into(), params))
}

/// `msg` is a didChange followed by `next`, a didChange of the same document.
fn superseded(msg: &Message, next: &Message) -> bool {
    let change_of = |m: &Message| match m {
        Message::Notification(n) if n.method == DidChangeTextDocument::METHOD => {
            n.params["textDocument"]["uri"].as_str().map(str::to_owned)
        }
        _ => None,
    };
    matches!((change_of(msg), change_of(next)), (Some(a), Some(b)) if a == b)
}

/// How long the server waits after the last change before it lowers: the lowering of a
/// 1,000-line model takes tens of milliseconds, too long for every keystroke.
pub const LOWER_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// Runs the server on stdin/stdout until the client says `exit` (or the input ends or
/// cannot be followed: [`transport`]).
pub fn run_stdio() -> ExitCode {
    let (connection, writer) = transport::stdio();
    let caps = match serde_json::to_value(capabilities()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fdc lsp: {e}");
            return ExitCode::from(2);
        }
    };
    // One compile thread for the server's life: every analysis, lowering and walk of a
    // document runs on the stack sized for the deepest input the lexer lets through.
    let code = fdc_frontend::stack::with_compile_stack(|| {
        serve(&connection, lifecycle::Lifecycle::new(caps))
    });
    drop(connection);
    match writer.join() {
        Ok(Ok(())) => code,
        Ok(Err(e)) => {
            eprintln!("fdc lsp: writing stdout: {e}");
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(1),
    }
}

/// The server loop: the exit status when it ends.
fn serve(connection: &Connection, mut life: lifecycle::Lifecycle) -> ExitCode {
    let mut server = Server::new();
    let mut queue = std::collections::VecDeque::new();
    loop {
        let msg = match queue.pop_front() {
            Some(m) => m,
            // Nothing queued: wait for the next message, or lower what changed once the
            // client has been quiet for LOWER_AFTER.
            None if server.lowering_pending() => {
                match connection.receiver.recv_timeout(LOWER_AFTER) {
                    Ok(m) => m,
                    Err(e) if e.is_timeout() => {
                        for out in server.idle() {
                            if connection.sender.send(out).is_err() {
                                return ExitCode::from(1);
                            }
                        }
                        continue;
                    }
                    Err(_) => return life.end_of_input(),
                }
            }
            None => match connection.receiver.recv() {
                Ok(m) => m,
                Err(_) => return life.end_of_input(),
            },
        };
        // `initialize` first and once, `shutdown`, `exit`: answered here, per the spec.
        match life.gate(&msg) {
            lifecycle::Gate::Pass => {}
            lifecycle::Gate::Drop => continue,
            lifecycle::Gate::Answer(r) => {
                if connection.sender.send(r.into()).is_err() {
                    return ExitCode::from(1);
                }
                continue;
            }
            lifecycle::Gate::Exit(code) => return code,
        }
        // Typing fast on a big file queues one change per keystroke; analyzing each
        // would fall behind. A change followed at once by another change of the same
        // document only edits the text; the analysis waits for the last one.
        queue.extend(connection.receiver.try_iter());
        if queue.front().is_some_and(|next| superseded(&msg, next)) {
            server.absorb_change(msg);
            continue;
        }
        for out in server.handle(msg) {
            if connection.sender.send(out).is_err() {
                return ExitCode::from(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(uri: &str) -> Message {
        Message::Notification(Notification::new(
            DidChangeTextDocument::METHOD.into(),
            serde_json::json!({"textDocument": {"uri": uri, "version": 1}, "contentChanges": [{"text": ""}]}),
        ))
    }

    #[test]
    fn only_a_change_right_before_another_of_its_document_is_absorbed() {
        assert!(superseded(&change("file:///a.fd"), &change("file:///a.fd")));
        assert!(!superseded(
            &change("file:///a.fd"),
            &change("file:///b.fd")
        ));
        let hover = Message::Request(Request::new(
            1.into(),
            HoverRequest::METHOD.into(),
            serde_json::json!({}),
        ));
        assert!(!superseded(&change("file:///a.fd"), &hover));
        assert!(!superseded(&hover, &change("file:///a.fd")));
    }
}
