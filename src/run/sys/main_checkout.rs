//! Reading the checkout loopc runs in (the user's): which paths git tracks
//! (`git ls-files`) and which tracked files have uncommitted changes
//! (`git status`). Nothing here changes it.

use super::git::Git;
use std::collections::HashSet;

/// What of the main checkout is not committed ([`Git::uncommitted`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Uncommitted {
    /// Tracked files with uncommitted changes, staged or not.
    pub changed: Vec<String>,
    /// Untracked files that git does not ignore.
    pub untracked: Vec<String>,
}

impl Git {
    /// Every path git tracks in the main checkout (its index), relative to
    /// its top level.
    ///
    /// Errors: git fails.
    pub fn tracked_paths(&self) -> Result<HashSet<String>, String> {
        let out = self.run_in(&self.root, &["ls-files", "-z", "--full-name"])?;
        Ok(out
            .stdout
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// What of the main checkout is not committed, from one `git status`:
    /// the tracked files with uncommitted changes (staged or not) and the
    /// untracked files (not ignored: files a person made and has not added
    /// yet), each relative to the top level, sorted.
    ///
    /// Errors: git fails.
    pub fn uncommitted(&self) -> Result<Uncommitted, String> {
        let out = self.run_in(
            &self.root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )?;
        let mut found = Uncommitted::default();
        let mut records = out.stdout.split('\0').filter(|r| !r.is_empty());
        while let Some(record) = records.next() {
            let (status, path) = record.split_at(record.len().min(3));
            if status == "?? " {
                found.untracked.push(path.to_string());
                continue;
            }
            found.changed.push(path.to_string());
            // A rename or copy is followed by its source path.
            if (status.starts_with('R') || status.starts_with('C'))
                && let Some(from) = records.next()
            {
                found.changed.push(from.to_string());
            }
        }
        found.changed.sort();
        found.changed.dedup();
        found.untracked.sort();
        Ok(found)
    }

    /// The directories at the top of the main checkout that git ignores
    /// (`target`, `node_modules`), by name: no file in them is in a
    /// commit.
    ///
    /// Errors: git fails.
    pub fn ignored_top_dirs(&self) -> Result<Vec<String>, String> {
        let out = self.run_in(
            &self.root,
            &[
                "ls-files",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--directory",
                "-z",
            ],
        )?;
        Ok(out
            .stdout
            .split('\0')
            .filter_map(|p| p.strip_suffix('/'))
            .filter(|p| !p.is_empty() && !p.contains('/'))
            .map(str::to_string)
            .collect())
    }
}
