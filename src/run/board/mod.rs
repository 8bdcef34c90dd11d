//! `loopc board`: what the terminal board shows, read from `.loopc/` and,
//! for a REEL tree, from its stage directories (`docs/board.md`).
//!
//! [`load`] builds a [`Board`] (columns of cards) from files only: it takes
//! no lock and starts no process, so it can be called every refresh while a
//! run goes on in another terminal. [`view`] draws a board into a ratatui
//! frame; the command line owns the terminal and the key loop.

pub mod view;

use super::store::layout::Layout;
use super::ui::display::sanitize_line;
use crate::state::{RunState, TaskState, TaskStatus};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The stage directories of a REEL spec tree, in pipeline order.
pub use crate::origin::STAGES;

/// What the board shows: a heading line and columns of cards.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Board {
    /// One line about the run (plan, status, spent) or the spec tree.
    pub heading: String,
    /// Why there is nothing to show yet (no run, unreadable state), if so.
    pub notice: Option<String>,
    /// The columns, left to right.
    pub columns: Vec<Column>,
}

/// One column: a task state (or REEL stage) and its cards.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Column {
    /// The column's heading (`running`, `inflight`, …).
    pub name: String,
    /// Its cards, in the plan's topological order (stages: by file name).
    pub cards: Vec<Card>,
}

/// One card: a task, or a REEL spec file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Card {
    /// The task's name (a spec: its file name).
    pub name: String,
    /// The task's title, or a spec's task counts.
    pub title: Option<String>,
    /// Its state word (`running`, `failed`, …), or a spec's stage.
    pub status: String,
    /// Label–value lines shown for the selected card: attempts, cost, why,
    /// the last output line, the log directory.
    pub details: Vec<(String, String)>,
}

/// What to show: the run of the repository around a directory, or a REEL
/// tree's specs by stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The tasks of the last (or current) run, by state. The path is the
    /// repository's top level (`.loopc/` lies there).
    Run(PathBuf),
    /// The specs of a REEL tree by stage: the tree's directory (holding
    /// `todo/`, `inflight/`, …) and the repository's top level, whose state
    /// gives each spec's task counts.
    Specs {
        /// The spec tree.
        dir: PathBuf,
        /// The repository's top level.
        root: PathBuf,
    },
}

/// Whether `dir` is a REEL spec tree: it has at least one stage directory.
pub fn is_spec_tree(dir: &Path) -> bool {
    crate::reel::is_spec_tree(dir)
}

/// What `loopc board [DIR]` shows, from the directory it runs in (`cwd`)
/// and the `DIR` it was given: a REEL tree's stages when `DIR` is one (it
/// has a stage directory), else the run of the repository around `DIR` (or
/// `cwd`).
///
/// Errors: `DIR` is not a directory, or not inside a git repository.
pub fn source(cwd: &Path, dir: Option<&Path>) -> Result<Source, String> {
    let dir = match dir {
        Some(d) => {
            let d = cwd.join(d);
            if !d.is_dir() {
                return Err(format!("{} is not a directory", d.display()));
            }
            d
        }
        None => cwd.to_path_buf(),
    };
    let root = super::sys::git::Git::discover(&dir)?.root;
    Ok(if is_spec_tree(&dir) {
        Source::Specs { dir, root }
    } else {
        Source::Run(root)
    })
}

/// The board for `source`, read now. Never fails: what cannot be read is
/// said in [`Board::notice`], so a board opened before the first run shows
/// that and fills in on a later refresh.
pub fn load(source: &Source) -> Board {
    match source {
        Source::Run(root) => run_board(root),
        Source::Specs { dir, root } => spec_board(dir, root),
    }
}

/// The state of the repository at `root`, or why there is none.
fn read_state(root: &Path) -> Result<RunState, String> {
    let layout = Layout::of_checkout(root)?;
    if !layout.state.exists() {
        return Err(format!(
            "no run yet: waiting for {} (start one with `loopc run`)",
            layout.state.display()
        ));
    }
    super::store::state::load(&layout.state)
}

/// The columns of a run board, and where each task state goes.
const RUN_COLUMNS: [&str; 5] = ["pending", "running", "passed", "failed", "skipped"];

fn column_of(status: TaskStatus) -> usize {
    match status {
        TaskStatus::Pending => 0,
        TaskStatus::Running => 1,
        TaskStatus::Passed | TaskStatus::Cached | TaskStatus::AlreadySatisfied => 2,
        TaskStatus::Failed
        | TaskStatus::Blocked
        | TaskStatus::Interrupted
        | TaskStatus::NeedsHuman
        | TaskStatus::CompletedUnreviewed => 3,
        TaskStatus::Skipped => 4,
    }
}

