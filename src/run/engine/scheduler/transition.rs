//! The scheduler's state transitions as pure functions: the run's state
//! (`state.json`'s [`RunState`] plus the unsaved [`Books`]) and what
//! happened (an attempt started or finished, a cache entry was replayed)
//! give the new state and the [`Action`]s the scheduler then carries out,
//! in order. Nothing here runs git or a process, reads a clock or writes a
//! file: timestamps and elapsed times come in with the event, so every rule
//! (retries, blocks, skips, budgets, the circuit breaker) is tested below
//! without a repository.
//!
//! One function per event, each a match over every outcome (split, the
//! rules of one outcome would be scattered); the books they keep are
//! `books`'s, a replay's transition is `replayed`'s, re-planning a plan
//! fragment's failed task `replan`'s, failures kept across runs
//! `remembered`'s.

use crate::plan::{OnFail, Plan, TaskKind};
use crate::run::engine::budget::Cost;
use crate::run::engine::outcome::Outcome;
use crate::run::store::events::Event;
use crate::state::{self, RunState, RunStatus, TaskState, TaskStatus};

mod books;
mod reasons;
mod remembered;
mod replan;
mod replayed;
pub use books::{Books, Slot};
use reasons::{interrupted_reason, needs_human_reason};
pub use remembered::{RetryFailed, carry_remembered, remembered_key, resume};
pub use replayed::{Replayed, replayed};

/// How many times an attempt that failed for its infrastructure (e.g.
/// `setup`) is retried, uncounted; one more such failure blocks the task.
pub const MAX_INFRA_RETRIES: u32 = 3;

/// Why the run stops starting work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKind {
    /// A budget or the circuit breaker (exit 3).
    Budget,
    /// Ctrl-C, SIGTERM or SIGHUP (exit 130).
    Interrupted,
    /// A task failed whose gate says `on_fail = fail` (exit 1).
    FailedTask,
    /// The integration branch was moved off loopc's work (exit 2).
    BranchMoved,
}

/// What the scheduler must do after a transition, in the order given.
// Actions live for one transition, a handful at a time: boxing the event
// would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Record and show this event.
    Emit(Event),
    /// Record the finished attempt's worktree as kept until `loopc clean`
    /// (docs/running.md), if it still exists.
    KeepWorktree,
    /// Append the task's line to `progress.md`.
    Progress {
        /// The task's title (its name when it has none).
        title: String,
        /// The summary of its work.
        summary: Option<String>,
        /// The paths it changed.
        files: Vec<String>,
    },
    /// Record the attempt's pass in the cache (step 8).
    Record {
        /// The summary of its work.
        summary: Option<String>,
        /// The paths it changed.
        files: Vec<String>,
    },
    /// Gate later merges with the task's command checks too.
    RememberChecks,
    /// Remove the attempt's worktree and task branch (a pass, or a try
    /// set aside for a limit: the rerun starts afresh).
    RemoveWorktree,
    /// The try was set aside for an agent's usage or rate limit: the task
    /// waits until the limit resets (else backs off), within the `wait`
    /// and `time` budgets. The scheduler reads the clocks this needs.
    WaitForLimit(crate::run::engine::outcome::Limited),
}

/// The initial state: every task pending; `now` is the start (RFC 3339).
pub fn initial(plan: &Plan, plan_file: &str, head: &str, now: String) -> RunState {
    RunState {
        version: state::STATE_VERSION,
        run: None,
        plan: plan.name.clone(),
        plan_file: plan_file.to_string(),
        plan_path: None,
        integration_branch: plan.settings.branch.clone(),
        start_commit: head.to_string(),
        head_commit: head.to_string(),
        status: RunStatus::Running,
        stop_reason: None,
        exit_code: None,
        started_at: now,
        finished_at: None,
        spent: Default::default(),
        limits: state::Limits::of(&plan.budget),
        warnings: Vec::new(),
        specs: plan
            .pipeline
            .iter()
            .flat_map(|p| &p.specs)
            .map(|s| state::SpecState {
                file: s.path.display().to_string(),
                stage: s.stage_name().to_string(),
                to: s.next_stage().map(str::to_string),
                status: state::SpecStatus::Pending,
                commit: None,
                reason: None,
            })
            .collect(),
        tasks: plan
            .tasks
            .iter()
            .map(|t| TaskState::pending(t.name.clone(), t.title.clone()))
            .collect(),
        carried: Vec::new(),
    }
}

