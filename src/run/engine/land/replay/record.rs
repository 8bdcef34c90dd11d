//! Recording a pass in the cache (docs/running.md steps 7 and 8): the
//! entry of a merge is written before the merge lands and its ref moves
//! with the integration branch, in one `git update-ref --stdin`
//! transaction ([`RunCache::prepare`], then [`RunCache::landed`]); any
//! other pass (a resolver's merge, a pass that changed nothing) is recorded
//! after it landed ([`RunCache::record`]).

use super::RunCache;
use crate::plan::Key;
use crate::run::engine::budget::Cost;
use crate::run::engine::cache::{self, Entry, Produced};
use crate::run::engine::context::RunCtx;
use crate::run::sys::objects::CommitChanges;
use crate::run::sys::transaction::RefMove;
use crate::state::TaskState;
use std::sync::Arc;

/// Where a pass lands, as its entry is made before the branch moves.
#[derive(Debug, Clone)]
pub struct EntryAt<'a> {
    /// The commit the task's work started from.
    pub base: &'a str,
    /// The integration branch head it is merged onto.
    pub before: &'a str,
    /// The head it makes (the task's own commit, for a fast-forward).
    pub head: &'a str,
    /// `head`'s tree and the files that differ from `before`, when known
    /// (a fast-forward's, read on the attempt's thread): else read here.
    pub changes: Option<CommitChanges>,
    /// What the attempt and its merge cost so far (not yet charged to the
    /// task).
    pub cost: Cost,
    /// The summary and the changed paths of the pass.
    pub summary: Option<String>,
    /// The paths the task changed.
    pub files: Vec<String>,
}

/// A pass's cache entry, written before the branch moves: its ref moves
/// with the branch ([`Prepared::ref_move`]); [`RunCache::landed`] notes it
/// once the move is done.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The task.
    pub task: usize,
    /// The head its work made.
    pub head: String,
    produced: Produced,
    key: Option<Key>,
    entry: Option<(Entry, RefMove)>,
}

impl Prepared {
    /// The entry's ref move (`refs/loopc/cache/<key>` to its entry commit,
    /// whatever it pointed at), when the run records one.
    pub fn ref_move(&self) -> Option<&RefMove> {
        self.entry.as_ref().map(|(_, m)| m)
    }
}

impl RunCache {
    /// Makes task `i`'s cache entry for its pass landing at `at`, before
    /// the branch moves: its key, what it produced, and (with the cache
    /// on) its entry commit. `ts` is the task's state before the attempt
    /// is charged. `None` (with a note on the display) when what it
    /// produced cannot be read: the pass is then recorded after it landed.
    pub fn prepare(
        &mut self,
        ctx: &RunCtx,
        ts: &TaskState,
        i: usize,
        at: EntryAt<'_>,
    ) -> Option<Prepared> {
        let read = match at.changes {
            Some(c) => Ok(c),
            None => ctx
                .git
                .commit_changes(&[(at.head, at.before)])
                .and_then(|mut c| c.pop().ok_or_else(|| "no answer".to_string())),
        };
        let changes = match read {
            Ok(c) => c,
            Err(e) => {
                ctx.events.ui().warn(&format!("cache: {e}"));
                return None;
            }
        };
        let mut prepared = Prepared {
            task: i,
            head: at.head.to_string(),
            produced: changes.files.into_iter().collect(),
            key: None,
            entry: None,
        };
        if self.cache.store.is_none() {
            return Some(prepared);
        }
        let rk = self.key_at(ctx, i, at.base)?;
        prepared.key = Some(rk.key);
        let produced = prepared.produced.clone();
        let cost = (
            ts.cost_micro_usd + at.cost.micro_usd,
            ts.cost_unknown || at.cost.unknown,
        );
        let squashed = replanned(
            ctx,
            self.cache.store.as_ref(),
            i,
            &rk.key.to_hex(),
            (at.before, at.head),
        );
        let entry = match &squashed {
            Some((head, parent, tree, produced)) => {
                let made = (
                    head.as_str(),
                    parent.as_str(),
                    tree.clone(),
                    produced.clone(),
                );
                entry_of(ctx, ts, i, rk, made, (at.summary, at.files), cost)
            }
            None => {
                let made = (at.head, at.before, changes.tree, produced);
                entry_of(ctx, ts, i, rk, made, (at.summary, at.files), cost)
            }
        };
        match cache::write_entry(&ctx.git, &entry) {
            Ok((name, new)) => {
                let m = RefMove {
                    name,
                    new,
                    old: None,
                };
                prepared.entry = Some((entry, m));
            }
            Err(e) => ctx.events.ui().warn(&format!("cache: {e}")),
        }
        Some(prepared)
    }

