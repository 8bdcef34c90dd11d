//! `loopc lsp`: a language server for `.loop` plans on stdio (docs/editors.md),
//! built on the `lsp-server` and `lsp-types` crates.
//!
//! Capabilities:
//!
//! - incremental sync (ranged edits; a full text is accepted too); on
//!   `didOpen` and every `didChange` the server
//!   publishes exactly the diagnostics `loopc check` reports for the text
//!   (docs/language.md codes as `code`, UTF-16 ranges, secondary labels as related
//!   information);
//! - go to definition from a dependency, `agent = NAME` or a `gates` entry;
//! - hover on tasks (title, dependencies, resolved agent, gates, attempts,
//!   timeout, key), agents, gates and field names;
//! - document symbols for tasks, agents and gates;
//! - completion of item keywords, field names valid in the current block,
//!   task names after `:`, agent and gate names, and enumerated words;
//! - document formatting through [`crate::fmt::format_source`].
//!
//! Positions are LSP positions: 0-based lines and UTF-16 code-unit columns.
//! The server survives any document text: analysis never panics, and a
//! request handler that did would be answered with an error instead of
//! ending the server. [`serve`] says how it ended: after `shutdown` and
//! `exit`, or abruptly (`exit` without `shutdown`, or a closed input); the
//! client's process, named by `initialize`, ending is told to what
//! [`on_client_gone`] registered.

mod analysis;
mod context;
mod docs;
mod hover;
pub mod transport;
mod watch;

pub use analysis::{Analysis, NameKind, Occurrence};
pub use context::{BlockKind, Context};
pub use watch::on_client_gone;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::panic::AssertUnwindSafe;

/// The server's state: the analysis of each open document, by URI.
#[derive(Default)]
struct Server {
    documents: HashMap<lsp::Uri, Analysis>,
}

/// The text of a document after `changes` (in order), starting from its
/// current version `doc` (empty when it is not open). The first ranged
/// edit is placed with the current version's line index; a byte-order mark
/// the client's text starts with is kept, as the client still counts it.
fn edited(doc: Option<&Analysis>, changes: Vec<lsp::TextDocumentContentChangeEvent>) -> String {
    let mut text: Option<String> = None;
    for change in changes {
        text = Some(match (change.range, text) {
            (None, _) => change.text,
            (Some(range), None) => match doc {
                Some(d) => {
                    let start = d.offset(range.start);
                    let end = d.offset(range.end).max(start);
                    let mut t = String::with_capacity(d.source.len() + change.text.len() + 3);
                    if d.bom {
                        t.push('\u{FEFF}');
                    }
                    t.push_str(&d.source[..start]);
                    t.push_str(&change.text);
                    t.push_str(&d.source[end..]);
                    t
                }
                None => Analysis::apply_edit(String::new(), range, &change.text),
            },
            (Some(range), Some(t)) => {
                let bom = t.starts_with('\u{FEFF}');
                let t = Analysis::apply_edit(t, range, &change.text);
                if bom { format!("\u{FEFF}{t}") } else { t }
            }
        });
    }
    match (text, doc) {
        (Some(t), _) => t,
        (None, Some(d)) if d.bom => format!("\u{FEFF}{}", d.source),
        (None, Some(d)) => d.source.clone(),
        (None, None) => String::new(),
    }
}

/// The capabilities announced in the `initialize` response.
pub fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                // Ranged edits: a keystroke sends one character, not the
                // whole document (full texts are accepted too).
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        definition_provider: Some(lsp::OneOf::Left(true)),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["=".into(), "[".into(), ":".into(), ",".into()]),
            ..Default::default()
        }),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        ..Default::default()
    }
}

/// How the language server ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `shutdown` then `exit`, as the protocol asks.
    Shutdown,
    /// `exit` without `shutdown`, a closed input, or a failed writer thread.
    Abrupt,
}

