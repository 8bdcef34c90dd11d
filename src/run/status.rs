//! `loopc status [--json]`: the last run's tasks, read from state.json. It
//! takes no lock, so it works while a run is going on.

use crate::commands::StatusArgs;
use crate::exit;
use crate::run::store::layout::Layout;
use crate::run::sys::git::Git;

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
    let state = match crate::run::store::state::load(&layout.state) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("loopc: {e}");
            return exit::USAGE;
        }
    };
    // state.json says `running` but no live loopc holds the lock: that run
    // was killed (`kill -9`, a crash), and the next `loopc run` cleans up
    // after it and resumes. state.json itself is left as it is.
    let killed = state.status == crate::state::RunStatus::Running
        && !crate::run::sys::lock::holder_alive(&layout.lock);
    let text = if args.json {
        let mut value = match serde_json::to_value(&state) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("loopc: cannot encode state: {e}");
                return exit::USAGE;
            }
        };
        if killed && let Some(obj) = value.as_object_mut() {
            obj.insert("status".into(), "killed".into());
        }
        match serde_json::to_string_pretty(&value) {
            Ok(s) => format!("{s}\n"),
            Err(e) => {
                eprintln!("loopc: cannot encode state: {e}");
                return exit::USAGE;
            }
        }
    } else {
        format!(
            "plan {} ({}), started {}{}\n{}{}",
            crate::run::ui::display::sanitize(&state.plan),
            crate::run::ui::display::sanitize(&state.plan_file),
            state.started_at,
            if killed { ": killed" } else { "" },
            crate::run::ui::summary::table(&state),
            if killed {
                "this run was killed (state.json says running, but no loopc holds the lock); \
                 the next `loopc run` cleans up after it and resumes\n"
            } else {
                ""
            }
        )
    };
    crate::run::out::report(&text)
}
