//! Launching one check (`accept` or a gate): its prompt (an agent gate's,
//! from the plan, given on stdin), its environment, its logs, its executor;
//! the process runs to its exit. What the exit means is [`super::judge`]'s.

use super::{CheckKind, One, Verdict, check_env};
use crate::plan::{Agent, Executor};
use crate::run::engine::agent::executor;
use crate::run::engine::agent::handoff;
use crate::run::engine::attempt::context_files;
use crate::run::engine::context::Io;
use crate::run::sys::process::{self, Exit, Spec};
use std::path::PathBuf;

/// A check that ran: how it ended and where its output and handoff are.
pub(super) struct Ran<'a> {
    /// How the process ended.
    pub exit: Exit,
    /// The agent gate's agent (`None`: a command).
    pub agent: Option<&'a Agent>,
    /// Its standard output (a command's: its whole log).
    pub stdout: PathBuf,
    /// Its log (a command's standard output and error, an agent's standard error).
    pub log: PathBuf,
    /// Its own handoff file (removed before it started: only it can have
    /// written one).
    pub handoff: PathBuf,
    /// Its executor's report file.
    pub report: PathBuf,
}

/// The `context` files of the task `one`'s check belongs to, as they are
/// at the try's base ([`context_files::sections`]), then `## Review`;
/// empty when it has none. `Err`: a file is not there (the task needs
/// help, as an attempt without it would), or git fails.
fn review_context(io: Io<'_>, one: &One<'_>) -> Result<String, Verdict> {
    let task = one
        .check
        .owner
        .as_deref()
        .map_or(one.proto.task, |o| &o.task);
    match context_files::sections(io.git, task, one.proto.base) {
        Ok(s) if s.is_empty() => Ok(s),
        Ok(s) => Ok(format!("{s}## Review\n")),
        Err(context_files::Unreadable::Missing(why)) => Err(Verdict::Blocked(why)),
        Err(context_files::Unreadable::Git(why)) => Err(Verdict::Error(why)),
    }
}

/// Runs `one`'s check; its files are named after `stem`, its messages say
/// `gate`. `Err`: loopc could not run it.
pub(super) fn launch<'a>(
    io: Io<'_>,
    one: &One<'a>,
    stem: &str,
    gate: &str,
) -> Result<Ran<'a>, Verdict> {
    let (proto, check) = (one.proto, one.check);
    let (work, diff) = one.files;
    let dir = one.co.dir.as_path();
    let log = proto.files.dir.join(format!("{stem}.log"));
    let handoff_path = work.join(format!("{stem}.handoff.json"));
    let prompt_path = work.join(format!("{stem}.prompt.md"));
    // Whatever the maker left there (a forged verdict) is not the gate's.
    if let Err(e) = remove(&handoff_path) {
        return Err(Verdict::Error(format!("{gate}: {e}")));
    }
    let (command, stdin, agent) = match &check.kind {
        CheckKind::Command(run) => (run.as_str(), None, None),
        CheckKind::Agent { agent, prompt } => {
            // The prompt is the plan's, written afresh: never the worktree's;
            // after the task's `context` files, under `## Review`.
            let text = format!(
                "{}{prompt}\n\n{}",
                review_context(io, one)?,
                handoff::instructions(true)
            );
            remove(&prompt_path)
                .and_then(|()| {
                    std::fs::write(&prompt_path, &text)
                        .map_err(|e| format!("cannot write {}: {e}", prompt_path.display()))
                })
                .map_err(Verdict::Error)?;
            (agent.run.as_str(), Some(text.into_bytes()), Some(agent))
        }
    };
    let mut env = check_env(io, proto, check, dir, (&prompt_path, &handoff_path, diff))
        .map_err(|e| Verdict::Error(format!("{gate}: {e}")))?;
    if let Some(a) = agent {
        // The gate's agent's own environment, under the protocol variables.
        let mut with_agent: Vec<(String, String)> =
            a.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        with_agent.append(&mut env);
        env = with_agent;
    }
    let stdout_path = if agent.is_some() {
        proto.files.dir.join(format!("{stem}.stdout"))
    } else {
        log.clone()
    };
    let command = Executor::wrap(check.executor.as_deref(), command);
    let report = executor::report_path(&proto.files.dir, stem);
    let env = executor::with_report(env, check.executor.as_deref(), &report);
    let spec = Spec {
        command: &command,
        dir,
        env: &env,
        env_remove: &[],
        stdin,
        stdout: &stdout_path,
        // Agent gates: stdout and stderr apart (stdout may be JSON).
        stderr: agent.is_some().then_some(log.as_path()),
        timeout: check.timeout,
        idle: agent.and_then(|a| a.idle),
        grace: executor::grace(check.executor.as_deref()),
    };
    let exit = process::run(&spec, io.control);
    for p in [&prompt_path, &handoff_path] {
        if p.exists()
            && let Some(name) = p.file_name()
        {
            let _ = crate::run::engine::context::keep_file(p, &proto.files.dir.join(name));
        }
    }
    let exit = exit.map_err(|e| Verdict::Error(format!("{gate}: {e}")))?;
    Ok(Ran {
        exit,
        agent,
        stdout: stdout_path,
        log,
        handoff: handoff_path,
        report,
    })
}

/// Removes the file (or anything else) at `path`, if there is one.
///
/// Errors: it is there and cannot be removed.
fn remove(path: &std::path::Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let removed = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    removed.map_err(|e| format!("cannot remove {}: {e}", path.display()))
}
