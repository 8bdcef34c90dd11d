//! What the rooms of the engine share about an attempt: what the
//! coordinator hands it ([`AttemptInput`]), how it ended ([`Outcome`],
//! [`AttemptResult`], [`Limited`]) and the stop signal ([`stopping`]). It
//! lies below every room that uses it: the attempt makes these, the
//! scheduler, the pool, the guard and the landing of work read them.

use crate::plan::{Agent, OnFail};
use crate::run::engine::agent::report;
use crate::run::engine::budget::Cost;
use crate::run::engine::context::AttemptFiles;
use crate::run::engine::guard;
use crate::run::store::layout;
use crate::run::sys::process::Control;
use std::path::PathBuf;
use std::sync::Arc;

/// What the coordinator hands an attempt.
#[derive(Debug, Clone)]
pub struct AttemptInput {
    /// Index of the task in the plan.
    pub task: usize,
    /// Attempt number (1-based) shown as `LOOP_ATTEMPT`.
    pub attempt: u32,
    /// The try (run, attempt, retry): names its worktree and task branch.
    pub id: layout::TryId,
    /// Which try of `attempt` this is: 1, then 2… for infrastructure
    /// retries (names the log directory, [`layout::log_name`]).
    pub retry: u32,
    /// The integration branch head the worktree starts from.
    pub base: String,
    /// The previous attempt's feedback (empty on the first).
    pub feedback: String,
    /// progress.md as of the start.
    pub progress: String,
    /// The fallback agent that takes this attempt because the task's own
    /// agent is usage or rate limited (`None`: the task's own agent).
    pub agent: Option<Arc<Agent>>,
    /// A prompt section loopc adds for this task, after people's answers:
    /// what it expects of the plan fragment of a task that expands
    /// ([`crate::run::engine::expand::Growth::prompt_section`]); empty otherwise.
    pub instructions: String,
    /// Whether the attempt verifies first (`verify`, docs/running.md
    /// "Already satisfied: `verify`"): the task's `accept` runs on `base`
    /// before its agent, and a pass there ends the attempt already
    /// satisfied. Only until one verification reached a verdict in the run.
    pub verify: bool,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Committed and every check passed; ready to merge.
    Passed {
        /// The task branch's commit (equal to `base` when nothing changed).
        commit: String,
        /// Summary from the handoff or structured result.
        summary: Option<String>,
        /// Paths changed relative to the base.
        files: Vec<String>,
    },
    /// The attempt failed; `on_fail` says what follows.
    Failed {
        /// One line.
        reason: String,
        /// Feedback for the next attempt.
        feedback: String,
        /// `retry`, `block` or `fail`.
        on_fail: OnFail,
    },
    /// The task is blocked (handoff `blocked`, gate `on_fail = block`).
    Blocked(String),
    /// The handoff said `needs_human`: the task waits for a person's
    /// answer to this question (`loopc answer`).
    NeedsHuman(String),
    /// An infrastructure failure (worktree, `setup`): retried, not counted.
    Infrastructure(String),
    /// The agent (or an agent gate) hit a usage or rate limit: set aside,
    /// not counted; run again once the limit resets.
    Limited(Limited),
    /// Killed because the run is stopping.
    Interrupted,
}

