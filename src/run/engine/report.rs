//! What an agent's stdout reports about its attempt: `output = claude-json`
//! (Claude Code's `--output-format json` result object, the JSON array of
//! messages that `--verbose` prints, or `--output-format stream-json`
//! lines) and `output = codex-json` (`codex exec --json` events, one JSON
//! object a line).
//!
//! The shapes read here are those of the agents' own sources: Claude Code's
//! messages as the Claude Agent SDK parses them
//! (`anthropics/claude-agent-sdk-python`, `_internal/message_parser.py` and
//! `types.py`: `ResultMessage`, `RateLimitEvent`), Codex's events as
//! `openai/codex` defines them (`codex-rs/exec/src/exec_events.rs`:
//! `ThreadEvent`, `ThreadItem`, `Usage`). Only the fields named below are
//! read; every other field is skipped without being kept.
//!
//! The log is streamed, one message at a time: a `--verbose` array of any
//! size is read to its result without being held in memory. Text that is
//! not JSON (a line an agent printed around its JSON) is skipped a line at
//! a time.
//!
//! Over 600 lines: two agents' formats, each a streaming reader, and their
//! tests with real outputs.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};
use serde_json::Value;
use std::io::{BufRead, Read};
use std::path::Path;

pub use crate::state::{AgentRecord, Usage};

fn add_count(slot: &mut Option<u64>, v: Option<&Value>) {
    if let Some(n) = v.and_then(Value::as_u64) {
        *slot = Some(slot.unwrap_or(0).saturating_add(n));
    }
}

/// Adds the counts of a `usage` object to `counts`.
fn absorb(counts: &mut Usage, usage: &Value) {
    add_count(&mut counts.input_tokens, usage.get("input_tokens"));
    add_count(&mut counts.output_tokens, usage.get("output_tokens"));
    add_count(
        &mut counts.cache_creation_input_tokens,
        usage.get("cache_creation_input_tokens"),
    );
    add_count(
        &mut counts.cache_read_input_tokens,
        usage.get("cache_read_input_tokens"),
    );
    add_count(
        &mut counts.cached_input_tokens,
        usage.get("cached_input_tokens"),
    );
}

/// An error the agent reported about its own run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedError {
    /// What kind: Claude's result `subtype` (`error_max_turns`,
    /// `error_during_execution`, or `success` with `is_error`), or Codex's
    /// event type (`turn.failed`, `error`).
    pub kind: String,
    /// The error text: Claude's `errors` (else its `result`), Codex's
    /// `error.message`. May be empty.
    pub message: String,
}

impl ReportedError {
    /// `kind`, then `: ` and the first line of the message when there is one.
    pub fn describe(&self) -> String {
        super::handoff::with_reason(&self.kind, &self.message)
    }
}

/// A usage or rate limit the agent ran into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    /// When the limit resets, in seconds since the Unix epoch, if said.
    pub resets_at: Option<u64>,
    /// What the agent said.
    pub message: String,
}

/// What an agent's stdout reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReport {
    /// Whether the output held the agent's final message (Claude: a
    /// `result`; Codex: a completed or failed turn, or an error).
    pub finished: bool,
    /// The cost in micro-dollars (Claude's `total_cost_usd`, or the older
    /// `cost_usd`); Codex reports none.
    pub cost: Option<u64>,
    /// The summary: Claude's `result`, Codex's last agent message.
    pub summary: Option<String>,
    /// The error the agent reported, if it did.
    pub error: Option<ReportedError>,
    /// Claude's `session_id`, Codex's `thread_id`.
    pub session_id: Option<String>,
    /// Claude's `num_turns`; Codex: turns completed.
    pub num_turns: Option<u64>,
    /// Token counts (Codex: summed over its turns).
    pub usage: Usage,
    /// The model (Claude: from `system` `init`, assistant messages or
    /// `modelUsage`).
    pub model: Option<String>,
    /// Claude's `api_error_status`: the HTTP status of a failed API call.
    pub api_error_status: Option<u16>,
    /// A usage or rate limit the agent ran into.
    pub limit: Option<LimitHit>,
    /// The last thing the agent did (a tool call, a command, a message).
    pub activity: Option<String>,
}

