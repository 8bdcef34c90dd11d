//! The scheduler's side of plans that grow ([`crate::run::engine::expand`]):
//! once a producing task's work is on the integration branch, the grown
//! plan replaces the running one. Everything the scheduler keeps per task
//! (state, slots, cache keys, the failure streak, the landings) is indexed
//! by the plan's task order, so it is carried over by name; attempts still
//! running keep the plan they started with and are matched by name when
//! they end.

use super::Scheduler;
use crate::run::engine::expand::{self, Accepted};
use crate::run::engine::outcome::AttemptResult;
use crate::run::store::events::Event;
use crate::state::RunState;
use std::sync::Arc;

/// The file in an attempt's log directory that holds every diagnostic of
/// a plan fragment that did not check (`loopc logs` shows it).
const FRAGMENT_CHECK: &str = "fragment-check.log";

impl Scheduler {
    /// Saves `report`, the diagnostics of the fragment attempt `r` wrote,
    /// in its log directory ([`FRAGMENT_CHECK`]): the reason holds only
    /// the first error, and the last attempt's are no one's feedback.
    pub(super) fn save_fragment_check(&self, r: &AttemptResult, report: &str) {
        if let Some(files) = &r.files
            && let Err(e) = std::fs::write(files.dir.join(FRAGMENT_CHECK), report)
        {
            self.note(&format!(
                "cannot write {}: {e}",
                files.dir.join(FRAGMENT_CHECK).display()
            ));
        }
    }

    /// Splices the accepted fragment of a task that just passed (or was
    /// replayed) into the running plan.
    pub(super) fn splice(&mut self, state: &mut RunState, accepted: Accepted) {
        let old = Arc::clone(&self.ctx);
        let producer_fragment = accepted.describe();
        let commit = accepted.commit.clone();
        let (mut plan, added) = self.growth.splice(&old.plan, accepted);
        let skipped = plan.skip_gates(self.cache.skip_gates());
        let from = expand::old_indices(&old.plan, &plan);
        state.tasks = self.growth.carry(&plan, std::mem::take(&mut state.tasks));
        // A task the fragment adds takes what earlier runs remember of it
        // (its failures, a question): they were carried for it.
        for ts in &mut state.tasks {
            if ts.remembered.is_none()
                && let Some(at) = state.carried.iter().position(|c| c.name == ts.name)
            {
                ts.remembered = state.carried.remove(at).remembered;
            }
        }
        for (task, gates) in skipped {
            if let Some(ts) = state.tasks.iter_mut().find(|t| t.name == task) {
                ts.not_checked_by = gates;
            }
        }
        if let Some(ts) = state
            .tasks
            .iter_mut()
            .find(|t| t.name == producer_fragment.0)
        {
            ts.fragment_commit = Some(commit);
        }
        self.books.slots = expand::reorder(std::mem::take(&mut self.books.slots), &from);
        let to_new = |i: usize| from.iter().position(|&j| j == Some(i));
        self.books.streak = self
            .books
            .streak
            .iter()
            .filter_map(|&i| to_new(i))
            .collect();
        self.landings = std::mem::take(&mut self.landings)
            .into_iter()
            .filter_map(|(i, head)| to_new(i).map(|j| (j, head)))
            .collect();
        self.cache.reorder(&from);
        self.ctx = Arc::new(old.with_plan(plan));
        // A run asked for some tasks adds a fragment's tasks only when one
        // of them waits for the task that wrote it.
        if !added.is_empty() {
            let (task, fragment) = producer_fragment;
            self.ctx.events.emit(Event::Expanded {
                task,
                fragment,
                tasks: added,
            });
        }
        self.save(state);
    }
}
