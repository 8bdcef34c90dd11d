//! Re-planning (docs/language.md "Re-planning"): a plan fragment's task
//! that failed with `on_fail = replan` (its own, or its producer's for
//! every task the fragment writes) sends the task that wrote the fragment
//! back to work. The producer runs again with the failure as its feedback
//! and writes a new fragment; the failed task waits for it (it depends on
//! the producer) and, if the new fragment still has it, starts its
//! attempts afresh. A producer re-plans at most its `replans` times in a
//! run; then the failure stands.

use super::{Action, Books, End};
use crate::plan::{OnFail, Plan};
use crate::run::store::events::Event;
use crate::state::{ReplanRecord, RunState, TaskStatus};

/// The producer of task `i`'s plan fragment, if a fragment added it.
fn producer(plan: &Plan, i: usize) -> Option<usize> {
    plan.tasks[i]
        .expanded_from
        .as_deref()
        .and_then(|p| plan.task_index(p))
}

/// Whether task `i`, out of attempts, asks to be re-planned: its own
/// `on_fail = replan`, or, when it has no `on_fail`, its producer's.
pub(super) fn wanted(plan: &Plan, i: usize) -> bool {
    match plan.tasks[i].on_fail {
        Some(on_fail) => on_fail == OnFail::Replan,
        None => producer(plan, i).is_some_and(|p| plan.tasks[p].on_fail == Some(OnFail::Replan)),
    }
}

/// Why a task that wanted a re-plan still failed, for its reason: no
/// producer, or its producer's `replans` are spent. `None` when it did
/// not want one.
pub(super) fn refused(plan: &Plan, state: &RunState, i: usize) -> Option<String> {
    let p = producer(plan, i)?;
    let done = state.tasks[p].replans.len();
    Some(format!(
        "; `{}` re-planned it {done} time(s), its `replans` allow {}",
        plan.tasks[p].name, plan.tasks[p].replans
    ))
}

/// Task `at.i` failed for `reason` and asks for a re-plan: when a fragment
/// added it and its producer has a re-plan left, the producer goes back to
/// pending with fresh attempts and the failure (`reason` and the task's
/// last `feedback`, its gates' output) as its feedback, the failed task
/// waits for the new fragment, and a `replanned` event is emitted.
/// Returns whether the re-plan started; else the caller fails the task.
pub(super) fn start(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    at: &End,
    reason: &str,
    out: &mut Vec<Action>,
) -> bool {
    let i = at.i;
    let Some(p) = producer(plan, i) else {
        return false;
    };
    let (producer_task, task) = (&plan.tasks[p], &plan.tasks[i]);
    let done = state.tasks[p].replans.len() as u32;
    if done >= producer_task.replans || !state.tasks[p].status.is_done() {
        return false;
    }
    state.tasks[p].replans.push(ReplanRecord {
        task: task.name.clone(),
        reason: reason.to_string(),
        at: at.now.clone(),
    });
    let feedback = feedback(plan, p, i, reason, &books.slots[i].feedback);
    let ps = &mut state.tasks[p];
    ps.status = TaskStatus::Pending;
    books.reopened = Some(books.reopened.map_or(p, |r| r.min(p)));
    ps.reason = Some(format!("re-planning: task `{}` failed", task.name));
    ps.finished_at = None;
    books.slots[p].attempt_base = ps.attempts;
    books.slots[p].feedback = crate::run::engine::attempt::gate::cut_feedback(feedback);
    let ts = &mut state.tasks[i];
    ts.status = TaskStatus::Pending;
    ts.reason = Some(format!(
        "waiting for `{}` to re-plan it: {reason}",
        producer_task.name
    ));
    ts.replanned_by = Some(producer_task.name.clone());
    // Its failures were the old plan's: a later run does not hold them
    // against the re-planned task.
    ts.remembered = None;
    books.slots[i].attempt_base = ts.attempts;
    books.slots[i].feedback.clear();
    books.task_ended_failing(i);
    out.push(Action::Emit(Event::Replanned {
        task: producer_task.name.clone(),
        failed: task.name.clone(),
        replan: done + 1,
        replans: producer_task.replans,
        reason: reason.to_string(),
    }));
    true
}

/// The feedback the producer `p` re-plans with: which of its fragment's
/// tasks failed (`i`), why, and that task's last feedback.
fn feedback(plan: &Plan, p: usize, i: usize, reason: &str, last: &str) -> String {
    let (producer, task) = (&plan.tasks[p], &plan.tasks[i]);
    let fragment = producer.expands.as_deref().unwrap_or("the plan fragment");
    let bare = task
        .name
        .strip_prefix(&format!("{}.", producer.name))
        .unwrap_or(&task.name);
    let mut text = format!(
        "## Re-planning\n\
         Task `{bare}` (`{}`) of the plan fragment `{fragment}` this task wrote failed: \
         {reason}\n\
         Re-plan the work: write `{fragment}` again so that it gets done another way (split \
         the task, change its prompt, its order or its checks). Tasks of the fragment that \
         passed keep their work; a task of the new fragment with the name of the failed one \
         starts its attempts afresh.\n",
        task.name
    );
    if !last.trim().is_empty() {
        text.push_str("\nThe failed task's last feedback (its checks' and gates' output):\n");
        text.push_str(last.trim_end());
        text.push('\n');
    }
    text
}
