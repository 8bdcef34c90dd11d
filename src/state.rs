//! The document of `.loopc/state.json` (format version 3, `docs/state.md`):
//! the run's and each task's status, counters and budget, with their serde
//! form. `loopc run` writes it (`run::store::state`) and `loopc graph
//! --state` colours tasks by it, so it lives below both: neither `run` nor
//! `render` reaches into the other for it.

use serde::{Deserialize, Serialize};

/// The state file format this loopc writes. It reads this one and every
/// older one (each version only added to the one before).
pub const STATE_VERSION: u32 = 3;

/// A task's state (docs/running.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started yet.
    Pending,
    /// An attempt is running (or waiting to merge).
    Running,
    /// Its work is on the integration branch.
    Passed,
    /// Replayed from the cache.
    Cached,
    /// Out of attempts, or stopped the run (`on_fail = fail`).
    Failed,
    /// Blocked by its handoff, a gate's `on_fail = block`, or repeated
    /// infrastructure failures.
    Blocked,
    /// A dependency failed, was blocked or skipped.
    Skipped,
    /// Its attempt was killed by an interrupt or the `time` budget.
    Interrupted,
    /// Its handoff said `needs_human`: blocked until a person answers its
    /// question (`loopc answer`). Added in state format version 2.
    #[serde(rename = "needs-human")]
    NeedsHuman,
    /// Out of attempts, its last attempt having passed every command check
    /// and failed only an agent gate: its work is kept on its task branch
    /// ([`TaskState::branch`]) for a person to merge by hand. Dependents
    /// are skipped, as for a failure. Added in state format version 3.
    #[serde(rename = "completed_unreviewed")]
    CompletedUnreviewed,
    /// `verify`: its `accept` passed on its starting commit, so it passed
    /// with no agent and no change (docs/running.md, "Already satisfied").
    /// Added in state format version 3.
    AlreadySatisfied,
}

impl TaskStatus {
    /// The word used in state, events and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Running => "running",
            TaskStatus::Passed => "passed",
            TaskStatus::Cached => "cached",
            TaskStatus::Failed => "failed",
            TaskStatus::Blocked => "blocked",
            TaskStatus::Skipped => "skipped",
            TaskStatus::Interrupted => "interrupted",
            TaskStatus::NeedsHuman => "needs-human",
            TaskStatus::CompletedUnreviewed => "completed_unreviewed",
            TaskStatus::AlreadySatisfied => ALREADY_SATISFIED,
        }
    }

    /// The status as a person reads it: [`TaskStatus::as_str`], but
    /// `already satisfied` in words ([`shown_word`]).
    pub fn shown(self) -> &'static str {
        shown_word(self.as_str())
    }

    /// Passed, cached or already satisfied: dependents may start.
    pub fn is_done(self) -> bool {
        matches!(
            self,
            TaskStatus::Passed | TaskStatus::Cached | TaskStatus::AlreadySatisfied
        )
    }

    /// Failed, blocked (needing a human too) or skipped: dependents are
    /// skipped.
    pub fn is_dead(self) -> bool {
        matches!(
            self,
            TaskStatus::Failed
                | TaskStatus::Blocked
                | TaskStatus::Skipped
                | TaskStatus::NeedsHuman
                | TaskStatus::CompletedUnreviewed
        )
    }
}

/// The word of [`TaskStatus::AlreadySatisfied`] in state.json and
/// events, and the outcome of the attempt that found it so.
pub const ALREADY_SATISFIED: &str = "already_satisfied";

/// A status or outcome word of state.json or the event log as a person
/// reads it: `already_satisfied` is `already satisfied`; every other word
/// is itself.
pub fn shown_word(word: &str) -> &str {
    if word == ALREADY_SATISFIED {
        "already satisfied"
    } else {
        word
    }
}

/// The whole run's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The run is going on (or loopc was killed while it was).
    Running,
    /// Every task passed or was cached (exit 0).
    Passed,
    /// Some task failed, was blocked or skipped (exit 1).
    Failed,
    /// A budget or the circuit breaker stopped it (exit 3).
    Stopped,
    /// Ctrl-C or SIGTERM (exit 130).
    Interrupted,
}

