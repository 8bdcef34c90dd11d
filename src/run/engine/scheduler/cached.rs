//! The scheduler's use of the cache (docs/running.md step 1): looking a ready task
//! up, replaying hits (fast-forwards first, then the others in the order
//! their entries were recorded, so a rerun follows the order an earlier run
//! merged in) and applying [`transition::replayed`]; an answerer's answer
//! joining a task's key. The
//! replays themselves are [`crate::run::engine::land::replay`]'s.

use super::Scheduler;
use crate::run::engine::budget::Cost;
use crate::run::engine::cache::{Entry, RunKey};
use crate::run::engine::land::replay::Replay;
use crate::run::engine::run_entry::RunEntry;
use crate::run::engine::scheduler::transition::{self, Replayed, StopKind};
use crate::run::sys::interrupt;
use crate::run::time::now_rfc3339;
use crate::state::RunState;
use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

impl Scheduler {
    /// When attempt `r`'s answerer answered its question: the cache keys
    /// the task's later pass with the answer, as the next run's key holds
    /// it ([`crate::run::engine::land::replay::RunCache::answers_changed`]).
    pub(super) fn answers_changed(&mut self, r: &crate::run::engine::outcome::AttemptResult) {
        if !r.answerer.as_ref().is_some_and(|a| a.answered) {
            return;
        }
        let name = self.ctx.plan.tasks[r.input.task].name.clone();
        match crate::run::store::answers::digest(&self.ctx.layout, &name) {
            Ok(d) => self.cache.answers_changed(&name, d),
            Err(e) => self.note(&e),
        }
    }

    /// Takes the result of the run entry `hit` ([`run_entry::lookup`]):
    /// every task is `cached` as the recorded run replayed it, the head
    /// the recorded one (the integration branch was moved to it once,
    /// before the scheduler started), with no lookup or git call per task.
    pub(super) fn replay_whole(&mut self, state: &mut RunState, hit: RunEntry) {
        // Every task's lines in a few writes, not three writes a task.
        self.ctx.events.hold();
        self.progress.hold();
        for (i, r) in hit.tasks.into_iter().enumerate() {
            let before = self.head.clone();
            let how = if r.how == "none" {
                "none"
            } else {
                "fast_forward"
            };
            self.cache.know_replay(i, r.clone());
            let replayed = Replayed {
                task: i,
                key: r.key,
                result: Replay::Done {
                    commit: r.commit.clone(),
                    how,
                },
                summary: r.summary,
                files: r.files,
                cost: Cost::default(),
                elapsed_ms: 0,
                ended_ms: self.books.meter.now_ms(),
                by_deadline: false,
                now: now_rfc3339(),
            };
            self.books.slots[i].cache_tried = true;
            self.head = r.commit;
            let actions = transition::replayed(&self.ctx.plan, state, &mut self.books, replayed);
            self.apply(
                state,
                i,
                actions,
                super::Ended::Replay(&before, &self.head.clone()),
            );
        }
        if let Err(e) = self.progress.release() {
            self.note(&e);
        }
        self.ctx.events.release();
        self.head = hit.head;
        self.save(state);
    }

    /// Step 1: looks task `i` up in the cache and replays a hit. Returns
    /// true when the task is done (`cached`).
    pub(super) fn try_cache(&mut self, state: &mut RunState, i: usize) -> bool {
        match self.cache.lookup(&self.ctx, i, &self.head) {
            Some((rk, entry)) => self.replay(state, i, rk, entry),
            None => false,
        }
    }

