//! Failures remembered across runs (docs/resilience.md "Failures are
//! remembered"): per task and run-time key, the attempts spent and the
//! last failure's feedback live in state.json (`remembered`), so a rerun
//! resumes a task at its next attempt with that feedback, and does not pay
//! again for a task that ran out of attempts under an unchanged key, nor
//! for a question not answered yet, unless `--retry-failed` says so.

use super::{Action, Books, finalize};
use crate::plan::Plan;
pub use crate::run::engine::remember::{RetryFailed, remembered_key};
use crate::state::{Remembered, RunState, TaskState, TaskStatus};

/// Copies every task's `remembered` from the last run's state (its tasks
/// and those it carried): kept from run to run until the task passes or
/// its key changes. Tasks this run does not include are carried
/// ([`RunState::carried`]) with what they remember or wait for.
pub fn carry_remembered(previous: &RunState, state: &mut RunState) {
    let mut previous = previous.tasks_by_name();
    for ts in &mut state.tasks {
        if let Some(old) = previous.remove(ts.name.as_str()) {
            ts.remembered.clone_from(&old.remembered);
        }
    }
    // Those this run does not include keep what they remember for the run
    // that does (another plan file's run, a run of some tasks).
    let mut rest: Vec<TaskState> = previous
        .into_values()
        .filter(|t| t.remembered.is_some() || t.waiting_until.is_some())
        .cloned()
        .collect();
    rest.sort_by(|a, b| a.name.cmp(&b.name));
    state.carried = rest;
}

/// How [`not_run_reason`] starts: a dependent says its dependency `is not
/// run`, as `--dry-run` does.
pub const NOT_RUN: &str = "not run:";

/// The reason of a task not run because it ran out of attempts under its
/// key in an earlier run (`r`), of `max` attempts.
pub fn not_run_reason(task: &str, r: &Remembered, max: u32) -> String {
    let mut why = format!(
        "{NOT_RUN} ran out of attempts ({} of {max}) with this key; \
         `loopc run --retry-failed {task}` to run it",
        r.attempts
    );
    if let Some(last) = &r.reason {
        why.push_str(&format!(" (its last failure: {last})"));
    }
    why
}

/// Task `i` is about to start its first attempt of the run, its
/// [`remembered_key`] `key` (`None`: not computed). With failures remembered under
/// that key: one that ran out of attempts ends `failed` without running
/// (the actions announce it) unless `retry` (`--retry-failed` names it:
/// it starts over at attempt 1, told the last feedback); else it resumes
/// at its next attempt with the last feedback. Failures under another key
/// are forgotten. Returns the actions of a task that is not run (empty:
/// it runs).
pub fn resume(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    i: usize,
    key: Option<String>,
    retry: bool,
    now: &str,
) -> Vec<Action> {
    let task = &plan.tasks[i];
    let slot = &mut books.slots[i];
    slot.resume_checked = true;
    slot.key.clone_from(&key);
    let ts = &mut state.tasks[i];
    let Some(r) = ts.remembered.clone() else {
        return Vec::new();
    };
    if key.as_deref() != Some(r.key.as_str()) {
        ts.remembered = None;
        return Vec::new();
    }
    if let Some(feedback) = &r.feedback {
        slot.feedback.clone_from(feedback);
    }
    if retry {
        return Vec::new();
    }
    // Its question is still unanswered (an answer would have changed the
    // key): asking the agent again would pay for the same question.
    if let Some(question) = &r.question {
        let mut out = Vec::new();
        let why = format!(
            "{} (asked in an earlier run; no agent ran: answer it with `loopc answer {} \"…\"`, \
             or `loopc run --retry-failed {}` to ask again)",
            super::reasons::needs_human_reason(question),
            task.name,
            task.name
        );
        state.tasks[i].question = Some(question.clone());
        state.tasks[i].attempts = r.attempts;
        state.tasks[i].earlier_attempts = r.attempts;
        finalize(
            plan,
            state,
            i,
            TaskStatus::NeedsHuman,
            Some(why),
            now,
            &mut out,
        );
        return out;
    }
    if r.blocked {
        let mut why = format!(
            "{NOT_RUN} blocked with this key in an earlier run; `loopc run --retry-failed {}` \
             to run it",
            task.name
        );
        if let Some(last) = &r.reason {
            why.push_str(&format!(" (why: {last})"));
        }
        state.tasks[i].attempts = r.attempts;
        state.tasks[i].earlier_attempts = r.attempts;
        return super::held(plan, state, i, why, now);
    }
    // Its last attempt's work conflicted with work merged meanwhile: one
    // more attempt, from the new head.
    if r.attempts >= task.attempts && crate::run::engine::remember::conflicted(&r) {
        let left = task.attempts.saturating_sub(1);
        ts.attempts = left;
        ts.earlier_attempts = left;
        return Vec::new();
    }
    if r.attempts >= task.attempts {
        let mut out = Vec::new();
        let why = not_run_reason(&task.name, &r, task.attempts);
        let status = match &r.branch {
            Some(branch) => {
                state.tasks[i].branch = Some(branch.clone());
                TaskStatus::CompletedUnreviewed
            }
            None => TaskStatus::Failed,
        };
        // Its attempts are those earlier runs spent (status shows `2 (2
        // earlier)`, not 0 beside "ran out of attempts").
        state.tasks[i].attempts = r.attempts;
        state.tasks[i].earlier_attempts = r.attempts;
        finalize(plan, state, i, status, Some(why), now, &mut out);
        return out;
    }
    ts.attempts = r.attempts;
    ts.earlier_attempts = r.attempts;
    Vec::new()
}

/// Records task `i`'s attempts so far under its key (when known), with
/// the feedback its next attempt gets and `reason`, the failure's (`None`:
/// the attempt counted without failing, e.g. stopped by the `time`
/// budget; the last failure's are kept).
pub(super) fn remember(state: &mut RunState, books: &Books, i: usize, reason: Option<&str>) {
    let Some(key) = books.slots[i].key.clone() else {
        return;
    };
    let ts = &mut state.tasks[i];
    let earlier = ts.remembered.take().filter(|r| r.key == key);
    let feedback = books.slots[i].feedback.clone();
    let (feedback, reason) = match reason {
        Some(reason) => (
            (!feedback.is_empty()).then_some(feedback),
            Some(reason.to_string()),
        ),
        None => earlier
            .map(|r| (r.feedback, r.reason))
            .unwrap_or((None, None)),
    };
    ts.remembered = Some(Remembered {
        key,
        attempts: ts.attempts,
        feedback,
        reason,
        branch: None,
        question: None,
        blocked: false,
    });
}

/// Task `i` ended `blocked` for `why` (a gate's `on_fail = block`, or its
/// handoff): remembered so, with its attempts, under its key.
pub(super) fn remember_blocked(state: &mut RunState, books: &Books, i: usize, why: &str) {
    remember(state, books, i, Some(why));
    if let Some(r) = &mut state.tasks[i].remembered {
        r.blocked = true;
    }
}