impl RunStatus {
    /// The word used in state, events and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Passed => "passed",
            RunStatus::Failed => "failed",
            RunStatus::Stopped => "stopped",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// What the run has spent so far (budget counters).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spent {
    /// Agent attempts started (counted attempts only).
    pub iterations: u32,
    /// Sum of reported (or capped) agent costs, in micro-dollars.
    pub cost_micro_usd: u64,
    /// Wall-clock milliseconds since the run started (monotonic clock).
    pub elapsed_ms: u64,
    /// Failed attempts in a row (the circuit breaker's counter).
    pub consecutive_failures: u32,
    /// Milliseconds of waiting for agents' usage or rate limits, planned
    /// so far (absent while none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waited_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The run's budget (docs/language.md `budget`), recorded next to what was spent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// `iterations`: agent attempts across the run.
    pub iterations: Option<u32>,
    /// `cost`, in micro-dollars.
    pub cost_micro_usd: Option<u64>,
    /// `time`, in milliseconds.
    pub time_ms: Option<u64>,
    /// `failures`: failed attempts in a row that stop the run (0: off).
    pub failures: u32,
    /// `wait`, in milliseconds (absent when not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

impl Limits {
    /// The limits of `budget`.
    pub fn of(budget: &crate::plan::Budget) -> Limits {
        Limits {
            iterations: budget.iterations,
            cost_micro_usd: budget.cost,
            time_ms: budget
                .time
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            failures: budget.failures,
            wait_ms: budget
                .wait
                .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// One task's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// The task's name.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Its state.
    pub status: TaskStatus,
    /// Attempts counted against `attempts` so far.
    pub attempts: u32,
    /// When its first attempt started (RFC 3339).
    pub started_at: Option<String>,
    /// When it reached a final state (RFC 3339).
    pub finished_at: Option<String>,
    /// Milliseconds spent in its attempts and merges (monotonic clock).
    pub duration_ms: u64,
    /// Sum of its attempts' costs in micro-dollars (known costs only).
    pub cost_micro_usd: u64,
    /// Whether any attempt's cost could not be read.
    pub cost_unknown: bool,
    /// The last summary (handoff or structured result).
    pub summary: Option<String>,
    /// Why it is failed, blocked or skipped.
    pub reason: Option<String>,
    /// The integration branch commit its work was merged at.
    pub commit: Option<String>,
    /// The last attempt's worktree (kept after a failure).
    pub worktree: Option<String>,
    /// The last attempt's log directory.
    pub logs: Option<String>,
    /// The run-time cache key its result was replayed from or recorded
    /// under (absent with `--no-cache` or before it passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
    /// One entry per attempt that ended in this run, in order (absent when
    /// none did; added in a later loopc, so older files lack it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<AttemptRecord>,
    /// While it waits for an agent's usage or rate limit: when it tries
    /// again (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_until: Option<String>,
    /// While it waits: the limited agent it waits for (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// `needs-human`: the question its agent asked (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// For a task a plan fragment added during the run: the task that
    /// wrote the fragment (`expands`). Absent for the plan's own tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded_from: Option<String>,
    /// For a task a plan fragment added: the names of its dependencies
    /// (the plan's own tasks' are in the plan). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,
    /// For a task with `expands` whose plan fragment was added to the
    /// plan: the commit the fragment was read from (the task's own commit,
    /// before its merge; a replayed task's recorded one). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment_commit: Option<String>,
    /// The task's gates this run did not run (`--skip-gate`): its result
    /// is not checked by them (a later run without the flag runs just
    /// those on it). Absent when none was skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked_by: Vec<String>,
    /// For a task with `expands`: each re-plan of its fragment in this run,
    /// in order (version 3; docs/language.md "Re-planning"). Absent when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replans: Vec<ReplanRecord>,
    /// For a task that re-planning set going again: the producing task
    /// (version 3). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replanned_by: Option<String>,
    /// The agent that answered the task's last `needs_human` question in
    /// this run (`answerer`, version 3); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// For a `completed_unreviewed` task: the task branch that holds its
    /// last attempt's work (`git merge <branch>` takes it). Absent
    /// otherwise. Added in state format version 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// What earlier attempts of the task under its key left for the next
    /// one: carried from run to run until the task passes or its key
    /// changes (docs/resilience.md "Failures are remembered"; version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remembered: Option<Remembered>,
    /// Of `attempts`, those spent by earlier runs under the same key (the
    /// run resumed the task at its next attempt; version 3). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub earlier_attempts: u32,
}

/// One re-plan of a producing task's fragment (state.json version 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplanRecord {
    /// The fragment's task whose failure asked for it.
    pub task: String,
    /// Why that task failed.
    pub reason: String,
    /// When (RFC 3339).
    pub at: String,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// A task's failed attempts under one key, kept across runs (state
/// format version 3): a rerun resumes the task at its next attempt with
/// the last failure's feedback, and does not run a task that ran out of
/// attempts under the same key unless `--retry-failed` says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// The key the attempts were made under (hex): the task's run-time
    /// key with what judges its attempts (its gates, `changes`,
    /// `timeout`); docs/resilience.md.
    pub key: String,
    /// Attempts spent under that key, counted against `attempts`.
    pub attempts: u32,
    /// The last failed attempt's feedback (what the next attempt is told).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Why the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the task ended `completed_unreviewed`: its branch (a rerun
    /// that does not run it again ends it so, with the branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the task ended `needs-human`: its question, not answered yet
    /// (a rerun under the same key asks no agent again: it ends the task
    /// `needs-human` with it; an answer changes the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The task ended `blocked` (a gate's `on_fail = block`, or its
    /// handoff said `blocked`): no more attempts under this key, so a
    /// rerun under it does not run it again unless `--retry-failed` (added
    /// to version 3).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked: bool,
}

impl TaskState {
    /// A task called `name` (titled `title`) that has not started.
    pub fn pending(name: String, title: Option<String>) -> TaskState {
        TaskState {
            name,
            title,
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
            history: Vec::new(),
            waiting_until: None,
            waiting_for: None,
            question: None,
            expanded_from: None,
            dependencies: Vec::new(),
            fragment_commit: None,
            not_checked_by: Vec::new(),
            replans: Vec::new(),
            replanned_by: None,
            answered_by: None,
            branch: None,
            remembered: None,
            earlier_attempts: 0,
        }
    }
}

/// One ended attempt of a task, as recorded in state.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// The attempt number.
    pub attempt: u32,
    /// `passed`, `failed`, `blocked`, `infrastructure` or `interrupted`.
    pub outcome: String,
    /// Why, for anything but a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it cost in micro-dollars, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    /// The try's log directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<String>,
    /// The try's worktree, kept until `loopc clean`, for an attempt that
    /// failed or was blocked (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// What the agent's output reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRecord>,
    /// The fallback agent that ran it because the task's own agent was
    /// usage or rate limited (absent: the task's own agent; version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The resolver run on a conflict of its merge (absent when none ran;
    /// added within version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolver: Option<ResolverRecord>,
    /// The agent (or an agent gate) reported more than its per-attempt
    /// `cost` cap (version 3; absent when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_cap: bool,
    /// The agent (or an agent gate) reported no cost, so its `cost` cap
    /// was charged (version 3, added later; absent when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
}

/// A resolver's run on a conflict of an attempt's merge (docs/running.md
/// "A resolver for merge conflicts"), in state.json and the event log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolverRecord {
    /// The resolver agent's name.
    pub agent: String,
    /// The paths that conflicted.
    pub conflicts: Vec<String>,
    /// The tasks whose work on the integration branch the change
    /// conflicted with (empty when no task of the run made it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<String>,
    /// Whether its resolution passed and was merged.
    pub resolved: bool,
    /// Why it was refused (absent when resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The integration branch commit of the resolution, when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// What the resolver and the checks of its resolution cost, in
    /// micro-dollars, when known (part of the attempt's cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    /// Its log directory (`<attempt's logs>/resolver`).
    pub logs: String,
    /// Whether its agent started (it then counts as an iteration).
    #[serde(skip)]
    pub started: bool,
}

