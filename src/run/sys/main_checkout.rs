//! Reading the checkout loopc runs in (the user's): which paths git tracks
//! (`git ls-files`) and which tracked files have uncommitted changes
//! (`git status`). Nothing here changes it.

use super::git::Git;
use std::collections::HashSet;

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

    /// The tracked files of the main checkout with uncommitted changes
    /// (staged or not; untracked files are not listed), relative to its
    /// top level, sorted.
    ///
    /// Errors: git fails.
    pub fn changed_tracked_paths(&self) -> Result<Vec<String>, String> {
        let out = self.run_in(
            &self.root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=no"],
        )?;
        let mut paths = Vec::new();
        let mut records = out.stdout.split('\0').filter(|r| !r.is_empty());
        while let Some(record) = records.next() {
            let (status, path) = record.split_at(record.len().min(3));
            paths.push(path.to_string());
            // A rename or copy is followed by its source path.
            if (status.starts_with('R') || status.starts_with('C'))
                && let Some(from) = records.next()
            {
                paths.push(from.to_string());
            }
        }
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// The untracked files of the main checkout (not ignored), relative to
    /// its top level, sorted: files a person made and has not added yet.
    ///
    /// Errors: git fails.
    pub fn untracked_paths(&self) -> Result<Vec<String>, String> {
        let out = self.run_in(
            &self.root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )?;
        let mut paths: Vec<String> = out
            .stdout
            .split('\0')
            .filter_map(|r| r.strip_prefix("?? "))
            .map(str::to_string)
            .collect();
        paths.sort();
        Ok(paths)
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
