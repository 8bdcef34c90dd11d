//! Gemini CLI's output (`output = gemini-json`), in its two shapes
//! (google-gemini/gemini-cli, docs/cli/headless.md; recorded output in
//! tests/fixtures/agents/README.md):
//! - `-o json`: one object, `{"session_id", "response", "stats": {"models":
//!   {NAME: {"tokens": {"prompt", "candidates", "cached", …}}}}, "error":
//!   {"type", "message", "code"}}`;
//! - `-o stream-json`: one event a line: `init` (`session_id`, `model`),
//!   `message` (`role`, `content`, `delta`), `tool_use` (`tool_name`,
//!   `parameters`), `tool_result`, `error` (a warning: `severity`,
//!   `message`), and `result` (`status` `success` or `error`, `error`,
//!   `stats`: `input_tokens`, `output_tokens`, `cached`).
//!
//! The summary is the `response`, or the assistant's text after its last
//! tool call.

use super::{AgentReport, ReportedError, for_each_message, last_line, text_of, tool_activity};
use serde_json::Value;
use std::path::Path;

#[derive(Default)]
struct Reader {
    report: AgentReport,
    /// The assistant's text since its last tool call.
    answer: String,
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn count(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

impl Reader {
    fn message(&mut self, m: Value) {
        let r = &mut self.report;
        if let Some(s) = str_of(&m, "session_id") {
            r.session_id = Some(s.to_string());
        }
        let Some(kind) = str_of(&m, "type") else {
            return self.object(&m);
        };
        match kind {
            "init" => {
                if let Some(model) = str_of(&m, "model") {
                    r.model = Some(model.to_string());
                }
            }
            "message" if str_of(&m, "role") == Some("assistant") => {
                let text = str_of(&m, "content").unwrap_or("");
                if m.get("delta").and_then(Value::as_bool) != Some(true) {
                    self.answer.clear();
                }
                self.answer.push_str(text);
                if let Some(l) = last_line(&self.answer) {
                    r.activity = Some(l);
                }
            }
            "tool_use" => {
                self.answer.clear();
                let name = str_of(&m, "tool_name").unwrap_or("tool");
                r.activity = Some(tool_activity(name, m.get("parameters")));
            }
            "error" => {
                if let Some(l) = str_of(&m, "message").and_then(last_line) {
                    r.activity = Some(l);
                }
            }
            "result" => {
                r.finished = true;
                if let Some(stats) = m.get("stats") {
                    r.usage.input_tokens = count(stats, "input_tokens");
                    r.usage.output_tokens = count(stats, "output_tokens");
                    r.usage.cached_input_tokens = count(stats, "cached");
                }
                if let Some(text) = str_of(&m, "response") {
                    self.answer = text.to_string();
                }
                if !self.answer.trim().is_empty() {
                    r.summary = Some(self.answer.clone());
                }
                if str_of(&m, "status") == Some("error") || m.get("error").is_some() {
                    r.error = Some(error_of(m.get("error")));
                }
            }
            _ => {}
        }
    }

    /// The `-o json` object.
    fn object(&mut self, m: &Value) {
        let r = &mut self.report;
        if let Some(text) = str_of(m, "response") {
            r.finished = true;
            r.summary = Some(text.to_string());
        }
        if let Some(Value::Object(models)) = m.get("stats").and_then(|s| s.get("models")) {
            for (name, stats) in models {
                r.model.get_or_insert_with(|| name.clone());
                let Some(tokens) = stats.get("tokens") else {
                    continue;
                };
                let add = |slot: &mut Option<u64>, k: &str| {
                    if let Some(n) = count(tokens, k) {
                        *slot = Some(slot.unwrap_or(0) + n);
                    }
                };
                add(&mut r.usage.input_tokens, "prompt");
                add(&mut r.usage.output_tokens, "candidates");
                add(&mut r.usage.cached_input_tokens, "cached");
            }
        }
        if let Some(e) = m.get("error").filter(|e| !e.is_null()) {
            r.finished = true;
            r.error = Some(error_of(Some(e)));
        }
    }
}

/// An error object, `{"type", "message", "code"}`.
fn error_of(e: Option<&Value>) -> ReportedError {
    let kind = e
        .and_then(|e| str_of(e, "type"))
        .unwrap_or("error")
        .to_string();
    let message = e
        .and_then(|e| e.get("message"))
        .map(text_of)
        .unwrap_or_default();
    ReportedError::new(kind, message)
}

/// What the Gemini CLI event on `line` says the agent is doing.
pub(super) fn activity_of(line: &str) -> Option<String> {
    let m: Value = serde_json::from_str(line).ok()?;
    let mut r = Reader::default();
    r.message(m);
    r.report.activity
}

/// Reads Gemini CLI's output from the agent's stdout log.
pub(super) fn read(stdout_log: &Path) -> AgentReport {
    let mut r = Reader::default();
    for_each_message(stdout_log, |m: Value| r.message(m));
    r.report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemini(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read(&p)
    }

    #[test]
    fn the_json_object_and_the_stream() {
        let r = gemini(
            r#"{"response":"4","stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":1,"totalErrors":0,"totalLatencyMs":3569},"tokens":{"prompt":7173,"candidates":0,"total":7190,"cached":0,"thoughts":17,"tool":0}}},"tools":{"totalCalls":0}}}"#,
        );
        assert!(r.finished);
        assert_eq!(r.summary.as_deref(), Some("4"));
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(r.usage.input_tokens, Some(7173));
        assert_eq!(r.error, None);
        let r = gemini(concat!(
            r#"{"type":"init","timestamp":"2026-01-07T02:19:00.000Z","session_id":"219b0367","model":"auto-gemini-3"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-07T02:19:02.137Z","role":"assistant","content":"I will execute the command.","delta":true}"#,
            "\n",
            r#"{"type":"tool_use","timestamp":"2026-01-07T02:19:02.239Z","tool_name":"run_shell_command","tool_id":"call_123","parameters":{"command":"echo hello"}}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-07T02:19:03.000Z","role":"assistant","content":"Done: ","delta":true}"#,
            "\n",
            r#"{"type":"message","timestamp":"2026-01-07T02:19:03.100Z","role":"assistant","content":"it printed hello.","delta":true}"#,
            "\n",
            r#"{"type":"result","timestamp":"2026-01-07T02:21:30.824Z","status":"success","stats":{"total_tokens":12898,"input_tokens":12601,"output_tokens":1,"cached":8148,"input":4453,"duration_ms":25076,"tool_calls":1}}"#,
            "\n",
        ));
        assert_eq!(r.session_id.as_deref(), Some("219b0367"));
        assert_eq!(r.summary.as_deref(), Some("Done: it printed hello."));
        assert_eq!(r.usage.cached_input_tokens, Some(8148));
        let e = gemini(
            r#"{"type":"result","timestamp":"2025-11-25T03:27:54.727Z","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns for this session."},"stats":{"total_tokens":8255}}"#,
        );
        assert_eq!(
            e.error.unwrap().describe(),
            "FatalTurnLimitedError: Reached max session turns for this session."
        );
        assert_eq!(
            activity_of(r#"{"type":"tool_use","tool_name":"write_file","parameters":{"file_path":"a.txt","content":"x"}}"#).as_deref(),
            Some("write_file a.txt")
        );
    }
}