    /// Notes the pass `p` prepared, now landed (its entry ref moved with
    /// the branch): sets the task's `cache_key` and what it produced.
    pub fn landed(&mut self, ctx: &RunCtx, ts: &mut TaskState, p: Prepared) {
        self.ran[p.task] = true;
        self.set_result(ctx, p.task, Arc::new(p.produced));
        let Some(key) = p.key else {
            return;
        };
        ts.cache_key = Some(key.to_hex());
        self.keys[p.task] = Some(key);
        if let Some((entry, _)) = p.entry
            && let Some(store) = self.cache.store.as_mut()
            && let Err(e) = store.recorded(entry)
        {
            ctx.events.ui().warn(&format!("cache: {e}"));
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
        self.ran[i] = true;
        let produced = match cache::produced(&ctx.git, before, head) {
            Ok(p) => p,
            Err(e) => {
                ctx.events.ui().warn(&format!("cache: {e}"));
                return;
            }
        };
        self.set_result(ctx, i, Arc::new(produced.clone()));
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
        let key = rk.key;
        let cost = (ts.cost_micro_usd, ts.cost_unknown);
        let squashed = replanned(
            ctx,
            self.cache.store.as_ref(),
            i,
            &key.to_hex(),
            (before, head),
        );
        let entry = match squashed {
            Some((s_head, parent, tree, s_produced)) => {
                let made = (s_head.as_str(), parent.as_str(), tree, s_produced);
                entry_of(ctx, ts, i, rk, made, (summary, files), cost)
            }
            None => {
                let made = (head, before, gated_tree, produced);
                entry_of(ctx, ts, i, rk, made, (summary, files), cost)
            }
        };
        self.keys[i] = Some(key);
        if let Some(store) = self.cache.store.as_mut()
            && let Err(e) = store.record(&ctx.git, entry)
        {
            ctx.events.ui().warn(&format!("cache: {e}"));
        }
    }
}

/// The entry commit of a pass of task `i` (with `expands`, key `key`)
/// that re-planned in this run, from `before` to `head`: its fragment's
/// first pass (the task's latest entry, under the same key) is merged
/// below `before`, so `before..head` only rewrites that fragment, and a
/// rerun from the base, which lacks the first version, could not replay
/// it (its cached work would conflict, and every re-plan be paid again).
/// Instead the task's work is recorded squashed onto the head its first
/// pass started from: that pass's tree with the paths this one changed
/// as `head` has them. Returns that commit, its parent, its tree and what
/// it produced; `None` for any other pass, or when git cannot say.
fn replanned(
    ctx: &RunCtx,
    store: Option<&cache::Store>,
    i: usize,
    key: &str,
    (before, head): (&str, &str),
) -> Option<(String, String, String, Produced)> {
    let task = &ctx.plan.tasks[i];
    task.expands.as_ref()?;
    let first = store?
        .latest(&ctx.plan.name, &task.name)
        .filter(|e| e.key == key && e.commit != head)?;
    let parent = first.parent.clone()?;
    if !ctx.git.is_ancestor(&first.commit, before).ok()? {
        return None;
    }
    let paths: Vec<String> = ctx
        .git
        .changed_files(before, head)
        .ok()?
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let index = ctx.layout.dir.join("replan.index");
    let tree = ctx
        .git
        .tree_with_files_of(&first.commit, head, &paths, &index)
        .ok()?;
    let message = ctx
        .git
        .read(&["log", "-1", "--format=%B", head, "--"])
        .ok()?;
    let commit = ctx
        .git
        .commit_tree_like(&tree, &[&parent], &message, head)
        .ok()?;
    let produced = cache::produced(&ctx.git, &parent, &commit).ok()?;
    Some((commit, parent, tree, produced))
}

/// Task `i`'s entry under `rk`: `made` is the head its pass made, the head
/// it was merged onto, the head's tree (the one its gates passed on) and
/// what it produced; `said` its summary and changed paths; `cost` what its
/// attempts cost (micro-dollars, and whether some was unknown).
fn entry_of(
    ctx: &RunCtx,
    ts: &TaskState,
    i: usize,
    rk: cache::RunKey,
    (head, before, gated_tree, produced): (&str, &str, String, Produced),
    (summary, files): (Option<String>, Vec<String>),
    (cost_micro_usd, cost_unknown): (u64, bool),
) -> Entry {
    Entry {
        format: cache::CACHE_FORMAT_VERSION.to_string(),
        key: rk.key.to_hex(),
        plan: ctx.plan.name.clone(),
        task: ts.name.clone(),
        recorded_at: crate::run::time::now_rfc3339(),
        recorded_unix_ms: cache::unix_ms(),
        summary,
        cost_micro_usd,
        cost_unknown,
        commit: head.to_string(),
        parent: (head != before).then(|| before.to_string()),
        gated_tree,
        files,
        produced,
        // Every gate of the task passed (those `--skip-gate` names are
        // not the task's in this run: not recorded as passed).
        gates: cache::gates_of(&ctx.plan.tasks[i]),
        components: rk.components,
        fragment_commit: ts.fragment_commit.clone(),
        rejected: std::collections::BTreeMap::new(),
    }
}