fn run_board(root: &Path) -> Board {
    let mut board = Board {
        columns: RUN_COLUMNS
            .iter()
            .map(|name| Column {
                name: (*name).to_string(),
                cards: Vec::new(),
            })
            .collect(),
        ..Board::default()
    };
    let state = match read_state(root) {
        Ok(state) => state,
        Err(why) => {
            board.heading = format!("loopc board: {}", root.display());
            board.notice = Some(why);
            return board;
        }
    };
    board.heading = heading(&state);
    for task in &state.tasks {
        board.columns[column_of(task.status)]
            .cards
            .push(task_card(root, task));
    }
    board
}

/// `plan NAME: running · 3/7 done · 4 agent attempts · $0.12 · 2m 10s`
/// (`1 agent attempt`): the budget's `iterations`, which command tasks'
/// attempts do not count against (a card's `attempts` counts them all).
fn heading(state: &RunState) -> String {
    let done = state.tasks.iter().filter(|t| t.status.is_done()).count();
    let n = state.spent.iterations;
    let mut line = format!(
        "plan {}: {} · {done}/{} done · {n} agent attempt{} · {} · {}",
        sanitize_line(&state.plan),
        state.status.as_str(),
        state.tasks.len(),
        if n == 1 { "" } else { "s" },
        super::time::dollars(state.spent.cost_micro_usd),
        super::time::human_duration(std::time::Duration::from_millis(state.spent.elapsed_ms)),
    );
    if let Some(reason) = &state.stop_reason {
        line.push_str(&format!(" · {}", sanitize_line(reason)));
    }
    line
}

fn task_card(root: &Path, task: &TaskState) -> Card {
    let mut details = vec![
        ("state".to_string(), task.status.as_str().to_string()),
        ("attempts".to_string(), task.attempts.to_string()),
        (
            "cost".to_string(),
            if task.cost_unknown {
                format!(
                    "{} (some unknown)",
                    super::time::dollars(task.cost_micro_usd)
                )
            } else {
                super::time::dollars(task.cost_micro_usd)
            },
        ),
    ];
    if let Some(until) = &task.waiting_until {
        details.push(("waiting until".into(), sanitize_line(until)));
    }
    if let Some(reason) = &task.reason {
        details.push(("why".into(), sanitize_line(reason)));
    }
    if let Some(summary) = &task.summary {
        details.push(("summary".into(), sanitize_line(summary)));
    }
    if let Some(logs) = &task.logs {
        let dir = root.join(logs);
        if let Some(line) = last_output_line(&dir) {
            details.push(("last output".into(), line));
        }
        details.push(("logs".into(), sanitize_line(logs)));
    } else if task.status == TaskStatus::Cached {
        details.push((
            "logs".into(),
            format!(
                "none in this run (replayed from the cache): `loopc logs {}` shows an earlier run's",
                sanitize_line(&task.name)
            ),
        ));
    }
    Card {
        name: task.name.clone(),
        title: task.title.as_deref().map(sanitize_line),
        status: task.status.as_str().to_string(),
        details,
    }
}

/// How much of a log file's end is read for its last line.
const TAIL_BYTES: u64 = 8 * 1024;

/// The last non-blank line of the most recently written output file in an
/// attempt's log directory (`*.log`, `*.stdout`, `*.stderr`: its agent's or
/// command's output while it runs, a gate's log after; not the prompt or
/// the diff it was given), made safe for one terminal line; `None` when the
/// directory has no such line.
pub fn last_output_line(dir: &Path) -> Option<String> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            [".log", ".stdout", ".stderr"]
                .iter()
                .any(|ext| name.ends_with(ext))
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            (meta.is_file() && meta.len() > 0).then(|| (meta.modified().ok(), e.path()))
        })
        .max()?
        .1;
    let mut file = std::fs::File::open(newest).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(sanitize_line)
}