/// Runs the language server on `input` and `output` (the command layer
/// hands it stdin and stdout) until `exit`.
///
/// # Errors
///
/// The client broke the protocol (no `initialize` first, unreadable
/// messages) or the connection failed.
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<Ending, Box<dyn std::error::Error>> {
    let (connection, io_threads) = transport::connect(input, output);
    let ending = run(&connection);
    drop(connection);
    // The reader may be blocked on its input after `exit`; only the writer must
    // finish, so that every response is flushed.
    let mut threads = io_threads.into_iter();
    let _reader = threads.next();
    let mut writer_failed = false;
    for t in threads {
        writer_failed |= t.join().is_err();
    }
    match ending {
        Ok(_) if writer_failed => Ok(Ending::Abrupt),
        ending => ending,
    }
}

/// Why the server stops when its input ends before an `initialize`
/// request.
const NOT_A_CLIENT: &str = "stdin ended before an `initialize` request: `loopc lsp` is a \
language server that an editor starts, speaking the Language Server Protocol \
(`Content-Length:` framed JSON-RPC) on stdin and stdout; see docs/editors.md for \
Neovim, VS Code and Helix";

/// Waits for the `initialize` request (LSP: before it, a request is
/// answered `-32002 ServerNotInitialized` and a notification dropped),
/// returning its id and params.
///
/// Errors: the input ended first (a person who ran `loopc lsp` by hand, or
/// piped text into it: [`NOT_A_CLIENT`]), or the client sent `exit`.
fn wait_for_initialize(
    connection: &Connection,
) -> Result<(lsp_server::RequestId, serde_json::Value), Box<dyn std::error::Error>> {
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) if req.method == lsp::request::Initialize::METHOD => {
                return Ok((req.id, req.params));
            }
            Message::Request(req) => {
                let not_yet = Response::new_err(
                    req.id,
                    ErrorCode::ServerNotInitialized as i32,
                    format!("`{}` before `initialize`", req.method),
                );
                connection.sender.send(not_yet.into())?;
            }
            Message::Notification(n) if n.method == lsp::notification::Exit::METHOD => {
                return Err("the client sent `exit` before `initialize`".into());
            }
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
    Err(NOT_A_CLIENT.into())
}

