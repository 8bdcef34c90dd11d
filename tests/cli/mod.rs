//! The other commands: `graph`, `fmt`, `board`, and the command line as a whole.

mod board;
mod commands;
mod fmt;
mod graph;
