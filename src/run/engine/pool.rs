//! The pool of clean worktrees: the worktrees of passed attempts, kept for
//! later attempts of the same run instead of being deleted and created
//! again. An attempt takes one, moves it to its own name, checks it out on
//! its new task branch at its base (only the files that differ are
//! written) and removes every file git does not track: the tree is then
//! exactly what a fresh worktree's would be (docs/running.md, "Reused
//! worktrees"). Anything wrong with a pooled worktree falls back to a fresh
//! one: the pool never fails an attempt. What is left in the pool when the
//! run ends is removed with the rest (by the scheduler's clean-up); after `kill -9`
//! the next run's recovery removes it like any passed attempt's worktree
//! (a pooled worktree keeps its name and its task branch until reused).

use std::path::PathBuf;
use std::sync::Mutex;

/// The clean worktrees of one run: `(worktree, its task branch)`, the
/// branch still checked out there.
#[derive(Debug)]
pub struct Pool {
    entries: Mutex<Vec<(PathBuf, String)>>,
    /// The most worktrees it keeps (the run's `parallel`: more than that
    /// are never taken at once).
    cap: usize,
}

impl Pool {
    /// An empty pool that keeps at most `cap` worktrees.
    pub fn new(cap: usize) -> Pool {
        Pool {
            entries: Mutex::new(Vec::new()),
            cap,
        }
    }

    /// Keeps the worktree at `path` on task branch `branch` for a later
    /// attempt; gives it back when the pool is full.
    pub fn put(&self, path: PathBuf, branch: String) -> Option<(PathBuf, String)> {
        let mut e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if e.len() >= self.cap {
            return Some((path, branch));
        }
        e.push((path, branch));
        None
    }

    /// Takes a worktree out of the pool, if there is one.
    pub fn take(&self) -> Option<(PathBuf, String)> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    /// Empties the pool: what it held, for removal.
    pub fn drain(&self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut *self.entries.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
