//! `loopc status [--json]`: the last run's tasks, read from state.json. It
//! takes no lock, so it works while a run is going on.

use super::git::Git;
use super::worktree::Layout;
use crate::commands::StatusArgs;
use crate::exit;

/// `loopc status`: prints the summary table (or the state document with
/// `--json`). Exit 0, or 2 when there is no readable state.
pub fn status(args: &StatusArgs) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("loopc: cannot read the current directory: {e}");
            return exit::USAGE;
        }
    };
    let git = match Git::discover(&cwd) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("loopc: {e}");
            return exit::USAGE;
        }
    };
    let layout = Layout::new(&git.root);
    let state = match super::state::load(&layout.state) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("loopc: {e}");
            return exit::USAGE;
        }
    };
    let text = if args.json {
        match serde_json::to_string_pretty(&state) {
            Ok(s) => format!("{s}\n"),
            Err(e) => {
                eprintln!("loopc: cannot encode state: {e}");
                return exit::USAGE;
            }
        }
    } else {
        let killed = state.status == super::state::RunStatus::Running
            && !super::lock::holder_alive(&layout.lock);
        format!(
            "plan {} ({}), started {}\n{}{}",
            super::ui::sanitize(&state.plan),
            super::ui::sanitize(&state.plan_file),
            state.started_at,
            super::summary::table(&state),
            if killed {
                "this run is not going on any more (loopc was killed); `loopc run` cleans up \
                 after it and resumes\n"
            } else {
                ""
            }
        )
    };
    super::out::report(&text)
}
