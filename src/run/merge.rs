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

use super::attempt::{AttemptResult, Cost};
use super::context::{Protocol, RunCtx};
use super::events::Event;
use super::gate::{self, Check, GateCost, Verdict};
use super::git::MergeTree;
use super::process::{self, Exit, Spec};
use super::worktree;

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
    // Gate the merge result in a detached scratch worktree.
    let scratch = ctx.layout.merge_worktree(&task.name, r.input.serial);
    {
        let _g = ctx.worktree_lock.lock();
        if let Err(e) = worktree::create(&ctx.git, &scratch, None, &merged) {
            return Merge::Error(format!("cannot create merge worktree: {e}"));
        }
    }
    let proto = Protocol {
        task,
        attempt: r.input.attempt,
        base: head,
        files,
    };
    let verdict = (|| {
        if let Some(setup) = &ctx.plan.settings.setup {
            let env = proto.env(&ctx.git, &scratch, &files.prompt, &files.handoff, None);
            let log = files.dir.join("merge-setup.log");
            let spec = Spec {
                command: setup,
                dir: &scratch,
                env: &env,
                env_remove: &["LOOP_DIFF_FILE"],
                stdin: None,
                stdout: &log,
                stderr: None,
                timeout: task.timeout,
            };
            match process::run(&spec, &ctx.control) {
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
        let mut checks = gate::checks_of(task);
        for c in earlier {
            if !checks.iter().any(|k| k.kind == c.kind) {
                checks.push(c.clone());
            }
        }
        let mut gc = GateCost::default();
        let v = gate::run_checks(ctx, &proto, &scratch, &checks, "merge", &mut gc);
        cost.micro_usd += gc.micro_usd;
        cost.unknown |= gc.unknown;
        v
    })();
    {
        let _g = ctx.worktree_lock.lock();
        let _ = worktree::remove(&ctx.git, &scratch, None);
    }
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
