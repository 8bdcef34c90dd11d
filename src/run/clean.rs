//! `loopc clean [--integration]`: removes loopc's worktrees (under
//! `.loopc/worktrees/`), the task branches (`loopc/<plan>/<task>/<try>`) its
//! ledger `.loopc/branches` says it created, and its logs (this run's and
//! earlier runs'); a worktree the user made there is left alone; with
//! `--integration` also the integration branch named in state.json, if
//! loopc created it; with `--cache` also every cache entry (the refs under
//! `refs/loopc/cache/` and `.loopc/cache/`). Nothing else is touched; no
//! global `git worktree prune`.

use super::store::layout::{self, Layout};
use super::sys::git::Git;
use super::sys::worktree;
use std::path::{Path, PathBuf};

/// Options of `loopc clean`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--integration`: also delete the integration branch loopc created.
    pub integration: bool,
    /// `--cache`: also delete every cache entry, so every task runs again.
    pub cache: bool,
}

/// What [`clean`] did or left alone, reported as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleaned {
    /// There was nothing to remove: no worktree, task branch or log of
    /// loopc's (or no `.loopc/` directory at all).
    Nothing,
    /// A worktree under `.loopc/worktrees/` that loopc did not make: kept.
    ForeignWorktree(PathBuf),
    /// A directory under `.loopc/worktrees/` that is not a worktree loopc
    /// made (nor what one left): kept.
    NotAWorktree(PathBuf),
    /// A task branch kept because a worktree (the user's) has it checked out.
    CheckedOutBranch {
        /// The branch name.
        branch: String,
        /// The worktree it is checked out in.
        at: PathBuf,
    },
    /// loopc's worktrees, task branches and logs were removed.
    Removed {
        /// Worktrees removed.
        worktrees: usize,
        /// Task branches deleted.
        branches: usize,
        /// Whether there were logs (they were removed).
        logs: bool,
    },
    /// The integration branch `name` was deleted (`--integration`); it
    /// was at commit `at` (the command that brings it back names it).
    IntegrationBranch {
        /// The branch.
        name: String,
        /// The commit it pointed at.
        at: String,
    },
    /// `--integration`, but the integration branch of this name does not
    /// exist (already removed): nothing to do.
    NoIntegrationBranch(String),
    /// `--cache`: this many cache entries were deleted (0: there were none).
    Cache(usize),
}

