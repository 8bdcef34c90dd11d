//! The cache during a run (spec §5 steps 1 and 8, §6; `docs/cache.md`):
//! a task's run-time key at the current head, looking it up, replaying a
//! hit onto the integration branch without touching any checkout, and
//! recording a pass. The scheduler decides when; what a replay does to the
//! run's state is [`super::transition::replayed`].

use super::budget::Cost;
use super::cache::{self, Entry, RunKey};
use super::context::{AttemptFiles, RunCtx};
use super::gate::{Check, Verdict};
use super::merge::gate_in_scratch;
use crate::plan::Key;
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use crate::state::TaskState;

/// How a run uses the cache (spec §6).
#[derive(Debug, Default)]
pub struct CacheUse {
    /// The entries; `None` with `--no-cache` (neither read nor written).
    pub store: Option<cache::Store>,
    /// Per task: `--force` named it (not read, still written).
    pub forced: Vec<bool>,
}

/// The cache as one run uses it.
#[derive(Debug)]
pub struct RunCache {
    /// The cache and `--force`.
    cache: CacheUse,
    /// Per task: the run-time key its result is known under (set when it
    /// was replayed or recorded).
    keys: Vec<Option<Key>>,
    /// Base commits' file lists for `inputs`.
    lister: cache::FileLister,
}

impl RunCache {
    /// The cache for a plan of `tasks` tasks.
    pub fn new(tasks: usize, cache: CacheUse) -> RunCache {
        RunCache {
            cache,
            keys: vec![None; tasks],
            lister: cache::FileLister::default(),
        }
    }

    /// Task `i`'s run-time key with its work starting at `base`; `None`
    /// (with a note on the display) when it cannot be computed.
    fn key_at(&mut self, ctx: &RunCtx, i: usize, base: &str) -> Option<RunKey> {
        let task = &ctx.plan.tasks[i];
        let computed = self
            .lister
            .files_for(&ctx.git, task, base)
            .and_then(|files| {
                cache::run_key(
                    &ctx.plan,
                    i,
                    &self.keys,
                    files.as_deref().map(|v| v.as_slice()),
                )
            });
        match computed {
            Ok(k) => Some(k),
            Err(e) => {
                ctx.events
                    .ui()
                    .line(&format!("warning: {}: no cache key: {e}", task.name));
                None
            }
        }
    }

    /// Task `i`'s cache entry under its key at `head`, unless the cache is
    /// off or `--force` names the task.
    pub fn lookup(&mut self, ctx: &RunCtx, i: usize, head: &str) -> Option<(RunKey, Entry)> {
        if self.cache.store.is_none() || self.cache.forced.get(i).copied().unwrap_or(false) {
            return None;
        }
        let rk = self.key_at(ctx, i, head)?;
        let entry = self.cache.store.as_ref()?.get(&rk.key)?.clone();
        Some((rk, entry))
    }

    /// Replays the hit `entry` of task `i` (key `rk`, try `serial`) onto
    /// `head` ([`apply`]); with `defer_ref`, a hit recorded on `head` itself
    /// only moves the head the scheduler keeps (it moves the branch once,
    /// later). Returns how it went and what its checks cost.
    #[allow(clippy::too_many_arguments)]
    pub fn replay(
        &mut self,
        ctx: &RunCtx,
        i: usize,
        serial: u32,
        rk: &RunKey,
        entry: &Entry,
        head: &str,
        earlier: &[Check],
        defer_ref: bool,
    ) -> (Replay, Cost) {
        let mut cost = Cost::default();
        let replayed = if defer_ref && entry.parent.as_deref() == Some(head) {
            Replay::Done {
                commit: entry.commit.clone(),
                how: "fast_forward",
            }
        } else {
            apply(ctx, i, serial, entry, head, earlier, &mut cost)
        };
        if matches!(replayed, Replay::Done { .. }) {
            self.keys[i] = Some(rk.key);
        }
        (replayed, cost)
    }

    /// Records task `i`'s pass in the cache (step 8): its work started at
    /// `base` and was merged onto `before`, giving `head`. Sets the task's
    /// `cache_key`; failures are notes on the display.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        ctx: &RunCtx,
        ts: &mut TaskState,
        i: usize,
        base: &str,
        before: &str,
        head: &str,
        summary: Option<String>,
        files: Vec<String>,
    ) {
        if self.cache.store.is_none() {
            return;
        }
        let Some(rk) = self.key_at(ctx, i, base) else {
            return;
        };
        let gated_tree = match ctx.git.tree_of(head) {
            Ok(t) => t,
            Err(e) => {
                ctx.events.ui().line(&format!("warning: cache: {e}"));
                return;
            }
        };
        ts.cache_key = Some(rk.key.to_hex());
        let entry = Entry {
            format: cache::CACHE_FORMAT_VERSION.to_string(),
            key: rk.key.to_hex(),
            plan: ctx.plan.name.clone(),
            task: ts.name.clone(),
            recorded_at: crate::run::time::now_rfc3339(),
            recorded_unix_ms: cache::unix_ms(),
            summary,
            cost_micro_usd: ts.cost_micro_usd,
            cost_unknown: ts.cost_unknown,
            commit: head.to_string(),
            parent: (head != before).then(|| before.to_string()),
            gated_tree,
            files,
            components: rk.components,
        };
        self.keys[i] = Some(rk.key);
        if let Some(store) = self.cache.store.as_mut()
            && let Err(e) = store.record(&ctx.git, entry)
        {
            ctx.events.ui().line(&format!("warning: cache: {e}"));
        }
    }
}

