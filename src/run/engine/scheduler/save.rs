//! Writing state.json during a run: spaced so that its cost stays a
//! small share of the coordinator's time whatever the plan's size
//! (docs/state.md `state.json`).

use super::Scheduler;
use crate::state::RunState;
use std::time::{Duration, Instant};

/// The least time between two writes of state.json during a run: with
/// hundreds of attempts a second ending, rewriting (and syncing) the whole
/// document on each was most of the coordinator's work.
pub(super) const SAVE_EVERY: Duration = Duration::from_millis(250);

/// The least time between two writes of state.json, as a multiple of how
/// long the last write took: the document grows with the plan (some 400
/// bytes a task), and at tens of thousands of tasks writing it every
/// [`SAVE_EVERY`] took the coordinator most of its time; this keeps it to
/// about a tenth whatever the plan's size.
pub(super) const SAVE_SPACING: u32 = 10;

impl Scheduler {
    /// Records a change of `state`: state.json is rewritten (with fsync) at
    /// most every [`SAVE_EVERY`] (longer for a large state: [`SAVE_SPACING`]),
    /// and at the first poll of the loop that finds that time passed after
    /// the last change;
    /// [`Scheduler::finish`] writes the final state.
    pub(super) fn save(&mut self, state: &mut RunState) {
        self.books.meter.tick();
        state.spent = self.books.meter.spent.clone();
        state.head_commit = self.head.clone();
        if self.save_due() {
            self.write_state(state);
        } else {
            self.unsaved = true;
        }
    }

    /// Whether the least time between two writes of state.json has passed
    /// since the last ([`Scheduler::save`]).
    pub(super) fn save_due(&self) -> bool {
        self.saved_at
            .is_none_or(|at| at.elapsed() >= self.save_every)
    }

    /// Writes state.json now.
    pub(super) fn write_state(&mut self, state: &mut RunState) {
        self.books.meter.tick();
        state.spent = self.books.meter.spent.clone();
        state.head_commit = self.head.clone();
        self.unsaved = false;
        let began = Instant::now();
        let saved = crate::run::store::state::save(&self.ctx.layout.state, state);
        self.saved_at = Some(Instant::now());
        self.save_every = SAVE_EVERY.max(began.elapsed() * SAVE_SPACING);
        if let Err(e) = saved {
            // Said once; the exit status says it too (see `finish`).
            if self.save_error.is_none() {
                self.note(&e);
            }
            self.save_error = Some(e);
        } else {
            self.save_error = None;
        }
    }
}
