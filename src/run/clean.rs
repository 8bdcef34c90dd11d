//! `loopc clean [--integration]`: removes loopc's worktrees (under
//! `.loopc/worktrees/`), the task branches (`loopc/<plan>/<task>/<n>`) its
//! ledger `.loopc/branches` says it created, and its logs (this run's and
//! earlier runs'); a worktree the user made there is left alone; with
//! `--integration` also the integration branch named in state.json, if
//! loopc created it. Nothing else is touched; no global `git worktree prune`.

use crate::commands::CleanArgs;
use crate::exit;
use crate::run::store::layout::{self, Layout};
use crate::run::sys::git::Git;
use crate::run::sys::worktree;

/// `loopc clean`. Exit 0; 2 when not in a repository or a run holds the lock.
pub fn clean(args: &CleanArgs) -> i32 {
    match clean_inner(args) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("loopc: {e}");
            exit::USAGE
        }
    }
}

fn clean_inner(args: &CleanArgs) -> Result<(), String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let git = Git::discover(&cwd)?;
    let layout = Layout::new(&git.root);
    if !layout.dir.exists() {
        let _ = crate::run::out::stdout("nothing to clean\n");
        return Ok(());
    }
    let _lock = crate::run::sys::lock::acquire(&layout.lock)?;
    let mut removed_worktrees = 0;
    // A worktree the user made under `.loopc/worktrees/` is left alone.
    let ledgered = layout::ledger(&layout)?;
    let mut kept = Vec::new();
    for w in git.worktrees()? {
        if w.path.starts_with(&layout.worktrees)
            || crate::run::sys::git::same_path(
                w.path.parent().unwrap_or(&w.path),
                &layout.worktrees,
            )
        {
            if crate::run::sys::recover::is_loopcs_worktree(&w, &ledgered) {
                git.worktree_remove(&w.path)?;
                removed_worktrees += 1;
            } else {
                eprintln!(
                    "loopc: the worktree at {} was not made by loopc; left alone",
                    w.path.display()
                );
                kept.push(w.path);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(&layout.worktrees) {
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if kept
                .iter()
                .any(|k| *k == path || crate::run::sys::git::same_path(k, &path))
            {
                continue;
            }
            std::fs::remove_dir_all(&path)
                .or_else(|_| std::fs::remove_file(&path))
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
    }
    // Only branches loopc created (its ledger): a user's branch or one of
    // a plan that never ran may have the same shape.
    let mut ours = layout::ledger(&layout)?;
    let mut removed_branches = 0;
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
            eprintln!(
                "loopc: kept the task branch `{b}`: it is checked out at {}",
                w.path.display()
            );
            continue;
        }
        git.delete_ref(&refname)?;
        ours.remove(&b);
        removed_branches += 1;
    }
    // Forget branches that no longer exist (deleted by hand, or above).
    ours.retain(|b| matches!(git.commit_of(&format!("refs/heads/{b}")), Ok(Some(_))));
    layout::write_ledger(&layout, &ours)?;
    layout::write_kept(&layout, &std::collections::BTreeSet::new())?;
    for logs in [&layout.logs, &layout.earlier_logs] {
        if logs.exists() {
            std::fs::remove_dir_all(logs)
                .map_err(|e| format!("cannot remove {}: {e}", logs.display()))?;
        }
    }
    let _ = crate::run::out::stdout(&format!(
        "removed {removed_worktrees} worktree(s), {removed_branches} task branch(es) and the logs\n"
    ));
    if args.integration {
        match crate::run::store::state::load(&layout.state) {
            Ok(state) => {
                let name = state.integration_branch;
                let checked_out = git
                    .worktrees()?
                    .iter()
                    .any(|w| w.branch.as_deref() == Some(&format!("refs/heads/{name}")));
                if !ours.contains(&name) {
                    return Err(format!(
                        "the integration branch {name} was not created by loopc; left alone"
                    ));
                }
                if checked_out {
                    return Err(format!(
                        "the integration branch {name} is checked out; check out another branch first"
                    ));
                }
                git.delete_ref(&format!("refs/heads/{name}"))?;
                ours.remove(&name);
                layout::write_ledger(&layout, &ours)?;
                let _ =
                    crate::run::out::stdout(&format!("removed the integration branch {name}\n"));
            }
            Err(e) => return Err(format!("cannot find the integration branch: {e}")),
        }
    }
    Ok(())
}
