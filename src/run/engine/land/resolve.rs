//! A resolver for merge conflicts (docs/running.md "A resolver for merge
//! conflicts"). When a passed attempt's merge onto the integration branch
//! conflicts and its task names a `resolver`, loopc merges the attempt's
//! commit in a scratch worktree at the integration head, leaving conflict
//! markers, and runs the resolver agent there with the same protocol as
//! any agent (prompt on stdin, `LOOP_*`, handoff). Its resolution is
//! committed as the merge commit (parents: the head, then the task's
//! commit), gated like any merge ([`crate::run::engine::land::scratch::gate_in_scratch`]) and
//! brought onto the integration branch by the same compare-and-swap.
//!
//! A resolution is refused when it leaves conflict markers in a conflicted
//! file, deletes a conflicted file both sides changed or changes a file
//! outside the conflict without listing it in its handoff's `extra_files`
//! (which must stay inside the worktree), drops the task's change
//! altogether, changes refs that are not loopc's, or fails a check; the attempt then fails as a conflict does, with the resolver's
//! output in its feedback. The resolver runs inside the attempt: its cost
//! is the attempt's, its logs lie in the attempt's `resolver/`, and it is
//! one more iteration of the run.

use crate::plan::{Agent, Executor, Task, TaskKind};
use crate::run::engine::agent::handoff::{self, HandoffStatus};
use crate::run::engine::attempt::gate::{Check, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{AttemptFiles, Protocol, RunCtx};
use crate::run::engine::guard::Snapshot;
use crate::run::engine::land::scratch::{Merge, refs_moved};
use crate::run::engine::outcome::{AttemptResult, Limited, stopping};
use crate::run::store::events::Event;
use crate::run::sys::checkout::Checkout;
use crate::run::sys::process::{self, Exit, Spec};
use crate::run::sys::worktree;
use crate::state::ResolverRecord;
use std::path::Path;
use std::sync::Arc;

mod check;
mod text;
pub use check::marker_line;
use check::{check_extra_files, check_resolution, presence};
use text::{feedback, output_of, prompt};

/// The merge a resolver is asked to finish.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The passed attempt's commit.
    pub commit: &'a str,
    /// The integration branch head it conflicts with.
    pub head: &'a str,
    /// The conflicted paths.
    pub conflicts: &'a [String],
    /// Each task whose work moved the integration branch in this run, with
    /// the head it moved it to, in order.
    pub landings: &'a [(usize, String)],
    /// The command checks of tasks merged before (gated again, as on any merge).
    pub earlier: &'a [Check],
}

/// Why a resolution was not merged: one line, and what else the next
/// attempt is told.
struct Refusal {
    reason: String,
    detail: String,
}

impl Refusal {
    fn new(reason: impl Into<String>, detail: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
            detail: detail.into(),
        }
    }
}

/// What went wrong on the way: a refusal, the run stopping, or the
/// integration branch could not be moved (it moved under loopc, or git
/// failed), which is a merge error as on any merge.
enum Stop {
    Refused(Refusal),
    Stopped,
    Error(String),
    /// The guard's verdict ([`crate::run::engine::land::scratch::refs_moved`]).
    Guard(Merge),
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Stop {
        Stop::Refused(r)
    }
}

