//! The coordinator: starts every task whose dependencies have passed, up to
//! `parallel` at once, on a rayon thread pool; receives finished attempts,
//! merges passed ones into the integration branch one at a time (on this
//! thread), decides retries, blocks and skips, keeps the budget counters and
//! writes state.json after every change.

use super::attempt::{self, AttemptInput, AttemptResult, Outcome};
use super::budget::{Cost, Meter};
use super::cache;
use super::context::RunCtx;
use super::gate::{self, Check, Verdict};
use super::merge::{self, Merge};
use crate::exit;
use crate::key::Key;
use crate::plan::{OnFail, TaskKind};
use crate::run::store::events::Event;
use crate::run::store::layout;
use crate::run::store::progress;
use crate::run::sys::{interrupt, worktree};
use crate::state::{self, RunState, RunStatus, TaskState, TaskStatus};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Infrastructure failures (e.g. `setup`) a task may have before it is blocked.
pub const MAX_INFRA_FAILURES: u32 = 3;

/// Per-task bookkeeping that is not saved.
#[derive(Debug, Default)]
struct Slot {
    /// Tries started (names worktrees, branches, logs).
    serial: u32,
    /// Infrastructure failures so far.
    infra: u32,
    /// The attempt number of the last try and which try of it that was
    /// (infrastructure retries repeat the attempt number).
    last_try: (u32, u32),
    /// Feedback for the next attempt.
    feedback: String,
    /// When the current attempt started (monotonic).
    since: Option<Instant>,
    /// Whether the cache was consulted for this task already.
    cache_tried: bool,
}

/// How a run uses the cache (spec §6).
#[derive(Debug, Default)]
pub struct CacheUse {
    /// The entries; `None` with `--no-cache` (neither read nor written).
    pub store: Option<cache::Store>,
    /// Per task: `--force` named it (not read, still written).
    pub forced: Vec<bool>,
}

/// How the run ended.
#[derive(Debug)]
pub struct Finish {
    /// The process exit status.
    pub code: i32,
    /// The final state.
    pub state: RunState,
}

