//! The scheduler's part of a REEL spec tree's pipeline (`docs/reel.md`,
//! "Spec trees"): tasks held back at the start (they depend on a spec in
//! an earlier stage this run does not work), moving each spec whose tasks
//! have all passed to its next stage ([`advance`]) right after its last
//! merge or replay, and saying at the end which specs stay and why.

use super::Scheduler;
use crate::run::engine::land::advance::{self, Advance};
use crate::run::engine::scheduler::transition::{self, StopKind};
use crate::run::store::events::Event;
use crate::run::time::now_rfc3339;
use crate::state::{RunState, SpecStatus};
use std::sync::Arc;

impl Scheduler {
    /// Ends the plan's held tasks `blocked` (and skips their dependents)
    /// before anything starts.
    pub(super) fn hold(&mut self, state: &mut RunState) {
        let ctx = Arc::clone(&self.ctx);
        let Some(pipeline) = ctx.plan.pipeline.as_ref() else {
            return;
        };
        for (i, why) in &pipeline.held {
            let actions = transition::held(&ctx.plan, state, *i, why.clone(), &now_rfc3339());
            self.apply(state, *i, actions, super::Ended::Nothing);
        }
    }

    /// Moves every spec whose tasks are all done (passed or replayed) and
    /// that has not moved yet to its next stage, one commit each, on the
    /// integration branch as it is now. Called on the coordinating thread
    /// whenever a task's work has landed, never while replays defer the
    /// branch's move.
    pub(super) fn advance_specs(&mut self, state: &mut RunState) {
        let ctx = Arc::clone(&self.ctx);
        let Some(pipeline) = ctx.plan.pipeline.as_ref() else {
            return;
        };
        for (k, spec) in pipeline.specs.iter().enumerate() {
            if matches!(
                self.books.stop_kind(),
                Some(StopKind::Interrupted | StopKind::BranchMoved)
            ) || self.defer_ref
            {
                return;
            }
            let Some(&last) = spec.tasks.last() else {
                continue;
            };
            if state
                .specs
                .get(k)
                .is_none_or(|s| s.status != SpecStatus::Pending)
                || !spec.tasks.iter().all(|&t| state.tasks[t].status.is_done())
            {
                continue;
            }
            match advance::advance(
                &ctx,
                spec,
                last,
                &self.head,
                &self.merged_checks,
                &self.owners,
            ) {
                Advance::Moved { commit } => {
                    self.head = commit.clone();
                    let s = &mut state.specs[k];
                    s.status = SpecStatus::Advanced;
                    s.commit = Some(commit.clone());
                    ctx.events.emit(Event::SpecAdvanced {
                        spec: s.file.clone(),
                        from: s.stage.clone(),
                        to: s.to.clone().unwrap_or_default(),
                        commit,
                    });
                }
                Advance::Stayed(why) => {
                    // In the last stage a spec has nowhere to go: that is
                    // no failure. Any other move that could not be made is.
                    if spec.next_stage().is_some() {
                        self.advance_failed = true;
                    }
                    self.stay(state, k, why);
                }
                Advance::Stopped => {
                    // The move's checks were killed: by a signal, the run
                    // is interrupted (else a budget or stop already is).
                    self.take_interrupt();
                    return;
                }
                Advance::BranchMoved(why) => {
                    self.advance_failed = true;
                    self.stay(state, k, why);
                    self.check_integration();
                }
            }
            self.save(state);
        }
    }

    /// Turns a Ctrl-C or SIGTERM that arrived into the run's stop (once),
    /// and stops every subprocess of the run.
    pub(super) fn take_interrupt(&mut self) {
        if crate::run::sys::interrupt::requested()
            && self.books.stop_kind() != Some(StopKind::Interrupted)
        {
            self.set_stop(StopKind::Interrupted, crate::run::sys::interrupt::reason());
            self.ctx.control.stop();
        }
    }

    /// At the end of the run: every spec that has not moved stays, with
    /// the first of its tasks that did not pass as the reason.
    pub(super) fn settle_specs(&mut self, state: &mut RunState) {
        let ctx = Arc::clone(&self.ctx);
        let Some(pipeline) = ctx.plan.pipeline.as_ref() else {
            return;
        };
        for (k, spec) in pipeline.specs.iter().enumerate() {
            if state
                .specs
                .get(k)
                .is_none_or(|s| s.status != SpecStatus::Pending)
            {
                continue;
            }
            let why = match spec
                .tasks
                .iter()
                .find(|&&t| !state.tasks[t].status.is_done())
            {
                Some(&t) => format!(
                    "not every task of it passed: `{}` is {}",
                    state.tasks[t].name,
                    state.tasks[t].status.as_str()
                ),
                None if spec.tasks.is_empty() => "it has no tasks".to_string(),
                None => "the run stopped before it was moved".to_string(),
            };
            self.stay(state, k, why);
        }
    }

    /// Records that spec `k` stays in its stage because of `why`.
    fn stay(&mut self, state: &mut RunState, k: usize, why: String) {
        let s = &mut state.specs[k];
        s.status = SpecStatus::Stayed;
        s.reason = Some(why.clone());
        self.ctx.events.emit(Event::SpecStayed {
            spec: s.file.clone(),
            stage: s.stage.clone(),
            reason: why,
        });
    }
}
