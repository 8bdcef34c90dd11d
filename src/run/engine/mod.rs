//! The engine: what `loopc run` decides and in which order. The
//! [`scheduler`] (the one thread that moves the integration branch) starts
//! [`attempt`]s on a thread pool, judges them by [`gate`]s, brings passed
//! work onto the integration branch ([`merge`]; a conflict goes to the
//! task's resolver, [`resolve`]), replays and records passes
//! in the [`cache`], and keeps the [`budget`]; [`dry_run`] answers
//! `run --dry-run` from the same keys; [`expand`] grows the plan by the
//! plan fragments tasks write.
//!
//! [`advance`] moves a REEL spec whose tasks all passed to its next stage.
//!
//! Also here, because only the engine uses them: [`context`] (what every
//! part of one run shares: plan, repository, `.loopc/` layout, kill switch,
//! event recorder; the attempt files and the `LOOP_*` environment) and
//! [`handoff`] (the agent protocol: the prompt an agent is given, the
//! handoff it writes back), [`report`] (what agents' JSON output reports)
//! and [`limits`] (usage and rate limits, which are waited for), [`guard`]
//! (the user's refs, compared around every attempt), [`programs`] (every
//! `run` string's program is looked up before any work) and [`watch`] (what
//! a running agent is doing now, for the display).
//!
//! Arrows: the engine uses [`super::sys`] (git, processes, worktrees) and
//! [`super::store`] (the files of `.loopc/`); neither of them uses the
//! engine. It reaches the display only through
//! [`super::store::events::Recorder`].

pub mod advance;
pub mod attempt;
pub mod budget;
pub mod cache;
mod cleanup;
pub mod context;
pub mod dry_run;
pub mod executor;
pub mod expand;
pub mod gate;
mod gitlinks;
pub mod guard;
pub mod handoff;
pub mod limits;
pub mod merge;
pub mod notify;
pub mod pool;
pub mod programs;
pub mod replay;
pub mod report;
pub mod resolve;
pub mod scheduler;
pub mod transition;
pub mod uncommitted;
pub mod watch;
pub mod worktree_files;
