//! The cache during a run (docs/running.md steps 1 and 8, docs/cache.md):
//! a task's run-time key at the current head, looking it up, replaying a
//! hit onto the integration branch without touching any checkout, and
//! recording a pass. The scheduler, above, decides when and what a replay
//! does to the run's state (its transition `replayed`).

use crate::plan::Key;
use crate::run::engine::attempt::gate::{self, Check, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::cache::{self, Entry, Produced, RunKey};
use crate::run::engine::context::{AttemptFiles, RunCtx};
use crate::run::engine::land::scratch::{add_checks, run_in_scratch};
use crate::run::engine::run_entry::{self, RunEntry, TaskResult};
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use std::sync::Arc;

mod record;
pub use record::{EntryAt, Prepared};

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
    /// `--skip-gate`: gates taken off the tasks of plan fragments too.
    pub skip_gates: Vec<String>,
    /// The whole run's key ([`run_entry::run_key`]): `None` when the run
    /// is not one a run entry may record (no cache, `--force`, a plan that
    /// grows or a spec tree).
    pub whole: Option<crate::plan::Key>,
    /// The run entry found under that key ([`run_entry::lookup`]): the run
    /// takes its result instead of replaying task by task.
    pub whole_hit: Option<RunEntry>,
    /// `--retry-failed`: tasks that ran out of attempts under an unchanged
    /// key that run again (docs/resilience.md).
    pub retry_failed: crate::run::engine::remember::RetryFailed,
}

/// The cache as one run uses it.
#[derive(Debug)]
pub struct RunCache {
    /// The cache and `--force`.
    cache: CacheUse,
    /// Per task: the run-time key its result is known under (set when it
    /// was replayed or recorded).
    keys: Vec<Option<Key>>,
    /// Per task: what its merged work produced, once it landed (replayed
    /// or merged); its dependents' keys are made of it (early cutoff).
    results: Vec<Option<Arc<Produced>>>,
    /// Per task: whether an attempt of it landed in this run.
    ran: Vec<bool>,
    /// The feedback of the gate that rejected the last replay, for the
    /// task's next attempt (taken by the scheduler).
    pub rejected: Option<String>,
    /// Base commits' file lists for `inputs`.
    lister: cache::FileLister,
    /// A commit and its tree, known without asking git (the merge just
    /// made it): `(commit, tree)`.
    known_tree: Option<(String, String)>,
    /// Per task: how its replay went, when it was a fast-forward or
    /// changed nothing (what a run entry records).
    replays: Vec<Option<TaskResult>>,
    /// The plan's `inputs`, to say when a task writes what an independent
    /// task reads (`None`: not built for this plan yet).
    undeclared: Option<Option<crate::run::engine::undeclared::Undeclared>>,
}

