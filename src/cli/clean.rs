//! `loopc clean [--integration]`: runs [`loopc::run::clean`] and tells what
//! it did. Exit 0; 2 when not in a repository, a run holds the lock, or
//! something could not be removed.

use super::{current_dir, exit, say, write_stdout};
use loopc::run::clean::Cleaned;

/// `loopc clean [--integration]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Also delete the integration branch(es) loopc created.
    #[arg(long)]
    pub integration: bool,
}

/// Runs `loopc clean`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let options = loopc::run::clean::Options {
        integration: args.integration,
    };
    match loopc::run::clean::clean(&cwd, &options, &mut tell) {
        Ok(()) => exit::OK,
        Err(e) => {
            say(&e);
            exit::USAGE
        }
    }
}

/// Prints one step of `loopc clean`: what was removed on stdout, what was
/// left alone on stderr. A closed stdout does not stop the cleaning.
fn tell(step: Cleaned) {
    let _ = match step {
        Cleaned::Nothing => write_stdout("nothing to clean\n"),
        Cleaned::ForeignWorktree(path) => {
            say(&format!(
                "the worktree at {} was not made by loopc; left alone",
                path.display()
            ));
            Ok(())
        }
        Cleaned::NotAWorktree(path) => {
            say(&format!(
                "{} is not a worktree loopc made; left alone",
                path.display()
            ));
            Ok(())
        }
        Cleaned::CheckedOutBranch { branch, at } => {
            say(&format!(
                "kept the task branch `{branch}`: it is checked out at {}",
                at.display()
            ));
            Ok(())
        }
        Cleaned::Removed {
            worktrees,
            branches,
        } => write_stdout(&format!(
            "removed {worktrees} worktree(s), {branches} task branch(es) and the logs\n"
        )),
        Cleaned::IntegrationBranch(name) => {
            write_stdout(&format!("removed the integration branch {name}\n"))
        }
        Cleaned::NoIntegrationBranch(name) => write_stdout(&format!(
            "no integration branch to remove ({name} does not exist)\n"
        )),
    };
}