/// The full result of one attempt.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    /// What was asked.
    pub input: AttemptInput,
    /// How it ended.
    pub outcome: Outcome,
    /// What it cost (agent and agent gates).
    pub cost: Cost,
    /// Its worktree.
    pub worktree: PathBuf,
    /// Its task branch.
    pub branch: String,
    /// Its files (logs, handoff, diff).
    pub files: Option<AttemptFiles>,
    /// Whether the agent (or command) was started: from then on the attempt
    /// counts in `attempts`, `iterations` and the failure streak, whatever
    /// fails after.
    pub agent_started: bool,
    /// The user's refs before the attempt's first subprocess (`None` until
    /// taken).
    pub refs_before: Option<guard::Snapshot>,
    /// Refs that are not loopc's and changed while the attempt ran
    /// ([`crate::run::engine::guard`]).
    pub ref_changes: Vec<guard::RefChange>,
    /// What ran when `ref_changes` were seen, when it was not the attempt
    /// itself but its merge: "the resolver `fixer`", "the merge gates".
    pub refs_during: Option<String>,
    /// What the agent's output reported (`output = claude-json`,
    /// `codex-json`), when it ran.
    pub report: Option<report::AgentReport>,
    /// The resolver's run, when the merge conflicted and the task has a
    /// resolver ([`crate::run::engine::land::resolve`]).
    pub resolver: Option<crate::state::ResolverRecord>,
    /// The pooled worktree this try took ([`crate::run::engine::pool`]): where it was and
    /// its old task branch, for the clean-up thread to delete (and to
    /// remove the worktree, if it is still there: it could not be reused).
    pub retired: Option<(PathBuf, String)>,
    /// The attempt failed only an agent gate on the task's last attempt:
    /// every command check passed (docs/running.md, "Work an agent gate
    /// did not accept").
    pub unreviewed: bool,
    /// Its verification (`input.verify`) reached a verdict: later attempts
    /// of the run do not verify again.
    pub verified: bool,
    /// Its verification passed: the task is already satisfied, and the
    /// outcome a pass with no change that no agent made.
    pub already_satisfied: bool,
    /// The task's answerer on the attempt's `needs_human` question
    /// ([`crate::run::engine::attempt::answerer`]): whether it ran (one
    /// iteration) and, when it answered, its name.
    pub answerer: Option<Answerer>,
    /// A passed commit's tree and the files it changed against the base
    /// (`<mode> <object id>`), read on the attempt's own thread so that
    /// the coordinating thread need not: a fast-forward's cache entry is
    /// made of them (docs/running.md step 7). `None` when not read.
    pub work: Option<crate::run::sys::objects::CommitChanges>,
}

/// What a task's answerer did with its question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answerer {
    /// The agent's name.
    pub agent: String,
    /// Whether it answered (the answer is recorded); else it declined or
    /// failed, and a person answers.
    pub answered: bool,
}

impl AttemptResult {
    /// The result of the try `input` asks for, ended with `outcome`
    /// before anything of it ran: its worktree's and task branch's names
    /// (`names`, from [`crate::run::engine::context::RunCtx::try_names`]),
    /// nothing else.
    pub fn new(names: (PathBuf, String), input: AttemptInput, outcome: Outcome) -> AttemptResult {
        let (worktree, branch) = names;
        AttemptResult {
            worktree,
            branch,
            input,
            outcome,
            cost: Cost::default(),
            files: None,
            agent_started: false,
            refs_before: None,
            ref_changes: Vec::new(),
            refs_during: None,
            report: None,
            resolver: None,
            retired: None,
            answerer: None,
            unreviewed: false,
            verified: false,
            already_satisfied: false,
            work: None,
        }
    }
}

/// A usage or rate limit an agent hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// The agent's name.
    pub agent: String,
    /// When it resets (seconds since the Unix epoch), if the agent said.
    pub resets_at: Option<u64>,
    /// What the agent said.
    pub message: String,
}

impl Limited {
    /// The limit `agent`'s output reported, if it reported one.
    pub fn of(agent: &str, report: Option<&report::AgentReport>) -> Option<Limited> {
        let hit = report?.limit.as_ref()?;
        Some(Limited {
            agent: agent.to_string(),
            resets_at: hit.resets_at,
            message: hit.message.clone(),
        })
    }
}

/// Whether the run is stopping (Ctrl-C, SIGTERM, the `time` budget, a
/// foreign move of the integration branch): a git call that failed then was
/// killed for it, and the attempt is interrupted, not failed.
pub fn stopping(control: &Control) -> bool {
    control.should_stop() || crate::run::sys::interrupt::requested()
}
