//! The seam for the content-hash cache (spec §5 step 1, §6; its own issue).
//! The scheduler asks [`lookup`] before the first attempt of a task and
//! calls [`record`] after a task's work reached the integration branch.
//! Until the cache exists, every lookup misses and nothing is recorded.

use super::context::RunCtx;

/// A recorded pass that can be replayed onto the integration branch.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The commit whose changes are replayed.
    pub commit: String,
    /// The summary recorded with it.
    pub summary: Option<String>,
}

/// Looks up task `task`'s recorded pass (never, for now).
pub fn lookup(_ctx: &RunCtx, _task: usize) -> Option<Hit> {
    None
}

/// Records that task `task` passed with its change at `commit` (nothing yet).
pub fn record(_ctx: &RunCtx, _task: usize, _commit: &str) {}
