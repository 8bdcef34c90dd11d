//! The checks that refuse a run before it changes anything (docs/running.md,
//! "Before any work"), and the integration branch's reset to the base, the
//! last step before work starts.

use super::RunError;
use super::engine::cache;
use super::store::layout::{self, Layout};
use super::sys::git::Git;
use crate::plan::Plan;

/// A branch that keeps git from creating the branch `branch`, which does
/// not exist: one named as a directory of it (`loop` for `loop/app`: refs
/// are files) or one inside it (`loop/app/x`).
fn blocking_branch(git: &Git, branch: &str) -> Result<Option<String>, String> {
    let parts: Vec<&str> = branch.split('/').collect();
    for end in 1..parts.len() {
        let dir = parts[..end].join("/");
        if git.commit_of(&format!("refs/heads/{dir}"))?.is_some() {
            return Ok(Some(dir));
        }
    }
    Ok(git.branch_refs(&format!("{branch}/"))?.into_iter().next())
}

/// Checks that the repository can be used and where the integration branch
/// starts (`base_commit`: the commit runs start from). Nothing here
/// changes anything; every failure is exit 2.
///
/// `recorded`: the integration-branch head the last run of this branch left
/// (state.json), whose history is loopc's like its cache entries'.
pub(super) fn preflight(
    git: &Git,
    plan: &Plan,
    base_commit: String,
    recorded: Option<&str>,
) -> Result<Start, RunError> {
    if let Some(what) = git.operation_in_progress().map_err(RunError::usage)? {
        return Err(RunError::usage(format!(
            "the repository at {} is in the middle of {what}; finish or abort it first",
            git.root.display()
        )));
    }
    let branch = &plan.settings.branch;
    if !git.valid_branch_name(branch).map_err(RunError::usage)? {
        return Err(RunError::usage(format!(
            "the integration branch name `{branch}` is not a valid git branch name"
        )));
    }
    for (name, what) in [(branch.as_str(), "integration branch")] {
        if name.starts_with("loopc/") {
            return Err(RunError::usage(format!(
                "the {what} `{name}` is inside loopc's own branch namespace `loopc/`"
            )));
        }
    }
    let refname = format!("refs/heads/{branch}");
    let existing = git.commit_of(&refname).map_err(RunError::usage)?;
    if existing.is_none()
        && let Some(b) = blocking_branch(git, branch).map_err(RunError::usage)?
    {
        return Err(RunError::usage(format!(
            "a branch named `{b}` exists, which keeps git from creating the integration \
             branch `{branch}`; rename it (git branch -m {b} <new-name>) or set another \
             `branch` in the plan's `loop` block"
        )));
    }
    // Read from git's files when they say it plainly (one process fewer a
    // run), from `git worktree list` when not; every checkout counts, loopc's
    // own worktrees too.
    let checked_out = format!("ref: {refname}");
    let heads = git.checkout_heads(&[]).map_err(RunError::usage)?;
    if let Some(w) = heads.iter().find(|w| w.head == checked_out) {
        return Err(RunError::usage(format!(
            "the integration branch `{branch}` is checked out at {}; loopc must own it during a run, check out another branch there",
            w.path.display()
        )));
    }
    match &existing {
        None => {}
        // Where the last run of this branch left it, or at the base:
        // nothing on it can be foreign (no history to walk).
        Some(tip) if tip == &base_commit || recorded == Some(tip.as_str()) => {}
        Some(tip) => {
            // The branch is rebuilt from the base, which must lose nothing
            // but what came through loopc's runs (the cache replays it),
            // whether loopc created it or not: a user may have committed
            // on it after a run.
            let foreign =
                foreign_commits(git, &base_commit, tip, recorded).map_err(RunError::usage)?;
            if let Some((count, first)) = foreign {
                return Err(RunError::usage(format!(
                    "the integration branch `{branch}` has {count} commit(s) that are not on \
                     the base and were not made by loopc (first: {first}); loopc rebuilds its \
                     integration branch from the base and would drop them: merge them into \
                     the base, or move them to another branch (git branch <new-name> \
                     {branch}, then git branch -f {branch} <base>), or choose another \
                     `branch` in the plan's `loop` block"
                )));
            }
        }
    }
    Ok(Start {
        base: base_commit,
        existing,
    })
}

/// Where the integration branch starts, found by [`preflight`].
pub(super) struct Start {
    /// The base commit.
    pub base: String,
    /// The integration branch's head before the run (`None`: it does not
    /// exist yet).
    pub existing: Option<String>,
}

/// Builds the integration branch afresh from the base, the last step before
/// work starts: tasks recorded in the cache are replayed (an unchanged plan
/// reproduces the same commits), the others run. `target` is the base, or
/// the head of the run entry the run takes whole (docs/cache.md): every
/// commit between passed its gates, so the branch jumps there at once. A
/// branch loopc creates is recorded in its ledger (`loopc clean
/// --integration` may remove it), and only if it was created.
pub(super) fn reset_integration(
    git: &Git,
    layout: &Layout,
    plan: &Plan,
    start: &Start,
    target: &str,
) -> Result<(), RunError> {
    let branch = &plan.settings.branch;
    let refname = format!("refs/heads/{branch}");
    if start.existing.as_deref() == Some(target) {
        return Ok(());
    }
    if start.existing.is_none() {
        // Recorded first, so that a crash right after leaves it recorded.
        layout::record_branch(layout, branch).map_err(RunError::usage)?;
    }
    let moved = git.update_ref(&refname, target, start.existing.as_deref());
    if start.existing.is_none() && !matches!(moved, Ok(true)) {
        layout::forget_branch(layout, branch).map_err(RunError::usage)?;
    }
    match moved {
        Ok(true) => Ok(()),
        Ok(false) => Err(RunError::usage(format!(
            "cannot reset the integration branch `{branch}` to the base (it moved meanwhile)"
        ))),
        Err(e) => Err(RunError::usage(format!(
            "cannot create or reset the integration branch `{branch}`: {e}"
        ))),
    }
}