fn run(connection: &Connection) -> Result<Ending, Box<dyn std::error::Error>> {
    let init = lsp::InitializeResult {
        capabilities: capabilities(),
        server_info: Some(lsp::ServerInfo {
            name: "loopc".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let (id, params) = wait_for_initialize(connection)?;
    // The editor's process gone, the server exits (`on_client_gone`).
    watch::client(&params);
    // Not `initialize_finish`: it fails unless the next message is the
    // `initialized` notification, and a client that sends `didOpen` first
    // must not stop the server. `initialized` is ignored below.
    connection
        .sender
        .send(Response::new_ok(id, serde_json::to_value(init)?).into())?;

    let mut server = Server::default();
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if req.method == lsp::request::Shutdown::METHOD {
                    connection
                        .sender
                        .send(Response::new_ok(req.id, ()).into())?;
                    return after_shutdown(connection);
                }
                let id = req.id.clone();
                let response = std::panic::catch_unwind(AssertUnwindSafe(|| server.request(req)))
                    .unwrap_or_else(|_| {
                        Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            "loopc lsp: internal error while handling this request".to_string(),
                        )
                        .into()
                    });
                connection.sender.send(response)?;
            }
            Message::Notification(n) => {
                if n.method == lsp::notification::Exit::METHOD {
                    return Ok(Ending::Abrupt);
                }
                let out = std::panic::catch_unwind(AssertUnwindSafe(|| server.notification(n)))
                    .unwrap_or_default();
                for m in out {
                    connection.sender.send(m)?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(Ending::Abrupt)
}

/// After `shutdown`: waits for `exit` ([`Ending::Shutdown`]), refusing
/// requests and ignoring other notifications meanwhile; a closed input is
/// [`Ending::Abrupt`].
fn after_shutdown(connection: &Connection) -> Result<Ending, Box<dyn std::error::Error>> {
    for msg in &connection.receiver {
        match msg {
            Message::Notification(n) if n.method == lsp::notification::Exit::METHOD => {
                return Ok(Ending::Shutdown);
            }
            Message::Request(req) => {
                let response = Response::new_err(
                    req.id,
                    ErrorCode::InvalidRequest as i32,
                    "the server is shut down: only `exit` is accepted".to_string(),
                );
                connection.sender.send(response.into())?;
            }
            _ => {}
        }
    }
    Ok(Ending::Abrupt)
}

fn params<P: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<P, String> {
    serde_json::from_value(value).map_err(|e| format!("invalid params: {e}"))
}

/// The file name of a document (the last path segment of its URI after
/// the scheme, percent-decoded), as `loopc check` would be given it: its
/// stem is the plan's default loop name. An unsaved buffer's URI
/// (`untitled:Untitled-1`) names no path: its name after the scheme.
fn file_name(uri: &lsp::Uri) -> String {
    let path = uri.as_str().split(['?', '#']).next().unwrap_or("");
    let path = path.split_once(':').map_or(path, |(_, rest)| rest);
    let segment = path
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("plan.loop");
    percent_decode(segment)
}

/// The file a `file://` URI names (`file:///a/b.loop`, `file://localhost/…`);
/// `None` for another scheme (an unsaved buffer).
fn file_path(uri: &lsp::Uri) -> Option<std::path::PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let path = rest.split(['?', '#']).next()?;
    path.starts_with('/')
        .then(|| std::path::PathBuf::from(percent_decode(path)))
}

/// Decodes `%XX` escapes (invalid ones are kept as written; the bytes are
/// read as UTF-8, lossily).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Server {
    /// Handles a notification; returns the messages to send (diagnostics).
    fn notification(&mut self, n: Notification) -> Vec<Message> {
        use lsp::notification::{DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument};
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidOpenTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let doc = p.text_document;
                self.update(doc.uri, doc.version, doc.text)
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidChangeTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                let uri = p.text_document.uri;
                // A change to a document never opened has no text to apply
                // it to (the client is out of step): ignored, as the
                // specification's "must be opened first" leaves it.
                if !self.documents.contains_key(&uri) {
                    return Vec::new();
                }
                let text = edited(self.documents.get(&uri), p.content_changes);
                self.update(uri, p.text_document.version, text)
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = params::<lsp::DidCloseTextDocumentParams>(n.params) else {
                    return Vec::new();
                };
                self.documents.remove(&p.text_document.uri);
                vec![publish(p.text_document.uri, Vec::new(), None)]
            }
            _ => Vec::new(),
        }
    }

    /// Re-analyses a document and returns its diagnostics notification.
    fn update(&mut self, uri: lsp::Uri, version: i32, text: String) -> Vec<Message> {
        // The previous version's unchanged items are reused, and it is
        // freed off the answer's path.
        let previous = self.documents.remove(&uri);
        let mut analysis = Analysis::edited(&file_name(&uri), text, previous);
        if file_path(&uri).is_some_and(|p| crate::compile::is_reel_defaults(&p)) {
            crate::compile::drop_no_tasks(&mut analysis.compilation.diagnostics);
        }
        // As `loopc check` does: context files missing from the checkout
        // of the repository the file is in.
        let extra = file_path(&uri)
            .map(|path| crate::compile::missing_context(&analysis.compilation.context, &path))
            .unwrap_or_default();
        let diagnostics = analysis.diagnostics(&uri, extra);
        // A missing context file is an error of the plan, as for `loopc
        // check`: no definition key is shown while it lasts.
        if diagnostics
            .iter()
            .any(|d| d.severity == Some(lsp::DiagnosticSeverity::ERROR))
        {
            analysis.compilation.plan = None;
        }
        self.documents.insert(uri.clone(), analysis);
        vec![publish(uri, diagnostics, Some(version))]
    }

    fn document(&self, uri: &lsp::Uri) -> Option<&Analysis> {
        self.documents.get(uri)
    }

    /// Answers a request (never `shutdown`, which the loop handles).
    fn request(&mut self, req: Request) -> Message {
        use lsp::request::{
            Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
        };
        let id = req.id.clone();
        let result = match req.method.as_str() {
            GotoDefinition::METHOD => self.with_position(req, |a, uri, offset| {
                a.definition(uri, offset)
                    .map(lsp::GotoDefinitionResponse::Scalar)
            }),
            HoverRequest::METHOD => self.with_position(req, |a, _, offset| a.hover(offset)),
            Completion::METHOD => params::<lsp::CompletionParams>(req.params).map(|p| {
                let pos = p.text_document_position;
                let items = self.document(&pos.text_document.uri).map(|a| {
                    let offset = a.offset(pos.position);
                    a.completion(offset)
                });
                json(items.map(lsp::CompletionResponse::Array))
            }),
            DocumentSymbolRequest::METHOD => {
                params::<lsp::DocumentSymbolParams>(req.params).map(|p| {
                    let symbols = self
                        .document(&p.text_document.uri)
                        .map(|a| lsp::DocumentSymbolResponse::Nested(a.symbols()));
                    json(symbols)
                })
            }
            Formatting::METHOD => params::<lsp::DocumentFormattingParams>(req.params).map(|p| {
                json(
                    self.document(&p.text_document.uri)
                        .and_then(|a| a.formatting()),
                )
            }),
            _ => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("unsupported request `{}`", req.method),
                )
                .into();
            }
        };
        match result {
            Ok(Ok(text)) => transport::response(&id, &text),
            Ok(Err(e)) => {
                Response::new_err(id, ErrorCode::InternalError as i32, e.to_string()).into()
            }
            Err(message) => Response::new_err(id, ErrorCode::InvalidParams as i32, message).into(),
        }
    }

    /// Runs `f` for a request whose params are a text document position.
    fn with_position<T: serde::Serialize>(
        &self,
        req: Request,
        f: impl FnOnce(&Analysis, &lsp::Uri, usize) -> Option<T>,
    ) -> Result<serde_json::Result<String>, String> {
        let p = params::<lsp::TextDocumentPositionParams>(req.params)?;
        let uri = p.text_document.uri;
        let result = self.document(&uri).and_then(|a| {
            let offset = a.offset(p.position);
            f(a, &uri, offset)
        });
        Ok(json(result))
    }
}

/// A request's result as JSON text (see [`transport::response`]).
fn json<T: serde::Serialize>(value: T) -> serde_json::Result<String> {
    serde_json::to_string(&value)
}

fn publish(uri: lsp::Uri, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) -> Message {
    let params = lsp::PublishDiagnosticsParams {
        uri,
        diagnostics,
        version,
    };
    let method = lsp::notification::PublishDiagnostics::METHOD;
    // The LSP's types always serialize; the fallback is lsp-server's way.
    transport::notification(method, &params)
        .unwrap_or_else(|_| Message::Notification(Notification::new(method.to_string(), params)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_from_uris() {
        let uri = |s: &str| -> lsp::Uri { s.parse().unwrap() };
        assert_eq!(
            file_name(&uri("file:///a/b/my%20plan.loop")),
            "my plan.loop"
        );
        assert_eq!(file_name(&uri("file:///a/caf%C3%A9.loop")), "café.loop");
        assert_eq!(file_name(&uri("untitled:Untitled-1")), "Untitled-1");
        assert_eq!(file_name(&uri("vscode-remote://h/a/b.loop")), "b.loop");
        assert_eq!(file_name(&uri("file:///a/")), "plan.loop");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
