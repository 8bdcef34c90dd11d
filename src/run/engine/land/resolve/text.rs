//! The text of a resolver's run: its prompt (what to do, both sides'
//! tasks, the conflicted files) and the next attempt's feedback when its
//! resolution is refused.

use super::check::Presence;
use super::{Refusal, Side};
use crate::plan::{Plan, Task, TaskKind};
use crate::run::engine::agent::handoff;
use crate::run::engine::attempt::gate::{self, FEEDBACK_LIMIT};
use crate::run::sys::process;
use crate::state::ResolverRecord;
use std::path::Path;

/// The most of one conflicted file shown in the resolver's prompt.
const FILE_LIMIT: usize = 16 * 1024;
/// The most of all conflicted files shown in the resolver's prompt.
const FILES_LIMIT: usize = 64 * 1024;

/// What a task's work is, for the resolver's prompt: its prompt, or the
/// command of a command task.
fn work_of(task: &Task) -> String {
    match &task.kind {
        TaskKind::Agent { prompt, .. } => prompt.trim_end().to_string(),
        TaskKind::Command { run } => format!("(a command task) It runs: `{}`", run.trim()),
    }
}

/// `task`'s heading line: name and title.
fn heading(task: &Task) -> String {
    match &task.title {
        Some(t) => format!("task `{}`: {}", task.name, handoff::one_line(t)),
        None => format!("task `{}`", task.name),
    }
}

