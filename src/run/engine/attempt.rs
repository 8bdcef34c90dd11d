//! One attempt of one task (spec §5 steps 2–6), run on a pool thread: a
//! fresh worktree from the integration branch head, `setup`, the agent or
//! command, the handoff, the commit on the task branch, and the gates. The
//! merge (step 7) is the coordinator's, see [`super::merge`].

use super::budget::Cost;
use super::context::{AttemptFiles, Protocol, RunCtx};
use super::gate::{self, Verdict};
use super::handoff::{self, HandoffStatus, with_reason};
use crate::plan::{OnFail, OutputFormat, TaskKind};
use crate::run::store::events::Event;
use crate::run::store::layout;
use crate::run::sys::process::{self, Exit, Spec};
use crate::run::sys::worktree;
use std::path::PathBuf;

/// What the coordinator hands an attempt.
#[derive(Debug, Clone)]
pub struct AttemptInput {
    /// Index of the task in the plan.
    pub task: usize,
    /// Attempt number (1-based) shown as `LOOP_ATTEMPT`.
    pub attempt: u32,
    /// The try's serial number (names its worktree and branch; an
    /// infrastructure retry gets a new one but keeps `attempt`).
    pub serial: u32,
    /// Which try of `attempt` this is: 1, then 2… for infrastructure
    /// retries (names the log directory, [`layout::log_name`]).
    pub retry: u32,
    /// The integration branch head the worktree starts from.
    pub base: String,
    /// The previous attempt's feedback (empty on the first).
    pub feedback: String,
    /// progress.md as of the start.
    pub progress: String,
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
    /// The task is blocked (handoff `blocked`/`needs_human`, gate `on_fail = block`).
    Blocked(String),
    /// An infrastructure failure (worktree, `setup`): retried, not counted.
    Infrastructure(String),
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
}

fn failed(reason: impl Into<String>, feedback: impl Into<String>) -> Outcome {
    Outcome::Failed {
        reason: reason.into(),
        feedback: feedback.into(),
        on_fail: OnFail::Retry,
    }
}

/// Runs one attempt to its outcome. Never panics on subprocess or I/O errors:
/// they become an [`Outcome::Infrastructure`] or a failed attempt.
pub fn run(ctx: &RunCtx, input: AttemptInput) -> AttemptResult {
    let task = &ctx.plan.tasks[input.task];
    let worktree = ctx.layout.task_worktree(&task.name, input.serial);
    let branch = worktree::task_branch(&ctx.slug, &task.name, input.serial);
    let mut result = AttemptResult {
        input,
        outcome: Outcome::Interrupted,
        cost: Cost::default(),
        worktree,
        branch,
        files: None,
    };
    result.outcome = attempt(ctx, &mut result);
    result
}

