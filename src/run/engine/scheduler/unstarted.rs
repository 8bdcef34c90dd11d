//! The last word on a run that ends with tasks nobody started: every task
//! of a run that ends has run, or says why it did not. A stop (a budget,
//! an interrupt, a failed task with `on_fail = fail`, a moved branch) says
//! why for the run; a failed, blocked or skipped dependency says why for
//! each task it held back. A task still `pending` with neither was left
//! out by loopc itself: it is named, given a reason, and the run fails
//! saying so rather than ending in silence.

use super::Scheduler;
use crate::state::{RunState, TaskStatus};

impl Scheduler {
    /// For a run that ends without a stop: marks every `pending` task with
    /// why it never started and returns the run's reason (`None` when no
    /// task is left pending).
    pub(super) fn unstarted(&mut self, state: &mut RunState) -> Option<String> {
        let left: Vec<String> = state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending)
            .map(|t| t.name.clone())
            .collect();
        if left.is_empty() {
            return None;
        }
        let why = "loopc ended the run without starting it, though nothing stopped the run \
                   (a bug in loopc); run again to run it";
        for t in &mut state.tasks {
            if t.status == TaskStatus::Pending && t.reason.is_none() {
                t.reason = Some(why.to_string());
            }
        }
        let reason = format!(
            "{} task(s) never started, though nothing stopped the run (a bug in loopc): {}",
            left.len(),
            left.join(", ")
        );
        self.note(&reason);
        Some(reason)
    }
}