/// Runs the plan to the end. `parallel` is the number of tasks at once
/// (≥ 1); `state` the initial state (every task pending).
pub fn run(ctx: Arc<RunCtx>, parallel: u32, mut state: RunState, cache: CacheUse) -> Finish {
    let mut sched = Scheduler {
        keys: vec![None; ctx.plan.tasks.len()],
        lister: cache::FileLister::default(),
        cache,
        slots: (0..ctx.plan.tasks.len()).map(|_| Slot::default()).collect(),
        meter: Meter::new(ctx.plan.budget.clone()),
        streak: Vec::new(),
        defer_ref: false,
        head: state.head_commit.clone(),
        merged_checks: Vec::new(),
        stop: None,
        running: 0,
        ctx,
        parallel: parallel.max(1) as usize,
    };
    if let Some(d) = sched.meter.deadline() {
        sched.ctx.control.set_deadline(d);
    }
    let code = sched.drive(&mut state);
    Finish { code, state }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopKind {
    Budget,
    Interrupted,
    FailedTask,
    /// The integration branch was moved off loopc's work (exit 2).
    BranchMoved,
}

struct Scheduler {
    ctx: Arc<RunCtx>,
    parallel: usize,
    slots: Vec<Slot>,
    meter: Meter,
    /// While replaying fast-forwards: move only `head`, not the branch.
    defer_ref: bool,
    /// The tasks whose failed attempts make up the current run of
    /// consecutive failures (see `task_ended_failing`).
    streak: Vec<usize>,
    /// The integration branch head (only this thread moves it).
    head: String,
    /// Command checks of tasks merged in this run (gated again on merges).
    merged_checks: Vec<Check>,
    stop: Option<(StopKind, String)>,
    running: usize,
    /// The cache and `--force`.
    cache: CacheUse,
    /// Per task: the run-time key its result is known under (set when it
    /// was replayed or recorded).
    keys: Vec<Option<Key>>,
    /// Base commits' file lists for `inputs`.
    lister: cache::FileLister,
}

impl Scheduler {
    /// A task ended failed or blocked. When every failure of the current
    /// streak is its own, the streak is that task's failure and nothing more
    /// (the breaker waits: one more failure of another task trips it):
    /// spec §5 lets independent work go on after a failed task, which with
    /// `attempts` and `failures` both at their default of 3 the circuit
    /// breaker would otherwise forbid. Failures spanning tasks still count.
    fn task_ended_failing(&mut self, i: usize) {
        self.meter.breaker_spares_streak = self.streak == [i];
    }

    fn drive(&mut self, state: &mut RunState) -> i32 {
        let pool = match rayon::ThreadPoolBuilder::new()
            .num_threads(self.parallel)
            .thread_name(|i| format!("loopc-task-{i}"))
            .build()
        {
            Ok(p) => p,
            Err(e) => {
                self.set_stop(StopKind::Interrupted, format!("cannot start threads: {e}"));
                return self.finish(state);
            }
        };
        let (tx, rx) = mpsc::channel::<AttemptResult>();
        self.save(state);
        loop {
            if interrupt::requested()
                && self
                    .stop
                    .as_ref()
                    .is_none_or(|s| s.0 != StopKind::Interrupted)
            {
                self.set_stop(StopKind::Interrupted, "interrupted".into());
                self.ctx.control.stop();
            }
            if self.meter.deadline().is_some_and(|d| Instant::now() >= d) {
                // `time` also stops running attempts (their subprocesses see
                // the same deadline through `Control`).
                if let Some(reason) = self.meter.exhausted(false) {
                    self.set_stop(StopKind::Budget, reason);
                }
            }
            if self.stop.is_none() {
                self.start_ready(state, &pool, &tx);
            }
            if self.running == 0 {
                break;
            }
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(result) => {
                    self.running -= 1;
                    self.finished(state, result);
                    self.save(state);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        self.finish(state)
    }

    fn set_stop(&mut self, kind: StopKind, reason: String) {
        // A foreign move of the integration branch outranks an interrupt,
        // which outranks a budget stop, which outranks a failed task.
        let rank = |k: StopKind| match k {
            StopKind::BranchMoved => 4,
            StopKind::Interrupted => 3,
            StopKind::Budget => 2,
            StopKind::FailedTask => 1,
        };
        if self
            .stop
            .as_ref()
            .is_none_or(|(k, _)| rank(kind) > rank(*k))
        {
            self.stop = Some((kind, reason));
        }
    }

    fn save(&mut self, state: &mut RunState) {
        self.meter.tick();
        state.spent = self.meter.spent.clone();
        state.head_commit = self.head.clone();
        if let Err(e) = crate::run::store::state::save(&self.ctx.layout.state, state) {
            self.ctx.events.ui().line(&format!("loopc: {e}"));
        }
    }

    /// Starts ready tasks (topological order) while slots are free.
    fn start_ready(
        &mut self,
        state: &mut RunState,
        pool: &rayon::ThreadPool,
        tx: &mpsc::Sender<AttemptResult>,
    ) {
        self.replay_fast_forwards(state);
        for i in 0..self.ctx.plan.tasks.len() {
            if self.stop.is_some() {
                return;
            }
            if state.tasks[i].status != TaskStatus::Pending {
                continue;
            }
            let ctx = Arc::clone(&self.ctx);
            let task = &ctx.plan.tasks[i];
            if !task
                .dependencies
                .iter()
                .all(|&d| state.tasks[d].status.is_done())
            {
                continue;
            }
            if state.tasks[i].attempts == 0
                && self.slots[i].infra == 0
                && !self.slots[i].cache_tried
            {
                self.slots[i].cache_tried = true;
                if self.try_cache(state, i) {
                    self.save(state);
                    continue;
                }
                if self.stop.is_some() {
                    return;
                }
            }
            // Replays need no slot; attempts do.
            if self.running >= self.parallel {
                continue;
            }
            let is_agent = matches!(task.kind, TaskKind::Agent { .. });
            if let Some(reason) = self.meter.exhausted(is_agent) {
                self.set_stop(StopKind::Budget, reason);
                return;
            }
            let ts = &mut state.tasks[i];
            ts.attempts += 1;
            if is_agent {
                self.meter.spent.iterations += 1;
            }
            ts.status = TaskStatus::Running;
            if ts.started_at.is_none() {
                ts.started_at = Some(crate::run::time::now_rfc3339());
            }
            self.next_serial(i);
            let slot = &mut self.slots[i];
            slot.since = Some(Instant::now());
            slot.last_try = match slot.last_try {
                (a, r) if a == ts.attempts => (a, r + 1),
                _ => (ts.attempts, 1),
            };
            let retry = slot.last_try.1;
            let input = AttemptInput {
                task: i,
                attempt: ts.attempts,
                serial: slot.serial,
                retry,
                base: self.head.clone(),
                feedback: slot.feedback.clone(),
                progress: progress::read(&self.ctx.layout.progress),
            };
            ts.worktree = Some(
                self.ctx
                    .layout
                    .task_worktree(&task.name, slot.serial)
                    .to_string_lossy()
                    .into_owned(),
            );
            ts.logs = Some(
                self.ctx
                    .layout
                    .attempt_logs(&task.name, &layout::log_name(ts.attempts, retry))
                    .to_string_lossy()
                    .into_owned(),
            );
            self.running += 1;
            let ctx = Arc::clone(&self.ctx);
            let tx = tx.clone();
            pool.spawn(move || {
                // A bug in an attempt must not leave the coordinator waiting
                // forever: a panic becomes an infrastructure failure.
                let fallback = input.clone();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    attempt::run(&ctx, input)
                }))
                .unwrap_or_else(|_| AttemptResult {
                    outcome: Outcome::Infrastructure("internal error in the attempt".into()),
                    cost: Cost::default(),
                    worktree: ctx
                        .layout
                        .task_worktree(&ctx.plan.tasks[fallback.task].name, fallback.serial),
                    branch: worktree::task_branch(
                        &ctx.slug,
                        &ctx.plan.tasks[fallback.task].name,
                        fallback.serial,
                    ),
                    files: None,
                    input: fallback,
                });
                let _ = tx.send(result);
            });
            self.save(state);
        }
    }

    /// Moves task `i` to its next try's serial number, skipping those whose
    /// task branch the user has checked out (reserved).
    fn next_serial(&mut self, i: usize) {
        let name = &self.ctx.plan.tasks[i].name;
        let slot = &mut self.slots[i];
        loop {
            slot.serial += 1;
            let branch = worktree::task_branch(&self.ctx.slug, name, slot.serial);
            // A kept worktree (a failed attempt's, perhaps of another plan
            // with a task of the same name) is never reused.
            if !self.ctx.reserved.contains(&branch)
                && !self.ctx.layout.task_worktree(name, slot.serial).exists()
            {
                return;
            }
        }
    }

    /// Handles one finished attempt.
    fn finished(&mut self, state: &mut RunState, mut r: AttemptResult) {
        let i = r.input.task;
        let task = self.ctx.plan.tasks[i].clone();
        let is_agent = matches!(task.kind, TaskKind::Agent { .. });

        // Merge a passed attempt (step 7).
        let mut outcome = r.outcome.clone();
        let merge_base = self.head.clone();
        if let Outcome::Passed { commit, .. } = &outcome {
            let mut cost = Cost::default();
            let merged = merge::integrate(
                &self.ctx,
                &r,
                commit,
                &self.head,
                &self.merged_checks,
                &mut cost,
            );
            r.cost.absorb(cost);
            match merged {
                Merge::Advanced {
                    commit: new_head,
                    how,
                } => {
                    self.head = new_head.clone();
                    self.ctx.events.emit(Event::Merged {
                        task: task.name.clone(),
                        commit: new_head,
                        how: how.to_string(),
                    });
                }
                Merge::Conflict(paths) => {
                    outcome = Outcome::Failed {
                        reason: format!("merge conflict in {}", paths.join(", ")),
                        feedback: format!(
                            "Your change conflicted with work merged meanwhile into the integration \
                             branch, in these paths:\n{}\nThe next attempt starts from the new \
                             integration branch head; redo the change on top of it.",
                            paths.join("\n")
                        ),
                        on_fail: OnFail::Retry,
                    };
                }
                Merge::Rejected(Verdict::Reject {
                    reason,
                    feedback,
                    on_fail,
                }) => {
                    outcome = Outcome::Failed {
                        reason: format!("after merging with the integration branch: {reason}"),
                        feedback: format!(
                            "Your change passed on its own but failed once merged with work \
                             merged meanwhile into the integration branch:\n{feedback}"
                        ),
                        on_fail,
                    };
                }
                Merge::Rejected(Verdict::Blocked(why)) => outcome = Outcome::Blocked(why),
                Merge::Rejected(Verdict::Error(e)) | Merge::Error(e) => {
                    // If someone else moved the integration branch onto a
                    // descendant of loopc's head, adopt it: later attempts
                    // start from (and merge into) it. A move that drops
                    // loopc's merged work stops the run instead.
                    if let Ok(Some(h)) = self.ctx.git.commit_of(&self.ctx.integration_ref)
                        && h != self.head
                    {
                        if self.ctx.git.is_ancestor(&self.head, &h).unwrap_or(false) {
                            self.head = h;
                        } else {
                            self.set_stop(
                                StopKind::BranchMoved,
                                format!(
                                    "the integration branch `{}` was moved by someone else from {} \
                                     (loopc's last head) to {}, which does not contain the work \
                                     loopc merged; the run stops",
                                    self.ctx.plan.settings.branch, self.head, h
                                ),
                            );
                            self.ctx.control.stop();
                        }
                    }
                    outcome = Outcome::Infrastructure(format!("merge: {e}"));
                }
                Merge::Rejected(Verdict::Stopped | Verdict::Pass) | Merge::Stopped => {
                    outcome = Outcome::Interrupted;
                }
            }
        }

        // Cost and budget counters.
        // Unknown costs were charged the agent's cap where it has one; one
        // without a cap under a cost budget stops the run.
        let cost_known = !r.cost.unknown;
        let charged = r.cost.micro_usd;
        if r.cost.unknown && self.meter.counts_cost() {
            let name = r.cost.unknown_agent.clone().unwrap_or_else(|| "?".into());
            self.set_stop(
                StopKind::Budget,
                format!(
                    "the cost of task `{}` attempt {} could not be read from agent `{name}` \
                     and it has no `cost` cap; a cost budget is set, so the run stops",
                    task.name, r.input.attempt
                ),
            );
        }
        self.meter.spent.cost_micro_usd += charged;
        let ts = &mut state.tasks[i];
        ts.cost_micro_usd += charged;
        ts.cost_unknown |= !cost_known;
        if let Some(since) = self.slots[i].since.take() {
            ts.duration_ms += since.elapsed().as_millis() as u64;
        }

        let (word, reason) = match &outcome {
            Outcome::Passed { .. } => ("passed", None),
            Outcome::Failed { reason, .. } => ("failed", Some(reason.clone())),
            Outcome::Blocked(why) => ("blocked", Some(why.clone())),
            Outcome::Infrastructure(why) => ("infrastructure", Some(why.clone())),
            Outcome::Interrupted => ("interrupted", None),
        };
        // A failed or blocked attempt's worktree is kept until `loopc
        // clean` (spec §5.8): recorded so that the next run leaves it alone.
        if matches!(outcome, Outcome::Failed { .. } | Outcome::Blocked(_))
            && r.worktree.exists()
            && let Err(e) = layout::record_kept(&self.ctx.layout, &r.branch)
        {
            self.ctx.events.ui().line(&format!("loopc: {e}"));
        }
        self.ctx.events.emit(Event::AttemptFinished {
            task: task.name.clone(),
            attempt: r.input.attempt,
            outcome: word.to_string(),
            reason,
            cost_micro_usd: cost_known.then_some(charged),
        });

        match outcome {
            Outcome::Passed { summary, files, .. } => {
                self.meter.spent.consecutive_failures = 0;
                self.meter.breaker_spares_streak = false;
                self.streak.clear();
                let ts = &mut state.tasks[i];
                ts.status = TaskStatus::Passed;
                ts.summary = summary.clone();
                ts.commit = Some(self.head.clone());
                ts.reason = None;
                ts.worktree = None;
                let title = task.title.clone().unwrap_or_else(|| task.name.clone());
                let files_for_cache = files.clone();
                if let Err(e) = progress::append(
                    &self.ctx.layout.progress,
                    &task.name,
                    &title,
                    summary.as_deref(),
                    &files,
                ) {
                    self.ctx.events.ui().line(&format!("loopc: {e}"));
                }
                self.record(state, i, &r, &merge_base, summary.clone(), files_for_cache);
                self.remember_checks(i);
                {
                    let _g = self.ctx.worktree_lock.lock();
                    if let Err(e) = worktree::remove(&self.ctx.git, &r.worktree, Some(&r.branch)) {
                        self.ctx.events.ui().line(&format!("loopc: {e}"));
                    }
                }
                self.task_final(state, i, TaskStatus::Passed, None);
            }
            Outcome::Failed {
                reason,
                feedback,
                on_fail,
            } => {
                self.meter.spent.consecutive_failures += 1;
                self.meter.breaker_spares_streak = false;
                if !self.streak.contains(&i) {
                    self.streak.push(i);
                }
                self.slots[i].feedback = gate::cut_feedback(feedback);
                match on_fail {
                    OnFail::Retry if state.tasks[i].attempts < task.attempts => {
                        state.tasks[i].status = TaskStatus::Pending;
                        state.tasks[i].reason = Some(reason);
                    }
                    OnFail::Retry => {
                        let why = format!(
                            "out of attempts ({} of {}): {reason}",
                            state.tasks[i].attempts, task.attempts
                        );
                        self.task_ended_failing(i);
                        self.task_final(state, i, TaskStatus::Failed, Some(why));
                    }
                    OnFail::Block => {
                        self.task_ended_failing(i);
                        self.task_final(state, i, TaskStatus::Blocked, Some(reason));
                    }
                    OnFail::Fail => {
                        self.set_stop(
                            StopKind::FailedTask,
                            format!(
                                "task `{}` failed and its gate says on_fail = fail",
                                task.name
                            ),
                        );
                        self.task_final(state, i, TaskStatus::Failed, Some(reason));
                    }
                }
            }
            Outcome::Blocked(why) => self.task_final(state, i, TaskStatus::Blocked, Some(why)),
            Outcome::Infrastructure(why) => {
                // Not counted against `attempts` or `iterations`.
                state.tasks[i].attempts -= 1;
                if is_agent {
                    self.meter.spent.iterations = self.meter.spent.iterations.saturating_sub(1);
                }
                self.slots[i].infra += 1;
                if self.slots[i].infra >= MAX_INFRA_FAILURES {
                    let why =
                        format!("{MAX_INFRA_FAILURES} infrastructure failures, the last: {why}");
                    self.task_final(state, i, TaskStatus::Blocked, Some(why));
                } else {
                    state.tasks[i].status = TaskStatus::Pending;
                    state.tasks[i].reason = Some(why);
                }
            }
            Outcome::Interrupted => {
                // An attempt killed by the `time` budget did run: budgets
                // are judged after an attempt's result, and `time` also
                // stops running ones, so it counts in `attempts` and
                // `iterations`. One cut off by Ctrl-C or SIGTERM is not
                // counted (spec §5: it is resumed as if it never ran).
                let by_time = !interrupt::requested()
                    && self.stop.as_ref().is_none_or(|s| s.0 == StopKind::Budget)
                    && self.meter.deadline().is_some_and(|d| Instant::now() >= d);
                if by_time {
                    self.task_final(
                        state,
                        i,
                        TaskStatus::Interrupted,
                        Some("the attempt was stopped by the `time` budget".into()),
                    );
                } else {
                    state.tasks[i].attempts -= 1;
                    if is_agent {
                        self.meter.spent.iterations = self.meter.spent.iterations.saturating_sub(1);
                    }
                    self.task_final(state, i, TaskStatus::Interrupted, None);
                }
            }
        }
    }

    /// Adds task `i`'s command checks to those gated again on later merges.
    fn remember_checks(&mut self, i: usize) {
        let task = &self.ctx.plan.tasks[i];
        for mut c in gate::checks_of(task) {
            if !gate::is_agent(&c) && !self.merged_checks.iter().any(|k| k.kind == c.kind) {
                if c.label == "accept" {
                    c.label = format!("accept of {}", task.name);
                }
                self.merged_checks.push(c);
            }
        }
    }

    /// Task `i`'s run-time key with its work starting at `base`; `None`
    /// (with a note on the display) when it cannot be computed.
    fn key_at(&mut self, i: usize, base: &str) -> Option<cache::RunKey> {
        let task = &self.ctx.plan.tasks[i];
        let computed = self
            .lister
            .files_for(&self.ctx.git, task, base)
            .and_then(|files| {
                cache::run_key(
                    &self.ctx.plan,
                    i,
                    &self.keys,
                    files.as_deref().map(|v| v.as_slice()),
                )
            });
        match computed {
            Ok(k) => Some(k),
            Err(e) => {
                self.ctx
                    .events
                    .ui()
                    .line(&format!("loopc: {}: no cache key: {e}", task.name));
                None
            }
        }
    }

    /// Step 1: looks task `i` up in the cache and replays a hit. Returns
    /// true when the task is done (`cached`).
    fn try_cache(&mut self, state: &mut RunState, i: usize) -> bool {
        match self.lookup(i) {
            Some((rk, entry)) => self.replay(state, i, rk, entry),
            None => false,
        }
    }

    /// Task `i`'s cache entry under its key at the current head, unless
    /// the cache is off or `--force` names the task.
    fn lookup(&mut self, i: usize) -> Option<(cache::RunKey, cache::Entry)> {
        if self.cache.store.is_none() || self.cache.forced.get(i).copied().unwrap_or(false) {
            return None;
        }
        let head = self.head.clone();
        let rk = self.key_at(i, &head)?;
        let entry = self.cache.store.as_ref()?.get(&rk.key)?.clone();
        Some((rk, entry))
    }

    /// Replays first the hits that fast-forward to their recorded commit
    /// (or change nothing), as long as there are any: a rerun then follows
    /// the order in which an earlier (parallel) run merged, reproducing its
    /// commits without checks or worktrees, whatever the plan's order.
    fn replay_fast_forwards(&mut self, state: &mut RunState) {
        // Fast-forwards only move `self.head`; the branch itself moves once,
        // at the end, by compare-and-swap from where it was (every commit in
        // between passed its gates, so the jump keeps the §5 invariant). A
        // no-op rerun of a large plan then costs one `update-ref`, and state
        // is saved once per pass rather than once per task.
        let ref_head = self.head.clone();
        self.defer_ref = true;
        loop {
            let mut progressed = false;
            for i in 0..self.ctx.plan.tasks.len() {
                if self.stop.is_some() {
                    break;
                }
                if !self.ready(state, i)
                    || state.tasks[i].attempts != 0
                    || self.slots[i].infra != 0
                    || self.slots[i].cache_tried
                {
                    continue;
                }
                let Some((rk, entry)) = self.lookup(i) else {
                    continue;
                };
                if entry.parent.as_ref().is_some_and(|p| *p != self.head) {
                    continue;
                }
                self.slots[i].cache_tried = true;
                progressed |= self.replay(state, i, rk, entry);
            }
            self.save(state);
            if !progressed || self.stop.is_some() {
                break;
            }
        }
        self.defer_ref = false;
        if self.head != ref_head {
            match self
                .ctx
                .git
                .update_ref(&self.ctx.integration_ref, &self.head, Some(&ref_head))
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
    }

    /// Whether task `i` is pending with every dependency done.
    fn ready(&self, state: &RunState, i: usize) -> bool {
        state.tasks[i].status == TaskStatus::Pending
            && self.ctx.plan.tasks[i]
                .dependencies
                .iter()
                .all(|&d| state.tasks[d].status.is_done())
    }

    /// Replays the hit `entry` of task `i` (key `rk`). Returns true when the
    /// task is done (`cached`); false on a miss.
    fn replay(
        &mut self,
        state: &mut RunState,
        i: usize,
        rk: cache::RunKey,
        entry: cache::Entry,
    ) -> bool {
        let head = self.head.clone();
        let task = self.ctx.plan.tasks[i].clone();
        self.next_serial(i);
        let since = Instant::now();
        let mut cost = Cost::default();
        let replayed = if self.defer_ref && entry.parent.as_deref() == Some(head.as_str()) {
            merge::Replay::Done {
                commit: entry.commit.clone(),
                how: "fast_forward",
            }
        } else {
            merge::replay(
                &self.ctx,
                i,
                self.slots[i].serial,
                &entry,
                &head,
                &self.merged_checks,
                &mut cost,
            )
        };
        // Agent gates run on a replay are paid for like merge checks; an
        // unknown cost under a cost budget counts the agent's cap, or stops
        // the run (it is never counted as zero).
        let charged = cost.micro_usd;
        let unknown = cost.unknown;
        if unknown && self.meter.counts_cost() {
            let name = cost.unknown_agent.clone().unwrap_or_else(|| "?".into());
            self.set_stop(
                StopKind::Budget,
                format!(
                    "the cost of agent `{name}`, gating the replay of task `{}`, could not be \
                     read and it has no `cost` cap; a cost budget is set, so the run stops",
                    task.name
                ),
            );
        }
        self.meter.spent.cost_micro_usd += charged;
        let ts = &mut state.tasks[i];
        ts.cost_micro_usd += charged;
        ts.cost_unknown |= unknown;
        ts.duration_ms += since.elapsed().as_millis() as u64;
        match replayed {
            merge::Replay::Done { commit, how } => {
                self.head = commit.clone();
                self.keys[i] = Some(rk.key);
                self.ctx.events.emit(Event::Cached {
                    task: task.name.clone(),
                    key: rk.key.to_hex(),
                    commit,
                    how: how.to_string(),
                });
                let ts = &mut state.tasks[i];
                ts.cache_key = Some(rk.key.to_hex());
                ts.summary = entry.summary.clone();
                ts.commit = Some(self.head.clone());
                ts.reason = None;
                if ts.started_at.is_none() {
                    ts.started_at = Some(crate::run::time::now_rfc3339());
                }
                let title = task.title.clone().unwrap_or_else(|| task.name.clone());
                if let Err(e) = progress::append(
                    &self.ctx.layout.progress,
                    &task.name,
                    &title,
                    entry.summary.as_deref(),
                    &entry.files,
                ) {
                    self.ctx.events.ui().line(&format!("loopc: {e}"));
                }
                self.remember_checks(i);
                self.task_final(state, i, TaskStatus::Cached, None);
                true
            }
            merge::Replay::Miss(reason) => {
                self.ctx.events.emit(Event::CacheMiss {
                    task: task.name.clone(),
                    key: rk.key.to_hex(),
                    reason,
                });
                false
            }
            merge::Replay::Stopped => {
                self.set_stop(StopKind::Interrupted, "interrupted".into());
                false
            }
        }
    }

    /// Records task `i`'s pass in the cache (step 8). `before` is the
    /// integration head its work was merged onto; `self.head` the result.
    fn record(
        &mut self,
        state: &mut RunState,
        i: usize,
        r: &AttemptResult,
        before: &str,
        summary: Option<String>,
        files: Vec<String>,
    ) {
        if self.cache.store.is_none() {
            return;
        }
        let Some(rk) = self.key_at(i, &r.input.base) else {
            return;
        };
        let gated_tree = match self.ctx.git.tree_of(&self.head) {
            Ok(t) => t,
            Err(e) => {
                self.ctx.events.ui().line(&format!("loopc: cache: {e}"));
                return;
            }
        };
        let ts = &mut state.tasks[i];
        ts.cache_key = Some(rk.key.to_hex());
        let entry = cache::Entry {
            format: cache::CACHE_FORMAT_VERSION.to_string(),
            key: rk.key.to_hex(),
            plan: self.ctx.plan.name.clone(),
            task: ts.name.clone(),
            recorded_at: crate::run::time::now_rfc3339(),
            recorded_unix_ms: cache::unix_ms(),
            summary,
            cost_micro_usd: ts.cost_micro_usd,
            cost_unknown: ts.cost_unknown,
            commit: self.head.clone(),
            parent: (self.head != before).then(|| before.to_string()),
            gated_tree,
            files,
            components: rk.components,
        };
        self.keys[i] = Some(rk.key);
        if let Some(store) = self.cache.store.as_mut()
            && let Err(e) = store.record(&self.ctx.git, entry)
        {
            self.ctx.events.ui().line(&format!("loopc: cache: {e}"));
        }
    }

    /// Puts task `i` in a final state and skips its dependents when it is dead.
    fn task_final(
        &mut self,
        state: &mut RunState,
        i: usize,
        status: TaskStatus,
        reason: Option<String>,
    ) {
        let ts = &mut state.tasks[i];
        ts.status = status;
        ts.reason = reason.clone();
        ts.finished_at = Some(crate::run::time::now_rfc3339());
        self.ctx.events.emit(Event::TaskFinished {
            task: ts.name.clone(),
            status: status.as_str().to_string(),
            reason,
        });
        if status.is_dead() {
            self.skip_dependents(state);
        }
    }

    fn skip_dependents(&mut self, state: &mut RunState) {
        // Tasks are in topological order: one forward sweep suffices.
        for j in 0..self.ctx.plan.tasks.len() {
            if state.tasks[j].status != TaskStatus::Pending {
                continue;
            }
            let dead = self.ctx.plan.tasks[j]
                .dependencies
                .iter()
                .find(|&&d| state.tasks[d].status.is_dead());
            if let Some(&d) = dead {
                let why = format!(
                    "dependency `{}` {}",
                    state.tasks[d].name,
                    state.tasks[d].status.as_str()
                );
                let ts = &mut state.tasks[j];
                ts.status = TaskStatus::Skipped;
                ts.reason = Some(why.clone());
                ts.finished_at = Some(crate::run::time::now_rfc3339());
                self.ctx.events.emit(Event::TaskFinished {
                    task: ts.name.clone(),
                    status: "skipped".into(),
                    reason: Some(why),
                });
            }
        }
    }

    fn finish(&mut self, state: &mut RunState) -> i32 {
        let all_done = state.tasks.iter().all(|t| t.status.is_done());
        let (status, code) = match self.stop.as_ref().map(|s| s.0) {
            Some(StopKind::Interrupted) => (RunStatus::Interrupted, exit::INTERRUPTED),
            Some(StopKind::Budget) => (RunStatus::Stopped, exit::BUDGET),
            Some(StopKind::BranchMoved) => (RunStatus::Stopped, exit::USAGE),
            _ if all_done => (RunStatus::Passed, exit::OK),
            _ => (RunStatus::Failed, exit::FAILURE),
        };
        state.status = status;
        state.exit_code = Some(code);
        state.stop_reason = self.stop.as_ref().map(|s| s.1.clone());
        state.finished_at = Some(crate::run::time::now_rfc3339());
        self.save(state);
        self.ctx.events.emit(Event::RunFinished {
            status: status.as_str().to_string(),
            exit_code: code,
            reason: state.stop_reason.clone(),
        });
        code
    }
}

/// The initial state: every task pending.
pub fn initial_state(ctx: &RunCtx, plan_file: &str, head: &str) -> RunState {
    RunState {
        version: state::STATE_VERSION,
        plan: ctx.plan.name.clone(),
        plan_file: plan_file.to_string(),
        integration_branch: ctx.plan.settings.branch.clone(),
        start_commit: head.to_string(),
        head_commit: head.to_string(),
        status: RunStatus::Running,
        stop_reason: None,
        exit_code: None,
        started_at: crate::run::time::now_rfc3339(),
        finished_at: None,
        spent: Default::default(),
        limits: state::Limits::of(&ctx.plan.budget),
        tasks: ctx
            .plan
            .tasks
            .iter()
            .map(|t| TaskState {
                name: t.name.clone(),
                title: t.title.clone(),
                status: TaskStatus::Pending,
                attempts: 0,
                started_at: None,
                finished_at: None,
                duration_ms: 0,
                cost_micro_usd: 0,
                cost_unknown: false,
                summary: None,
                reason: None,
                commit: None,
                worktree: None,
                logs: None,
                cache_key: None,
            })
            .collect(),
    }
}
