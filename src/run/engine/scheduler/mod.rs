//! The coordinator: starts every task whose dependencies have passed, up to
//! `parallel` at once, on a rayon thread pool; receives finished attempts,
//! merges passed ones into the integration branch one at a time (on this
//! thread), decides retries, blocks and skips, keeps the budget counters and
//! writes state.json after every change.
//!
//! What a finished attempt or a replay does to the run's state is decided
//! by the pure functions of [`crate::run::engine::scheduler::transition`]; this module carries out
//! their actions (events, `progress.md`, the cache, worktrees). Replaying
//! and recording cache entries is [`crate::run::engine::land::replay`]'s; the merge is
//! [`crate::run::engine::land::merge`]'s.
//!
//! The coordinator's loop, starting attempts, carrying out actions and the
//! checks only it can make (the integration branch, the user's refs) share
//! its one `Scheduler`; looking tasks up in the cache and replaying hits
//! are `cached`'s, waits for agents' limits and their fallbacks
//! `waits`'s, a REEL spec tree's held tasks and spec moves `specs`'s.

mod batch;
mod cached;
pub mod cleanup;
mod grow;
mod integration;
mod landing;
mod merged;
mod paying;
mod refs;
mod save;
mod scan;
mod specs;
mod start;
pub mod transition;
mod unstarted;
mod waits;

use crate::run::Outcome as RunOutcome;
use crate::run::engine::attempt::gate::{self, Check};
use crate::run::engine::budget::Cover;
use crate::run::engine::budget::Meter;
use crate::run::engine::context::RunCtx;
use crate::run::engine::expand::{Accepted, Growth};
use crate::run::engine::guard;
pub use crate::run::engine::land::replay::CacheUse;
use crate::run::engine::land::replay::{Prepared, RunCache};
use crate::run::engine::outcome::{AttemptResult, Outcome};
use crate::run::store::events::Event;
use crate::run::store::layout;
use crate::run::store::progress;
use crate::run::sys::interrupt;
use crate::run::time::now_rfc3339;
use crate::state::{RunState, RunStatus};
use merged::Ended;
use std::collections::HashMap;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};
use transition::{Action, Books, Finished, StopKind};

/// A finished attempt as it comes back from its thread: its result, when
/// it ended, and its task's name (the plan may have grown, and its indices
/// moved, while it ran).
type Arrived = (AttemptResult, Instant, String);

/// A finished attempt as picked up, before its merge ([`Scheduler::pick_up`]).
struct PickedUp {
    /// Its task branch, when its work is left for a person.
    unreviewed: Option<String>,
    /// The head its work is merged onto.
    merge_base: String,
    /// Its plan fragment, once judged (spliced in after its merge).
    accepted: Option<Accepted>,
}

/// How the run ended.
#[derive(Debug)]
pub struct Finish {
    /// Why it ended.
    pub outcome: RunOutcome,
    /// The final state.
    pub state: RunState,
}

/// Runs the plan to the end. `parallel` is the number of tasks at once
/// (≥ 1); `state` the initial state (every task pending); `exit_status`
/// the process exit status of each outcome, for state.json and the
/// `run_finished` event; `growth` the plan fragments' compiler
/// ([`crate::run::engine::expand`]). The plan `ctx` holds grows as tasks with `expands`
/// pass; the final state has every task it grew by.
pub fn run(
    ctx: Arc<RunCtx>,
    parallel: u32,
    mut state: RunState,
    cache: CacheUse,
    exit_status: fn(RunOutcome) -> i32,
    growth: Growth,
) -> Finish {
    let mut sched = Scheduler {
        cache: RunCache::new(ctx.plan.tasks.len(), cache),
        progress: progress::Writer::new(&ctx.layout.progress),
        books: Books::new(&ctx.plan, Meter::new(ctx.plan.budget.clone())),
        scan: scan::Scan::default(),
        defer_ref: false,
        prepared: None,
        queued: std::collections::VecDeque::new(),
        head: state.head_commit.clone(),
        merged_checks: Vec::new(),
        owners: HashMap::new(),
        landings: Vec::new(),
        running: 0,
        refs_at_start: None,
        attributed: Vec::new(),
        save_error: None,
        saved_at: None,
        unsaved: false,
        save_every: save::SAVE_EVERY,
        limited: HashMap::new(),
        cleanup: crate::run::engine::scheduler::cleanup::Cleanup::start(Arc::clone(&ctx)),
        growth,
        advance_failed: false,
        ctx,
        parallel: parallel.max(1) as usize,
        exit_status,
    };
    sched.refs_at_start = guard::snapshot(
        &sched.ctx.git,
        &sched.ctx.integration_ref,
        &sched.ctx.layout.worktrees,
    )
    .ok();
    if let Some(d) = sched.books.meter.deadline() {
        sched.ctx.control.set_deadline(d);
    }
    if let Some(hit) = sched.cache.take_whole_hit() {
        sched.replay_whole(&mut state, hit);
    }
    sched.hold(&mut state);
    sched.resume_waits(&mut state);
    let outcome = sched.drive(&mut state);
    Finish { outcome, state }
}

