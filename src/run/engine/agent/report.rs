//! What an agent's stdout reports about its attempt, one reader per CLI:
//! `output = claude-json` (Claude Code's `--output-format json` result, its
//! `--verbose` array or `stream-json` lines; also `amp-json`, `cursor-json`
//! and `droid-json`, which print the same message shapes), `codex-json`
//! (`codex exec --json` events, and the older `{"id","msg"}` shape),
//! `gemini-json`, `opencode-json`, `copilot-json`, and `output = { … }`,
//! the declarative reader whose paths the plan gives.
//!
//! The shapes read here are those of the agents' own sources and of output
//! users recorded (each reader names its sources; tests/fixtures/agents/
//! holds the recorded output). Only the fields named are read; every other
//! field is skipped without being kept. The log is streamed one message at
//! a time ([`stream`]).
//!
//! What a report means for the attempt (a usage limit to wait for, a login
//! no retry can fix, the agent's own cost cap) is decided in [`classify`].

use serde_json::Value;
use std::path::{Path, PathBuf};

pub use crate::run::engine::agent::limits::LimitHit;
pub use crate::state::{AgentRecord, Usage};

mod classify;
mod claude;
mod codex;
mod codex_legacy;
mod copilot;
mod cut;
mod fields;
mod gemini;
mod opencode;
mod stream;

pub use classify::Cause;
pub use claude::read_claude;
pub use codex::read_codex;
pub(crate) use fields::number as json_number;
use stream::{Lenient, for_each_message};

fn add_count(slot: &mut Option<u64>, v: Option<&Value>) {
    if let Some(n) = v.and_then(Value::as_u64) {
        *slot = Some(slot.unwrap_or(0).saturating_add(n));
    }
}

/// Adds the counts of a `usage` object to `counts`: Claude's and Codex's
/// snake_case names, and the camelCase ones of Cursor and Copilot
/// (`inputTokens`, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`).
fn absorb(counts: &mut Usage, usage: &Value) {
    add_count(&mut counts.input_tokens, usage.get("input_tokens"));
    add_count(&mut counts.input_tokens, usage.get("inputTokens"));
    add_count(&mut counts.output_tokens, usage.get("output_tokens"));
    add_count(&mut counts.output_tokens, usage.get("outputTokens"));
    add_count(
        &mut counts.cache_creation_input_tokens,
        usage.get("cache_creation_input_tokens"),
    );
    add_count(
        &mut counts.cache_creation_input_tokens,
        usage.get("cacheWriteTokens"),
    );
    add_count(
        &mut counts.cache_read_input_tokens,
        usage.get("cache_read_input_tokens"),
    );
    add_count(
        &mut counts.cache_read_input_tokens,
        usage.get("cacheReadTokens"),
    );
    add_count(
        &mut counts.cached_input_tokens,
        usage.get("cached_input_tokens"),
    );
}

/// An error the agent reported about its own run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedError {
    /// What kind, as the agent names it: Claude's result `subtype`
    /// (`error_max_turns`, `error_during_execution`), its
    /// `terminal_reason` or `api_error` for an error result whose subtype
    /// says `success`; Codex's event type (`turn.failed`, `error`); the
    /// error `type` or `name` of the other CLIs.
    pub kind: String,
    /// The error text: Claude's `errors` (else its `result`), Codex's
    /// `error.message`. May be empty.
    pub message: String,
    /// What it means for the attempt ([`classify`]).
    pub cause: Cause,
    /// More of the CLI's own error text, read to tell what the error means
    /// and not shown: Claude's `result` of an error result whose `errors`
    /// gave the message. Never the agent's own prose (Codex's last
    /// message): an agent that wrote about rate limits hit none.
    pub detail: String,
}

impl ReportedError {
    /// An error of `kind` with `message`, a plain failure until
    /// [`classify`] says otherwise.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> ReportedError {
        ReportedError {
            kind: kind.into(),
            message: message.into(),
            cause: Cause::Failed,
            detail: String::new(),
        }
    }

    /// What failed, then `: ` and the first line of the message when there
    /// is one: `error_max_turns: Reached maximum number of turns (3)`, `an
    /// API error (status 500): API Error: 500 …`.
    pub fn describe(&self) -> String {
        let what = match self.kind.as_str() {
            "api_error" => "an API error".to_string(),
            "error" => "an error".to_string(),
            k => k.to_string(),
        };
        crate::run::engine::agent::handoff::with_reason(&what, &self.message)
    }

    /// The one-line reason of an attempt this error failed, `who` being
    /// `the agent` or `gate `x`'s agent`: `the agent reported …`, or `the
    /// agent stopped at its cost cap (…)` for [`Cause::CostCap`].
    pub fn reason(&self, who: &str) -> String {
        match self.cause {
            Cause::CostCap => format!("{who} stopped at its cost cap ({})", self.describe()),
            _ => format!("{who} reported {}", self.describe()),
        }
    }
}

