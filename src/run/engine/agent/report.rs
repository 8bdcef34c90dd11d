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
//! Claude Code's messages are read in [`claude`], Codex's events in
//! [`codex`]; this module holds what both share.

use crate::run::engine::agent::limits::{self, LimitHit};
use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, Visitor};
use serde_json::Value;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

pub use crate::state::{AgentRecord, Usage};

mod claude;
mod codex;
mod cut;

pub use claude::read_claude;
pub use codex::read_codex;

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
        crate::run::engine::agent::handoff::with_reason(&self.kind, &self.message)
    }
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
///
/// A log that loopc cut (its first and last 32 MiB kept, a marker between)
/// is read as its head, then its tail from the first message that starts
/// after the cut: the messages at the end (a `--verbose` array's `result`)
/// are read even when the array was printed on one line.
fn for_each_message<T: DeserializeOwned>(path: &Path, mut each: impl FnMut(T)) {
    use crate::run::sys::process::{LOG_LIMIT, log_cut};
    use std::io::{Seek, SeekFrom};
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    let Some((head_len, tail_start)) = log_cut(path, LOG_LIMIT) else {
        let r = std::io::BufReader::with_capacity(64 * 1024, file);
        return read_messages(r, false, &mut each);
    };
    let head = std::io::BufReader::with_capacity(64 * 1024, file.take(head_len));
    read_messages(head, false, &mut each);
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    let resumed = cut::resume_in_array(&mut file, tail_start);
    if file
        .seek(SeekFrom::Start(resumed.unwrap_or(tail_start)))
        .is_err()
    {
        return;
    }
    let tail = std::io::BufReader::with_capacity(64 * 1024, file);
    read_messages(tail, resumed.is_some(), &mut each);
}

/// Hands every JSON message `r` holds to `each` (see [`for_each_message`]);
/// `in_array`: `r` starts at an element of an array whose `[` came before
/// it, so `,` and `]` between elements are read as the array's.
fn read_messages<T: DeserializeOwned>(
    mut r: impl BufRead,
    mut in_array: bool,
    each: &mut impl FnMut(T),
) {
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
        if in_array && (first == b',' || first == b']') {
            in_array = first == b',';
            r.consume(1);
            continue;
        }
        if first == b'{' || first == b'[' {
            let mut de = serde_json::Deserializer::from_reader(&mut r);
            let top = Top {
                each: &mut *each,
                _t: std::marker::PhantomData,
            };
            if top.deserialize(&mut de).is_ok() {
                continue;
            }
        }
        // Not JSON (or broken JSON): go on after the end of this line.
        in_array = false;
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

/// What an agent is doing now, from `tail`, the end of its stdout log while
/// it runs: the last tool call, command or message its `claude-json`
/// (`stream-json`) or `codex-json` events name; for `text` output (and
/// command tasks) the last line it printed. A file the agent works on
/// inside the attempt's worktree (`worktree`: its path, and the path the
/// system resolves it to) is named relative to it. `None` when
/// the tail says nothing yet (a `--verbose` array says nothing until its
/// end).
pub fn activity(
    output: crate::plan::OutputFormat,
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
            OutputFormat::ClaudeJson => claude::activity_of(line, worktree),
            OutputFormat::CodexJson => codex::activity_of(line, worktree),
        };
        if let Some(a) = found {
            return last_line(&a);
        }
    }
    None
}

/// Decides whether what the agent reported is a usage or rate limit
/// rather than a failure, and sets [`AgentReport::limit`]. A limit the
/// agent got past (a finished run without an error) is no limit.
pub(super) fn detect_limit(report: &mut AgentReport) {
    let failed = report.error.is_some() || !report.finished;
    if !failed {
        report.limit = None;
        return;
    }
    if report.limit.is_some() {
        return;
    }
    let Some(e) = &report.error else { return };
    let text = format!("{}\n{}", e.message, report.summary.as_deref().unwrap_or(""));
    if limits::says_limit(&text) {
        report.limit = Some(LimitHit {
            resets_at: limits::reset_time(&text),
            message: crate::run::engine::agent::handoff::one_line(&e.message),
        });
    } else if matches!(report.api_error_status, Some(429 | 529)) {
        report.limit = Some(LimitHit {
            resets_at: None,
            message: crate::run::engine::agent::handoff::one_line(&e.message),
        });
    }
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
            activity(OutputFormat::ClaudeJson, claude, &[]).as_deref(),
            Some("Bash cargo test")
        );
        let codex = concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
        );
        assert_eq!(
            activity(OutputFormat::CodexJson, codex, &[]).as_deref(),
            Some("$ bash -lc ls")
        );
        assert_eq!(
            activity(OutputFormat::Text, "compiling\nrunning tests\n\n", &[]).as_deref(),
            Some("running tests")
        );
        assert_eq!(
            activity(OutputFormat::ClaudeJson, "[{\"type\":\"sys", &[]),
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
        let now = |path: &str| activity(OutputFormat::ClaudeJson, &write(path), &wt);
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
            activity(OutputFormat::CodexJson, codex, &wt).as_deref(),
            Some("edited a.txt, /tmp/b.txt")
        );
    }
}
