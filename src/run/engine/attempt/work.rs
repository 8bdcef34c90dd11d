//! The attempt's work and its judgement: the agent or command runs in the
//! worktree ([`run`]); then its exit status, the handoff and what its
//! output reported decide whether the attempt goes on to its commit
//! ([`judge`]).

use super::{Step, failed, phase};
use crate::plan::{Executor, OutputFormat, Task, TaskKind};
use crate::run::engine::agent::executor;
use crate::run::engine::agent::handoff::{self, Handoff, HandoffStatus, one_line, with_reason};
use crate::run::engine::agent::report::{self, AgentReport, ReportedError};
use crate::run::engine::context::{AttemptFiles, Io};
use crate::run::engine::outcome::{AttemptResult, Limited, Outcome};
use crate::run::sys::process::{self, Exit, Spec};
use std::path::PathBuf;

/// How the reason of an attempt whose handoff said `blocked` starts: the
/// agent judged the work cannot go on under this key, which is remembered
/// (an environment that blocks, a login or a missing program, is not).
pub const HANDOFF_BLOCKED: &str = "the handoff says blocked";

/// How the reason of an agent blocked for output its `output` cannot read
/// starts ([`no_result`]): the plan's to fix, so remembered like a block
/// the handoff says (a rerun of the unchanged plan would pay for it again).
pub const NO_RESULT_BLOCKED: &str = "the agent's output has no ";

/// The agent or command, once it has run.
pub(super) struct Done {
    /// How it exited.
    exit: Exit,
    /// Its stdout (`agent.stdout`, or `command.log` with stderr in it).
    stdout: PathBuf,
    /// An agent's stderr (`agent.stderr`).
    stderr: PathBuf,
    /// The agent's output format (`Text` for a command).
    output: OutputFormat,
    /// The agent's name; `None` for a command.
    agent: Option<String>,
}

impl Done {
    /// "the agent" or "the command", for reasons.
    fn what(&self) -> &'static str {
        if self.agent.is_some() {
            "the agent"
        } else {
            "the command"
        }
    }

    /// `why`, then the end of the output under a heading (none when there
    /// was no output: a heading over nothing reads like lost output).
    fn with_output(&self, why: &str) -> String {
        // Half for each stream of an agent.
        let tail = if self.agent.is_some() {
            super::gate::output_tail(&[&self.stdout, &self.stderr])
        } else {
            super::gate::output_tail(&[&self.stdout])
        };
        if tail.trim().is_empty() {
            format!("{why}. It printed nothing.")
        } else {
            format!("{why}. Its last output:\n{tail}")
        }
    }

    /// The last line of the agent's stderr, which says why more often than
    /// its exit status does (`cannot open scripts/agent.sh`); empty for a
    /// command.
    fn stderr_line(&self) -> String {
        if self.agent.is_some() {
            last_line(&process::tail(&self.stderr, 4096))
        } else {
            String::new()
        }
    }
}