struct Scheduler {
    ctx: Arc<RunCtx>,
    parallel: usize,
    /// Budget meter, per-task slots, failure streak, stop.
    books: Books,
    /// What the scan for ready tasks may skip ([`scan`]).
    scan: scan::Scan,
    /// While replaying fast-forwards: move only `head`, not the branch.
    defer_ref: bool,
    /// The cache entry of the pass that just landed, its ref moved with
    /// the branch: noted when its transition records it.
    prepared: Option<Prepared>,
    /// Finished attempts taken off the channel and not handled yet (in
    /// the order they came): a batch takes those after it that can join
    /// it ([`Scheduler::finished_next`]).
    queued: std::collections::VecDeque<Arrived>,
    /// The integration branch head (only this thread moves it).
    head: String,
    /// Command checks of tasks merged in this run (gated again on merges).
    merged_checks: Vec<Check>,
    /// Each task whose work is on the integration branch in this run, by
    /// name, as its checks see it (a REEL spec's move runs its tasks' checks).
    owners: HashMap<String, Arc<gate::Owner>>,
    /// Each task whose work moved the integration branch in this run, with
    /// the head it moved it to, in order (a resolver's prompt names the
    /// tasks a change conflicted with, [`crate::run::engine::land::resolve`]).
    landings: Vec<(usize, String)>,
    running: usize,
    /// The cache, `--force` and the keys known so far.
    cache: RunCache,
    /// `.loopc/progress.md`, a line a passed task.
    progress: progress::Writer,
    /// The user's refs when the run started ([`guard`]).
    refs_at_start: Option<guard::Snapshot>,
    /// Ref changes already charged to an attempt.
    attributed: refs::Attributed,
    /// Why the last attempt to save state.json failed (`None`: it worked).
    save_error: Option<String>,
    /// When state.json was last written, and whether it has changed since.
    saved_at: Option<Instant>,
    unsaved: bool,
    /// The least time until the next write ([`save::SAVE_EVERY`], or more
    /// for a large state: [`save::SAVE_SPACING`]).
    save_every: Duration,
    /// The process exit status of each outcome (recorded, not chosen here).
    exit_status: fn(RunOutcome) -> i32,
    /// Agents known to be usage or rate limited: until when, and the limit
    /// that said so.
    limited: HashMap<String, waits::Limit>,
    /// Removes passed attempts' worktrees and task branches.
    cleanup: crate::run::engine::scheduler::cleanup::Cleanup,
    /// The plan fragments spliced so far ([`crate::run::engine::expand`]).
    growth: Growth,
    /// Whether a REEL spec whose tasks all passed could not be moved to
    /// its next stage (the run then fails).
    advance_failed: bool,
}

