//! The handoff protocol (docs/running.md step 4): the JSON an agent may write to
//! `$LOOP_HANDOFF` and the instructions loopc appends to every agent
//! prompt. What an agent's stdout reports (`output = claude-json`,
//! `codex-json`) is [`crate::run::engine::agent::report`].

use crate::plan::{GateKind, Task};
use serde::Deserialize;
use std::io::Read;
use std::path::Path;

/// The status an agent reports in its handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffStatus {
    /// The work is done (for a gate: approved).
    Completed,
    /// The attempt failed (for a gate: rejected).
    Failed,
    /// The task cannot go on without outside help.
    Blocked,
    /// A person must look at it.
    NeedsHuman,
}

/// A parsed handoff file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Handoff {
    /// What the agent says happened.
    pub status: HandoffStatus,
    /// A short summary (for a gate: the feedback).
    #[serde(default)]
    pub summary: Option<String>,
    /// What the attempt cost, in dollars (a JSON number, or a string
    /// holding one).
    #[serde(default, deserialize_with = "dollars")]
    pub cost_usd: Option<f64>,
    /// The agent deliberately changed nothing.
    #[serde(default)]
    pub no_changes: bool,
    /// With `needs_human`: what the person must answer.
    #[serde(default)]
    pub question: Option<String>,
    /// A resolver's handoff: the files outside the conflicted ones that its
    /// resolution changed on purpose (paths relative to the repository
    /// root). Other agents' handoffs may leave it out; loopc ignores it there.
    #[serde(default)]
    pub extra_files: Vec<String>,
}

/// The most a handoff file may be (larger is an error).
const MAX_JSON: u64 = 16 * 1024 * 1024;

fn read_capped(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut buf = Vec::new();
    file.take(MAX_JSON + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if buf.len() as u64 > MAX_JSON {
        return Err(format!("{} is larger than 16 MiB", path.display()));
    }
    Ok(Some(buf))
}

/// Reads the handoff at `path`: `Ok(None)` when no handoff was written (no
/// file, or an empty one).
///
/// Errors: the file is not a valid handoff (the message says why).
pub fn read(path: &Path) -> Result<Option<Handoff>, String> {
    let Some(bytes) = read_capped(path)? else {
        return Ok(None);
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // Bytes that are not UTF-8 are decoded lossily, as all agent output is;
    // a byte-order mark some editors and shells write is no JSON.
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let expected = "a JSON object with `status` (`completed`, `failed`, `blocked` or \
                    `needs_human`) and `summary` is expected";
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("the handoff file is not a handoff: {expected} ({e})"))?;
    if !value.is_object() {
        let what = match value {
            serde_json::Value::Array(_) => "an array",
            serde_json::Value::String(_) => "a string",
            serde_json::Value::Number(_) => "a number",
            serde_json::Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(format!(
            "the handoff file holds {what}, not an object: {expected}"
        ));
    }
    let h = serde_json::from_value::<Handoff>(value)
        .map_err(|e| format!("the handoff file is not a handoff: {expected} ({e})"))?;
    // A negative or non-finite cost is an invalid handoff, not an unknown
    // cost in disguise: the attempt's cost stays unknown and it says why.
    if let Some(c) = h.cost_usd
        && (!c.is_finite() || c < 0.0)
    {
        return Err(format!(
            "the handoff's cost_usd ({c}) is invalid: it must be a non-negative number of dollars"
        ));
    }
    Ok(Some(h))
}

/// `cost_usd`: a number, or a string holding one (`"0.33"`); `null` is
/// none. Anything else is an invalid handoff.
fn dollars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => crate::run::engine::agent::report::json_number(&v)
            .map(Some)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("cost_usd {v} is not a number of dollars"))
            }),
    }
}