/// Runs the task's agent (its prompt on stdin) or command in the worktree,
/// through its executor, while the display shows what it is doing now.
/// From here on the attempt counts as the agent's (`r.agent_started`),
/// unless the executor says it ended the command itself.
pub(super) fn run(
    io: Io<'_>,
    task: &Task,
    r: &mut AttemptResult,
    files: &AttemptFiles,
    env: &[(String, String)],
    prompt: &str,
) -> Step<Done> {
    let n = r.input.attempt;
    let (command, stdin, output, agent) = match &task.kind {
        TaskKind::Agent { agent, .. } => {
            phase(io, &task.name, n, "agent");
            let stdin = Some(prompt.as_bytes().to_vec());
            (
                agent.run.as_str(),
                stdin,
                agent.output.clone(),
                Some(agent.name.clone()),
            )
        }
        TaskKind::Command { run } => {
            phase(io, &task.name, n, "command");
            (&**run, None, OutputFormat::Text, None)
        }
    };
    let role = if agent.is_some() { "agent" } else { "command" };
    let stdout = files.dir.join(if agent.is_some() {
        "agent.stdout"
    } else {
        "command.log"
    });
    let stderr = files.dir.join("agent.stderr");
    let exec = task.work_executor().map(|e| &**e);
    let command = Executor::wrap(exec, command);
    let report_file = executor::report_path(&files.dir, role);
    let work_env = executor::with_report(env.to_vec(), exec, &report_file);
    let spec = Spec {
        command: &command,
        dir: &r.worktree,
        env: &work_env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin,
        stdout: &stdout,
        stderr: agent.is_some().then_some(stderr.as_path()),
        timeout: task.timeout,
        idle: match &task.kind {
            TaskKind::Agent { agent, .. } => agent.idle,
            TaskKind::Command { .. } => None,
        },
        grace: executor::grace(exec),
    };
    let run = || process::run(&spec, io.control);
    let watched = (&output, spec.idle);
    let exit = super::watch::while_running(io, (&task.name, n), &r.worktree, watched, &stdout, run)
        .map_err(|e| {
            // E2BIG: the command and its environment are more than the
            // system takes; the same again would fail the same way.
            if e.contains("(os error 7)") {
                Outcome::Blocked(format!(
                    "{e}: the command and its environment are too long for the system to \
                     start (a large `env` value?)"
                ))
            } else {
                Outcome::Infrastructure(e)
            }
        })?;
    // The executor ended the command (a cluster job cancelled from
    // outside, a node that failed): infrastructure, before the attempt
    // counts as the agent's.
    if !matches!(
        exit,
        Exit::Code(0) | Exit::TimedOut | Exit::Stalled(_) | Exit::Stopped
    ) && let Some(why) = executor::failure(exec, &report_file)
    {
        // What the agent reported it spent before the executor ended it
        // is spent (never its cap: it may not have started).
        if agent.is_some() {
            let read = report::read(&output, &stdout);
            let reported = report::reported_cost(read.as_ref(), &handoff::read(&files.handoff));
            r.cost.micro_usd += reported.unwrap_or(0);
        }
        return Err(Outcome::Infrastructure(why));
    }
    r.agent_started = true;
    Ok(Done {
        exit,
        stdout,
        stderr,
        output,
        agent,
    })
}

/// What the judgement hands the commit and the gates.
pub(super) struct Judged {
    /// The summary from the handoff, else from the agent's output.
    pub summary: Option<String>,
    /// The handoff said `"no_changes": true`.
    pub no_changes: bool,
}

/// Judges the work in this order: loopc's own timeout or kill, then a usage
/// limit, then the exit status, then the handoff or what the agent's output
/// reports. Charges what the agent reported it cost.
pub(super) fn judge(
    task: &Task,
    r: &mut AttemptResult,
    files: &AttemptFiles,
    done: &Done,
) -> Step<Judged> {
    let handoff = handoff::read(&files.handoff);
    let report = report::read(&done.output, &done.stdout);
    let reported = report::reported_cost(report.as_ref(), &handoff);
    r.report = report.clone();
    if !matches!(done.exit, Exit::Stopped | Exit::TimedOut | Exit::Stalled(_))
        && let Some(name) = &done.agent
        && let Some(l) = Limited::of(name, report.as_ref())
    {
        // Set aside, not failed: a request refused for a usage limit did
        // no work, so only a cost the agent reported is charged, never its
        // cap (and a cost it did not report is not "unknown").
        r.cost.micro_usd += reported.unwrap_or(0);
        return Err(Outcome::Limited(l));
    }
    if let TaskKind::Agent { agent, .. } = &task.kind {
        r.cost.add_reported(reported, agent);
    }
    // Not logged in, no API key: no retry can fix it, as a missing program.
    if done.exit != Exit::Stopped
        && let Some(why) = report.as_ref().and_then(AgentReport::blocking)
    {
        return Err(Outcome::Blocked(why));
    }
    let reported_error = report.as_ref().and_then(|s| s.error.clone());
    exit_status(task, done, reported_error.as_ref())?;
    if let Some(why) = no_result(done, report.as_ref()) {
        return Err(Outcome::Blocked(why));
    }
    let handoff = handoff.map_err(|e| failed(e.clone(), e))?;
    if let Some(e) = &reported_error {
        return Err(failed(
            e.reason(done.what()),
            error_feedback(e, "exit status 0"),
        ));
    }
    let summary = report
        .as_ref()
        .and_then(|s: &AgentReport| s.summary.clone());
    match &handoff {
        Some(h) => read_handoff(h, summary),
        None => Ok(Judged {
            summary,
            no_changes: false,
        }),
    }
}