impl Scheduler {
    fn drive(&mut self, state: &mut RunState) -> RunOutcome {
        // No more threads than tasks: `-j 100000` must not start 100,000
        // threads for three tasks (at most `parallel` attempts run at once).
        // A plan that may grow may need them all.
        let grows = self.ctx.plan.tasks.iter().any(|t| t.expands.is_some());
        let known = if grows {
            self.parallel
        } else {
            self.ctx.plan.tasks.len()
        };
        let threads = self.parallel.min(known).max(1);
        let pool = match rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("loopc-task-{i}"))
            .build()
        {
            Ok(p) => p,
            Err(e) => {
                self.set_stop(StopKind::Interrupted, format!("cannot start threads: {e}"));
                return self.finish(state);
            }
        };
        // Each result comes with its task's name: the plan may have grown
        // (and its indices moved) while the attempt ran.
        let (tx, rx) = mpsc::channel::<Arrived>();
        self.save(state);
        loop {
            self.take_interrupt();
            if self.past_deadline() {
                // `time` also stops running attempts (their subprocesses see
                // the same deadline through `Control`).
                if let Some((at, reason)) = self.books.meter.exhausted_at(false) {
                    self.books.set_budget_stop(at, reason);
                }
            }
            if self.books.stop.is_none() {
                self.start_ready(state, &pool, &tx);
            }
            // A signal that came while the coordinator itself worked (a
            // replay's checks, a spec's move) stops the run here too.
            self.take_interrupt();
            if self.running == 0
                && self.queued.is_empty()
                && (self.books.stop.is_some() || !self.waiting(state))
            {
                // Tasks parked on a wait that outlasts a budget: the run
                // stops for that budget once everything else has ended.
                if let Some((at, reason)) = self.books.parked.take() {
                    self.books.set_budget_stop(at, reason);
                }
                break;
            }
            match self.next_result(&rx) {
                Ok(first) => {
                    self.finished_next(state, first, &rx);
                    self.save(state);
                }
                // Spaced as every write is: a spell without results (the
                // attempts started together still running) must not
                // write the whole document more often than that.
                Err(mpsc::RecvTimeoutError::Timeout) if self.unsaved && self.save_due() => {
                    self.write_state(state)
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        self.finish(state)
    }

    fn set_stop(&mut self, kind: StopKind, reason: String) {
        self.books.set_stop(kind, reason);
    }

    /// Whether the `time` budget has run out.
    fn past_deadline(&self) -> bool {
        self.books
            .meter
            .deadline()
            .is_some_and(|d| Instant::now() >= d)
    }

    /// Shows a failure that does not stop the run, as `error: {text}`.
    fn note(&self, text: &str) {
        self.ctx.events.ui().line(&format!("error: {text}"));
    }

    /// Starts ready tasks (topological order) while slots are free.
    fn start_ready(
        &mut self,
        state: &mut RunState,
        pool: &rayon::ThreadPool,
        tx: &mpsc::Sender<Arrived>,
    ) {
        self.replay_fast_forwards(state);
        self.advance_specs(state);
        self.replay_in_recorded_order(state);
        // Not a range: a replayed fragment grows the plan (and moves every
        // index), and the scan starts over on the grown plan. Done tasks at
        // the front, and while every slot is taken the tasks already looked
        // at, are skipped ([`scan`]).
        let mut next = 0;
        loop {
            self.scan.sync(&self.ctx, state, &mut self.books);
            let free = self.running < self.parallel;
            let Some(i) = self.scan.next(next, free, self.ctx.plan.tasks.len()) else {
                break;
            };
            next = i + 1;
            if self.books.stop.is_some() {
                return;
            }
            if !transition::ready(&self.ctx.plan, state, i) {
                continue;
            }
            if !self.wait_over(state, i) {
                continue;
            }
            let ctx = Arc::clone(&self.ctx);
            let task = &ctx.plan.tasks[i];
            if state.tasks[i].attempts == 0
                && self.books.slots[i].infra == 0
                && !self.books.slots[i].cache_tried
            {
                self.books.slots[i].cache_tried = true;
                if self.try_cache(state, i) {
                    self.save(state);
                    self.advance_specs(state);
                    if !Arc::ptr_eq(&ctx, &self.ctx) {
                        next = 0;
                    }
                    continue;
                }
                if self.books.stop.is_some() {
                    return;
                }
            }
            // Failures an earlier run left under the same key: resumed,
            // or not paid for again.
            if !self.books.slots[i].resume_checked && self.resume(state, i) {
                self.save(state);
                continue;
            }
            self.scan.visited(state, &self.books, i);
            // Replays need no slot; attempts do.
            if self.running >= self.parallel {
                continue;
            }
            let is_agent = matches!(task.kind, crate::plan::TaskKind::Agent { .. });
            if let Some((at, reason)) = self.books.meter.exhausted_at(is_agent) {
                self.books.set_budget_stop(at, reason);
                return;
            }
            let (cover, cap) = self.covered(i);
            match cover {
                Cover::Yes => {}
                // Once an attempt running ends, what it spent is known.
                Cover::AfterRunning if self.running > 0 => continue,
                Cover::AfterRunning => {}
                Cover::No(reason) => {
                    // Its reason said which fallback takes the next
                    // attempt: none does.
                    if let Some(r) = &mut state.tasks[i].reason
                        && let Some(limit) = r.strip_suffix(waits::TAKES_NEXT)
                    {
                        *r = format!("{limit} was to take the next attempt; not started: {reason}");
                    }
                    let at = self.books.meter.now_ms();
                    self.books.set_budget_stop(at, reason);
                    return;
                }
            }
            self.books.slots[i].held = cap;
            self.books.meter.hold(cap);
            // A retry starts only once its remembered failure is on disk,
            // so a rerun after `kill -9` resumes from it.
            if self.unsaved && state.tasks[i].remembered.is_some() {
                self.write_state(state);
            }
            self.start_attempt(state, pool, tx, i);
            self.save(state);
        }
    }

    /// Handles one attempt that finished at `ended`: merges a pass (step 7), then applies
    /// [`transition::finished`].
    fn finished(&mut self, state: &mut RunState, mut r: AttemptResult, ended: Instant) {
        // The task's time is its attempt's and its merge's own: not the
        // time its result waited for this thread (busy with other merges
        // and replays).
        let picked_up = Instant::now();
        // What the attempt spent is charged below: its cap is held no more.
        let held = std::mem::take(&mut self.books.slots[r.input.task].held);
        self.books.meter.free(held);
        let pre = self.pick_up(state, &mut r);
        let outcome = match r.outcome.clone() {
            Outcome::Passed { commit, .. } => self.land_pass(state, &mut r, &commit),
            other => other,
        };
        self.conclude(state, r, (ended, picked_up), pre, outcome);
    }

    /// What happens to a finished attempt `r` before its merge: its pooled
    /// worktree's old branch goes, the integration branch is checked, a
    /// ref change or a plan fragment that does not check fails it.
    fn pick_up(&mut self, state: &mut RunState, r: &mut AttemptResult) -> PickedUp {
        // The pooled worktree it took ([`crate::run::engine::pool`]) goes.
        if let Some((path, branch)) = r.retired.take() {
            self.cleanup.remove(path, branch);
        }
        self.check_integration();
        // Refs that are not loopc's changed while the attempt ran: it fails
        // (unless blocked or interrupted anyway), and the summary warns.
        // loopc never moves them back: the person decides.
        if !r.ref_changes.is_empty() {
            r.outcome = self.refs_changed(state, r, r.outcome.clone());
        }
        // Only the gates' own rejection of the attempt (no ref change,
        // no merge) leaves its work for a person (`completed_unreviewed`).
        let unreviewed = (r.unreviewed
            && r.ref_changes.is_empty()
            && matches!(r.outcome, Outcome::Failed { .. }))
        .then(|| r.branch.clone());
        self.answers_changed(r);
        PickedUp {
            unreviewed,
            merge_base: self.head.clone(),
            accepted: self.judge_fragment(r),
        }
    }

    /// Applies [`transition::finished`] to attempt `r`, which ended at
    /// `ended` and was picked up at `picked_up` (`pre`), with `outcome`
    /// after its merge; `self.head` is the head its merge made.
    fn conclude(
        &mut self,
        state: &mut RunState,
        r: AttemptResult,
        (ended, picked_up): (Instant, Instant),
        pre: PickedUp,
        outcome: Outcome,
    ) {
        let i = r.input.task;
        let PickedUp {
            unreviewed,
            merge_base,
            accepted,
        } = pre;
        let finished = Finished {
            task: i,
            attempt: r.input.attempt,
            outcome,
            cost: r.cost.clone(),
            elapsed_ms: self.books.slots[i].since.take().map(|since| {
                (ended.saturating_duration_since(since) + picked_up.elapsed()).as_millis() as u64
            }),
            head: self.head.clone(),
            now: now_rfc3339(),
            signalled: interrupt::requested(),
            past_deadline: self.past_deadline(),
            ended_ms: self.books.meter.ms_at(ended),
            work_end_ms: Some(self.ctx.events.ms_at(ended)),
            agent_started: r.agent_started,
            logs: r
                .files
                .as_ref()
                .map(|f| f.dir.to_string_lossy().into_owned()),
            worktree: r
                .worktree
                .exists()
                .then(|| r.worktree.to_string_lossy().into_owned()),
            agent: r.report.as_ref().map(|rep| rep.record()),
            fallback: r.input.agent.as_ref().map(|a| a.name.clone()),
            resolver: r.resolver.clone(),
            unreviewed,
            answerer: r.answerer.clone(),
            already_satisfied: r.already_satisfied,
        };
        if r.verified {
            self.books.slots[i].verified = true;
        }
        let passed = matches!(finished.outcome, Outcome::Passed { .. });
        if passed && let Some(a) = &accepted {
            state.tasks[i].fragment_commit = Some(a.commit.clone());
        }
        let actions = transition::finished(&self.ctx.plan, state, &mut self.books, finished);
        self.apply(state, i, actions, Ended::Attempt(&r, &merge_base));
        if passed && let Some(a) = accepted {
            self.splice(state, a);
        }
        self.advance_specs(state);
    }

    /// Judges the plan fragment attempt `r` wrote, if its task `expands`
    /// one, before the merge: a fragment that does not check fails the
    /// attempt (and nothing of it runs); one that checks is returned, to be
    /// spliced in once the attempt's work is merged.
    fn judge_fragment(&mut self, r: &mut AttemptResult) -> Option<Accepted> {
        let Outcome::Passed { commit, .. } = &r.outcome else {
            return None;
        };
        match self.growth.judge(
            &self.ctx.git,
            &self.ctx.plan,
            r.input.task,
            commit,
            Some(&r.worktree),
        )? {
            Ok(a) => Some(a),
            Err(rejected) => {
                self.save_fragment_check(r, &rejected.report);
                r.outcome = Outcome::Failed {
                    reason: rejected.reason,
                    feedback: rejected.report,
                    on_fail: crate::model::OnFail::Retry,
                };
                None
            }
        }
    }

    /// Carries out a transition's `actions` for task `i`; `ended` is what
    /// ended: the finished attempt and the head its work was merged onto,
    /// or a replay and the heads it moved the integration branch between.
    fn apply(&mut self, state: &mut RunState, i: usize, actions: Vec<Action>, ended: Ended<'_>) {
        let attempt = match ended {
            Ended::Attempt(r, before) => Some((r, before)),
            Ended::Replay(..) | Ended::Nothing => None,
        };
        let ctx = Arc::clone(&self.ctx);
        let task = &ctx.plan.tasks[i];
        for action in actions {
            match action {
                Action::Emit(event) => ctx.events.emit(event),
                Action::KeepWorktree => {
                    if let Some((r, _)) = attempt
                        && r.worktree.exists()
                        && let Err(e) = layout::record_kept(&ctx.layout, &r.branch)
                    {
                        self.note(&e);
                    }
                }
                Action::Progress {
                    title,
                    summary,
                    files,
                } => {
                    if let Err(e) =
                        self.progress
                            .append(&task.name, &title, summary.as_deref(), &files)
                    {
                        self.note(&e);
                    }
                }
                Action::Record { summary, files } => {
                    // Its entry moved with the branch ([`Scheduler::land_pass`]).
                    if let Some(p) = self.prepared.take().filter(|p| p.task == i) {
                        self.cache.landed(&ctx, &mut state.tasks[i], p);
                    } else if let Some((r, before)) = attempt {
                        self.cache.record(
                            &ctx,
                            &mut state.tasks[i],
                            i,
                            &r.input.base,
                            before,
                            &self.head,
                            summary,
                            files,
                        );
                    }
                }
                Action::RememberChecks => self.remember_checks(i, ended),
                Action::WaitForLimit(l) => self.limit_hit(state, i, &l),
                Action::RemoveWorktree => {
                    if let Some((r, _)) = attempt {
                        let passed = matches!(r.outcome, Outcome::Passed { .. });
                        let (path, branch) = (r.worktree.clone(), r.branch.clone());
                        self.cleanup.release(path, branch, passed);
                    }
                }
            }
        }
    }

    /// Attempt `r` saw refs that are not loopc's change while it ran: warns
    /// and returns the outcome to judge it by ([`refs::judge`]).
    fn refs_changed(
        &mut self,
        state: &mut RunState,
        r: &AttemptResult,
        outcome: Outcome,
    ) -> Outcome {
        refs::judge(&self.ctx, state, r, outcome, &mut self.attributed)
    }

    /// Warns about refs that changed during the run without an attempt
    /// having seen it ([`refs::unattributed`]).
    fn unattributed_ref_changes(&mut self, state: &mut RunState) {
        if let Some(start) = &self.refs_at_start {
            refs::unattributed(&self.ctx, start, &self.attributed, state);
        }
    }

    fn finish(&mut self, state: &mut RunState) -> RunOutcome {
        if let Err(e) = self.cache.flush() {
            self.note(&e);
        }
        self.cleanup.finish();
        self.unattributed_ref_changes(state);
        self.settle_specs(state);
        let all_done = state.tasks.iter().all(|t| t.status.is_done());
        // A budget spent by the attempt that finished the last work stopped
        // nothing: the run ends as its tasks did (the docs promise exit 0
        // when the last pass finished the plan).
        let stopped_something = state.tasks.iter().any(|t| {
            matches!(
                t.status,
                crate::state::TaskStatus::Pending | crate::state::TaskStatus::Interrupted
            )
        });
        if self.books.stop_kind() == Some(StopKind::Budget) && !stopped_something {
            self.books.stop = None;
        }
        let (status, outcome) = match self.books.stop_kind() {
            Some(StopKind::Interrupted) => (RunStatus::Interrupted, RunOutcome::Interrupted),
            Some(StopKind::Budget) => (RunStatus::Stopped, RunOutcome::Budget),
            Some(StopKind::BranchMoved) => (RunStatus::Stopped, RunOutcome::BranchMoved),
            _ if all_done && !self.advance_failed => (RunStatus::Passed, RunOutcome::Passed),
            _ => (RunStatus::Failed, RunOutcome::Failed),
        };
        if outcome == RunOutcome::Passed
            && let Err(e) = self.cache.record_whole(&self.ctx, &self.head)
        {
            self.note(&format!("cache: the run entry: {e}"));
        }
        let code = (self.exit_status)(outcome);
        state.status = status;
        state.exit_code = Some(code);
        state.stop_reason = self.books.stop.as_ref().map(|s| s.1.clone());
        if state.stop_reason.is_none() {
            state.stop_reason = self.unstarted(state);
        }
        state.finished_at = Some(now_rfc3339());
        self.write_state(state);
        // A run whose state is not recorded must not look like a success:
        // `loopc status` and the next run would not know what it did.
        let (outcome, code) = match &self.save_error {
            Some(e) if outcome != RunOutcome::Interrupted => {
                self.ctx.events.ui().line(&format!(
                    "error: the run's state could not be recorded ({e})"
                ));
                let o = RunOutcome::StateNotRecorded;
                (o, (self.exit_status)(o))
            }
            _ => (outcome, code),
        };
        self.ctx.events.emit(Event::RunFinished {
            status: status.as_str().to_string(),
            exit_code: code,
            reason: state.stop_reason.clone(),
        });
        outcome
    }
}

/// The initial state: every task pending.
pub fn initial_state(ctx: &RunCtx, plan_file: &str, head: &str) -> RunState {
    transition::initial(&ctx.plan, plan_file, head, now_rfc3339())
}

pub use waits::{carry_waits, uses_agent};