/// Task `i` cannot start (a REEL spec tree's task that depends on a spec
/// in an earlier stage this run does not work, or one an earlier run
/// blocked under its key): it ends `blocked` for `why` at `now`, and the
/// tasks that depend on it are skipped.
pub fn held(plan: &Plan, state: &mut RunState, i: usize, why: String, now: &str) -> Vec<Action> {
    let mut out = Vec::new();
    finalize(
        plan,
        state,
        i,
        TaskStatus::Blocked,
        Some(why),
        now,
        &mut out,
    );
    out
}

fn is_agent(plan: &Plan, i: usize) -> bool {
    matches!(plan.tasks[i].kind, TaskKind::Agent { .. })
}

/// Whether task `i` is pending with every dependency done.
pub fn ready(plan: &Plan, state: &RunState, i: usize) -> bool {
    state.tasks[i].status == TaskStatus::Pending
        && plan.tasks[i]
            .dependencies
            .iter()
            .all(|&d| state.tasks[d].status.is_done())
}

/// Task `i` starts a try at `now`: counts the attempt (and the iteration,
/// for an agent) and marks it running. Returns the attempt number and
/// which try of it this is (infrastructure retries repeat the number).
pub fn started(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    i: usize,
    now: String,
) -> (u32, u32) {
    let ts = &mut state.tasks[i];
    ts.attempts += 1;
    if is_agent(plan, i) {
        books.meter.spent.iterations += 1;
    }
    ts.status = TaskStatus::Running;
    if ts.started_at.is_none() {
        ts.started_at = Some(now);
    }
    let slot = &mut books.slots[i];
    slot.last_try = match slot.last_try {
        (a, r) if a == ts.attempts => (a, r + 1),
        _ => (ts.attempts, 1),
    };
    (ts.attempts, slot.last_try.1)
}

/// A finished attempt, as the transition sees it: after the merge of a
/// pass (which may have turned it into a failure).
#[derive(Debug, Clone)]
pub struct Finished {
    /// The task's index.
    pub task: usize,
    /// The attempt number.
    pub attempt: u32,
    /// How it ended, merge included.
    pub outcome: Outcome,
    /// What it cost (agent, agent gates, merge checks).
    pub cost: Cost,
    /// Milliseconds it took, when its start was recorded.
    pub elapsed_ms: Option<u64>,
    /// The integration branch head after the merge.
    pub head: String,
    /// Now (RFC 3339), for `finished_at`.
    pub now: String,
    /// Whether Ctrl-C, SIGTERM or SIGHUP arrived.
    pub signalled: bool,
    /// Whether the `time` budget has run out.
    pub past_deadline: bool,
    /// When the attempt ended, in milliseconds from the run's start
    /// (measured where it ran, not when the scheduler got to it).
    pub ended_ms: u64,
    /// When it ended, on the event log's clock (its `work_end_ms`).
    pub work_end_ms: Option<u64>,
    /// Whether the agent (or command) had started: from then on the
    /// attempt counts, and an infrastructure failure after it is a failed
    /// attempt, not one retried for free.
    pub agent_started: bool,
    /// The try's log directory, for its history entry.
    pub logs: Option<String>,
    /// The try's worktree, when it still exists.
    pub worktree: Option<String>,
    /// What the agent's output reported.
    pub agent: Option<state::AgentRecord>,
    /// The fallback agent that ran the attempt, if the task's own did not.
    pub fallback: Option<String>,
    /// The resolver's run on a conflict of the attempt's merge: once its
    /// agent started, one more iteration of the run.
    pub resolver: Option<state::ResolverRecord>,
    /// The task's answerer on the attempt's question, when it ran: one
    /// more iteration; when it answered, the task goes on.
    pub answerer: Option<crate::run::engine::outcome::Answerer>,
    /// The attempt's task branch, when it failed only an agent gate on
    /// the task's last attempt (every command check passed): out of
    /// attempts, the task ends `completed_unreviewed` with it.
    pub unreviewed: Option<String>,
    /// Its `verify` pass passed: the task is already satisfied, with no
    /// agent started (counted in neither `attempts` nor `iterations`).
    pub already_satisfied: bool,
}

