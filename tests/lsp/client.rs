//! `loopc lsp` and the editor's process (issue 29, item 7): the
//! `processId` of `initialize` names the client, and once that process is
//! gone the server exits (status 1, as for an end without `shutdown`),
//! though its input is still open. A real process plays the editor.

use crate::harness::Test;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Writes one framed JSON-RPC message.
fn send(to: &mut impl Write, msg: &serde_json::Value) {
    let body = msg.to_string();
    write!(to, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
    to.flush().expect("flush");
}

/// Reads one framed message's body.
fn recv(from: &mut impl BufRead) -> serde_json::Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(
            from.read_line(&mut line).expect("read") > 0,
            "the server closed its output"
        );
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    from.read_exact(&mut body).expect("body");
    serde_json::from_slice(&body).expect("JSON")
}

#[test]
fn the_server_exits_when_its_client_process_is_gone() {
    let test = Test::new();
    let mut editor = Command::new("sleep")
        .arg("600")
        .spawn()
        .expect("start the stand-in editor");
    let mut server = test
        .loopc(&["lsp"])
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start loopc lsp");
    let mut input = server.stdin.take().expect("stdin");
    let mut output = BufReader::new(server.stdout.take().expect("stdout"));
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": editor.id(), "rootUri": null, "capabilities": {}}}),
    );
    let init = recv(&mut output);
    assert!(init.get("result").is_some(), "{init}");
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    // Still serving while the editor lives.
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": "file:///p.loop"}}}),
    );
    assert_eq!(recv(&mut output)["id"], 2);
    assert!(server.try_wait().expect("wait").is_none());
    // The editor dies; the server's input stays open (held here).
    editor.kill().expect("kill the editor");
    editor.wait().expect("reap the editor");
    let mut status = None;
    for _ in 0..600 {
        status = server.try_wait().expect("wait");
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let Some(status) = status else {
        let _ = server.kill();
        let _ = server.wait();
        panic!("loopc lsp still runs after its client's process ended");
    };
    assert_eq!(status.code(), Some(1));
    drop(input);
}
