//! The engine: what `loopc run` decides and in which order, in rooms whose
//! imports run one way, from the top down:
//!
//! - [`scheduler`]: the one thread that moves the integration branch; it
//!   carries out what its pure [`scheduler::transition`] decides, and keeps
//!   the clean-up thread ([`scheduler::cleanup`]);
//! - [`dry_run`]: `run --dry-run`, answered from the same keys;
//! - [`land`]: bringing passed work onto the integration branch: merges, a
//!   conflict's resolver, cached passes replayed, REEL specs advanced;
//! - [`attempt`]: one attempt of one task as a sequence of steps (worktree,
//!   setup, agent, handoff, commit, checks), its gates, the worktree pool
//!   and the live view of a running agent;
//! - [`expand`]: plan fragments, which grow the plan while it runs;
//! - below the rooms, what they share: [`outcome`] (an attempt's result and
//!   outcome, the stop signal), [`context`] (what one run shares: plan,
//!   repository, `.loopc/` layout, kill switch, event recorder; the attempt
//!   files), [`guard`] (the user's refs, compared around every attempt),
//!   [`worktree_files`] (`loop.copy` and `loop.link`), [`cache`],
//!   [`budget`] and [`remember`] (the key failures are remembered under,
//!   `--retry-failed`), [`undeclared`] (inputs another task writes with no
//!   dependency between them);
//! - [`agent`], at the bottom: the agent's side, which knows nothing of a
//!   run: the handoff protocol, the readers of each CLI's output, usage
//!   limits, executors and the programs every `run` string starts.
//!
//! [`notify`] and [`uncommitted`] are leaves the command's driver uses.
//!
//! Arrows: the engine uses [`super::sys`] (git, processes, worktrees) and
//! [`super::store`] (the files of `.loopc/`); neither of them uses the
//! engine. It reaches the display only through
//! [`super::store::events::Recorder`].

pub mod agent;
pub mod attempt;
pub mod budget;
pub mod cache;
pub mod context;
pub mod dry_run;
pub mod expand;
pub mod guard;
pub mod land;
pub mod notify;
pub mod outcome;
pub mod pool;
pub mod remember;
pub mod run_entry;
pub mod scheduler;
pub mod uncommitted;
pub mod undeclared;
pub mod worktree_files;
