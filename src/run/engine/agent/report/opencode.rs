//! OpenCode's output (`output = opencode-json`): `opencode run --format
//! json` prints one event a line, each with its `sessionID` (sst/opencode,
//! `packages/opencode/src/cli/cmd/run.ts`; recorded output in
//! tests/fixtures/agents/README.md): `step_start`, `text` (`part.text`),
//! `tool_use` (`part.tool`, `part.state.input`), `step_finish`
//! (`part.reason`, `part.cost` in dollars, `part.tokens`: `input`,
//! `output`, `reasoning`, `cache.read`, `cache.write`) and `error`
//! (`error.name` and `error.data.message`, or `error.type` and
//! `error.message`).
//!
//! The cost and tokens are summed over the steps; the summary is the last
//! text; a `step_finish` with reason `stop` ends the run.

use super::{AgentReport, ReportedError, for_each_message, last_line, text_of, tool_activity};
use serde_json::Value;
use std::path::Path;

fn add(slot: &mut Option<u64>, v: Option<&Value>) {
    if let Some(n) = v.and_then(Value::as_u64) {
        *slot = Some(slot.unwrap_or(0).saturating_add(n));
    }
}

#[derive(Default)]
struct Reader {
    report: AgentReport,
    /// The summed cost in dollars.
    dollars: Option<f64>,
}

impl Reader {
    fn event(&mut self, m: Value) {
        let r = &mut self.report;
        if let Some(s) = m.get("sessionID").and_then(Value::as_str) {
            r.session_id = Some(s.to_string());
        }
        let part = m.get("part");
        let at = |k: &str| part.and_then(|p| p.get(k));
        match m.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => {
                if let Some(t) = at("text").and_then(Value::as_str) {
                    r.activity = last_line(t);
                    if !t.trim().is_empty() {
                        r.summary = Some(t.to_string());
                    }
                }
            }
            "tool_use" => {
                let name = at("tool").and_then(Value::as_str).unwrap_or("tool");
                let input = at("state").and_then(|s| s.get("input"));
                r.activity = Some(tool_activity(name, input));
            }
            "step_finish" => {
                r.num_turns = Some(r.num_turns.unwrap_or(0) + 1);
                if let Some(c) = at("cost").and_then(Value::as_f64) {
                    self.dollars = Some(self.dollars.unwrap_or(0.0) + c);
                }
                if let Some(t) = at("tokens") {
                    add(&mut r.usage.input_tokens, t.get("input"));
                    add(&mut r.usage.output_tokens, t.get("output"));
                    let cache = t.get("cache");
                    add(
                        &mut r.usage.cache_read_input_tokens,
                        cache.and_then(|c| c.get("read")),
                    );
                    add(
                        &mut r.usage.cache_creation_input_tokens,
                        cache.and_then(|c| c.get("write")),
                    );
                }
                if at("reason").and_then(Value::as_str) == Some("stop") {
                    r.finished = true;
                }
            }
            "error" => {
                r.finished = true;
                let e = m.get("error");
                let kind = e
                    .and_then(|e| e.get("name").or_else(|| e.get("type")))
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = e
                    .and_then(|e| {
                        e.get("data")
                            .and_then(|d| d.get("message"))
                            .or_else(|| e.get("message"))
                    })
                    .map(text_of)
                    .or_else(|| e.filter(|e| e.is_string()).map(text_of))
                    .unwrap_or_default();
                let status = e.and_then(|e| {
                    e.get("data")
                        .and_then(|d| d.get("statusCode"))
                        .or_else(|| e.get("status"))
                });
                r.api_error_status = status
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok());
                r.error = Some(ReportedError::new(kind, message));
            }
            _ => {}
        }
    }
}

/// What the OpenCode event on `line` says the agent is doing.
pub(super) fn activity_of(line: &str) -> Option<String> {
    let m: Value = serde_json::from_str(line).ok()?;
    let mut r = Reader::default();
    r.event(m);
    r.report.activity
}

/// Reads `opencode run --format json` events from the agent's stdout log.
pub(super) fn read(stdout_log: &Path) -> AgentReport {
    let mut r = Reader::default();
    for_each_message(stdout_log, |m: Value| r.event(m));
    r.report.cost = r.dollars.and_then(crate::run::time::usd_to_micro);
    r.report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opencode(text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read(&p)
    }

    #[test]
    fn steps_text_tools_and_errors() {
        let r = opencode(concat!(
            r#"{"type":"step_start","timestamp":1786438377000,"sessionID":"ses_00ffa44f","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_00ffa44f","type":"step-start"}}"#,
            "\n",
            r#"{"type":"tool_use","timestamp":1787138268642,"sessionID":"ses_00ffa44f","part":{"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls -la"},"output":"total 15"}}}"#,
            "\n",
            r#"{"type":"step_finish","timestamp":1787138269007,"sessionID":"ses_00ffa44f","part":{"reason":"tool-calls","type":"step-finish","tokens":{"total":8279,"input":237,"output":39,"reasoning":67,"cache":{"write":0,"read":7936}},"cost":0.001}}"#,
            "\n",
            r#"{"type":"text","timestamp":1786438377682,"sessionID":"ses_00ffa44f","part":{"type":"text","text":"PONG"}}"#,
            "\n",
            r#"{"type":"step_finish","timestamp":1786438377789,"sessionID":"ses_00ffa44f","part":{"reason":"stop","type":"step-finish","tokens":{"total":121705,"input":121702,"output":3,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.00851956}}"#,
            "\n",
        ));
        assert!(r.finished);
        assert_eq!(r.session_id.as_deref(), Some("ses_00ffa44f"));
        assert_eq!(r.summary.as_deref(), Some("PONG"));
        assert_eq!(r.cost, Some(9_520));
        assert_eq!(r.usage.input_tokens, Some(121_939));
        assert_eq!(r.usage.cache_read_input_tokens, Some(7936));
        assert_eq!(r.num_turns, Some(2));
        let e = opencode(
            r#"{"type":"error","timestamp":1787713121731,"sessionID":"ses_fc3f","error":{"name":"APIError","data":{"message":"Invalid Authentication","statusCode":401,"isRetryable":false}}}"#,
        );
        assert_eq!(e.api_error_status, Some(401));
        assert_eq!(
            e.error.unwrap().describe(),
            "APIError: Invalid Authentication"
        );
        assert_eq!(
            activity_of(r#"{"type":"tool_use","part":{"tool":"read","state":{"status":"running","input":{"filePath":"src/a.rs"}}}}"#).as_deref(),
            Some("read src/a.rs")
        );
    }
}
