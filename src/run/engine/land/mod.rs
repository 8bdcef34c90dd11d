//! Landing work on the integration branch: [`merge`] brings a passed
//! attempt onto it and gates the result (a conflict goes to the task's
//! resolver, [`resolve`]); [`chain`] merges several passed results that
//! have nothing to run on their merges in one pass; [`replay`] replays
//! cached passes; [`advance`] moves a REEL spec whose tasks all passed to
//! its next stage.

pub mod advance;
pub mod chain;
pub mod merge;
pub mod replay;
pub mod resolve;
pub mod scratch;
