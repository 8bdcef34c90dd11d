//! The guard on the user's refs. Worktrees share their repository's refs,
//! so an agent can create, move or delete a user's branch or tag, move a
//! checkout's HEAD, or push onto the user's stash (`git stash` in a linked
//! worktree does) — only a sandbox prevents it. loopc detects it: it takes a
//! [`Snapshot`] of every ref that is not its own before an attempt's first
//! subprocess and after its last one; a difference fails the attempt with
//! feedback naming each ref and its old and new value, and the run's
//! summary warns. A commit made in one of the person's checkouts is theirs
//! ([`checkout_commit`]): only noted. loopc never moves such a ref back:
//! the user decides.
//!
//! loopc's own refs are not watched: its task branches `refs/heads/loopc/…`,
//! its cache `refs/loopc/…` and the integration branch (guarded on its own:
//! a foreign move stops the run). Remote-tracking refs (`refs/remotes/…`)
//! are not watched either: they mirror other repositories and move with
//! every fetch, an editor's background fetch included.

use crate::run::sys::git::Git;
use std::collections::BTreeMap;
use std::path::Path;

/// The key under which the stash's entries are recorded.
const STASH: &str = "the stash";

/// The user's refs at one moment: ref name, `HEAD of <checkout>` or
/// [`STASH`], to its value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<String, String>);

/// One difference between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefChange {
    /// The ref (`refs/heads/main`), `HEAD of <checkout>` or `the stash`.
    pub name: String,
    /// Its value before (`None`: it did not exist).
    pub old: Option<String>,
    /// Its value after (`None`: it was deleted).
    pub new: Option<String>,
}

impl RefChange {
    /// One line for people: what changed, from what to what.
    pub fn describe(&self) -> String {
        let show = |v: &str| {
            if self.name == STASH {
                let n = v.split_whitespace().count();
                let top = v.split_whitespace().next().unwrap_or("");
                format!("{n} entr{} (top {top})", if n == 1 { "y" } else { "ies" })
            } else {
                v.to_string()
            }
        };
        match (&self.old, &self.new) {
            (None, Some(n)) if self.name == STASH => {
                format!("{STASH} was created: {}", show(n))
            }
            (Some(_), None) if self.name == STASH => format!("{STASH} was emptied"),
            (None, Some(n)) => format!("`{}` was created at {}", self.name, show(n)),
            (Some(o), None) => format!("`{}` was deleted (it was at {})", self.name, show(o)),
            (Some(o), Some(n)) if self.name == STASH => {
                format!("{STASH} changed from {} to {}", show(o), show(n))
            }
            (Some(o), Some(n)) => {
                format!("`{}` was moved from {} to {}", self.name, show(o), show(n))
            }
            (None, None) => format!("`{}` changed", self.name),
        }
    }

    /// The git command that puts a ref (`refs/…`) back as it was, for
    /// people to run; `None` for a checkout's `HEAD` and the stash, which
    /// no single command restores safely.
    pub fn restore(&self) -> Option<String> {
        if !self.name.starts_with("refs/") {
            return None;
        }
        let name = crate::visible::shell_word(&self.name);
        Some(match (&self.old, &self.new) {
            (Some(o), Some(n)) => format!("git update-ref {name} {o} {n}"),
            (Some(o), None) => format!("git update-ref {name} {o}"),
            (None, Some(n)) => format!("git update-ref -d {name} {n}"),
            (None, None) => return None,
        })
    }
}

/// Takes a snapshot of the refs that are not loopc's in the repository of
/// `git`: every ref but `refs/heads/loopc/…`, `refs/loopc/…`,
/// `refs/remotes/…` and `integration_ref`; the HEAD of every checkout
/// outside `worktrees` (loopc's); and the stash's entries.
///
/// Errors: git failed.
pub fn snapshot(git: &Git, integration_ref: &str, worktrees: &Path) -> Result<Snapshot, String> {
    let mut map = BTreeMap::new();
    // From git's files when they say it plainly (twice an attempt), else
    // `git for-each-ref`; loopc's own namespaces are not even walked.
    const NOT_WATCHED: [&str; 3] = ["refs/heads/loopc/", "refs/loopc/", "refs/remotes/"];
    let refs: Vec<(String, String)> = match git.refs_from_files(&NOT_WATCHED) {
        Some(refs) => refs.into_iter().collect(),
        None => git
            .read(&["for-each-ref", "--format=%(refname) %(objectname)"])?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(n, id)| (n.to_string(), id.to_string()))
            .collect(),
    };
    let mut stash = false;
    for (name, oid) in &refs {
        let (name, oid) = (name.as_str(), oid.as_str());
        if NOT_WATCHED.iter().any(|p| name.starts_with(p)) || name == integration_ref {
            continue;
        }
        if name == "refs/stash" {
            stash = true;
            continue;
        }
        map.insert(name.to_string(), oid.to_string());
    }
    if stash {
        let entries = git.read(&["reflog", "show", "--format=%H", "refs/stash", "--"])?;
        map.insert(
            STASH.to_string(),
            entries.split_whitespace().collect::<Vec<_>>().join(" "),
        );
    }
    let canon = std::fs::canonicalize(worktrees).unwrap_or_else(|_| worktrees.to_path_buf());
    // From git's administrative files, not `git worktree list`: this runs
    // twice an attempt.
    for w in git.checkout_heads(&[worktrees, &canon])? {
        map.insert(format!("HEAD of {}", w.path.display()), w.head);
    }
    Ok(Snapshot(map))
}