/// Runs `agent` on the conflict of attempt `r`'s merge described by `side`
/// and returns the merge's result and the record of the resolver's run.
/// Costs (the resolver's and its resolution's checks') go to `cost`.
/// `refs` are the refs that are not loopc's before the merge: if the
/// resolver or the resolution's checks change them, the resolution is
/// refused ([`Merge::RefsChanged`]).
/// Never panics on git, process or I/O errors: they refuse the resolution.
pub fn resolve(
    ctx: &RunCtx,
    r: &AttemptResult,
    agent: &Arc<Agent>,
    side: &Side<'_>,
    refs: &Snapshot,
    cost: &mut Cost,
) -> (Merge, ResolverRecord) {
    let task = &ctx.plan.tasks[r.input.task];
    let with = others(ctx, &r.input.base, side).unwrap_or_default();
    let mut record = ResolverRecord {
        agent: agent.name.clone(),
        conflicts: side.conflicts.to_vec(),
        with: with
            .iter()
            .map(|&i| ctx.plan.tasks[i].name.clone())
            .collect(),
        ..ResolverRecord::default()
    };
    ctx.events.emit(Event::Phase {
        task: task.name.clone(),
        attempt: r.input.attempt,
        phase: "resolve".into(),
        gate: None,
    });
    let Some(files) = r.files.as_ref() else {
        record.reason = Some("the attempt has no log directory".into());
        return (
            Merge::Error("the attempt has no log directory".into()),
            record,
        );
    };
    let dir = files.dir.join("resolver");
    record.logs = dir.to_string_lossy().into_owned();
    let scratch = ctx.layout.merge_worktree(&task.name, r.input.id);
    let mut own = Cost::default();
    let result = run(
        ctx,
        r,
        agent,
        side,
        &with,
        &scratch,
        &dir,
        &mut own,
        &mut record,
    );
    {
        let _g = ctx.worktree_lock.lock();
        let _ = worktree::remove(&ctx.git, &scratch, None);
    }
    // The guard, as on an attempt's agent (unless the run is stopping).
    let who = format!("the resolver `{}`", agent.name);
    let result = match result {
        Err(Stop::Stopped) => Err(Stop::Stopped),
        other => match refs_moved(ctx, refs, &who) {
            Some(m) => Err(Stop::Guard(m)),
            None => other,
        },
    };
    // The resolution's checks, on a fresh checkout of the merge commit.
    let result =
        result.and_then(|merged| gate_resolution(ctx, r, files, side, refs, merged, &mut own));
    let result = result.and_then(|merged| {
        match ctx
            .git
            .update_ref(&ctx.integration_ref, &merged, Some(side.head))
        {
            Ok(true) => Ok(merged),
            Ok(false) => Err(Stop::Error(format!(
                "{} moved while loopc was running; it must only be changed by loopc during a run",
                ctx.integration_ref
            ))),
            Err(e) => Err(Stop::Error(e)),
        }
    });
    record.cost_micro_usd = (!own.unknown).then_some(own.micro_usd);
    cost.absorb(own);
    let merge = merge_of(result, agent, side, &dir, &mut record);
    (merge, record)
}

/// Gates the resolution `merged` like any merge, in a scratch worktree
/// (its checks' costs go to `own`); the guard looks at the user's refs after.
fn gate_resolution(
    ctx: &RunCtx,
    r: &AttemptResult,
    files: &AttemptFiles,
    side: &Side<'_>,
    refs: &Snapshot,
    merged: String,
    own: &mut Cost,
) -> Result<String, Stop> {
    let task = &ctx.plan.tasks[r.input.task];
    let mut gc = Cost::default();
    let verdict = crate::run::engine::land::scratch::gate_in_scratch(
        ctx,
        task,
        r.input.attempt,
        r.input.id,
        files,
        &merged,
        side.head,
        (side.earlier, true),
        &mut gc,
    );
    own.absorb(gc);
    if verdict != Verdict::Stopped
        && let Some(m) = refs_moved(ctx, refs, "the merge gates")
    {
        return Err(Stop::Guard(m));
    }
    match verdict {
        Verdict::Pass => Ok(merged),
        Verdict::Error(_) if stopping(&ctx.control) => Err(Stop::Stopped),
        Verdict::Stopped => Err(Stop::Stopped),
        Verdict::Reject {
            reason, feedback, ..
        } => Err(Refusal::new(format!("its resolution failed a check: {reason}"), feedback).into()),
        Verdict::Blocked(why) => Err(Refusal::new(
            format!("a check of its resolution says the task needs help: {why}"),
            why,
        )
        .into()),
        Verdict::Limited(l) => Err(Refusal::new(
            format!(
                "a check of its resolution hit a usage limit of agent `{}`",
                l.agent
            ),
            l.message,
        )
        .into()),
        Verdict::Error(e) => {
            Err(Refusal::new(format!("its resolution could not be checked: {e}"), e).into())
        }
    }
}

