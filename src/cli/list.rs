//! `loopc list [PLAN] [--json]`: the plan's tasks in topological order, each
//! with its title and its status in the last run (`.loopc/state.json`).
//!
//! Human output is a table on stdout (`-` for a task the last run did not
//! have); `--json` prints one document (format version 1, docs/running.md).
//! Exit status: 0; 1 the plan has errors; 2 no plan found, or it cannot be
//! read, or stdout cannot be written (a closed pipe is a normal end).

use super::{compile_for_display, exit, output_status, warn, write_stdout};
use loopc::render::state::{self, StateMap};
use std::path::PathBuf;

/// The version of `loopc list --json`'s document.
pub const LIST_JSON_VERSION: u32 = 1;

/// `loopc list --json`'s document (docs/running.md, "loopc list").
#[derive(serde::Serialize)]
struct ListJson<'a> {
    /// [`LIST_JSON_VERSION`].
    version: u32,
    /// The plan's name.
    plan: &'a str,
    /// The plan file, as given or found (relative to the current directory).
    file: String,
    /// Every task, in topological order.
    tasks: Vec<TaskJson<'a>>,
}

/// One task of [`ListJson`].
#[derive(serde::Serialize)]
struct TaskJson<'a> {
    /// The task's name.
    name: &'a str,
    /// Its title, if written.
    title: Option<&'a str>,
    /// Its direct dependencies' names.
    dependencies: Vec<&'a str>,
    /// Its status in the last run, `null` when the last run did not have it.
    status: Option<&'static str>,
    /// For a task the last run added from a plan fragment: the task that
    /// wrote the fragment. Absent for the plan's own tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    expanded_from: Option<&'a str>,
}

/// `loopc list [PLAN] [--json]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The plan file (or a REEL spec, or a directory of them); default: the
    /// plan found from the current directory, as `run` finds it.
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// The defaults plan for REEL specs; default `defaults.loop` beside them.
    #[arg(long, value_name = "FILE.loop")]
    pub defaults: Option<PathBuf>,
    /// Print one JSON document (`{"version": 1, "plan", "file", "tasks":
    /// [{"name", "title", "dependencies", "status", "expanded_from"}]}`)
    /// instead of the table (`expanded_from`: only for a task the last run
    /// added from a plan fragment).
    #[arg(long)]
    pub json: bool,
}

/// Runs `loopc list`.
pub fn run(args: &Args) -> i32 {
    let (path, compiled) = match compile_for_display(
        args.plan.as_deref(),
        args.defaults.as_deref(),
        "no tasks listed",
    ) {
        Ok(found) => found,
        Err(status) => return status,
    };
    let Some(plan) = &compiled.plan else {
        return exit::FAILURE;
    };
    let dir = loopc::compile::plan_dir(&path);
    let statuses = statuses(&plan.name, &dir);
    // With the tasks the last run added from plan fragments, as `status`
    // and `graph --state` show them.
    let grown = statuses
        .as_ref()
        .and_then(|s| super::graph::grown(&compiled, plan, s, &dir));
    let plan = grown.as_ref().unwrap_or(plan);
    let status_of = |name: &str| statuses.as_ref().and_then(|s| s.recorded(name));
    let text = if args.json {
        let doc = ListJson {
            version: LIST_JSON_VERSION,
            plan: &plan.name,
            file: path.display().to_string(),
            tasks: plan
                .tasks
                .iter()
                .map(|t| TaskJson {
                    name: &t.name,
                    title: t.title.as_deref(),
                    dependencies: t
                        .dependencies
                        .iter()
                        .map(|&d| plan.tasks[d].name.as_str())
                        .collect(),
                    status: status_of(&t.name).map(|s| s.as_str()),
                    expanded_from: t.expanded_from.as_deref(),
                })
                .collect(),
        };
        match serde_json::to_string(&doc) {
            Ok(text) => format!("{text}\n"),
            Err(e) => {
                eline!("error: cannot encode the task list: {e}");
                return exit::USAGE;
            }
        }
    } else {
        let rows: Vec<[String; 3]> = plan
            .tasks
            .iter()
            .map(|t| {
                [
                    t.name.clone(),
                    status_of(&t.name).map_or("-", |s| s.as_str()).to_string(),
                    match (t.title.as_deref().map(sanitize), &t.expanded_from) {
                        (Some(title), Some(p)) => format!("{title} (added by {p}'s plan fragment)"),
                        (None, Some(p)) => format!("(added by {p}'s plan fragment)"),
                        (title, None) => title.unwrap_or_default(),
                    },
                ]
            })
            .collect();
        table(&rows)
    };
    output_status(write_stdout(&text), |e| {
        format!("error: cannot write to stdout: {e}")
    })
}

/// The last run's statuses for the plan called `name`, in the repository
/// containing `dir`: none when there was no run there (not worth a word),
/// or (with a warning) when the state cannot be read or is another plan's.
fn statuses(name: &str, dir: &std::path::Path) -> Option<StateMap> {
    if !state::state_path(dir).exists() {
        return None;
    }
    match state::load_for_dir(dir, name) {
        Ok(s) => Some(s),
        Err(e) => {
            let e = e.trim_end_matches("; drawing without status");
            warn(&format!("{e}; listing without status"));
            None
        }
    }
}

/// A title made safe for a terminal, on one line: hidden characters
/// (line breaks, control and format characters) as escapes (`\n`,
/// `\u{202e}`), as `loopc graph` shows them.
fn sanitize(title: &str) -> String {
    loopc::visible::escape(title, &[]).into_owned()
}

/// The rows under a `task  status  title` header, columns aligned.
fn table(rows: &[[String; 3]]) -> String {
    let header = ["task".to_string(), "status".into(), "title".into()];
    let all: Vec<&[String; 3]> = std::iter::once(&header).chain(rows).collect();
    let w0 = all.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
    let w1 = all.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for r in all {
        let line = format!("{:<w0$}  {:<w1$}  {}", r[0], r[1], r[2]);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