/// What changed from `before` to `after`, in name order.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Vec<RefChange> {
    let mut out = Vec::new();
    for (name, old) in &before.0 {
        match after.0.get(name) {
            Some(new) if new == old => {}
            new => out.push(RefChange {
                name: name.clone(),
                old: Some(old.clone()),
                new: new.cloned(),
            }),
        }
    }
    for (name, new) in &after.0 {
        if !before.0.contains_key(name) {
            out.push(RefChange {
                name: name.clone(),
                old: None,
                new: Some(new.clone()),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The checkout (its path, as the snapshots name it) that has branch
/// `c.name` checked out in both `before` and `after`, if `c` is a commit
/// made there: the branch moved forward (its old commit is an ancestor of
/// its new one) and the checkout's index matches the new commit, as `git
/// commit` leaves it (a ref moved from elsewhere, `git update-ref`, leaves
/// the index at the old commit). The person's own work in their checkout
/// (loopc's worktrees are not in a snapshot). `None` for any other change,
/// or when git cannot say.
pub fn checkout_commit<'a>(
    git: &Git,
    c: &RefChange,
    before: &Snapshot,
    after: &'a Snapshot,
) -> Option<&'a str> {
    let (Some(old), Some(new)) = (&c.old, &c.new) else {
        return None;
    };
    let symbolic = format!("ref: {}", c.name);
    let path = after.0.iter().find_map(|(k, v)| {
        let path = k.strip_prefix("HEAD of ")?;
        (*v == symbolic && before.0.get(k) == Some(v)).then_some(path)
    })?;
    if !git.is_ancestor(old, new).ok()? {
        return None;
    }
    let index = ["diff-index", "--cached", "--quiet", new.as_str(), "--"];
    let same = git.try_run_in(Path::new(path), &index).ok()?.code == 0;
    same.then_some(path)
}

/// What changed from `before` to `after` that an attempt is charged with:
/// [`diff`] without the commits made in the person's checkouts
/// ([`checkout_commit`]), which the guard takes as theirs (a commit on the
/// branch checked out there while agents run, `--watch`'s trigger among
/// them); the run's end notes them ([`crate::run::engine::scheduler`]).
pub fn charged(git: &Git, before: &Snapshot, after: &Snapshot) -> Vec<RefChange> {
    diff(before, after)
        .into_iter()
        .filter(|c| checkout_commit(git, c, before, after).is_none())
        .collect()
}

/// Refs that are not loopc's and changed since `before` (see [`snapshot`]),
/// as [`charged`] counts them.
///
/// Errors: git failed.
pub fn changed_since(
    git: &Git,
    integration_ref: &str,
    worktrees: &Path,
    before: &Snapshot,
) -> Result<Vec<RefChange>, String> {
    let now = snapshot(git, integration_ref, worktrees)?;
    Ok(charged(git, before, &now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(pairs: &[(&str, &str)]) -> Snapshot {
        Snapshot(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn changes_are_found_and_described() {
        let a = snap(&[("refs/heads/main", "1"), ("refs/tags/v1", "2")]);
        let b = snap(&[
            ("refs/heads/main", "3"),
            ("refs/heads/x", "4"),
            (STASH, "5 6"),
        ]);
        let d = diff(&a, &b);
        let text: Vec<String> = d.iter().map(RefChange::describe).collect();
        assert_eq!(
            text,
            [
                "`refs/heads/main` was moved from 1 to 3",
                "`refs/heads/x` was created at 4",
                "`refs/tags/v1` was deleted (it was at 2)",
                "the stash was created: 2 entries (top 5)",
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }
}