/// Task `i`'s attempt finished: counts its cost and outcome, decides
/// retry, block, failure or pass, and skips the dependents of a dead task.
pub fn finished(plan: &Plan, state: &mut RunState, books: &mut Books, f: Finished) -> Vec<Action> {
    let i = f.task;
    let mut out = Vec::new();
    let f = count(plan, books, state, f);
    let ended_ms = f.ended_ms;
    record(plan, state, &f, &mut out);
    let at = End {
        i,
        now: f.now.clone(),
    };
    match f.outcome {
        Outcome::Passed { summary, files, .. } => {
            let status = if f.already_satisfied {
                // No agent ran: the attempt is no attempt of the task's.
                uncount(plan, state, books, i);
                TaskStatus::AlreadySatisfied
            } else {
                TaskStatus::Passed
            };
            let result = (f.head, summary, files);
            passed(plan, state, books, &at, status, result, &mut out)
        }
        Outcome::Failed {
            reason,
            feedback,
            on_fail,
        } => {
            let how = Rejected {
                reason,
                feedback,
                on_fail,
                unreviewed: f.unreviewed.clone(),
            };
            failed(plan, state, books, &at, how, &mut out)
        }
        Outcome::Blocked(why) => {
            use crate::run::engine::attempt::{HANDOFF_BLOCKED, NO_RESULT_BLOCKED};
            if why.starts_with(HANDOFF_BLOCKED) || why.starts_with(NO_RESULT_BLOCKED) {
                remembered::remember_blocked(state, books, i, &why);
            }
            let status = TaskStatus::Blocked;
            finalize(plan, state, i, status, Some(why), &at.now, &mut out);
        }
        Outcome::NeedsHuman(question) if f.answerer.as_ref().is_some_and(|a| a.answered) => {
            let by = f.answerer.map(|a| a.agent).unwrap_or_default();
            answered(state, books, i, question, by);
        }
        Outcome::NeedsHuman(question) => {
            let why = needs_human_reason(&question);
            // Remembered: a rerun without an answer does not ask again.
            remembered::remember(state, books, i, None);
            if let Some(r) = &mut state.tasks[i].remembered {
                r.question = Some(question.clone());
            }
            state.tasks[i].question = Some(question);
            let status = TaskStatus::NeedsHuman;
            finalize(plan, state, i, status, Some(why), &at.now, &mut out);
        }
        Outcome::Limited(l) => {
            // Set aside: counted in neither `attempts`, `iterations` nor
            // the failure streak. Its worktree goes (the rerun starts
            // afresh).
            uncount(plan, state, books, i);
            out.push(Action::RemoveWorktree);
            out.push(Action::WaitForLimit(l));
        }
        Outcome::Infrastructure(why) => infrastructure(plan, state, books, &at, why, &mut out),
        Outcome::Interrupted => {
            let (signalled, past_deadline, agent_started) =
                (f.signalled, f.past_deadline, f.agent_started);
            let reason = interrupted_reason(books, signalled, past_deadline, agent_started);
            if reason.is_none() {
                uncount(plan, state, books, i);
            } else {
                // It counted: a rerun resumes after it.
                remembered::remember(state, books, i, None);
            }
            let status = TaskStatus::Interrupted;
            finalize(plan, state, i, status, reason, &at.now, &mut out);
        }
    }
    books.meter.note_finished(ended_ms, is_agent(plan, i));
    out
}

/// The task and the time an attempt's end is decided for.
struct End {
    /// The task's index in the plan.
    i: usize,
    /// The time of the decision (RFC 3339), for a task that ends.
    now: String,
}

