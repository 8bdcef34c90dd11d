//! Reconciling what an earlier run left behind, under the lock and before any
//! work starts (docs/running.md: "After `kill -9` of loopc the next run cleans stale
//! worktrees and resumes with nothing lost").
//!
//! Only what loopc created is touched:
//! - processes still running in loopc's worktrees (an agent, a gate or a
//!   command orphaned by a killed loopc): found by their `LOOP_WORKTREE`
//!   variable pointing inside `.loopc/worktrees/`, their process groups killed;
//! - worktrees registered under `.loopc/worktrees/` that loopc made (a task
//!   branch from the ledger checked out, or a detached `+merge-…` scratch
//!   worktree), whether their directory still exists or not, locked or not
//!   (`git worktree remove --force --force` per entry; never a global
//!   `git worktree prune`), and directories with loopc's worktree names left
//!   there that git does not know; a user's worktree there is left alone
//!   and reported;
//! - but not the worktrees (nor their task branches) of attempts that ended
//!   failed or blocked, listed in `.loopc/kept`: docs/running.md keeps them until
//!   `loopc clean`; a new run's names carry a higher run number
//!   ([`Layout::next_run`]), so they never collide with kept ones;
//! - this plan's task branches `loopc/<plan>/<task>/<try>` that loopc's ledger
//!   `.loopc/branches` says it created, except one that is checked out in a
//!   worktree outside `.loopc/` (the user's): it is left alone, reported
//!   with its path (the run's own names carry a higher run number).
//!
//! Resuming itself is the cache's work: the integration branch is rebuilt from
//! the base and passed tasks are replayed (`docs/cache.md`).

use super::git::Git;
use super::process;
use super::worktree;
use crate::run::store::layout::{self, Layout};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What reconciling found and did.
#[derive(Debug, Default)]
pub struct Reconciled {
    /// One line per thing done or left alone, for the person watching.
    pub notes: Vec<String>,
}

/// Whether `path` lies inside `dir` (compared as given and canonicalized,
/// since a worktree whose directory vanished cannot be canonicalized).
fn inside(path: &Path, dir: &Path) -> bool {
    if path.starts_with(dir) {
        return true;
    }
    let canon_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if path.starts_with(&canon_dir) {
        return true;
    }
    // The directory may be gone; its parent usually is not.
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name).starts_with(&canon_dir))
            .unwrap_or(false),
        _ => false,
    }
}

/// Cleans up after an earlier run of the plan whose branch namespace is
/// `loopc/<slug>/`.
///
/// Errors: git fails, or a directory under `.loopc/worktrees/` cannot be
/// removed.
pub fn reconcile(git: &Git, layout: &Layout, slug: &str) -> Result<Reconciled, String> {
    let mut done = Reconciled::default();
    let killed = kill_orphans(&layout.worktrees);
    if killed > 0 {
        done.notes.push(format!(
            "killed {killed} process group(s) left running in loopc's worktrees by an earlier run"
        ));
    }
    let kept_branches = layout::kept(layout)?;
    let Registered {
        still_kept,
        kept,
        mut removed,
        remaining,
    } = registered_worktrees(git, layout, &kept_branches, &mut done)?;
    removed += unregistered_worktrees(git, layout, &kept, &mut done)?;
    if removed > 0 {
        let worktrees = if removed == 1 {
            "worktree"
        } else {
            "worktrees"
        };
        done.notes.push(format!(
            "removed {removed} stale {worktrees} under {}",
            layout.worktrees.display()
        ));
    }
    if still_kept != kept_branches {
        layout::write_kept(layout, &still_kept)?;
    }
    task_branches(git, layout, slug, (&still_kept, &remaining), &mut done)?;
    Ok(done)
}