/// Whether `subject` is the subject of a commit loopc writes on the
/// integration branch: a task's commit or a replay (`loop(<task>): …`,
/// with that task's `Loop-Task` trailer: `loop_task`), a merge (`loop:
/// merge <task> (…)`) or a REEL spec's move to its next stage (`loop:
/// advance <file> to <stage>/`).
fn is_loopc_subject(subject: &str, loop_task: &str) -> bool {
    if subject.starts_with("loop: merge ") || subject.starts_with("loop: advance ") {
        return true;
    }
    subject
        .strip_prefix("loop(")
        .and_then(|rest| rest.split_once("): "))
        .is_some_and(|(task, _)| {
            // Task names: identifiers, qualified with `.` in a directory
            // of specs (`auth.a1b2c3d4`).
            loop_task.split(',').any(|t| t == task)
                && !task.is_empty()
                && task
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
        })
}

/// The commits on `tip` that are not on `base` and that did not come
/// through loopc: `None` when there are none, else their number and the
/// first one (`<short hash> <subject>`). Through loopc means reachable from
/// one of its cache entries (`refs/loopc/cache/*`: a task's work, the
/// commits its agent made itself included, and what it was built on) or
/// from `recorded` (the head the last run of this branch left, for a run
/// without the cache), or with a subject loopc writes ([`is_loopc_subject`]).
/// One `git log`, however many entries there are.
fn foreign_commits(
    git: &Git,
    base: &str,
    tip: &str,
    recorded: Option<&str>,
) -> Result<Option<(usize, String)>, String> {
    let entries = format!("--glob={}", cache::REF_PREFIX.trim_end_matches('/'));
    // Only an object id: state.json is a file, not an option.
    let recorded = recorded.filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()));
    // The subject, then (after a NUL) the `Loop-Task` trailers: a subject
    // alone is easy to write by hand.
    let mut args = vec![
        "log",
        "--format=%h %s%x00%(trailers:key=Loop-Task,valueonly,separator=%x2C)",
        "--ignore-missing",
        tip,
        "--not",
        base,
        &entries,
    ];
    args.extend(recorded);
    args.push("--");
    let log = git.read(&args)?;
    let foreign: Vec<&str> = log
        .lines()
        .filter_map(|l| {
            let (line, trailer) = l.split_once('\0').unwrap_or((l, ""));
            let subject = line.split_once(' ').map_or("", |(_, s)| s);
            (!is_loopc_subject(subject, trailer)).then_some(line)
        })
        .collect();
    Ok(foreign
        .last()
        .map(|first| (foreign.len(), (*first).to_string())))
}

/// The commit runs start from: `loop.base`, else the checked-out commit;
/// first, that the paths a run makes fit git's own limits. `base_at`:
/// where `loop.base` is written (`file:line:column`), for its message.
///
/// Errors: the base branch does not exist, or the repository has no
/// commit yet (exit 2; nothing was changed).
pub fn start_commit(git: &Git, plan: &Plan, base_at: Option<&str>) -> Result<String, RunError> {
    // Before any git call that a path too long would fail in another's name.
    let longest = plan.tasks.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let worktrees = Layout::new(&git.root).worktrees;
    super::sys::room::check(
        git,
        &worktrees,
        &super::sys::worktree::slug(&plan.name),
        longest,
    )
    .map_err(RunError::usage)?;
    match &plan.settings.base {
        Some(base) => git
            .commit_of(&format!("refs/heads/{base}"))
            .map_err(RunError::usage)?
            .or(git.commit_of(base).map_err(RunError::usage)?)
            .ok_or_else(|| {
                RunError::usage(format!(
                    "{}the base branch `{base}` does not exist in {}",
                    base_at.map(|at| format!("{at}: ")).unwrap_or_default(),
                    git.root.display()
                ))
            }),
        None => git
            .commit_of("HEAD")
            .map_err(RunError::usage)?
            .ok_or_else(|| {
                RunError::usage(format!(
                    "the repository at {} has no commit to start from: attempts start from a \
                     commit; commit the project first (`git add -A && git commit -m start`)",
                    git.root.display()
                ))
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopc_subject;

    #[test]
    fn loopc_subjects() {
        assert!(is_loopc_subject("loop(a): Task A", "a"));
        assert!(is_loopc_subject(
            "loop(my-task_2): multi line title",
            "my-task_2"
        ));
        assert!(is_loopc_subject(
            "loop(auth.a1b2c3d4): from a directory of specs",
            "auth.a1b2c3d4"
        ));
        assert!(is_loopc_subject("loop: merge a (Task A)", ""));
        assert!(is_loopc_subject(
            "loop: advance specs/inflight/auth.md to review/",
            ""
        ));
        assert!(!is_loopc_subject("loop(): x", ""));
        assert!(!is_loopc_subject("loop(a b): x", "a b"));
        assert!(!is_loopc_subject("loop(a) x", "a"));
        assert!(!is_loopc_subject("my work", ""));
        assert!(!is_loopc_subject("Merge branch 'loop/x'", ""));
        // A subject written by hand, without loopc's trailer (or another
        // task's): not loopc's.
        assert!(!is_loopc_subject("loop(c): my own fix", ""));
        assert!(!is_loopc_subject("loop(c): my own fix", "a,b"));
        assert!(is_loopc_subject("loop(c): two trailers", "a,c"));
    }
}