/// Counts what attempt `f` spent (its cost, a resolver's iteration) and
/// turns an infrastructure failure after its agent started into a failed
/// attempt: from then on the attempt counts.
fn count(plan: &Plan, books: &mut Books, state: &mut RunState, mut f: Finished) -> Finished {
    let task = &plan.tasks[f.task];
    books.charge(state, f.task, &f.cost, f.elapsed_ms, f.ended_ms, |name| {
        format!(
            "the cost of task `{}` attempt {} could not be read from agent `{name}` \
             and it has no `cost` cap; a cost budget is set, so the run stops",
            task.name, f.attempt
        )
    });
    // A resolver is an agent run of its own: an iteration, whatever
    // became of the attempt (unless Ctrl-C or SIGTERM cut it off, as for
    // an attempt).
    if f.resolver.as_ref().is_some_and(|r| r.started) && !f.signalled {
        books.meter.spent.iterations += 1;
    }
    // So is an answerer's.
    if f.answerer.is_some() {
        books.meter.spent.iterations += 1;
    }
    // From the moment the agent started, the attempt counts: what fails
    // after it (a commit, a diff, a gate that cannot run, the merge) is a
    // failed attempt, not an infrastructure failure to retry for free.
    if let Outcome::Infrastructure(why) = &f.outcome
        && f.agent_started
    {
        f.outcome = Outcome::Failed {
            reason: why.clone(),
            feedback: format!(
                "loopc could not finish the previous attempt after its agent ran: {why}"
            ),
            on_fail: OnFail::Retry,
        };
    }
    if !matches!(f.outcome, Outcome::Limited(_)) {
        books.slots[f.task].limit_backoffs = 0;
    }
    f
}

/// Records attempt `f` in its task's history and announces its end; keeps
/// the worktree of a failed, blocked or infrastructure-failed attempt.
fn record(plan: &Plan, state: &mut RunState, f: &Finished, out: &mut Vec<Action>) {
    let task = &plan.tasks[f.task];
    let (word, reason) = match &f.outcome {
        Outcome::Passed { summary, .. } if f.already_satisfied => {
            (state::ALREADY_SATISFIED, summary.clone())
        }
        Outcome::Passed { .. } => ("passed", None),
        Outcome::Failed { reason, .. } => ("failed", Some(reason.clone())),
        Outcome::Blocked(why) => ("blocked", Some(why.clone())),
        Outcome::NeedsHuman(q) => ("needs-human", Some(needs_human_reason(q))),
        Outcome::Infrastructure(why) => ("infrastructure", Some(why.clone())),
        Outcome::Limited(l) => (
            "limited",
            Some(format!(
                "agent `{}` hit a usage limit: {}",
                l.agent, l.message
            )),
        ),
        Outcome::Interrupted => ("interrupted", None),
    };
    // A failed or blocked attempt's worktree is kept until `loopc
    // clean` (docs/running.md): recorded so that the next run leaves it
    // alone. So is an infrastructure failure's (what `setup` left there is
    // what to look at); its retry gets a fresh worktree.
    let kept = matches!(
        f.outcome,
        Outcome::Failed { .. }
            | Outcome::Blocked(_)
            | Outcome::NeedsHuman(_)
            | Outcome::Infrastructure(_)
    );
    if kept {
        out.push(Action::KeepWorktree);
    }
    let cost_micro_usd = (!f.cost.unknown).then_some(f.cost.micro_usd);
    state.tasks[f.task].history.push(state::AttemptRecord {
        attempt: f.attempt,
        outcome: word.to_string(),
        reason: reason.clone(),
        cost_micro_usd,
        logs: f.logs.clone(),
        worktree: f.worktree.clone().filter(|_| kept),
        agent: f.agent.clone(),
        fallback: f.fallback.clone(),
        resolver: f.resolver.clone(),
        over_cap: f.cost.over_cap.is_some(),
        capped: f.cost.capped,
    });
    out.push(Action::Emit(Event::AttemptFinished {
        task: task.name.clone(),
        attempt: f.attempt,
        outcome: word.to_string(),
        reason,
        cost_micro_usd,
        agent: f.agent.clone(),
        work_end_ms: f.work_end_ms,
        over_cap: f.cost.over_cap.is_some(),
        capped: f.cost.capped,
    }));
}

