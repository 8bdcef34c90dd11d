//! The files of `.loopc/`: where each lives ([`layout`], with the ledger of
//! branches loopc created and the list of kept worktrees), the run's state
//! `state.json` ([`state`]; its document types are [`crate::state`], shared
//! with `loopc graph --state`), the event log `events.jsonl` ([`events`]),
//! `progress.md` ([`progress`]), people's answers to tasks' questions
//! ([`answers`]) and the attempts' log directories
//! ([`layout::Layout::attempt_logs`], [`layout::log_name`]).
//!
//! Arrows: the store only reads and writes files; it runs no git and no
//! process, and knows neither the engine nor the display (the display
//! watches the [`events::Recorder`] through [`events::Watcher`]).

pub mod answers;
pub mod events;
pub mod layout;
pub mod progress;
pub mod state;