/// The state file's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Format version ([`STATE_VERSION`]).
    pub version: u32,
    /// The run's number: 1 for the repository's first run, then one more
    /// than the highest an earlier run left. It names the run's worktrees
    /// and task branches (`<task>.r<run>-a<attempt>`) and, once a later
    /// run starts, its logs' directory `earlier-logs/<run>/`. Absent in
    /// files of earlier versions (and before the run started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// The plan's name.
    pub plan: String,
    /// The plan file as given.
    pub plan_file: String,
    /// The plan file relative to the repository's top (`a/plan.loop`):
    /// a run of another plan file onto the same integration branch is
    /// said. Absent in files of earlier versions (added to version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_path: Option<String>,
    /// The integration branch.
    pub integration_branch: String,
    /// Its head when the run started.
    pub start_commit: String,
    /// Its head now.
    pub head_commit: String,
    /// The run's status.
    pub status: RunStatus,
    /// Why it stopped early (budget, circuit breaker, interrupt, `on_fail = fail`).
    pub stop_reason: Option<String>,
    /// The exit status, once finished.
    pub exit_code: Option<i32>,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// When it finished (RFC 3339).
    pub finished_at: Option<String>,
    /// Budget counters.
    pub spent: Spent,
    /// The budget they count against (absent in older files).
    #[serde(default)]
    pub limits: Limits,
    /// Tasks in the plan's topological order.
    pub tasks: Vec<TaskState>,
    /// What the person must know about the run beyond the tasks' results:
    /// refs that are not loopc's and changed during the run
    /// ([`crate::run::engine::guard`]). Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// For a REEL spec tree: the specs of the worked stages and whether
    /// each moved to its next stage (`docs/reel.md`). Absent for other plans.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<SpecState>,
    /// Tasks of earlier runs that this run did not include (a run of
    /// another plan file, or of some tasks only) and that remember failures
    /// or a question ([`TaskState::remembered`]) or wait for a usage limit
    /// (`waiting_until`): kept as those runs left them for the run that
    /// includes them again (docs/state.md). Absent when empty (version 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<TaskState>,
}