    /// Replays first the hits that fast-forward to their recorded commit
    /// (or change nothing), as long as there are any: a rerun then follows
    /// the order in which an earlier (parallel) run merged, reproducing its
    /// commits without checks or worktrees, whatever the plan's order.
    pub(super) fn replay_fast_forwards(&mut self, state: &mut RunState) {
        // Fast-forwards only move `self.head`; the branch itself moves once,
        // at the end, by compare-and-swap from where it was (every commit in
        // between passed its gates, so the jump keeps the docs/running.md invariant). A
        // no-op rerun of a large plan then costs one `update-ref`, and state
        // is saved once per pass rather than once per task.
        let ref_head = self.head.clone();
        self.defer_ref = true;
        // Passes over the ready tasks in plan order, as long as one makes
        // progress, but each task is looked up again only when that can
        // change its answer: a hit recorded on another head waits (parked)
        // until the head is that one; a task whose key reads files at the
        // head (`inputs`, `context`) is looked up again in the next pass; a
        // task that became ready joins the pass, or the next if the pass
        // is past it. Looking every task up in every pass made a rerun of
        // a plan merged out of plan order (a parallel run) quadratic.
        // Only a task not looked at yet may try the cache ([`super::scan`]).
        self.scan.sync(&self.ctx, state, &mut self.books);
        let mut this: BTreeSet<usize> = self.scan.unlooked().clone();
        let mut next = BTreeSet::new();
        let mut parked: HashMap<String, Vec<usize>> = HashMap::new();
        let mut moving = Vec::new();
        loop {
            let mut progressed = false;
            while let Some(i) = this.pop_first() {
                if self.books.stop.is_some() {
                    break;
                }
                let slot = &self.books.slots[i];
                if !transition::ready(&self.ctx.plan, state, i)
                    || state.tasks[i].attempts != 0
                    || slot.infra != 0
                    || slot.cache_tried
                {
                    continue;
                }
                let task = &self.ctx.plan.tasks[i];
                let reads_head = task.reads_files();
                let Some((rk, entry)) = self.cache.lookup(&self.ctx, i, &self.head) else {
                    if reads_head {
                        moving.push(i);
                    }
                    continue;
                };
                // Gates that have not judged the result run on it first,
                // in a scratch worktree: not a fast-forward of the head alone.
                let elsewhere = entry.parent.as_ref().filter(|p| **p != self.head);
                let unchecked = !entry.unchecked(task).is_empty();
                if reads_head && (elsewhere.is_some() || unchecked) {
                    moving.push(i);
                    continue;
                }
                if unchecked {
                    continue;
                }
                if let Some(p) = elsewhere {
                    parked.entry(p.clone()).or_default().push(i);
                    continue;
                }
                self.books.slots[i].cache_tried = true;
                let ctx = std::sync::Arc::clone(&self.ctx);
                if !self.replay(state, i, rk, entry) {
                    continue;
                }
                progressed = true;
                if !std::sync::Arc::ptr_eq(&ctx, &self.ctx) {
                    // A replayed fragment grew the plan: every index moved.
                    this = (0..self.ctx.plan.tasks.len()).collect();
                    (next, moving) = (BTreeSet::new(), Vec::new());
                    parked.clear();
                    continue;
                }
                let woken = parked.remove(&self.head).unwrap_or_default();
                for j in woken.into_iter().chain(self.ctx.plan.dependents(i)) {
                    let pass = if j > i { &mut this } else { &mut next };
                    pass.insert(j);
                }
            }
            self.save(state);
            if !progressed || self.books.stop.is_some() {
                break;
            }
            next.extend(moving.drain(..));
            if next.is_empty() {
                break;
            }
            this = std::mem::take(&mut next);
        }
        self.defer_ref = false;
        self.move_deferred(state, &ref_head);
    }

    /// Moves the integration branch from `ref_head`, where it was before
    /// the fast-forwards, to the head they reached, by compare-and-swap
    /// (stopping the run when someone else moved it).
    fn move_deferred(&mut self, state: &mut RunState, ref_head: &str) {
        if self.head == ref_head {
            return;
        }
        match self
            .ctx
            .git
            .update_ref(&self.ctx.integration_ref, &self.head, Some(ref_head))
        {
            Ok(true) => {}
            Ok(false) => self.set_stop(
                StopKind::BranchMoved,
                format!(
                    "{} moved while loopc was replaying the cache; it must only be \
                     changed by loopc during a run",
                    self.ctx.integration_ref
                ),
            ),
            Err(e) => self.set_stop(StopKind::BranchMoved, e),
        }
        self.save(state);
    }

    /// Replays the ready hits that do not fast-forward (the base moved, or
    /// a task before them ran again) in the order their entries were
    /// recorded, which is the order an earlier run merged them in: a
    /// rerun then stacks the same work in the same order whatever the
    /// plan's order. A replay's dependents that become ready join the
    /// queue; each hit is looked up again at the head it replays onto.
    pub(super) fn replay_in_recorded_order(&mut self, state: &mut RunState) {
        self.scan.sync(&self.ctx, state, &mut self.books);
        let unlooked: Vec<usize> = self.scan.unlooked().iter().copied().collect();
        let mut queue = self.replay_queue(state, unlooked);
        while let Some((_, i)) = queue.pop_first() {
            if self.books.stop.is_some() {
                return;
            }
            if !self.may_replay(state, i) {
                continue;
            }
            let Some((rk, entry)) = self.cache.lookup(&self.ctx, i, &self.head) else {
                continue;
            };
            self.books.slots[i].cache_tried = true;
            let ctx = std::sync::Arc::clone(&self.ctx);
            if !self.replay(state, i, rk, entry) {
                continue;
            }
            self.save(state);
            self.advance_specs(state);
            if std::sync::Arc::ptr_eq(&ctx, &self.ctx) {
                let dependents = self.ctx.plan.dependents(i);
                queue.extend(self.replay_queue(state, dependents));
            } else {
                // A replayed fragment grew the plan: every index moved.
                queue = self.replay_queue(state, 0..self.ctx.plan.tasks.len());
            }
        }
    }

