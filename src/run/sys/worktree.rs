//! Task worktrees and branches: their names, making and removing them, and
//! the pre-flight check of loopc's branch namespace. Branches live under
//! `loopc/<plan>/<task>/<try>` (`<try>` names the run and attempt, e.g.
//! `r3-a1`, [`TryId`]), a namespace a user's branches do not use;
//! worktrees under `.loopc/worktrees/` ([`Layout`]). The branches loopc
//! created are recorded in `.loopc/branches` ([`layout::ledger`]), and only
//! those are ever replaced or removed.

use super::checkout::Checkout;
use super::git::Git;
use crate::run::store::layout::{self, Layout, TryId};
use std::collections::BTreeSet;
use std::path::Path;

/// A plan name made safe as one git ref component (`[A-Za-z0-9._-]`, no
/// leading dot, no `..`, never empty).
pub fn slug(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("..") {
        s = s.replace("..", ".");
    }
    let s = s.trim_matches('.').trim_end_matches(".lock").to_string();
    if s.is_empty() { "plan".to_string() } else { s }
}

/// The task branch of try `id` of a task: `loopc/<plan>/<task>/<try>`.
pub fn task_branch(plan_slug: &str, task: &str, id: TryId) -> String {
    format!("loopc/{plan_slug}/{}/{}", task_component(task), id.name())
}

/// A task name as a component of a git ref: the name itself, but for a
/// name ending in `.lock` (which git refuses as a component) with `+`
/// appended, a character task names never hold, so no two tasks share one.
pub fn task_component(task: &str) -> std::borrow::Cow<'_, str> {
    if task.ends_with(".lock") {
        format!("{task}+").into()
    } else {
        task.into()
    }
}

/// Whether `last`, the last component of a branch under
/// `loopc/<plan>/<task>/`, names a try: a [`TryId::name`], or a number
/// (what loopc before run-numbered names called its tries).
fn is_try_component(last: &str) -> bool {
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())) || TryId::parse(last).is_some()
}

/// Whether `branch` has the shape of a task branch: `loopc/P/T/TRY`, TRY a
/// try's name (`r3-a1`) or, from earlier versions, a number.
pub fn is_task_branch(branch: &str) -> bool {
    let parts: Vec<&str> = branch.split('/').collect();
    parts.len() == 4 && parts[0] == "loopc" && is_try_component(parts[3])
}

/// Makes a fresh worktree at `path` on new branch `branch` at `commit`,
/// its files checked out ([`Git::fill`]: the whole tree), first removing a
/// worktree or branch of the same name that an earlier run left there
/// (both are loopc's: its directory, its branch namespace).
pub fn create(git: &Git, path: &Path, branch: Option<&str>, commit: &str) -> Result<(), String> {
    git.worktree_remove(path)?;
    if let Some(b) = branch {
        git.delete_ref(&format!("refs/heads/{b}"))?;
    }
    git.worktree_add(path, branch, commit, false)?;
    git.fill(&git.checkout(path)?)
}

/// Like [`create`] for a task's try on its task branch `branch`, without
/// checking out its files ([`Git::fill`] does, outside the worktree lock):
/// an existing branch of that name is replaced only when loopc's ledger
/// says loopc created it; the new branch is recorded first.
///
/// Errors: the branch exists and is not loopc's; the ledger, `git worktree`
/// or the branch failed.
pub fn create_task(
    git: &Git,
    layout: &Layout,
    path: &Path,
    branch: &str,
    commit: &str,
) -> Result<(), String> {
    let refname = format!("refs/heads/{branch}");
    let exists = git.commit_of(&refname)?.is_some();
    if exists && !layout::ledger(layout)?.contains(branch) {
        return Err(format!(
            "the branch `{branch}` exists and was not created by loopc; rename or delete it"
        ));
    }
    layout::record_branch(layout, branch)?;
    // As `create`, without asking git again whether the branch exists.
    git.worktree_remove(path)?;
    if exists {
        git.delete_ref(&refname)?;
    }
    git.worktree_add(path, Some(branch), commit, false)
}

/// What of a worktree's administrative directory a fresh worktree has
/// after loopc made it: anything else there (an operation in progress,
/// `ORIG_HEAD`, per-worktree refs and config, a stale lock, the reflog) is
/// what an earlier try left and goes when the worktree is reused.
const FRESH_ADMIN: &[&str] = &["HEAD", "commondir", "gitdir", "index"];

