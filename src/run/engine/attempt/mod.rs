//! One attempt of one task (docs/running.md steps 2–6), run on a pool thread: a
//! fresh worktree from the integration branch head, `setup`, the agent or
//! command, the handoff, the commit on the task branch, and the gates. The
//! merge (step 7) is the coordinator's, see [`crate::run::engine::land::merge`].
//!
//! Over 600 lines: the steps of an attempt and the checks on its commit
//! read best in the order they run; the gitlink check is in [`gitlinks`].

pub mod gate;
mod gitlinks;
pub mod watch;
mod worktree;

use crate::plan::{Agent, Executor, OnFail, OutputFormat, Task, TaskKind};
use crate::run::engine::agent::handoff::{self, HandoffStatus, one_line, with_reason};
use crate::run::engine::agent::report;
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{AttemptFiles, Protocol, RunCtx};
use crate::run::engine::guard;
use crate::run::engine::outcome::{AttemptInput, AttemptResult, Limited, Outcome, stopping};
use crate::run::store::events::Event;
use crate::run::store::layout;
use crate::run::sys::process::{self, Exit, Spec};
use gate::Verdict;
use std::borrow::Cow;
use std::sync::Arc;

/// Task `task` as an attempt runs it: with a fallback `agent`, that agent
/// in place of its own and its environment under the task's.
pub fn as_run<'a>(task: &'a Task, agent: Option<&Arc<Agent>>) -> Cow<'a, Task> {
    match (&task.kind, agent) {
        (TaskKind::Agent { prompt, .. }, Some(a)) => {
            let mut t = task.clone();
            t.kind = TaskKind::Agent {
                prompt: prompt.clone(),
                agent: Arc::clone(a),
            };
            t.env = a.env.clone();
            t.env.extend(task.own_env.clone());
            Cow::Owned(t)
        }
        _ => Cow::Borrowed(task),
    }
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
    let mut result = AttemptResult::new(ctx, input, Outcome::Interrupted);
    result.outcome = attempt(ctx, &mut result);
    // Whatever the outcome, compare the user's refs with what they were
    // before the attempt's first subprocess (the guard, `crate::run::engine::guard`).
    if let Some(before) = &result.refs_before {
        match guard::snapshot(&ctx.git, &ctx.integration_ref, &ctx.layout.worktrees) {
            Ok(after) => result.ref_changes = guard::diff(before, &after),
            Err(e) if result.outcome != Outcome::Interrupted => {
                result.outcome =
                    Outcome::Infrastructure(format!("cannot read the repository's refs: {e}"));
            }
            Err(_) => {}
        }
    }
    // What the agent and its gates read and wrote in the worktree goes to
    // the logs (the worktree of a passed attempt is removed).
    if let Some(f) = &result.files {
        f.save_logs();
    }
    result
}

