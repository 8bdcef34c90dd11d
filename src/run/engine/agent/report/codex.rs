//! Codex's output (`output = codex-json`): `codex exec --json` events, one
//! JSON object a line, as `openai/codex` defines them
//! (`codex-rs/exec/src/exec_events.rs`: `ThreadEvent`, `ThreadItem`,
//! `Usage`).

use super::{
    AgentReport, Lenient, ReportedError, absorb, for_each_message, last_line, string, text_of,
};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

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
    let mut r = AgentReport::default();
    r.codex_event(e);
    r.activity
}

/// Reads `codex exec --json` events from the agent's stdout log.
pub fn read_codex(stdout_log: &Path) -> AgentReport {
    let mut report = AgentReport::default();
    for_each_message(stdout_log, |e: CodexEvent| report.codex_event(e));
    super::detect_limit(&mut report);
    report
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
}