/// Like [`create_task`], but by reusing the worktree at `from`, a passed
/// attempt's (still on its own task branch, which the caller deletes
/// afterwards): it is moved to `path` and what the earlier try left in its
/// administrative directory is removed, under the lock `git worktree`
/// calls share. The caller then, without that lock, checks it out on the
/// new branch `branch` at `commit` ([`catch_up`]) and removes every file
/// git does not track ([`Git::clean`]), so the tree is what a fresh
/// worktree's would be.
///
/// Errors: the branch exists and is not loopc's; the worktree cannot be
/// reused (it is not one of this repository's, it has submodules checked
/// out, a file of another user, its entry or directory is damaged or gone,
/// git refused): the caller
/// removes it and makes a fresh one. After an error the worktree is at
/// `from` or at `path`.
pub fn reuse_task(
    git: &Git,
    layout: &Layout,
    from: &Path,
    path: &Path,
    branch: &str,
    commit: &str,
) -> Result<Checkout, String> {
    let refname = format!("refs/heads/{branch}");
    if git.commit_of(&refname)?.is_some() && !layout::ledger(layout)?.contains(branch) {
        return Err(format!(
            "the branch `{branch}` exists and was not created by loopc; rename or delete it"
        ));
    }
    let old = git.checkout(from)?;
    // git keeps a worktree's submodules under its administrative
    // directory, pointing back at their paths: they do not move.
    if old.admin.join("modules").exists() {
        return Err(format!("{} has submodules checked out", from.display()));
    }
    // An entry flagged `assume-unchanged` or `skip-worktree` would stay
    // so through the checkout and hide the next attempt's changes to it.
    let index = std::fs::read(old.admin.join("index")).unwrap_or_default();
    if super::index::is_plain(&index, commit.len() / 2) != Some(true) {
        return Err(format!(
            "the index of {} has flagged entries",
            from.display()
        ));
    }
    layout::record_branch(layout, branch)?;
    if path != from {
        git.worktree_remove(path)?;
        move_worktree(&old.admin, from, path)?;
    }
    clear_admin(&old.admin)?;
    git.checkout(path)
}

/// Checks the reused worktree `co` ([`reuse_task`]) out on the new branch
/// `branch` at `commit` (`git checkout -f -B`, which writes only the files
/// that differ), every entry given the mode and owner a fresh checkout
/// gives it first ([`super::modes::as_fresh`]). It touches only this
/// worktree's files and administrative directory and the new branch's ref
/// (git locks that), so attempts catch up at once, not one after another:
/// at `parallel = 256` the catch-up is the largest part of an attempt's
/// preparation (docs/benchmarks.md, "Issue 33 (g)").
///
/// Errors: a file of another user, git refused: the caller removes the
/// worktree and makes a fresh one.
pub fn catch_up(git: &Git, co: &Checkout, branch: &str, commit: &str) -> Result<(), String> {
    // The modes and owner of a fresh checkout, before git writes: also
    // what lets checkout and clean into read-only directories.
    super::modes::as_fresh(&co.dir)?;
    git.run_co(
        co,
        &[
            "checkout",
            "-q",
            "-f",
            "--no-recurse-submodules",
            "-B",
            branch,
            commit,
        ],
    )
    .map(|_| ())
}

/// Moves the worktree whose administrative directory is `admin` from
/// `from` to `to` (both in the same directory): what `git worktree move`
/// does, without a process. The worktree's `.git` file names `admin`, which
/// does not move; git's `gitdir` file in `admin` is rewritten (by rename:
/// another attempt may read it meanwhile). A relative `gitdir` (git's
/// `worktree.useRelativePaths`) is left to `git worktree move`.
///
/// Errors: the directory cannot be renamed or the entry rewritten (the
/// worktree is then back at `from` when it can be).
fn move_worktree(admin: &Path, from: &Path, to: &Path) -> Result<(), String> {
    let gitdir = admin.join("gitdir");
    let old = std::fs::read_to_string(&gitdir)
        .map_err(|e| format!("cannot read {}: {e}", gitdir.display()))?;
    if !Path::new(old.trim_end()).is_absolute() {
        return Err(format!("{} holds a relative path", gitdir.display()));
    }
    std::fs::rename(from, to)
        .map_err(|e| format!("cannot move {} to {}: {e}", from.display(), to.display()))?;
    // As git writes it: the real path (no symbolic link in it).
    let real = std::fs::canonicalize(to).unwrap_or_else(|_| to.to_path_buf());
    let tmp = admin.join("gitdir.loopc-new");
    let new = format!("{}\n", real.join(".git").display());
    let written = std::fs::write(&tmp, new).and_then(|()| std::fs::rename(&tmp, &gitdir));
    written.map_err(|e| {
        let _ = std::fs::rename(to, from);
        format!("cannot write {}: {e}", gitdir.display())
    })
}

