//! The transport of `loopc lsp`: LSP base-protocol framing
//! (`Content-Length` headers) over the input and output the caller hands
//! it (the command layer: stdin and stdout).
//!
//! lsp-server's own stdio transport ends the connection on the first
//! malformed message. This one answers a body that is not JSON-RPC with a
//! `-32700 Parse error` response (id `null`, as JSON-RPC 2.0 says) and reads
//! on; a body larger than [`MAX_BODY`] is skipped without being held in memory.

use lsp_server::{Connection, Message};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// The largest message body accepted, in bytes (64 MiB); larger ones are
/// skipped and answered with a parse error.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The output, shared by the reader thread (its parse-error answers) and
/// the writer thread; each message is written whole under its lock.
type Output<W> = Arc<Mutex<W>>;

/// Starts reader and writer threads on `input` and `output` and returns
/// the server side of the connection plus the threads to join after it is
/// dropped.
pub fn connect<R, W>(input: R, output: W) -> (Connection, Vec<JoinHandle<()>>)
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (server, client) = Connection::memory();
    let output = Arc::new(Mutex::new(output));
    let reader = {
        let output = Arc::clone(&output);
        let to_server = client.sender;
        let to_server = move |m| to_server.send(m).is_ok();
        std::thread::spawn(move || read_frames(FrameReader::new(input), to_server, &output))
    };
    let from_server = client.receiver;
    let writer = std::thread::spawn(move || {
        for message in from_server {
            if write_message(&output, &message).is_err() {
                return;
            }
        }
    });
    (server, vec![reader, writer])
}

/// The reader thread: hands each message read from `input` to the server
/// (`to_server` is false once the server is gone) and answers each bad
/// frame itself, until the input ends or fails or the server is gone.
fn read_frames<R: Read, W: Write>(
    mut input: FrameReader<R>,
    to_server: impl Fn(Message) -> bool,
    output: &Output<W>,
) {
    loop {
        match input.read_frame() {
            Ok(Frame::Message(m)) => {
                if !to_server(m) {
                    return;
                }
            }
            Ok(frame @ (Frame::Malformed(_) | Frame::Invalid(_))) => {
                let (code, why) = match frame {
                    Frame::Invalid(why) => (lsp_server::ErrorCode::InvalidRequest, why),
                    Frame::Malformed(why) => (lsp_server::ErrorCode::ParseError, why),
                    _ => continue,
                };
                let err = lsp_server::Response {
                    id: lsp_server::RequestId::from(String::new()),
                    result: None,
                    error: Some(lsp_server::ResponseError {
                        code: code as i32,
                        message: format!("loopc lsp: {why}"),
                        data: None,
                    }),
                };
                // Written here rather than through the writer thread, which
                // must end as soon as the server drops its sender.
                if write_message(output, &Message::Response(err)).is_err() {
                    return;
                }
            }
            Ok(Frame::End) | Err(_) => return,
        }
    }
}

/// The method of an outgoing message that is already encoded: its params
/// are the JSON-RPC body, which the writer writes as it is. Only
/// [`response`] and [`notification`] make one; it never comes from a client
/// (this channel carries only the server's messages).
const ENCODED: &str = "$/loopc/encoded";

/// The response to request `id` whose result is the JSON text `result`, to
/// send as any other message. A result is serialized once, from its type, to
/// text: as a `serde_json::Value` a large one (a million document symbols)
/// took 17 KB of maps a symbol, twice over.
pub fn response(id: &lsp_server::RequestId, result: &str) -> Message {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "null".to_string());
    encoded(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))
}

/// The notification `method` with `params`, serialized once as
/// [`response`]'s results are.
///
/// Errors: `params` cannot be serialized (a map with keys that are not
/// strings; none of the LSP's types).
pub fn notification<T: serde::Serialize>(method: &str, params: &T) -> serde_json::Result<Message> {
    #[derive(serde::Serialize)]
    struct Body<'a, T> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a T,
    }
    let body = serde_json::to_string(&Body {
        jsonrpc: "2.0",
        method,
        params,
    })?;
    Ok(encoded(body))
}

