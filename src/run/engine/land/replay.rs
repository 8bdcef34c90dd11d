//! The cache during a run (docs/running.md steps 1 and 8, docs/cache.md; `docs/cache.md`):
//! a task's run-time key at the current head, looking it up, replaying a
//! hit onto the integration branch without touching any checkout, and
//! recording a pass. The scheduler decides when; what a replay does to the
//! run's state is [`crate::run::engine::scheduler::transition::replayed`].

use crate::plan::Key;
use crate::run::engine::attempt::gate::{Check, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::cache::{self, Entry, RunKey};
use crate::run::engine::context::{AttemptFiles, RunCtx};
use crate::run::engine::land::scratch::gate_in_scratch;
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use crate::state::TaskState;

/// How a run uses the cache (docs/cache.md).
#[derive(Debug, Default)]
pub struct CacheUse {
    /// The entries; `None` with `--no-cache` (neither read nor written).
    pub store: Option<cache::Store>,
    /// Per task: `--force` named it (not read, still written).
    pub forced: Vec<bool>,
    /// The files `loop.copy` brings into every worktree and their content
    /// digests, and the tasks' answers (part of the keys).
    pub around: cache::Surroundings,
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
    /// A commit and its tree, known without asking git (the merge just
    /// made it): `(commit, tree)`.
    known_tree: Option<(String, String)>,
}

impl RunCache {
    /// Writes what the cache's index does not have yet ([`cache::Store::flush`]).
    ///
    /// Errors: the index cannot be written.
    pub fn flush(&mut self) -> Result<(), String> {
        self.cache
            .store
            .as_mut()
            .map_or(Ok(()), cache::Store::flush)
    }

    /// The cache for a plan of `tasks` tasks.
    pub fn new(tasks: usize, cache: CacheUse) -> RunCache {
        RunCache {
            cache,
            keys: vec![None; tasks],
            lister: cache::FileLister::default(),
            known_tree: None,
        }
    }

    /// Notes that `commit`'s tree is `tree` (a merge made both), for the
    /// entry [`RunCache::record`] writes next.
    pub fn know_tree(&mut self, commit: &str, tree: String) {
        self.known_tree = Some((commit.to_string(), tree));
    }

    /// The plan grew: `from` gives, for each task of the new plan, its
    /// index in the old one ([`crate::run::engine::expand::old_indices`]).
    pub fn reorder(&mut self, from: &[Option<usize>]) {
        self.keys = crate::run::engine::expand::reorder(std::mem::take(&mut self.keys), from);
        self.cache.forced =
            crate::run::engine::expand::reorder(std::mem::take(&mut self.cache.forced), from);
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
                    &self.cache.around,
                )
            });
        match computed {
            Ok(k) => Some(k),
            Err(e) => {
                ctx.events
                    .ui()
                    .warn(&format!("{}: no cache key: {e}", task.name));
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

    /// Replays the hit `entry` of task `i` (key `rk`) onto
    /// `head` ([`apply`]); with `defer_ref`, a hit recorded on `head` itself
    /// only moves the head the scheduler keeps (it moves the branch once,
    /// later). Returns how it went and what its checks cost.
    #[allow(clippy::too_many_arguments)]
    pub fn replay(
        &mut self,
        ctx: &RunCtx,
        i: usize,
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
            apply(ctx, i, entry, head, earlier, &mut cost)
        };
        if let Replay::Done { commit, how } = &replayed {
            self.keys[i] = Some(rk.key);
            // A replay onto a new head made a new commit (after its checks
            // ran again, for `gated`): recorded under the same key, so that
            // the next run from this head fast-forwards to it, checks and
            // all paid once.
            if matches!(*how, "replay" | "gated") {
                self.re_record(ctx, entry, head, commit);
            }
        }
        (replayed, cost)
    }

    /// Records `entry` again as replayed onto `head`, giving `commit`.
    /// Failures are notes on the display (the next run replays again).
    fn re_record(&mut self, ctx: &RunCtx, entry: &Entry, head: &str, commit: &str) {
        let Some(store) = self.cache.store.as_mut() else {
            return;
        };
        let recorded = ctx.git.tree_of(commit).and_then(|gated_tree| {
            store.record(
                &ctx.git,
                Entry {
                    recorded_at: crate::run::time::now_rfc3339(),
                    recorded_unix_ms: cache::unix_ms(),
                    commit: commit.to_string(),
                    parent: Some(head.to_string()),
                    gated_tree,
                    ..entry.clone()
                },
            )
        });
        if let Err(e) = recorded {
            ctx.events.ui().line(&format!("loopc: cache: {e}"));
        }
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
        let known = self
            .known_tree
            .take()
            .filter(|(commit, _)| commit == head)
            .map(|(_, tree)| tree);
        let gated_tree = match known.map_or_else(|| ctx.git.tree_of(head), Ok) {
            Ok(t) => t,
            Err(e) => {
                ctx.events.ui().warn(&format!("cache: {e}"));
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
            fragment_commit: ts.fragment_commit.clone(),
        };
        self.keys[i] = Some(rk.key);
        if let Some(store) = self.cache.store.as_mut()
            && let Err(e) = store.record(&ctx.git, entry)
        {
            ctx.events.ui().warn(&format!("cache: {e}"));
        }
    }
}

/// How replaying a cache entry went (docs/running.md step 1).
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

/// What replaying a cache entry onto a head would do, found without
/// changing any ref or checkout ([`plan`]); `--dry-run` reports it, the run
/// carries it out ([`apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// The task changed nothing, or its work is in the head already.
    Nothing,
    /// The entry was recorded on this head: the branch moves to its commit.
    FastForward(String),
    /// A new commit (reproducible: the recorded commit's identity and
    /// dates) with the task's work on top of the head.
    Commit {
        /// The replayed commit.
        commit: String,
        /// Whether its tree is not the one the task's gates passed on, so
        /// that its checks run again before it lands.
        gated: bool,
    },
    /// The task's recorded work conflicts with the head in these paths.
    Conflict(Vec<String>),
}

