//! Work must survive the worktree: a commit that adds or changes a gitlink
//! (a submodule, or a nested repository an agent made) whose commit lives
//! only inside the worktree would point at nothing once it is removed. An
//! attempt with such a link fails with feedback naming its path.

use crate::run::sys::checkout::Checkout;
use crate::run::sys::git::Git;

/// The first of `links` (the gitlinks a commit adds or changes, as
/// `(path, commit)`) whose commit is in none of the repository's shared object stores
/// ([`Git::shared_stores`]): `(reason, feedback)` naming its
/// path, or `None` when every one survives the worktree.
///
/// Errors: git failed.
pub(super) fn dangling(
    git: &Git,
    co: &Checkout,
    links: Vec<(String, String)>,
) -> Result<Option<(String, String)>, String> {
    if links.is_empty() {
        return Ok(None);
    }
    let stores = git.shared_stores();
    for (path, id) in links {
        let mut found = false;
        for store in &stores {
            if git.store_has_commit(store, &id)? {
                found = true;
                break;
            }
        }
        if found {
            continue;
        }
        let nested =
            std::fs::symlink_metadata(co.dir.join(&path).join(".git")).is_ok_and(|m| m.is_dir());
        let (reason, advice) = if nested {
            (
                format!(
                    "`{path}` is a git repository of its own inside the worktree: only a \
                     pointer to its commit {id} would be committed, and that commit exists \
                     only in `{path}/.git`"
                ),
                format!(
                    "Add its files to the task's repository instead (remove `{path}/.git`), \
                     or do not create a repository inside the worktree."
                ),
            )
        } else {
            (
                format!(
                    "the submodule `{path}` points at commit {id}, which exists only in this \
                     worktree's copy of the submodule"
                ),
                format!(
                    "Leave the submodule `{path}` at a commit its repository already has, or \
                     make the change in the task's own files."
                ),
            )
        };
        let feedback = format!(
            "{reason}; it is lost when the worktree is removed, so the work cannot pass. \
             {advice}"
        );
        return Ok(Some((reason, feedback)));
    }
    Ok(None)
}

/// `(reason, feedback)` when `git add -A` failed (its error `error`) on a
/// git repository the agent made inside the worktree without a commit:
/// git cannot stage it, and only the agent can say what it meant. `None`
/// for any other failure.
pub(super) fn uncommitted_nested(error: &str) -> Option<(String, String)> {
    const SAYS: &str = "' does not have a commit checked out";
    let end = error.find(SAYS)?;
    let start = error[..end].rfind('\'')? + 1;
    let path = error[start..end].trim_end_matches('/');
    Some((
        format!(
            "`{path}` is a git repository with no commit inside the worktree: git cannot add it"
        ),
        format!(
            "Add its files to the task's repository instead (remove `{path}/.git`), or do not \
             create a repository inside the worktree."
        ),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_nested_repository_is_named() {
        let git = "error: 'sub2/' does not have a commit checked out\nfatal: adding files failed";
        let (reason, _) =
            super::uncommitted_nested(&format!("`git add -A` failed: {git}")).unwrap();
        assert_eq!(
            reason,
            "`sub2` is a git repository with no commit inside the worktree: git cannot add it"
        );
        assert_eq!(super::uncommitted_nested("fatal: something else"), None);
    }
}