/// Registered worktrees under `.loopc/worktrees/` that loopc made are
/// removed; any other one there is the user's and is left alone (a note).
/// Worktrees of attempts that ended failed or blocked are kept until `loopc
/// clean` (docs/running.md); their branches are not reused.
fn registered_worktrees(
    git: &Git,
    layout: &Layout,
    kept_branches: &BTreeSet<String>,
    done: &mut Reconciled,
) -> Result<Registered, String> {
    let ledgered = layout::ledger(layout)?;
    let mut still_kept = BTreeSet::new();
    let mut removed = 0;
    let mut kept: Vec<PathBuf> = Vec::new();
    let mut remaining = Vec::new();
    for w in git.worktrees()? {
        if !inside(&w.path, &layout.worktrees) {
            remaining.push(w);
            continue;
        }
        // A kept attempt's worktree, by the task branch checked out there
        // or, when its agent switched branches, by the directory's name.
        let kept_branch = w
            .branch
            .as_deref()
            .and_then(|b| b.strip_prefix("refs/heads/"))
            .filter(|b| kept_branches.contains(*b) && ledgered.contains(*b))
            .or_else(|| {
                task_branch_of_dir(&w.path, &ledgered).filter(|b| kept_branches.contains(*b))
            });
        if let Some(b) = kept_branch
            && w.path.exists()
        {
            still_kept.insert(b.to_string());
            kept.push(w.path.clone());
            remaining.push(w);
            continue;
        }
        if is_loopcs_worktree(&w, &ledgered) {
            // Gone from git's list, or reconciling stops here: it is not
            // among the `remaining`.
            remove_worktree(git, &w.path)?;
            removed += 1;
        } else {
            done.notes.push(format!(
                "the worktree at {} was not made by loopc{}; loopc leaves it alone (move it \
                 out of {} to silence this)",
                w.path.display(),
                w.branch
                    .as_deref()
                    .map(|b| format!(
                        " (it has branch `{}` checked out)",
                        b.strip_prefix("refs/heads/").unwrap_or(b)
                    ))
                    .unwrap_or_default(),
                layout.worktrees.display()
            ));
            kept.push(w.path.clone());
            remaining.push(w);
        }
    }
    Ok(Registered {
        still_kept,
        kept,
        removed,
        remaining,
    })
}

/// What [`registered_worktrees`] left.
struct Registered {
    /// The task branches still kept.
    still_kept: BTreeSet<String>,
    /// The worktrees under `.loopc/worktrees/` left in place.
    kept: Vec<PathBuf>,
    /// How many worktrees were removed.
    removed: usize,
    /// Every registered worktree still there (git's list without those removed).
    remaining: Vec<super::git::WorktreeEntry>,
}

/// Directories git does not know, with the names loopc gives worktrees
/// (loopc killed while adding one), but for those in `kept`: removed.
/// Returns how many.
fn unregistered_worktrees(
    git: &Git,
    layout: &Layout,
    kept: &[PathBuf],
    done: &mut Reconciled,
) -> Result<usize, String> {
    let mut removed = 0;
    let Ok(entries) = std::fs::read_dir(&layout.worktrees) else {
        return Ok(0);
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if kept
            .iter()
            .any(|k| k == &path || super::git::same_path(k, &path))
            || !is_loopcs_worktree_name(&entry.file_name().to_string_lossy())
        {
            continue;
        }
        if !is_leftover_worktree(git, &path) {
            done.notes.push(format!(
                "{} is not a worktree loopc made; loopc leaves it alone (move it out of {} \
                 to silence this)",
                path.display(),
                layout.worktrees.display()
            ));
            continue;
        }
        super::modes::remove_tree(&path)
            .or_else(|_| std::fs::remove_file(&path))
            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        removed += 1;
    }
    Ok(removed)
}