/// The commit message of a replay of `task`'s work.
fn replay_message(task: &crate::plan::Task) -> String {
    let title = crate::run::store::progress::one_line(task.title.as_deref().unwrap_or(&task.name));
    format!(
        "loop({}): {title}\n\nReplayed from the loopc cache.",
        task.name
    )
}

/// What replaying `entry` of `task` onto `head` would do. Writes at most
/// git objects (a merged tree and the replayed commit), never a ref.
///
/// Errors: git fails.
pub fn plan(
    git: &crate::run::sys::git::Git,
    task: &crate::plan::Task,
    entry: &Entry,
    head: &str,
) -> Result<Planned, String> {
    let Some(parent) = entry.parent.as_deref() else {
        return Ok(Planned::Nothing);
    };
    if parent == head {
        return Ok(Planned::FastForward(entry.commit.clone()));
    }
    let tree = match git.merge_tree_onto(parent, head, &entry.commit)? {
        MergeTree::Clean(tree) => tree,
        MergeTree::Conflict(paths) => return Ok(Planned::Conflict(paths)),
    };
    if git.tree_of(head)? == tree {
        return Ok(Planned::Nothing);
    }
    let commit = git.commit_tree_like(&tree, &[head], &replay_message(task), &entry.commit)?;
    Ok(Planned::Commit {
        commit,
        gated: tree != entry.gated_tree,
    })
}

/// Replays `entry` (task index `task`) onto the integration branch at
/// `head`, without touching any checkout ([`plan`]). A replay whose tree
/// the task's gates passed on (or that changes nothing, or with no check
/// to run) advances without checks; any other runs the task's checks and
/// `earlier` on the result first, in a scratch worktree; checks log to
/// `.loopc/logs/<task>/replay/`. `cost` receives agent gates' costs.
pub fn apply(
    ctx: &RunCtx,
    task: usize,
    entry: &Entry,
    head: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Replay {
    let task = &ctx.plan.tasks[task];
    let (replayed, gated) = match plan(&ctx.git, task, entry, head) {
        Ok(Planned::Nothing) => {
            return Replay::Done {
                commit: head.to_string(),
                how: "none",
            };
        }
        Ok(Planned::FastForward(commit)) => (commit, None),
        Ok(Planned::Commit { commit, gated }) => (commit, Some(gated)),
        Ok(Planned::Conflict(paths)) => {
            return Replay::Miss(format!("replay conflicts in {}", paths.join(", ")));
        }
        Err(e) => return Replay::Miss(e),
    };
    let how = match gated {
        None => "fast_forward",
        Some(false) => "replay",
        // Nothing to check: no scratch worktree, no logs.
        Some(true)
            if earlier.is_empty()
                && crate::run::engine::attempt::gate::checks_of(task).is_empty() =>
        {
            "replay"
        }
        Some(true) => match gate_replay(ctx, task, head, &replayed, earlier, cost) {
            Ok(()) => "gated",
            Err(not) => return not,
        },
    };
    match ctx
        .git
        .update_ref(&ctx.integration_ref, &replayed, Some(head))
    {
        Ok(true) => Replay::Done {
            commit: replayed,
            how,
        },
        Ok(false) => Replay::Miss(format!(
            "{} moved while loopc was running; it must only be changed by loopc during a run",
            ctx.integration_ref
        )),
        Err(e) => Replay::Miss(e),
    }
}

/// Runs `task`'s checks and `earlier` on `replayed` (its work replayed onto
/// `head`) in a scratch worktree. Errors: how the replay ends instead.
fn gate_replay(
    ctx: &RunCtx,
    task: &crate::plan::Task,
    head: &str,
    replayed: &str,
    earlier: &[Check],
    cost: &mut Cost,
) -> Result<(), Replay> {
    let files =
        AttemptFiles::create(&ctx.layout, &task.name, "replay", None).map_err(Replay::Miss)?;
    ctx.git
        .diff_to_file(head, replayed, &files.diff)
        .map_err(Replay::Miss)?;
    ctx.events.emit(Event::Phase {
        task: task.name.clone(),
        attempt: 0,
        phase: "replay".into(),
        gate: None,
    });
    // Attempt 0 of this run: `+merge-<task>.r<run>-replay`.
    let id = crate::run::store::layout::TryId {
        run: ctx.run,
        attempt: 0,
        retry: 1,
    };
    match gate_in_scratch(ctx, task, 0, id, &files, replayed, head, earlier, cost) {
        Verdict::Pass => Ok(()),
        Verdict::Stopped => Err(Replay::Stopped),
        Verdict::Reject { reason, .. } => Err(Replay::Miss(format!(
            "the replayed work failed its checks: {reason}"
        ))),
        Verdict::Limited(l) => Err(Replay::Miss(format!(
            "the replayed work could not be checked: agent `{}` hit a limit: {}",
            l.agent, l.message
        ))),
        Verdict::Blocked(why) | Verdict::Error(why) => Err(Replay::Miss(format!(
            "the replayed work could not be checked: {why}"
        ))),
    }
}
