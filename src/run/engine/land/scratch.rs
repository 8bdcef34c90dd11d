//! A merge result judged before it lands: how a merge went ([`Merge`]),
//! what the guard says after something ran on it, and the scratch
//! worktree in which a merge result (or a replay, or a spec move) is
//! checked out, set up and gated. Shared by [`super::merge`],
//! [`super::resolve`], [`super::replay`] and [`super::advance`], below
//! all of them.

use crate::plan::Task;
use crate::run::engine::attempt::gate::{self, Check, GateCost, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{AttemptFiles, Protocol, RunCtx};
use crate::run::engine::guard;
use crate::run::engine::outcome::stopping;
use crate::run::store::layout::TryId;
use crate::run::sys::process::Exit;
use crate::run::sys::worktree;

/// How a merge went.
#[derive(Debug, Clone, PartialEq)]
pub enum Merge {
    /// The integration branch now points at `commit`.
    Advanced {
        /// The new head.
        commit: String,
        /// `fast_forward`, `merge`, `resolved` or `none`.
        how: &'static str,
        /// The new head's tree, when the merge made it (`merge`).
        tree: Option<String>,
    },
    /// The change conflicts with the integration branch in these paths.
    Conflict(Vec<String>),
    /// The merge result failed a check.
    Rejected(Verdict),
    /// The change conflicted and the task's resolver did not resolve it
    /// (docs/running.md: a conflict, with the resolver's output as feedback).
    Unresolved {
        /// One line.
        reason: String,
        /// Feedback for the next attempt.
        feedback: String,
    },
    /// Refs that are not loopc's changed while the merge's resolver or
    /// gates ran ([`crate::run::engine::guard`]): the integration branch was not moved.
    RefsChanged {
        /// What changed.
        changes: Vec<crate::run::engine::guard::RefChange>,
        /// What ran: "the resolver `fixer`", "the merge gates".
        during: String,
    },
    /// The run is stopping.
    Stopped,
    /// loopc could not merge (git failed, the branch moved under it).
    Error(String),
}

/// What the guard says after `what` ran on a merge: `None` when no ref
/// that is not loopc's changed since `before`; else the merge's result
/// ([`Merge::RefsChanged`], or why the refs could not be read).
pub(super) fn refs_moved(ctx: &RunCtx, before: &guard::Snapshot, what: &str) -> Option<Merge> {
    match guard::changed_since(
        &ctx.git,
        &ctx.integration_ref,
        &ctx.layout.worktrees,
        before,
    ) {
        Ok(changes) if changes.is_empty() => None,
        Ok(changes) => Some(Merge::RefsChanged {
            changes,
            during: what.to_string(),
        }),
        Err(_) if stopping(&ctx.control) => Some(Merge::Stopped),
        Err(e) => Some(Merge::Error(format!(
            "cannot read the repository's refs: {e}"
        ))),
    }
}

/// Checks out `merged` detached in a scratch worktree, runs `setup`, then
/// `task`'s checks that run again on a merge ([`gate::rechecks_of`]:
/// not its agent gates, whose verdict on the attempt carries over, unless
/// `recheck = merge`; all of them with `all`, for a resolver's work, which
/// no gate has judged yet) plus `earlier` (checks of tasks merged before),
/// and removes the worktree. `head` is the integration branch head the
/// result would replace (`LOOP_BASE`).
#[allow(clippy::too_many_arguments)]
pub(super) fn gate_in_scratch(
    ctx: &RunCtx,
    task: &Task,
    attempt: u32,
    id: TryId,
    files: &AttemptFiles,
    merged: &str,
    head: &str,
    (earlier, all): (&[Check], bool),
    cost: &mut Cost,
) -> Verdict {
    let mut checks = if all {
        gate::checks_of(task)
    } else {
        gate::rechecks_of(task)
    };
    add_checks(&mut checks, earlier);
    run_in_scratch(
        ctx, task, attempt, id, files, merged, head, &checks, "merge", cost,
    )
}

/// Appends to `checks` those of `more` that run something `checks` does
/// not run yet.
pub(super) fn add_checks(checks: &mut Vec<Check>, more: &[Check]) {
    for c in more {
        if !checks.iter().any(|k| k.kind == c.kind) {
            checks.push(c.clone());
        }
    }
}

/// Checks out `merged` detached in a scratch worktree named after `task`
/// and the try `id`, runs `setup`, then `checks` (with `task`'s protocol and
/// timeout; their events and logs name `phase`), and removes the worktree.
/// No checks: a pass, without a worktree. `head` is the integration branch
/// head the result would replace (`LOOP_BASE`).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_in_scratch(
    ctx: &RunCtx,
    task: &Task,
    attempt: u32,
    id: TryId,
    files: &AttemptFiles,
    merged: &str,
    head: &str,
    checks: &[Check],
    phase: &str,
    cost: &mut Cost,
) -> Verdict {
    if checks.is_empty() {
        // Nothing to check: no worktree, no `setup`.
        return Verdict::Pass;
    }
    let scratch = ctx.layout.merge_worktree(&task.name, id);
    let git = ctx.git.with_timeout(task.timeout);
    let mut co = {
        let _g = ctx.worktree_lock.lock();
        match worktree::create(&git, &scratch, None, merged).and_then(|()| git.checkout(&scratch)) {
            Ok(co) => co,
            Err(_) if stopping(&ctx.control) => return Verdict::Stopped,
            Err(e) => return Verdict::Error(format!("cannot create merge worktree: {e}")),
        }
    };
    co.excluded = ctx.brought.paths();
    let ready = crate::run::engine::worktree_files::place(&ctx.brought, &scratch)
        .and_then(|()| crate::run::engine::context::create_work_dir(&scratch).map(|_| ()));
    if let Err(e) = ready {
        let _g = ctx.worktree_lock.lock();
        let _ = worktree::remove(&ctx.git, &scratch, None);
        return Verdict::Error(e);
    }
    let proto = Protocol {
        task,
        attempt,
        base: head,
        files,
    };
    let verdict = (|| {
        if let Some(setup) = &ctx.plan.settings.setup {
            let env = proto.env(&ctx.git, &scratch, &files.prompt, &files.handoff, None);
            let log = files.dir.join("merge-setup.log");
            match crate::run::engine::attempt::run_setup(
                ctx,
                setup,
                &scratch,
                &env,
                &log,
                task.timeout,
            ) {
                Ok(Exit::Stopped) => return Verdict::Stopped,
                Ok(e) if e.success() => {}
                Ok(e) => {
                    return Verdict::Error(format!(
                        "setup failed in the merge worktree ({})",
                        e.describe(task.timeout)
                    ));
                }
                Err(_) if stopping(&ctx.control) => return Verdict::Stopped,
                Err(e) => return Verdict::Error(e),
            }
        }
        let mut gc = GateCost::default();
        let v = gate::run_checks(ctx.io(), &proto, &co, checks, phase, &mut gc);
        cost.absorb(gc);
        v
    })();
    {
        let _g = ctx.worktree_lock.lock();
        let _ = worktree::remove(&ctx.git, &scratch, None);
    }
    verdict
}
