//! `loopc logs TASK [--attempt N] [--follow]`: prints
//! [`loopc::run::logs`]'s files. Exit 0, or 2 when the task has no such
//! logs.

use super::{current_dir, exit, say};
use clap_complete::engine::ArgValueCompleter;

/// `loopc logs TASK [--attempt N] [--follow]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The task.
    #[arg(value_name = "TASK", add = ArgValueCompleter::new(super::completions::tasks))]
    pub task: String,
    /// The attempt (default: the task's last).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// Keep printing the attempt's output while it runs.
    #[arg(long)]
    pub follow: bool,
}

/// Runs `loopc logs`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let request = loopc::run::logs::LogsRequest {
        task: args.task.clone(),
        attempt: args.attempt,
        follow: args.follow,
    };
    let mut out = std::io::stdout().lock();
    match loopc::run::logs::logs(&cwd, &request, &mut out) {
        Ok(loopc::run::logs::Found::ThisRun) => exit::OK,
        Ok(loopc::run::logs::Found::EarlierRun(dir)) => {
            // Not an error: the logs were printed, from another run.
            if !super::quiet() {
                eline!(
                    "note: task `{}` has no logs in the last run (it was replayed from the cache \
                     or did not run); these are the latest earlier run's, in {}",
                    args.task,
                    dir.display()
                );
            }
            exit::OK
        }
        Ok(loopc::run::logs::Found::Replayed(dir)) => {
            if !super::quiet() {
                eline!(
                    "note: the last run replayed task `{}` from the cache; these are the logs of \
                     the earlier run whose attempt made that result, in {}",
                    args.task,
                    dir.display()
                );
            }
            exit::OK
        }
        Err(e) => {
            say(&e);
            exit::USAGE
        }
    }
}
