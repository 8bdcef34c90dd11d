//! The steps of an attempt before its agent or command runs: its files,
//! its worktree, its inputs (prompt, feedback, progress), the user's refs
//! before its first subprocess, and the plan's `setup`.

use super::{Step, phase, worktree};
use crate::plan::{Executor, Task, TaskKind};
use crate::run::engine::agent::handoff;
use crate::run::engine::context::{AttemptFiles, Checkouts, Io, RunCtx};
use crate::run::engine::guard;
use crate::run::engine::outcome::{AttemptResult, Outcome, stopping};
use crate::run::store::events::Event;
use crate::run::store::layout::{self, Layout};
use crate::run::sys::checkout::Checkout;
use crate::run::sys::git::Git;
use crate::run::sys::process::{self, Control, Exit, Spec};
use std::path::Path;
use std::time::Duration;

/// Announces the attempt and creates its files: its log directory and the
/// paths of what its agent and gates read and write ([`AttemptFiles`]),
/// kept in `r.files`.
pub(super) fn files(
    io: Io<'_>,
    layout: &Layout,
    task: &Task,
    r: &mut AttemptResult,
) -> Step<AttemptFiles> {
    let n = r.input.attempt;
    let log_name = layout::log_name(n, r.input.retry);
    io.events.emit(Event::AttemptStarted {
        task: task.name.clone(),
        attempt: n,
        worktree: r.worktree.to_string_lossy().into_owned(),
        base: r.input.base.clone(),
        retry: (r.input.retry > 1).then_some(r.input.retry),
        logs: layout
            .attempt_logs(&task.name, &log_name)
            .to_string_lossy()
            .into_owned(),
        fallback: r.input.agent.as_ref().map(|a| a.name.clone()),
        // The scheduler's pool has `parallel` threads: a thread is a slot.
        slot: rayon::current_thread_index().and_then(|i| u32::try_from(i + 1).ok()),
    });
    let files = AttemptFiles::create(layout, &task.name, &log_name, Some(&r.worktree))
        .map_err(Outcome::Infrastructure)?;
    r.files = Some(files.clone());
    Ok(files)
}

/// Makes the attempt's worktree (fresh, or reused from the pool), brings
/// `loop.copy` and `loop.link` into it and creates its work directory.
pub(super) fn worktree(
    trees: Checkouts<'_>,
    control: &Control,
    git: &Git,
    r: &mut AttemptResult,
) -> Step<Checkout> {
    let mut checkout = match worktree::make(trees, control, git, r) {
        Ok(co) => co,
        Err(_) if stopping(control) => return Err(Outcome::Interrupted),
        Err(e) => {
            return Err(Outcome::Infrastructure(format!(
                "cannot create worktree: {e}"
            )));
        }
    };
    checkout.excluded = trees.brought.paths();
    crate::run::engine::worktree_files::place(trees.brought, &r.worktree)
        .map_err(Outcome::Infrastructure)?;
    crate::run::engine::context::create_work_dir(&r.worktree).map_err(Outcome::Infrastructure)?;
    Ok(checkout)
}