/// A message whose JSON-RPC body is `body`, for the writer to write as it is.
fn encoded(body: String) -> Message {
    Message::Notification(lsp_server::Notification {
        method: ENCODED.to_string(),
        params: serde_json::Value::String(body),
    })
}

/// Writes one framed message to `output`, whole, under its lock.
fn write_message<W: Write>(output: &Output<W>, message: &Message) -> std::io::Result<()> {
    let encoded;
    let body = match message {
        Message::Notification(n)
            if n.method == ENCODED
                && let serde_json::Value::String(body) = &n.params =>
        {
            body
        }
        _ => {
            encoded = encode(message).map_err(std::io::Error::other)?;
            &encoded
        }
    };
    let mut out = output.lock().unwrap_or_else(PoisonError::into_inner);
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

/// The JSON-RPC 2.0 text of `message`. lsp-server's `Message` serializes
/// without the `"jsonrpc": "2.0"` member every JSON-RPC message must carry
/// (its own writer adds it), so it is added here. And a parse-error
/// response has no request to refer to: JSON-RPC says its id is `null`, but
/// lsp-server's ids cannot be null, so the empty-string id stands in for it
/// and is replaced here.
fn encode(message: &Message) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(message)?;
    if let Some(object) = value.as_object_mut() {
        let code = object
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(serde_json::Value::as_i64);
        let parse_error = [
            lsp_server::ErrorCode::ParseError,
            lsp_server::ErrorCode::InvalidRequest,
        ]
        .iter()
        .any(|c| code == Some(i64::from(*c as i32)));
        if parse_error && object.get("id").and_then(serde_json::Value::as_str) == Some("") {
            object.insert("id".into(), serde_json::Value::Null);
        }
        object.insert("jsonrpc".into(), "2.0".into());
    }
    serde_json::to_string(&value)
}

/// Whether the JSON object `body` has an `id` member, `null` included (a
/// request with a null id is a request, JSON-RPC 2.0 §4: answered, not
/// taken for a notification).
fn has_id(body: &[u8]) -> bool {
    /// Any value, `null` too, is there (`Some`); only a missing member is
    /// `None` (`#[serde(default)]`).
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
        <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| Some(()))
    }
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "present")]
        id: Option<()>,
    }
    // Most notifications have no `"id"` anywhere: no second parse of a
    // document's text on every keystroke.
    memchr::memmem::find(body, b"\"id\"").is_some()
        && serde_json::from_slice::<Probe>(body).is_ok_and(|p| p.id.is_some())
}

/// One read from the input.
#[derive(Debug)]
pub enum Frame {
    /// A well-formed message.
    Message(Message),
    /// A frame whose body is not a JSON-RPC message (or is too large), or
    /// bytes where a header should be; why.
    Malformed(String),
    /// A JSON-RPC request this server cannot answer by its id (not a
    /// string or a 32-bit integer, the ids lsp-server represents): it is
    /// answered with `-32600 Invalid Request` (id `null`) rather than read
    /// as a notification and never answered; why.
    Invalid(String),
    /// The input ended.
    End,
}

/// How much input is read at once, in bytes.
const CHUNK: usize = 64 * 1024;
/// The header name that starts every frame; searched for case-insensitively.
const HEADER: &[u8] = b"content-length";
/// The longest header block accepted, in bytes; a longer one is skipped.
const MAX_HEADER: usize = 8 * 1024;

/// Reads framed messages and resynchronises after a bad frame.
///
/// A frame is a header block (lines ending in `\r\n` or `\n`, closed by an
/// empty line) with a `Content-Length` header, then that many bytes of body.
/// Each bad frame is reported once as [`Frame::Malformed`]; the reader then
/// looks for the next `Content-Length` header and serves the messages after
/// it. A length that was too short leaves the rest of the body before the
/// next header (skipped silently: it was already reported); a length that
/// was too long swallows the start of the next frame, and when the swallowed
/// bytes hold a header the reader goes back to it, so only the bad frame is
/// lost. A header block without a `Content-Length` is reported once and
/// skipped together with the body that follows it.
pub struct FrameReader<R> {
    input: R,
    /// Bytes read from `input` and not consumed yet.
    buf: Vec<u8>,
    /// `input` has ended.
    eof: bool,
    /// The last frame was bad: bytes up to the next header are its remains
    /// and are skipped without a second report.
    desynced: bool,
}

