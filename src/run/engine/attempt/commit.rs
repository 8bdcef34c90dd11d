//! The attempt's commit on its task branch, and the checks on it before the
//! gates: the work is committed only in the worktree loopc made, never
//! below its base, changes something (unless the task may change nothing),
//! no protected path (`protect`), and survives the worktree (no dangling
//! gitlink).

use super::work::Judged;
use super::{Step, failed, gitlinks, phase};
use crate::plan::{Task, TaskKind};
use crate::run::engine::context::{AttemptFiles, Io};
use crate::run::engine::outcome::{AttemptResult, Outcome, stopping};
use crate::run::sys::checkout::Checkout;
use crate::run::sys::git::Git;
use crate::run::sys::objects::CommitChanges;

/// The attempt's commit.
pub(super) struct Made {
    /// The task branch's commit (equal to the base when nothing changed).
    pub commit: String,
    /// Paths changed relative to the base.
    pub files: Vec<String>,
    /// The commit's tree and the files it changed against the base, when
    /// it changed any ([`AttemptResult::work`]).
    pub work: Option<CommitChanges>,
}

/// Commits the worktree's changes on the task branch (`loop(task): title`,
/// the agent's `summary` and loopc's trailers: [`super::message`]) and
/// checks the commit; writes its diff for the gates (`LOOP_DIFF_FILE`).
/// `judged`: what the handoff said (its summary; whether nothing needed to
/// change).
pub(super) fn commit(
    io: Io<'_>,
    git: &Git,
    checkout: &Checkout,
    task: &Task,
    r: &AttemptResult,
    files: &AttemptFiles,
    (judged, plan_file): (&Judged, Option<&str>),
) -> Step<Made> {
    let no_changes = judged.no_changes;
    phase(io, &task.name, r.input.attempt, "commit");
    let message =
        super::message::message(task, r.input.attempt, judged.summary.as_deref(), &r.cost);
    let (commit, child_of_base) = commit_on_branch(io, git, checkout, &message, r)?;
    if commit == r.input.base && !no_changes && !task.changes_optional {
        if let Some(path) = &task.expands {
            // A producer that wrote its fragment as it was (re-planning:
            // the fragment whose task failed) changed nothing.
            return Err(failed(
                format!(
                    "no changes: the attempt changed no file (a task that `expands` writes its \
                     plan fragment `{path}`; re-planning, it writes one other than the one \
                     whose task failed)"
                ),
                format!(
                    "The previous attempt changed no file. Write the plan fragment `{path}`; \
                     when re-planning, write it differently from the fragment whose task \
                     failed: the same tasks would fail the same way."
                ),
            ));
        }
        let how = match task.kind {
            TaskKind::Command { .. } => "",
            TaskKind::Agent { .. } => ", or its agent says \"no_changes\": true in the handoff",
        };
        return Err(failed(
            format!(
                "no changes: the attempt changed no file (a task that may change nothing \
                 says `changes = optional` in its block{how})"
            ),
            "The previous attempt changed no file. Make the change the task asks for \
             (or, if nothing needs to change, say \"no_changes\": true in the handoff).",
        ));
    }
    // Work must survive the worktree: a gitlink (a submodule, or a nested
    // repository the agent made) whose commit lives only inside the
    // worktree would point at nothing once it is removed.
    // One `git diff-tree` says it, and the commit's tree the coordinator
    // needs for a fast-forward's cache entry.
    let pair = [(commit.as_str(), r.input.base.as_str())];
    let work = match git.commit_changes(&pair).map(|mut c| c.pop()) {
        Ok(Some(c)) => CommitChanges {
            child_of_from: child_of_base,
            ..c
        },
        Ok(None) => {
            return Err(Outcome::Infrastructure(
                "`git diff-tree` said nothing".into(),
            ));
        }
        Err(_) if stopping(io.control) => return Err(Outcome::Interrupted),
        Err(e) => return Err(Outcome::Infrastructure(e)),
    };
    let paths = work.paths();
    // The checks are not the agent's to change (`protect`).
    super::protect::check(task, &paths, plan_file)?;
    match gitlinks::dangling(git, checkout, work.gitlinks()) {
        Ok(None) => {}
        Ok(Some((reason, feedback))) => return Err(failed(reason, feedback)),
        Err(_) if stopping(io.control) => return Err(Outcome::Interrupted),
        Err(e) => return Err(Outcome::Infrastructure(e)),
    }
    io.git
        .diff_to_file(&r.input.base, &commit, &files.diff)
        .map_err(Outcome::Infrastructure)?;
    Ok(Made {
        work: (commit != r.input.base).then_some(work),
        commit,
        files: paths,
    })
}

/// Commits in the worktree loopc made and nowhere else (an agent that
/// removed or replaced its `.git`, or left the task branch, fails: git
/// would otherwise find another repository above it) and returns the task
/// branch's tip, which must contain the base (the agent may have committed
/// itself, but never below its base: a branch that dropped `LOOP_BASE`
/// would lose earlier tasks' work when merged), and whether that tip is the
/// commit loopc made on the base (its only parent is the base).
fn commit_on_branch(
    io: Io<'_>,
    git: &Git,
    checkout: &Checkout,
    message: &str,
    r: &AttemptResult,
) -> Step<(String, bool)> {
    if let Err(e) = git.verify_checkout(checkout, Some(&r.branch)) {
        return Err(failed(
            e.clone(),
            format!(
                "{e}. loopc commits the work only in the worktree it made, on its task \
                 branch: do not remove, replace or move `.git`, do not switch branches or \
                 detach HEAD; commit on the task branch or leave the changes uncommitted."
            ),
        ));
    }
    let known = match git.commit_all(checkout, message, &r.input.base) {
        Ok(k) => k,
        Err(_) if stopping(io.control) => return Err(Outcome::Interrupted),
        Err(e) => {
            return Err(match gitlinks::uncommitted_nested(&e) {
                Some((reason, feedback)) => failed(reason, feedback),
                None => Outcome::Infrastructure(format!("cannot commit: {e}")),
            });
        }
    };
    let ours = known.as_ref().is_some_and(|c| *c != r.input.base);
    let tip = known.map_or_else(
        || git.tip_containing(&r.branch, &r.input.base),
        |c| Ok(Some(c)),
    );
    match tip {
        Ok(Some(c)) => Ok((c, ours)),
        Ok(None) if matches!(git.commit_of(&format!("refs/heads/{}", r.branch)), Ok(None)) => {
            Err(Outcome::Infrastructure(format!(
                "the task branch `{}` is gone after its commit",
                r.branch
            )))
        }
        Ok(None) => Err(failed(
            "the attempt rewrote history below LOOP_BASE",
            format!(
                "The previous attempt rewrote history below LOOP_BASE ({}): the task \
                 branch no longer contains that commit. Build on LOOP_BASE; do not reset, \
                 rebase or amend below it.",
                r.input.base
            ),
        )),
        Err(e) => Err(Outcome::Infrastructure(e)),
    }
}
