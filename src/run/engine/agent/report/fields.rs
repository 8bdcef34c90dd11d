//! The declarative reader (`output = { summary = "result" cost =
//! "total_cost_usd" … }`, docs/language.md "Reading any JSON agent"): for
//! an agent loopc has no code for, the plan says where in each JSON message
//! (one object, an array of them, or one a line) the facts are. Each key's
//! path is tried on every message; the last value found counts.
//!
//! - `summary`, `session`, `activity`: text;
//! - `cost` (US dollars), `input_tokens`, `output_tokens`: numbers;
//! - `error`: text (or `true`) that fails the attempt, the text as its
//!   reason and feedback (`false`, `null` and empty text are no error);
//! - `limit`: text that sets the attempt aside as a usage limit, its reset
//!   time read from the text as for every other agent.
//!
//! An error that says a usage limit, or a login no retry can fix, is read
//! as such whatever key found it ([`super::classify`]).

use super::{AgentReport, LimitHit, ReportedError, for_each_message, last_line, text_of};
use crate::jsonpath::JsonPath;
use crate::model::OutputFields;
use serde_json::Value;
use std::path::Path;

/// The text of a value that says something: a string that is not blank,
/// or a number or boolean written as JSON; `None` for `null`, `false`,
/// blank strings, objects and arrays.
fn said(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(_) | Value::Bool(true) => Some(v.to_string()),
        _ => None,
    }
}

fn at<'a>(path: &Option<JsonPath>, m: &'a Value) -> Option<&'a Value> {
    path.as_ref()?.get(m)
}

impl AgentReport {
    fn fields_message(&mut self, f: &OutputFields, m: &Value, dollars: &mut Option<f64>) {
        if let Some(t) = at(&f.summary, m).and_then(said) {
            self.finished = true;
            self.summary = Some(t);
        }
        if let Some(t) = at(&f.session, m).and_then(said) {
            self.session_id = Some(t);
        }
        if let Some(t) = at(&f.activity, m)
            .and_then(said)
            .as_deref()
            .and_then(last_line)
        {
            self.activity = Some(t);
        }
        if let Some(c) = at(&f.cost, m).and_then(number) {
            *dollars = Some(c);
        }
        if let Some(n) = at(&f.input_tokens, m).and_then(Value::as_u64) {
            self.usage.input_tokens = Some(n);
        }
        if let Some(n) = at(&f.output_tokens, m).and_then(Value::as_u64) {
            self.usage.output_tokens = Some(n);
        }
        if let Some(v) = at(&f.error, m)
            && let Some(t) = said(v)
        {
            self.finished = true;
            let text = match v {
                Value::Bool(true) => self.summary.clone().unwrap_or_default(),
                _ => t,
            };
            self.error = Some(ReportedError::new("error", text));
        }
        if let Some(t) = at(&f.limit, m)
            .map(text_of)
            .filter(|t| !t.trim().is_empty() && t != "null" && t != "false")
        {
            self.finished = true;
            self.limit = Some(LimitHit {
                resets_at: crate::run::engine::agent::limits::reset_time(&t),
                message: crate::run::engine::agent::handoff::one_line(&t),
            });
            if self.error.is_none() {
                self.error = Some(ReportedError::new("limit", t));
            }
        }
    }
}

/// A JSON number, or a string holding one (`"0.5"`: some tools write
/// money as text); anything else is no number.
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|c| c.is_finite()),
        _ => v.as_f64(),
    }
}

/// What the message on `line` says the agent is doing (its `activity`
/// path, else nothing).
pub(super) fn activity_of(f: &OutputFields, line: &str) -> Option<String> {
    let m: Value = serde_json::from_str(line).ok()?;
    let mut r = AgentReport::default();
    let mut dollars = None;
    r.fields_message(f, &m, &mut dollars);
    r.activity
}

/// Reads the agent's stdout log with the paths `f` gives.
pub(super) fn read(f: &OutputFields, stdout_log: &Path) -> AgentReport {
    let mut r = AgentReport::default();
    let mut dollars = None;
    for_each_message(stdout_log, |m: Value| r.fields_message(f, &m, &mut dollars));
    r.cost = dollars.and_then(crate::run::time::usd_to_micro);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> OutputFields {
        let mut f = OutputFields::default();
        for (k, p) in pairs {
            *f.slot(k).unwrap() = Some(JsonPath::parse(p).unwrap());
        }
        f
    }

    fn read_text(f: &OutputFields, text: &str) -> AgentReport {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        std::fs::write(&p, text).unwrap();
        read(f, &p)
    }

    #[test]
    fn paths_give_the_facts_of_a_stream() {
        let f = fields(&[
            ("summary", "[type=result].result"),
            ("cost", "[type=result].total_cost_usd"),
            ("session", "session_id"),
            ("input_tokens", "usage.input_tokens"),
            ("error", "[type=result].is_error"),
            ("activity", "[type=assistant].message.content.0.text"),
        ]);
        let r = read_text(
            &f,
            concat!(
                r#"{"type":"system","session_id":"s-1"}"#,
                "\n",
                r#"{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]}}"#,
                "\n",
                r#"{"type":"result","is_error":false,"result":"done","total_cost_usd":0.25,"usage":{"input_tokens":9}}"#,
                "\n",
            ),
        );
        assert!(r.finished);
        assert_eq!(r.summary.as_deref(), Some("done"));
        assert_eq!(r.cost, Some(250_000));
        // Money written as text is read too; text that is no number is not.
        let f2 = fields(&[("cost", "cost")]);
        assert_eq!(read_text(&f2, r#"{"cost":"0.5"}"#).cost, Some(500_000));
        assert_eq!(read_text(&f2, r#"{"cost":"half"}"#).cost, None);
        assert_eq!(r.session_id.as_deref(), Some("s-1"));
        assert_eq!(r.usage.input_tokens, Some(9));
        assert_eq!(r.error, None);
        assert_eq!(r.activity.as_deref(), Some("working"));
        let f = fields(&[
            ("error", "error.message"),
            ("limit", "[error.type=quota].error.message"),
        ]);
        let r = read_text(
            &f,
            r#"{"error":{"type":"quota","message":"Quota reached; resets in 2h"}}"#,
        );
        assert!(r.limit.is_some());
        let r = read_text(&f, r#"{"error":{"type":"bad","message":"boom"}}"#);
        assert_eq!(r.error.unwrap().message, "boom");
        assert_eq!(r.limit, None);
    }
}