/// Cleans up after loopc in the repository containing `cwd` (see the
/// module documentation), telling `report` each step.
///
/// Errors: one line; not in a repository, a run holds the lock, something
/// could not be removed, or (with `integration`) the integration branch is
/// not loopc's or is checked out. Steps reported before an error are done.
pub fn clean(cwd: &Path, options: &Options, report: &mut dyn FnMut(Cleaned)) -> Result<(), String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::of_checkout(&git.root)?;
    layout.refuse_symlink()?;
    if !layout.dir.exists() {
        report(Cleaned::Nothing);
        if options.cache {
            let _repo_lock = super::sys::lock::acquire(
                &super::sys::lock::repository_lock(&git),
                "clean",
                &git.root,
            )?;
            report(Cleaned::Cache(clean_cache(&git, &layout)?));
        }
        return Ok(());
    }
    for d in [&layout.logs, &layout.earlier_logs, &layout.worktrees] {
        if std::fs::symlink_metadata(d).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "{} is a symbolic link; loopc deletes only what it made: remove the link and \
                 run again",
                d.display()
            ));
        }
    }
    let _lock = super::sys::lock::acquire(&layout.lock, "clean", &git.root)?;
    let _repo_lock =
        super::sys::lock::acquire(&super::sys::lock::repository_lock(&git), "clean", &git.root)?;
    // Refuse before anything is removed: a refused `--integration` leaves
    // everything as it was.
    let integration = if options.integration {
        Some(integration_branch(&git, &layout)?)
    } else {
        None
    };
    // What cannot be removed is said after what was: the rest is cleaned.
    let mut failed = Vec::new();
    let removed_worktrees = remove_worktrees(&git, &layout, report, &mut failed)?;
    let (mut ours, removed_branches) = remove_branches(&git, &layout, report)?;
    let mut had_logs = false;
    for logs in [&layout.logs, &layout.earlier_logs] {
        if logs.exists() {
            match super::sys::modes::remove_tree(logs) {
                Ok(()) => had_logs = true,
                Err(e) => failed.push(format!("cannot remove {}: {e}", logs.display())),
            }
        }
    }
    report(
        if removed_worktrees == 0 && removed_branches == 0 && !had_logs {
            Cleaned::Nothing
        } else {
            Cleaned::Removed {
                worktrees: removed_worktrees,
                branches: removed_branches,
                logs: had_logs,
            }
        },
    );
    if !failed.is_empty() {
        return Err(failed.join("\nerror: "));
    }
    if options.cache {
        report(Cleaned::Cache(clean_cache(&git, &layout)?));
    }
    match integration {
        Some(Integration::Gone(name)) => {
            // Already gone (a second `clean --integration`): done.
            if ours.remove(&name) {
                layout::write_ledger(&layout, &ours)?;
            }
            report(Cleaned::NoIntegrationBranch(name));
        }
        Some(Integration::Delete(name)) => {
            let refname = format!("refs/heads/{name}");
            let at = git.commit_of(&refname)?.unwrap_or_default();
            git.delete_ref(&refname)?;
            ours.remove(&name);
            layout::write_ledger(&layout, &ours)?;
            report(Cleaned::IntegrationBranch { name, at });
        }
        None => {}
    }
    Ok(())
}

