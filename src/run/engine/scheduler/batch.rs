//! Passed results that wait together, merged in one pass (docs/running.md
//! step 7, "Results that wait together"): when the coordinating thread
//! takes a result with nothing to run on its merge, every result waiting
//! behind it that has nothing either joins it. They are merged one onto
//! the other ([`chain::chain`]), and one `git update-ref --stdin`
//! transaction moves the integration branch from the head to the last
//! merge with every merged task's cache entry. Then each is handled as if
//! merged alone, in order: its `merged` event, its transition, the head its
//! own merge made recorded as its commit. Anything else (a check or a
//! resolver on the merge, a plan fragment, a spec tree, git failing, the
//! branch moved) goes the one-at-a-time way.

use super::landing::prepare_entry;
use super::{Arrived, PickedUp, Scheduler};
use crate::run::engine::attempt::gate;
use crate::run::engine::land::chain::{self, Item, Step};
use crate::run::engine::land::merge;
use crate::run::engine::land::replay::Prepared;
use crate::run::engine::outcome::{AttemptResult, Outcome, stopping};
use crate::run::store::events::Event;
use crate::run::sys::transaction::RefMove;
use crate::state::RunState;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

impl Scheduler {
    /// The next finished attempt: one taken off the channel before, else
    /// the channel's next within 100 ms.
    pub(super) fn next_result(
        &mut self,
        rx: &mpsc::Receiver<Arrived>,
    ) -> Result<Arrived, mpsc::RecvTimeoutError> {
        if let Some(a) = self.queued.pop_front() {
            return Ok(a);
        }
        let a = rx.recv_timeout(Duration::from_millis(100))?;
        self.running -= 1;
        Ok(a)
    }

    /// Handles finished attempt `first`, with every attempt waiting behind
    /// it on `rx` that can be merged in the same pass ([`batchable`]).
    pub(super) fn finished_next(
        &mut self,
        state: &mut RunState,
        first: Arrived,
        rx: &mpsc::Receiver<Arrived>,
    ) {
        let (mut r, ended, name) = first;
        self.locate(&mut r, &name);
        if !self.batchable(&r) {
            self.finished(state, r, ended);
            return;
        }
        for a in rx.try_iter() {
            self.running -= 1;
            self.queued.push_back(a);
        }
        let mut batch = vec![(r, ended)];
        while let Some((mut next, at, name)) = self.queued.pop_front() {
            self.locate(&mut next, &name);
            if !self.batchable(&next) {
                self.queued.push_front((next, at, name));
                break;
            }
            batch.push((next, at));
        }
        if batch.len() == 1 {
            let (r, ended) = batch.remove(0);
            self.finished(state, r, ended);
        } else {
            self.finished_together(state, batch);
        }
    }

    /// Points `r` at its task `name`'s index in the plan as it is now.
    fn locate(&self, r: &mut AttemptResult, name: &str) {
        let tasks = &self.ctx.plan.tasks;
        // Where it was unless a fragment grew the plan meanwhile: no search.
        if tasks.get(r.input.task).is_some_and(|t| t.name == name) {
            return;
        }
        if let Some(i) = self.ctx.plan.task_index(name) {
            r.input.task = i;
        }
    }

    /// Whether attempt `r` can be merged with others in one pass: it
    /// passed with a change, saw no ref change, and nothing runs on its
    /// merge result (no check of its own or of a task merged before, no
    /// resolver: as for the merge without a ref snapshot), nor after it
    /// (no plan fragment, no spec tree), and the run is not stopping.
    fn batchable(&self, r: &AttemptResult) -> bool {
        let task = &self.ctx.plan.tasks[r.input.task];
        let changed =
            matches!(&r.outcome, Outcome::Passed { commit, .. } if *commit != r.input.base);
        changed
            && r.ref_changes.is_empty()
            && !r.already_satisfied
            && task.resolver.is_none()
            && task.expands.is_none()
            && gate::rechecks_of(task).is_empty()
            && self.merged_checks.is_empty()
            && self.ctx.plan.pipeline.is_none()
            && self.books.stop.is_none()
            && !self.defer_ref
            && !stopping(&self.ctx.control)
    }

