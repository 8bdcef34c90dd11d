//! Codex's output (`output = codex-json`): `codex exec --json` events, one
//! JSON object a line, as `openai/codex` defines them
//! (`codex-rs/exec/src/exec_events.rs`: `ThreadEvent`, `ThreadItem`,
//! `Usage`), and the older `{"id": …, "msg": {"type": …}}` shape that
//! installed versions before openai/codex#4525 still print
//! ([`super::codex_legacy`]).
//!
//! Codex prints its own stream retries as top-level `error` events
//! (`Reconnecting... 2/5 (stream disconnected …)`) and may then complete the
//! turn: an `error` is the outcome only when no `turn.completed` or
//! `turn.failed` follows it.

use super::{
    AgentReport, Lenient, ReportedError, absorb, for_each_message, last_line, string, text_of,
};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// One `codex exec --json` event (the fields loopc reads).
#[derive(Deserialize)]
pub(super) struct CodexEvent {
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
    /// The older shape: `{"id": …, "msg": {…}}`.
    pub(super) msg: Option<Value>,
    /// The older shape's first line: `{"model": …, "sandbox": …}`.
    pub(super) model: Option<Value>,
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

/// A report being read, with the error seen since the last turn ended
/// (the outcome only if no turn ends after it).
#[derive(Default)]
pub(super) struct CodexReader {
    pub(super) report: AgentReport,
    pub(super) pending: Option<ReportedError>,
}

impl CodexReader {
    fn event(&mut self, e: CodexEvent) {
        let kind = string(&e.kind).unwrap_or_default();
        if kind.is_empty() {
            return self.legacy(e);
        }
        let r = &mut self.report;
        match kind.as_str() {
            "thread.started" => r.session_id = string(&e.thread_id),
            "turn.completed" => {
                r.finished = true;
                r.error = None;
                self.pending = None;
                r.num_turns = Some(r.num_turns.unwrap_or(0) + 1);
                if let Some(u) = &e.usage {
                    absorb(&mut r.usage, u);
                }
            }
            "turn.failed" => {
                r.finished = true;
                let message = e
                    .error
                    .as_ref()
                    .and_then(|v| v.get("message"))
                    .map(text_of)
                    .unwrap_or_default();
                r.error = Some(ReportedError::new(kind.clone(), message));
                self.pending = None;
            }
            "error" => {
                let message = e.message.as_ref().map(text_of).unwrap_or_default();
                if let Some(l) = last_line(&message) {
                    r.activity = Some(l);
                }
                self.pending = Some(ReportedError::new(kind.clone(), message));
            }
            "item.started" | "item.updated" | "item.completed" => {
                let Some(item) = e.item.0 else { return };
                r.codex_item(item, kind == "item.completed");
            }
            _ => {}
        }
    }

    /// The report, an `error` no turn ended after deciding it.
    pub(super) fn finish(mut self) -> AgentReport {
        if let Some(e) = self.pending.take() {
            self.report.finished = true;
            self.report.error = Some(e);
        }
        self.report
    }
}

impl AgentReport {
    fn codex_item(&mut self, item: CodexItem, completed: bool) {
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
}

/// What the `codex exec --json` event on `line` says the agent is doing:
/// a command, a file change, a tool call or a message.
pub(super) fn activity_of(line: &str, worktree: &[std::path::PathBuf]) -> Option<String> {
    let mut e: CodexEvent = serde_json::from_str(line).ok()?;
    // A changed file inside `worktree` is shown relative to it.
    if let Some(Value::Array(changes)) = e.item.0.as_mut().and_then(|i| i.changes.as_mut()) {
        for c in changes {
            if let Some(Value::String(p)) = c.get_mut("path") {
                *p = super::relative_to(worktree, p);
            }
        }
    }
    let mut r = CodexReader::default();
    r.event(e);
    r.report.activity
}

/// Reads `codex exec --json` events from the agent's stdout log.
pub fn read_codex(stdout_log: &Path) -> AgentReport {
    let mut reader = CodexReader::default();
    for_each_message(stdout_log, |e: CodexEvent| reader.event(e));
    reader.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codex(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read_codex(&p)
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

    #[test]
    fn a_stream_retry_that_the_turn_survives_is_no_error() {
        let r = codex(concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n",
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"error\",\"message\":\"Reconnecting... 2/5 (stream disconnected before completion: WebSocket protocol error: Connection reset without closing handshake)\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"8976\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":7000,\"output_tokens\":900}}\n",
        ));
        assert_eq!(r.error, None);
        assert!(r.finished);
        assert_eq!(r.summary.as_deref(), Some("8976"));
        // Retries that end in a failed turn: the turn's message decides.
        let r = codex(concat!(
            "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5 (401 Unauthorized)\"}\n",
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"401 Unauthorized: Missing bearer auth\"}}\n",
        ));
        assert_eq!(
            r.error.unwrap().message,
            "401 Unauthorized: Missing bearer auth"
        );
    }

    #[test]
    fn the_older_id_msg_shape_is_read() {
        let r = codex(concat!(
            "{\"model\":\"gpt-5-codex\",\"sandbox\":\"workspace-write\",\"provider\":\"openai\"}\n",
            "{\"prompt\":\"write it\"}\n",
            "{\"id\":\"\",\"msg\":{\"type\":\"session_configured\",\"session_id\":\"0199a1b2-0000\",\"model\":\"gpt-5-codex\",\"history_log_id\":0,\"history_entry_count\":0}}\n",
            "{\"id\":\"0\",\"msg\":{\"type\":\"task_started\"}}\n",
            "{\"id\":\"0\",\"msg\":{\"type\":\"exec_command_begin\",\"call_id\":\"c1\",\"command\":[\"bash\",\"-lc\",\"ls\"],\"cwd\":\"/w\"}}\n",
            "{\"id\":\"0\",\"msg\":{\"type\":\"token_count\",\"input_tokens\":2000,\"cached_input_tokens\":1500,\"output_tokens\":40,\"total_tokens\":2040}}\n",
            "{\"id\":\"0\",\"msg\":{\"type\":\"agent_message\",\"message\":\"Wrote it.\"}}\n",
            "{\"id\":\"0\",\"msg\":{\"type\":\"task_complete\",\"last_agent_message\":\"Wrote it.\"}}\n",
        ));
        assert!(r.finished);
        assert_eq!(r.error, None);
        assert_eq!(r.session_id.as_deref(), Some("0199a1b2-0000"));
        assert_eq!(r.model.as_deref(), Some("gpt-5-codex"));
        assert_eq!(r.summary.as_deref(), Some("Wrote it."));
        assert_eq!(r.usage.input_tokens, Some(2000));
        assert_eq!(r.usage.cached_input_tokens, Some(1500));
        assert_eq!(r.usage.output_tokens, Some(40));
        let e = codex(
            "{\"id\":\"0\",\"msg\":{\"type\":\"stream_error\",\"message\":\"stream error: retrying 1/5 in 200ms\"}}\n{\"id\":\"0\",\"msg\":{\"type\":\"error\",\"message\":\"You've hit your usage limit. Try again in 2 days.\"}}\n",
        );
        assert_eq!(
            e.error.unwrap().message,
            "You've hit your usage limit. Try again in 2 days."
        );
    }
}