fn attempt(ctx: &RunCtx, r: &mut AttemptResult) -> Outcome {
    let task = as_run(&ctx.plan.tasks[r.input.task], r.input.agent.as_ref());
    let task = task.as_ref();
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
        fallback: r.input.agent.as_ref().map(|a| a.name.clone()),
    });
    let files = match AttemptFiles::create(&ctx.layout, &task.name, &log_name, Some(&r.worktree)) {
        Ok(f) => f,
        Err(e) => return Outcome::Infrastructure(e),
    };
    r.files = Some(files.clone());
    // loopc's own git calls for this attempt are bounded by its timeout
    // (and, like every subprocess, by the run's kill switch).
    let git = ctx.git.with_timeout(task.timeout);
    let mut checkout = match worktree::make(ctx, &git, r) {
        Ok(co) => co,
        Err(_) if stopping(ctx) => return Outcome::Interrupted,
        Err(e) => return Outcome::Infrastructure(format!("cannot create worktree: {e}")),
    };
    checkout.excluded = ctx.brought.paths();
    if let Err(e) = crate::run::engine::worktree_files::place(&ctx.brought, &r.worktree) {
        return Outcome::Infrastructure(e);
    }
    if let Err(e) = crate::run::engine::context::create_work_dir(&r.worktree) {
        return Outcome::Infrastructure(e);
    }
    let prompt_text = match &task.kind {
        TaskKind::Agent { prompt, .. } => {
            // People's answers to the task's questions (`loopc answer`).
            let mut answers = match crate::run::store::answers::load(&ctx.layout, &task.name) {
                Ok(a) => crate::run::store::answers::prompt_section(&a),
                Err(e) => return Outcome::Infrastructure(e),
            };
            answers.push_str(&r.input.instructions);
            handoff::prompt(prompt, &answers, &r.input.progress, &r.input.feedback)
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
    match guard::snapshot(&git, &ctx.integration_ref, &ctx.layout.worktrees) {
        Ok(s) => r.refs_before = Some(s),
        Err(_) if stopping(ctx) => return Outcome::Interrupted,
        Err(e) => {
            return Outcome::Infrastructure(format!("cannot read the repository's refs: {e}"));
        }
    }

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
            (&**run, None, OutputFormat::Text, None)
        }
    };
    let stdout = files.dir.join(if agent_name.is_some() {
        "agent.stdout"
    } else {
        "command.log"
    });
    let stderr = files.dir.join("agent.stderr");
    let executor = task.work_executor().map(|e| &**e);
    let command = Executor::wrap(executor, command);
    let report_file = crate::run::engine::agent::executor::report_path(
        &files.dir,
        if agent_name.is_some() {
            "agent"
        } else {
            "command"
        },
    );
    let work_env =
        crate::run::engine::agent::executor::with_report(env.clone(), executor, &report_file);
    let spec = Spec {
        command: &command,
        dir: &r.worktree,
        env: &work_env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin,
        stdout: &stdout,
        stderr: agent_name.is_some().then_some(stderr.as_path()),
        timeout: task.timeout,
        grace: crate::run::engine::agent::executor::grace(executor),
    };
    // While it runs, the display shows what it is doing now.
    let run = || process::run(&spec, &ctx.control);
    let exit = match crate::run::engine::attempt::watch::while_running(
        ctx,
        (&task.name, n),
        &r.worktree,
        output,
        &stdout,
        run,
    ) {
        Ok(e) => e,
        Err(e) => return Outcome::Infrastructure(e),
    };
    // The executor ended the command (a cluster job cancelled from
    // outside, a node that failed): infrastructure, before the attempt
    // counts as the agent's.
    if !matches!(exit, Exit::Code(0) | Exit::TimedOut | Exit::Stopped)
        && let Some(why) = crate::run::engine::agent::executor::failure(executor, &report_file)
    {
        return Outcome::Infrastructure(why);
    }
    r.agent_started = true;
    // `why`, then the end of the output under a heading (none when there
    // was no output: a heading over nothing reads like lost output).
    let with_output = |why: &str| {
        // Half for each stream of an agent.
        let tail = if agent_name.is_some() {
            gate::output_tail(&[&stdout, &stderr])
        } else {
            gate::output_tail(&[&stdout])
        };
        if tail.trim().is_empty() {
            format!("{why}. It printed nothing.")
        } else {
            format!("{why}. Its last output:\n{tail}")
        }
    };
    let what = if agent_name.is_some() {
        "the agent"
    } else {
        "the command"
    };

    // Order of judgement: loopc's own timeout or kill, then the exit status,
    // then the handoff or what the agent's output reports.
    let handoff = handoff::read(&files.handoff);
    let report = report::read(output, &stdout);
    let reported = report::reported_cost(report.as_ref(), &handoff);
    r.report = report.clone();
    let reported_error = report.as_ref().and_then(|s| s.error.clone());
    if !matches!(exit, Exit::Stopped | Exit::TimedOut)
        && let Some(name) = &agent_name
        && let Some(l) = Limited::of(name, report.as_ref())
    {
        // Set aside, not failed: a request refused for a usage limit did
        // no work, so only a cost the agent reported is charged, never its
        // cap (and a cost it did not report is not "unknown").
        r.cost.micro_usd += reported.unwrap_or(0);
        return Outcome::Limited(l);
    }
    if let TaskKind::Agent { agent, .. } = &task.kind {
        r.cost.add_reported(reported, agent);
    }
    match exit {
        Exit::Stopped => return Outcome::Interrupted,
        Exit::TimedOut => {
            let why = format!("{what} {}", exit.describe(task.timeout));
            return failed(why.clone(), with_output(&why));
        }
        Exit::Code(0) => {}
        // The shell could not run the agent's program (126: not
        // executable, 127: not found), or could not open the script it was
        // given (`sh: 0: cannot open scripts/agent.sh`, exit 2): no retry
        // can fix that.
        Exit::Code(c)
            if agent_name.is_some()
                && (matches!(c, 126 | 127)
                    || shell_cannot_open(&last_line(&process::tail(&stderr, 4096)))) =>
        {
            let line = last_line(&process::tail(&stderr, 4096));
            let why = format!("the agent's command could not run (exit status {c})");
            return Outcome::Blocked(if line.is_empty() {
                why
            } else {
                format!("{why}: {line}")
            });
        }
        Exit::Code(_) | Exit::Signal(_) => {
            let status = exit.describe(task.timeout);
            if let Some(e) = &reported_error {
                return failed(
                    format!("{what} reported {} ({status})", e.describe()),
                    error_feedback(e, &status),
                );
            }
            // The agent's last stderr line says why more often than its
            // exit status does (`connection refused`).
            let line = if agent_name.is_some() {
                last_line(&process::tail(&stderr, 4096))
            } else {
                String::new()
            };
            let why = if line.is_empty() {
                format!("{what} failed ({status})")
            } else {
                format!("{what} failed ({status}): {line}")
            };
            return failed(why.clone(), with_output(&why));
        }
    }
    let handoff = match handoff {
        Ok(h) => h,
        Err(e) => return failed(e.clone(), e),
    };
    let mut summary = report.as_ref().and_then(|s| s.summary.clone());
    if let Some(e) = &reported_error {
        return failed(
            format!("{what} reported {}", e.describe()),
            error_feedback(e, "exit status 0"),
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
            HandoffStatus::Blocked => {
                return Outcome::Blocked(with_reason("the handoff says blocked", &text));
            }
            HandoffStatus::NeedsHuman => {
                // The question, else the summary: a person must see why.
                let question = h
                    .question
                    .clone()
                    .filter(|q| !q.trim().is_empty())
                    .unwrap_or_else(|| {
                        if text.trim().is_empty() {
                            "(the agent asked for a person but gave no question)".to_string()
                        } else {
                            text.clone()
                        }
                    });
                return Outcome::NeedsHuman(question);
            }
        }
    }

    // Commit on the task branch, in the worktree loopc made and nowhere
    // else: an agent that removed or replaced its `.git`, or left the task
    // branch, fails (git would otherwise find another repository above it).
    phase("commit");
    if let Err(e) = git.verify_checkout(&checkout, Some(&r.branch)) {
        return failed(
            e.clone(),
            format!(
                "{e}. loopc commits the work only in the worktree it made, on its task \
                 branch: do not remove, replace or move `.git`, do not switch branches or \
                 detach HEAD; commit on the task branch or leave the changes uncommitted."
            ),
        );
    }
    let title = crate::run::store::progress::one_line(task.title.as_deref().unwrap_or(&task.name));
    let known = match git.commit_all(
        &checkout,
        &format!("loop({}): {title}", task.name),
        &r.input.base,
    ) {
        Ok(k) => k,
        Err(_) if stopping(ctx) => return Outcome::Interrupted,
        Err(e) => match crate::run::engine::attempt::gitlinks::uncommitted_nested(&e) {
            Some((reason, feedback)) => return failed(reason, feedback),
            None => return Outcome::Infrastructure(format!("cannot commit: {e}")),
        },
    };
    // The agent may have committed itself, but never below its base: a
    // branch that dropped LOOP_BASE would lose earlier tasks' work when merged.
    let tip = known.map_or_else(
        || git.tip_containing(&r.branch, &r.input.base),
        |c| Ok(Some(c)),
    );
    let commit = match tip {
        Ok(Some(c)) => c,
        Ok(None) if matches!(git.commit_of(&format!("refs/heads/{}", r.branch)), Ok(None)) => {
            return Outcome::Infrastructure(format!(
                "the task branch `{}` is gone after its commit",
                r.branch
            ));
        }
        Ok(None) => {
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
    };
    if commit == r.input.base && !no_changes && !task.changes_optional {
        let how = match task.kind {
            TaskKind::Command { .. } => "",
            TaskKind::Agent { .. } => ", or its agent says \"no_changes\": true in the handoff",
        };
        return failed(
            format!(
                "no changes: the attempt changed no file (a task that may change nothing \
                 says `changes = optional` in its block{how})"
            ),
            "The previous attempt changed no file. Make the change the task asks for \
             (or, if nothing needs to change, say \"no_changes\": true in the handoff).",
        );
    }
    // Work must survive the worktree: a gitlink (a submodule, or a nested
    // repository the agent made) whose commit lives only inside the
    // worktree would point at nothing once it is removed.
    let changes = match git.changes(&r.input.base, &commit) {
        Ok(c) => c,
        Err(_) if stopping(ctx) => return Outcome::Interrupted,
        Err(e) => return Outcome::Infrastructure(e),
    };
    match gitlinks::dangling(&git, &checkout, changes.gitlinks) {
        Ok(None) => {}
        Ok(Some((reason, feedback))) => return failed(reason, feedback),
        Err(_) if stopping(ctx) => return Outcome::Interrupted,
        Err(e) => return Outcome::Infrastructure(e),
    }
    let files_changed = changes.paths;
    if let Err(e) = ctx.git.diff_to_file(&r.input.base, &commit, &files.diff) {
        return Outcome::Infrastructure(e);
    }

    // Gates.
    let checks = gate::checks_of(task);
    let mut gate_cost = Cost::default();
    let verdict = gate::run_checks(ctx, &proto, &checkout, &checks, "gate", &mut gate_cost);
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
        Verdict::Limited(l) => Outcome::Limited(l),
        Verdict::Stopped => Outcome::Interrupted,
        Verdict::Error(e) => Outcome::Infrastructure(e),
    }
}