/// The instructions appended to every agent prompt; `gate` selects the
/// reviewer's wording.
pub fn instructions(gate: bool) -> String {
    if gate {
        "## Verdict (required)\n\
         You are reviewing a change; do not modify any file. The change is the \
         diff in the file named by the environment variable LOOP_DIFF_FILE.\n\
         Write your verdict as JSON to the file named by the environment variable \
         LOOP_HANDOFF:\n\
         {\"status\": \"completed\", \"summary\": \"why it is acceptable\"} to approve, or\n\
         {\"status\": \"failed\", \"summary\": \"what must change\"} to reject.\n\
         Without that file the change is rejected (no verdict).\n"
            .to_string()
    } else {
        "## Handoff\n\
         When you stop, write a JSON object to the file named by the environment \
         variable LOOP_HANDOFF (a file loopc keeps out of the commit):\n\
         {\"status\": \"completed\" | \"failed\" | \"blocked\" | \"needs_human\", \
         \"summary\": \"one line on what you did\", \"cost_usd\": 0.0, \"no_changes\": false}\n\
         Use \"blocked\" when the task cannot be done without outside help, and \
         \"needs_human\" with a \"question\": \"…\" field when a person must decide \
         something: loopc stops the task until the person answers and gives the next \
         attempt the answer. \
         Set \"no_changes\": true only if the task needs no change to the files. \
         Leave your changes in the working tree; loopc commits them.\n"
            .to_string()
    }
}

/// The prompt given to an agent: the task's prompt, then people's
/// `answers` to its questions (a prompt section, see
/// [`crate::run::store::answers::prompt_section`]), then how the task is
/// checked (`checks`, [`checks_section`]), then the progress of passed
/// tasks, then the previous attempt's feedback, then the handoff
/// instructions (docs/running.md, "The agent protocol").
pub fn prompt(
    task_prompt: &str,
    answers: &str,
    checks: &str,
    progress: &str,
    feedback: &str,
) -> String {
    let mut out = task_prompt.trim_end().to_string();
    out.push_str("\n\n");
    out.push_str(answers);
    out.push_str(checks);
    if !progress.trim().is_empty() {
        out.push_str("## Progress so far (tasks already done)\n");
        out.push_str(progress.trim_end());
        out.push_str("\n\n");
    }
    if !feedback.trim().is_empty() {
        out.push_str("## Feedback from the previous attempt\n");
        out.push_str(feedback.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(&instructions(false));
    out
}

/// The prompt section that tells an agent how its task is checked
/// (docs/running.md, "The agent protocol"): the heading `## How this task
/// is checked`, the task's name and title, then each check in the order it
/// runs: `accept` (its command), then each gate (a command gate's command;
/// an agent gate's name, its agent and the prompt it reviews with). A task
/// with no check says so. Ends with a blank line.
pub fn checks_section(task: &Task) -> String {
    let mut out = String::from("## How this task is checked\n");
    match task
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(title) => out.push_str(&format!("Task `{}`: {title}\n", task.name)),
        None => out.push_str(&format!("Task `{}`\n", task.name)),
    }
    let mut checks = Vec::new();
    if let Some(accept) = &task.accept {
        checks.push(command_check("`accept`", accept));
    }
    for g in &task.gates {
        checks.push(match &g.kind {
            GateKind::Command { run } => command_check(&format!("gate `{}`", g.name), run),
            GateKind::Agent { agent, prompt } => format!(
                "gate `{}`: agent `{}` reviews the diff of your change and approves or \
                 rejects it. It is asked:\n{}",
                g.name,
                agent.name,
                quoted(prompt)
            ),
        });
    }
    if checks.is_empty() {
        out.push_str(
            "No acceptance command and no gate: the attempt passes once loopc has \
             committed its change.\n\n",
        );
        return out;
    }
    out.push_str(
        "When you stop, loopc commits your changes and runs these checks on the commit, \
         in this order. The first that fails ends the attempt, and its output is the next \
         attempt's feedback. The command checks run again on the merge if other work was \
         merged meanwhile.\n",
    );
    for (n, c) in checks.iter().enumerate() {
        out.push_str(&format!("{}. {c}\n", n + 1));
    }
    out.push('\n');
    out
}

/// A command check's line: `label`, then `command` as Markdown code
/// (inline between backticks, more than any run of them in it; a command
/// of several lines as a fenced block under the line), which must exit 0.
fn command_check(label: &str, command: &str) -> String {
    let command = command.trim();
    let longest = command.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    if command.contains('\n') {
        let fence = "`".repeat((longest + 1).max(3));
        return format!(
            "{label}: this command must exit with status 0:\n{fence}\n{command}\n{fence}"
        );
    }
    let ticks = "`".repeat(longest + 1);
    let pad = if command.starts_with('`') || command.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{label}: the command {ticks}{pad}{command}{pad}{ticks} must exit with status 0.")
}

/// Each line of `text` as a Markdown quote, indented under a list item.
fn quoted(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            out.push_str("   >\n");
        } else {
            out.push_str(&format!("   > {line}\n"));
        }
    }
    out.trim_end().to_string()
}