/// A REEL tree's board: one column per stage directory that exists, a card
/// per spec file, with its tasks' states from the last run when it ran them.
fn spec_board(dir: &Path, root: &Path) -> Board {
    let state = read_state(root).ok();
    let mut board = Board {
        heading: format!("specs in {}", dir.display()),
        ..Board::default()
    };
    if let Some(state) = &state {
        board.heading.push_str(&format!(" · {}", heading(state)));
    }
    for stage in STAGES {
        let stage_dir = dir.join(stage);
        if !stage_dir.is_dir() {
            continue;
        }
        let files = crate::reel::spec_files(&stage_dir).unwrap_or_default();
        let cards = files
            .iter()
            .map(|path| spec_card(path, stage, state.as_ref()))
            .collect();
        board.columns.push(Column {
            name: stage.to_string(),
            cards,
        });
    }
    if board.columns.is_empty() {
        board.notice = Some(format!(
            "{} has none of the stage directories {}",
            dir.display(),
            STAGES.join(", ")
        ));
    }
    board
}

fn spec_card(path: &Path, stage: &str, state: Option<&RunState>) -> Card {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = crate::origin::stem_of(path);
    let prefix = format!("{stem}.");
    let mut details = vec![(
        "file".to_string(),
        sanitize_line(&path.display().to_string()),
    )];
    let mut title = None;
    if let Some(state) = state {
        let tasks: Vec<&TaskState> = state
            .tasks
            .iter()
            .filter(|t| t.name.starts_with(&prefix))
            .collect();
        if !tasks.is_empty() {
            let done = tasks.iter().filter(|t| t.status.is_done()).count();
            title = Some(format!("{done}/{} tasks done", tasks.len()));
            for t in tasks {
                details.push((
                    sanitize_line(&t.name[prefix.len()..]),
                    format!(
                        "{}{}",
                        t.status.as_str(),
                        t.title
                            .as_deref()
                            .map(|s| format!(" · {}", sanitize_line(s)))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
    }
    Card {
        name: sanitize_line(&file),
        title,
        status: stage.to_string(),
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_output_line_is_the_newest_files_last_non_blank_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty.log"), "").unwrap();
        std::fs::write(dir.path().join("agent.stdout"), "one\ntwo\x1b[31m\n\n  \n").unwrap();
        // Written last (or in the same tick, and later by name), but input.
        std::fs::write(dir.path().join("prompt.md"), "not output\n").unwrap();
        assert_eq!(
            last_output_line(dir.path()).as_deref(),
            Some("two\\u{1b}[31m")
        );
        assert_eq!(last_output_line(&dir.path().join("missing")), None);
    }

    #[test]
    fn a_long_log_is_read_from_its_end_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = "x".repeat(100_000);
        text.push_str("\nthe end\n");
        std::fs::write(dir.path().join("command.log"), text).unwrap();
        assert_eq!(last_output_line(dir.path()).as_deref(), Some("the end"));
    }

    #[test]
    fn a_cached_cards_logs_line_says_where_the_logs_are() {
        let task: TaskState = serde_json::from_value(serde_json::json!({
            "name": "t", "title": null, "status": "cached", "attempts": 0,
            "started_at": null, "finished_at": null, "duration_ms": 0,
            "cost_micro_usd": 0, "cost_unknown": false, "summary": null,
            "reason": null, "commit": null, "worktree": null, "logs": null
        }))
        .unwrap();
        let card = task_card(Path::new("/repo"), &task);
        let logs = card.details.iter().find(|(l, _)| l == "logs").unwrap();
        assert!(
            logs.1.contains("`loopc logs t` shows an earlier run's"),
            "{logs:?}"
        );
    }

    #[test]
    fn the_heading_counts_one_attempt_in_the_singular() {
        let mut state: RunState = serde_json::from_value(serde_json::json!({
            "version": 1, "plan": "p", "plan_file": "p.loop", "integration_branch": "loop/p",
            "start_commit": "", "head_commit": "", "status": "running", "stop_reason": null,
            "exit_code": null, "started_at": "", "finished_at": null, "tasks": [],
            "spent": {"iterations": 0, "cost_micro_usd": 0, "elapsed_ms": 0,
                      "consecutive_failures": 0}
        }))
        .unwrap();
        state.spent.iterations = 1;
        assert!(
            heading(&state).contains(" · 1 agent attempt · "),
            "{}",
            heading(&state)
        );
        state.spent.iterations = 2;
        assert!(
            heading(&state).contains(" · 2 agent attempts · "),
            "{}",
            heading(&state)
        );
    }

    #[test]
    fn a_repository_without_a_run_shows_a_notice_and_empty_columns() {
        let dir = tempfile::tempdir().unwrap();
        let board = load(&Source::Run(dir.path().to_path_buf()));
        assert!(board.notice.unwrap().starts_with("no run yet"));
        let names: Vec<&str> = board.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, RUN_COLUMNS);
        assert!(board.columns.iter().all(|c| c.cards.is_empty()));
    }
}
