//! Claude Code's output (`output = claude-json`): the `--output-format
//! json` result object, the JSON array of messages `--verbose` prints, or
//! `--output-format stream-json` lines, as the Claude Agent SDK parses them
//! (`anthropics/claude-agent-sdk-python`, `_internal/message_parser.py` and
//! `types.py`: `ResultMessage`, `RateLimitEvent`; the TypeScript SDK's
//! `SDKPermissionDenial`), and as users recorded them (error results whose
//! `subtype` says `success` with `is_error` true and a `terminal_reason`,
//! assistant messages of model `<synthetic>` made by the CLI itself).
//!
//! The same reader serves the CLIs that print these shapes: Amp's
//! `--stream-json` (`amp-json`), Qwen Code's `--output-format json` and
//! `stream-json`, Cursor's `cursor-agent -p --output-format stream-json`
//! (`cursor-json`: its `tool_call` events, camelCase `usage`) and Factory's
//! `droid exec --output-format json` or `debug` (`droid-json`: its
//! `message` and `tool_call` lines).

use super::{
    AgentReport, Lenient, LimitHit, ReportedError, Usage, absorb, for_each_message, last_line,
    string, text_of, tool_activity,
};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// The model Claude Code names on messages it made itself (an API error,
/// a refusal to start): no model answered them.
const SYNTHETIC: &str = "<synthetic>";

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
    /// Why the session ended: `completed`, `api_error`,
    /// `blocking_limit`, `budget_exhausted`, ….
    terminal_reason: Option<Value>,
    /// `[{"tool_name", "tool_use_id", "tool_input"}]`.
    permission_denials: Option<Value>,
    /// `system` `init`: the session's model.
    model: Option<Value>,
    /// `assistant`, `user`: the API message.
    #[serde(default)]
    message: Lenient<ClaudeBody>,
    /// `rate_limit_event`.
    rate_limit_info: Option<Value>,
    /// Cursor's `tool_call`: `{"shellToolCall": {"args": {…}}}`.
    tool_call: Option<Value>,
    /// Droid's `debug` lines: `message` (`role`, `text`), `tool_call`
    /// (`toolName`, `parameters`).
    role: Option<Value>,
    text: Option<Value>,
    #[serde(rename = "toolName")]
    tool_name: Option<Value>,
    parameters: Option<Value>,
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
    input: Option<Value>,
}