impl RunCache {
    /// Task `task`'s answers changed during the run (its answerer answered,
    /// docs/language.md "Answers without a person"): its key from now on
    /// holds them, as the next run's will. `digest` is
    /// [`crate::run::store::answers::digest`]'s.
    pub fn answers_changed(&mut self, task: &str, digest: Option<String>) {
        match digest {
            Some(d) => self.cache.around.answers.insert(task.to_string(), d),
            None => self.cache.around.answers.remove(task),
        };
    }

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
            results: vec![None; tasks],
            ran: vec![false; tasks],
            rejected: None,
            lister: cache::FileLister::default(),
            known_tree: None,
            replays: vec![None; tasks],
            undeclared: None,
        }
    }

    /// Notes what task `i`'s landed work produced (its dependents' keys
    /// are made of it), and warns when it changed a file an independent
    /// task's `inputs` match ([`crate::run::engine::undeclared`]).
    fn set_result(&mut self, ctx: &RunCtx, i: usize, produced: Arc<Produced>) {
        let undeclared = self
            .undeclared
            .get_or_insert_with(|| crate::run::engine::undeclared::Undeclared::new(&ctx.plan));
        if let Some(u) = undeclared {
            for line in u.check(&ctx.plan, i, &produced) {
                ctx.events.ui().warn(&line);
            }
        }
        self.results[i] = Some(produced);
    }

    /// The run entry found for this run, once ([`CacheUse::whole_hit`]).
    pub fn take_whole_hit(&mut self) -> Option<RunEntry> {
        let hit = self.cache.whole_hit.take();
        if hit.is_some() {
            // Recorded already: nothing to record at the end.
            self.cache.whole = None;
        }
        hit
    }

    /// Notes that task `i` is done as `result` says (a run entry's).
    pub fn know_replay(&mut self, i: usize, result: TaskResult) {
        if let Some(slot) = self.replays.get_mut(i) {
            *slot = Some(result);
        }
    }

    /// The run entry of a run that replayed every task as a fast-forward
    /// (or changed nothing) and ended at `head`, recorded for the next run
    /// with the same key ([`run_entry::record`]); nothing when the run is
    /// not one ([`CacheUse::whole`]) or some task ran.
    ///
    /// Errors: git fails or the index cannot be written.
    pub fn record_whole(&mut self, ctx: &RunCtx, head: &str) -> Result<(), String> {
        let Some(key) = self.cache.whole else {
            return Ok(());
        };
        let Some(tasks) = self.replays.iter().cloned().collect::<Option<Vec<_>>>() else {
            return Ok(());
        };
        if tasks.len() != ctx.plan.tasks.len() || self.cache.store.is_none() {
            return Ok(());
        }
        self.flush()?;
        let entry = RunEntry {
            format: run_entry::RUN_FORMAT_VERSION.to_string(),
            key: key.to_hex(),
            entries: run_entry::entries_digest(&ctx.git)?,
            head: head.to_string(),
            tasks,
        };
        run_entry::record(&ctx.git, &ctx.plan, &entry)
    }

    /// The gates `--skip-gate` names (taken off the tasks of fragments as
    /// they are spliced in).
    pub fn skip_gates(&self) -> &[String] {
        &self.cache.skip_gates
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
        self.results = crate::run::engine::expand::reorder(std::mem::take(&mut self.results), from);
        self.undeclared = None;
        self.ran = crate::run::engine::expand::reorder(std::mem::take(&mut self.ran), from);
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
                    &self.results,
                    files.as_deref().map(|v| v.as_slice()),
                    &self.cache.around,
                )
                .map_err(|e| e.to_string())
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

    /// Task `i`'s run-time key (hex) with its work starting at `head`,
    /// cache or not (its remembered failures are kept under it); `None`
    /// when it cannot be computed.
    pub fn key(&mut self, ctx: &RunCtx, i: usize, head: &str) -> Option<String> {
        self.key_at(ctx, i, head).map(|rk| rk.key.to_hex())
    }

    /// Whether task `i` (called `name`) runs again though it ran out of
    /// attempts under its key: `--retry-failed` names it (or all), or
    /// `--force` does.
    pub fn retries(&self, i: usize, name: &str) -> bool {
        self.cache.retry_failed.covers(name) || self.cache.forced.get(i).copied().unwrap_or(false)
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

    /// The dependencies of task `i` whose attempts landed in this run
    /// (their results, not their keys, are in its key: a replay of it
    /// after one of them ran means that one produced what it had before).
    pub fn ran_dependencies(&self, ctx: &RunCtx, i: usize) -> Vec<String> {
        ctx.plan.tasks[i]
            .dependencies
            .iter()
            .filter(|&&d| self.ran.get(d).copied().unwrap_or(false))
            .map(|&d| ctx.plan.tasks[d].name.clone())
            .collect()
    }

    /// Replays the hit `entry` of task `i` (key `rk`) onto
    /// `head` ([`apply`]), running first the task's gates that have not
    /// passed the entry's result ([`Entry::unchecked`]); with `defer_ref`,
    /// a hit recorded on `head` itself with no such gate only moves the
    /// head the scheduler keeps (it moves the branch once, later). Returns
    /// how it went and what its checks cost; a gate's rejection leaves its
    /// feedback in [`RunCache::rejected`].
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
        let task = &ctx.plan.tasks[i];
        let unchecked: Vec<Check> = entry
            .unchecked(task)
            .into_iter()
            .map(gate::gate_check)
            .collect();
        // A gate's recorded rejection of this result stands: not paid again.
        if let Some((g, r)) = entry.recorded_rejection(task) {
            self.rejected = Some(r.feedback.clone());
            return (Replay::Miss(recorded_rejection_words(&g.name)), cost);
        }
        let replayed = if defer_ref && unchecked.is_empty() && entry.parent.as_deref() == Some(head)
        {
            Replay::Done {
                commit: entry.commit.clone(),
                how: "fast_forward",
            }
        } else {
            let on = Replaying {
                entry,
                head,
                earlier,
                unchecked: &unchecked,
            };
            let (r, rejection) = apply(ctx, i, &on, &mut cost);
            if let Some(rejection) = rejection {
                self.rejected = Some(rejection.feedback.clone());
                self.record_rejection(ctx, i, entry, rejection);
            }
            r
        };
        if let Replay::Done { commit, how } = &replayed {
            self.keys[i] = Some(rk.key);
            if matches!(*how, "fast_forward" | "none") {
                self.know_replay(
                    i,
                    TaskResult {
                        task: task.name.clone(),
                        key: rk.key.to_hex(),
                        commit: commit.clone(),
                        how: how.to_string(),
                        summary: entry.summary.clone(),
                        files: entry.files.clone(),
                    },
                );
            }
            let produced = match *how {
                "fast_forward" | "none" => Ok(entry.produced.clone()),
                _ => cache::produced(&ctx.git, head, commit),
            };
            match produced {
                Ok(p) => self.set_result(ctx, i, Arc::new(p)),
                Err(e) => ctx.events.ui().warn(&format!("cache: {e}")),
            }
            // A replay onto a new head made a new commit (after its checks
            // ran again, for `gated`), or gates judged it for the first
            // time: recorded under the same key, so that the next run from
            // this head fast-forwards to it, checks and all paid once.
            if matches!(*how, "replay" | "gated") {
                self.re_record(ctx, i, entry, head, commit);
            }
        }
        (replayed, cost)
    }

    /// Records in `entry` of task `i` that one of its agent gates that had
    /// not judged it rejected it (`rejection`, its `gate` the rejecting
    /// check's label), so that the next run takes that verdict instead of
    /// paying the gate again. A rejection by anything else (`accept`, a
    /// command gate, a check of a task merged earlier) is not recorded: it
    /// runs again. Failures are notes on the display.
    fn record_rejection(
        &mut self,
        ctx: &RunCtx,
        i: usize,
        entry: &Entry,
        rejection: cache::Rejection,
    ) {
        let Some(store) = self.cache.store.as_mut() else {
            return;
        };
        let Some(g) = entry.unchecked(&ctx.plan.tasks[i]).into_iter().find(|g| {
            g.name == rejection.gate && matches!(g.kind, crate::plan::GateKind::Agent { .. })
        }) else {
            return;
        };
        let mut rejected = entry.rejected.clone();
        rejected.insert(g.key.to_hex(), rejection);
        let recorded = store.record(
            &ctx.git,
            Entry {
                rejected,
                ..entry.clone()
            },
        );
        if let Err(e) = recorded {
            ctx.events.ui().line(&format!("loopc: cache: {e}"));
        }
    }

    /// Records `entry` of task `i` again as replayed onto `head`, giving
    /// `commit`, with the gates that passed it now. Failures are notes on
    /// the display (the next run replays again).
    fn re_record(&mut self, ctx: &RunCtx, i: usize, entry: &Entry, head: &str, commit: &str) {
        let Some(store) = self.cache.store.as_mut() else {
            return;
        };
        let task = &ctx.plan.tasks[i];
        let produced = self.results[i]
            .as_deref()
            .cloned()
            .unwrap_or_else(|| entry.produced.clone());
        // Gates that judged work already in the head: the entry itself
        // stands, with their verdicts.
        let same = commit == head;
        let tree = if same {
            Ok(entry.gated_tree.clone())
        } else {
            ctx.git.tree_of(commit)
        };
        let recorded = tree.and_then(|gated_tree| {
            // On the same tree every verdict stands, and the gates that ran
            // now join them; on another, the task's gates passed it (its
            // command gates ran on it, its agent gates' verdicts carried
            // over) and no other verdict is known.
            let gates = if gated_tree == entry.gated_tree {
                let mut g = entry.gates.clone();
                g.extend(cache::gates_of(task));
                g
            } else {
                cache::gates_of(task)
            };
            let (commit, parent) = if same {
                (entry.commit.clone(), entry.parent.clone())
            } else {
                (commit.to_string(), Some(head.to_string()))
            };
            store.record(
                &ctx.git,
                Entry {
                    recorded_at: crate::run::time::now_rfc3339(),
                    recorded_unix_ms: cache::unix_ms(),
                    commit,
                    parent,
                    gated_tree,
                    produced,
                    gates,
                    ..entry.clone()
                },
            )
        });
        if let Err(e) = recorded {
            ctx.events.ui().line(&format!("loopc: cache: {e}"));
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

/// Whether a replay with nothing to apply runs its task's checks again:
/// `Some(true)` when `entry` changed nothing (a check-only task, or one
/// found already satisfied by `verify`) and was recorded at another commit
/// than `head`: its checks are its whole result, and they passed on that
/// commit, not on this one. `None`: no check (the head is where it passed,
/// or its change is already in the head).
pub fn nothing_rechecked(entry: &Entry, head: &str) -> Option<bool> {
    (entry.parent.is_none() && entry.commit != head).then_some(true)
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
        // The base already holds the recorded commit itself (you merged the
        // integration branch into it): its work is there, nothing to apply.
        MergeTree::Conflict(_) if git.is_ancestor(&entry.commit, head)? => {
            return Ok(Planned::Nothing);
        }
        MergeTree::Conflict(paths) => return Ok(Planned::Conflict(paths)),
    };
    if git.tree_of(head)? == tree {
        return Ok(Planned::Nothing);
    }
    let commit = git.commit_tree_like(
        &tree,
        &[head],
        &crate::run::engine::attempt::message::replayed(task, entry.summary.as_deref()),
        &entry.commit,
    )?;
    Ok(Planned::Commit {
        commit,
        gated: tree != entry.gated_tree,
    })
}

/// A replay to carry out ([`apply`]).
pub struct Replaying<'a> {
    /// The hit.
    pub entry: &'a Entry,
    /// The integration branch head it is replayed onto.
    pub head: &'a str,
    /// Command checks of tasks merged before in this run.
    pub earlier: &'a [Check],
    /// The task's gates that have not passed the entry's result: they run
    /// on the replayed commit first, whatever else runs.
    pub unchecked: &'a [Check],
}