/// The next attempt's feedback for an error the agent reported about its
/// own run (`status`: how it exited).
fn error_feedback(e: &report::ReportedError, status: &str) -> String {
    let mut text = format!(
        "The previous attempt's agent reported an error ({}, {status})",
        e.kind
    );
    if e.message.trim().is_empty() {
        text.push('.');
    } else {
        text.push_str(":\n");
        text.push_str(&e.message);
    }
    text
}

/// Whether `line` is a shell saying it cannot open the script it was
/// given to run (dash: `sh: 0: cannot open x.sh: No such file`; busybox:
/// `sh: can't open 'x.sh': No such file or directory`): the file the
/// command names is not there, as with exit 127.
fn shell_cannot_open(line: &str) -> bool {
    let Some((shell, rest)) = line.split_once(": ") else {
        return false;
    };
    let shell = shell.rsplit('/').next().unwrap_or(shell);
    let is_shell = ["sh", "dash", "ash", "bash", "ksh", "zsh"].contains(&shell);
    // dash puts the line number first (`0: cannot open …`).
    let rest = match rest.split_once(": ") {
        Some((n, after)) if n.bytes().all(|b| b.is_ascii_digit()) => after,
        _ => rest,
    };
    is_shell && (rest.starts_with("cannot open ") || rest.starts_with("can't open "))
}

