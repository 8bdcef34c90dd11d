//! The integration tests: one test binary (it links once), a folder per
//! area (`check/`, `cli/`, `lsp/`, `reel/`, `run/`) with a module per
//! subject, and one harness (`harness`) that sets up directories, git
//! repositories, scripted agents and plans and runs the real `loopc` binary.
//!
//! Run one area or subject with a module path filter: `cargo test --test
//! tests run::` or `run::cache::`. insta names snapshots after the module
//! path: they live beside each area, in
//! `tests/<area>/snapshots/tests__<area>__<module>__<name>.snap` (the `fmt`
//! ones beside their inputs, in `tests/fixtures/fmt/snapshots/`).

mod harness;

mod check;
mod cli;
mod lsp;
mod reel;
mod run;
