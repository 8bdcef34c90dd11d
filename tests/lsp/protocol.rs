//! `loopc lsp` driven through its protocol: the built binary is started and
//! spoken to over real stdio with JSON-RPC framing (`Content-Length`),
//! as an editor does.
//!
//! Over 600 lines: the protocol client (about 200 lines) and one test per
//! request kind; the client is used by nothing else.

use crate::harness::Test;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

struct Client {
    /// The directory the server runs in.
    _test: Test,
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for something else.
    stash: Vec<Value>,
}

/// Reads one framed message; `None` at end of stream.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    let message: Value = serde_json::from_slice(&body).ok()?;
    // Every JSON-RPC 2.0 message says so; strict clients drop one that does not.
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    Some(message)
}

impl Client {
    fn start() -> Client {
        let mut c = Client::start_uninitialized();
        c.notify("initialized", json!({}));
        c
    }

    /// Started and `initialize`d, without the `initialized` notification.
    fn start_uninitialized() -> Client {
        let test = Test::new();
        let mut child = test
            .loopc(&["lsp"])
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start loopc lsp");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(m) = read_message(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            _test: test,
            child,
            stdin,
            rx,
            next_id: 1,
            stash: Vec::new(),
        };
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        c.stash.push(json!({"initialize": init["result"].clone()}));
        c
    }

    fn initialize_result(&self) -> Value {
        self.stash
            .iter()
            .find_map(|m| m.get("initialize").cloned())
            .expect("initialize result")
    }

    fn send(&mut self, msg: Value) {
        self.send_body(&msg.to_string());
    }

    /// Sends `body` as one frame, as it is (it need not be JSON).
    fn send_body(&mut self, body: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn recv(&mut self) -> Value {
        match self.rx.recv_timeout(TIMEOUT) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("no message from the server in {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.stash.push(m);
        }
    }

    /// The result of a request that must succeed.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// Waits for the diagnostics of `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let matches = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        };
        if let Some(i) = self.stash.iter().position(matches) {
            let m = self.stash.remove(i);
            return m["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }
        loop {
            let m = self.recv();
            if matches(&m) {
                return m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
            self.stash.push(m);
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "loop", "version": 1, "text": text}}),
        );
        self.diagnostics(uri, 1)
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
        self.diagnostics(uri, version)
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.call(
            method,
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            if start.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                panic!("the server did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `shutdown` then `exit`; returns the exit status.
    fn shutdown(mut self) -> ExitStatus {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        self.stdin = None;
        self.wait_exit()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The (line, UTF-16 column) of the first occurrence of `needle` (after
/// skipping `skip` occurrences) in `text`.
fn pos(text: &str, needle: &str, skip: usize) -> (u32, u32) {
    let mut from = 0;
    let mut at = 0;
    for _ in 0..=skip {
        at = from + text[from..].find(needle).expect("needle in text");
        from = at + needle.len();
    }
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let line = text[..at].matches('\n').count() as u32;
    let col = text[line_start..at].encode_utf16().count() as u32;
    (line, col)
}

const URI: &str = "file:///tmp/plan.loop";

const PLAN: &str = r#"budget { iterations = 5 }

agent claude {
  run = "claude -p"
}

gate tests = "pytest -q"
gate review {
  agent  = claude
  prompt = "Review it"
}

defaults {
  agent = claude
  gates = [tests]
}

task session "Extract session manager" {
  prompt = "Move sessions."
}

task refresh "Add token refresh": session {
  prompt   = "Refresh tokens."
  gates    = [tests, review]
  attempts = 5
}

task regen: refresh {
  run = "make generate"
}
"#;

#[test]
fn initialize_announces_every_capability() {
    let c = Client::start();
    let caps = c.initialize_result()["capabilities"].clone();
    assert_eq!(
        caps["textDocumentSync"]["change"], 2,
        "incremental sync: {caps}"
    );
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    for cap in [
        "definitionProvider",
        "hoverProvider",
        "documentSymbolProvider",
        "documentFormattingProvider",
    ] {
        assert_eq!(caps[cap], true, "{cap}: {caps}");
    }
    assert!(caps["completionProvider"].is_object(), "{caps}");
    assert_eq!(c.initialize_result()["serverInfo"]["name"], "loopc");
    assert!(c.shutdown().success());
}

/// The diagnostics `loopc check --format json` prints for `text`.
fn check_json(text: &str) -> Vec<Value> {
    let test = Test::new().file("plan.loop", text);
    let path = test.root.join("plan.loop");
    let path = path.to_str().expect("UTF-8 path");
    let out = test.loopc(&["check", "--format", "json", path]).output();
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Ranged edits (as editors send them for incremental sync) give the
/// document the text a full-text change would: the same diagnostics, with
/// a byte-order mark and non-ASCII text before the edits, and several
/// edits in one notification applied in order.
#[test]
fn ranged_edits_give_the_diagnostics_of_the_edited_text() {
    let uri_b = "file:///tmp/edited/b.loop";
    let uri_full = "file:///tmp/full/b.loop";
    let before = "\u{FEFF}agent claude { run = \"x\" }\ntask t \"é😀\" { prompt = \"p\" }\n";
    // Line 0: `run` → `rn` after the BOM (one UTF-16 unit); line 1:
    // `prompt` → `promt` after the emoji (two UTF-16 units), then a new
    // task depending on an unknown one, inserted at the end.
    let after = "\u{FEFF}agent claude { rn = \"x\" }\ntask t \"é😀\" { promt = \"p\" }\ntask u: nope { run = \"y\" }\n";
    let mut c = Client::start();
    c.open(uri_b, before);
    let range = |l0: u32, c0: u32, l1: u32, c1: u32| json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}});
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri_b, "version": 2},
        "contentChanges": [
            {"range": range(0, 17, 0, 18), "text": ""},
            {"range": range(1, 19, 1, 20), "text": ""},
        ]}),
    );
    c.diagnostics(uri_b, 2);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri_b, "version": 3},
               "contentChanges": [{"range": range(2, 0, 2, 0), "text": "task u: nope { run = \"y\" }\n"}]}),
    );
    let edited = c.diagnostics(uri_b, 3);
    let full = c.open(uri_full, after);
    let codes = |d: &[Value]| -> Vec<(Value, Value)> {
        d.iter()
            .map(|d| (d["code"].clone(), d["range"].clone()))
            .collect()
    };
    assert_eq!(codes(&edited), codes(&full), "{edited:#?}");
    assert!(edited.len() >= 3, "E0002 twice and E0003: {edited:#?}");
}

