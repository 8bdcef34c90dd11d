//! Step 7: bringing a passed attempt onto the integration branch, one at a
//! time, on the coordinating thread.
//!
//! The invariant: the integration branch only ever points at a commit on
//! which every merged task's checks passed. When the branch has not moved
//! since the attempt's worktree was made, the attempt's own commit (already
//! gated) is fast-forwarded to. Otherwise the two are merged without a
//! worktree (`git merge-tree --write-tree`), the merge commit is checked
//! out detached in a scratch worktree, and the task's checks, plus the
//! command checks of every task merged earlier in this run, run on it; only
//! then does the branch move (compare-and-swap `update-ref`).

use super::attempt::AttemptResult;
use super::budget::Cost;
use super::cache::Entry;
use super::context::{AttemptFiles, Protocol, RunCtx};
use super::gate::{self, Check, GateCost, Verdict};
use crate::plan::Task;
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use crate::run::sys::process::Exit;
use crate::run::sys::worktree;

/// How a merge went.
#[derive(Debug, Clone, PartialEq)]
pub enum Merge {
    /// The integration branch now points at `commit`.
    Advanced {
        /// The new head.
        commit: String,
        /// `fast_forward`, `merge` or `none`.
        how: &'static str,
    },
    /// The change conflicts with the integration branch in these paths.
    Conflict(Vec<String>),
    /// The merge result failed a check.
    Rejected(Verdict),
    /// The run is stopping.
    Stopped,
    /// loopc could not merge (git failed, the branch moved under it).
    Error(String),
}

/// Merges the passed attempt `r` (task commit `commit`) into the
/// integration branch whose head is `head`. `earlier` are the checks of
/// tasks merged before in this run; `cost` receives agent gates' costs.
pub fn integrate(
    ctx: &RunCtx,
    r: &AttemptResult,
    commit: &str,
    head: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Merge {
    let task = &ctx.plan.tasks[r.input.task];
    let base = r.input.base.as_str();
    if commit == base {
        return Merge::Advanced {
            commit: head.to_string(),
            how: "none",
        };
    }
    if head == base {
        return match ctx.git.update_ref(&ctx.integration_ref, commit, Some(head)) {
            Ok(true) => Merge::Advanced {
                commit: commit.to_string(),
                how: "fast_forward",
            },
            Ok(false) => Merge::Error(format!(
                "{} moved while loopc was running; it must only be changed by loopc during a run",
                ctx.integration_ref
            )),
            Err(e) => Merge::Error(e),
        };
    }
    ctx.events.emit(Event::Phase {
        task: task.name.clone(),
        attempt: r.input.attempt,
        phase: "merge".into(),
        gate: None,
    });
    let tree = match ctx.git.merge_tree(head, commit) {
        Ok(MergeTree::Clean(tree)) => tree,
        Ok(MergeTree::Conflict(paths)) => return Merge::Conflict(paths),
        Err(e) => return Merge::Error(e),
    };
    let title = task.title.clone().unwrap_or_else(|| task.name.clone());
    let message = format!("loop: merge {} ({title})", task.name);
    let merged = match ctx.git.commit_tree(&tree, &[head, commit], &message) {
        Ok(c) => c,
        Err(e) => return Merge::Error(e),
    };
    let Some(files) = r.files.as_ref() else {
        return Merge::Error("the attempt has no log directory".into());
    };
    let verdict = gate_in_scratch(
        ctx,
        task,
        r.input.attempt,
        r.input.serial,
        files,
        &merged,
        head,
        earlier,
        cost,
    );
    match verdict {
        Verdict::Pass => match ctx
            .git
            .update_ref(&ctx.integration_ref, &merged, Some(head))
        {
            Ok(true) => Merge::Advanced {
                commit: merged,
                how: "merge",
            },
            Ok(false) => Merge::Error(format!(
                "{} moved while loopc was running; it must only be changed by loopc during a run",
                ctx.integration_ref
            )),
            Err(e) => Merge::Error(e),
        },
        Verdict::Stopped => Merge::Stopped,
        other => Merge::Rejected(other),
    }
}

/// Checks out `merged` detached in a scratch worktree, runs `setup`, then
/// `task`'s checks plus `earlier` (checks of tasks merged before), and
/// removes the worktree. `head` is the integration branch head the result
/// would replace (`LOOP_BASE`).
#[allow(clippy::too_many_arguments)]
fn gate_in_scratch(
    ctx: &RunCtx,
    task: &Task,
    attempt: u32,
    serial: u32,
    files: &AttemptFiles,
    merged: &str,
    head: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Verdict {
    let mut checks = gate::checks_of(task);
    for c in earlier {
        if !checks.iter().any(|k| k.kind == c.kind) {
            checks.push(c.clone());
        }
    }
    if checks.is_empty() {
        // Nothing to check: no worktree, no `setup`.
        return Verdict::Pass;
    }
    let scratch = ctx.layout.merge_worktree(&task.name, serial);
    {
        let _g = ctx.worktree_lock.lock();
        if let Err(e) = worktree::create(&ctx.git, &scratch, None, merged) {
            return Verdict::Error(format!("cannot create merge worktree: {e}"));
        }
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
            match super::attempt::run_setup(ctx, setup, &scratch, &env, &log, task.timeout) {
                Ok(Exit::Stopped) => return Verdict::Stopped,
                Ok(e) if e.success() => {}
                Ok(e) => {
                    return Verdict::Error(format!(
                        "setup failed in the merge worktree ({})",
                        e.describe(task.timeout)
                    ));
                }
                Err(e) => return Verdict::Error(e),
            }
        }
        let mut gc = GateCost::default();
        let v = gate::run_checks(ctx, &proto, &scratch, &checks, "merge", &mut gc);
        cost.absorb(gc);
        v
    })();
    {
        let _g = ctx.worktree_lock.lock();
        let _ = worktree::remove(&ctx.git, &scratch, None);
    }
    verdict
}

