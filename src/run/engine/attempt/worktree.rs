//! An attempt's first step: its worktree, on its task branch at its base,
//! fresh or taken from the run's pool of clean worktrees
//! ([`crate::run::engine::pool`]).

use crate::run::engine::context::Checkouts;
use crate::run::engine::outcome::{AttemptResult, stopping};
use crate::run::sys::checkout::Checkout;
use crate::run::sys::git::Git;
use crate::run::sys::process::Control;
use crate::run::sys::{recover, worktree};

/// Makes try `r`'s worktree at `r.worktree` on its task branch `r.branch`
/// at its base, its files checked out: a pooled worktree when one can be
/// reused, else a fresh one. A pooled worktree taken is set in
/// `r.retired` (its old place and task branch, for the clean-up thread:
/// the branch, and the worktree too when it could not be reused).
///
/// Errors: a fresh worktree could not be made.
pub(super) fn make(
    trees: Checkouts<'_>,
    control: &Control,
    git: &Git,
    r: &mut AttemptResult,
) -> Result<Checkout, String> {
    if let Some((from, old_branch)) = trees.pool.take() {
        let reused = {
            let _guard = trees.lock.lock();
            worktree::reuse_task(
                git,
                trees.layout,
                &from,
                &r.worktree,
                &r.branch,
                &r.input.base,
            )
        }
        .and_then(|co| worktree::catch_up(git, &co, &r.branch, &r.input.base).map(|()| co))
        .and_then(|co| git.clean(&co).map(|()| co));
        r.retired = Some((from, old_branch));
        match reused {
            Ok(co) => return Ok(co),
            Err(_) if stopping(control) => return Err("the run is stopping".into()),
            Err(_) => {
                // Moved but not reusable: removed here, before the fresh
                // one takes its place (not moved: the clean-up thread
                // removes it where it is).
                let _guard = trees.lock.lock();
                if git.is_registered_worktree(&r.worktree) || r.worktree.exists() {
                    recover::remove_worktree(git, &r.worktree)?;
                }
            }
        }
    }
    let checkout = {
        let _guard = trees.lock.lock();
        worktree::create_task(git, trees.layout, &r.worktree, &r.branch, &r.input.base)
            .and_then(|()| git.checkout(&r.worktree))?
    };
    git.fill(&checkout)?;
    Ok(checkout)
}
