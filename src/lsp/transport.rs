//! The stdio transport of `loopc lsp`: LSP base-protocol framing
//! (`Content-Length` headers) over stdin/stdout.
//!
//! lsp-server's own stdio transport ends the connection on the first
//! malformed message. This one answers a body that is not JSON-RPC with a
//! `-32700 Parse error` response (id `null`, as JSON-RPC 2.0 says) and reads
//! on; a body larger than [`MAX_BODY`] is skipped without being held in memory.

use lsp_server::{Connection, Message};
use std::io::{BufRead, Read, Write};
use std::thread::JoinHandle;

/// The largest message body accepted, in bytes (64 MiB); larger ones are
/// skipped and answered with a parse error.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// Starts reader and writer threads on stdin/stdout and returns the server
/// side of the connection plus the threads to join after it is dropped.
pub fn stdio() -> (Connection, Vec<JoinHandle<()>>) {
    let (server, client) = Connection::memory();
    let to_server = client.sender;
    let from_server = client.receiver;
    let reader = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            match read_frame(&mut input) {
                Ok(Frame::Message(m)) => {
                    if to_server.send(m).is_err() {
                        return;
                    }
                }
                Ok(Frame::Malformed(why)) => {
                    let err = lsp_server::Response {
                        id: lsp_server::RequestId::from(String::new()),
                        result: None,
                        error: Some(lsp_server::ResponseError {
                            code: lsp_server::ErrorCode::ParseError as i32,
                            message: format!("loopc lsp: {why}"),
                            data: None,
                        }),
                    };
                    // Written here rather than through the writer thread, which
                    // must end as soon as the server drops its sender.
                    if write_message(&Message::Response(err)).is_err() {
                        return;
                    }
                }
                Ok(Frame::End) | Err(_) => return,
            }
        }
    });
    let writer = std::thread::spawn(move || {
        for message in from_server {
            if write_message(&message).is_err() {
                return;
            }
        }
    });
    (server, vec![reader, writer])
}

/// Writes one framed message to stdout, whole, under the stdout lock.
fn write_message(message: &Message) -> std::io::Result<()> {
    let body = null_parse_error_id(serde_json::to_string(message).map_err(std::io::Error::other)?);
    let mut out = std::io::stdout().lock();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

/// A parse-error response has no request to refer to: JSON-RPC says its id is
/// `null`. lsp-server's ids cannot be null, so the empty-string id stands in
/// for it and is rewritten here.
fn null_parse_error_id(body: String) -> String {
    if body.contains("\"code\":-32700") && body.contains("\"id\":\"\"") {
        body.replacen("\"id\":\"\"", "\"id\":null", 1)
    } else {
        body
    }
}

/// One read from the input.
#[derive(Debug)]
pub enum Frame {
    /// A well-formed message.
    Message(Message),
    /// A frame whose body is not a JSON-RPC message (or is too large); why.
    Malformed(String),
    /// The input ended.
    End,
}

/// Reads one framed message. I/O errors end the connection; bad headers and
/// bad bodies are [`Frame::Malformed`] so the caller can answer and go on.
pub fn read_frame(input: &mut impl BufRead) -> std::io::Result<Frame> {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(Frame::End);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let Some(length) = length else {
        return Ok(Frame::Malformed(
            "missing or invalid Content-Length header".into(),
        ));
    };
    if length > MAX_BODY {
        // Skip the body without holding it.
        let skipped = std::io::copy(&mut input.take(length as u64), &mut std::io::sink())?;
        if skipped < length as u64 {
            return Ok(Frame::End);
        }
        return Ok(Frame::Malformed(format!(
            "message of {length} bytes is larger than {MAX_BODY}"
        )));
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body)?;
    match serde_json::from_slice::<Message>(&body) {
        Ok(m) => Ok(Frame::Message(m)),
        Err(e) => Ok(Frame::Malformed(format!("malformed message: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[test]
    fn malformed_bodies_do_not_end_the_stream() {
        let mut input = frame(r#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud83d"}}"#);
        input.extend(frame("{not json"));
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        let mut r = std::io::Cursor::new(input);
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::Malformed(_)));
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::Malformed(_)));
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::Message(_)));
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::End));
    }

    #[test]
    fn oversized_bodies_are_skipped_not_allocated() {
        let mut input = format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).into_bytes();
        input.extend(std::iter::repeat_n(b' ', MAX_BODY + 1));
        input.extend(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#));
        let mut r = std::io::Cursor::new(input);
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::Malformed(_)));
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::Message(_)));
    }

    #[test]
    fn parse_error_ids_become_null() {
        let b = r#"{"id":"","error":{"code":-32700,"message":"m"}}"#.to_string();
        assert_eq!(
            null_parse_error_id(b),
            r#"{"id":null,"error":{"code":-32700,"message":"m"}}"#
        );
    }
}