    /// The tasks among `tasks` that may replay now and have a hit, keyed
    /// by when their entries were recorded (then by plan order).
    fn replay_queue(
        &mut self,
        state: &mut RunState,
        tasks: impl IntoIterator<Item = usize>,
    ) -> BTreeSet<(u64, usize)> {
        let mut queue = BTreeSet::new();
        for i in tasks {
            if self.may_replay(state, i)
                && let Some((_, entry)) = self.cache.lookup(&self.ctx, i, &self.head)
            {
                queue.insert((entry.recorded_unix_ms, i));
            }
        }
        queue
    }

    /// Whether task `i` is ready, has not tried the cache in this run and
    /// is not waiting: the tasks [`Self::try_cache`] would be asked for.
    fn may_replay(&mut self, state: &mut RunState, i: usize) -> bool {
        transition::ready(&self.ctx.plan, state, i)
            && state.tasks[i].attempts == 0
            && self.books.slots[i].infra == 0
            && !self.books.slots[i].cache_tried
            && self.wait_over(state, i)
    }

    /// Says on the display why a replay of task `i` from `entry` is one a
    /// careful person would keep: a dependency ran again and produced the
    /// same files (early cutoff), or gates ran on the cached result.
    fn say_why_cached(&self, i: usize, entry: &Entry) {
        let task = &self.ctx.plan.tasks[i];
        let ran = self.cache.ran_dependencies(&self.ctx, i);
        if !ran.is_empty() {
            let names: Vec<String> = ran.iter().map(|d| format!("`{d}`")).collect();
            self.ctx.events.ui().line(&format!(
                "loopc: {}: cached: {} {} ran again and produced the same files",
                task.name,
                if names.len() == 1 {
                    "its dependency"
                } else {
                    "its dependencies"
                },
                crate::visible::join_words(&names)
            ));
        }
        let gates: Vec<String> = entry
            .unchecked(task)
            .iter()
            .map(|g| format!("`{}`", g.name))
            .collect();
        if !gates.is_empty() {
            let word = if gates.len() == 1 { "gate" } else { "gates" };
            self.ctx.events.ui().line(&format!(
                "loopc: {}: cached: {word} {} ran on its cached result and passed",
                task.name,
                crate::visible::join_words(&gates)
            ));
        }
    }

    /// Replays the hit `entry` of task `i` (key `rk`) and applies
    /// [`transition::replayed`]. Returns true when the task is done
    /// (`cached`); false on a miss.
    fn replay(&mut self, state: &mut RunState, i: usize, rk: RunKey, entry: Entry) -> bool {
        let head = self.head.clone();
        let since = Instant::now();
        // The fragment of a task that expands is judged from the recorded
        // commit before anything is replayed: one that no longer checks
        // with this plan is a miss, and the task runs with the diagnostics
        // as its feedback.
        let mut accepted = None;
        let at = entry.fragment_commit.as_deref().unwrap_or(&entry.commit);
        let judged = self
            .growth
            .judge(&self.ctx.git, &self.ctx.plan, i, at, None);
        let (result, cost): (Replay, Cost) = match judged {
            Some(Err(rejected)) => {
                self.books.slots[i].feedback = rejected.report;
                (Replay::Miss(rejected.reason), Cost::default())
            }
            judged => {
                accepted = judged.and_then(Result::ok);
                // A replay's checks run in `+merge-<task>.r<run>-replay`.
                self.cache.replay(
                    &self.ctx,
                    i,
                    &rk,
                    &entry,
                    &head,
                    &self.merged_checks,
                    self.defer_ref,
                )
            }
        };
        // A gate that rejected the cached result: the task's next attempt
        // is told why, as after a rejected attempt.
        if let Some(feedback) = self.cache.rejected.take() {
            self.books.slots[i].feedback = feedback;
        }
        if matches!(result, Replay::Done { .. }) {
            self.say_why_cached(i, &entry);
        }
        let done = match &result {
            Replay::Done { commit, .. } => {
                if *commit != self.head {
                    self.landings.push((i, commit.clone()));
                }
                self.head = commit.clone();
                true
            }
            Replay::Miss(_) | Replay::Stopped => false,
        };
        let after = self.head.clone();
        let replayed = Replayed {
            task: i,
            key: rk.key.to_hex(),
            result,
            summary: entry.summary,
            files: entry.files,
            cost,
            elapsed_ms: since.elapsed().as_millis() as u64,
            ended_ms: self.books.meter.now_ms(),
            by_deadline: self.past_deadline() && !interrupt::requested(),
            now: now_rfc3339(),
        };
        let actions = transition::replayed(&self.ctx.plan, state, &mut self.books, replayed);
        self.apply(state, i, actions, super::Ended::Replay(&head, &after));
        if done && let Some(a) = accepted {
            self.splice(state, a);
        }
        done
    }
}