fn attempt(ctx: &RunCtx, r: &mut AttemptResult) -> Outcome {
    let task = &ctx.plan.tasks[r.input.task];
    let name = task.name.clone();
    let n = r.input.attempt;
    let phase = |p: &str| {
        ctx.events.emit(Event::Phase {
            task: name.clone(),
            attempt: n,
            phase: p.to_string(),
            gate: None,
        })
    };
    let log_name = layout::log_name(n, r.input.retry);
    ctx.events.emit(Event::AttemptStarted {
        task: name.clone(),
        attempt: n,
        worktree: r.worktree.to_string_lossy().into_owned(),
        base: r.input.base.clone(),
        retry: (r.input.retry > 1).then_some(r.input.retry),
        logs: ctx
            .layout
            .attempt_logs(&task.name, &log_name)
            .to_string_lossy()
            .into_owned(),
    });
    let files = match AttemptFiles::create(&ctx.layout, &task.name, &log_name) {
        Ok(f) => f,
        Err(e) => return Outcome::Infrastructure(e),
    };
    r.files = Some(files.clone());
    {
        let _guard = ctx.worktree_lock.lock();
        if let Err(e) =
            worktree::create_task(&ctx.git, &ctx.layout, &r.worktree, &r.branch, &r.input.base)
        {
            return Outcome::Infrastructure(format!("cannot create worktree: {e}"));
        }
    }
    let prompt_text = match &task.kind {
        TaskKind::Agent { prompt, .. } => {
            handoff::prompt(prompt, &r.input.progress, &r.input.feedback)
        }
        TaskKind::Command { .. } => String::new(),
    };
    for (path, text) in [
        (&files.prompt, prompt_text.as_str()),
        (&files.feedback, r.input.feedback.as_str()),
        (&files.progress, r.input.progress.as_str()),
    ] {
        if let Err(e) = std::fs::write(path, text) {
            return Outcome::Infrastructure(format!("cannot write {}: {e}", path.display()));
        }
    }
    let proto = Protocol {
        task,
        attempt: n,
        base: &r.input.base,
        files: &files,
    };
    let env = proto.env(&ctx.git, &r.worktree, &files.prompt, &files.handoff, None);

    // Setup: an infrastructure step.
    if let Some(setup) = &ctx.plan.settings.setup {
        phase("setup");
        let log = files.dir.join("setup.log");
        match run_setup(ctx, setup, &r.worktree, &env, &log, task.timeout) {
            Ok(Exit::Stopped) => return Outcome::Interrupted,
            Ok(e) if e.success() => {}
            Ok(e) => {
                return Outcome::Infrastructure(format!(
                    "setup failed ({}); see {}",
                    e.describe(task.timeout),
                    log.display()
                ));
            }
            Err(e) => return Outcome::Infrastructure(format!("setup: {e}")),
        }
    }

    // The work: agent or command.
    let (command, stdin, output, agent_name) = match &task.kind {
        TaskKind::Agent { agent, .. } => {
            phase("agent");
            (
                agent.run.as_str(),
                Some(prompt_text.clone().into_bytes()),
                agent.output,
                Some(agent.name.clone()),
            )
        }
        TaskKind::Command { run } => {
            phase("command");
            (run.as_str(), None, OutputFormat::Text, None)
        }
    };
    let stdout = files.dir.join(if agent_name.is_some() {
        "agent.stdout"
    } else {
        "command.log"
    });
    let stderr = files.dir.join("agent.stderr");
    let spec = Spec {
        command,
        dir: &r.worktree,
        env: &env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin,
        stdout: &stdout,
        stderr: agent_name.is_some().then_some(stderr.as_path()),
        timeout: task.timeout,
    };
    let exit = match process::run(&spec, &ctx.control) {
        Ok(e) => e,
        Err(e) => return Outcome::Infrastructure(e),
    };
    let output_tail = || {
        // At most 64 KiB in all: half for each stream of an agent.
        if agent_name.is_some() {
            let mut t = process::tail(&stdout, gate::FEEDBACK_LIMIT / 2);
            t.push_str(&process::tail(&stderr, gate::FEEDBACK_LIMIT / 2));
            t
        } else {
            process::tail(&stdout, gate::FEEDBACK_LIMIT)
        }
    };
    let what = if agent_name.is_some() {
        "the agent"
    } else {
        "the command"
    };

    // Order of judgement: loopc's own timeout or kill, then the exit status,
    // then the handoff or structured result.
    let handoff = handoff::read(&files.handoff);
    let structured = (output == OutputFormat::ClaudeJson)
        .then(|| handoff::read_claude_json(&stdout))
        .flatten();
    if let TaskKind::Agent { agent, .. } = &task.kind {
        let reported = structured.as_ref().and_then(|s| s.cost).or_else(|| {
            handoff
                .as_ref()
                .ok()
                .and_then(|h| h.as_ref())
                .and_then(|h| h.cost_usd)
                .and_then(crate::run::time::usd_to_micro)
        });
        r.cost.add_reported(reported, agent);
    }
    match exit {
        Exit::Stopped => return Outcome::Interrupted,
        Exit::TimedOut => {
            let why = format!("{what} {}", exit.describe(task.timeout));
            return failed(
                why.clone(),
                format!("{why}. Its last output:\n{}", output_tail()),
            );
        }
        Exit::Code(0) => {}
        Exit::Code(_) | Exit::Signal(_) => {
            let why = format!("{what} failed ({})", exit.describe(task.timeout));
            return failed(
                why.clone(),
                format!("{why}. Its last output:\n{}", output_tail()),
            );
        }
    }
    let handoff = match handoff {
        Ok(h) => h,
        Err(e) => return failed(e.clone(), e),
    };
    let mut summary = structured.as_ref().and_then(|s| s.summary.clone());
    if let Some(s) = &structured
        && s.is_error
    {
        let text = s.summary.clone().unwrap_or_default();
        return failed(
            format!("{what} reported an error"),
            format!("The agent's result was an error:\n{text}"),
        );
    }
    let mut no_changes = false;
    if let Some(h) = &handoff {
        if h.summary.is_some() {
            summary = h.summary.clone();
        }
        no_changes = h.no_changes;
        let text = h.summary.clone().unwrap_or_default();
        match h.status {
            HandoffStatus::Completed => {}
            HandoffStatus::Failed => {
                return failed(
                    with_reason("the handoff says failed", &text),
                    format!("The previous attempt reported failure:\n{text}"),
                );
            }
            HandoffStatus::Blocked | HandoffStatus::NeedsHuman => {
                let word = if h.status == HandoffStatus::Blocked {
                    "blocked"
                } else {
                    "needs_human"
                };
                return Outcome::Blocked(with_reason(&format!("the handoff says {word}"), &text));
            }
        }
    }

    // Commit on the task branch.
    phase("commit");
    let title = task.title.clone().unwrap_or_else(|| task.name.clone());
    let commit = match ctx
        .git
        .commit_all(&r.worktree, &format!("loop({}): {title}", task.name))
    {
        Ok(c) => c,
        Err(e) => return Outcome::Infrastructure(format!("cannot commit: {e}")),
    };
    // The agent may have committed itself, but never below its base: a
    // branch that dropped LOOP_BASE would lose earlier tasks' work when merged.
    match ctx.git.is_ancestor(&r.input.base, &commit) {
        Ok(true) => {}
        Ok(false) => {
            return failed(
                "the attempt rewrote history below LOOP_BASE",
                format!(
                    "The previous attempt rewrote history below LOOP_BASE ({}): the task \
                     branch no longer contains that commit. Build on LOOP_BASE; do not reset, \
                     rebase or amend below it.",
                    r.input.base
                ),
            );
        }
        Err(e) => return Outcome::Infrastructure(e),
    }
    if commit == r.input.base && !no_changes {
        return failed(
            "no changes",
            "The previous attempt changed no file. Make the change the task asks for \
             (or, if nothing needs to change, say \"no_changes\": true in the handoff).",
        );
    }
    let files_changed = match ctx.git.changed_files(&r.input.base, &commit) {
        Ok(f) => f,
        Err(e) => return Outcome::Infrastructure(e),
    };
    if let Err(e) = ctx.git.diff_to_file(&r.input.base, &commit, &files.diff) {
        return Outcome::Infrastructure(e);
    }

    // Gates.
    let checks = gate::checks_of(task);
    let mut gate_cost = Cost::default();
    let verdict = gate::run_checks(ctx, &proto, &r.worktree, &checks, "gate", &mut gate_cost);
    r.cost.absorb(gate_cost);
    match verdict {
        Verdict::Pass => Outcome::Passed {
            commit,
            summary,
            files: files_changed,
        },
        Verdict::Reject {
            reason,
            feedback,
            on_fail,
        } => Outcome::Failed {
            reason,
            feedback,
            on_fail,
        },
        Verdict::Blocked(why) => Outcome::Blocked(why),
        Verdict::Stopped => Outcome::Interrupted,
        Verdict::Error(e) => Outcome::Infrastructure(e),
    }
}

/// Runs the plan's `setup` command in `dir` (a new worktree, or a scratch
/// worktree before re-gating a merge), its output in `log`, with /dev/null
/// as stdin and without `LOOP_DIFF_FILE`.
///
/// Errors: the command could not be started or its log written.
pub(super) fn run_setup(
    ctx: &RunCtx,
    setup: &str,
    dir: &std::path::Path,
    env: &[(String, String)],
    log: &std::path::Path,
    timeout: std::time::Duration,
) -> Result<Exit, String> {
    let spec = Spec {
        command: setup,
        dir,
        env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin: None,
        stdout: log,
        stderr: None,
        timeout,
    };
    process::run(&spec, &ctx.control)
}
