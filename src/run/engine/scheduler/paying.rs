//! What the coordinator looks at before it pays for a task's attempt: the
//! failures the task left under its key in earlier runs (docs/resilience.md
//! "Failures are remembered") and whether the `cost` budget left covers
//! the attempt at its agent's per-attempt cap.

use super::merged::Ended;
use super::{Scheduler, now_rfc3339, transition};
use crate::run::engine::budget::Cover;
use crate::state::RunState;
use std::sync::Arc;

impl Scheduler {
    /// Looks at the failures task `i` left under its key in earlier runs
    /// ([`transition::resume`]). Returns true when it is not run.
    pub(super) fn resume(&mut self, state: &mut RunState, i: usize) -> bool {
        let ctx = Arc::clone(&self.ctx);
        let task = &ctx.plan.tasks[i];
        let key = self
            .cache
            .key(&ctx, i, &self.head)
            .map(|k| transition::remembered_key(task, &k));
        let retry = self.cache.retries(i, &ctx.plan.tasks[i].name);
        let now = now_rfc3339();
        let actions = transition::resume(&ctx.plan, state, &mut self.books, i, key, retry, &now);
        let not_run = !actions.is_empty();
        self.apply(state, i, actions, Ended::Nothing);
        not_run
    }

    /// Whether the `cost` budget covers task `i`'s next attempt at its
    /// agent's per-attempt cap, besides the caps of the attempts running
    /// ([`Cover`]); with the cap to hold for it when it starts.
    pub(super) fn covered(&self, i: usize) -> (Cover, u64) {
        let agent = self
            .agent_for(i)
            .or_else(|| match &self.ctx.plan.tasks[i].kind {
                crate::plan::TaskKind::Agent { agent, .. } => Some(Arc::clone(agent)),
                crate::plan::TaskKind::Command { .. } => None,
            });
        match agent {
            Some(a) => (self.books.meter.cover(&a.name, a.cost), a.cost.unwrap_or(0)),
            None => (Cover::Yes, 0),
        }
    }
}
