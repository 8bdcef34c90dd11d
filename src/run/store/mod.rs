//! The files of `.loopc/`: the run's state (`state.json`, whose document
//! types are [`crate::state`], shared with `loopc graph --state`), the event
//! log `events.jsonl` ([`events`]), `progress.md` ([`progress`]).
//!
//! Arrows: the store only reads and writes files; it runs no git and no
//! process, and knows neither the engine nor the display (the display
//! watches the [`events::Recorder`] through [`events::Watcher`]).

pub mod events;
pub mod progress;
