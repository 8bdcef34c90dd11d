//! What a person watching a run reads: the plain line of each event
//! ([`display`]) and the summary table at the end of a run and in `loopc
//! status` ([`summary`]). Only the command line prints them.
//!
//! Arrows: the display reads events and state ([`super::store`],
//! [`crate::state`]); nothing in the engine, `sys` or the store imports it.

pub mod display;
pub mod summary;