/// The last line of `text` that is not blank, at most 200 characters.
pub fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    one_line(line)
}

/// Runs the plan's `setup` command in `dir` (a new worktree, or a scratch
/// worktree before re-gating a merge), its output in `log`, with /dev/null
/// as stdin and without `LOOP_DIFF_FILE`, through the plan's setup executor.
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
    let executor = ctx.plan.settings.setup_executor.as_deref();
    let command = Executor::wrap(executor, setup);
    let spec = Spec {
        command: &command,
        dir,
        env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin: None,
        stdout: log,
        stderr: None,
        timeout,
        grace: crate::run::engine::agent::executor::grace(executor),
    };
    process::run(&spec, &ctx.control)
}

#[cfg(test)]
mod tests {
    use super::shell_cannot_open;

    #[test]
    fn a_shell_that_cannot_open_its_script() {
        assert!(shell_cannot_open(
            "sh: 0: cannot open scripts/agent.sh: No such file"
        ));
        assert!(shell_cannot_open(
            "sh: can't open 'x.sh': No such file or directory"
        ));
        assert!(shell_cannot_open(
            "/bin/dash: 1: cannot open a.sh: No such file"
        ));
        assert!(!shell_cannot_open("agent: cannot open the socket"));
        assert!(!shell_cannot_open("error: cannot open scripts/agent.sh"));
        assert!(!shell_cannot_open("sh: 3: ./x: Permission denied"));
    }
}
