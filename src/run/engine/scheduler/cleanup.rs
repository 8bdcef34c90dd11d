//! Removing the worktrees and task branches of passed attempts off the
//! coordinating thread, which merges one attempt after another and must not
//! wait for `git worktree remove`. One thread takes them in order: it drops
//! each worktree from git's list (under the run's worktree lock, which
//! every `git worktree add` takes: only the entry, the files were renamed
//! aside first), deletes the task branches of all the worktrees it removed
//! meanwhile with one `git branch -D`, then the files, several directories
//! at a time and outside the lock. It is also handed the worktrees left in
//! the pool of clean worktrees when the run ends ([`crate::run::engine::pool`]), and the
//! old task branches of the pooled worktrees attempts reused. Once the run
//! is stopping (Ctrl-C), when git is no longer started, it drops git's
//! entries itself and leaves the task branches to the next run.
//! [`Cleanup::finish`] waits until everything handed over is removed, so a
//! run ends with nothing of its passed attempts' worktrees left. A run
//! killed before then leaves stale worktrees and ledgered task branches,
//! which the next run removes (`crate::run::sys::recover`).

use crate::run::engine::context::{Io, RunCtx};
use crate::run::store::events::Recorder;
use crate::run::sys::worktree;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// The most task branches one `git branch -D` deletes.
const BATCH: usize = 256;

/// The most threads deleting renamed-aside worktrees at once.
const DELETERS: usize = 8;

/// The clean-up thread of a run.
pub struct Cleanup {
    ctx: Arc<RunCtx>,
    /// Hands it `(worktree, task branch)`; `None` once finished, or when
    /// the thread could not start (then removal happens on the caller).
    tx: Option<mpsc::Sender<(PathBuf, String)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Says `text` as a `warning:` line on the display: a failed removal does
/// not stop the run nor change its exit status (the next run removes what
/// is left).
fn note(events: &Recorder, text: &str) {
    events.ui().line(&format!("warning: {text}"));
}

/// Takes the worktree at `path` out of git's list: its directory is first
/// renamed aside (`+trash-<name>` beside it, a cheap rename), so that under
/// the worktree lock `git worktree remove` only drops git's entry; deleting
/// the files, slow where every freed block is discarded on the disk, happens
/// after, outside the lock ([`delete_all`]). Returns the directory to
/// delete, if it was renamed.
///
/// Errors: git failed.
fn unregister(io: Io<'_>, lock: &Mutex<()>, path: &Path) -> Result<Option<PathBuf>, String> {
    let aside = path
        .file_name()
        .map(|n| path.with_file_name(format!("+trash-{}", n.to_string_lossy())));
    let aside = aside.filter(|a| std::fs::rename(path, a).is_ok());
    let _g = lock.lock();
    // The run is stopping: git would be stopped too.
    if crate::run::engine::outcome::stopping(io.control) {
        crate::run::sys::recover::forget_worktree(io.git, path)?;
        return Ok(aside);
    }
    // As recovery does: when git refuses (an entry another process left
    // half-written makes `git worktree` fail), only this entry's
    // administrative directory is removed.
    crate::run::sys::recover::remove_worktree(io.git, path)?;
    Ok(aside)
}

/// Deletes the directories `dirs` (renamed-aside worktrees), several at a
/// time: each unlink may wait for the disk.
fn delete_all(events: &Recorder, dirs: Vec<PathBuf>) {
    let per = dirs.len().div_ceil(DELETERS).max(1);
    std::thread::scope(|s| {
        for chunk in dirs.chunks(per) {
            s.spawn(move || {
                for d in chunk {
                    if let Err(e) = crate::run::sys::modes::remove_tree(d) {
                        note(events, &format!("cannot remove {}: {e}", d.display()));
                    }
                }
            });
        }
    });
}

impl Cleanup {
    /// Starts the clean-up thread of the run `ctx`.
    pub fn start(ctx: Arc<RunCtx>) -> Cleanup {
        let (tx, rx) = mpsc::channel::<(PathBuf, String)>();
        let worker = Arc::clone(&ctx);
        let thread = std::thread::Builder::new()
            .name("loopc-cleanup".into())
            .spawn(move || {
                while let Ok(first) = rx.recv() {
                    let mut removed = Vec::new();
                    let mut trash = Vec::new();
                    for (path, branch) in std::iter::once(first).chain(rx.try_iter()) {
                        match unregister(worker.io(), &worker.worktree_lock, &path) {
                            Ok(t) => {
                                removed.push(branch);
                                trash.extend(t);
                            }
                            Err(e) => note(&worker.events, &e),
                        }
                        if removed.len() == BATCH {
                            break;
                        }
                    }
                    // A stopping run leaves the task branches to the next
                    // run's recovery. `git branch -D` reads every
                    // worktree's entry: not while one is being made.
                    if crate::run::engine::outcome::stopping(&worker.control) {
                        removed.clear();
                    }
                    let deleted = {
                        let _g = worker.worktree_lock.lock();
                        worker.git.delete_branches(&removed)
                    };
                    if let Err(e) = deleted {
                        note(&worker.events, &e);
                    }
                    delete_all(&worker.events, trash);
                }
            })
            .ok();
        Cleanup {
            tx: thread.as_ref().map(|_| tx),
            thread,
            ctx,
        }
    }

    /// Removes the worktree at `path` and its task branch `branch`, on the
    /// clean-up thread.
    pub fn remove(&self, path: PathBuf, branch: String) {
        let inline = match &self.tx {
            Some(tx) => tx.send((path, branch)).err().map(|e| e.0),
            None => Some((path, branch)),
        };
        if let Some((path, branch)) = inline {
            let _g = self.ctx.worktree_lock.lock();
            if let Err(e) = worktree::remove(&self.ctx.git, &path, Some(&branch)) {
                note(&self.ctx.events, &e);
            }
        }
    }

    /// The worktree at `path` of a finished attempt on task branch
    /// `branch`: a passed attempt's is kept in the run's pool of clean
    /// worktrees ([`crate::run::engine::pool`]) while it has room; any other is removed.
    pub fn release(&self, path: PathBuf, branch: String, passed: bool) {
        let left = if passed {
            self.ctx.pool.put(path, branch)
        } else {
            Some((path, branch))
        };
        if let Some((path, branch)) = left {
            self.remove(path, branch);
        }
    }

    /// Removes what is left in the pool of clean worktrees, then waits
    /// until everything handed over is removed.
    pub fn finish(&mut self) {
        for (path, branch) in self.ctx.pool.drain() {
            self.remove(path, branch);
        }
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
