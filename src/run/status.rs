//! `loopc status [--json]`: the last run's tasks, read from state.json. It
//! takes no lock, so it works while a run is going on.

use super::store::layout::Layout;
use super::sys::git::Git;
use std::path::Path;

/// Options of `loopc status`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--json`: the state document instead of the table.
    pub json: bool,
}

/// The state document as `loopc status --json` prints it (pretty JSON and a
/// line break); `killed`: the run was killed, which `status` says instead
/// of `running`. `loop.notify` gets the same document.
///
/// Errors: the state cannot be encoded.
pub fn state_json(state: &crate::state::RunState, killed: bool) -> Result<String, String> {
    // Written from the document itself, so its fields keep state.json's
    // order (a JSON value would sort them).
    let mut text =
        serde_json::to_string_pretty(state).map_err(|e| format!("cannot encode state: {e}"))?;
    // The run's own `status`, indented as a top-level field (a task's is
    // deeper), comes before `tasks`.
    if killed {
        text = text.replacen(
            "\n  \"status\": \"running\",",
            "\n  \"status\": \"killed\",",
            1,
        );
    }
    Ok(format!("{text}\n"))
}

/// The document `loop.notify` reads on stdin: [`state_json`] with
/// `report` added, naming where `loopc report` writes the run's report
/// (`file`) and the command that writes it (`command`); the report
/// itself is not built.
///
/// Errors: the state cannot be encoded.
pub fn notify_json(state: &crate::state::RunState, report: &Path) -> Result<String, String> {
    /// The state document's fields in their order, then `report`.
    #[derive(serde::Serialize)]
    struct Notify<'a> {
        #[serde(flatten)]
        state: &'a crate::state::RunState,
        report: serde_json::Value,
    }
    let file = report.to_string_lossy();
    let notify = Notify {
        state,
        report: serde_json::json!({
            "file": file,
            "command": format!("loopc report -o {}", crate::visible::shell_word(&file)),
        }),
    };
    let text =
        serde_json::to_string_pretty(&notify).map_err(|e| format!("cannot encode state: {e}"))?;
    Ok(format!("{text}\n"))
}

/// What `loopc status` prints for the repository containing `cwd`: the
/// summary table (or, with `json`, the state document), with a closing line
/// break.
///
/// Errors: one line saying why there is no readable state (not in a
/// repository, no or unreadable state.json).
pub fn status(cwd: &Path, options: &Options) -> Result<String, String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::of_checkout(&git.root)?;
    let state = super::store::state::load(&layout.state)?;
    // state.json says `running` but no live loopc holds the lock: that run
    // was killed (`kill -9`, a crash), and the next `loopc run` cleans up
    // after it and resumes. state.json itself is left as it is.
    let killed = state.status == crate::state::RunStatus::Running
        && !super::sys::lock::holder_alive(&layout.lock);
    // Questions already answered: the next run gives the answer (and the
    // table does not ask for one).
    let answered_tasks: Vec<&str> = state
        .tasks
        .iter()
        .filter(|t| t.status == crate::state::TaskStatus::NeedsHuman)
        .filter(|t| {
            super::store::answers::load(&layout, &t.name).is_ok_and(|a| {
                a.last()
                    .is_some_and(|a| Some(&a.question) == t.question.as_ref())
            })
        })
        .map(|t| t.name.as_str())
        .collect();
    let answered: String = answered_tasks
        .iter()
        .map(|t| format!("{t}: answered; the next `loopc run` gives the task the answer\n"))
        .collect();
    // The integration branch deleted since the run (by hand, or `loopc
    // clean --integration`): the summary would name a branch that is gone.
    let gone = !state.integration_branch.is_empty()
        && git
            .commit_of(&format!("refs/heads/{}", state.integration_branch))?
            .is_none();
    Ok(if options.json {
        state_json(&state, killed)?
    } else {
        format!(
            "plan {} ({}), started {}{}\n{}{answered}{}{}",
            super::ui::display::sanitize(&state.plan),
            super::ui::display::sanitize(&state.plan_file),
            state.started_at,
            if killed { ": killed" } else { "" },
            answered_tasks.iter().fold(
                super::ui::summary::table_as(
                    &state,
                    if killed {
                        "killed"
                    } else {
                        state.status.as_str()
                    }
                ),
                |table, t| table.replacen(&super::ui::summary::answer_hint(t), "", 1)
            ),
            if gone {
                format!(
                    "the integration branch {} is gone: it was deleted after this run (the next \
                     `loopc run` creates it again from the base, replaying the passed tasks the \
                     cache still holds)\n",
                    super::ui::display::sanitize(&state.integration_branch)
                )
            } else {
                String::new()
            },
            if killed {
                "this run was killed (state.json says running, but no loopc holds the lock); \
                 the next `loopc run` cleans up after it and resumes; agents it started may \
                 still be running (and spending) until then: that run stops them first\n"
            } else {
                ""
            }
        )
    })
}
