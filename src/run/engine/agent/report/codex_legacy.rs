//! The older `codex exec --json` shape, which Codex printed until
//! openai/codex#4525 ("Remove legacy codex exec --json format") and which
//! installed versions still print: a config line (`{"model": …, "sandbox":
//! …}`), a prompt line, then one `{"id": …, "msg": {"type": …}}` a line, the
//! `msg` being codex-rs/core's `EventMsg` (`session_configured`,
//! `agent_message`, `agent_reasoning`, `exec_command_begin`,
//! `patch_apply_begin`, `mcp_tool_call_begin`, `token_count`,
//! `task_complete`, `error`, `stream_error`, `turn_aborted`).
//!
//! `stream_error` is a retry Codex makes by itself, no failure;
//! `task_complete` ends the task; `error` decides unless a task completes
//! after it. `token_count` is the task's running total: the last one counts.

use super::codex::{CodexEvent, CodexReader};
use super::{ReportedError, Usage, absorb, last_line, text_of};
use serde_json::Value;

impl CodexReader {
    /// Reads an event of the older shape (or its config line).
    pub(super) fn legacy(&mut self, e: CodexEvent) {
        if let Some(Value::String(model)) = &e.model {
            self.report.model = Some(model.clone());
        }
        let Some(msg) = e.msg else { return };
        let get = |k: &str| msg.get(k).map(text_of);
        let r = &mut self.report;
        match msg.get("type").and_then(Value::as_str).unwrap_or("") {
            "session_configured" => {
                if let Some(s) = get("session_id") {
                    r.session_id = Some(s);
                }
                if let Some(m) = get("model") {
                    r.model = Some(m);
                }
            }
            "agent_message" => {
                if let Some(t) = get("message") {
                    r.activity = last_line(&t);
                    r.summary = Some(t);
                }
            }
            "agent_reasoning" => {
                if let Some(t) = get("text").as_deref().and_then(last_line) {
                    r.activity = Some(t);
                }
            }
            "exec_command_begin" => {
                if let Some(c) = msg.get("command") {
                    let command = match c {
                        Value::Array(parts) => {
                            parts.iter().map(text_of).collect::<Vec<_>>().join(" ")
                        }
                        other => text_of(other),
                    };
                    r.activity = Some(format!("$ {command}"));
                }
            }
            "patch_apply_begin" => {
                if let Some(Value::Object(changes)) = msg.get("changes") {
                    let paths: Vec<&str> = changes.keys().map(String::as_str).collect();
                    r.activity = Some(format!("edited {}", paths.join(", ")));
                }
            }
            "mcp_tool_call_begin" => {
                let inv = msg.get("invocation");
                let part = |k: &str| inv.and_then(|i| i.get(k)).map(text_of).unwrap_or_default();
                r.activity = Some(format!("{}.{}", part("server"), part("tool")));
            }
            "token_count" => {
                // Newer: `info.total_token_usage`; older: the counts flat.
                let counts = msg
                    .get("info")
                    .and_then(|i| i.get("total_token_usage"))
                    .unwrap_or(&msg);
                let mut usage = Usage::default();
                absorb(&mut usage, counts);
                if !usage.is_empty() {
                    r.usage = usage;
                }
            }
            "task_complete" => {
                r.finished = true;
                r.num_turns = Some(r.num_turns.unwrap_or(0) + 1);
                if let Some(t) = msg.get("last_agent_message").and_then(Value::as_str) {
                    r.summary = Some(t.to_string());
                }
                // An error the task went on past is no outcome.
                self.pending = None;
                r.error = None;
            }
            "turn_aborted" => {
                r.finished = true;
                let why = get("reason").unwrap_or_default();
                r.error = Some(ReportedError::new("turn_aborted", why));
            }
            "error" => {
                let message = get("message").unwrap_or_default();
                if let Some(l) = last_line(&message) {
                    r.activity = Some(l);
                }
                self.pending = Some(ReportedError::new("error", message));
            }
            "stream_error" => {
                if let Some(l) = get("message").as_deref().and_then(last_line) {
                    r.activity = Some(l);
                }
            }
            _ => {}
        }
    }
}
