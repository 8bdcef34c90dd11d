//! A replay of a task's cache entry, as the transition sees it (step 1):
//! on success the task is `cached` at the new head; on a miss it runs.

use super::{Action, Books, StopKind, finalize};
use crate::plan::Plan;
use crate::run::engine::budget::Cost;
use crate::run::store::events::Event;
use crate::state::{RunState, TaskStatus};

/// A replay of task `i`'s cache entry ended, as the transition sees it.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The task's index.
    pub task: usize,
    /// Its run-time key (hex).
    pub key: String,
    /// How the replay went.
    pub result: crate::run::engine::land::replay::Replay,
    /// The entry's summary.
    pub summary: Option<String>,
    /// The entry's changed paths.
    pub files: Vec<String>,
    /// What agent gates run on the replay cost.
    pub cost: Cost,
    /// Milliseconds it took.
    pub elapsed_ms: u64,
    /// When it ended, in milliseconds from the run's start.
    pub ended_ms: u64,
    /// Whether a check it ran was stopped by the `time` budget (not by
    /// Ctrl-C or SIGTERM): the run stops for the budget.
    pub by_deadline: bool,
    /// Now (RFC 3339).
    pub now: String,
}

/// Task `i`'s cache entry was replayed (step 1): on success the task is
/// `cached` at the new head; on a miss it will run. Agent gates run on a
/// replay are paid for like merge checks; an unknown cost under a cost
/// budget counts the agent's cap, or stops the run (never zero).
pub fn replayed(plan: &Plan, state: &mut RunState, books: &mut Books, r: Replayed) -> Vec<Action> {
    use crate::run::engine::land::replay::Replay;
    let i = r.task;
    let task = &plan.tasks[i];
    let mut out = Vec::new();
    books.charge(state, i, &r.cost, Some(r.elapsed_ms), r.ended_ms, |name| {
        format!(
            "the cost of agent `{name}`, gating the replay of task `{}`, could not be \
             read and it has no `cost` cap; a cost budget is set, so the run stops",
            task.name
        )
    });
    match r.result {
        Replay::Done { commit, how } => {
            out.push(Action::Emit(Event::Cached {
                task: task.name.clone(),
                key: r.key.clone(),
                commit: commit.clone(),
                how: how.to_string(),
            }));
            let ts = &mut state.tasks[i];
            ts.cache_key = Some(r.key);
            ts.summary = r.summary.clone();
            ts.commit = Some(commit);
            ts.reason = None;
            if ts.started_at.is_none() {
                ts.started_at = Some(r.now.clone());
            }
            out.push(Action::Progress {
                title: task.title.clone().unwrap_or_else(|| task.name.clone()),
                summary: r.summary,
                files: r.files,
            });
            out.push(Action::RememberChecks);
            finalize(plan, state, i, TaskStatus::Cached, None, &r.now, &mut out);
        }
        Replay::Miss(reason) => out.push(Action::Emit(Event::CacheMiss {
            task: task.name.clone(),
            key: r.key,
            reason,
        })),
        Replay::Stopped => match books.meter.time_spent() {
            Some((at, why)) if r.by_deadline => books.set_budget_stop(at, why),
            _ => books.set_stop(StopKind::Interrupted, crate::run::sys::interrupt::reason()),
        },
    }
    out
}