/// Removes loopc's worktrees under `.loopc/worktrees/` (registered ones
/// and what git no longer knows), whatever modes their files have, and
/// empties the list of kept ones; reports what it leaves alone. Returns
/// how many it removed; what it could not remove goes to `failed`.
///
/// Errors: git fails listing worktrees, or the ledger cannot be read.
fn remove_worktrees(
    git: &Git,
    layout: &Layout,
    report: &mut dyn FnMut(Cleaned),
    failed: &mut Vec<String>,
) -> Result<usize, String> {
    let mut removed = 0;
    // A worktree the user made under `.loopc/worktrees/` is left alone.
    let ledgered = layout::ledger(layout)?;
    // Registered worktrees, loopc's (tried) and not (left alone).
    let mut seen = Vec::new();
    for w in git.worktrees()? {
        if w.path.starts_with(&layout.worktrees)
            || super::sys::git::same_path(w.path.parent().unwrap_or(&w.path), &layout.worktrees)
        {
            if super::sys::recover::is_loopcs_worktree(&w, &ledgered) {
                match super::sys::recover::remove_worktree(git, &w.path) {
                    Ok(()) => removed += 1,
                    // Once git dropped its entry, nothing tells a later
                    // clean that what is left was loopc's: the person
                    // removes it.
                    Err(e) => failed.push(format!(
                        "{e} (remove what is left by hand: rm -rf {})",
                        crate::visible::shell_word(&w.path.display().to_string())
                    )),
                }
                // Not looked at again below, removed or not.
                seen.push(w.path);
            } else {
                report(Cleaned::ForeignWorktree(w.path.clone()));
                seen.push(w.path);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(&layout.worktrees) {
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if seen
                .iter()
                .any(|k| *k == path || super::sys::git::same_path(k, &path))
            {
                continue;
            }
            // Only what a worktree loopc made leaves behind; anything else
            // there is someone's, and stays.
            if !super::recover::is_leftover_worktree(git, &path) {
                report(Cleaned::NotAWorktree(path));
                continue;
            }
            // A leftover is a worktree too: one `git worktree remove` could
            // not empty (read-only directories) before this.
            match super::sys::modes::remove_tree(&path) {
                Ok(()) => removed += 1,
                Err(e) => failed.push(format!("cannot remove {}: {e}", path.display())),
            }
        }
    }
    layout::write_kept(layout, &std::collections::BTreeSet::new())?;
    Ok(removed)
}

/// Deletes the task branches loopc's ledger says it created, but those a
/// worktree (the user's) has checked out (reported), and writes the
/// ledger without the branches that are gone. Returns the ledger and how
/// many branches it deleted.
///
/// Errors: git fails, or the ledger cannot be read or written.
fn remove_branches(
    git: &Git,
    layout: &Layout,
    report: &mut dyn FnMut(Cleaned),
) -> Result<(std::collections::BTreeSet<String>, usize), String> {
    // Only branches loopc created (its ledger): a user's branch or one of
    // a plan that never ran may have the same shape.
    let mut ours = layout::ledger(layout)?;
    let mut removed = 0;
    let checked_out = git.worktrees()?;
    for b in git.branch_refs("loopc")? {
        if !worktree::is_task_branch(&b) || !ours.contains(&b) {
            continue;
        }
        let refname = format!("refs/heads/{b}");
        if let Some(w) = checked_out
            .iter()
            .find(|w| w.branch.as_deref() == Some(refname.as_str()))
        {
            // The user's worktree: deleting its branch would break it.
            report(Cleaned::CheckedOutBranch {
                branch: b,
                at: w.path.clone(),
            });
            continue;
        }
        git.delete_ref(&refname)?;
        ours.remove(&b);
        removed += 1;
    }
    // Forget branches that no longer exist (deleted by hand, or above).
    ours.retain(|b| matches!(git.commit_of(&format!("refs/heads/{b}")), Ok(Some(_))));
    layout::write_ledger(layout, &ours)?;
    Ok((ours, removed))
}

/// What `--integration` will do with the integration branch named in
/// state.json.
enum Integration {
    /// It no longer exists.
    Gone(String),
    /// loopc created it and it is not checked out: delete it.
    Delete(String),
}

/// Decides what `--integration` does, before anything is removed.
///
/// Errors: no readable state.json, the branch was not created by loopc, or
/// it is checked out (the message names the worktree).
fn integration_branch(git: &Git, layout: &Layout) -> Result<Integration, String> {
    let state = super::store::state::load(&layout.state)
        .map_err(|e| format!("cannot find the integration branch: {e}"))?;
    let name = state.integration_branch;
    if git.commit_of(&format!("refs/heads/{name}"))?.is_none() {
        return Ok(Integration::Gone(name));
    }
    if !layout::ledger(layout)?.contains(&name) {
        return Err(format!(
            "the integration branch {name} was not created by loopc; left alone (nothing was removed)"
        ));
    }
    let refname = format!("refs/heads/{name}");
    if let Some(w) = git
        .worktrees()?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(refname.as_str()))
    {
        return Err(format!(
            "the integration branch {name} is checked out at {}; check out another branch there \
             first (nothing was removed)",
            w.path.display()
        ));
    }
    Ok(Integration::Delete(name))
}

/// Deletes every cache entry: the refs under `refs/loopc/cache/` and the
/// index in `.loopc/cache/`, and the plans' run entries with them. Returns
/// how many task entries there were.
///
/// Errors: git fails, or the index cannot be removed.
fn clean_cache(git: &Git, layout: &Layout) -> Result<usize, String> {
    let refs = git.ref_messages(super::engine::cache::REF_PREFIX)?;
    for (refname, _) in &refs {
        git.delete_ref(refname)?;
    }
    let dir = layout.dir.join("cache");
    if dir.exists() {
        super::sys::modes::remove_tree(&dir)
            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    // A plan's run entry is no task's entry.
    let run = super::engine::run_entry::RUN_PREFIX;
    Ok(refs.iter().filter(|(r, _)| !r.starts_with(run)).count())
}
