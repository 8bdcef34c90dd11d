//! `loopc clean [--integration]`: removes loopc's worktrees (under
//! `.loopc/worktrees/`), its task branches (`loopc/<plan>/<task>/<n>`) and
//! its logs; with `--integration` also the integration branch named in
//! state.json. Nothing else is touched; no global `git worktree prune`.

use super::git::Git;
use super::worktree::Layout;
use crate::commands::CleanArgs;
use crate::exit;

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
        println!("nothing to clean");
        return Ok(());
    }
    let _lock = super::lock::acquire(&layout.lock)?;
    let mut removed_worktrees = 0;
    for w in git.worktrees()? {
        if w.path.starts_with(&layout.worktrees)
            || super::git::same_path(w.path.parent().unwrap_or(&w.path), &layout.worktrees)
        {
            git.worktree_remove(&w.path)?;
            removed_worktrees += 1;
        }
    }
    if layout.worktrees.exists() {
        std::fs::remove_dir_all(&layout.worktrees)
            .map_err(|e| format!("cannot remove {}: {e}", layout.worktrees.display()))?;
    }
    let mut removed_branches = 0;
    let checked_out = git.worktrees()?;
    for b in git.branches_under("loopc/")? {
        if !super::worktree::is_task_branch(&b) {
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
        removed_branches += 1;
    }
    if layout.logs.exists() {
        std::fs::remove_dir_all(&layout.logs)
            .map_err(|e| format!("cannot remove {}: {e}", layout.logs.display()))?;
    }
    println!(
        "removed {removed_worktrees} worktree(s), {removed_branches} task branch(es) and the logs"
    );
    if args.integration {
        match super::state::load(&layout.state) {
            Ok(state) => {
                let name = state.integration_branch;
                let checked_out = git
                    .worktrees()?
                    .iter()
                    .any(|w| w.branch.as_deref() == Some(&format!("refs/heads/{name}")));
                if checked_out {
                    return Err(format!(
                        "the integration branch {name} is checked out; check out another branch first"
                    ));
                }
                git.delete_ref(&format!("refs/heads/{name}"))?;
                println!("removed the integration branch {name}");
            }
            Err(e) => return Err(format!("cannot find the integration branch: {e}")),
        }
    }
    Ok(())
}
