//! One attempt of one task (docs/running.md steps 2–6), run on a pool thread,
//! as a sequence of named steps, each a function of its own: its worktree
//! ([`prepare`]: a fresh one from the integration branch head or one from
//! the pool, its files and prompt, the user's refs, `setup`), for a task
//! that verifies its `accept` on the starting commit first ([`verify`]),
//! the agent or command ([`work`]), the handoff and what the agent's output reported
//! ([`work::judge`]; a question goes to the task's [`answerer`]), the commit on the task branch ([`commit`]), and the
//! gates ([`gate`]). Each step returns what the next needs, or the outcome
//! that ends the attempt early ([`Step`]). The merge (step 7) is the
//! coordinator's, see [`crate::run::engine::land::merge`].

pub mod answerer;
mod commit;
pub mod context_files;
pub mod gate;
mod gitlinks;
pub mod message;
mod prepare;
mod protect;
mod review;
mod verify;
pub mod watch;
mod work;
mod worktree;

pub use prepare::run_setup;
pub use work::{HANDOFF_BLOCKED, NO_RESULT_BLOCKED, last_line};

use crate::plan::{Agent, OnFail, Task, TaskKind};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{Io, Protocol, RunCtx};
use crate::run::engine::guard;
use crate::run::engine::outcome::{AttemptInput, AttemptResult, Outcome};
use crate::run::store::events::Event;
use crate::run::sys::checkout::Checkout;
use gate::Verdict;
use std::borrow::Cow;
use std::sync::Arc;

/// What one step of an attempt gives the next, or the outcome that ends
/// the attempt there (a failure, an infrastructure error, an interruption).
type Step<T> = Result<T, Outcome>;

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

/// A failed attempt that the next attempt retries.
fn failed(reason: impl Into<String>, feedback: impl Into<String>) -> Outcome {
    Outcome::Failed {
        reason: reason.into(),
        feedback: feedback.into(),
        on_fail: OnFail::Retry,
    }
}

/// Announces that attempt `n` of `task` entered `phase` (for the display
/// and events.jsonl).
fn phase(io: Io<'_>, task: &str, n: u32, phase: &str) {
    io.events.emit(Event::Phase {
        task: task.to_string(),
        attempt: n,
        phase: phase.to_string(),
        gate: None,
    })
}

/// Runs one attempt to its outcome. Never panics on subprocess or I/O errors:
/// they become an [`Outcome::Infrastructure`] or a failed attempt.
pub fn run(ctx: &RunCtx, input: AttemptInput) -> AttemptResult {
    let names = ctx.try_names(input.task, input.id);
    let mut result = AttemptResult::new(names, input, Outcome::Interrupted);
    result.outcome = attempt(ctx, &mut result).unwrap_or_else(|ended| ended);
    // Tool calls the agent was refused: told to the next attempt, kept in
    // the logs.
    if let Some(note) = result
        .report
        .as_ref()
        .and_then(crate::run::engine::agent::report::AgentReport::denials_feedback)
    {
        if let Outcome::Failed { feedback, .. } = &mut result.outcome {
            feedback.push_str("\n\n");
            feedback.push_str(&note);
        }
        if let Some(f) = &result.files {
            let _ = std::fs::write(f.dir.join("permission-denials.txt"), format!("{note}\n"));
        }
    }
    // Whatever the outcome, compare the user's refs with what they were
    // before the attempt's first subprocess (the guard, `crate::run::engine::guard`).
    if let Some(before) = &result.refs_before {
        match guard::snapshot(&ctx.git, &ctx.integration_ref, &ctx.layout.worktrees) {
            Ok(after) => result.ref_changes = guard::charged(&ctx.git, before, &after),
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

/// The steps of attempt `r`, in the order they run.
fn attempt(ctx: &RunCtx, r: &mut AttemptResult) -> Step<Outcome> {
    let task = as_run(&ctx.plan.tasks[r.input.task], r.input.agent.as_ref());
    let task = task.as_ref();
    let files = prepare::files(ctx.io(), &ctx.layout, task, r)?;
    // loopc's own git calls for this attempt are bounded by its timeout
    // (and, like every subprocess, by the run's kill switch).
    let git = ctx.git.with_timeout(task.timeout);
    let checkout = prepare::worktree(ctx.checkouts(), &ctx.control, &git, r)?;
    let prompt = prepare::inputs(ctx, task, r, &files)?;
    let base = r.input.base.clone();
    let proto = Protocol {
        task,
        attempt: r.input.attempt,
        base: &base,
        files: &files,
    };
    let env = proto.env(&ctx.git, &r.worktree, &files.prompt, &files.handoff, None);
    prepare::refs_before(ctx, &git, r)?;
    prepare::setup(ctx, task, r, &files, &env)?;
    if r.input.verify
        && let Some(satisfied) = verify::first(ctx.io(), &proto, &checkout, r)?
    {
        return Ok(satisfied);
    }
    let done = work::run(ctx.io(), task, r, &files, &env, &prompt)?;
    // What the agent did to loopc's work directory (removed it, `git clean
    // -fdx`; put links in it) is undone before loopc writes there.
    if files.work != files.dir {
        crate::run::engine::context::reclaim_work_dir(&r.worktree)
            .map_err(Outcome::Infrastructure)?;
    }
    let judged = match work::judge(task, r, &files, &done) {
        // A question goes to the task's answerer first, if it has one.
        Err(Outcome::NeedsHuman(question)) => {
            answerer::ask(ctx, task, r, &files, &env, &question);
            return Err(Outcome::NeedsHuman(question));
        }
        judged => judged?,
    };
    let plan_file = ctx.plan_file.as_deref();
    let made = commit::commit(
        ctx.io(),
        &git,
        &checkout,
        task,
        r,
        &files,
        (&judged, plan_file),
    )?;
    Ok(checks(ctx, &proto, &checkout, r, made, judged.summary))
}

/// The last step: the task's gates and acceptance on the attempt's commit
/// (`made`: the commit and the paths it changed).
fn checks(
    ctx: &RunCtx,
    proto: &Protocol,
    checkout: &Checkout,
    r: &mut AttemptResult,
    made: commit::Made,
    summary: Option<String>,
) -> Outcome {
    let checks = gate::checks_of(proto.task);
    let mut gate_cost = Cost::default();
    let verdict = gate::run_checks(ctx.io(), proto, checkout, &checks, "gate", &mut gate_cost);
    r.unreviewed =
        review::only_review_rejected(ctx.io(), proto, checkout, &checks, &verdict, &mut gate_cost);
    r.cost.absorb(gate_cost);
    match verdict {
        Verdict::Pass => {
            r.work = made.work;
            Outcome::Passed {
                commit: made.commit,
                summary,
                files: made.files,
            }
        }
        Verdict::Reject {
            reason,
            feedback,
            on_fail,
            ..
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
