//! What an attempt's agent (or command) is doing now, for the person
//! watching: while it runs, its stdout log is read every quarter second and
//! a change of [`report::activity`] is shown on the display
//! ([`crate::run::store::events::Watcher::activity`]). Nothing of it is
//! recorded: the logs hold the whole output.

use crate::plan::OutputFormat;
use crate::run::engine::agent::report;
use crate::run::engine::context::RunCtx;
use crate::run::sys::process;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// How often the log is read.
const EVERY: Duration = Duration::from_millis(250);
/// How much of the log's end is read each time.
const TAIL: u64 = 16 * 1024;

/// Runs `work` (the agent or command writing `stdout_log`, working in
/// `worktree`) while showing what `task`'s attempt `attempt` is doing, read
/// from the log in format `output` (the files it works on named relative
/// to `worktree`); returns what `work` returns.
pub fn while_running<R>(
    ctx: &RunCtx,
    (task, attempt): (&str, u32),
    worktree: &Path,
    output: &OutputFormat,
    stdout_log: &Path,
    work: impl FnOnce() -> R,
) -> R {
    let (done, stop) = mpsc::channel::<()>();
    // The worktree as given and as the system resolves it (an agent may
    // name its files from either).
    let mut worktree = vec![worktree.to_path_buf()];
    if let Ok(real) = worktree[0].canonicalize()
        && real != worktree[0]
    {
        worktree.push(real);
    }
    let worktree = &worktree;
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut shown: Option<String> = None;
            // Until `work` ends (its sender is dropped).
            while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(EVERY) {
                let tail = process::tail(stdout_log, TAIL);
                let now = report::activity(output, &tail, worktree);
                if now.is_some() && now != shown {
                    if let Some(text) = &now {
                        ctx.events.ui().activity(task, attempt, text);
                    }
                    shown = now;
                }
            }
        });
        let result = work();
        drop(done);
        result
    })
}
