//! Exit statuses (docs/language.md for `check`, docs/running.md for `run`):
//! the only place they are named.

/// Success: no errors (`check`), every task passed or cached (`run`).
pub const OK: i32 = 0;
/// `check`: the plan has errors. `run`: some task failed, was blocked or skipped.
pub const FAILURE: i32 = 1;
/// Usage or I/O error; for `run` also a plan with errors or an unusable repository.
pub const USAGE: i32 = 2;
/// `run`: stopped by a budget or the circuit breaker.
pub const BUDGET: i32 = 3;
/// `run`: interrupted by Ctrl-C or SIGTERM.
pub const INTERRUPTED: i32 = 130;