impl AgentReport {
    /// What is recorded of this report.
    pub fn record(&self) -> AgentRecord {
        AgentRecord {
            session_id: self.session_id.clone(),
            num_turns: self.num_turns,
            model: self.model.clone(),
            usage: self.usage.clone(),
            api_error_status: self.api_error_status,
            cost_micro_usd: self.cost,
            error: self.error.as_ref().map(|e| e.kind.clone()),
        }
    }
}

/// A field that is read only when it has the expected shape (an object or
/// an array); anything else is skipped, so one odd message does not hide
/// the rest of the output.
#[derive(Debug)]
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(|t| Lenient(Some(t)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The top of one JSON document: a message (an object) or an array of
/// messages, each handed to `each` as soon as it is read.
struct Top<'a, T, F: FnMut(T)> {
    each: &'a mut F,
    _t: std::marker::PhantomData<T>,
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> DeserializeSeed<'de> for Top<'_, T, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: DeserializeOwned, F: FnMut(T)> Visitor<'de> for Top<'_, T, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object or array")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let t = T::deserialize(de::value::MapAccessDeserializer::new(map))?;
        (self.each)(t);
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(m) = seq.next_element::<Lenient<T>>()? {
            if let Some(t) = m.0 {
                (self.each)(t);
            }
        }
        Ok(())
    }
}

/// Hands every JSON message in the file at `path` to `each`, in order:
/// top-level objects, and the elements of top-level arrays. Streams the
/// file; skips a line at a time over what is not JSON. A missing or
/// unreadable file has no messages.
fn for_each_message<T: DeserializeOwned>(path: &Path, mut each: impl FnMut(T)) {
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    let mut r = std::io::BufReader::with_capacity(64 * 1024, file);
    loop {
        // The first byte that is not white space.
        let first = loop {
            let Ok(buf) = r.fill_buf() else { return };
            if buf.is_empty() {
                return;
            }
            let n = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            if n < buf.len() {
                let c = buf[n];
                r.consume(n);
                break c;
            }
            let len = buf.len();
            r.consume(len);
        };
        if first == b'{' || first == b'[' {
            let mut de = serde_json::Deserializer::from_reader(&mut r);
            let top = Top {
                each: &mut each,
                _t: std::marker::PhantomData,
            };
            if top.deserialize(&mut de).is_ok() {
                continue;
            }
        }
        // Not JSON (or broken JSON): go on after the end of this line.
        let mut skipped = Vec::new();
        loop {
            skipped.clear();
            match (&mut r).take(64 * 1024).read_until(b'\n', &mut skipped) {
                Ok(0) | Err(_) => return,
                Ok(_) if skipped.last() == Some(&b'\n') => break,
                Ok(_) => {}
            }
        }
    }
}

fn string(v: &Option<Value>) -> Option<String> {
    v.as_ref().and_then(Value::as_str).map(str::to_string)
}

/// The text of a JSON value given as an error: a string as it is, anything
/// else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The last line of `text` that is not blank, trimmed.
fn last_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

// ---------------------------------------------------------------- Claude Code

/// One message of Claude Code's output (the fields loopc reads).
#[derive(Deserialize)]
struct ClaudeMsg {
    #[serde(rename = "type")]
    kind: Option<Value>,
    subtype: Option<Value>,
    is_error: Option<Value>,
    result: Option<Value>,
    session_id: Option<Value>,
    num_turns: Option<Value>,
    total_cost_usd: Option<Value>,
    /// The name older Claude Code versions used for `total_cost_usd`.
    cost_usd: Option<Value>,
    usage: Option<Value>,
    #[serde(rename = "modelUsage")]
    model_usage: Option<Value>,
    errors: Option<Value>,
    api_error_status: Option<Value>,
    /// `system` `init`: the session's model.
    model: Option<Value>,
    /// `assistant`, `user`: the API message.
    #[serde(default)]
    message: Lenient<ClaudeBody>,
    /// `rate_limit_event`.
    rate_limit_info: Option<Value>,
}

#[derive(Deserialize, Default)]
struct ClaudeBody {
    model: Option<Value>,
    #[serde(default)]
    content: Lenient<Vec<Lenient<ClaudeBlock>>>,
}

#[derive(Deserialize, Default)]
struct ClaudeBlock {
    #[serde(rename = "type")]
    kind: Option<Value>,
    name: Option<Value>,
    text: Option<Value>,
    #[serde(default)]
    input: Lenient<ToolInput>,
}

