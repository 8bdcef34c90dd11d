//! The scheduler's side of the guard on the user's refs
//! ([`crate::run::engine::guard`]): an attempt that saw refs that are not
//! loopc's change is judged here, and changes no attempt saw are warned
//! about at the end of the run.

use crate::plan::OnFail;
use crate::run::engine::context::RunCtx;
use crate::run::engine::guard::{RefChange, Snapshot, checkout_commit, diff, snapshot};
use crate::run::engine::outcome::{AttemptResult, Outcome};
use crate::state::{RunState, TaskStatus};

/// Ref changes already charged to an attempt: `(name, new value)`.
pub type Attributed = Vec<(String, Option<String>)>;

/// Judges attempt `r`, which saw refs that are not loopc's change while it
/// ran: warns (display, `state.warnings`, naming the tasks that ran at the
/// same time, since parallel attempts share the refs), records the changes
/// in `attributed`, and returns the outcome to judge it by: a failed attempt
/// with feedback naming each ref and its old and new value, unless it was
/// blocked or interrupted anyway.
pub fn judge(
    ctx: &RunCtx,
    state: &mut RunState,
    r: &AttemptResult,
    outcome: Outcome,
    attributed: &mut Attributed,
) -> Outcome {
    let task = &ctx.plan.tasks[r.input.task];
    let lines: Vec<String> = r.ref_changes.iter().map(RefChange::describe).collect();
    let others: Vec<String> = state
        .tasks
        .iter()
        .enumerate()
        .filter(|(j, t)| *j != r.input.task && t.status == TaskStatus::Running)
        .map(|(_, t)| format!("`{}`", t.name))
        .collect();
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(
            " (task(s) {} were running at the same time)",
            others.join(", ")
        )
    };
    // What ran: the attempt, or (at its merge) its resolver or merge gates.
    let of = |whose: &str| match &r.refs_during {
        Some(d) => format!("{d} of {whose}"),
        None => whose.to_string(),
    };
    for (c, line) in r.ref_changes.iter().zip(&lines) {
        attributed.push((c.name.clone(), c.new.clone()));
        let back = c
            .restore()
            .map(|cmd| format!(" (to put it back: {cmd})"))
            .unwrap_or_default();
        let w = format!(
            "while {} ran{also}, {line}; loopc did not change it back{back}",
            of(&format!("task `{}` attempt {}", task.name, r.input.attempt))
        );
        ctx.events.ui().warn(&w);
        state.warnings.push(w);
    }
    match outcome {
        Outcome::Passed { .. } | Outcome::Failed { .. } | Outcome::Infrastructure(_) => {
            let first = lines.first().cloned().unwrap_or_default();
            let more = if lines.len() > 1 {
                format!(" (and {} more)", lines.len() - 1)
            } else {
                String::new()
            };
            Outcome::Failed {
                reason: format!("refs that are not loopc's changed: {first}{more}"),
                feedback: format!(
                    "While {} ran, refs of the repository that are not \
                     the task's changed{also}:\n{}\nloopc did not change them back. Do not \
                     create, move or delete branches or tags, switch the checkout, or use \
                     `git stash`: work only in your worktree, on its task branch.",
                    of("the previous attempt"),
                    lines.join("\n")
                ),
                on_fail: OnFail::Retry,
            }
        }
        other => other,
    }
}

/// Warns (in `state.warnings`) about refs that are not loopc's and changed
/// between `start` (the run's start) and now without an attempt having seen
/// it (the person, or another program). Says nothing when the refs cannot
/// be read.
pub fn unattributed(ctx: &RunCtx, start: &Snapshot, attributed: &Attributed, state: &mut RunState) {
    let Ok(now) = snapshot(&ctx.git, &ctx.integration_ref, &ctx.layout.worktrees) else {
        return;
    };
    for c in diff(start, &now) {
        if attributed
            .iter()
            .any(|(name, new)| *name == c.name && *new == c.new)
        {
            continue;
        }
        if let Some(path) = checkout_commit(&ctx.git, &c, start, &now) {
            let branch = c.name.strip_prefix("refs/heads/").unwrap_or(&c.name);
            state.warnings.push(format!(
                "during the run, `{branch}` (checked out at {path}) moved forward: {}; taken \
                 as your own commit, it failed no attempt",
                c.describe()
            ));
            continue;
        }
        state.warnings.push(format!(
            "during the run (not while an attempt of loopc's ran: by you, or another \
             program?), {}",
            c.describe()
        ));
    }
}
