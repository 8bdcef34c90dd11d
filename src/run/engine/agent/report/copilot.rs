//! GitHub Copilot CLI's output (`output = copilot-json`): `copilot -p …
//! --output-format json` prints one session event a line, `{"type",
//! "data", "id", "timestamp", "parentId", "ephemeral"}` (the event types of
//! the Copilot SDK's `session_events`; recorded output in
//! tests/fixtures/agents/README.md): `session.start` (`data.sessionId`),
//! `assistant.message` (`data.content`, `data.toolRequests[{name,
//! arguments}]`), `tool.execution_start` (`data.toolName`,
//! `data.arguments`), `session.error` (`data.errorType`, `data.message`,
//! `data.statusCode`), `session.shutdown` (`data.modelMetrics`: per model,
//! `usage.inputTokens`, `outputTokens`), and last `result` (`sessionId`,
//! `exitCode`, `usage.premiumRequests`).
//!
//! A `session.error` of type `persistence` (the CLI could not save its
//! session) is no failure of the work. Copilot reports no cost.

use super::{
    AgentReport, ReportedError, absorb, for_each_message, last_line, text_of, tool_activity,
};
use serde_json::Value;
use std::path::Path;

fn str_of<'a>(v: Option<&'a Value>, k: &str) -> Option<&'a str> {
    v.and_then(|v| v.get(k)).and_then(Value::as_str)
}

impl AgentReport {
    fn copilot_event(&mut self, m: Value) {
        let data = m.get("data");
        match m.get("type").and_then(Value::as_str).unwrap_or("") {
            "session.start" => {
                if let Some(s) = str_of(data, "sessionId") {
                    self.session_id = Some(s.to_string());
                }
            }
            "assistant.message" => {
                if let Some(t) = str_of(data, "content").filter(|t| !t.trim().is_empty()) {
                    self.activity = last_line(t);
                    self.summary = Some(t.to_string());
                }
                if let Some(Value::Array(calls)) = data.and_then(|d| d.get("toolRequests"))
                    && let Some(call) = calls.last()
                {
                    let name = str_of(Some(call), "name").unwrap_or("tool");
                    self.activity = Some(tool_activity(name, call.get("arguments")));
                }
            }
            "tool.execution_start" => {
                let name = str_of(data, "toolName").unwrap_or("tool");
                self.activity = Some(tool_activity(name, data.and_then(|d| d.get("arguments"))));
            }
            "session.error" if str_of(data, "errorType") != Some("persistence") => {
                let kind = str_of(data, "errorType").unwrap_or("error");
                let message = data
                    .and_then(|d| d.get("message").or_else(|| d.get("errorCode")))
                    .map(text_of)
                    .unwrap_or_default();
                self.api_error_status = data
                    .and_then(|d| d.get("statusCode"))
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok());
                // The CLI's own words for its error type, so that `quota`,
                // `rate_limit` or `authentication` classify it.
                self.error = Some(ReportedError::new(
                    kind,
                    if message.is_empty() {
                        kind.to_string()
                    } else {
                        message
                    },
                ));
            }
            "session.shutdown" => {
                if let Some(Value::Object(models)) = data.and_then(|d| d.get("modelMetrics")) {
                    for (name, metrics) in models {
                        self.model.get_or_insert_with(|| name.clone());
                        if let Some(u) = metrics.get("usage") {
                            absorb(&mut self.usage, u);
                        }
                    }
                }
            }
            "result" => {
                self.finished = true;
                if let Some(s) = m.get("sessionId").and_then(Value::as_str) {
                    self.session_id = Some(s.to_string());
                }
                let code = m.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
                if code != 0 && self.error.is_none() {
                    self.error = Some(ReportedError::new(
                        "result",
                        format!("Copilot CLI ended with exit code {code}"),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// What the Copilot CLI event on `line` says the agent is doing.
pub(super) fn activity_of(line: &str) -> Option<String> {
    let m: Value = serde_json::from_str(line).ok()?;
    let mut r = AgentReport::default();
    r.copilot_event(m);
    r.activity
}

/// Reads Copilot CLI's JSON events from the agent's stdout log.
pub(super) fn read(stdout_log: &Path) -> AgentReport {
    let mut r = AgentReport::default();
    for_each_message(stdout_log, |m: Value| r.copilot_event(m));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copilot(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read(&p)
    }

    #[test]
    fn messages_tools_errors_and_the_result() {
        let r = copilot(concat!(
            r#"{"id":"1","timestamp":"2026-01-01T00:00:00.000Z","parentId":null,"type":"assistant.turn_start","data":{"turnId":"t1"}}"#,
            "\n",
            r#"{"id":"2","timestamp":"2026-01-01T00:00:01.000Z","parentId":"1","type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"call-1","name":"bash","arguments":{"command":"cargo test"},"type":"function"}]}}"#,
            "\n",
            r#"{"id":"3","timestamp":"2026-01-01T00:00:02.000Z","parentId":"2","type":"assistant.message","data":{"messageId":"m2","content":"All tests pass.","toolRequests":[]}}"#,
            "\n",
            r#"{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5-mini":{"usage":{"inputTokens":7,"outputTokens":3}}}}}"#,
            "\n",
            r#"{"type":"result","timestamp":"2026-01-01T00:00:03.000Z","sessionId":"c0ffee","exitCode":0,"usage":{"premiumRequests":1}}"#,
            "\n",
        ));
        assert!(r.finished);
        assert_eq!(r.error, None);
        assert_eq!(r.summary.as_deref(), Some("All tests pass."));
        assert_eq!(r.session_id.as_deref(), Some("c0ffee"));
        assert_eq!(r.usage.input_tokens, Some(7));
        assert_eq!(r.model.as_deref(), Some("gpt-5-mini"));
        let e = copilot(concat!(
            r#"{"type":"session.error","data":{"errorType":"quota","errorCode":"quota_exceeded","message":"You have exceeded your monthly quota","statusCode":402}}"#,
            "\n",
            r#"{"type":"result","sessionId":"s","exitCode":1}"#,
            "\n",
        ));
        assert_eq!(e.error.unwrap().kind, "quota");
        assert_eq!(
            activity_of(r#"{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":"Cargo.toml"}}}"#).as_deref(),
            Some("view Cargo.toml")
        );
    }
}
