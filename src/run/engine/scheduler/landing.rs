//! Step 7 as the coordinator carries it out: a passed attempt merged onto
//! the integration branch ([`crate::run::engine::land::merge`]), its cache
//! entry written before the branch moves and its ref moved with the branch
//! in the same transaction (noted when its transition records the pass).

use super::Scheduler;
use super::transition::StopKind;
use crate::run::engine::context::RunCtx;
use crate::run::engine::land::merge;
use crate::run::engine::land::replay::{EntryAt, Prepared, RunCache};
use crate::run::engine::outcome::{AttemptResult, Outcome};
use crate::state::RunState;
use std::sync::Arc;

impl Scheduler {
    /// Merges attempt `r`'s passed `commit` into the integration branch
    /// (step 7) and returns the attempt's outcome after it. Its cache
    /// entry is written before the branch moves and its ref moves with the
    /// branch ([`Scheduler::prepare_entry`]).
    pub(super) fn land_pass(
        &mut self,
        state: &mut RunState,
        r: &mut AttemptResult,
        commit: &str,
    ) -> Outcome {
        let i = r.input.task;
        let ctx = Arc::clone(&self.ctx);
        let mut prepared = None;
        let landed = {
            let (cache, ts) = (&mut self.cache, &state.tasks[i]);
            let (base, outcome) = (r.input.base.clone(), r.outcome.clone());
            let mut on_landing = |landing: merge::Landing<'_>| {
                prepared = prepare_entry(&ctx, cache, ts, (i, &base, &outcome), landing);
                prepared
                    .as_ref()
                    .and_then(|p| p.ref_move().cloned())
                    .into_iter()
                    .collect()
            };
            let landings = &self.landings;
            let on_branch = (commit, self.head.as_str());
            merge::land(
                &ctx,
                r,
                on_branch,
                &self.merged_checks,
                landings,
                &mut on_landing,
            )
        };
        self.prepared = prepared
            .filter(|p| p.head == landed.head && matches!(landed.outcome, Outcome::Passed { .. }));
        if landed.head != self.head && matches!(landed.outcome, Outcome::Passed { .. }) {
            self.landings.push((i, landed.head.clone()));
        }
        if let Some(tree) = landed.tree {
            self.cache.know_tree(&landed.head, tree);
        }
        if let Some(c) = &landed.adopted {
            let w = format!(
                "the integration branch `{b}` was moved forward by someone else during the \
                 run, to {c}; loopc went on from it, but the next run rebuilds `{b}` from the \
                 base without that commit: to keep it, merge it into the base (git merge {c})",
                b = ctx.plan.settings.branch
            );
            self.ctx.events.ui().warn(&w);
            state.warnings.push(w);
        }
        self.head = landed.head;
        if let Some(why) = landed.moved_off {
            self.set_stop(StopKind::BranchMoved, why);
            self.ctx.control.stop();
        }
        // Its resolver or merge gates changed refs that are not loopc's.
        if r.ref_changes.is_empty() {
            landed.outcome
        } else {
            self.refs_changed(state, r, landed.outcome)
        }
    }
}

/// Task `i`'s cache entry for its pass (`outcome`, its work started at
/// `base`) about to land as `landing` says ([`RunCache::prepare`]); `ts`
/// is its state. `None` for a task with `expands` (its entry names the
/// fragment's commit, known once it is judged): recorded after it lands.
pub(super) fn prepare_entry(
    ctx: &RunCtx,
    cache: &mut RunCache,
    ts: &crate::state::TaskState,
    (i, base, outcome): (usize, &str, &Outcome),
    landing: merge::Landing<'_>,
) -> Option<Prepared> {
    let Outcome::Passed { summary, files, .. } = outcome else {
        return None;
    };
    if ctx.plan.tasks[i].expands.is_some() {
        return None;
    }
    let at = EntryAt {
        base,
        before: landing.before,
        head: landing.head,
        changes: landing.changes,
        cost: landing.cost,
        summary: summary.clone(),
        files: files.clone(),
    };
    cache.prepare(ctx, ts, i, at)
}