/// Deletes this plan's task branches that loopc created, but for those
/// `still_kept` and those checked out in a worktree of `registered` (a
/// note).
fn task_branches(
    git: &Git,
    layout: &Layout,
    slug: &str,
    (still_kept, registered): (&BTreeSet<String>, &[super::git::WorktreeEntry]),
    done: &mut Reconciled,
) -> Result<(), String> {
    let mut ours = layout::ledger(layout)?;
    let checked_out: Vec<(String, &Path)> = registered
        .iter()
        .filter_map(|w| {
            let b = w
                .branch
                .as_deref()?
                .strip_prefix("refs/heads/")?
                .to_string();
            Some((b, w.path.as_path()))
        })
        .collect();
    let mut deleted = 0;
    for b in git.branches_under(&format!("loopc/{slug}/"))? {
        if !worktree::is_task_branch(&b) || !ours.contains(&b) || still_kept.contains(&b) {
            continue;
        }
        if let Some((_, path)) = checked_out.iter().find(|(name, _)| *name == b) {
            done.notes.push(format!(
                "the task branch `{b}` is checked out at {}; loopc leaves it and that worktree \
                 alone and uses other branch names (check out another branch there, or remove \
                 that worktree, to let loopc clean it up)",
                path.display()
            ));
            continue;
        }
        git.delete_ref(&format!("refs/heads/{b}"))?;
        ours.remove(&b);
        deleted += 1;
    }
    if deleted > 0 {
        layout::write_ledger(layout, &ours)?;
        let branches = if deleted == 1 { "branch" } else { "branches" };
        done.notes.push(format!(
            "removed {deleted} task {branches} loopc/{slug}/… left by an earlier run"
        ));
    }
    Ok(())
}

/// Whether the worktree `w` (under `.loopc/worktrees/`) is one loopc made:
/// a task worktree has a task branch from loopc's ledger checked out; a
/// merge scratch worktree is detached and named `+merge-…` (`_merge-…` in
/// earlier versions); and a worktree with loopc's name for a task's try
/// whose HEAD is still git's placeholder (all zeros) is one whose
/// `git worktree add` was cut off before it checked out the task branch
/// (loopc killed mid-add): no one can have worked in it.
pub fn is_loopcs_worktree(w: &super::git::WorktreeEntry, ledger: &BTreeSet<String>) -> bool {
    let name = w
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match w.branch.as_deref() {
        Some(b) => {
            b.strip_prefix("refs/heads/")
                .is_some_and(|b| worktree::is_task_branch(b) && ledger.contains(b))
                // An agent switched branches in it: its name still says
                // which task branch loopc made it for.
                || task_branch_of_dir(&w.path, ledger).is_some()
        }
        None => {
            let placeholder = w
                .head
                .as_deref()
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b == b'0'));
            is_scratch_name(&name) || (placeholder && is_loopcs_worktree_name(&name))
        }
    }
}

/// The task branch from loopc's ledger that the worktree directory `dir`
/// was made for: `<task>.<try>` is made for `loopc/<plan>/<task>/<try>`
/// (`mul.r3-a1` for `…/mul/r3-a1`), and, in what versions before
/// run-numbered names left, `<task>-<n>` for `loopc/<plan>/<task>/<n>`.
pub fn task_branch_of_dir<'l>(dir: &Path, ledger: &'l BTreeSet<String>) -> Option<&'l str> {
    let name = dir.file_name()?.to_str()?;
    let tail = match layout::split_try_suffix(name) {
        Some((task, id)) => format!("/{}/{}", worktree::task_component(task), id.name()),
        None => {
            let (task, n) = old_worktree_name(name)?;
            format!("/{task}/{n}")
        }
    };
    ledger
        .iter()
        .map(String::as_str)
        .find(|b| worktree::is_task_branch(b) && b.ends_with(&tail))
}