impl<R: Read> FrameReader<R> {
    /// A reader of the frames in `input`.
    pub fn new(input: R) -> Self {
        FrameReader {
            input,
            buf: Vec::new(),
            eof: false,
            desynced: false,
        }
    }

    /// Reads more input into the buffer; `false` when the input has ended.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        let n = loop {
            match self.input.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(old + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Reads one frame. I/O errors end the connection; bad headers and bad
    /// bodies are [`Frame::Malformed`] so the caller can answer and go on.
    pub fn read_frame(&mut self) -> std::io::Result<Frame> {
        if self.desynced && !self.skip_to_header()? {
            return Ok(Frame::End);
        }
        // Blank lines between frames are tolerated.
        loop {
            let blank = self
                .buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            self.buf.drain(..blank);
            if !self.buf.is_empty() {
                break;
            }
            if !self.fill()? {
                return Ok(Frame::End);
            }
        }
        // The header block: up to the first empty line.
        let (block_end, body_start) = loop {
            if let Some(found) = header_block_end(&self.buf) {
                break found;
            }
            if self.buf.len() > MAX_HEADER {
                return Ok(self.bad("header block is too long".into(), 1));
            }
            if !self.fill()? {
                // The input ended inside a header block.
                self.buf.clear();
                return Ok(Frame::End);
            }
        };
        let Some(length) = content_length(&self.buf[..block_end]) else {
            return Ok(self.bad(
                "missing or invalid Content-Length header".into(),
                body_start,
            ));
        };
        self.buf.drain(..body_start);
        if length > MAX_BODY {
            // Skip the body without holding it.
            let mut left = length;
            loop {
                let n = left.min(self.buf.len());
                self.buf.drain(..n);
                left -= n;
                if left == 0 {
                    break;
                }
                if !self.fill()? {
                    return Ok(Frame::End);
                }
            }
            return Ok(Frame::Malformed(format!(
                "message of {length} bytes is larger than {MAX_BODY}"
            )));
        }
        while self.buf.len() < length {
            if !self.fill()? {
                // Too little body before the input ended: there is nobody
                // left to answer.
                self.buf.clear();
                return Ok(Frame::End);
            }
        }
        // A JSON-RPC message is an object: serde would read an array's
        // elements as a message's fields in order (`[3, "shutdown"]`).
        let body = &self.buf[..length];
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Ok(self.bad(
                "malformed message: a JSON-RPC message is a JSON object".into(),
                length,
            ));
        }
        match serde_json::from_slice::<Message>(body) {
            // A request whose id lsp-server cannot hold parses as a
            // notification: the `id` member says otherwise.
            Ok(Message::Notification(_)) if has_id(&self.buf[..length]) => {
                self.buf.drain(..length);
                Ok(Frame::Invalid(
                    "invalid request: an id must be a string or an integer from -2147483648 to 2147483647".into(),
                ))
            }
            // A request whose `method` is not a string parses as a
            // response (this server sends no requests to answer).
            Ok(Message::Response(r))
                if r.result.is_none()
                    && r.error.is_none()
                    && memchr::memmem::find(&self.buf[..length], b"\"method\"").is_some() =>
            {
                self.buf.drain(..length);
                Ok(Frame::Invalid(
                    "invalid request: `method` must be a string".into(),
                ))
            }
            Ok(m) => {
                self.buf.drain(..length);
                Ok(Frame::Message(m))
            }
            Err(e) => {
                // A length that was too long took in (the start of) the next
                // frame's header: go back to it.
                // Only bytes already read are looked at: the reply must not
                // wait for the client's next message.
                let consumed = find_header(&self.buf)
                    .or_else(|| header_prefix_at_end(&self.buf))
                    .filter(|&at| at < length)
                    .unwrap_or(length);
                Ok(self.bad(format!("malformed message: {e}"), consumed))
            }
        }
    }

