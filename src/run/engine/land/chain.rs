//! Several passed results merged in one pass (docs/running.md step 7,
//! "Results that wait together"): when none of them has anything to run
//! on its merge result (no check runs again on it, no resolver), each is
//! merged onto the merge before it (`git merge-tree --write-tree`, `git
//! commit-tree`; a fast-forward when it started from the head), without
//! moving any ref. The coordinator then moves the integration branch once,
//! from the head to the last merge, in one transaction with every merged
//! task's cache entry. A result that conflicts is left out, as one merged
//! alone after the others would be: the next is merged onto the merge
//! before it.

use crate::plan::Task;
use crate::run::engine::context::RunCtx;
use crate::run::engine::outcome::stopping;
use crate::run::store::events::Event;
use crate::run::sys::git::MergeTree;
use crate::run::sys::objects::CommitChanges;

/// One passed result of a batch.
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    /// Its task.
    pub task: &'a Task,
    /// The attempt's number (for its `merge` phase event).
    pub attempt: u32,
    /// The attempt's commit.
    pub commit: &'a str,
    /// The integration branch head it started from.
    pub base: &'a str,
    /// Its commit's tree and what it changed against `base`, when read on
    /// the attempt's thread ([`crate::run::engine::outcome::AttemptResult::work`]).
    pub work: Option<&'a CommitChanges>,
}

/// How one result of a batch went.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Its work is in `head`, the merge (or its own commit, `how` =
    /// `fast_forward`) made on top of the step before.
    Landed {
        /// The commit it makes.
        head: String,
        /// The head it was merged onto.
        before: String,
        /// `fast_forward` or `merge`.
        how: &'static str,
        /// `head`'s tree and the files that differ from `before`.
        changes: CommitChanges,
    },
    /// It conflicts, in these paths, with the step before.
    Conflict(Vec<String>),
}

/// Merges `items`, in order, onto `head`, each onto the result of the one
/// before, without moving any ref; the steps, one an item.
///
/// Errors: git fails (or the run is stopping: `None`), for any item: the
/// batch is then not landed (nothing moved) and each result is merged
/// alone.
pub fn chain(ctx: &RunCtx, head: &str, items: &[Item<'_>]) -> Result<Vec<Step>, Option<String>> {
    let fail = |e: String| {
        if stopping(&ctx.control) {
            None
        } else {
            Some(e)
        }
    };
    let mut steps = Vec::with_capacity(items.len());
    let mut at = head.to_string();
    // Merges whose changes are still to read, by step.
    let mut unread: Vec<usize> = Vec::new();
    for item in items {
        if stopping(&ctx.control) {
            return Err(None);
        }
        if item.base == at {
            let changes = item.work.cloned().unwrap_or_else(|| {
                unread.push(steps.len());
                CommitChanges::default()
            });
            steps.push(Step::Landed {
                head: item.commit.to_string(),
                before: at,
                how: "fast_forward",
                changes,
            });
            at = item.commit.to_string();
            continue;
        }
        ctx.events.emit(Event::Phase {
            task: item.task.name.clone(),
            attempt: item.attempt,
            phase: "merge".into(),
            gate: None,
        });
        let tree = match super::merge::merge_tree(ctx, &at, (item.commit, item.base), item.work)
            .map_err(fail)?
        {
            MergeTree::Clean(tree) => tree,
            MergeTree::Conflict(paths) => {
                steps.push(Step::Conflict(paths));
                continue;
            }
        };
        let message = super::merge::message(item.task);
        let merged = ctx
            .git
            .write_commit(&tree, &[&at, item.commit], &message)
            .map_err(fail)?;
        unread.push(steps.len());
        steps.push(Step::Landed {
            head: merged.clone(),
            before: at,
            how: "merge",
            changes: CommitChanges {
                tree,
                ..CommitChanges::default()
            },
        });
        at = merged;
    }
    read_changes(ctx, &mut steps, &unread).map_err(fail)?;
    Ok(steps)
}

/// Fills in what the merges at `unread` changed against the step before,
/// all read by one `git diff-tree --stdin`.
///
/// Errors: git fails.
fn read_changes(ctx: &RunCtx, steps: &mut [Step], unread: &[usize]) -> Result<(), String> {
    if unread.is_empty() {
        return Ok(());
    }
    let pairs: Vec<(&str, &str)> = unread
        .iter()
        .filter_map(|&k| match &steps[k] {
            Step::Landed { head, before, .. } => Some((head.as_str(), before.as_str())),
            Step::Conflict(_) => None,
        })
        .collect();
    let read = ctx.git.commit_changes(&pairs)?;
    for (&k, c) in unread.iter().zip(read) {
        if let Step::Landed { changes, .. } = &mut steps[k] {
            *changes = c;
        }
    }
    Ok(())
}