/// Why an agent that exited 0 is blocked when its output is read as Claude
/// Code's or Codex's and holds no result at all (no `result`, no finished
/// or failed turn, no error): its `run` is not printing what `output`
/// reads (`--output-format json` or `--json` left out), so its cost,
/// summary and errors are unknown, and no retry changes that.
fn no_result(done: &Done, report: Option<&AgentReport>) -> Option<String> {
    use crate::plan::OutputFormat as F;
    let report = report?;
    let expected = match &done.output {
        F::ClaudeJson => "result (`claude -p --output-format json`, or `stream-json --verbose`)",
        F::AmpJson => "result (`amp -x --stream-json`)",
        F::CursorJson => "result (`cursor-agent -p --output-format stream-json`)",
        F::DroidJson => "result (`droid exec --output-format json`)",
        F::CodexJson => "finished turn (`codex exec --json`)",
        _ => return None,
    };
    if report.finished || report.error.is_some() || report.limit.is_some() {
        return None;
    }
    Some(format!(
        "{NO_RESULT_BLOCKED}{expected}, which `output = {}` reads: its cost, summary \
         and errors are unknown; give its `run` the flag, or set `output` to what it prints \
         (`text` for plain text)",
        done.output.as_str()
    ))
}

/// Judges how the agent or command exited: a kill, a timeout, a program
/// that could not run, a failure; `Ok` for exit status 0.
fn exit_status(task: &Task, done: &Done, reported: Option<&ReportedError>) -> Step<()> {
    let what = done.what();
    match done.exit {
        Exit::Stopped => Err(Outcome::Interrupted),
        Exit::TimedOut | Exit::Stalled(_) => {
            let why = format!("{what} {}", done.exit.describe(task.timeout));
            Err(failed(why.clone(), done.with_output(&why)))
        }
        Exit::Code(0) => Ok(()),
        // The shell could not run the agent's program (126: not
        // executable, 127: not found), or could not open the script it was
        // given (`sh: 0: cannot open scripts/agent.sh`, exit 2): no retry
        // can fix that.
        Exit::Code(c)
            if done.agent.is_some()
                && (matches!(c, 126 | 127) || shell_cannot_open(&done.stderr_line())) =>
        {
            let line = done.stderr_line();
            let why = format!("the agent's command could not run (exit status {c})");
            Err(Outcome::Blocked(if line.is_empty() {
                why
            } else {
                format!("{why}: {line}")
            }))
        }
        Exit::Code(_) | Exit::Signal(_) => {
            let status = done.exit.describe(task.timeout);
            if let Some(e) = reported {
                return Err(failed(
                    format!("{} ({status})", e.reason(what)),
                    error_feedback(e, &status),
                ));
            }
            let line = done.stderr_line();
            let why = if line.is_empty() {
                format!("{what} failed ({status})")
            } else {
                format!("{what} failed ({status}): {line}")
            };
            Err(failed(why.clone(), done.with_output(&why)))
        }
    }
}

/// Judges the handoff the agent wrote: `completed` goes on (its summary
/// over `summary`, the one the output reported); `failed`, `blocked` and
/// `needs_human` end the attempt.
fn read_handoff(h: &Handoff, summary: Option<String>) -> Step<Judged> {
    let text = h.summary.clone().unwrap_or_default();
    match h.status {
        HandoffStatus::Completed => Ok(Judged {
            summary: h.summary.clone().or(summary),
            no_changes: h.no_changes,
        }),
        HandoffStatus::Failed => Err(failed(
            with_reason("the handoff says failed", &text),
            format!("The previous attempt reported failure:\n{text}"),
        )),
        HandoffStatus::Blocked => Err(Outcome::Blocked(with_reason(HANDOFF_BLOCKED, &text))),
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
            Err(Outcome::NeedsHuman(question))
        }
    }
}
/// The next attempt's feedback for an error the agent reported about its
/// own run (`status`: how it exited).
fn error_feedback(e: &report::ReportedError, status: &str) -> String {
    let mut text = if e.cause == report::Cause::CostCap {
        format!(
            "The previous attempt's agent stopped at its own cost cap ({}, {status}); \
             do the task in fewer, cheaper steps",
            e.kind
        )
    } else {
        format!(
            "The previous attempt's agent reported an error ({}, {status})",
            e.kind
        )
    };
    if e.message.trim().is_empty() {
        text.push('.');
    } else {
        text.push_str(":\n");
        text.push_str(&e.message);
    }
    text
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
