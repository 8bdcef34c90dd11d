//! What a person watching a run sees: live bars or plain event lines on
//! stderr ([`display`]) and the summary table at the end of a run and in
//! `loopc status` ([`summary`]).
//!
//! Arrows: the display reads events and state ([`super::store`],
//! [`crate::state`]); nothing in the engine, `sys` or the store imports it.

pub mod display;
pub mod summary;