/// The checks a replay runs on its commit, once [`plan`] said whether its
/// tree is one the task's checks passed on (`gated`: `Some(false)`; `None`
/// for a fast-forward or work already there): on a new tree, the task's
/// checks that run again on a merge ([`gate::rechecks_of`]: not its agent
/// gates, whose verdicts carry over, unless `recheck = merge`) and
/// `earlier`; in any case the `unchecked` gates.
pub fn replay_checks(
    task: &crate::plan::Task,
    gated: Option<bool>,
    earlier: &[Check],
    unchecked: &[Check],
) -> Vec<Check> {
    let mut checks = if gated == Some(true) {
        gate::rechecks_of(task)
    } else {
        Vec::new()
    };
    add_checks(&mut checks, unchecked);
    if gated == Some(true) {
        add_checks(&mut checks, earlier);
    }
    checks
}

/// Replays `on.entry` (task index `task`) onto the integration branch at
/// `on.head`, without touching any checkout ([`plan`]). Runs the checks
/// [`replay_checks`] names in a scratch worktree first (logs in
/// `.loopc/logs/<task>/replay/`); none: the branch moves with no check.
/// `cost` receives agent gates' costs. Also returns the rejection of a
/// check that rejected the replay (its `gate`: the check's label).
pub fn apply(
    ctx: &RunCtx,
    task: usize,
    on: &Replaying<'_>,
    cost: &mut Cost,
) -> (Replay, Option<cache::Rejection>) {
    let task = &ctx.plan.tasks[task];
    let head = on.head;
    let (replayed, gated) = match plan(&ctx.git, task, on.entry, head) {
        Ok(Planned::Nothing) => (head.to_string(), nothing_rechecked(on.entry, head)),
        Ok(Planned::FastForward(commit)) => (commit, None),
        Ok(Planned::Commit { commit, gated }) => (commit, Some(gated)),
        Ok(Planned::Conflict(paths)) => {
            let why = format!("replay conflicts in {}", paths.join(", "));
            return (Replay::Miss(why), None);
        }
        Err(e) => return (Replay::Miss(e), None),
    };
    let checks = replay_checks(task, gated, on.earlier, on.unchecked);
    let how = match (gated, checks.is_empty()) {
        (_, true) if replayed == head => "none",
        (None, true) => "fast_forward",
        (Some(_), true) => "replay",
        (_, false) => match gate_replay(ctx, task, head, &replayed, &checks, cost) {
            Ok(()) => "gated",
            Err(not) => return not,
        },
    };
    if replayed == head {
        return (
            Replay::Done {
                commit: replayed,
                how,
            },
            None,
        );
    }
    let moved = match ctx
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
    };
    (moved, None)
}