/// The merge's result from how the resolution ended, recorded in `record`
/// (`dir`: the resolver's log directory, whose output a refusal quotes).
fn merge_of(
    result: Result<String, Stop>,
    agent: &Agent,
    side: &Side<'_>,
    dir: &std::path::Path,
    record: &mut ResolverRecord,
) -> Merge {
    match result {
        Ok(merged) => {
            record.resolved = true;
            record.commit = Some(merged.clone());
            Merge::Advanced {
                commit: merged,
                how: "resolved",
                tree: None,
            }
        }
        Err(Stop::Stopped) => {
            record.reason = Some("the run stopped".into());
            Merge::Stopped
        }
        Err(Stop::Error(e)) => {
            record.reason = Some(e.clone());
            Merge::Error(e)
        }
        Err(Stop::Guard(m)) => {
            record.reason = Some(match &m {
                Merge::RefsChanged { changes, during } => format!(
                    "refs that are not loopc's changed while {during} ran: {}",
                    changes
                        .iter()
                        .map(crate::run::engine::guard::RefChange::describe)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                Merge::Error(e) => e.clone(),
                _ => "the run stopped".into(),
            });
            m
        }
        Err(Stop::Refused(f)) => {
            let output = output_of(dir);
            record.reason = Some(f.reason.clone());
            Merge::Unresolved {
                reason: format!(
                    "merge conflict in {}; resolver `{}` did not resolve it: {}",
                    side.conflicts.join(", "),
                    agent.name,
                    f.reason
                ),
                feedback: feedback(side.conflicts, record, &f, &output),
            }
        }
    }
}

/// Stops the resolution for an error loopc met running it: the run is
/// stopping, or a refusal naming `e`.
fn infra_stop(ctx: &RunCtx, e: String) -> Stop {
    if stopping(&ctx.control) {
        Stop::Stopped
    } else {
        Refusal::new(format!("loopc could not run it: {e}"), e).into()
    }
}

/// The resolver's scratch worktree at `scratch`: the integration head
/// with the attempt's commit merged into it and left with its conflict
/// markers (the common base shown too: the resolver sees what each side
/// changed), and its work directory; `dir` is the resolver's log directory.
fn conflicted_scratch(
    ctx: &RunCtx,
    git: &crate::run::sys::git::Git,
    side: &Side<'_>,
    scratch: &Path,
    dir: &Path,
) -> Result<(Checkout, std::path::PathBuf), Stop> {
    let infra = |e: String| infra_stop(ctx, e);
    std::fs::create_dir_all(dir)
        .map_err(|e| infra(format!("cannot create {}: {e}", dir.display())))?;
    let mut co = {
        let _g = ctx.worktree_lock.lock();
        worktree::create(git, scratch, None, side.head)
            .and_then(|()| git.checkout(scratch))
            .map_err(|e| infra(format!("cannot create the resolver's worktree: {e}")))?
    };
    co.excluded = ctx.brought.paths();
    crate::run::engine::worktree_files::place(&ctx.brought, scratch).map_err(infra)?;
    let work = crate::run::engine::context::create_work_dir(scratch).map_err(infra)?;
    let merged = git
        .try_run_co(
            &co,
            &[
                "-c",
                "merge.conflictStyle=diff3",
                "-c",
                "rerere.enabled=false",
                "merge",
                "--no-commit",
                "--no-ff",
                "-q",
                side.commit,
            ],
        )
        .map_err(infra)?;
    if !matches!(merged.code, 0 | 1) {
        return Err(infra(format!(
            "`git merge` failed: {}",
            crate::run::sys::git::bounded_stderr(&merged.stderr)
        )));
    }
    Ok((co, work))
}

/// The resolver's prompt ([`prompt`]: `with`, the conflict `side` and
/// which side has each file, the `scratch` worktree), after the task's
/// `context` files, as its attempt's prompt had them.
///
/// Errors: a context file cannot be read from the attempt's base.
fn resolver_prompt(
    ctx: &RunCtx,
    r: &AttemptResult,
    with: &[usize],
    (side, sides): (&Side<'_>, &[check::Presence]),
    scratch: &Path,
) -> Result<String, String> {
    let task = &ctx.plan.tasks[r.input.task];
    let context =
        crate::run::engine::attempt::context_files::sections(&ctx.git, task, &r.input.base)
            .map_err(|e| e.into_message())?;
    let text = prompt(
        &ctx.plan,
        task,
        with,
        side,
        sides,
        scratch,
        &r.input.progress,
    );
    Ok(context + &text)
}

/// The resolver's run in the scratch worktree, up to the merge commit of
/// its resolution (not yet checked).
#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &RunCtx,
    r: &AttemptResult,
    agent: &Arc<Agent>,
    side: &Side<'_>,
    with: &[usize],
    scratch: &Path,
    dir: &Path,
    cost: &mut Cost,
    record: &mut ResolverRecord,
) -> Result<String, Stop> {
    let task = &ctx.plan.tasks[r.input.task];
    let infra = |e: String| infra_stop(ctx, e);
    let timeout = agent.timeout.unwrap_or(task.timeout);
    let git = ctx.git.with_timeout(timeout);
    let (co, work) = conflicted_scratch(ctx, &git, side, scratch, dir)?;
    // Which side deleted a conflicted file (a modify/delete conflict).
    let sides = presence(ctx.io(), side).map_err(infra)?;
    let text = resolver_prompt(ctx, r, with, (side, &sides), scratch).map_err(infra)?;
    let files = AttemptFiles::in_dirs(dir.to_path_buf(), work);
    for (path, body) in [
        (&files.prompt, text.as_str()),
        (&files.progress, r.input.progress.as_str()),
    ] {
        std::fs::write(path, body)
            .map_err(|e| infra(format!("cannot write {}: {e}", path.display())))?;
    }
    // Empty, for the resolver and in its logs (where the logs keep their
    // own copy of the feedback, as an attempt's do).
    files.write_feedback("").map_err(infra)?;
    let run_task = as_resolver(task, agent, &text);
    let proto = Protocol {
        task: &run_task,
        attempt: r.input.attempt,
        base: side.head,
        files: &files,
    };
    let env = proto.env(&ctx.git, scratch, &files.prompt, &files.handoff, None);
    let executor = agent.executor.as_deref();
    let command = Executor::wrap(executor, &agent.run);
    let report_file = crate::run::engine::agent::executor::report_path(dir, "agent");
    let env = crate::run::engine::agent::executor::with_report(env, executor, &report_file);
    let stdout = dir.join("agent.stdout");
    let stderr = dir.join("agent.stderr");
    let spec = Spec {
        command: &command,
        dir: scratch,
        env: &env,
        env_remove: &["LOOP_DIFF_FILE"],
        stdin: Some(text.clone().into_bytes()),
        stdout: &stdout,
        stderr: Some(&stderr),
        timeout,
        idle: agent.idle,
        grace: crate::run::engine::agent::executor::grace(executor),
    };
    let exit = crate::run::engine::attempt::watch::while_running(
        ctx.io(),
        (&task.name, r.input.attempt),
        scratch,
        (&agent.output, agent.idle),
        &stdout,
        || process::run(&spec, &ctx.control),
    );
    files.save_logs();
    let exit = exit.map_err(infra)?;
    if !matches!(
        exit,
        Exit::Code(0) | Exit::TimedOut | Exit::Stalled(_) | Exit::Stopped
    ) && let Some(why) = crate::run::engine::agent::executor::failure(executor, &report_file)
    {
        return Err(infra(why));
    }
    record.started = true;
    let extra_files = judge(agent, exit, timeout, &files.handoff, &stdout, &stderr, cost)?;
    check_extra_files(&extra_files)?;
    let tree = resolution_tree(ctx, &git, &co).map_err(|e| match e {
        Stop::Refused(_) if stopping(&ctx.control) => Stop::Stopped,
        other => other,
    })?;
    check_resolution(ctx.io(), &co, side, &sides, &tree, &extra_files, dir)?;
    let title = crate::run::store::progress::one_line(task.title.as_deref().unwrap_or(&task.name));
    let message = format!(
        "loop: merge {} ({title})\n\nConflicts in {} resolved by agent `{}`.",
        task.name,
        side.conflicts.join(", "),
        agent.name
    );
    ctx.git
        .commit_tree(&tree, &[side.head, side.commit], &message)
        .map_err(infra)
}

/// Judges the resolver's run as an attempt's agent is judged: loopc's
/// timeout or kill, the exit status, then its handoff (`handoff_file`) or
/// what its output (`stdout`) reports; adds its cost to `cost`. A failure
/// names the last line of its `stderr`. Returns the handoff's
/// `extra_files`.
fn judge(
    agent: &Agent,
    exit: Exit,
    timeout: std::time::Duration,
    handoff_file: &Path,
    stdout: &Path,
    stderr: &Path,
    cost: &mut Cost,
) -> Result<Vec<String>, Stop> {
    let h = handoff::read(handoff_file);
    let report = crate::run::engine::agent::report::read(&agent.output, stdout);
    let reported = crate::run::engine::agent::report::reported_cost(report.as_ref(), &h);
    if !matches!(exit, Exit::Stopped | Exit::TimedOut | Exit::Stalled(_))
        && let Some(l) = Limited::of(&agent.name, report.as_ref())
    {
        cost.micro_usd += reported.unwrap_or(0);
        return Err(Refusal::new(
            format!("it hit a usage limit: {}", l.message),
            String::new(),
        )
        .into());
    }
    cost.add_reported(reported, agent);
    match exit {
        Exit::Stopped => return Err(Stop::Stopped),
        Exit::Code(0) => {}
        Exit::TimedOut | Exit::Stalled(_) => {
            return Err(Refusal::new(format!("it {}", exit.describe(timeout)), "").into());
        }
        other => {
            // Its last stderr line says why more often than its exit status
            // does (`sh: 1: resolve.sh: not found`).
            let line = crate::run::engine::attempt::last_line(&process::tail(stderr, 4096));
            let why = format!("it failed ({})", other.describe(timeout));
            let why = if line.is_empty() {
                why
            } else {
                format!("{why}: {line}")
            };
            return Err(Refusal::new(why, "").into());
        }
    }
    if let Some(e) = report.as_ref().and_then(|s| s.error.as_ref()) {
        return Err(
            Refusal::new(format!("it reported {}", e.describe()), e.message.clone()).into(),
        );
    }
    let h = h.map_err(|e| Refusal::new(e.clone(), e))?;
    Ok(match h {
        None => Vec::new(),
        Some(h) => match h.status {
            HandoffStatus::Completed => h.extra_files,
            status => {
                let word = match status {
                    HandoffStatus::Blocked => "blocked",
                    HandoffStatus::NeedsHuman => "needs_human",
                    _ => "failed",
                };
                let summary = h.summary.unwrap_or_default();
                return Err(Refusal::new(
                    handoff::with_reason(&format!("its handoff says {word}"), &summary),
                    String::new(),
                )
                .into());
            }
        },
    })
}

/// The tree of the resolver's worktree as it left it (loopc's files left
/// out), after checking that it is still the worktree loopc made.
fn resolution_tree(
    ctx: &RunCtx,
    git: &crate::run::sys::git::Git,
    co: &Checkout,
) -> Result<String, Stop> {
    if let Err(e) = ctx.git.verify_checkout(co, None) {
        return Err(Refusal::new(
            e.clone(),
            format!("{e}. The resolver must leave the worktree's `.git` alone."),
        )
        .into());
    }
    git.stage_all(co)
        .and_then(|()| git.write_tree(co))
        .map_err(|e| Refusal::new(format!("loopc could not read its resolution: {e}"), e).into())
}

/// Task `task` as its resolver runs: the resolver as its agent, the
/// resolver's prompt, and the resolver's environment under the task's own.
fn as_resolver(task: &Task, agent: &Arc<Agent>, prompt: &str) -> Task {
    let mut t = task.clone();
    t.kind = TaskKind::Agent {
        prompt: prompt.into(),
        agent: Arc::clone(agent),
    };
    t.env = agent.env.clone();
    t.env.extend(task.own_env.clone());
    t
}

/// The tasks (indices) among `side.landings` after `base` whose work
/// changed a conflicted path: each landing's change is the integration
/// branch's move from the landing before it (from `base`, for the first).
///
/// Errors: git fails.
fn others(ctx: &RunCtx, base: &str, side: &Side<'_>) -> Result<Vec<usize>, String> {
    let range = format!("{base}..{}", side.head);
    let list = ctx
        .git
        .read(&["rev-list", "--first-parent", "--reverse", &range])?;
    let order: Vec<&str> = list.lines().collect();
    let mut on: Vec<(usize, usize, &str)> = side
        .landings
        .iter()
        .filter_map(|(t, c)| {
            let p = order.iter().position(|o| o == c)?;
            Some((p, *t, c.as_str()))
        })
        .collect();
    on.sort_unstable();
    let mut prev = base.to_string();
    let mut out = Vec::new();
    for (_, t, c) in on {
        let changed = ctx.git.changes(&prev, c)?.paths;
        if changed.iter().any(|p| side.conflicts.contains(p)) && !out.contains(&t) {
            out.push(t);
        }
        prev = c.to_string();
    }
    Ok(out)
}