/// The resolver's prompt: what to do, both sides' tasks (titles and
/// prompts), the conflicted files as the merge left them (bounded), how
/// the task is checked ([`handoff::checks_section`]), the progress of
/// passed tasks and the handoff instructions.
pub(super) fn prompt(
    plan: &Plan,
    task: &Task,
    with: &[usize],
    side: &Side<'_>,
    sides: &[Presence],
    worktree: &Path,
    progress: &str,
) -> String {
    let conflicts = side.conflicts;
    let mut out = format!(
        "# Resolve a merge conflict\n\n\
         loopc is merging the work of {} onto the integration branch, and it conflicts \
         with work merged there meanwhile. This directory is the integration branch's head \
         with that merge in progress: the conflicted files hold conflict markers \
         (`<<<<<<<` this side, `|||||||` the common base, `=======`, then `>>>>>>>` the \
         task's side). Resolve every conflict so that the result keeps what both sides meant:\n\n\
         - edit the conflicted files and remove every conflict marker;\n\
         - change no other file unless the resolution needs it, and then list each such \
         file in the handoff's \"extra_files\";\n\
         - do not commit and do not switch branches: loopc commits the resolution and runs \
         the task's checks on it.\n\n",
        heading(task)
    );
    out.push_str(&format!(
        "## The change being merged: {}\n{}\n\n",
        heading(task),
        work_of(task)
    ));
    if with.is_empty() {
        out.push_str(
            "## Merged meanwhile\nWork on the integration branch since the change's base \
             (no task of this run is known to have made it).\n\n",
        );
    }
    for &i in with {
        let t = &plan.tasks[i];
        out.push_str(&format!(
            "## Merged meanwhile: {}\n{}\n\n",
            heading(t),
            work_of(t)
        ));
    }
    out.push_str("## Conflicted files\n");
    let mut room = FILES_LIMIT;
    for (i, p) in conflicts.iter().enumerate() {
        out.push_str(&format!("### `{p}`\n"));
        if let Some(note) = sides.get(i).and_then(|s| deleted_note(*s, with.is_empty())) {
            out.push_str(&note);
        }
        match std::fs::read(worktree.join(p)) {
            Err(_) => out.push_str("(not in the worktree: one side deleted or renamed it)\n\n"),
            Ok(b) if b.contains(&0) => out.push_str("(a binary file)\n\n"),
            Ok(b) if b.len() > FILE_LIMIT.min(room) => out.push_str(&format!(
                "({} bytes: too long to show here; read it in the worktree)\n\n",
                b.len()
            )),
            Ok(b) => {
                room -= b.len();
                let text = String::from_utf8_lossy(&b);
                let fence = "`".repeat(longest_backticks(&text).max(2) + 1);
                out.push_str(&format!("{fence}\n{}", text));
                if !text.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&format!("{fence}\n\n"));
            }
        }
    }
    // The resolution is judged by the task's checks, as its attempt was.
    out.push_str(&handoff::checks_section(task));
    if !progress.trim().is_empty() {
        out.push_str("## Progress so far (tasks already done)\n");
        out.push_str(progress.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(INSTRUCTIONS);
    out
}

/// What the prompt says of a conflicted file one side deleted (`None`:
/// both sides have it). `unknown`: no task of the run is known to have
/// made the work merged meanwhile.
fn deleted_note(s: Presence, unknown: bool) -> Option<String> {
    let others = if unknown {
        "work merged meanwhile"
    } else {
        "the work merged meanwhile"
    };
    match (s.head, s.task) {
        (true, true) => None,
        (true, false) => Some(format!(
            "(A modify/delete conflict: the task's change deletes this file, and {others} \
             changed it. It holds the integration branch's version, without conflict markers: \
             keep it with what the task meant, or delete it as the task does.)\n"
        )),
        (false, true) => Some(format!(
            "(A modify/delete conflict: {others} deleted this file, and the task's change \
             changed it. It holds the task's version, without conflict markers: keep it \
             with what the task meant, or delete it as {others} does.)\n"
        )),
        (false, false) => Some(
            "(Neither side has this file under this name: one side renamed or moved it.)\n"
                .to_string(),
        ),
    }
}

/// The handoff instructions of a resolver's prompt.
const INSTRUCTIONS: &str = "## Handoff\n\
When you stop, write a JSON object to the file named by the environment variable \
LOOP_HANDOFF (a file loopc keeps out of the commit):\n\
{\"status\": \"completed\" | \"failed\", \"summary\": \"one line on how you resolved it\", \
\"extra_files\": [], \"cost_usd\": 0.0}\n\
\"extra_files\" lists every file outside the conflicted ones that you changed on purpose \
(paths relative to the repository root); a resolution that changes any other file is \
refused. Deleting a conflicted file that both sides changed drops both changes: list it \
in \"extra_files\" too when that is what you mean, or the resolution is refused. \
Use \"failed\" when the two changes cannot be reconciled: the task is then redone on top of the integration branch.\n";

/// The longest run of backticks in `text`.
fn longest_backticks(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// The end of the resolver's output and its handoff's summary, for the
/// next attempt's feedback.
pub(super) fn output_of(dir: &Path) -> String {
    let mut text = process::tail(&dir.join("agent.stdout"), FEEDBACK_LIMIT / 4);
    text.push_str(&process::tail(
        &dir.join("agent.stderr"),
        FEEDBACK_LIMIT / 4,
    ));
    if let Ok(Some(h)) = handoff::read(&dir.join("handoff.json"))
        && let Some(s) = h.summary.filter(|s| !s.trim().is_empty())
    {
        text.push_str(&format!("\nIts handoff's summary: {s}\n"));
    }
    text
}

/// The next attempt's feedback after a refused resolution.
pub(super) fn feedback(
    conflicts: &[String],
    record: &ResolverRecord,
    f: &Refusal,
    output: &str,
) -> String {
    let by = if record.with.is_empty() {
        String::new()
    } else {
        format!(
            " (by task{} {})",
            if record.with.len() == 1 { "" } else { "s" },
            record
                .with
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut out = format!(
        "Your change conflicted with work merged meanwhile into the integration branch{by}, \
         in these paths:\n{}\nThe resolver `{}` tried to resolve the conflict, and its \
         resolution was not used: {}.\n",
        conflicts.join("\n"),
        record.agent,
        f.reason
    );
    if !f.detail.trim().is_empty() {
        out.push_str(f.detail.trim_end());
        out.push('\n');
    }
    if output.trim().is_empty() {
        out.push_str("The resolver printed nothing.\n");
    } else {
        out.push_str("The resolver's last output:\n");
        out.push_str(output.trim_end());
        out.push('\n');
    }
    out.push_str(
        "The next attempt starts from the new integration branch head; redo the change \
         on top of it.",
    );
    gate::cut_feedback(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_names_the_other_tasks_and_the_output() {
        let record = ResolverRecord {
            agent: "fixer".into(),
            with: vec!["a".into()],
            ..ResolverRecord::default()
        };
        let f = Refusal::new("its resolution leaves conflict markers (x.txt:2)", "");
        let text = feedback(&["x.txt".into()], &record, &f, "I gave up\n");
        assert!(text.contains("(by task `a`)"), "{text}");
        assert!(text.contains("x.txt:2"), "{text}");
        assert!(text.contains("I gave up"), "{text}");
    }
}
