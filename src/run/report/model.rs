//! The report's document: what `loopc report --json` prints and what the
//! HTML page draws (format version [`REPORT_VERSION`], docs/report.md).
//! Money is in integer micro-dollars, times in milliseconds since the run
//! started (the events' `elapsed_ms` clock) or RFC 3339.

use crate::state::{AgentRecord, Limits, ResolverRecord, TaskStatus};
use serde::Serialize;

/// The report format this loopc writes. Later versions only add fields.
pub const REPORT_VERSION: u32 = 2;

/// One run's report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Format version ([`REPORT_VERSION`]).
    pub version: u32,
    /// The run's number (absent for runs of loopc versions that did not
    /// number them).
    pub run: Option<u32>,
    /// Whether this is the last run (`.loopc/state.json`'s).
    pub last: bool,
    /// Where the run's facts came from: `state` (state.json), `saved
    /// state` (the copy in `earlier-logs/<run>/`) or `events` (the event
    /// log alone: an earlier run of a loopc that kept no copy).
    pub source: String,
    /// The plan's name.
    pub plan: String,
    /// The plan file as the run was given it.
    pub plan_file: String,
    /// The run's status (`passed`, `failed`, `stopped`, `interrupted`,
    /// `running`, or `killed` when it says running but no loopc runs it).
    pub status: String,
    /// Its exit status, once it ended.
    pub exit_code: Option<i32>,
    /// Why it stopped early.
    pub stop_reason: Option<String>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339).
    pub finished_at: Option<String>,
    /// How long it went on (monotonic clock).
    pub elapsed_ms: u64,
    /// Time planned for waiting for agents' usage limits.
    pub waited_ms: u64,
    /// Tasks at once.
    pub parallel: Option<u32>,
    /// The integration branch.
    pub integration_branch: String,
    /// Its head when the run started.
    pub start_commit: String,
    /// Its head when the run ended (or now, while it runs).
    pub head_commit: String,
    /// Where the branch points now (absent: it is gone).
    pub branch_now: Option<String>,
    /// Tasks by status.
    pub counts: Counts,
    /// Agent attempts counted against `iterations`.
    pub agent_attempts: u32,
    /// What the run cost.
    pub cost: CostSummary,
    /// The budget the run had.
    pub limits: Limits,
    /// Every task, in the plan's order.
    pub tasks: Vec<TaskReport>,
    /// Every attempt, check, merge and wait against time.
    pub timeline: Timeline,
    /// Each cost as it was charged, in order.
    pub cost_series: Vec<CostPoint>,
    /// What the run left for a person.
    pub left: Left,
    /// About the report itself (the plan could not be read for the graph, …).
    pub notes: Vec<String>,
}

/// Tasks by status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Tasks in the run.
    pub tasks: usize,
    /// Passed in this run.
    pub passed: usize,
    /// Replayed from the cache.
    pub cached: usize,
    /// Failed.
    pub failed: usize,
    /// `completed_unreviewed`: out of attempts with only an agent gate
    /// rejecting; the work waits on its branch (added in version 2).
    pub unreviewed: usize,
    /// Blocked (and waiting for a person's answer).
    pub blocked: usize,
    /// Skipped: a dependency did not pass.
    pub skipped: usize,
    /// Not run (pending, interrupted, or running still).
    pub not_run: usize,
}

/// The run's cost against its `cost` budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CostSummary {
    /// What was charged (reported costs, and caps for unreported ones).
    pub spent_micro_usd: u64,
    /// Whether some cost could not be read and had no cap to stand for it.
    pub unknown: bool,
    /// The `cost` budget.
    pub budget_micro_usd: Option<u64>,
    /// Whether the spending went past the budget.
    pub over_budget: bool,
}

/// One task of the run.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    /// Its name.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// Its status at the end of the run.
    pub status: TaskStatus,
    /// Attempts counted against `attempts`.
    pub attempts: u32,
    /// Its `attempts` (when the plan could be read).
    pub max_attempts: Option<u32>,
    /// Its direct dependencies (when the plan could be read).
    pub dependencies: Vec<String>,
    /// Time in its attempts and merges.
    pub duration_ms: u64,
    /// Its attempts' costs.
    pub cost_micro_usd: u64,
    /// Whether some attempt's cost is unknown.
    pub cost_unknown: bool,
    /// The last summary.
    pub summary: Option<String>,
    /// Why it did not pass.
    pub reason: Option<String>,
    /// The integration commit its work was merged at.
    pub commit: Option<String>,
    /// The cache key it was replayed from or recorded under.
    pub cache_key: Option<String>,
    /// How a replay from the cache applied (`fast_forward`, `replay`, …).
    pub cached_how: Option<String>,
    /// Its agent's question, when it waits for a person.
    pub question: Option<String>,
    /// For a `completed_unreviewed` task: the task branch holding its
    /// work, to merge by hand (added in version 2).
    pub branch: Option<String>,
    /// The task whose plan fragment added it.
    pub expanded_from: Option<String>,
    /// Attempts earlier runs spent on it under its key (state.json's
    /// `earlier_attempts`; 0 when none, then absent: added in version 2).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub earlier_attempts: u32,
    /// The gates `--skip-gate` took off it in this run (state.json's
    /// `not_checked_by`; absent when none: added in version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked_by: Vec<String>,
    /// Every try, in order.
    pub tries: Vec<TryReport>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One try of a task: an attempt, or an infrastructure retry of one.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TryReport {
    /// The attempt number.
    pub attempt: u32,
    /// Which try of the attempt (2, 3… for infrastructure retries).
    pub retry: Option<u32>,
    /// `passed`, `failed`, `blocked`, `infrastructure`, `limited`,
    /// `needs-human`, `interrupted`, or `running`.
    pub outcome: String,
    /// Why, for anything but a pass.
    pub reason: Option<String>,
    /// What it cost, when known.
    pub cost_micro_usd: Option<u64>,
    /// How its cost is to be read: `unknown`, `capped` (not reported:
    /// its agent's `cost` cap was charged) or `over cap` (reported above
    /// the cap); absent when it is a plain reported cost.
    pub cost_mark: Option<String>,
    /// The agent that ran it (the task's, or `fallback`).
    pub agent_name: Option<String>,
    /// The fallback agent that ran it instead of the task's own.
    pub fallback: Option<String>,
    /// What the agent's output reported.
    pub agent: Option<AgentRecord>,
    /// The slot it ran in.
    pub slot: Option<u32>,
    /// When it started.
    pub start_ms: Option<u64>,
    /// When it ended (after its merge).
    pub end_ms: Option<u64>,
    /// Its log directory.
    pub logs: Option<String>,
    /// Its worktree, kept for a failed try.
    pub worktree: Option<String>,
    /// The summary its handoff gave.
    pub summary: Option<String>,
    /// The feedback it was given (the previous attempt's).
    pub feedback: Option<Text>,
    /// A command task's output, or `setup`'s.
    pub output: Vec<Named>,
    /// Its checks' output: `accept`, gates, and the checks run again on
    /// its merge.
    pub gates: Vec<Named>,
    /// Its diff against its base.
    pub diff: Option<Text>,
    /// A resolver's run on a conflict of its merge.
    pub resolver: Option<ResolverRecord>,
}