impl RunState {
    /// Each task's state by its name (names are unique in a plan), for
    /// lookups by name that stay linear over a whole plan.
    pub fn tasks_by_name(&self) -> std::collections::HashMap<&str, &TaskState> {
        self.tasks.iter().map(|t| (t.name.as_str(), t)).collect()
    }
}

/// What became of one spec of a REEL spec tree in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecState {
    /// The spec file as read (`specs/inflight/auth.md`).
    pub file: String,
    /// Its stage when the run read it (`inflight`).
    pub stage: String,
    /// The stage it moves to when its tasks have passed (`review`); absent
    /// in the last stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// `pending`, `advanced` or `stayed`.
    pub status: SpecStatus,
    /// The integration branch commit that moved it (`advanced`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why it stayed (`stayed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether a spec moved on (see [`SpecState`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecStatus {
    /// Its tasks have not all passed yet.
    Pending,
    /// A commit on the integration branch moved it to its next stage.
    Advanced,
    /// The run ended with it in its stage (see [`SpecState::reason`]).
    Stayed,
}

impl SpecStatus {
    /// The word used in state.json and the summary.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecStatus::Pending => "pending",
            SpecStatus::Advanced => "advanced",
            SpecStatus::Stayed => "stayed",
        }
    }
}

/// Token counts an agent reported; absent counts were not reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens (Claude: not read from the cache; Codex: all input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Claude: input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Claude: input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Codex: input tokens served from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
}

impl Usage {
    /// Whether no count was reported.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

/// What state.json and the event log record of an agent's report, per
/// attempt (fields absent when the agent did not report them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// Claude's `session_id`, Codex's `thread_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Turns the agent took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u64>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token counts.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: Usage,
    /// The HTTP status of a failed API call (Claude).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<u16>,
    /// The cost the agent reported, in micro-dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    /// The kind of error it reported (Claude's result `subtype`, or its
    /// `terminal_reason` or `api_error` for an error result; Codex's
    /// `turn.failed` or `error`; the error type of the other CLIs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool calls the agent was refused (Claude's
    /// `permission_denials`), each as `Tool detail`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permission_denials: Vec<String>,
}