    /// Merges the passed attempts of `batch` in one pass and one ref
    /// transaction, then applies each one's transition in order; when any
    /// of that cannot be done, each is handled alone.
    fn finished_together(
        &mut self,
        state: &mut RunState,
        mut batch: Vec<(AttemptResult, Instant)>,
    ) {
        let picked_up = Instant::now();
        let pres: Vec<PickedUp> = batch
            .iter_mut()
            .map(|(r, _)| self.pick_up(state, r))
            .collect();
        let landed = if batch.iter().all(|(r, _)| self.batchable(r)) {
            self.land_together(state, &batch)
        } else {
            None
        };
        let Some(steps) = landed else {
            for ((mut r, ended), mut pre) in batch.into_iter().zip(pres) {
                pre.merge_base = self.head.clone();
                let outcome = match r.outcome.clone() {
                    Outcome::Passed { commit, .. } => self.land_pass(state, &mut r, &commit),
                    other => other,
                };
                self.conclude(state, r, (ended, picked_up), pre, outcome);
            }
            return;
        };
        let ctx = Arc::clone(&self.ctx);
        for (((mut r, ended), mut pre), (step, prepared)) in batch.into_iter().zip(pres).zip(steps)
        {
            let i = r.input.task;
            let outcome = match step {
                Step::Landed {
                    head, before, how, ..
                } => {
                    self.landings.push((i, head.clone()));
                    self.head = head.clone();
                    pre.merge_base = before;
                    ctx.events.emit(Event::Merged {
                        task: ctx.plan.tasks[i].name.clone(),
                        commit: head,
                        how: how.to_string(),
                    });
                    self.prepared = prepared;
                    r.outcome.clone()
                }
                Step::Conflict(paths) => {
                    pre.merge_base = self.head.clone();
                    merge::conflicted(paths, &mut r)
                }
            };
            self.conclude(state, r, (ended, picked_up), pre, outcome);
        }
    }

    /// Merges `batch` onto the head ([`chain::chain`]), writes each merged
    /// task's cache entry, and moves the branch to the last merge with
    /// every entry in one transaction. The steps, one a result, with the
    /// entries noted when each one's transition records its pass; `None`
    /// when nothing moved (git failed, the run is stopping, the branch
    /// moved under loopc): each is then merged alone.
    fn land_together(
        &mut self,
        state: &RunState,
        batch: &[(AttemptResult, Instant)],
    ) -> Option<Vec<(Step, Option<Prepared>)>> {
        let ctx = Arc::clone(&self.ctx);
        let items: Vec<Item<'_>> = batch
            .iter()
            .map(|(r, _)| Item {
                task: &ctx.plan.tasks[r.input.task],
                attempt: r.input.attempt,
                commit: match &r.outcome {
                    Outcome::Passed { commit, .. } => commit,
                    _ => &r.input.base,
                },
                base: &r.input.base,
                work: r.work.as_ref(),
            })
            .collect();
        let steps = chain::chain(&ctx, &self.head, &items).ok()?;
        let mut moves: Vec<RefMove> = Vec::new();
        let mut out = Vec::with_capacity(steps.len());
        for ((r, _), step) in batch.iter().zip(steps) {
            let i = r.input.task;
            let prepared = match &step {
                Step::Landed {
                    head,
                    before,
                    changes,
                    ..
                } => {
                    let landing = merge::Landing {
                        head,
                        before,
                        changes: Some(changes.clone()),
                        cost: r.cost.clone(),
                    };
                    let ts = &state.tasks[i];
                    prepare_entry(
                        &ctx,
                        &mut self.cache,
                        ts,
                        (i, &r.input.base, &r.outcome),
                        landing,
                    )
                }
                Step::Conflict(_) => None,
            };
            moves.extend(prepared.as_ref().and_then(|p| p.ref_move().cloned()));
            out.push((step, prepared));
        }
        let last = out.iter().rev().find_map(|(s, _)| match s {
            Step::Landed { head, .. } => Some(head.clone()),
            Step::Conflict(_) => None,
        });
        if let Some(last) = last {
            let branch = RefMove {
                name: ctx.integration_ref.clone(),
                new: last,
                old: Some(self.head.clone()),
            };
            moves.insert(0, branch);
            if ctx.git.move_refs(&moves) != Ok(true) {
                return None;
            }
        }
        Some(out)
    }
}
