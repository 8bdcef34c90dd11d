//! What git's administrative files say about the repository's checkouts,
//! read without starting git: each linked worktree has a directory
//! `<common dir>/worktrees/<id>/` holding `gitdir` (the path of the
//! worktree's `.git` file) and `HEAD`; the main checkout's `HEAD` is in the
//! common directory. A run looks at these around every attempt, so reading
//! them costs no process (`git worktree list` reads the same files).
//!
//! Where the files do not say it plainly (a bare repository, a separate git
//! directory, the reftable ref store, whose `HEAD` files are placeholders),
//! the answers come from `git worktree list` instead.

use super::git::{Git, same_path};
use std::path::{Path, PathBuf};

/// One checkout of the repository: its directory and what its HEAD is, as
/// `ref: <refname>` (on a branch, born or not) or `detached at <commit>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutHead {
    /// The checkout's directory.
    pub path: PathBuf,
    /// `ref: refs/heads/…` or `detached at <commit>`.
    pub head: String,
}

/// The reftable ref store writes this into every `HEAD` file.
const REFTABLE_PLACEHOLDER: &str = "ref: refs/heads/.invalid";

/// `ref: …` or `detached at …` from a `HEAD` file's text; `None` when the
/// file is not one git writes (or is the reftable placeholder).
fn head_of(text: &str) -> Option<String> {
    let text = text.trim_end();
    if text == REFTABLE_PLACEHOLDER {
        return None;
    }
    if let Some(r) = text.strip_prefix("ref: ") {
        return Some(format!("ref: {}", r.trim()));
    }
    (text.len() >= 40 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("detached at {text}"))
}

impl Git {
    /// The linked worktrees git has registered: (the worktree's directory,
    /// its administrative directory), in no particular order. An entry
    /// whose `gitdir` cannot be read, or is empty (half-written), is left
    /// out.
    pub fn linked_worktrees(&self) -> Vec<(PathBuf, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(self.common_dir.join("worktrees")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in entries.filter_map(Result::ok) {
            let admin = e.path();
            // `git worktree add` writes an entry file by file: one whose
            // `gitdir` is still empty names no directory yet.
            let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else {
                continue;
            };
            if gitdir.trim().is_empty() {
                continue;
            }
            let dotgit = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
            let dir = dotgit.parent().map(Path::to_path_buf).unwrap_or(dotgit);
            out.push((dir, admin));
        }
        out
    }

    /// Whether `path` is a registered linked worktree.
    pub fn is_registered_worktree(&self, path: &Path) -> bool {
        self.linked_worktrees()
            .iter()
            .any(|(dir, _)| dir == path || same_path(dir, path))
    }

    /// The HEAD of every checkout of the repository: the main one first,
    /// then the linked worktrees in directory order.
    ///
    /// Errors: git failed (only when the files do not say it plainly).
    pub fn checkout_heads(&self) -> Result<Vec<CheckoutHead>, String> {
        if let Some(heads) = self.checkout_heads_from_files() {
            return Ok(heads);
        }
        // Other attempts add worktrees meanwhile, and `git worktree add`
        // writes an entry's files one after another: git reading a
        // half-written entry fails ("failed to read …/commondir"). That
        // passes in moments, so try a few times before calling it an error.
        let mut tries = 0;
        let entries = loop {
            match self.worktrees() {
                Ok(entries) => break entries,
                Err(e) if tries < 8 && e.contains("/worktrees/") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5 << tries));
                }
                Err(e) => return Err(e),
            }
        };
        Ok(entries
            .into_iter()
            .map(|w| CheckoutHead {
                path: w.path,
                head: match (w.branch, w.head) {
                    (Some(b), _) => format!("ref: {b}"),
                    (None, Some(h)) => format!("detached at {h}"),
                    (None, None) => "unborn".to_string(),
                },
            })
            .collect())
    }

    /// [`Git::checkout_heads`] from the administrative files; `None` when
    /// they do not say it plainly.
    fn checkout_heads_from_files(&self) -> Option<Vec<CheckoutHead>> {
        // The main checkout is the directory holding the common `.git`.
        if self.common_dir.file_name()? != ".git" {
            return None;
        }
        let main = self.common_dir.parent()?.to_path_buf();
        if !main.join(".git").is_dir() {
            return None;
        }
        let head = head_of(&std::fs::read_to_string(self.common_dir.join("HEAD")).ok()?)?;
        let mut heads = vec![CheckoutHead { path: main, head }];
        let mut linked = self.linked_worktrees();
        linked.sort();
        for (path, admin) in linked {
            let head = head_of(&std::fs::read_to_string(admin.join("HEAD")).ok()?)?;
            heads.push(CheckoutHead { path, head });
        }
        Some(heads)
    }
}

#[cfg(test)]
mod tests {
    use super::head_of;
    use crate::run::sys::git::Git;

    /// An entry `git worktree add` has begun to write (its `gitdir` still
    /// empty) is no checkout: it names no directory yet.
    #[test]
    fn half_written_entries_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "git {args:?}");
        };
        std::fs::create_dir_all(&root).unwrap();
        git(&["init", "-q", "-b", "main"]);
        git(&[
            "-c",
            "user.name=n",
            "-c",
            "user.email=n@e",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "i",
        ]);
        git(&["worktree", "add", "-q", "--detach", "../wt"]);
        let half = root.join(".git/worktrees/half");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("gitdir"), "").unwrap();
        std::fs::write(half.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let repo = Git::discover(&root).unwrap();
        let heads = repo.checkout_heads().unwrap();
        let paths: Vec<_> = heads.iter().map(|h| h.path.clone()).collect();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert!(paths.iter().all(|p| !p.as_os_str().is_empty()), "{paths:?}");
    }

    #[test]
    fn head_files() {
        assert_eq!(
            head_of("ref: refs/heads/main\n").as_deref(),
            Some("ref: refs/heads/main")
        );
        let oid = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            head_of(&format!("{oid}\n")),
            Some(format!("detached at {oid}"))
        );
        assert_eq!(head_of("ref: refs/heads/.invalid\n"), None);
        assert_eq!(head_of("garbage"), None);
    }
}