impl AgentReport {
    fn claude_message(&mut self, m: ClaudeMsg) {
        let kind = string(&m.kind).unwrap_or_default();
        match kind.as_str() {
            "system" => {
                if let Some(s) = string(&m.session_id) {
                    self.session_id = Some(s);
                }
            }
            "assistant" => {
                let Some(body) = m.message.0 else { return };
                if let Some(model) = string(&body.model).filter(|m| m != SYNTHETIC) {
                    self.model = Some(model);
                }
                for block in body.content.0.unwrap_or_default() {
                    let Some(b) = block.0 else { continue };
                    match string(&b.kind).as_deref() {
                        Some("tool_use") => {
                            let name = string(&b.name).unwrap_or_else(|| "tool".into());
                            self.activity = Some(tool_activity(&name, b.input.as_ref()));
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
            // Cursor: `{"type":"tool_call","subtype":"started","tool_call":
            // {"shellToolCall":{"args":{"command":…}}}}`; Droid's `debug`
            // format: `{"type":"tool_call","toolName":…,"parameters":…}`.
            "tool_call" => {
                if let Some(name) = string(&m.tool_name) {
                    self.activity = Some(tool_activity(&name, m.parameters.as_ref()));
                } else if let Some(Value::Object(call)) = &m.tool_call
                    && string(&m.subtype).as_deref() != Some("completed")
                    && let Some((name, body)) = call.iter().next()
                {
                    let name = name.trim_end_matches("ToolCall");
                    let mut name = name.to_string();
                    if let Some(first) = name.get_mut(..1) {
                        first.make_ascii_uppercase();
                    }
                    self.activity = Some(tool_activity(&name, body.get("args")));
                }
            }
            // Droid's `debug` format.
            "message" if string(&m.role).as_deref() == Some("assistant") => {
                if let Some(t) = string(&m.text).as_deref().and_then(last_line) {
                    self.activity = Some(t);
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
            .and_then(super::fields::number)
            .and_then(crate::run::time::usd_to_micro);
        if let Some(u) = &m.usage {
            self.usage = Usage::default();
            absorb(&mut self.usage, u);
        }
        if let Some(Value::Object(models)) = &m.model_usage
            && self.model.is_none()
        {
            self.model = models.keys().find(|k| *k != SYNTHETIC).cloned();
        }
        self.api_error_status = m
            .api_error_status
            .as_ref()
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok());
        if let Some(Value::Array(denials)) = &m.permission_denials {
            self.permission_denials = denials.iter().map(denial).collect();
        }
        let errors: Vec<String> = match &m.errors {
            Some(Value::Array(items)) => items.iter().map(text_of).collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![text_of(other)],
        };
        let terminal = string(&m.terminal_reason).filter(|t| t != "completed");
        let failed = is_error || subtype.as_deref().is_some_and(|s| s != "success");
        // An error result whose subtype says `success` is named by what
        // ended it, never "success".
        let kind = match subtype {
            Some(s) if s != "success" => s,
            _ => terminal.clone().unwrap_or_else(|| {
                if self.api_error_status.is_some() {
                    "api_error".into()
                } else {
                    "error".into()
                }
            }),
        };
        self.error = failed.then(|| {
            let mut e = ReportedError::new(
                kind,
                if errors.is_empty() {
                    result.clone().unwrap_or_default()
                } else {
                    errors.join("\n")
                },
            );
            // The result of an error result is the CLI's text too (a
            // limit's "…|<reset>"): read when classifying.
            if !errors.is_empty() {
                e.detail = result.clone().unwrap_or_default();
            }
            e
        });
        if terminal.as_deref() == Some("blocking_limit") && self.limit.is_none() {
            self.limit = Some(LimitHit {
                resets_at: None,
                message: crate::run::engine::agent::handoff::one_line(
                    result.as_deref().unwrap_or("blocking_limit"),
                ),
            });
        }
        self.summary = result;
    }
}

/// `Tool detail` for one of a result's `permission_denials`.
fn denial(d: &Value) -> String {
    let name = d.get("tool_name").and_then(Value::as_str).unwrap_or("tool");
    tool_activity(name, d.get("tool_input"))
}

/// What the Claude Code message on `line` (one `stream-json` line) says
/// the agent is doing: its tool call or its last line of text. A tool's
/// `file_path` inside `worktree` is shown relative to it.
pub(super) fn activity_of(line: &str, worktree: &[std::path::PathBuf]) -> Option<String> {
    let mut m: ClaudeMsg = serde_json::from_str(line).ok()?;
    let blocks = m.message.0.as_mut().and_then(|b| b.content.0.as_mut());
    for block in blocks.into_iter().flatten() {
        if let Some(Value::String(p)) = block
            .0
            .as_mut()
            .and_then(|b| b.input.as_mut())
            .and_then(|i| i.get_mut("file_path"))
        {
            *p = super::relative_to(worktree, p);
        }
    }
    let mut r = AgentReport::default();
    r.claude_message(m);
    r.activity
}

/// Reads Claude Code's output from the agent's stdout log. The last
/// `result` message decides; messages before it give the model, the
/// session and what the agent did last.
pub fn read_claude(stdout_log: &Path) -> AgentReport {
    let mut report = AgentReport::default();
    // The session's model, from `system` `init`: it names the model over
    // the assistant messages (a subagent or a small model may answer some).
    let mut init_model = None;
    for_each_message(stdout_log, |m: ClaudeMsg| {
        if string(&m.kind).as_deref() == Some("system")
            && string(&m.subtype).as_deref() == Some("init")
            && let Some(model) = string(&m.model).filter(|m| m != SYNTHETIC)
        {
            init_model = Some(model);
        }
        report.claude_message(m)
    });
    if init_model.is_some() {
        report.model = init_model;
    }
    report
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
    fn a_cost_written_as_text_is_read() {
        let r = claude(
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":"0.5"}"#,
        );
        assert_eq!(r.cost, Some(500_000));
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
        // Not "success: …": what failed.
        assert_eq!(
            r.error.unwrap().describe(),
            "an API error: API Error: 529 overloaded"
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
    fn claude_model_is_that_of_init_else_assistant_else_model_usage() {
        let init =
            r#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}"#;
        let haiku = r#"{"type":"assistant","message":{"model":"claude-haiku-4-5","content":[]}}"#;
        let opus = r#"{"type":"assistant","message":{"model":"claude-opus-4-1","content":[]}}"#;
        let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","modelUsage":{"claude-x":{},"claude-y":{}}}"#;
        let model = |lines: &[&str]| claude(&format!("{}\n", lines.join("\n"))).model;
        assert_eq!(
            model(&[init, haiku, result]).as_deref(),
            Some("claude-sonnet-4-5")
        );
        // The same in a `--verbose` array.
        let array = format!("[{init},{haiku},{result}]");
        assert_eq!(claude(&array).model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(
            model(&[haiku, opus, result]).as_deref(),
            Some("claude-opus-4-1")
        );
        assert_eq!(model(&[result]).as_deref(), Some("claude-x"));
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
    fn synthetic_messages_name_no_model() {
        let lines = concat!(
            r#"{"type":"assistant","message":{"id":"e1","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"error":"authentication_failed","session_id":"s"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","modelUsage":{},"session_id":"s"}"#,
            "\n",
        );
        let r = claude(lines);
        assert_eq!(r.model, None);
        let e = r.error.unwrap();
        assert_eq!(e.kind, "error");
        assert_eq!(e.message, "Not logged in · Please run /login");
    }

    #[test]
    fn permission_denials_and_terminal_reasons_are_read() {
        let r = claude(
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"Write","tool_use_id":"toolu_1","tool_input":{"file_path":"/etc/hosts","content":"x"}},{"tool_name":"Bash","tool_use_id":"toolu_2","tool_input":{"command":"rm -rf build"}}]}"#,
        );
        assert_eq!(
            r.permission_denials,
            ["Write /etc/hosts", "Bash rm -rf build"]
        );
        assert_eq!(r.error, None);
        let r = claude(
            r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":401,"result":"Failed to authenticate. API Error: 401"}"#,
        );
        assert_eq!(r.error.unwrap().kind, "api_error");
        let r = claude(
            r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"terminal_reason":"budget_exhausted","errors":["Reached maximum budget ($0.01)"],"total_cost_usd":0.0127}"#,
        );
        assert_eq!(r.cost, Some(12_700));
        assert_eq!(r.error.unwrap().kind, "error_max_budget_usd");
    }

    #[test]
    fn cursor_tool_calls_and_camel_case_usage() {
        let lines = concat!(
            r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"c-1","model":"Auto","permissionMode":"default"}"#,
            "\n",
            r#"{"type":"tool_call","subtype":"started","call_id":"call_1","tool_call":{"shellToolCall":{"args":{"command":"cargo test","workingDirectory":""}}},"session_id":"c-1"}"#,
            "\n",
        );
        assert_eq!(claude(lines).activity.as_deref(), Some("Shell cargo test"));
        let r = claude(&format!(
            "{lines}{}\n",
            r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":7147,"duration_api_ms":7147,"result":"pong","session_id":"c-1","request_id":"r","usage":{"inputTokens":12983,"outputTokens":96,"cacheReadTokens":5957,"cacheWriteTokens":0}}"#
        ));
        assert_eq!(r.usage.input_tokens, Some(12_983));
        assert_eq!(r.usage.output_tokens, Some(96));
        assert_eq!(r.usage.cache_read_input_tokens, Some(5_957));
        assert_eq!(r.session_id.as_deref(), Some("c-1"));
        assert_eq!(r.summary.as_deref(), Some("pong"));
    }
}