    /// Reports a bad frame: drops its first `consumed` bytes and skips the
    /// rest up to the next header on the next read.
    fn bad(&mut self, why: String, consumed: usize) -> Frame {
        self.buf.drain(..consumed.min(self.buf.len()));
        self.desynced = true;
        Frame::Malformed(why)
    }

    /// Drops bytes up to the next `Content-Length` header; `false` when the
    /// input ends first.
    fn skip_to_header(&mut self) -> std::io::Result<bool> {
        loop {
            if let Some(at) = find_header(&self.buf) {
                self.buf.drain(..at);
                self.desynced = false;
                return Ok(true);
            }
            // Keep a tail that may be the start of a header.
            let keep = self.buf.len().min(HEADER.len() - 1);
            self.buf.drain(..self.buf.len() - keep);
            if !self.fill()? {
                self.buf.clear();
                return Ok(false);
            }
        }
    }
}

/// The offset of the first `Content-Length` header name (any case, followed
/// by optional blanks and `:`) in `bytes`.
fn find_header(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = bytes
        .get(from..)?
        .windows(HEADER.len())
        .position(|w| w.eq_ignore_ascii_case(HEADER))
    {
        let at = from + at;
        let rest = &bytes[at + HEADER.len()..];
        let blanks = rest
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        match rest.get(blanks) {
            Some(b':') => return Some(at),
            // Not yet known: treat it as a header and let the block decide.
            None => return Some(at),
            Some(_) => from = at + 1,
        }
    }
    None
}

/// Where a proper prefix of the header name ends `bytes`, any case.
fn header_prefix_at_end(bytes: &[u8]) -> Option<usize> {
    (1..HEADER.len()).rev().find_map(|k| {
        let at = bytes.len().checked_sub(k)?;
        bytes[at..].eq_ignore_ascii_case(&HEADER[..k]).then_some(at)
    })
}

/// Where the header block at the start of `bytes` ends (the offset of its
/// empty line) and where the body starts, once the empty line has arrived.
fn header_block_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut line_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let line = &bytes[line_start..i];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() && line_start > 0 {
                return Some((line_start, i + 1));
            }
            line_start = i + 1;
        }
    }
    None
}