/// How replaying a cache entry went (spec §5 step 1).
#[derive(Debug, Clone, PartialEq)]
pub enum Replay {
    /// The task's work is on the integration branch, now at `commit`.
    Done {
        /// The new head (unchanged when the work was already there).
        commit: String,
        /// `fast_forward` (the recorded commit itself), `replay` (a new
        /// commit whose tree the task's gates passed on), `gated` (a new
        /// commit whose checks ran again) or `none` (nothing to apply).
        how: &'static str,
    },
    /// The entry cannot be used; the task runs.
    Miss(String),
    /// The run is stopping.
    Stopped,
}

/// Replays `entry` (task index `task`) onto the integration branch at
/// `head`, without touching any checkout. A replay whose tree the task's
/// gates passed on (or that changes nothing) advances without checks; any
/// other runs the task's checks and `earlier` on the result first, in a
/// scratch worktree; checks log to `.loopc/logs/<task>/replay/`.
/// `cost` receives agent gates' costs.
pub fn apply(
    ctx: &RunCtx,
    task: usize,
    serial: u32,
    entry: &Entry,
    head: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Replay {
    let task = &ctx.plan.tasks[task];
    let moved = || {
        Replay::Miss(format!(
            "{} moved while loopc was running; it must only be changed by loopc during a run",
            ctx.integration_ref
        ))
    };
    let Some(parent) = entry.parent.as_deref() else {
        return Replay::Done {
            commit: head.to_string(),
            how: "none",
        };
    };
    if parent == head {
        return match ctx
            .git
            .update_ref(&ctx.integration_ref, &entry.commit, Some(head))
        {
            Ok(true) => Replay::Done {
                commit: entry.commit.clone(),
                how: "fast_forward",
            },
            Ok(false) => moved(),
            Err(e) => Replay::Miss(e),
        };
    }
    let tree = match ctx.git.merge_tree_onto(parent, head, &entry.commit) {
        Ok(MergeTree::Clean(tree)) => tree,
        Ok(MergeTree::Conflict(paths)) => {
            return Replay::Miss(format!("replay conflicts in {}", paths.join(", ")));
        }
        Err(e) => return Replay::Miss(e),
    };
    match ctx.git.tree_of(head) {
        Ok(t) if t == tree => {
            return Replay::Done {
                commit: head.to_string(),
                how: "none",
            };
        }
        Ok(_) => {}
        Err(e) => return Replay::Miss(e),
    }
    let title = crate::run::store::progress::one_line(task.title.as_deref().unwrap_or(&task.name));
    let message = format!(
        "loop({}): {title}\n\nReplayed from the loopc cache.",
        task.name
    );
    let replayed = match ctx.git.commit_tree(&tree, &[head], &message) {
        Ok(c) => c,
        Err(e) => return Replay::Miss(e),
    };
    let how = if tree == entry.gated_tree {
        "replay"
    } else {
        let files = match AttemptFiles::create(&ctx.layout, &task.name, "replay", None) {
            Ok(f) => f,
            Err(e) => return Replay::Miss(e),
        };
        if let Err(e) = ctx.git.diff_to_file(head, &replayed, &files.diff) {
            return Replay::Miss(e);
        }
        ctx.events.emit(Event::Phase {
            task: task.name.clone(),
            attempt: 0,
            phase: "replay".into(),
            gate: None,
        });
        match gate_in_scratch(ctx, task, 0, serial, &files, &replayed, head, earlier, cost) {
            Verdict::Pass => "gated",
            Verdict::Stopped => return Replay::Stopped,
            Verdict::Reject { reason, .. } => {
                return Replay::Miss(format!("the replayed work failed its checks: {reason}"));
            }
            Verdict::Limited(l) => {
                return Replay::Miss(format!(
                    "the replayed work could not be checked: agent `{}` hit a limit: {}",
                    l.agent, l.message
                ));
            }
            Verdict::Blocked(why) | Verdict::Error(why) => {
                return Replay::Miss(format!("the replayed work could not be checked: {why}"));
            }
        }
    };
    match ctx
        .git
        .update_ref(&ctx.integration_ref, &replayed, Some(head))
    {
        Ok(true) => Replay::Done {
            commit: replayed,
            how,
        },
        Ok(false) => moved(),
        Err(e) => Replay::Miss(e),
    }
}