/// Whether `path`, a directory under `.loopc/worktrees/` that git does not
/// list as a worktree, is what a worktree loopc made leaves when git's entry
/// is gone or `git worktree add` was cut off: a directory (not a symbolic
/// link) that is empty, or whose `.git` file names an administrative
/// directory of this repository (`<common dir>/worktrees/…`). Anything else
/// there is not loopc's and is never deleted.
pub fn is_leftover_worktree(git: &Git, path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_dir() {
        return false;
    }
    let empty = std::fs::read_dir(path).is_ok_and(|mut e| e.next().is_none());
    if empty {
        return true;
    }
    let dotgit = path.join(".git");
    let is_file = std::fs::symlink_metadata(&dotgit).is_ok_and(|m| m.file_type().is_file());
    let Ok(text) = std::fs::read_to_string(&dotgit) else {
        return false;
    };
    let Some(admin) = text.trim_end().strip_prefix("gitdir: ") else {
        return false;
    };
    let admin = Path::new(admin);
    let worktrees = git.common_dir.join("worktrees");
    is_file
        && (admin.starts_with(&worktrees)
            || admin
                .parent()
                .is_some_and(|p| super::git::same_path(p, &worktrees)))
}

/// Whether `name` is a merge scratch worktree's directory name, or that of
/// a passed attempt's worktree renamed aside to be deleted (`+trash-…`).
fn is_scratch_name(name: &str) -> bool {
    name.starts_with("+merge-") || name.starts_with("_merge-") || name.starts_with("+trash-")
}

/// The task and number of a worktree name of versions before run-numbered
/// names: `<task>-<n>`.
fn old_worktree_name(name: &str) -> Option<(&str, &str)> {
    let (task, n) = name.rsplit_once('-')?;
    (!task.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then_some((task, n))
}

/// Whether `name` is a directory name loopc gives worktrees: `<task>.<try>`
/// ([`Layout::task_worktree`]), `<task>-<n>` (earlier versions) or a
/// scratch name.
fn is_loopcs_worktree_name(name: &str) -> bool {
    is_scratch_name(name)
        || layout::split_try_suffix(name).is_some()
        || old_worktree_name(name).is_some()
}

/// Removes one loopc worktree entry: `git worktree remove --force --force`
/// (works when the directory vanished or the entry is locked); if git
/// refuses, [`forget_worktree`].
pub fn remove_worktree(git: &Git, path: &Path) -> Result<(), String> {
    match git.worktree_remove(path) {
        Ok(()) => Ok(()),
        Err(e) => forget_worktree(git, path).map_err(|f| format!("{e}; {f}")),
    }
}

/// Removes the worktree at `path` without git: the administrative
/// directory whose `gitdir` points at `path` (only that entry; git names it
/// when the worktree is made, and a worktree loopc reused has another
/// directory name than its entry), then the directory, if there.
///
/// Errors: one of them cannot be removed.
pub fn forget_worktree(git: &Git, path: &Path) -> Result<(), String> {
    let admin = git.common_dir.join("worktrees");
    let want = path.join(".git");
    if let Ok(entries) = std::fs::read_dir(&admin) {
        for entry in entries.filter_map(Result::ok) {
            let gitdir = std::fs::read_to_string(entry.path().join("gitdir"))
                .map(|s| PathBuf::from(s.trim()))
                .unwrap_or_default();
            if gitdir == want {
                super::modes::remove_tree(&entry.path())
                    .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
            }
        }
    }
    if path.exists() {
        super::modes::remove_tree(path)
            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Ends the process groups of processes whose `LOOP_WORKTREE` lies inside
/// `worktrees`: work a killed loopc left running. SIGTERM first, so that an
/// executor's launcher (`srun`) cancels the job it started on a cluster,
/// then SIGKILL ([`process::end_groups_with_worktree`]). Linux only
/// (`/proc`); elsewhere, and for processes of other users, nothing is found.
/// Returns the number of groups ended.
fn kill_orphans(worktrees: &Path) -> usize {
    let mut prefix = worktrees.as_os_str().as_encoded_bytes().to_vec();
    prefix.push(b'/');
    process::end_groups_with_worktree(&prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_handles_vanished_directories() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().join("worktrees");
        std::fs::create_dir_all(&wt).unwrap();
        assert!(inside(&wt.join("a-1"), &wt));
        assert!(!inside(&dir.path().join("worktrees2/a-1"), &wt));
        assert!(!inside(dir.path(), &wt));
    }
}
