//! The outside world, as loopc touches it: the repository through the real
//! `git` ([`git`]), a task's worktree verified before loopc commits in it
//! ([`checkout`]), `sh -c` subprocesses in process groups with logs,
//! timeouts and the run-wide kill switch ([`process`]), task worktrees and
//! branch names ([`worktree`]), the repository lock ([`lock`]), Ctrl-C,
//! SIGTERM and SIGHUP ([`interrupt`]), cleaning up what a killed run
//! left in the world ([`recover`]), writing git objects without a checkout
//! ([`objects`]), reading the checkout loopc runs in ([`main_checkout`]),
//! the checkouts as git's administrative files record them, read
//! without a process ([`admin`]), where `git` and `sh` are ([`program`]),
//! whether an index file has entries flagged to hide changes
//! ([`index`]), and the modes of what agents leave in worktrees
//! ([`modes`]: removing read-only directories, a reused worktree's modes
//! as a fresh one's), and whether git's paths fit the system's limit
//! ([`room`]), and several refs moved in one transaction ([`transaction`]).
//!
//! Arrows: `sys` knows where `.loopc/` keeps things ([`super::store`]) but
//! never the engine or the display. Inside, low-level code never calls
//! policy: [`recover`] uses [`process`], [`worktree`] and [`git`];
//! [`git`] uses [`process`] (the variables it must not pass on); [`process`]
//! uses nothing of loopc's.

pub mod checkout;
pub mod git;
pub mod index;
pub mod interrupt;
pub mod lock;
pub mod loose;
pub mod main_checkout;
pub mod modes;
pub mod objects;
pub mod oid;
pub mod process;
pub mod program;
pub mod recover;
pub mod refs;
pub mod room;
#[cfg(test)]
pub(crate) mod testing;
pub mod transaction;
pub mod worktree;