/// What an agent's stdout reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReport {
    /// Whether the output held the agent's final message (Claude: a
    /// `result`; Codex: a completed or failed turn, or an error).
    pub finished: bool,
    /// The cost in micro-dollars (Claude's `total_cost_usd`, or the older
    /// `cost_usd`; OpenCode's summed `cost`); most CLIs report none.
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
    /// `modelUsage`; never the `<synthetic>` of locally made messages).
    pub model: Option<String>,
    /// Claude's `api_error_status`: the HTTP status of a failed API call.
    pub api_error_status: Option<u16>,
    /// A usage or rate limit the agent ran into.
    pub limit: Option<LimitHit>,
    /// The last thing the agent did (a tool call, a command, a message).
    pub activity: Option<String>,
    /// The tool calls the agent was refused (Claude's
    /// `permission_denials`): `Write /etc/hosts`.
    pub permission_denials: Vec<String>,
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
            permission_denials: self.permission_denials.clone(),
        }
    }

    /// The part of the next attempt's feedback that says which tool calls
    /// the agent was refused, when it was refused any.
    pub fn denials_feedback(&self) -> Option<String> {
        if self.permission_denials.is_empty() {
            return None;
        }
        let mut text = String::from(
            "The agent was refused these tool calls (its permission settings denied them):",
        );
        for d in &self.permission_denials {
            text.push_str("\n- ");
            text.push_str(d);
        }
        Some(text)
    }

    /// Why the task cannot go on whatever is retried (the agent is not
    /// logged in, its API key is missing or refused), when that is so.
    pub fn blocking(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        (e.cause == Cause::Auth).then(|| {
            crate::run::engine::agent::handoff::with_reason(
                "the agent cannot authenticate",
                &e.message,
            )
        })
    }
}

/// The cost (micro-dollars) an agent's run reported: what its output
/// reported, else its handoff's `cost_usd`; `None` when neither did.
pub fn reported_cost(
    report: Option<&AgentReport>,
    handoff: &Result<Option<crate::run::engine::agent::handoff::Handoff>, String>,
) -> Option<u64> {
    report.and_then(|s| s.cost).or_else(|| {
        handoff
            .as_ref()
            .ok()
            .and_then(|h| h.as_ref())
            .and_then(|h| h.cost_usd)
            .and_then(crate::run::time::usd_to_micro)
    })
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

/// What a tool call does, from its input: the command it runs, else the
/// file or pattern it names (Claude's `command`, `file_path`, `pattern`;
/// Gemini's and OpenCode's `filePath`, `path`, `absolute_path`).
fn tool_detail(input: &Value) -> Option<String> {
    [
        "command",
        "file_path",
        "filePath",
        "absolute_path",
        "path",
        "pattern",
        "query",
        "url",
    ]
    .iter()
    .find_map(|k| match input.get(k)? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts.iter().map(text_of).collect::<Vec<_>>().join(" ")),
        _ => None,
    })
}

/// `name detail` (or `name` alone), for a tool call.
fn tool_activity(name: &str, input: Option<&Value>) -> String {
    match input.and_then(tool_detail) {
        Some(d) => format!("{name} {d}"),
        None => name.to_string(),
    }
}

/// Reads the report of an agent whose output format is `output`; `None`
/// for plain text.
pub fn read(output: &crate::plan::OutputFormat, stdout_log: &Path) -> Option<AgentReport> {
    use crate::plan::OutputFormat;
    let mut report = match output {
        OutputFormat::Text => return None,
        OutputFormat::ClaudeJson
        | OutputFormat::AmpJson
        | OutputFormat::CursorJson
        | OutputFormat::DroidJson => read_claude(stdout_log),
        OutputFormat::CodexJson => read_codex(stdout_log),
        OutputFormat::GeminiJson => gemini::read(stdout_log),
        OutputFormat::OpencodeJson => opencode::read(stdout_log),
        OutputFormat::CopilotJson => copilot::read(stdout_log),
        OutputFormat::Fields(f) => fields::read(f, stdout_log),
    };
    classify::classify(&mut report);
    Some(report)
}