/// Runs `checks` on `replayed` (`task`'s work replayed onto `head`) in a
/// scratch worktree. Errors: how the replay ends instead, with the
/// rejection of a check that rejected it.
fn gate_replay(
    ctx: &RunCtx,
    task: &crate::plan::Task,
    head: &str,
    replayed: &str,
    checks: &[Check],
    cost: &mut Cost,
) -> Result<(), (Replay, Option<cache::Rejection>)> {
    let miss = |e: String| (Replay::Miss(e), None);
    let files = AttemptFiles::create(&ctx.layout, &task.name, "replay", None).map_err(miss)?;
    ctx.git
        .diff_to_file(head, replayed, &files.diff)
        .map_err(miss)?;
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
    let verdict = run_in_scratch(
        ctx, task, 0, id, &files, replayed, head, checks, "merge", cost,
    );
    match verdict {
        Verdict::Pass => Ok(()),
        Verdict::Stopped => Err((Replay::Stopped, None)),
        Verdict::Reject {
            reason,
            feedback,
            by,
            ..
        } => Err((
            Replay::Miss(format!("the replayed work failed its checks: {reason}")),
            Some(cache::Rejection {
                gate: by,
                reason,
                feedback,
            }),
        )),
        Verdict::Limited(l) => Err(miss(format!(
            "the replayed work could not be checked: agent `{}` hit a limit: {}",
            l.agent, l.message
        ))),
        Verdict::Blocked(why) | Verdict::Error(why) => Err(miss(format!(
            "the replayed work could not be checked: {why}"
        ))),
    }
}

/// What a run (and `--dry-run`) says of a cached result whose rejection
/// by gate `gate` is recorded: the task runs as after that rejection, and
/// how to take the result anyway.
pub fn recorded_rejection_words(gate: &str) -> String {
    format!(
        "gate `{gate}` rejected its cached result in an earlier run; that verdict is \
         recorded and the gate is not run again: `--skip-gate {gate}` takes the result \
         as it is, or change the work"
    )
}