/// The parts of a tool call's input that say what it does.
#[derive(Deserialize, Default)]
struct ToolInput {
    command: Option<Value>,
    file_path: Option<Value>,
    pattern: Option<Value>,
}

impl AgentReport {
    fn claude_message(&mut self, m: ClaudeMsg) {
        let kind = string(&m.kind).unwrap_or_default();
        match kind.as_str() {
            "system" => {
                if let Some(s) = string(&m.session_id) {
                    self.session_id = Some(s);
                }
                if let Some(model) = string(&m.model) {
                    self.model = Some(model);
                }
            }
            "assistant" => {
                let Some(body) = m.message.0 else { return };
                if let Some(model) = string(&body.model) {
                    self.model = Some(model);
                }
                for block in body.content.0.unwrap_or_default() {
                    let Some(b) = block.0 else { continue };
                    match string(&b.kind).as_deref() {
                        Some("tool_use") => {
                            let name = string(&b.name).unwrap_or_else(|| "tool".into());
                            let detail = b.input.0.and_then(|i| {
                                string(&i.command)
                                    .or_else(|| string(&i.file_path))
                                    .or_else(|| string(&i.pattern))
                            });
                            self.activity = Some(match detail {
                                Some(d) => format!("{name} {d}"),
                                None => name,
                            });
                        }
                        Some("text") => {
                            if let Some(t) = string(&b.text).as_deref().and_then(last_line) {
                                self.activity = Some(t);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "rate_limit_event" => {
                let Some(info) = m.rate_limit_info else {
                    return;
                };
                if info.get("status").and_then(Value::as_str) == Some("rejected") {
                    let kind = info
                        .get("rateLimitType")
                        .and_then(Value::as_str)
                        .unwrap_or("rate");
                    self.limit = Some(LimitHit {
                        resets_at: info.get("resetsAt").and_then(Value::as_u64),
                        message: format!("{kind} limit reached"),
                    });
                }
            }
            "result" => self.claude_result(m),
            _ => {}
        }
    }

    fn claude_result(&mut self, m: ClaudeMsg) {
        self.finished = true;
        let subtype = string(&m.subtype);
        let is_error = m
            .is_error
            .as_ref()
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let result = string(&m.result);
        if let Some(s) = string(&m.session_id) {
            self.session_id = Some(s);
        }
        self.num_turns = m.num_turns.as_ref().and_then(Value::as_u64);
        self.cost = m
            .total_cost_usd
            .as_ref()
            .or(m.cost_usd.as_ref())
            .and_then(Value::as_f64)
            .and_then(crate::run::time::usd_to_micro);
        if let Some(u) = &m.usage {
            self.usage = Usage::default();
            absorb(&mut self.usage, u);
        }
        if let Some(Value::Object(models)) = &m.model_usage
            && self.model.is_none()
        {
            self.model = models.keys().next().cloned();
        }
        self.api_error_status = m
            .api_error_status
            .as_ref()
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok());
        let errors: Vec<String> = match &m.errors {
            Some(Value::Array(items)) => items.iter().map(text_of).collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![text_of(other)],
        };
        let failed = is_error || subtype.as_deref().is_some_and(|s| s != "success");
        self.error = failed.then(|| ReportedError {
            kind: subtype.clone().unwrap_or_else(|| "error".into()),
            message: if errors.is_empty() {
                result.clone().unwrap_or_default()
            } else {
                errors.join("\n")
            },
        });
        self.summary = result;
    }
}

/// Reads Claude Code's output from the agent's stdout log. The last
/// `result` message decides; messages before it give the model, the
/// session and what the agent did last.
pub fn read_claude(stdout_log: &Path) -> AgentReport {
    let mut report = AgentReport::default();
    for_each_message(stdout_log, |m: ClaudeMsg| report.claude_message(m));
    super::limits::detect(&mut report);
    report
}

// ---------------------------------------------------------------- Codex

/// One `codex exec --json` event (the fields loopc reads).
#[derive(Deserialize)]
struct CodexEvent {
    #[serde(rename = "type")]
    kind: Option<Value>,
    thread_id: Option<Value>,
    usage: Option<Value>,
    /// `turn.failed`: `{"message": …}`.
    error: Option<Value>,
    /// `error`: the message.
    message: Option<Value>,
    #[serde(default)]
    item: Lenient<CodexItem>,
}

#[derive(Deserialize, Default)]
struct CodexItem {
    #[serde(rename = "type")]
    kind: Option<Value>,
    /// `agent_message`, `reasoning`.
    text: Option<Value>,
    /// `command_execution`.
    command: Option<Value>,
    /// `file_change`: `[{"path", "kind"}]`.
    changes: Option<Value>,
    /// `mcp_tool_call`.
    server: Option<Value>,
    tool: Option<Value>,
    /// `error` items.
    message: Option<Value>,
}

impl AgentReport {
    fn codex_event(&mut self, e: CodexEvent) {
        let kind = string(&e.kind).unwrap_or_default();
        match kind.as_str() {
            "thread.started" => self.session_id = string(&e.thread_id),
            "turn.completed" => {
                self.finished = true;
                self.num_turns = Some(self.num_turns.unwrap_or(0) + 1);
                if let Some(u) = &e.usage {
                    absorb(&mut self.usage, u);
                }
            }
            "turn.failed" => {
                self.finished = true;
                let message = e
                    .error
                    .as_ref()
                    .and_then(|v| v.get("message"))
                    .map(text_of)
                    .unwrap_or_default();
                self.error = Some(ReportedError {
                    kind: kind.clone(),
                    message,
                });
            }
            "error" => {
                self.finished = true;
                self.error = Some(ReportedError {
                    kind: kind.clone(),
                    message: e.message.as_ref().map(text_of).unwrap_or_default(),
                });
            }
            "item.started" | "item.updated" | "item.completed" => {
                let Some(item) = e.item.0 else { return };
                let completed = kind == "item.completed";
                match string(&item.kind).as_deref() {
                    Some("agent_message") => {
                        if let Some(t) = string(&item.text) {
                            self.activity = last_line(&t);
                            if completed {
                                self.summary = Some(t);
                            }
                        }
                    }
                    Some("reasoning") => {
                        if let Some(t) = string(&item.text).as_deref().and_then(last_line) {
                            self.activity = Some(t);
                        }
                    }
                    Some("command_execution") => {
                        if let Some(c) = string(&item.command) {
                            self.activity = Some(format!("$ {c}"));
                        }
                    }
                    Some("file_change") => {
                        let paths: Vec<String> = match &item.changes {
                            Some(Value::Array(cs)) => cs
                                .iter()
                                .filter_map(|c| c.get("path").and_then(Value::as_str))
                                .map(str::to_string)
                                .collect(),
                            _ => Vec::new(),
                        };
                        self.activity = Some(format!("edited {}", paths.join(", ")));
                    }
                    Some("mcp_tool_call") => {
                        let server = string(&item.server).unwrap_or_default();
                        let tool = string(&item.tool).unwrap_or_default();
                        self.activity = Some(format!("{server}.{tool}"));
                    }
                    Some("error") => {
                        if let Some(m) = string(&item.message) {
                            self.activity = Some(m);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// Reads `codex exec --json` events from the agent's stdout log.
pub fn read_codex(stdout_log: &Path) -> AgentReport {
    let mut report = AgentReport::default();
    for_each_message(stdout_log, |e: CodexEvent| report.codex_event(e));
    super::limits::detect(&mut report);
    report
}

/// Reads the report of an agent whose output format is `output`; `None`
/// for plain text.
pub fn read(output: crate::plan::OutputFormat, stdout_log: &Path) -> Option<AgentReport> {
    use crate::plan::OutputFormat;
    match output {
        OutputFormat::Text => None,
        OutputFormat::ClaudeJson => Some(read_claude(stdout_log)),
        OutputFormat::CodexJson => Some(read_codex(stdout_log)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read_claude(&p)
    }

    fn codex(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read_codex(&p)
    }

    #[test]
    fn claude_single_result_object() {
        let r = claude(
            r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"duration_api_ms":8,"num_turns":3,"result":"done","session_id":"s-1","total_cost_usd":0.0421,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":7,"output_tokens":20,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":10}},"permission_denials":[],"uuid":"u"}"#,
        );
        assert!(r.finished);
        assert_eq!(r.cost, Some(42_100));
        assert_eq!(r.summary.as_deref(), Some("done"));
        assert_eq!(r.error, None);
        assert_eq!(r.session_id.as_deref(), Some("s-1"));
        assert_eq!(r.num_turns, Some(3));
        assert_eq!(r.usage.input_tokens, Some(10));
        assert_eq!(r.usage.cache_read_input_tokens, Some(7));
        assert_eq!(r.usage.cache_creation_input_tokens, Some(5));
        assert_eq!(r.usage.output_tokens, Some(20));
        assert_eq!(r.model.as_deref(), Some("claude-sonnet-4-5"));
    }

    #[test]
    fn claude_error_subtypes_and_older_cost_name() {
        let r = claude(
            r#"{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":5,"session_id":"s","cost_usd":0.5,"errors":["Reached maximum number of turns (5)"]}"#,
        );
        assert_eq!(r.cost, Some(500_000));
        let e = r.error.unwrap();
        assert_eq!(e.kind, "error_max_turns");
        assert_eq!(e.message, "Reached maximum number of turns (5)");
        let r = claude(
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","api_error_status":529}"#,
        );
        assert_eq!(r.api_error_status, Some(529));
        assert_eq!(
            r.error.unwrap().describe(),
            "success: API Error: 529 overloaded"
        );
    }

    #[test]
    fn claude_verbose_array_and_stream_json_lines() {
        let array = r#"[{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-4-1","tools":["Bash"]},
 {"type":"assistant","message":{"model":"claude-opus-4-1","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"cargo test"}}]},"session_id":"s"},
 {"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}},
 {"type":"result","subtype":"success","is_error":false,"result":"fine","total_cost_usd":0.25,"session_id":"s"}]"#;
        let r = claude(array);
        assert_eq!(r.cost, Some(250_000));
        assert_eq!(r.model.as_deref(), Some("claude-opus-4-1"));
        assert_eq!(r.activity.as_deref(), Some("Bash cargo test"));
        let lines = array
            .trim_start_matches('[')
            .trim_end_matches(']')
            .replace(",\n", "\n");
        let r2 = claude(&format!("some text first\n{lines}\n"));
        assert_eq!(r2, r);
        // A user message whose content is a string is skipped, not an error.
        let r3 = claude(
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"x\"}\n",
        );
        assert_eq!(r3.summary.as_deref(), Some("x"));
        assert!(!claude("not json at all\n").finished);
        assert!(!claude(r#"[{"type":"assistant"}]"#).finished);
    }

    #[test]
    fn claude_rate_limit_event() {
        let r = claude(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1767225600,"rateLimitType":"five_hour"},"uuid":"u","session_id":"s"}"#,
        );
        assert_eq!(
            r.limit,
            Some(LimitHit {
                resets_at: Some(1_767_225_600),
                message: "five_hour limit reached".into()
            })
        );
    }

    #[test]
    fn codex_events() {
        let r = codex(concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"th-1\"}\n",
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"item.started\",\"item\":{\"id\":\"item_1\",\"type\":\"command_execution\",\"command\":\"bash -lc ls\",\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"in_progress\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_2\",\"type\":\"file_change\",\"changes\":[{\"path\":\"a.txt\",\"kind\":\"add\"}],\"status\":\"completed\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_3\",\"type\":\"agent_message\",\"text\":\"Added a.txt\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,\"cached_input_tokens\":40,\"output_tokens\":7}}\n",
        ));
        assert!(r.finished);
        assert_eq!(r.session_id.as_deref(), Some("th-1"));
        assert_eq!(r.summary.as_deref(), Some("Added a.txt"));
        assert_eq!(r.usage.input_tokens, Some(100));
        assert_eq!(r.usage.cached_input_tokens, Some(40));
        assert_eq!(r.usage.output_tokens, Some(7));
        assert_eq!(r.num_turns, Some(1));
        assert_eq!(r.cost, None);
        assert_eq!(r.error, None);
        let f = codex(
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}\n",
        );
        assert_eq!(
            f.error.unwrap().describe(),
            "turn.failed: stream disconnected"
        );
        let e = codex("{\"type\":\"error\",\"message\":\"boom\"}\n");
        assert_eq!(e.error.unwrap().message, "boom");
    }
}