/// A log file's text, cut when it is long.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Text {
    /// The file.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// What is shown: the whole file, or its start or end when `cut`.
    pub text: String,
    /// Whether `text` is only part of the file.
    pub cut: bool,
}

/// A named log: a gate's (`tests`, `merge tests`) or an output's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// What it is the log of.
    pub name: String,
    /// Its text.
    pub log: Text,
}

/// Every attempt, check, merge, resolver session and wait against time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    /// The run's length on the `elapsed_ms` clock.
    pub end_ms: u64,
    /// The rows: slots first, then the coordinator's, then waits.
    pub lanes: Vec<Lane>,
    /// The bars, each on a lane.
    pub bars: Vec<Bar>,
}

/// A row of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lane {
    /// `slot`, `coordinator` (merges, resolvers, replays) or `wait`.
    pub kind: String,
    /// Its label (`slot 1`).
    pub label: String,
}

/// A bar on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bar {
    /// Its lane's index.
    pub lane: usize,
    /// `attempt` (a whole try), a phase of one (`setup`, `agent`,
    /// `command`, `commit`, `gate`, `queued` — done, waiting for the
    /// coordinator —, `merge`, `merge gate`, `resolve`), `replay` (a
    /// cache replay), `advance` (a spec's move) or `wait` (a usage limit).
    pub kind: String,
    /// The task.
    pub task: String,
    /// The attempt (0 for replays and moves).
    pub attempt: u32,
    /// What it shows (`gate tests`).
    pub label: String,
    /// Start.
    pub start_ms: u64,
    /// End.
    pub end_ms: u64,
    /// For an `attempt` bar: the try's outcome.
    pub outcome: Option<String>,
}

/// One cost charged, with the run's total after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CostPoint {
    /// When (its attempt's end).
    pub at_ms: u64,
    /// The task.
    pub task: String,
    /// The attempt.
    pub attempt: u32,
    /// Its cost (absent: unknown).
    pub cost_micro_usd: Option<u64>,
    /// How to read it (see [`TryReport::cost_mark`]).
    pub cost_mark: Option<String>,
    /// The run's known total after it.
    pub cumulative_micro_usd: u64,
    /// Whether the total is past the `cost` budget.
    pub over_budget: bool,
}

/// What the run left for a person.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Left {
    /// Worktrees of failed or blocked tries, kept until `loopc clean`.
    pub kept_worktrees: Vec<Kept>,
    /// Questions waiting for `loopc answer`.
    pub questions: Vec<Question>,
    /// Tasks that failed with every attempt used.
    pub out_of_attempts: Vec<TaskNote>,
    /// `completed_unreviewed` tasks: their work waits on a branch for a
    /// person (added in version 2).
    pub unreviewed: Vec<Unreviewed>,
    /// Other tasks that did not pass (failed, blocked, skipped, not run).
    pub not_passed: Vec<TaskNote>,
    /// Tasks waiting for an agent's usage limit when the run ended.
    pub waiting: Vec<TaskNote>,
    /// Warnings: refs changed that are not loopc's, unknown costs.
    pub warnings: Vec<String>,
}

/// A `completed_unreviewed` task's work, left for a person to merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreviewed {
    /// The task.
    pub task: String,
    /// The task branch holding its last attempt's work.
    pub branch: String,
    /// The command that takes it by hand: `git merge <branch>`.
    pub merge: String,
    /// Why it did not pass (the agent gate's rejection).
    pub reason: Option<String>,
}

/// A kept worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// The task.
    pub task: String,
    /// The attempt.
    pub attempt: u32,
    /// The worktree.
    pub path: String,
    /// Whether it is still there.
    pub exists: bool,
}

/// A question a task's agent asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// The task.
    pub task: String,
    /// The question.
    pub question: String,
    /// Whether it has been answered since (the next run gives the answer).
    pub answered: bool,
}

/// A task and what to say about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskNote {
    /// The task.
    pub task: String,
    /// Its status.
    pub status: TaskStatus,
    /// Why (its reason, or until when it waits).
    pub reason: Option<String>,
}