/// The value of the `Content-Length` header in a header block.
fn content_length(block: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(block).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body [`write_message`] writes for `message`.
    fn body(message: &Message) -> serde_json::Value {
        let text = match message {
            Message::Notification(n) if n.method == ENCODED => {
                n.params.as_str().unwrap().to_string()
            }
            other => encode(other).unwrap(),
        };
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn encoded_responses_and_notifications_are_json_rpc() {
        let id = lsp_server::RequestId::from("req-1".to_string());
        let answer = body(&response(&id, r#"[{"name":"a"}]"#));
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": "req-1", "result": [{"name": "a"}]})
        );
        let answer = body(&response(&lsp_server::RequestId::from(7), "null"));
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": null})
        );
        let note = notification(
            "textDocument/publishDiagnostics",
            &serde_json::json!({"uri": "file:///a"}),
        );
        assert_eq!(
            body(&note.unwrap()),
            serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///a"}})
        );
    }

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// Every frame `input` holds: messages by method name, bad frames as `!`.
    fn frames(input: Vec<u8>) -> Vec<String> {
        let mut r = FrameReader::new(std::io::Cursor::new(input));
        let mut out = Vec::new();
        loop {
            match r.read_frame().unwrap() {
                Frame::Message(Message::Notification(n)) => out.push(n.method),
                Frame::Message(Message::Request(q)) => out.push(q.method),
                Frame::Message(Message::Response(_)) => out.push("response".into()),
                Frame::Malformed(_) => out.push("!".into()),
                Frame::Invalid(_) => out.push("?".into()),
                Frame::End => return out,
            }
        }
    }

    fn note(method: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#)
    }

    #[test]
    fn malformed_bodies_do_not_end_the_stream() {
        let mut input = frame(r#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud83d"}}"#);
        input.extend(frame("{not json"));
        input.extend(frame(&note("exit")));
        assert_eq!(frames(input), ["!", "!", "exit"]);
    }

    #[test]
    fn oversized_bodies_are_skipped_not_allocated() {
        let mut input = format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).into_bytes();
        input.extend(std::iter::repeat_n(b' ', MAX_BODY + 1));
        input.extend(frame(&note("exit")));
        assert_eq!(frames(input), ["!", "exit"]);
    }

    #[test]
    fn a_short_content_length_is_reported_once_and_the_stream_resynchronises() {
        let body = note("bad");
        let mut input = format!("Content-Length: {}\r\n\r\n{body}", body.len() - 5).into_bytes();
        for m in ["a", "b", "c", "d"] {
            input.extend(frame(&note(m)));
        }
        assert_eq!(frames(input), ["!", "a", "b", "c", "d"]);
    }

    #[test]
    fn a_long_content_length_loses_only_its_own_frame() {
        let body = note("bad");
        let mut input = format!("Content-Length: {}\r\n\r\n{body}", body.len() + 10).into_bytes();
        for m in ["a", "b", "c", "d"] {
            input.extend(frame(&note(m)));
        }
        assert_eq!(frames(input), ["!", "a", "b", "c", "d"]);
    }

    #[test]
    fn a_header_block_without_content_length_is_reported_once() {
        let body = note("bad");
        let mut input = format!("Content-Type: x\r\n\r\n{body}").into_bytes();
        for m in ["a", "b", "c", "d"] {
            input.extend(frame(&note(m)));
        }
        assert_eq!(frames(input), ["!", "a", "b", "c", "d"]);
    }

    #[test]
    fn other_headers_and_any_case_are_accepted() {
        let body = note("a");
        let mut input = format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes();
        // Bare LF line ends, and a blank line between frames.
        input.extend(format!("Content-Length:{}\n\n{}\r\n", note("b").len(), note("b")).bytes());
        input.extend(frame(&note("c")));
        assert_eq!(frames(input), ["a", "b", "c"]);
    }

    #[test]
    fn input_read_in_small_pieces_gives_the_same_frames() {
        struct Trickle(std::io::Cursor<Vec<u8>>);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(3);
                self.0.read(&mut buf[..n])
            }
        }
        let body = note("bad");
        let mut input = format!("Content-Length: {}\r\n\r\n{body}", body.len() - 5).into_bytes();
        input.extend(frame(&note("a")));
        input.extend(b"Content-Type: x\r\n\r\n{}");
        input.extend(frame(&note("b")));
        let mut r = FrameReader::new(Trickle(std::io::Cursor::new(input)));
        let mut out = Vec::new();
        loop {
            match r.read_frame().unwrap() {
                Frame::Message(Message::Notification(n)) => out.push(n.method),
                Frame::Message(_) => out.push("?".into()),
                Frame::Malformed(_) => out.push("!".into()),
                Frame::Invalid(_) => out.push("?".into()),
                Frame::End => break,
            }
        }
        assert_eq!(out, ["!", "a", "!", "b"]);
    }

    #[test]
    fn every_message_says_jsonrpc_2_and_parse_error_ids_become_null() {
        let parse_error = Message::Response(lsp_server::Response::new_err(
            lsp_server::RequestId::from(String::new()),
            lsp_server::ErrorCode::ParseError as i32,
            "m".into(),
        ));
        let v: serde_json::Value = serde_json::from_str(&encode(&parse_error).unwrap()).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v["id"].is_null(), "{v}");
        // An empty-string id of any other response stays what it was.
        let other = Message::Response(lsp_server::Response::new_ok(
            lsp_server::RequestId::from(String::new()),
            1,
        ));
        let v: serde_json::Value = serde_json::from_str(&encode(&other).unwrap()).unwrap();
        assert_eq!(
            (v["jsonrpc"].as_str(), v["id"].as_str()),
            (Some("2.0"), Some(""))
        );
    }
}
