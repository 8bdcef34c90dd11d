//! What the coordinator's scan for tasks to start or replay may skip, so
//! that a scan after each result costs the tasks it can act on, not the
//! plan: visiting every task after every result made a fresh run of
//! 100,000 tasks spend most of the coordinating thread's time scanning.
//!
//! Two facts carry it, both about the plan the scan was built for (a plan
//! that grows or moves to its next stage gets a new scan):
//!
//! - a task that is done (passed, cached, already satisfied) stays done,
//!   except for a producer that re-plans ([`Books::reopened`]): the done
//!   tasks at the front of the plan are skipped;
//! - a task that has been *looked at* (its cache tried or not to be tried,
//!   its remembered failures checked) can do nothing more without a free
//!   slot, and stays looked at: while every slot is taken, only the tasks
//!   not looked at yet are visited.

use crate::run::engine::context::RunCtx;
use crate::run::engine::scheduler::transition::Books;
use crate::state::RunState;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The skips of the scan for one plan (see the module's docs).
#[derive(Default)]
pub(super) struct Scan {
    /// The run context (and so the plan) the indices below are of.
    ctx: Option<Arc<RunCtx>>,
    /// Every task before this index is done.
    done_below: usize,
    /// The tasks not looked at yet ([`looked`]), in plan order.
    unlooked: BTreeSet<usize>,
}

/// Whether task `i` can do nothing more without a free slot: its
/// remembered failures were checked, and its cache was tried or will not be
/// (it has attempts or infrastructure failures in this run). Once true, it
/// stays true for the plan: none of these is ever undone.
fn looked(state: &RunState, books: &Books, i: usize) -> bool {
    let slot = &books.slots[i];
    slot.resume_checked && (slot.cache_tried || state.tasks[i].attempts != 0 || slot.infra != 0)
}

impl Scan {
    /// Brings the skips up to date with `ctx`'s plan and `state`: rebuilt
    /// for a plan they were not built for, the front moved back to a task
    /// that re-planned, then forward over the tasks done since.
    pub(super) fn sync(&mut self, ctx: &Arc<RunCtx>, state: &RunState, books: &mut Books) {
        let n = ctx.plan.tasks.len();
        if !self.ctx.as_ref().is_some_and(|c| Arc::ptr_eq(c, ctx)) {
            self.ctx = Some(Arc::clone(ctx));
            self.done_below = 0;
            self.unlooked = (0..n).filter(|&i| !looked(state, books, i)).collect();
        }
        if let Some(p) = books.reopened.take() {
            self.done_below = self.done_below.min(p);
        }
        while self.done_below < n && state.tasks[self.done_below].status.is_done() {
            self.done_below += 1;
        }
    }

    /// The first task at or after `from` the scan must visit: with a free
    /// slot, any that is not done at the front; with every slot taken, only
    /// one not looked at yet. `None`: no more.
    pub(super) fn next(&self, from: usize, slot_free: bool, n: usize) -> Option<usize> {
        let from = from.max(self.done_below);
        if slot_free {
            return (from < n).then_some(from);
        }
        self.unlooked.range(from..).next().copied()
    }

    /// Notes that the scan visited task `i`: once looked at, it is skipped
    /// while the slots are taken.
    pub(super) fn visited(&mut self, state: &RunState, books: &Books, i: usize) {
        if looked(state, books, i) {
            self.unlooked.remove(&i);
        }
    }

    /// The tasks not looked at yet: a superset of those whose cache may
    /// still be tried (what the replay passes look up).
    pub(super) fn unlooked(&self) -> &BTreeSet<usize> {
        &self.unlooked
    }
}