/// The attempt passed: the task is `status` (passed, or already
/// satisfied), its streak is over, its result (the head it is merged at,
/// its summary and changed paths) is recorded and its worktree goes.
fn passed(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    at: &End,
    status: TaskStatus,
    (head, summary, files): (String, Option<String>, Vec<String>),
    out: &mut Vec<Action>,
) {
    let task = &plan.tasks[at.i];
    books.meter.spent.consecutive_failures = 0;
    books.meter.breaker_spares_streak = false;
    books.streak.clear();
    let ts = &mut state.tasks[at.i];
    ts.status = status;
    ts.summary = summary.clone();
    ts.commit = Some(head);
    ts.reason = None;
    ts.worktree = None;
    out.push(Action::Progress {
        title: task.title.clone().unwrap_or_else(|| task.name.clone()),
        summary: summary.clone(),
        files: files.clone(),
    });
    out.push(Action::Record { summary, files });
    out.push(Action::RememberChecks);
    out.push(Action::RemoveWorktree);
    finalize(plan, state, at.i, status, None, &at.now, out);
}

/// How a failed attempt failed.
struct Rejected {
    reason: String,
    feedback: String,
    on_fail: OnFail,
    /// The task branch, when only an agent gate rejected the last attempt.
    unreviewed: Option<String>,
}

/// The attempt failed: the streak grows, the feedback is kept for the next
/// attempt, and `on_fail` decides: retry while attempts are left, block,
/// or stop the run. Out of attempts with only an agent gate rejecting, the
/// task is `completed_unreviewed`, its branch recorded.
fn failed(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    at: &End,
    how: Rejected,
    out: &mut Vec<Action>,
) {
    let Rejected {
        reason,
        feedback,
        on_fail,
        unreviewed,
    } = how;
    let i = at.i;
    let task = &plan.tasks[i];
    books.meter.spent.consecutive_failures += 1;
    books.meter.breaker_spares_streak = false;
    if !books.streak.contains(&i) {
        books.streak.push(i);
    }
    books.slots[i].feedback = crate::run::engine::attempt::gate::cut_feedback(feedback);
    // Attempts count afresh after a re-plan (`attempt_base`).
    let used = state.tasks[i]
        .attempts
        .saturating_sub(books.slots[i].attempt_base);
    remembered::remember(state, books, i, Some(&reason));
    match on_fail {
        // An agent gate (a "customer") that says `replan` re-plans at once.
        OnFail::Replan if replan::start(plan, state, books, at, &reason, out) => {}
        OnFail::Retry | OnFail::Replan if used < task.attempts => {
            state.tasks[i].status = TaskStatus::Pending;
            state.tasks[i].reason = Some(reason);
        }
        OnFail::Retry | OnFail::Replan => {
            let why = format!("out of attempts ({used} of {}): {reason}", task.attempts);
            let replans = replan::wanted(plan, i) || on_fail == OnFail::Replan;
            if replans && replan::start(plan, state, books, at, &why, out) {
                return;
            }
            let refused = replans
                .then(|| replan::refused(plan, state, i))
                .flatten()
                .unwrap_or_default();
            books.task_ended_failing(i);
            let why = format!("{why}{refused}");
            let status = match unreviewed {
                Some(branch) => {
                    // Remembered too: a rerun that does not run it again
                    // still shows where its work is.
                    if let Some(r) = &mut state.tasks[i].remembered {
                        r.branch = Some(branch.clone());
                    }
                    state.tasks[i].branch = Some(branch);
                    TaskStatus::CompletedUnreviewed
                }
                None => TaskStatus::Failed,
            };
            finalize(plan, state, i, status, Some(why), &at.now, out);
        }
        OnFail::Block => {
            books.task_ended_failing(i);
            remembered::remember_blocked(state, books, i, &reason);
            finalize(
                plan,
                state,
                i,
                TaskStatus::Blocked,
                Some(reason),
                &at.now,
                out,
            );
        }
        OnFail::Fail => {
            books.set_stop(
                StopKind::FailedTask,
                format!(
                    "task `{}` failed and its gate says on_fail = fail",
                    task.name
                ),
            );
            finalize(
                plan,
                state,
                i,
                TaskStatus::Failed,
                Some(reason),
                &at.now,
                out,
            );
        }
    }
}