/// `path` relative to the worktree when it is inside it (`src/lib.rs` for
/// `<worktree>/src/lib.rs`), else as it is. `worktree` names the worktree
/// (its path as given, and as the system resolves it).
fn relative_to(worktree: &[PathBuf], path: &str) -> String {
    for w in worktree {
        if let Ok(rest) = Path::new(path).strip_prefix(w)
            && !rest.as_os_str().is_empty()
        {
            return rest.to_string_lossy().into_owned();
        }
    }
    path.to_string()
}

/// `text` with every path inside the worktree named relative to it.
fn relative_in(worktree: &[PathBuf], text: &str) -> String {
    let mut out = text.to_string();
    for w in worktree {
        let mut prefix = w.to_string_lossy().into_owned();
        prefix.push('/');
        out = out.replace(&prefix, "");
    }
    out
}

/// What an agent is doing now, from `tail`, the end of its stdout log while
/// it runs: the last tool call, command or message its events name (every
/// reader but `text`); for `text` output (and command tasks) the last line
/// it printed. A file the agent works on inside the attempt's worktree
/// (`worktree`: its path, and the path the system resolves it to) is named
/// relative to it. `None` when the tail says nothing yet (a `--verbose`
/// array says nothing until its end).
pub fn activity(
    output: &crate::plan::OutputFormat,
    tail: &str,
    worktree: &[PathBuf],
) -> Option<String> {
    use crate::plan::OutputFormat;
    // The newest lines first; only the last few are worth parsing.
    for line in tail
        .lines()
        .rev()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(32)
    {
        let found = match output {
            OutputFormat::Text => return Some(line.to_string()),
            OutputFormat::ClaudeJson
            | OutputFormat::AmpJson
            | OutputFormat::CursorJson
            | OutputFormat::DroidJson => claude::activity_of(line, worktree),
            OutputFormat::CodexJson => codex::activity_of(line, worktree),
            OutputFormat::GeminiJson => gemini::activity_of(line),
            OutputFormat::OpencodeJson => opencode::activity_of(line),
            OutputFormat::CopilotJson => copilot::activity_of(line),
            OutputFormat::Fields(f) => fields::activity_of(f, line),
        }
        .map(|a| relative_in(worktree, &a));
        if let Some(a) = found {
            return last_line(&a);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::OutputFormat;

    #[test]
    fn activity_is_the_newest_event_that_says_something() {
        let claude = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#,
            "\n",
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"cargo test"}}]},"session_id":"s"}"#,
            "\n",
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]},"session_id":"s"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","te"#,
        );
        assert_eq!(
            activity(&OutputFormat::ClaudeJson, claude, &[]).as_deref(),
            Some("Bash cargo test")
        );
        let codex = concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
        );
        assert_eq!(
            activity(&OutputFormat::CodexJson, codex, &[]).as_deref(),
            Some("$ bash -lc ls")
        );
        assert_eq!(
            activity(&OutputFormat::Text, "compiling\nrunning tests\n\n", &[]).as_deref(),
            Some("running tests")
        );
        assert_eq!(
            activity(&OutputFormat::ClaudeJson, "[{\"type\":\"sys", &[]),
            None
        );
    }

    #[test]
    fn activity_names_files_in_the_worktree_relative_to_it() {
        let wt = [PathBuf::from("/r/.loopc/worktrees/t.r1-a1")];
        let write = |path: &str| {
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t","name":"Write","input":{{"file_path":"{path}","content":"x"}}}}]}}}}"#
            )
        };
        let now = |path: &str| activity(&OutputFormat::ClaudeJson, &write(path), &wt);
        assert_eq!(
            now("/r/.loopc/worktrees/t.r1-a1/src/lib.rs").as_deref(),
            Some("Write src/lib.rs")
        );
        // Outside it (a sibling whose name starts the same): as it is.
        assert_eq!(
            now("/r/.loopc/worktrees/t.r1-a10/x.rs").as_deref(),
            Some("Write /r/.loopc/worktrees/t.r1-a10/x.rs")
        );
        assert_eq!(now("/etc/hosts").as_deref(), Some("Write /etc/hosts"));
        let codex = r#"{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/r/.loopc/worktrees/t.r1-a1/a.txt","kind":"add"},{"path":"/tmp/b.txt","kind":"add"}],"status":"completed"}}"#;
        assert_eq!(
            activity(&OutputFormat::CodexJson, codex, &wt).as_deref(),
            Some("edited a.txt, /tmp/b.txt")
        );
    }
}