/// `what`, then `: ` and the first line of `summary` when it has one (no
/// dangling colon for an empty summary).
pub fn with_reason(what: &str, summary: &str) -> String {
    let line = one_line(summary);
    if line.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {line}")
    }
}

/// The first line of `text`, at most 200 characters.
pub fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut s: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_order() {
        let p = prompt(
            "Do X.",
            "## Answer from a human\n> Which?\n\nThat one.\n\n",
            "## How this task is checked\n",
            "- a: A — did a; f.py\n",
            "tests failed",
        );
        let i_answer = p.find("## Answer from a human").unwrap();
        let i_task = p.find("Do X.").unwrap();
        let i_checked = p.find("## How this task is checked").unwrap();
        let i_prog = p.find("- a: A").unwrap();
        let i_fb = p.find("tests failed").unwrap();
        let i_hand = p.find("LOOP_HANDOFF").unwrap();
        assert!(i_task < i_answer && i_answer < i_checked && i_checked < i_prog);
        assert!(i_prog < i_fb && i_fb < i_hand);
        assert!(!prompt("Do X.", "", "", "", "").contains("Feedback"));
    }

    #[test]
    fn a_negative_cost_is_an_invalid_handoff() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.json");
        std::fs::write(&p, r#"{"status":"completed","cost_usd":-5}"#).unwrap();
        let e = read(&p).unwrap_err();
        assert!(e.contains("cost_usd (-5) is invalid"), "{e}");
        std::fs::write(&p, r#"{"status":"completed","cost_usd":0}"#).unwrap();
        assert!(read(&p).unwrap().is_some());
    }

    #[test]
    fn a_bom_a_cost_as_text_and_a_handoff_that_is_no_object() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.json");
        let write = |text: &str| std::fs::write(&p, text).unwrap();
        write("\u{feff}{\"status\":\"completed\",\"cost_usd\":\"0.33\"}");
        assert_eq!(read(&p).unwrap().unwrap().cost_usd, Some(0.33));
        write(r#"{"status":"completed","cost_usd":null}"#);
        assert_eq!(read(&p).unwrap().unwrap().cost_usd, None);
        write(r#"{"status":"completed","cost_usd":"-1"}"#);
        assert!(read(&p).unwrap_err().contains("cost_usd (-1) is invalid"));
        write(r#"{"status":"completed","cost_usd":"cheap"}"#);
        let e = read(&p).unwrap_err();
        assert!(
            e.contains("cost_usd \"cheap\" is not a number of dollars"),
            "{e}"
        );
        write(r#"[{"status":"completed","summary":"x"}]"#);
        let e = read(&p).unwrap_err();
        assert!(
            e.starts_with(
                "the handoff file holds an array, not an object: a JSON object with `status`"
            ),
            "{e}"
        );
    }

    #[test]
    fn handoff_fields() {
        let h: Handoff =
            serde_json::from_str(r#"{"status":"needs_human","summary":"x","question":"Which?"}"#)
                .unwrap();
        assert_eq!(h.status, HandoffStatus::NeedsHuman);
        assert_eq!(h.question.as_deref(), Some("Which?"));
        assert!(!h.no_changes);
        assert!(serde_json::from_str::<Handoff>(r#"{"status":"maybe"}"#).is_err());
    }
}