/// Removes from the administrative directory `admin` everything a fresh
/// worktree does not have ([`FRESH_ADMIN`]).
///
/// Errors: something there cannot be removed.
fn clear_admin(admin: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(admin).map_err(|e| format!("cannot read {}: {e}", admin.display()))?;
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        if FRESH_ADMIN.iter().any(|f| name == *f) {
            continue;
        }
        let p = e.path();
        let gone = match e.file_type() {
            Ok(t) if t.is_dir() => super::modes::remove_tree(&p),
            _ => std::fs::remove_file(&p),
        };
        gone.map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
    }
    Ok(())
}

/// Pre-flight check of loopc's branch namespace for plan `plan_slug` with
/// tasks `tasks`: no branch may block the task branches (`loopc`,
/// `loopc/<plan>`, `loopc/<plan>/<task>`). Other branches shaped like this
/// plan's task branches (another checkout's, a user's) are no obstacle: the
/// run's number is above every run number they hold ([`taken_names`]), so
/// its own names differ, and [`create_task`] still refuses one that is not
/// in the ledger. Returns the branches it looked at (`loopc` and those
/// under `loopc/`), for [`taken_names`].
///
/// Errors: a message naming the branch.
pub fn check_namespace<'a>(
    git: &Git,
    plan_slug: &str,
    tasks: impl Iterator<Item = &'a str>,
) -> Result<Vec<String>, String> {
    let branches = git.branch_refs("loopc")?;
    if branches.is_empty() {
        return Ok(branches);
    }
    let plan_dir = format!("loopc/{plan_slug}");
    let tasks: BTreeSet<std::borrow::Cow<str>> = tasks.map(task_component).collect();
    for b in &branches {
        let blocking = b == "loopc"
            || *b == plan_dir
            || b.strip_prefix(&format!("{plan_dir}/"))
                .is_some_and(|t| tasks.contains(t));
        if blocking {
            return Err(format!(
                "a branch named `{b}` exists, which keeps git from creating loopc's task \
                 branches `{plan_dir}/<task>/<try>`; rename it (git branch -m {b} <new-name>)"
            ));
        }
    }
    Ok(branches)
}

/// The branch names whose run numbers a new run of plan `plan_slug` must
/// stay above ([`Layout::next_run`]): this checkout's ledger, every branch
/// under `loopc/<plan>/` among `existing` (the branches
/// [`check_namespace`] found, whoever made them: another checkout of the
/// repository, whose `.loopc/` and ledger are its own, or a user), and
/// what the ledgers of the repository's other checkouts record (one may
/// name a branch deleted by hand, which that checkout would still take for
/// its own). So a run never takes, or later deletes, a name another
/// checkout may own. Another checkout's ledger that cannot be read adds
/// nothing.
///
/// Errors: this checkout's ledger cannot be read, or git fails listing the
/// checkouts.
pub fn taken_names(
    git: &Git,
    layout: &Layout,
    plan_slug: &str,
    existing: &[String],
) -> Result<BTreeSet<String>, String> {
    let mut names = layout::ledger(layout)?;
    let plan_dir = format!("loopc/{plan_slug}/");
    names.extend(
        existing
            .iter()
            .filter(|b| b.starts_with(&plan_dir))
            .cloned(),
    );
    // The other checkouts, from git's files; loopc's own worktrees (given
    // as they are and canonical) are left out.
    let own = &layout.worktrees;
    let canon = std::fs::canonicalize(own).unwrap_or_else(|_| own.clone());
    for c in git.checkout_heads(&[own, &canon])? {
        if !super::git::same_path(&c.path, &git.root) {
            names.extend(layout::ledger(&Layout::new(&c.path)).unwrap_or_default());
        }
    }
    Ok(names)
}

/// Removes a worktree loopc made and, if given, its branch.
pub fn remove(git: &Git, path: &Path, branch: Option<&str>) -> Result<(), String> {
    git.worktree_remove(path)?;
    if let Some(b) = branch {
        git.delete_ref(&format!("refs/heads/{b}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{is_task_branch, slug};

    #[test]
    fn task_branch_shape() {
        assert!(is_task_branch("loopc/demo/a/1"));
        assert!(is_task_branch("loopc/demo/a/r2-a1"));
        assert!(is_task_branch("loopc/demo/a/r2-a1.retry-2"));
        assert!(is_task_branch("loopc/demo/a/r2-replay"));
        assert!(!is_task_branch("loopc/demo/a/r2"));
        assert!(!is_task_branch("loopc/demo/a"));
        assert!(!is_task_branch("loopc/demo/a/x"));
        assert!(!is_task_branch("feature/demo/a/1"));
    }

    #[test]
    fn slugs_are_ref_safe() {
        assert_eq!(slug("auth-refactor"), "auth-refactor");
        assert_eq!(slug("my plan/x"), "my-plan-x");
        assert_eq!(slug("..a..b"), "a.b");
        assert_eq!(slug(""), "plan");
    }
}
