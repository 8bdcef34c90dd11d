//! Removing the worktrees and task branches of passed attempts off the
//! coordinating thread, which merges one attempt after another and must not
//! wait for `git worktree remove`. One thread takes them in order: it removes
//! each worktree (under the run's worktree lock), then deletes the task
//! branches of all the worktrees it removed meanwhile with one `git branch
//! -D`. [`Cleanup::finish`] waits until everything handed over is removed,
//! so a run ends with nothing of its passed attempts left. A run killed
//! before then leaves stale worktrees and ledgered task branches, which the
//! next run removes (`crate::run::sys::recover`).

use super::context::RunCtx;
use crate::run::sys::worktree;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;

/// The most task branches one `git branch -D` deletes.
const BATCH: usize = 256;

/// The clean-up thread of a run.
pub struct Cleanup {
    ctx: Arc<RunCtx>,
    /// Hands it `(worktree, task branch)`; `None` once finished, or when
    /// the thread could not start (then removal happens on the caller).
    tx: Option<mpsc::Sender<(PathBuf, String)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Says `text` as an `error:` line on the display: a failed removal does
/// not stop the run (the next run removes what is left).
fn note(ctx: &RunCtx, text: &str) {
    ctx.events.ui().line(&format!("error: {text}"));
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
                    for (path, branch) in std::iter::once(first).chain(rx.try_iter()) {
                        let done = {
                            let _g = worker.worktree_lock.lock();
                            worker.git.worktree_remove(&path)
                        };
                        match done {
                            Ok(()) => removed.push(branch),
                            Err(e) => note(&worker, &e),
                        }
                        if removed.len() == BATCH {
                            break;
                        }
                    }
                    if let Err(e) = worker.git.delete_branches(&removed) {
                        note(&worker, &e);
                    }
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
                note(&self.ctx, &e);
            }
        }
    }

    /// Waits until everything handed over is removed.
    pub fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
