//! What an attempt's agent (or command) is doing now, for the person
//! watching: while it runs, its stdout log is read every quarter second and
//! a change of [`report::activity`] is shown on the display
//! ([`crate::run::store::events::Watcher::activity`]). An agent with an
//! `idle` that has printed nothing for half of it is shown going quiet
//! (once a quiet spell). Nothing of it is recorded: the logs hold the
//! whole output.

use crate::plan::OutputFormat;
use crate::run::engine::agent::report;
use crate::run::engine::context::Io;
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
/// to `worktree`), and when it goes quiet for half its `idle`; returns
/// what `work` returns.
pub fn while_running<R>(
    io: Io<'_>,
    (task, attempt): (&str, u32),
    worktree: &Path,
    (output, idle): (&OutputFormat, Option<Duration>),
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
            let mut quiet = Quiet::default();
            // Until `work` ends (its sender is dropped).
            while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(EVERY) {
                if let Some(text) = idle.and_then(|i| quiet.notice(stdout_log, i)) {
                    io.events.ui().activity(task, attempt, &text);
                }
                let tail = process::tail(stdout_log, TAIL);
                let now = report::activity(output, &tail, worktree);
                if now.is_some() && now != shown {
                    if let Some(text) = &now {
                        io.events.ui().activity(task, attempt, text);
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

/// How long the log has not grown, and whether that was shown.
#[derive(Default)]
struct Quiet {
    size: u64,
    since: Option<std::time::Instant>,
    told: bool,
}

impl Quiet {
    /// The notice to show when the log at `log` has not grown for half of
    /// `idle` (once a quiet spell), else `None`.
    fn notice(&mut self, log: &Path, idle: Duration) -> Option<String> {
        let now = std::time::Instant::now();
        let size = std::fs::metadata(log).map_or(0, |m| m.len());
        if self.since.is_none() || size != self.size {
            self.size = size;
            self.since = Some(now);
            self.told = false;
            return None;
        }
        let quiet = now.duration_since(self.since?);
        if self.told || quiet < idle / 2 {
            return None;
        }
        self.told = true;
        let human = crate::run::time::human_duration;
        Some(format!(
            "quiet: no output for {}; stopped as stalled at {} (`idle`)",
            human(quiet),
            crate::syntax::literal::print_duration(idle)
        ))
    }
}