/// How replaying a cache entry went (spec §5 step 1).
#[derive(Debug, Clone, PartialEq)]
pub enum Replay {
    /// The task's work is on the integration branch, now at `commit`.
    Done {
        /// The new head (unchanged when the work was already there).
        commit: String,
        /// `fast_forward` (the recorded commit itself), `replay` (a new
        /// commit whose tree the task's gates passed on), `gated` (a new
        /// commit whose checks ran again) or `none` (nothing to apply).
        how: &'static str,
    },
    /// The entry cannot be used; the task runs.
    Miss(String),
    /// The run is stopping.
    Stopped,
}

/// Replays `entry` (task index `task`) onto the integration branch at
/// `head`, without touching any checkout. A replay whose tree the task's
/// gates passed on (or that changes nothing) advances without checks; any
/// other runs the task's checks and `earlier` on the result first, in a
/// scratch worktree; checks log to `.loopc/logs/<task>/replay/`.
/// `cost` receives agent gates' costs.
pub fn replay(
    ctx: &RunCtx,
    task: usize,
    serial: u32,
    entry: &Entry,
    head: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Replay {
    let task = &ctx.plan.tasks[task];
    let moved = || {
        Replay::Miss(format!(
            "{} moved while loopc was running; it must only be changed by loopc during a run",
            ctx.integration_ref
        ))
    };
    let Some(parent) = entry.parent.as_deref() else {
        return Replay::Done {
            commit: head.to_string(),
            how: "none",
        };
    };
    if parent == head {
        return match ctx
            .git
            .update_ref(&ctx.integration_ref, &entry.commit, Some(head))
        {
            Ok(true) => Replay::Done {
                commit: entry.commit.clone(),
                how: "fast_forward",
            },
            Ok(false) => moved(),
            Err(e) => Replay::Miss(e),
        };
    }
    let tree = match ctx.git.merge_tree_onto(parent, head, &entry.commit) {
        Ok(MergeTree::Clean(tree)) => tree,
        Ok(MergeTree::Conflict(paths)) => {
            return Replay::Miss(format!("replay conflicts in {}", paths.join(", ")));
        }
        Err(e) => return Replay::Miss(e),
    };
    match ctx.git.tree_of(head) {
        Ok(t) if t == tree => {
            return Replay::Done {
                commit: head.to_string(),
                how: "none",
            };
        }
        Ok(_) => {}
        Err(e) => return Replay::Miss(e),
    }
    let title = task.title.clone().unwrap_or_else(|| task.name.clone());
    let message = format!(
        "loop({}): {title}\n\nReplayed from the loopc cache.",
        task.name
    );
    let replayed = match ctx.git.commit_tree(&tree, &[head], &message) {
        Ok(c) => c,
        Err(e) => return Replay::Miss(e),
    };
    let how = if tree == entry.gated_tree {
        "replay"
    } else {
        let files = match AttemptFiles::create(&ctx.layout, &task.name, "replay") {
            Ok(f) => f,
            Err(e) => return Replay::Miss(e),
        };
        if let Err(e) = ctx.git.diff_to_file(head, &replayed, &files.diff) {
            return Replay::Miss(e);
        }
        ctx.events.emit(Event::Phase {
            task: task.name.clone(),
            attempt: 0,
            phase: "replay".into(),
            gate: None,
        });
        match gate_in_scratch(ctx, task, 0, serial, &files, &replayed, head, earlier, cost) {
            Verdict::Pass => "gated",
            Verdict::Stopped => return Replay::Stopped,
            Verdict::Reject { reason, .. } => {
                return Replay::Miss(format!("the replayed work failed its checks: {reason}"));
            }
            Verdict::Blocked(why) | Verdict::Error(why) => {
                return Replay::Miss(format!("the replayed work could not be checked: {why}"));
            }
        }
    };
    match ctx
        .git
        .update_ref(&ctx.integration_ref, &replayed, Some(head))
    {
        Ok(true) => Replay::Done {
            commit: replayed,
            how,
        },
        Ok(false) => moved(),
        Err(e) => Replay::Miss(e),
    }
}
