//! Task worktrees and branches: their names, making and removing them, and
//! the pre-flight check of loopc's branch namespace. Branches live under
//! `loopc/<plan>/<task>/<try>` (`<try>` names the run and attempt, e.g.
//! `r3-a1`, [`TryId`]), a namespace a user's branches do not use;
//! worktrees under `.loopc/worktrees/` ([`Layout`]). The branches loopc
//! created are recorded in `.loopc/branches` ([`layout::ledger`]), and only
//! those are ever replaced or removed.

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
    format!("loopc/{plan_slug}/{task}/{}", id.name())
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
/// first removing a worktree or branch of the same name that an earlier run
/// left there (both are loopc's: its directory, its branch namespace).
pub fn create(git: &Git, path: &Path, branch: Option<&str>, commit: &str) -> Result<(), String> {
    git.worktree_remove(path)?;
    if let Some(b) = branch {
        git.delete_ref(&format!("refs/heads/{b}"))?;
    }
    git.worktree_add(path, branch, commit, true)
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

/// Pre-flight check of loopc's branch namespace for plan `plan_slug` with
/// tasks `tasks`: no branch may block the task branches (`loopc`,
/// `loopc/<plan>`, `loopc/<plan>/<task>`), and a branch shaped like one of
/// this plan's task branches must be one loopc created.
///
/// Errors: a message naming the branch.
pub fn check_namespace<'a>(
    git: &Git,
    layout: &Layout,
    plan_slug: &str,
    tasks: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let branches = git.branch_refs("loopc")?;
    if branches.is_empty() {
        return Ok(());
    }
    let ours = layout::ledger(layout)?;
    let plan_dir = format!("loopc/{plan_slug}");
    let tasks: BTreeSet<&str> = tasks.collect();
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
        let Some(rest) = b.strip_prefix(&format!("{plan_dir}/")) else {
            continue;
        };
        let mut parts = rest.splitn(2, '/');
        let (Some(task), Some(n)) = (parts.next(), parts.next()) else {
            continue;
        };
        let number = n.split('/').next().unwrap_or("");
        if tasks.contains(task) && is_try_component(number) && !ours.contains(b.as_str()) {
            return Err(format!(
                "the branch `{b}` has the name of one of loopc's task branches but was not \
                 created by loopc; rename or delete it"
            ));
        }
    }
    Ok(())
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
