//! A command's `idle` limit ([`super::Spec::idle`]): how long since either
//! of its logs last grew.

use super::Spec;
use std::path::Path;
use std::time::{Duration, Instant};

/// Watches a command's logs for its `idle` limit: the time of the last
/// growth of either log.
pub(super) struct Quiet {
    logs: Vec<std::path::PathBuf>,
    pub(super) idle: Duration,
    size: u64,
    since: Instant,
    checked: Instant,
}

impl Quiet {
    pub(super) fn new(spec: &Spec<'_>, idle: Duration) -> Quiet {
        let mut logs = vec![spec.stdout.to_path_buf()];
        logs.extend(spec.stderr.map(Path::to_path_buf));
        let now = Instant::now();
        Quiet {
            logs,
            idle,
            size: 0,
            since: now,
            checked: now,
        }
    }

    /// Whether the command has been quiet for its whole `idle` (the logs
    /// are looked at every quarter second at most).
    pub(super) fn stalled(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.checked) < Duration::from_millis(250) {
            return false;
        }
        self.checked = now;
        let size: u64 = self
            .logs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        if size != self.size {
            self.size = size;
            self.since = now;
        }
        now.duration_since(self.since) >= self.idle
    }
}
