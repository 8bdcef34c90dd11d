//! `loopc clean [--integration] [--cache]`: runs [`loopc::run::clean`] and
//! tells what it did (on stdout; nothing with `-q`), what it left alone on
//! stderr. Exit 0; 2 when not in a repository, a run holds the lock, or
//! something could not be removed.

use super::{current_dir, exit, quiet, say, warn, write_stdout};
use loopc::run::clean::Cleaned;

/// `loopc clean [--integration] [--cache]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Also delete the integration branch(es) loopc created.
    #[arg(long)]
    pub integration: bool,
    /// Also delete every cache entry, so the next run runs every task again.
    #[arg(long)]
    pub cache: bool,
}

/// Runs `loopc clean`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let options = loopc::run::clean::Options {
        integration: args.integration,
        cache: args.cache,
    };
    // With more to clean than worktrees, "nothing to clean" would read as
    // the whole answer before a line saying what was removed.
    let more = args.integration || args.cache;
    match loopc::run::clean::clean(&cwd, &options, &mut |step| tell(step, more)) {
        Ok(()) => exit::OK,
        Err(e) => {
            say(&e);
            exit::USAGE
        }
    }
}

/// `n` and `word`, plural when `n` is not 1 (`plural` is the plural form).
fn count(n: usize, word: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { word } else { plural })
}

/// Prints one step of `loopc clean`: what was removed on stdout (not with
/// `-q`), what was left alone on stderr as a warning. A closed stdout does
/// not stop the cleaning. `more`: `--integration` or `--cache` was given,
/// so an empty first step names what it looked for.
fn tell(step: Cleaned, more: bool) {
    let said = |text: String| if quiet() { Ok(()) } else { write_stdout(&text) };
    let _ = match step {
        Cleaned::Nothing if more => said("no worktrees, task branches or logs to remove\n".into()),
        Cleaned::Nothing => said("nothing to clean\n".into()),
        Cleaned::ForeignWorktree(path) => {
            warn(&format!(
                "the worktree at {} was not made by loopc; left alone",
                path.display()
            ));
            Ok(())
        }
        Cleaned::NotAWorktree(path) => {
            warn(&format!(
                "{} is not a worktree loopc made; left alone",
                path.display()
            ));
            Ok(())
        }
        Cleaned::CheckedOutBranch { branch, at } => {
            warn(&format!(
                "kept the task branch `{branch}`: it is checked out at {}",
                at.display()
            ));
            Ok(())
        }
        Cleaned::Removed {
            worktrees,
            branches,
            logs,
        } => {
            let mut parts = Vec::new();
            if worktrees > 0 {
                parts.push(count(worktrees, "worktree", "worktrees"));
            }
            if branches > 0 {
                parts.push(count(branches, "task branch", "task branches"));
            }
            if logs {
                parts.push("the logs".into());
            }
            let last = parts.pop().unwrap_or_default();
            let text = if parts.is_empty() {
                last
            } else {
                format!("{} and {last}", parts.join(", "))
            };
            said(format!("removed {text}\n"))
        }
        Cleaned::Cache(0) => said("no cache entries to remove\n".into()),
        Cleaned::Cache(n) => said(format!(
            "removed {}\n",
            count(n, "cache entry", "cache entries")
        )),
        // Work on it that is nowhere else is still a commit: say how to
        // get it back.
        Cleaned::IntegrationBranch { name, at } if at.is_empty() => {
            said(format!("removed the integration branch {name}\n"))
        }
        Cleaned::IntegrationBranch { name, at } => said(format!(
            "removed the integration branch {name} (it was at {}: `git branch {name} {at}` \
             brings it back)\n",
            &at[..at.len().min(10)]
        )),
        Cleaned::NoIntegrationBranch(name) => said(format!(
            "no integration branch to remove ({name} does not exist)\n"
        )),
    };
}