/// Writes what the agent reads: its prompt (after its `context` files,
/// with people's answers, how the
/// task is checked and the instructions loopc adds), the previous attempt's feedback and the
/// progress of passed tasks. Returns the prompt (empty for a command task).
pub(super) fn inputs(
    ctx: &RunCtx,
    task: &Task,
    r: &AttemptResult,
    files: &AttemptFiles,
) -> Step<String> {
    let prompt = match &task.kind {
        TaskKind::Agent { prompt, .. } => {
            // People's answers to the task's questions (`loopc answer`).
            let mut answers = crate::run::store::answers::load(&ctx.layout, &task.name)
                .map(|a| crate::run::store::answers::prompt_section(&a))
                .map_err(Outcome::Infrastructure)?;
            answers.push_str(&r.input.instructions);
            let checks = handoff::checks_section(task);
            // The files every prompt of the task carries (`context`), first.
            let mut text = super::context_files::section(&ctx.git, task, &r.input.base)?;
            text.push_str(&handoff::prompt(
                prompt,
                &answers,
                &checks,
                &r.input.progress,
                &r.input.feedback,
            ));
            text
        }
        TaskKind::Command { .. } => String::new(),
    };
    for (path, text) in [
        (&files.prompt, prompt.as_str()),
        (&files.progress, r.input.progress.as_str()),
    ] {
        if let Err(e) = std::fs::write(path, text) {
            return Err(Outcome::Infrastructure(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
    }
    files
        .write_feedback(&r.input.feedback)
        .map_err(Outcome::Infrastructure)?;
    Ok(prompt)
}

/// Takes the snapshot of the user's refs that the attempt's end is compared
/// with ([`guard`]), before its first subprocess.
pub(super) fn refs_before(ctx: &RunCtx, git: &Git, r: &mut AttemptResult) -> Step<()> {
    match guard::snapshot(git, &ctx.integration_ref, &ctx.layout.worktrees) {
        Ok(s) => {
            r.refs_before = Some(s);
            Ok(())
        }
        Err(_) if stopping(&ctx.control) => Err(Outcome::Interrupted),
        Err(e) => Err(Outcome::Infrastructure(format!(
            "cannot read the repository's refs: {e}"
        ))),
    }
}

/// Runs the plan's `setup`, if it has one: an infrastructure step (its
/// failure is retried, not counted).
pub(super) fn setup(
    ctx: &RunCtx,
    task: &Task,
    r: &AttemptResult,
    files: &AttemptFiles,
    env: &[(String, String)],
) -> Step<()> {
    let Some(setup) = &ctx.plan.settings.setup else {
        return Ok(());
    };
    phase(ctx.io(), &task.name, r.input.attempt, "setup");
    let log = files.dir.join("setup.log");
    match run_setup(ctx, setup, &r.worktree, env, &log, task.timeout) {
        Ok(Exit::Stopped) => Err(Outcome::Interrupted),
        Ok(e) if e.success() => Ok(()),
        Ok(e) => {
            let executor = ctx.plan.settings.setup_executor.as_deref();
            let why = crate::run::engine::agent::executor::failure(executor, &setup_report(&log))
                .map_or_else(String::new, |w| format!(": {w}"));
            Err(Outcome::Infrastructure(format!(
                "setup failed ({}{why}); see {}",
                e.describe(task.timeout),
                log.display()
            )))
        }
        Err(e) => Err(Outcome::Infrastructure(format!("setup: {e}"))),
    }
}

/// Where the launcher of the `setup` whose log is `log` reports
/// (`setup.executor` beside `setup.log`, `merge-setup.executor`).
pub fn setup_report(log: &Path) -> std::path::PathBuf {
    log.with_extension("executor")
}

/// Runs the plan's `setup` command in `dir` (a new worktree, or a scratch
/// worktree before re-gating a merge), its output in `log`, with /dev/null
/// as stdin and without `LOOP_DIFF_FILE`, through the plan's setup executor.
///
/// Errors: the command could not be started or its log written.
pub fn run_setup(
    ctx: &RunCtx,
    setup: &str,
    dir: &Path,
    env: &[(String, String)],
    log: &Path,
    timeout: Duration,
) -> Result<Exit, String> {
    let executor = ctx.plan.settings.setup_executor.as_deref();
    let command = Executor::wrap(executor, setup);
    // Its launcher's report beside its log (`setup.executor`).
    let env = crate::run::engine::agent::executor::with_report(
        env.to_vec(),
        executor,
        &setup_report(log),
    );
    let spec = Spec {
        command: &command,
        dir,
        env: &env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin: None,
        stdout: log,
        stderr: None,
        timeout,
        idle: None,
        grace: crate::run::engine::agent::executor::grace(executor),
    };
    process::run(&spec, &ctx.control)
}