#[test]
fn a_change_to_a_document_never_opened_is_ignored() {
    let mut c = Client::start();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nope.loop", "version": 2},
               "contentChanges": [{"text": "x"}]}),
    );
    // Messages are answered in order: by the time the opened document's
    // diagnostics come, any for the change would have come first.
    c.open("file:///tmp/other/a.loop", "task a { run = \"x\" }\n");
    let stray: Vec<&Value> = c
        .stash
        .iter()
        .filter(|m| m["params"]["uri"] == "file:///nope.loop")
        .collect();
    assert!(stray.is_empty(), "{stray:#?}");
    // Opened, then changed: diagnosed.
    c.open("file:///nope.loop", "task a { run = \"x\" }\n");
    assert_eq!(c.change("file:///nope.loop", 2, "x").len(), 1);
}

#[test]
fn diagnostics_on_open_and_change_are_those_of_check() {
    // Errors after non-ASCII text on the same line (UTF-16 columns differ
    // from byte and char columns), a duplicate with a secondary label, an
    // unknown reference and a warning.
    let text = "agent claude { run = \"x\" }\n\
                task t \"Crème brûlée 😀😀\" { prompt = \"é\" agnt = claude }\n\
                task u \"日本語\": nope { prompt = \"p\" agent = claude }\n\
                task t { run = \"dup\" }\n";
    let mut c = Client::start();
    let got = c.open(URI, text);
    let want = check_json(text);
    assert!(want.len() >= 4, "check found too little: {want:#?}");
    assert_eq!(got.len(), want.len(), "got {got:#?}\nwant {want:#?}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g["code"], w["code"], "{g} vs {w}");
        assert_eq!(g["range"], w["range"], "{g} vs {w}");
        assert_eq!(g["source"], "loopc");
        let severity = if w["severity"] == "error" { 1 } else { 2 };
        assert_eq!(g["severity"], severity, "{g}");
        let msg = g["message"].as_str().unwrap_or("");
        assert!(
            msg.starts_with(w["message"].as_str().unwrap_or("?")),
            "{g} vs {w}"
        );
        let secondary: Vec<&Value> = w["labels"]
            .as_array()
            .map(|l| l.iter().filter(|l| l["primary"] == false).collect())
            .unwrap_or_default();
        let related = g["relatedInformation"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(related.len(), secondary.len(), "{g}");
        for (r, l) in related.iter().zip(secondary) {
            assert_eq!(r["location"]["uri"], URI);
            assert_eq!(r["location"]["range"], l["range"]);
            assert_eq!(r["message"], l["message"]);
        }
    }

    // The unknown field after "Crème brûlée 😀😀": UTF-16 columns.
    let e0002 = got.iter().find(|d| d["code"] == "E0002").expect("E0002");
    let (line, col) = pos(text, "agnt", 0);
    assert_eq!(
        e0002["range"]["start"],
        json!({"line": line, "character": col})
    );
    assert_eq!(
        e0002["range"]["end"],
        json!({"line": line, "character": col + 4})
    );
    assert_eq!(col, 42, "hand-counted UTF-16 column");
    assert!(e0002["message"].as_str().unwrap_or("").contains("agent"));
    // The duplicate task points back at the first definition.
    let e0004 = got.iter().find(|d| d["code"] == "E0004").expect("E0004");
    let (l, ch) = pos(text, "t \"Cr", 0);
    assert_eq!(
        e0004["relatedInformation"][0]["location"]["range"]["start"],
        json!({"line": l, "character": ch})
    );
    assert_eq!(
        e0004["relatedInformation"][0]["message"],
        "first defined here"
    );
    assert!(got.iter().any(|d| d["code"] == "E0005"));

    // Every change republishes: fixed, then broken differently.
    let fixed = "agent claude { run = \"x\" }\nbudget { time = 1h }\n\
                 task t \"Crème brûlée 😀\" { prompt = \"é\" agent = claude }\n";
    assert_eq!(c.change(URI, 2, fixed), Vec::<Value>::new());
    let broken = "task t { prompt = }\n";
    let d = c.change(URI, 3, broken);
    assert_eq!(d.len(), check_json(broken).len());
    assert!(d.iter().any(|d| d["code"] == "E0001"), "{d:?}");
    assert!(c.shutdown().success());
}

#[test]
fn go_to_definition_from_references() {
    let mut c = Client::start();
    c.open(URI, PLAN);
    let cases = [
        // (reference, skip, definition, skip)
        ("session {", 0, "session \"Extract", 0), // dependency
        ("claude\n  prompt", 0, "claude {", 0),   // gate's agent = claude
        ("claude\n  gates", 0, "claude {", 0),    // defaults.agent
        ("tests]", 0, "tests =", 0),              // defaults.gates entry
        ("review]", 0, "review {", 0),            // task gates entry
        ("refresh {", 0, "refresh \"Add", 0),     // dependency
    ];
    for (reference, rs, def, ds) in cases {
        let (line, col) = pos(PLAN, reference, rs);
        let (dl, dc) = pos(PLAN, def, ds);
        // Anywhere on the name, including just after it.
        for offset in [0, 1, 2] {
            let r = c.at("textDocument/definition", URI, line, col + offset);
            assert_eq!(r["uri"], URI, "{reference}: {r}");
            assert_eq!(
                r["range"]["start"],
                json!({"line": dl, "character": dc}),
                "{reference}: {r}"
            );
        }
    }
    // Not on a reference: null.
    let (line, col) = pos(PLAN, "prompt = \"Move", 0);
    assert_eq!(c.at("textDocument/definition", URI, line, col), Value::Null);
    assert!(c.shutdown().success());
}

fn hover_text(c: &mut Client, needle: &str, skip: usize) -> String {
    let (line, col) = pos(PLAN, needle, skip);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    assert_eq!(h["contents"]["kind"], "markdown", "{needle}: {h}");
    h["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[test]
fn hover_on_tasks_and_references() {
    let mut c = Client::start();
    c.open(URI, PLAN);
    let refresh = hover_text(&mut c, "refresh \"Add", 0);
    for want in [
        "**task** `refresh` — Add token refresh",
        "- dependencies: `session`",
        "- agent: `claude` (from defaults)",
        "- gates: `tests`, `review`",
        "- attempts: 5",
        "- key: `",
    ] {
        assert!(refresh.contains(want), "missing {want:?} in:\n{refresh}");
    }
    let session = hover_text(&mut c, "session \"Extract", 0);
    assert!(
        session.contains("- gates: `tests` (from defaults)"),
        "{session}"
    );
    assert!(session.contains("- attempts: 3 (default)"), "{session}");
    assert!(session.contains("- dependencies: none"), "{session}");
    let regen = hover_text(&mut c, "regen", 0);
    assert!(
        regen.contains("command task: runs `make generate`"),
        "{regen}"
    );

    // On a reference: the dependency `session` shows the task.
    let dep = hover_text(&mut c, "session {", 0);
    assert_eq!(dep, session);
    // `agent = claude` shows the agent, a gates entry shows the gate.
    let agent = hover_text(&mut c, "claude\n  gates", 0);
    assert!(agent.starts_with("**agent** `claude`"), "{agent}");
    assert!(agent.contains("- run: `claude -p`"), "{agent}");
    let gate = hover_text(&mut c, "review]", 0);
    assert!(gate.starts_with("**gate** `review`"), "{gate}");
    assert!(gate.contains("agent-judged by `claude`"), "{gate}");
    // A field name shows what it means.
    let field = hover_text(&mut c, "attempts = 5", 0);
    assert!(field.starts_with("**task.attempts**"), "{field}");
    // Nothing under the cursor: null.
    let (line, _) = pos(PLAN, "budget", 0);
    assert_eq!(c.at("textDocument/hover", URI, line + 1, 0), Value::Null);
    assert!(c.shutdown().success());
}

#[test]
fn a_task_being_typed_is_still_a_symbol_and_a_definition() {
    // `task a` lacks its `}`: an item the parser could not read, which
    // still defines the name its header gives (docs/language.md).
    let text = "agent claude { run = \"c\" }\ndefaults { agent = claude }\n\
                task a \"A\" { prompt = \"p\"\ntask b \"B\": a { prompt = \"q\" }\n";
    let uri = "file:///typing.loop";
    let mut c = Client::start();
    c.open(uri, text);
    let r = c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = r
        .as_array()
        .expect("symbols")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(names.contains(&"a"), "{names:?}");
    let (line, col) = pos(text, "a { prompt = \"q", 0);
    let def = c.at("textDocument/definition", uri, line, col);
    let (dl, dc) = pos(text, "a \"A\"", 0);
    assert_eq!(
        def["range"]["start"],
        json!({"line": dl, "character": dc}),
        "{def}"
    );
    assert!(c.shutdown().success());
}

#[test]
fn document_symbols_list_tasks_agents_and_gates() {
    let mut c = Client::start();
    c.open(URI, PLAN);
    let r = c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    let got: Vec<(String, i64)> = r
        .as_array()
        .expect("symbols")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or("").to_string(),
                s["kind"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let (function, class, interface) = (12, 5, 11);
    let want: Vec<(String, i64)> = [
        ("claude", class),
        ("tests", interface),
        ("review", interface),
        ("session", function),
        ("refresh", function),
        ("regen", function),
    ]
    .iter()
    .map(|(n, k)| (n.to_string(), *k))
    .collect();
    assert_eq!(got, want);
    let refresh = &r[4];
    assert_eq!(refresh["detail"], "Add token refresh");
    let (l, ch) = pos(PLAN, "refresh \"Add", 0);
    assert_eq!(
        refresh["selectionRange"]["start"],
        json!({"line": l, "character": ch})
    );
    assert_eq!(
        refresh["range"]["start"],
        json!({"line": l, "character": ch - 5})
    );
    assert!(c.shutdown().success());
}

fn labels(v: &Value) -> Vec<String> {
    let items = v
        .as_array()
        .or_else(|| v["items"].as_array())
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .map(|i| i["label"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn completion_offers_the_names_of_items_that_do_not_parse() {
    let mut c = Client::start();
    // `rev` and `zz` are half typed: each still defines its name.
    let text = "agent sh { run = \"x\" }\nagent zz { run = \"x\" bogus }\n\
                gate ok = \"true\"\ngate rev { agent = sh prompt = \"p\" on_fail = }\n\
                defaults { gates = [ok, ]  agent = \n";
    let diags = c.open(URI, text);
    assert!(diags.iter().any(|d| d["code"] == "E0001"), "{diags:?}");
    let mut complete = |needle: &str, shift: i64| {
        let (line, col) = pos(text, needle, 0);
        labels(&c.at(
            "textDocument/completion",
            URI,
            line,
            (col as i64 + shift) as u32,
        ))
    };
    assert_eq!(complete(", ]", 2), vec!["rev"]);
    assert_eq!(complete("agent = \n", 8), vec!["sh", "zz"]);
    assert!(c.shutdown().success());
}

#[test]
fn completion_of_fields_and_names() {
    let mut c = Client::start();
    // A document being typed: the last task is unfinished.
    let text = "agent claude { run = \"x\" }\nagent codex { run = \"y\" }\n\
                gate tests = \"t\"\ngate lint = \"l\"\n\
                task a { prompt = \"p\" agent = claude }\n\
                task b: a  { prompt = \"q\"\n  gates = [tests, ]\n  att\n  agent = \n";
    let diags = c.open(URI, text);
    assert!(diags.iter().any(|d| d["code"] == "E0001"), "{diags:?}");
    let mut complete = |needle: &str, skip: usize, shift: i64| {
        let (line, col) = pos(text, needle, skip);
        labels(&c.at(
            "textDocument/completion",
            URI,
            line,
            (col as i64 + shift) as u32,
        ))
    };
    // Field names valid in a task block, minus those already set.
    let fields = complete("  att", 0, 2);
    assert!(fields.contains(&"accept".to_string()), "{fields:?}");
    assert!(fields.contains(&"timeout".to_string()), "{fields:?}");
    assert!(!fields.contains(&"prompt".to_string()), "{fields:?}");
    assert!(!fields.contains(&"output".to_string()), "{fields:?}");
    // With a prefix: only matching ones.
    assert_eq!(complete("att\n", 0, 3), vec!["attempts"]);
    // Agent names after `agent = `.
    assert_eq!(complete("agent = \n", 0, 8), vec!["claude", "codex"]);
    // Gate names inside `gates = [`, but those the list has already.
    assert_eq!(complete(", ]", 0, 2), vec!["lint"]);
    // Task names after `:` (not the task itself, nor one named already).
    assert_eq!(complete("b: a", 0, 2), vec!["a"]);
    assert!(complete("a  {", 0, 2).is_empty());
    // In an agent block: agent fields.
    let agent_fields = complete("run = \"y\"", 0, 0);
    assert_eq!(
        agent_fields,
        [
            "run", "output", "timeout", "idle", "cost", "env", "fallback", "executor"
        ]
    );
    // Between items: item keywords.
    let top = complete("gate lint", 0, 0);
    assert!(top.contains(&"task".to_string()), "{top:?}");
    // Inside a string: nothing.
    assert!(complete("\"p\"", 0, 1).is_empty());
    assert!(c.shutdown().success());
}

#[test]
fn executors_are_known_to_the_editor() {
    let mut c = Client::start();
    let text = "executor sandbox { run = \"bwrap --ro-bind / / --\" }\n\
                executor cluster { run = \"srun\" }\n\
                agent claude {\n  run = \"claude -p\"\n  executor = sandbox\n}\n\
                gate tests {\n  run = \"make test\"\n  executor = cluster\n}\n\
                defaults { agent = claude  gates = [tests] }\n\
                budget { iterations = 3 }\n\
                task a { prompt = \"p\" }\n\
                loop {\n  setup = \"true\"\n  executor = \n";
    c.open(URI, text);
    // Completion: executor names after `executor = `, the field in blocks.
    let (line, col) = pos(text, "executor = \n", 0);
    let names = labels(&c.at("textDocument/completion", URI, line, col + 11));
    assert_eq!(names, ["sandbox", "cluster"]);
    let (line, col) = pos(text, "run = \"srun\"", 0);
    let fields = labels(&c.at("textDocument/completion", URI, line, col));
    assert_eq!(fields, ["run"]);
    // Go to definition from `executor = sandbox` and `executor = cluster`.
    for (reference, def) in [("sandbox\n}", "sandbox {"), ("cluster\n}", "cluster {")] {
        let (line, col) = pos(text, reference, 0);
        let (dl, dc) = pos(text, def, 0);
        let r = c.at("textDocument/definition", URI, line, col + 1);
        assert_eq!(
            r["range"]["start"],
            json!({"line": dl, "character": dc}),
            "{reference}: {r}"
        );
    }
    // Hover on a reference shows the executor; on the field, its meaning.
    let (line, col) = pos(text, "sandbox\n}", 0);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let h = h["contents"]["value"].as_str().unwrap_or("").to_string();
    assert!(h.starts_with("**executor** `sandbox`"), "{h}");
    assert!(
        h.contains("`bwrap --ro-bind / / --` `sh -c COMMAND`"),
        "{h}"
    );
    let (line, col) = pos(text, "executor = cluster", 0);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let h = h["contents"]["value"].as_str().unwrap_or("").to_string();
    assert!(h.starts_with("**gate.executor**"), "{h}");
    // Document symbols list executors.
    let r = c.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    let executors: Vec<&str> = r
        .as_array()
        .expect("symbols")
        .iter()
        .filter(|s| s["detail"] == "executor")
        .map(|s| s["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(executors, ["sandbox", "cluster"]);
    assert!(c.shutdown().success());
}

#[test]
fn an_agents_fallback_is_completed_resolved_and_hovered() {
    let mut c = Client::start();
    let text = "agent claude { run = \"claude -p\"  fallback = codex }\n\
                agent codex { run = \"codex exec -\" }\n\
                agent gemini { run = \"gemini\"  fallback = \n";
    c.open(URI, text);
    // Agent names after `fallback = `.
    let (line, col) = pos(text, "fallback = \n", 0);
    let names = labels(&c.at("textDocument/completion", URI, line, col + 11));
    assert!(names.contains(&"codex".to_string()), "{names:?}");
    // Go to definition from the reference.
    let (line, col) = pos(text, "codex }", 0);
    let (dl, dc) = pos(text, "codex {", 0);
    let r = c.at("textDocument/definition", URI, line, col + 1);
    assert_eq!(
        r["range"]["start"],
        json!({"line": dl, "character": dc}),
        "{r}"
    );
    // Hover on the reference shows the agent; on `claude`, its fallback.
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let value = h["contents"]["value"].as_str().unwrap_or("");
    assert!(value.starts_with("**agent** `codex`"), "{h}");
    let (line, col) = pos(text, "claude {", 0);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let value = h["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("- fallback: `codex`"), "{h}");
    // The field's documentation.
    let (line, col) = pos(text, "fallback = codex", 0);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let value = h["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("usage or rate limited"), "{h}");
    assert!(c.shutdown().success());
}

#[test]
fn formatting_returns_loopc_fmt_output() {
    let mut c = Client::start();
    let ugly = "task a{run=\"x\"   attempts=2}\n";
    c.open(URI, ugly);
    let r = c.call(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let edits = r.as_array().expect("edits");
    assert_eq!(edits.len(), 1, "{r}");
    assert_eq!(
        edits[0]["newText"],
        loopc::fmt::format_source(ugly).expect("formats")
    );
    assert_eq!(
        edits[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    assert_eq!(edits[0]["range"]["end"], json!({"line": 1, "character": 0}));
    // Already formatted: no edits. Syntax errors: null.
    let pretty = loopc::fmt::format_source(ugly).expect("formats");
    c.change(URI, 2, &pretty);
    let r = c.call(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(r, json!([]));
    c.change(URI, 3, "task a {");
    let r = c.call(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(r, Value::Null);
    assert!(c.shutdown().success());
}

/// Types an example plan character by character (in steps) and asks for
/// everything at the cursor after each change: the server answers every
/// request and publishes diagnostics for every version.
#[test]
fn survives_half_typed_documents() {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review-loop.loop"),
    )
    .expect("example");
    let mut texts: Vec<String> = Vec::new();
    let cuts: Vec<usize> = (0..=example.len())
        .filter(|i| example.is_char_boundary(*i))
        .step_by(23)
        .collect();
    for cut in cuts {
        texts.push(example[..cut].to_string());
    }
    // Odd inputs: unbalanced brackets, stray quotes, lone surrogates can't be
    // sent in JSON, but non-ASCII and control characters can.
    for odd in [
        "}}}]]]",
        "task",
        "task \"",
        "task a: : : {",
        "gate = = =",
        "\u{feff}task 😀 { prompt = \"\"\"",
        "task a { env = { A = ",
        "defaults { gates = [[[[",
        "\0\u{1}\t\r\n",
        "task a { prompt = \"x\" }\ntask a: a { run = 1 }",
    ] {
        texts.push(odd.to_string());
    }
    let mut c = Client::start();
    c.open(URI, "");
    for (i, text) in texts.iter().enumerate() {
        let version = i as i64 + 2;
        c.change(URI, version, text);
        let last_line = text.matches('\n').count() as u32;
        let last_col = text
            .rsplit('\n')
            .next()
            .map_or(0, |l| l.encode_utf16().count()) as u32;
        for (line, col) in [(last_line, last_col), (0, 3), (last_line + 5, 99)] {
            for method in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/completion",
            ] {
                let r = c.request(
                    method,
                    json!({"textDocument": {"uri": URI},
                           "position": {"line": line, "character": col}}),
                );
                assert!(r.get("error").is_none(), "{method} on {text:?}: {r}");
            }
        }
        for method in ["textDocument/documentSymbol", "textDocument/formatting"] {
            let r = c.request(
                method,
                json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
            );
            assert!(r.get("error").is_none(), "{method} on {text:?}: {r}");
        }
    }
    assert!(texts.len() > 20);
    assert!(c.shutdown().success());
}

#[test]
fn unknown_requests_get_errors_and_the_server_goes_on() {
    let mut c = Client::start();
    let r = c.request("textDocument/references", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A request on a document that is not open: null.
    let r = c.at("textDocument/hover", "file:///nowhere.loop", 0, 0);
    assert_eq!(r, Value::Null);
    assert!(c.open(URI, PLAN).is_empty());
    assert!(c.shutdown().success());
}

#[test]
fn close_clears_diagnostics() {
    let mut c = Client::start();
    assert!(!c.open(URI, "task a {").is_empty());
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    let m = loop {
        let m = c.recv();
        if m["method"] == "textDocument/publishDiagnostics" {
            break m;
        }
    };
    assert_eq!(m["params"]["diagnostics"], json!([]));
    assert!(c.shutdown().success());
}

#[test]
fn shutdown_then_exit_ends_with_status_0_and_exit_alone_with_1() {
    let c = Client::start();
    assert_eq!(c.shutdown().code(), Some(0));

    let mut c = Client::start();
    c.notify("exit", Value::Null);
    c.stdin = None;
    assert_eq!(c.wait_exit().code(), Some(1));

    // Between shutdown and exit: requests are refused, notifications ignored.
    let mut c = Client::start();
    c.open(URI, PLAN);
    let r = c.request("shutdown", Value::Null);
    assert_eq!(r["result"], Value::Null, "{r}");
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r["error"]["code"], -32600, "{r}");
    c.notify("exit", Value::Null);
    c.stdin = None;
    assert_eq!(c.wait_exit().code(), Some(0));

    // A client that goes away without a word.
    let mut c = Client::start();
    c.stdin = None;
    assert_eq!(c.wait_exit().code(), Some(1));
}

/// The analysis behind every request, at many offsets of many prefixes and
/// mangled versions of every example: it never panics (a panic fails the test).
#[test]
fn analysis_answers_everywhere_on_broken_text() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("examples").flatten() {
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            sources.push(text);
        }
    }
    assert!(!sources.is_empty());
    let uri: lsp_types::Uri = URI.parse().expect("uri");
    let mut answered = 0usize;
    for source in &sources {
        let mut variants = Vec::new();
        let bounds: Vec<usize> = (0..=source.len())
            .filter(|i| source.is_char_boundary(*i))
            .collect();
        for &cut in bounds.iter().step_by(11) {
            variants.push(source[..cut].to_string());
            // The same text with a chunk removed from the middle.
            let later = bounds
                .iter()
                .copied()
                .find(|b| *b >= cut + 13)
                .unwrap_or(source.len());
            variants.push(format!("{}{}", &source[..cut], &source[later..]));
        }
        for text in variants {
            let a = loopc::lsp::Analysis::new("plan.loop", text.clone());
            let _ = a.diagnostics(&uri, Vec::new());
            let _ = a.symbols();
            let _ = a.formatting();
            for offset in (0..=text.len() + 2).step_by(7) {
                let _ = a.hover(offset);
                let _ = a.definition(&uri, offset);
                let _ = a.completion(offset);
                answered += 1;
            }
        }
    }
    assert!(answered > 1000, "only {answered} positions tried");
}

#[test]
fn malformed_payloads_get_a_parse_error_and_the_server_goes_on() {
    let mut c = Client::start();
    for body in [
        // A lone surrogate, as a JavaScript client can send.
        r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x.loop","languageId":"loop","version":1,"text":"task a {\ud83d}"}}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":99,",
        // An array is no message (serde would read its elements as fields).
        "[3,\"shutdown\"]",
    ] {
        c.send_body(body);
        let m = c.recv();
        assert_eq!(m["error"]["code"], -32700, "{m}");
        assert!(m["id"].is_null(), "{m}");
    }
    // A request whose method is not a string is answered, not dropped.
    for body in [
        r#"{"jsonrpc":"2.0","id":3,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":null}"#,
    ] {
        c.send_body(body);
        let m = c.recv();
        assert_eq!(m["error"]["code"], -32600, "{m}");
    }
    let diags = c.open("file:///ok.loop", "task a { promt = \"x\" }\n");
    assert_eq!(diags[0]["code"], "E0002");
    assert!(c.shutdown().success());
}

#[test]
fn a_request_whose_id_does_not_fit_gets_an_invalid_request_error() {
    let mut c = Client::start();
    for id in ["3000000000", "-2147483649", "1.5", "{\"a\":1}", "null"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/documentSymbol","params":{{"textDocument":{{"uri":"file:///x.loop"}}}}}}"#
        );
        c.send_body(&body);
        let m = c.recv();
        assert_eq!(m["error"]["code"], -32600, "{id}: {m}");
        assert!(m["id"].is_null(), "{id}: {m}");
    }
    // The largest id that fits is answered.
    let body = r#"{"jsonrpc":"2.0","id":2147483647,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///x.loop"}}}"#;
    c.send_body(body);
    let m = c.recv();
    assert_eq!(m["id"], 2147483647_i64, "{m}");
    assert!(m.get("error").is_none(), "{m}");
    assert!(c.shutdown().success());
}

#[test]
fn a_bad_frame_is_reported_once_and_later_requests_are_served() {
    let body = r#"{"jsonrpc":"2.0","id":98,"method":"shutdown"}"#;
    for bad in [
        // Content-Length too short, too long, and missing.
        format!("Content-Length: {}\r\n\r\n{body}", body.len() - 7),
        format!("Content-Length: {}\r\n\r\n{body}", body.len() + 9),
        format!("Content-Type: x\r\n\r\n{body}"),
    ] {
        let mut c = Client::start();
        let stdin = c.stdin.as_mut().unwrap();
        stdin.write_all(bad.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut answered = 0;
        for _ in 0..4 {
            let symbols = c.request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": "file:///none.loop"}}),
            );
            assert!(symbols.get("error").is_none(), "{bad:?}: {symbols}");
            answered += 1;
        }
        assert_eq!(answered, 4);
        let parse_errors = c
            .stash
            .iter()
            .filter(|m| m["error"]["code"] == -32700)
            .count();
        assert_eq!(parse_errors, 1, "{bad:?}: {:?}", c.stash);
        assert!(c.shutdown().success(), "{bad:?}");
    }
}

#[test]
fn did_open_before_initialized_is_served() {
    let mut c = Client::start_uninitialized();
    let diags = c.open("file:///early.loop", "task a { run = 1 }\n");
    assert_eq!(diags[0]["code"], "E0007", "{diags:?}");
    assert!(c.shutdown().success());
}

#[test]
fn a_byte_order_mark_counts_as_one_unit_on_line_0_only() {
    let mut c = Client::start();
    let diags = c.open(
        "file:///bom.loop",
        "\u{feff}task a {\n  run = \"x\"\n  bogus = 1\n}\n",
    );
    assert_eq!(diags[0]["code"], "E0002");
    assert_eq!(
        diags[0]["range"]["start"],
        json!({"line": 2, "character": 2})
    );
    assert_eq!(diags[0]["range"]["end"], json!({"line": 2, "character": 7}));
    let diags = c.change("file:///bom.loop", 2, "\u{feff}task a { promt = \"x\" }\n");
    // `promt` starts at UTF-16 column 10 counting the mark (9 without it).
    assert_eq!(
        diags[0]["range"]["start"],
        json!({"line": 0, "character": 10})
    );
    assert!(c.shutdown().success());
}

#[test]
fn field_completion_skips_fields_set_later_and_conflicting_ones() {
    let mut c = Client::start();
    let text = "agent ag { run = \"x\" }\ntask x { prompt = \"p\"  \n  agent = ag }\n";
    c.open("file:///done.loop", text);
    // The cursor is on line 1 after `"p"  `: a field name goes there.
    let r = c.at("textDocument/completion", "file:///done.loop", 1, 22);
    let got = labels(&r);
    assert!(got.contains(&"accept".to_string()), "{got:?}");
    for absent in ["agent", "prompt", "run"] {
        assert!(
            !got.contains(&absent.to_string()),
            "{absent} offered: {got:?}"
        );
    }
    assert!(c.shutdown().success());
}

/// Whether [`lsp_fed`] closes the server's input after writing it.
#[derive(PartialEq)]
enum Input {
    Closed,
    HeldOpen,
}

/// Runs `loopc lsp` in `test` with `input` on its stdin, closed after it
/// or held open until the server ends; its output.
fn lsp_fed(test: &Test, input: &[u8], after: Input) -> std::process::Output {
    let mut child = test
        .loopc(&["lsp"])
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loopc lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("write to loopc lsp");
    let held = (after == Input::HeldOpen).then_some(stdin);
    let out = child.wait_with_output().expect("wait for loopc lsp");
    drop(held);
    out
}

/// Not an editor: text piped in by hand, or nothing at all. Exit 1 (the
/// connection closed without `shutdown`) with a sentence that says what
/// `loopc lsp` is, never lsp-server's "disconnected channel".
#[test]
fn input_that_ends_before_initialize_is_explained() {
    let want = "error: stdin ended before an `initialize` request: `loopc lsp` is a language \
                server that an editor starts, speaking the Language Server Protocol \
                (`Content-Length:` framed JSON-RPC) on stdin and stdout; see docs/editors.md \
                for Neovim, VS Code and Helix\n";
    let test = Test::new();
    test.loopc(&["lsp"]).stdout("").stderr(want).status(1).run();
    let out = lsp_fed(&test, b"x\n", Input::Closed);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), want);
}

/// Before `initialize`, a request is answered `-32002` (LSP), and `exit`
/// ends the server with status 1 and a sentence, not lsp-server's dump of
/// the message.
#[test]
fn requests_and_exit_before_initialize() {
    let test = Test::new();
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let input = frame(r#"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}"#)
        + &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    // Held open: the server ends on `exit`, not on the end of its input.
    let out = lsp_fed(&test, input.as_bytes(), Input::HeldOpen);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the client sent `exit` before `initialize`\n"
    );
    let answer = read_message(&mut BufReader::new(&out.stdout[..])).expect("an answer");
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
}

#[test]
fn a_resolver_is_completed_resolved_and_hovered() {
    let mut c = Client::start();
    let text = "agent claude { run = \"claude -p\" }\n\
                agent fixer { run = \"fix\" }\n\
                defaults { agent = claude  resolver = fixer }\n\
                budget { iterations = 3 }\n\
                task a { prompt = \"p\" }\n\
                task b { prompt = \"q\"\n  resolver = \n";
    c.open(URI, text);
    // Agent names after `resolver = `, and the field among a task's.
    let (line, col) = pos(text, "resolver = \n", 0);
    let names = labels(&c.at("textDocument/completion", URI, line, col + 11));
    assert_eq!(names, ["claude", "fixer"]);
    let (line, col) = pos(text, "  resolver = \n", 0);
    let fields = labels(&c.at("textDocument/completion", URI, line, col + 2));
    assert!(fields.contains(&"resolver".to_string()), "{fields:?}");
    // Go to definition from `resolver = fixer`.
    let (line, col) = pos(text, "fixer }", 0);
    let (dl, dc) = pos(text, "fixer {", 0);
    let r = c.at("textDocument/definition", URI, line, col + 1);
    assert_eq!(
        r["range"]["start"],
        json!({"line": dl, "character": dc}),
        "{r}"
    );
    // The field's documentation, and a task's resolver in its hover.
    let (line, col) = pos(text, "resolver = fixer", 0);
    let h = c.at("textDocument/hover", URI, line, col + 1);
    let value = h["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("merge conflicts"), "{h}");
    let (line, col) = pos(text, "a {", 0);
    let h = c.at("textDocument/hover", URI, line, col);
    let value = h["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("- resolver: `fixer` (from defaults)"), "{h}");
    assert!(c.shutdown().success());
}

/// A plan opened at its file's URI gets E0015 for a `context` file its
/// repository's checkout lacks, as `loopc check` does (before, the server
/// left it out: `check` asked the checkout, the server did not).
#[test]
fn missing_context_files_are_reported_as_check_reports_them() {
    let repo = Test::repo();
    repo.write("DESIGN.md", "d\n");
    let text = "budget { iterations = 5 }\nagent bot { run = \"true\" }\n\
                task a { prompt = \"x\" agent = bot context = [\"DESIGN.md\", \"NOPE.md\"] }\n";
    repo.write("sub/plan.loop", text);
    let path = repo.root.join("sub/plan.loop");
    let want: Vec<Value> = repo
        .loopc(&["check", "--format", "json", path.to_str().unwrap()])
        .output()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(want.len(), 1, "{want:#?}");
    assert_eq!(want[0]["code"], "E0015");
    let uri = format!("file://{}", path.display());
    let mut c = Client::start();
    let got = c.open(&uri, text);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["code"], "E0015");
    assert_eq!(got[0]["range"], want[0]["range"]);
    // The plan has an error: the task's hover shows no definition key.
    let (line, col) = pos(text, "a { prompt", 0);
    let hover = c.at("textDocument/hover", &uri, line, col).to_string();
    assert!(hover.contains("bot") && !hover.contains("key:"), "{hover}");
    // An unsaved buffer (no file) has no checkout to ask.
    let unsaved = c.open("untitled:plan.loop", text);
    assert!(unsaved.iter().all(|d| d["code"] != "E0015"), "{unsaved:#?}");
    let hover = c
        .at("textDocument/hover", "untitled:plan.loop", line, col)
        .to_string();
    assert!(hover.contains("key:"), "{hover}");
    assert!(c.shutdown().success());
}

#[test]
fn an_unsaved_buffer_is_named_after_its_uri_without_the_scheme() {
    // VS Code's unsaved file: `untitled:Untitled-1`. Its stem makes the
    // default branch `loop/Untitled-1`, which git accepts; the scheme
    // (`untitled:`) is not part of a file name.
    let mut c = Client::start();
    let got = c.open("untitled:Untitled-1", "task a { run = \"x\" }\n");
    assert_eq!(got, Vec::<Value>::new());
    // A file name git does not accept is still an error there.
    let got = c.open("untitled:bad..name.loop", "task a { run = \"x\" }\n");
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["code"], "E0009");
    assert!(c.shutdown().success());
}

#[test]
fn a_reel_defaults_plan_gets_no_warning_for_having_no_tasks() {
    let repo = Test::repo();
    let text =
        "budget { iterations = 5 }\nagent bot { run = \"true\" }\ndefaults { agent = bot }\n";
    repo.write("specs/defaults.loop", text);
    repo.write("alone/defaults.loop", text);
    repo.write(
        "specs/auth.md",
        "# Auth\n\n## a1b2c3d4: Do it\n\nDo it.\n\n**Acceptance:** `true`\n",
    );
    let mut c = Client::start();
    let beside = format!("file://{}", repo.root.join("specs/defaults.loop").display());
    assert_eq!(c.open(&beside, text), Vec::<Value>::new());
    let alone = format!("file://{}", repo.root.join("alone/defaults.loop").display());
    let got = c.open(&alone, text);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["code"], "W0004");
    assert!(c.shutdown().success());
}
