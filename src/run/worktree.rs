//! Where loopc keeps things: the `.loopc/` directory at the repository root
//! (state, events, progress, logs, worktrees, lock) and the names of task
//! worktrees and branches. Branches live under `loopc/<plan>/<task>/<n>`,
//! a namespace a user's branches do not use; worktrees under
//! `.loopc/worktrees/`.

use super::git::Git;
use std::path::{Path, PathBuf};

/// Paths of loopc's files in one repository.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `.loopc/`.
    pub dir: PathBuf,
    /// `.loopc/state.json`.
    pub state: PathBuf,
    /// `.loopc/events.jsonl`.
    pub events: PathBuf,
    /// `.loopc/progress.md`.
    pub progress: PathBuf,
    /// `.loopc/logs/`.
    pub logs: PathBuf,
    /// `.loopc/worktrees/`.
    pub worktrees: PathBuf,
    /// `.loopc/lock`.
    pub lock: PathBuf,
}

impl Layout {
    /// The layout for the repository whose top level is `root`.
    pub fn new(root: &Path) -> Layout {
        let dir = root.join(".loopc");
        Layout {
            state: dir.join("state.json"),
            events: dir.join("events.jsonl"),
            progress: dir.join("progress.md"),
            logs: dir.join("logs"),
            worktrees: dir.join("worktrees"),
            lock: dir.join("lock"),
            dir,
        }
    }

    /// Creates `.loopc/` and its subdirectories and makes sure git ignores
    /// it (`.git/info/exclude`).
    ///
    /// Errors: a directory or the exclude file cannot be written.
    pub fn create(&self, git: &Git) -> Result<(), String> {
        for d in [&self.dir, &self.logs, &self.worktrees] {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        let info = git.common_dir.join("info");
        let exclude = info.join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current
            .lines()
            .any(|l| l.trim() == ".loopc/" || l.trim() == "/.loopc/")
        {
            std::fs::create_dir_all(&info)
                .map_err(|e| format!("cannot create {}: {e}", info.display()))?;
            let mut text = current;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("# loopc's state, logs and worktrees\n/.loopc/\n");
            std::fs::write(&exclude, text)
                .map_err(|e| format!("cannot write {}: {e}", exclude.display()))?;
        }
        Ok(())
    }

    /// The worktree directory of a task's `n`th try.
    pub fn task_worktree(&self, task: &str, n: u32) -> PathBuf {
        self.worktrees.join(format!("{task}-{n}"))
    }

    /// The scratch worktree where a task's `n`th try is merged and gated again.
    pub fn merge_worktree(&self, task: &str, n: u32) -> PathBuf {
        self.worktrees.join(format!("_merge-{task}-{n}"))
    }

    /// The log directory of a task's `n`th try.
    pub fn attempt_logs(&self, task: &str, n: u32) -> PathBuf {
        self.logs.join(task).join(n.to_string())
    }
}

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

/// The branch of a task's `n`th try.
pub fn task_branch(plan_slug: &str, task: &str, n: u32) -> String {
    format!("loopc/{plan_slug}/{task}/{n}")
}

/// Whether `branch` has the shape of a task branch: `loopc/P/T/N`, N a number.
pub fn is_task_branch(branch: &str) -> bool {
    let parts: Vec<&str> = branch.split('/').collect();
    parts.len() == 4
        && parts[0] == "loopc"
        && !parts[3].is_empty()
        && parts[3].bytes().all(|b| b.is_ascii_digit())
}

/// Makes a fresh worktree at `path` on new branch `branch` at `commit`,
/// first removing a worktree or branch of the same name that an earlier run
/// left there (both are loopc's: its directory, its branch namespace).
pub fn create(git: &Git, path: &Path, branch: Option<&str>, commit: &str) -> Result<(), String> {
    git.worktree_remove(path)?;
    if let Some(b) = branch {
        git.delete_ref(&format!("refs/heads/{b}"))?;
    }
    git.worktree_add(path, branch, commit)
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
