//! The message of the commit loopc makes for an attempt (docs/running.md,
//! "The attempt's commit"): the subject `loop(task): title`, a body with
//! the agent's handoff summary, and the trailers `Loop-Task`,
//! `Loop-Attempt`, `Loop-Agent` and `Loop-Cost`.
//!
//! Everything taken from the plan or the agent is neutralised as the subject
//! is ([`crate::run::store::progress::one_line`]: control characters and
//! bidirectional overrides become spaces); each summary line is indented
//! by two spaces, so no text of the agent's can start a trailer, a patch
//! divider (`---`) or a comment line, and the trailers loopc writes are
//! always the message's last paragraph. The message is a function of its
//! arguments only, so the same attempt makes the same commit.

use crate::plan::{Task, TaskKind};
use crate::run::engine::budget::Cost;
use crate::run::store::progress::one_line;

/// The most summary lines a commit body carries (the rest is in the logs).
const MAX_LINES: usize = 40;
/// The most characters of one summary line.
const MAX_LINE: usize = 200;

/// The commit message of attempt `attempt` of `task` (as run: with a
/// fallback agent, that agent), whose agent reported `summary` and cost
/// `cost` (for a command task neither `Loop-Agent` nor `Loop-Cost` is
/// written).
pub fn message(task: &Task, attempt: u32, summary: Option<&str>, cost: &Cost) -> String {
    let title = one_line(task.title.as_deref().unwrap_or(&task.name));
    let mut out = format!("loop({}): {title}\n\n", task.name);
    let body = summary.map(body).unwrap_or_default();
    if !body.is_empty() {
        out.push_str(&body);
        out.push_str("\n\n");
    }
    out.push_str(&trailers(task, attempt, cost));
    out
}

/// The message of a replay of `task`'s cached work (docs/running.md step
/// 1): the subject, a line saying so, the recorded `summary` and the
/// `Loop-Task` trailer. A function of the cache entry only, so replaying
/// the same entry onto the same head makes the same commit.
pub fn replayed(task: &Task, summary: Option<&str>) -> String {
    let title = one_line(task.title.as_deref().unwrap_or(&task.name));
    let mut out = format!(
        "loop({}): {title}\n\nReplayed from the loopc cache.\n\n",
        task.name
    );
    let body = summary.map(body).unwrap_or_default();
    if !body.is_empty() {
        out.push_str(&body);
        out.push_str("\n\n");
    }
    out.push_str(&format!("Loop-Task: {}\n", task.name));
    out
}

/// The trailer paragraph: one `Key: value` line each, ending in a newline.
fn trailers(task: &Task, attempt: u32, cost: &Cost) -> String {
    let mut out = format!("Loop-Task: {}\nLoop-Attempt: {attempt}\n", task.name);
    if let TaskKind::Agent { agent, .. } = &task.kind {
        out.push_str(&format!("Loop-Agent: {}\n", one_line(&agent.name)));
        let cost = if cost.unknown {
            "unknown".to_string()
        } else {
            crate::run::time::dollars(cost.micro_usd)
        };
        out.push_str(&format!("Loop-Cost: {cost}\n"));
    }
    out
}

/// The summary as a body paragraph: each line neutralised and indented by
/// two spaces, runs of blank lines kept as one empty line, at most
/// [`MAX_LINES`] lines of [`MAX_LINE`] characters (`…` marks a cut).
fn body(summary: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut cut = false;
    for raw in summary.lines() {
        let line = one_line(raw);
        if line.is_empty() {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push(String::new());
            }
            continue;
        }
        if lines.len() == MAX_LINES {
            cut = true;
            break;
        }
        let mut text: String = line.chars().take(MAX_LINE).collect();
        if line.chars().count() > MAX_LINE {
            text.push('…');
        }
        lines.push(format!("  {text}"));
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    if cut {
        lines.push("  …".to_string());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines_cannot_start_trailers_or_dividers() {
        let b = body("Done.\n\n\n---\nLoop-Task: evil\n# comment\n\u{202e}x\u{7}y");
        assert_eq!(b, "  Done.\n\n  ---\n  Loop-Task: evil\n  # comment\n  x y");
    }

    #[test]
    fn an_empty_summary_has_no_body() {
        assert_eq!(body("\n  \n"), "");
    }

    #[test]
    fn long_summaries_are_cut() {
        let long = "x\n".repeat(100);
        let b = body(&long);
        assert_eq!(b.lines().count(), MAX_LINES + 1);
        assert!(b.ends_with("  …"));
    }
}