/// Task `i`'s answerer agent `by` answered its attempt's `question`
/// (recorded in its answers file): the task goes on in this run, its next
/// attempt given the answer; the attempt that asked does not count
/// against `attempts` (docs/language.md "Answers without a person").
fn answered(state: &mut RunState, books: &mut Books, i: usize, question: String, by: String) {
    let ts = &mut state.tasks[i];
    ts.status = TaskStatus::Pending;
    ts.reason = Some(crate::run::engine::agent::handoff::with_reason(
        &format!("agent `{by}` answered its question"),
        &question,
    ));
    ts.question = Some(question);
    ts.answered_by = Some(by);
    books.slots[i].attempt_base += 1;
    books.slots[i].feedback.clear();
}

/// An infrastructure failure: not counted against `attempts` or
/// `iterations`; retried up to [`MAX_INFRA_RETRIES`] times, then blocked.
fn infrastructure(
    plan: &Plan,
    state: &mut RunState,
    books: &mut Books,
    at: &End,
    why: String,
    out: &mut Vec<Action>,
) {
    let i = at.i;
    uncount(plan, state, books, i);
    books.slots[i].infra += 1;
    if books.slots[i].infra > MAX_INFRA_RETRIES {
        let why = format!(
            "{} infrastructure failures ({MAX_INFRA_RETRIES} retries), the last: {why}",
            books.slots[i].infra
        );
        finalize(plan, state, i, TaskStatus::Blocked, Some(why), &at.now, out);
    } else {
        state.tasks[i].status = TaskStatus::Pending;
        state.tasks[i].reason = Some(why);
    }
}

/// Takes back the attempt (and iteration) counted when task `i` started.
fn uncount(plan: &Plan, state: &mut RunState, books: &mut Books, i: usize) {
    state.tasks[i].attempts -= 1;
    if is_agent(plan, i) {
        books.meter.spent.iterations = books.meter.spent.iterations.saturating_sub(1);
    }
}

/// Puts task `i` in a final state at `now` and, when it is dead, skips the
/// pending tasks that depend on a dead one.
fn finalize(
    plan: &Plan,
    state: &mut RunState,
    i: usize,
    status: TaskStatus,
    reason: Option<String>,
    now: &str,
    out: &mut Vec<Action>,
) {
    let ts = &mut state.tasks[i];
    ts.status = status;
    ts.reason = reason.clone();
    ts.finished_at = Some(now.to_string());
    if status.is_done() {
        // Its work is on the branch: nothing of its failures is owed.
        ts.remembered = None;
    }
    out.push(Action::Emit(Event::TaskFinished {
        task: ts.name.clone(),
        status: status.as_str().to_string(),
        reason,
    }));
    if !status.is_dead() {
        return;
    }
    // Tasks are in topological order: one forward sweep suffices.
    for j in 0..plan.tasks.len() {
        if state.tasks[j].status != TaskStatus::Pending {
            continue;
        }
        let dead = plan.tasks[j]
            .dependencies
            .iter()
            .find(|&&d| state.tasks[d].status.is_dead());
        if let Some(&d) = dead {
            let dep = &state.tasks[d];
            // Not run at all (its failures under this key are remembered):
            // said as `--dry-run` says it.
            let how = if dep
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(remembered::NOT_RUN))
            {
                "is not run"
            } else {
                match dep.status {
                    TaskStatus::NeedsHuman => "waits for an answer (needs-human)",
                    TaskStatus::CompletedUnreviewed => {
                        "ended completed_unreviewed (an agent gate did not accept its work)"
                    }
                    _ => dep.status.as_str(),
                }
            };
            let why = format!("dependency `{}` {how}", dep.name);
            let ts = &mut state.tasks[j];
            ts.status = TaskStatus::Skipped;
            ts.reason = Some(why.clone());
            ts.finished_at = Some(now.to_string());
            out.push(Action::Emit(Event::TaskFinished {
                task: ts.name.clone(),
                status: "skipped".into(),
                reason: Some(why),
            }));
        }
    }
}

#[cfg(test)]
mod tests;
