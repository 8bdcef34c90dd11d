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

use crate::plan::OnFail;
use crate::run::engine::attempt::gate::{Check, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::RunCtx;
use crate::run::engine::guard;
use crate::run::engine::land::scratch::{Merge, gate_in_scratch, refs_moved};
use crate::run::engine::outcome::{AttemptResult, Outcome, stopping};
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use crate::run::sys::objects::CommitChanges;
use crate::run::sys::transaction::RefMove;

/// What a merge is about to land, as the refs that move with the
/// integration branch are made ([`OnLanding`]).
#[derive(Debug, Clone)]
pub struct Landing<'a> {
    /// The head the merge makes.
    pub head: &'a str,
    /// The head it replaces.
    pub before: &'a str,
    /// `head`'s tree and the files that differ from `before`, when known
    /// without asking git (a fast-forward's, read on the attempt's thread).
    pub changes: Option<CommitChanges>,
    /// What the attempt and its merge cost, its merge checks included.
    pub cost: Cost,
}

/// Called once the merge result is gated, just before the branch moves:
/// the refs to move with it in the same transaction (the task's cache
/// entry; nothing when none is recorded).
pub type OnLanding<'a> = &'a mut dyn FnMut(Landing<'_>) -> Vec<RefMove>;

/// A passed attempt after step 7.
#[derive(Debug, Clone, PartialEq)]
pub struct Landed {
    /// The attempt's outcome after the merge: its pass, or the failure,
    /// block, infrastructure failure or interruption the merge made of it.
    pub outcome: Outcome,
    /// The integration branch head afterwards.
    pub head: String,
    /// Why the run must stop, when someone else moved the integration
    /// branch off the work loopc merged.
    pub moved_off: Option<String>,
    /// The tree of `head`, when the merge made it: the cache entry needs
    /// it, and knowing it saves asking git.
    pub tree: Option<String>,
    /// The commit someone else moved the integration branch forward to
    /// (a descendant of loopc's head) while loopc ran, which loopc adopted
    /// and merged the attempt onto; for the run's warning.
    pub adopted: Option<String>,
}

/// Brings the passed attempt `r` (task commit `commit`) onto the
/// integration branch at `head` ([`integrate`]), announces the merge, and
/// turns a conflict or a failed check of the merge into the attempt's
/// outcome. The merge checks' cost is added to `r.cost`. If someone else
/// moved the branch onto a descendant of `head`, it is adopted
/// ([`Landed::adopted`]): the attempt is merged onto it, and later attempts
/// start from it; a move that drops loopc's merged work is
/// [`Landed::moved_off`].
///
/// A conflict goes to the task's resolver, if it has one
/// ([`crate::run::engine::land::resolve`]); `landings` are the tasks whose work moved the
/// integration branch in this run, with the heads they moved it to, in order.
/// `on_landing` gives the refs that move with the branch.
pub fn land(
    ctx: &RunCtx,
    r: &mut AttemptResult,
    (commit, head): (&str, &str),
    earlier: &[Check],
    landings: &[(usize, String)],
    on_landing: OnLanding<'_>,
) -> Landed {
    let landed = land_once(ctx, r, (commit, head), (earlier, landings), on_landing);
    match landed.adopted {
        // Someone else committed on the branch: the attempt is merged onto
        // their commit instead (once: a second move fails it).
        Some(adopted) => {
            let mut again = land_once(ctx, r, (commit, &adopted), (earlier, landings), on_landing);
            if again.adopted.is_some() {
                again.outcome = Outcome::Infrastructure(format!(
                    "merge: {} moved again while loopc was merging",
                    ctx.integration_ref
                ));
            }
            again.adopted = Some(adopted);
            again
        }
        None => landed,
    }
}

/// [`land`] onto `head` as it is: a branch someone else moved forward
/// meanwhile is [`Landed::adopted`] and the attempt not merged.
fn land_once(
    ctx: &RunCtx,
    r: &mut AttemptResult,
    (commit, head): (&str, &str),
    (earlier, landings): (&[Check], &[(usize, String)]),
    on_landing: OnLanding<'_>,
) -> Landed {
    let task = &ctx.plan.tasks[r.input.task];
    let merged = merge_or_resolve(ctx, r, (commit, head), (earlier, landings), on_landing);
    let mut landed = Landed {
        outcome: r.outcome.clone(),
        head: head.to_string(),
        moved_off: None,
        tree: None,
        adopted: None,
    };
    landed.outcome = match merged {
        Merge::Advanced {
            commit: new_head,
            how,
            tree,
        } => {
            landed.head = new_head.clone();
            landed.tree = tree;
            ctx.events.emit(Event::Merged {
                task: task.name.clone(),
                commit: new_head,
                how: how.to_string(),
            });
            return landed;
        }
        Merge::Rejected(Verdict::Error(e)) | Merge::Error(e) => {
            adopt_or_stop(ctx, head, &mut landed);
            Outcome::Infrastructure(format!("merge: {e}"))
        }
        other => failed(other, r),
    };
    landed
}

/// Merges attempt `r`'s `commit` into the integration branch at `head`
/// ([`integrate`]), with the refs that are not loopc's watched across it,
/// and hands a conflict to the task's resolver if it has one. The merge's
/// cost (checks, resolver) is added to `r.cost`.
fn merge_or_resolve(
    ctx: &RunCtx,
    r: &mut AttemptResult,
    (commit, head): (&str, &str),
    (earlier, landings): (&[Check], &[(usize, String)]),
    on_landing: OnLanding<'_>,
) -> Merge {
    let task = &ctx.plan.tasks[r.input.task];
    let mut cost = Cost::default();
    // A real merge on which checks run (or a resolver, below): the refs
    // that are not loopc's are watched across it, as across an attempt.
    // With nothing to run on the merge, only loopc's own git writes
    // objects in between: no snapshot, two git processes fewer a merge.
    let base = r.input.base.as_str();
    let real = commit != base && head != base;
    let refs = if real && runs_checks(task, earlier) {
        guard::snapshot(&ctx.git, &ctx.integration_ref, &ctx.layout.worktrees).map(Some)
    } else {
        Ok(None)
    };
    let mut merged = match &refs {
        Ok(before) => {
            let watched = (earlier, before.as_ref());
            integrate(ctx, r, (commit, head), watched, &mut cost, on_landing)
        }
        Err(_) if stopping(&ctx.control) => Merge::Stopped,
        Err(e) => Merge::Error(format!("cannot read the repository's refs: {e}")),
    };
    if let Merge::Conflict(paths) = &merged
        && let Some(agent) = &task.resolver
    {
        let paths = paths.clone();
        merged = match watched(ctx, refs) {
            Ok(before) => {
                let side = crate::run::engine::land::resolve::Side {
                    commit,
                    head,
                    conflicts: &paths,
                    landings,
                    earlier,
                };
                resolve_conflict(ctx, r, agent, &side, &before, &mut cost)
            }
            Err(m) => m,
        };
    }
    r.cost.absorb(cost);
    merged
}

/// Whether a merge of `task`'s work runs any check: its checks that run
/// again on a merge or those of tasks merged `earlier`
/// ([`gate_in_scratch`]'s list is empty exactly when both are).
fn runs_checks(task: &crate::plan::Task, earlier: &[Check]) -> bool {
    !earlier.is_empty() || !crate::run::engine::attempt::gate::rechecks_of(task).is_empty()
}

/// The refs that are not loopc's to watch across a resolver: the snapshot
/// `refs` taken before the merge, or one taken now when none was (nothing
/// ran since the merge began).
///
/// Errors: the merge's result when they cannot be read (stopping, or why).
fn watched(
    ctx: &RunCtx,
    refs: Result<Option<guard::Snapshot>, String>,
) -> Result<guard::Snapshot, Merge> {
    let taken = match refs {
        Ok(Some(before)) => return Ok(before),
        Ok(None) => guard::snapshot(&ctx.git, &ctx.integration_ref, &ctx.layout.worktrees),
        Err(e) => Err(e),
    };
    taken.map_err(|e| {
        if stopping(&ctx.control) {
            Merge::Stopped
        } else {
            Merge::Error(format!("cannot read the repository's refs: {e}"))
        }
    })
}

/// The outcome of attempt `r` whose merge ended in `merged`: neither
/// advanced nor an error of loopc's (those [`land`] handles itself).
fn failed(merged: Merge, r: &mut AttemptResult) -> Outcome {
    match merged {
        Merge::Conflict(paths) => Outcome::Failed {
            reason: format!(
                "{} {}",
                crate::run::engine::remember::CONFLICT,
                paths.join(", ")
            ),
            feedback: format!(
                "Your change conflicted with work merged meanwhile into the integration \
                 branch, in these paths:\n{}\nThe next attempt starts from the new \
                 integration branch head; redo the change on top of it.",
                paths.join("\n")
            ),
            on_fail: OnFail::Retry,
        },
        Merge::Unresolved { reason, feedback } => Outcome::Failed {
            reason,
            feedback,
            on_fail: OnFail::Retry,
        },
        // The scheduler judges it by the guard ([`guard::judge`]).
        Merge::RefsChanged { changes, during } => {
            r.ref_changes = changes;
            r.refs_during = Some(during.clone());
            Outcome::Failed {
                reason: format!("refs that are not loopc's changed while {during} ran"),
                feedback: String::new(),
                on_fail: OnFail::Retry,
            }
        }
        Merge::Rejected(Verdict::Reject {
            reason,
            feedback,
            on_fail,
            ..
        }) => Outcome::Failed {
            reason: format!("after merging with the integration branch: {reason}"),
            feedback: format!(
                "Your change passed on its own but failed once merged with work \
                 merged meanwhile into the integration branch:\n{feedback}"
            ),
            on_fail,
        },
        Merge::Rejected(Verdict::Blocked(why)) => Outcome::Blocked(why),
        Merge::Rejected(Verdict::Limited(l)) => Outcome::Limited(l),
        Merge::Rejected(Verdict::Error(e)) | Merge::Error(e) => {
            Outcome::Infrastructure(format!("merge: {e}"))
        }
        // Advanced is [`land`]'s; a passing verdict is not a rejection.
        Merge::Advanced { .. }
        | Merge::Rejected(Verdict::Stopped | Verdict::Pass)
        | Merge::Stopped => Outcome::Interrupted,
    }
}

/// Hands the conflict of attempt `r`'s merge to the task's resolver `agent`
/// and records its run in `r.resolver`.
fn resolve_conflict(
    ctx: &RunCtx,
    r: &mut AttemptResult,
    agent: &std::sync::Arc<crate::plan::Agent>,
    side: &crate::run::engine::land::resolve::Side<'_>,
    before: &guard::Snapshot,
    cost: &mut Cost,
) -> Merge {
    let task = &ctx.plan.tasks[r.input.task];
    let (m, record) = crate::run::engine::land::resolve::resolve(ctx, r, agent, side, before, cost);
    ctx.events.emit(Event::ResolverFinished {
        task: task.name.clone(),
        attempt: r.input.attempt,
        record: record.clone(),
    });
    r.resolver = Some(record);
    m
}

/// After a merge that failed with an error: if someone else moved the
/// integration branch onto a descendant of `head`, later attempts adopt it
/// (`landed.head`); a move that drops loopc's merged work, or a deletion,
/// stops the run (`landed.moved_off`).
fn adopt_or_stop(ctx: &RunCtx, head: &str, landed: &mut Landed) {
    let now = ctx.git.commit_of(&ctx.integration_ref);
    if let Ok(None) = now {
        landed.moved_off = Some(format!(
            "the integration branch `{}` was deleted by someone else while loopc was \
             running (loopc's last head: {}); the run stops",
            ctx.plan.settings.branch, head
        ));
    }
    if let Ok(Some(h)) = now
        && h != head
    {
        if let Some(branch) = task_branch_holding(ctx, &h) {
            // Not a person's commit: an attempt's own work (an agent moved
            // the branch onto it), which no gate judged there.
            landed.moved_off = Some(format!(
                "the integration branch `{}` was moved from {} (loopc's last head) to {}, \
                 a commit of the task branch {branch}: an agent moved it onto work no \
                 check judged there; the run stops",
                ctx.plan.settings.branch, head, h
            ));
        } else if ctx.git.is_ancestor(head, &h).unwrap_or(false) {
            landed.head = h.clone();
            landed.adopted = Some(h);
        } else {
            landed.moved_off = Some(format!(
                "the integration branch `{}` was moved by someone else from {} \
                 (loopc's last head) to {}, which does not contain the work \
                 loopc merged; the run stops",
                ctx.plan.settings.branch, head, h
            ));
        }
    }
}

/// The first of loopc's task branches (`refs/heads/loopc/…`) that holds
/// `commit`, if any (one `git for-each-ref --contains`).
fn task_branch_holding(ctx: &RunCtx, commit: &str) -> Option<String> {
    let out = ctx
        .git
        .read(&[
            "for-each-ref",
            "--count=1",
            "--format=%(refname:short)",
            "--contains",
            commit,
            "refs/heads/loopc/",
        ])
        .ok()?;
    let name = out.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Merges the passed attempt `r` (task commit `commit`) into the
/// integration branch whose head is `head`. `earlier` are the checks of
/// tasks merged before in this run; `cost` receives agent gates' costs.
/// `refs` are the refs that are not loopc's before the merge: if they
/// changed while the merge gates ran, the branch is not moved
/// ([`Merge::RefsChanged`]); `None` when no check runs on the merge
/// (nothing to watch). The branch moves in one transaction with the refs
/// `on_landing` gives ([`move_branch`]).
pub fn integrate(
    ctx: &RunCtx,
    r: &AttemptResult,
    (commit, head): (&str, &str),
    (earlier, refs): (&[Check], Option<&guard::Snapshot>),
    cost: &mut Cost,
    on_landing: OnLanding<'_>,
) -> Merge {
    let task = &ctx.plan.tasks[r.input.task];
    let base = r.input.base.as_str();
    if commit == base {
        return Merge::Advanced {
            commit: head.to_string(),
            how: "none",
            tree: None,
        };
    }
    if head == base {
        let landing = Landing {
            head: commit,
            before: head,
            changes: r.work.clone(),
            cost: r.cost.clone(),
        };
        let moved = move_branch(ctx, landing, on_landing);
        return advanced(ctx, moved, commit.to_string(), "fast_forward", None);
    }
    ctx.events.emit(Event::Phase {
        task: task.name.clone(),
        attempt: r.input.attempt,
        phase: "merge".into(),
        gate: None,
    });
    let tree = match merge_tree(ctx, head, (commit, base), r.work.as_ref()) {
        Ok(MergeTree::Clean(tree)) => tree,
        Ok(MergeTree::Conflict(paths)) => return Merge::Conflict(paths),
        Err(_) if stopping(&ctx.control) => return Merge::Stopped,
        Err(e) => return Merge::Error(e),
    };
    let merged = match ctx.git.write_commit(&tree, &[head, commit], &message(task)) {
        Ok(c) => c,
        Err(_) if stopping(&ctx.control) => return Merge::Stopped,
        Err(e) => return Merge::Error(e),
    };
    let Some(files) = r.files.as_ref() else {
        return Merge::Error("the attempt has no log directory".into());
    };
    let verdict = gate_in_scratch(
        ctx,
        task,
        r.input.attempt,
        r.input.id,
        files,
        &merged,
        head,
        (earlier, false),
        cost,
    );
    if verdict != Verdict::Stopped
        && let Some(refs) = refs
        && let Some(m) = refs_moved(ctx, refs, "the merge gates")
    {
        return m;
    }
    let mut spent = r.cost.clone();
    spent.absorb(cost.clone());
    let landing = Landing {
        head: &merged,
        before: head,
        changes: None,
        cost: spent,
    };
    match verdict {
        Verdict::Pass => {
            let moved = move_branch(ctx, landing, on_landing);
            advanced(ctx, moved, merged, "merge", Some(tree))
        }
        Verdict::Stopped => Merge::Stopped,
        other => Merge::Rejected(other),
    }
}

/// Merges the attempt's `commit`, made on `base`, onto `head` without
/// touching any worktree. When the commit's only parent is the base (the
/// commit loopc made of the attempt's changes: `work`, read on the
/// attempt's thread), the base is the merge base (the integration branch
/// only moves forward in a run, so `head` contains it), and git is told so
/// ([`Git::merge_tree_onto`]) instead of searching history as long as the
/// merges made since the attempt started; otherwise (the agent committed
/// itself, merged other work in) git finds it ([`Git::merge_tree`]).
///
/// Errors: git fails.
///
/// [`Git::merge_tree_onto`]: crate::run::sys::git::Git::merge_tree_onto
/// [`Git::merge_tree`]: crate::run::sys::git::Git::merge_tree
pub(super) fn merge_tree(
    ctx: &RunCtx,
    head: &str,
    (commit, base): (&str, &str),
    work: Option<&CommitChanges>,
) -> Result<MergeTree, String> {
    if work.is_some_and(|w| w.child_of_from) {
        ctx.git.merge_tree_onto(base, head, commit)
    } else {
        ctx.git.merge_tree(head, commit)
    }
}

/// What moving the branch to `commit` ([`move_branch`]: `moved`) made of
/// the merge: [`Merge::Advanced`] (`how`, and `tree` when the merge made
/// it), or the error of a branch someone else moved, or of git.
fn advanced(
    ctx: &RunCtx,
    moved: Result<bool, String>,
    commit: String,
    how: &'static str,
    tree: Option<String>,
) -> Merge {
    match moved {
        Ok(true) => Merge::Advanced { commit, how, tree },
        Ok(false) => Merge::Error(format!(
            "{} moved while loopc was running; it must only be changed by loopc during a run",
            ctx.integration_ref
        )),
        Err(_) if stopping(&ctx.control) => Merge::Stopped,
        Err(e) => Merge::Error(e),
    }
}

/// The message of the merge commit of `task`'s work.
pub(super) fn message(task: &crate::plan::Task) -> String {
    let title = crate::run::store::progress::one_line(task.title.as_deref().unwrap_or(&task.name));
    format!("loop: merge {} ({title})", task.name)
}

/// The outcome of an attempt whose merge conflicted in `paths`.
pub fn conflicted(paths: Vec<String>, r: &mut AttemptResult) -> Outcome {
    failed(Merge::Conflict(paths), r)
}

/// Moves the integration branch from `landing.before` to `landing.head`
/// (compare-and-swap) and, in the same `git update-ref --stdin`
/// transaction, the refs `on_landing` gives: all of them or none.
/// Returns false when the branch had moved.
///
/// Errors: git fails.
fn move_branch(
    ctx: &RunCtx,
    landing: Landing<'_>,
    on_landing: OnLanding<'_>,
) -> Result<bool, String> {
    let mut moves = vec![RefMove {
        name: ctx.integration_ref.clone(),
        new: landing.head.to_string(),
        old: Some(landing.before.to_string()),
    }];
    moves.extend(on_landing(landing));
    ctx.git.move_refs(&moves)
}
