//! The interpreter: `loopc run` (docs/running.md), `loopc status` and `loopc clean`.
//!
//! [`execute`] runs a compiled plan and returns how it ended ([`Ran`]);
//! [`status::status`] and [`clean::clean`] return their reports. The command
//! line (`src/cli/`) prints them and picks the exit status.
//!
//! Four rooms, with arrows that run one way: engine → sys → store,
//! engine → store, ui → store; nothing imports the engine or the ui but
//! this module, which wires them:
//! - [`engine`]: what a run decides and in which order: the scheduler and
//!   its pure state transitions, attempts, gates, merges, the cache and its
//!   replays, budgets, `--dry-run`, the agent protocol;
//! - [`sys`]: the outside world: git, subprocesses and the kill switch,
//!   worktrees, the lock, signals, cleaning up after a killed run;
//! - [`store`]: the files of `.loopc/`: layout and ledgers, state.json (its
//!   document is [`crate::state`]), events.jsonl, progress.md;
//! - [`ui`]: what a person sees: live bars or event lines, the summary table;
//! - [`time`]: timestamps and the display of durations and money, used by
//!   every room (a leaf, so it lives here rather than in one of them);
//! - [`status`], [`clean`], [`logs`], [`board`], [`answer`]: the
//!   other commands' reports and stdout (`logs` reads `.loopc/` and the
//!   lock, as `status` does; `board` reads `.loopc/` only, never the lock;
//!   `answer` writes only `.loopc/answers/`).

pub mod answer;
pub mod board;
pub mod clean;
pub mod engine;
pub mod logs;
pub mod status;
pub mod store;
pub mod sys;
pub mod time;
pub mod ui;

use crate::plan::Plan;
use engine::context::RunCtx;
use engine::worktree_files::WorktreeFiles;
use engine::{cache, dry_run, scheduler};
use std::path::Path;
use std::sync::{Arc, Mutex};
use store::events::{Event, Recorder};
use store::layout::{self, Layout};
use sys::git::Git;
use sys::worktree;
use sys::{interrupt, lock, process, recover};
use ui::display::stderr_line;
use ui::summary;

/// An error that ends `loopc run` before or outside the scheduler: the
/// plan or the repository cannot be used (docs/running.md: exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// One line naming the place (path, branch, task).
    pub message: String,
}

impl RunError {
    fn usage(message: impl Into<String>) -> RunError {
        RunError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// How a run that started ended (docs/running.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every task passed or was replayed from the cache.
    Passed,
    /// Some task failed, was blocked or was skipped.
    Failed,
    /// A budget or the circuit breaker stopped the run.
    Budget,
    /// The integration branch was moved off loopc's work during the run.
    BranchMoved,
    /// Ctrl-C or SIGTERM stopped the run.
    Interrupted,
    /// The run ended, but its state could not be recorded in
    /// `.loopc/state.json`.
    StateNotRecorded,
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// `--dry-run`: nothing ran; the report of what would run or be
    /// replayed from the cache.
    DryRun(String),
    /// The run ended so, with its summary table (for stdout).
    Finished {
        /// How it ended.
        outcome: Outcome,
        /// The summary table: a line per task, then the run's totals.
        summary: String,
    },
}

/// Options of one run (the command line, minus the plan file).
#[derive(Debug, Clone)]
pub struct Options {
    /// `-j N`: tasks at once, overriding `loop.parallel`.
    pub jobs: Option<u32>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--force TASK…` (for the cache).
    pub force: Vec<String>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// The plan file as given (recorded in state.json), relative to the
    /// current directory.
    pub plan_file: String,
    /// A directory in the repository the run uses: the plan's (a plan
    /// names its own project's files), whatever the current directory.
    pub repository: std::path::PathBuf,
    /// The process exit status of each outcome, recorded in state.json and
    /// the `run_finished` event; the command line decides it.
    pub exit_status: fn(Outcome) -> i32,
    /// How progress is shown on stderr (`-q`: none, `-v`: a line per event).
    pub progress: ui::display::Progress,
    /// The plan's syntax tree and sources, which the plan fragments of
    /// tasks with `expands` are compiled with (`None`: such a task fails).
    pub base: Option<crate::expand::Base>,
}

/// A branch that keeps git from creating the branch `branch`, which does
/// not exist: one named as a directory of it (`loop` for `loop/app`: refs
/// are files) or one inside it (`loop/app/x`).
fn blocking_branch(git: &Git, branch: &str) -> Result<Option<String>, String> {
    let parts: Vec<&str> = branch.split('/').collect();
    for end in 1..parts.len() {
        let dir = parts[..end].join("/");
        if git.commit_of(&format!("refs/heads/{dir}"))?.is_some() {
            return Ok(Some(dir));
        }
    }
    Ok(git.branch_refs(&format!("{branch}/"))?.into_iter().next())
}

/// Checks that the repository can be used and where the integration branch
/// starts (`base_commit`: the commit runs start from). Nothing here changes
/// anything; every failure is exit 2.
///
/// `recorded`: the integration-branch head the last run of this branch left
/// (state.json), whose history is loopc's like its cache entries'.
fn preflight(
    git: &Git,
    plan: &Plan,
    base_commit: String,
    recorded: Option<&str>,
) -> Result<Start, RunError> {
    if let Some(what) = git.operation_in_progress().map_err(RunError::usage)? {
        return Err(RunError::usage(format!(
            "the repository at {} is in the middle of {what}; finish or abort it first",
            git.root.display()
        )));
    }
    let branch = &plan.settings.branch;
    if !git.valid_branch_name(branch).map_err(RunError::usage)? {
        return Err(RunError::usage(format!(
            "the integration branch name `{branch}` is not a valid git branch name"
        )));
    }
    for (name, what) in [(branch.as_str(), "integration branch")] {
        if name.starts_with("loopc/") {
            return Err(RunError::usage(format!(
                "the {what} `{name}` is inside loopc's own branch namespace `loopc/`"
            )));
        }
    }
    let refname = format!("refs/heads/{branch}");
    let existing = git.commit_of(&refname).map_err(RunError::usage)?;
    if existing.is_none()
        && let Some(b) = blocking_branch(git, branch).map_err(RunError::usage)?
    {
        return Err(RunError::usage(format!(
            "a branch named `{b}` exists, which keeps git from creating the integration \
             branch `{branch}`; rename it (git branch -m {b} <new-name>) or set another \
             `branch` in the plan's `loop` block"
        )));
    }
    let worktrees = git.worktrees().map_err(RunError::usage)?;
    if let Some(w) = worktrees
        .iter()
        .find(|w| w.branch.as_deref() == Some(&refname))
    {
        return Err(RunError::usage(format!(
            "the integration branch `{branch}` is checked out at {}; loopc must own it during a run, check out another branch there",
            w.path.display()
        )));
    }
    match &existing {
        None => {}
        Some(tip) => {
            // The branch is rebuilt from the base, which must lose nothing
            // but what came through loopc's runs (the cache replays it),
            // whether loopc created it or not: a user may have committed
            // on it after a run.
            let foreign =
                foreign_commits(git, &base_commit, tip, recorded).map_err(RunError::usage)?;
            if let Some((count, first)) = foreign {
                return Err(RunError::usage(format!(
                    "the integration branch `{branch}` has {count} commit(s) that are not on \
                     the base and were not made by loopc (first: {first}); loopc rebuilds its \
                     integration branch from the base and would drop them: merge them into \
                     the base, or move them to another branch (git branch <new-name> \
                     {branch}, then git branch -f {branch} <base>), or choose another \
                     `branch` in the plan's `loop` block"
                )));
            }
        }
    }
    Ok(Start {
        base: base_commit,
        existing,
    })
}

/// Where the integration branch starts, found by [`preflight`].
struct Start {
    /// The base commit.
    base: String,
    /// The integration branch's head before the run (`None`: it does not
    /// exist yet).
    existing: Option<String>,
}

/// Builds the integration branch afresh from the base, the last step before
/// work starts: tasks recorded in the cache are replayed (an unchanged plan
/// reproduces the same commits), the others run. A branch loopc creates is
/// recorded in its ledger (`loopc clean --integration` may remove it), and
/// only if it was created.
fn reset_integration(
    git: &Git,
    layout: &Layout,
    plan: &Plan,
    start: &Start,
) -> Result<(), RunError> {
    let branch = &plan.settings.branch;
    let refname = format!("refs/heads/{branch}");
    if start.existing.as_deref() == Some(start.base.as_str()) {
        return Ok(());
    }
    if start.existing.is_none() {
        // Recorded first, so that a crash right after leaves it recorded.
        layout::record_branch(layout, branch).map_err(RunError::usage)?;
    }
    let moved = git.update_ref(&refname, &start.base, start.existing.as_deref());
    if start.existing.is_none() && !matches!(moved, Ok(true)) {
        layout::forget_branch(layout, branch).map_err(RunError::usage)?;
    }
    match moved {
        Ok(true) => Ok(()),
        Ok(false) => Err(RunError::usage(format!(
            "cannot reset the integration branch `{branch}` to the base (it moved meanwhile)"
        ))),
        Err(e) => Err(RunError::usage(format!(
            "cannot create or reset the integration branch `{branch}`: {e}"
        ))),
    }
}

/// Whether `subject` is the subject of a commit loopc writes on the
/// integration branch: a task's commit or a replay (`loop(<task>): …`), a
/// merge (`loop: merge <task> (…)`) or a REEL spec's move to its next
/// stage (`loop: advance <file> to <stage>/`).
fn is_loopc_subject(subject: &str) -> bool {
    if subject.starts_with("loop: merge ") || subject.starts_with("loop: advance ") {
        return true;
    }
    subject
        .strip_prefix("loop(")
        .and_then(|rest| rest.split_once("): "))
        .is_some_and(|(task, _)| {
            // Task names: identifiers, qualified with `.` in a directory
            // of specs (`auth.a1b2c3d4`).
            !task.is_empty()
                && task
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
        })
}

/// The commits on `tip` that are not on `base` and that did not come
/// through loopc: `None` when there are none, else their number and the
/// first one (`<short hash> <subject>`). Through loopc means reachable from
/// one of its cache entries (`refs/loopc/cache/*`: a task's work, the
/// commits its agent made itself included, and what it was built on) or
/// from `recorded` (the head the last run of this branch left, for a run
/// without the cache), or with a subject loopc writes ([`is_loopc_subject`]).
/// One `git log`, however many entries there are.
fn foreign_commits(
    git: &Git,
    base: &str,
    tip: &str,
    recorded: Option<&str>,
) -> Result<Option<(usize, String)>, String> {
    let entries = format!("--glob={}", cache::REF_PREFIX.trim_end_matches('/'));
    // Only an object id: state.json is a file, not an option.
    let recorded = recorded.filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut args = vec![
        "log",
        "--format=%h %s",
        "--ignore-missing",
        tip,
        "--not",
        base,
        &entries,
    ];
    args.extend(recorded);
    args.push("--");
    let log = git.read(&args)?;
    let foreign: Vec<&str> = log
        .lines()
        .filter(|l| {
            let subject = l.split_once(' ').map_or("", |(_, s)| s);
            !is_loopc_subject(subject)
        })
        .collect();
    Ok(foreign
        .last()
        .map(|first| (foreign.len(), (*first).to_string())))
}

/// The commit runs start from: `loop.base`, else the checked-out commit.
///
/// Errors: the base branch does not exist, or the repository has no
/// commit yet (exit 2; nothing was changed).
pub fn start_commit(git: &Git, plan: &Plan) -> Result<String, RunError> {
    match &plan.settings.base {
        Some(base) => git
            .commit_of(&format!("refs/heads/{base}"))
            .map_err(RunError::usage)?
            .or(git.commit_of(base).map_err(RunError::usage)?)
            .ok_or_else(|| {
                RunError::usage(format!(
                    "the base branch `{base}` does not exist in {}",
                    git.root.display()
                ))
            }),
        None => git
            .commit_of("HEAD")
            .map_err(RunError::usage)?
            .ok_or_else(|| {
                RunError::usage(format!(
                    "the repository at {} has no commit to start from: attempts start from a \
                     commit; commit the project first (`git add -A && git commit -m start`)",
                    git.root.display()
                ))
            }),
    }
}

/// The line after the summary table saying how many worktrees (each with
/// its task branch) of failed or blocked attempts and infrastructure
/// failures are kept, this run's and
/// earlier ones', and how to remove them; `None` when none is.
fn kept_note(layout: &Layout) -> Option<String> {
    let kept = layout::kept(layout).ok()?;
    let here = kept
        .iter()
        .filter(|b| {
            let mut parts = b.rsplitn(3, '/');
            let (Some(id), Some(task)) = (parts.next(), parts.next()) else {
                return false;
            };
            // `<task>.<try>`; `<task>-<n>` for an earlier version's number.
            let dir = if id.bytes().all(|c| c.is_ascii_digit()) {
                format!("{task}-{id}")
            } else {
                format!("{task}.{id}")
            };
            layout.worktrees.join(dir).is_dir()
        })
        .count();
    (here > 0).then(|| {
        format!(
            "kept: {here} worktree(s) of failed or blocked attempts and infrastructure \
             failures (of this run and earlier ones), each with its task branch, in {}; remove \
             them with `loopc clean`\n",
            layout.worktrees.display()
        )
    })
}

/// Resolves what `loop.copy` and `loop.link` bring into every worktree
/// ([`engine::worktree_files`]).
///
/// Errors: a pattern matches nothing or a file cannot be read (exit 2; the
/// command line names where each pattern is written, before this).
fn worktree_files(git: &Git, plan: &Plan) -> Result<WorktreeFiles, RunError> {
    let empty = WorktreeFiles {
        root: git.root.clone(),
        ..WorktreeFiles::default()
    };
    if plan.settings.copy.is_empty() && plan.settings.link.is_empty() {
        return Ok(empty);
    }
    let tracked = git.tracked_paths().map_err(RunError::usage)?;
    engine::worktree_files::resolve(plan, &git.root, &tracked).map_err(|e| match e {
        Ok(unmatched) => RunError::usage(
            unmatched
                .iter()
                .map(|u| u.message(&git.root, None))
                .collect::<Vec<_>>()
                .join("\nerror: "),
        ),
        Err(e) => RunError::usage(e),
    })
}

/// Runs `plan` in the repository containing `options.repository` (or,
/// with `--dry-run`, says what would run), and returns how it ended;
/// relative paths (the plan file, specs) are read from `cwd`.
///
/// Errors: the repository or the options cannot be used; found before any
/// work starts.
pub fn execute(plan: Plan, options: &Options, cwd: &Path) -> Result<Ran, RunError> {
    let git = Git::discover(&options.repository).map_err(RunError::usage)?;
    git.require_min_version().map_err(RunError::usage)?;
    // A repository with nothing to start from is refused before anything
    // is written (no `.loopc/`).
    let base_commit = start_commit(&git, &plan)?;
    let layout = Layout::new(&git.root);
    for name in &options.force {
        if plan.task_index(name).is_none() {
            let hint = match crate::expand::unknown_task_hint(&plan, name) {
                Some(h) => format!(": {h}; `--force` takes the plan's own tasks"),
                None => {
                    crate::check::names::suggest(name, plan.tasks.iter().map(|t| t.name.as_str()))
                        .map_or(String::new(), |s| format!("; did you mean `{s}`?"))
                }
            };
            return Err(RunError::usage(format!(
                "--force: no task named `{name}` in the plan{hint}"
            )));
        }
    }
    // Every check that refuses the run comes first, before anything is
    // cleaned up or changed, and `--dry-run` makes the same ones: a dry run
    // that passes is a run that starts. The locks come first: while another
    // run holds them, what it is doing must not look like a problem here.
    layout.refuse_symlink().map_err(RunError::usage)?;
    layout.check_files().map_err(RunError::usage)?;
    let _locks = if options.dry_run {
        for path in [layout.lock.clone(), lock::repository_lock(&git)] {
            lock::check_free(&path, &git.root).map_err(RunError::usage)?;
        }
        None
    } else {
        layout.create(&git.common_dir).map_err(RunError::usage)?;
        let here = lock::acquire(&layout.lock, "run", &git.root).map_err(RunError::usage)?;
        let repo = lock::acquire(&lock::repository_lock(&git), "run", &git.root)
            .map_err(RunError::usage)?;
        Some((here, repo))
    };
    // The previous run's state: unreadable is refused (the person decides).
    let previous = if layout.state.exists() {
        Some(store::state::load(&layout.state).map_err(RunError::usage)?)
    } else {
        None
    };
    let recorded = previous
        .as_ref()
        .filter(|p| p.integration_branch == plan.settings.branch)
        .map(|p| p.head_commit.as_str());
    let start = preflight(&git, &plan, base_commit, recorded)?;
    let slug = worktree::slug(&plan.name);
    let loopc_branches =
        worktree::check_namespace(&git, &slug, plan.tasks.iter().map(|t| t.name.as_str()))
            .map_err(RunError::usage)?;
    let brought = worktree_files(&git, &plan)?;
    // `-q`: errors and the output asked for only, no warnings.
    let warn = |w: &str| {
        if options.progress != ui::display::Progress::Off {
            stderr_line(w);
        }
    };
    // Attempts start from a commit: say once what of the checkout they do
    // not see (a warning; the run goes on).
    if let (Ok(changed), Ok(untracked)) = (git.changed_tracked_paths(), git.untracked_paths())
        && let Some(w) = engine::uncommitted::warning(
            &plan,
            &cwd.join(&options.plan_file),
            &git.root,
            &changed,
            &untracked,
            &brought.paths(),
            &start.base,
        )
    {
        warn(&w);
    }
    if let Some(p) = &plan.pipeline
        && p.specs.is_empty()
    {
        let stages: Vec<String> = p
            .worked
            .iter()
            .filter_map(|&i| crate::origin::STAGES.get(i))
            .map(|s| format!("{s}/"))
            .collect();
        warn(&format!(
            "warning: no spec in the worked stage(s) {} of {}: no spec of the tree runs \
             (`--stage` or `loop.stages` names others)",
            stages.join(", "),
            p.dir.display()
        ));
    }
    if plan.pipeline.is_some()
        && let (Ok(changed), Ok(untracked)) = (git.changed_tracked_paths(), git.untracked_paths())
        && let Some(w) =
            engine::uncommitted::specs_warning(&plan, cwd, &git.root, &changed, &untracked)
    {
        warn(&w);
    }
    if options.dry_run {
        let store = if options.no_cache {
            None
        } else {
            Some(cache::Store::load(&git, &layout).map_err(RunError::usage)?)
        };
        return Ok(Ran::DryRun(dry_run::report(
            &plan,
            &options.force,
            &brought.digests,
            &git,
            store.as_ref(),
            &start.base,
            engine::expand::Growth::new(options.base.clone()),
        )));
    }
    // A run that never finished was killed, and is cleaned up after.
    if let Some(previous) = &previous
        && previous.status == crate::state::RunStatus::Running
        && options.progress != ui::display::Progress::Off
    {
        stderr_line(&format!(
            "note: the previous run (started {}) did not finish: loopc was killed; \
             cleaning up after it and resuming (passed tasks are replayed from the cache)",
            previous.started_at
        ));
    }
    let reconciled = recover::reconcile(&git, &layout, &slug).map_err(RunError::usage)?;
    // Notes are for the person watching: `-q` leaves them out.
    if options.progress != ui::display::Progress::Off {
        for note in &reconciled.notes {
            stderr_line(&format!("note: {note}"));
        }
    }
    let cache_use = scheduler::CacheUse {
        store: if options.no_cache {
            None
        } else {
            Some(cache::Store::load(&git, &layout).map_err(RunError::usage)?)
        },
        forced: plan
            .tasks
            .iter()
            .map(|t| options.force.iter().any(|f| f == &t.name))
            .collect(),
        copied: brought.digests.clone(),
    };
    let parallel = options.jobs.unwrap_or(plan.settings.parallel).max(1);
    // Every file the run writes must be writable before anything moves: a
    // run that cannot start changes nothing.
    store::state::probe(&layout.state).map_err(RunError::usage)?;
    let events = Recorder::open(
        &layout.events,
        Box::new(ui::display::Ui::for_progress(options.progress)),
    )
    .map_err(RunError::usage)?;
    // A new run starts new logs (an earlier run's are kept) and a new
    // progress file.
    let previous_run = previous.as_ref().and_then(|p| p.run);
    layout
        .keep_earlier_logs(previous_run)
        .map_err(RunError::usage)?;
    // The run's number names its worktrees and task branches: above any an
    // earlier run left (kept worktrees, ledger) and any the plan's task
    // branches or another checkout's ledger hold, so names never collide.
    let run = layout.next_run(
        previous_run,
        &worktree::taken_names(&git, &layout, &slug, &loopc_branches).map_err(RunError::usage)?,
    );
    std::fs::write(&layout.progress, "")
        .map_err(|e| RunError::usage(format!("cannot write {}: {e}", layout.progress.display())))?;
    reset_integration(&git, &layout, &plan, &start)?;
    let head = start.base;
    let control = Arc::new(process::Control::for_run());
    let mut git = git;
    git.bind(Arc::clone(&control));
    let ctx = Arc::new(RunCtx {
        slug,
        run,
        integration_ref: format!("refs/heads/{}", plan.settings.branch),
        plan,
        git,
        layout,
        control,
        events: Arc::new(events),
        worktree_lock: Arc::new(Mutex::new(())),
        brought,
        pool: Arc::new(engine::pool::Pool::new(parallel.max(1) as usize)),
    });
    ctx.events.emit(Event::RunStarted {
        plan: ctx.plan.name.clone(),
        branch: ctx.plan.settings.branch.clone(),
        head: head.clone(),
        parallel,
    });
    interrupt::install();
    let mut state = scheduler::initial_state(&ctx, &options.plan_file, &head);
    state.run = Some(run);
    // A task that was waiting for an agent's usage limit waits out the rest.
    if let Some(previous) = &previous {
        scheduler::carry_waits(previous, &mut state);
    }
    let finish = scheduler::run(
        Arc::clone(&ctx),
        parallel,
        state,
        cache_use,
        options.exit_status,
        engine::expand::Growth::new(options.base.clone()),
    );
    ctx.events.ui().finish();
    let mut table = summary::table(&finish.state);
    if let Some(note) = kept_note(&ctx.layout) {
        table.push_str(&note);
    }
    if let Some(command) = &ctx.plan.settings.notify {
        // `+` cannot start a task name: no task's log directory takes it.
        let log = ctx.layout.logs.join("+notify.log");
        if let Err(e) = engine::notify::notify(command, &ctx.git.root, &finish.state, &log) {
            warn(&format!("warning: {e}"));
        }
    }
    Ok(Ran::Finished {
        outcome: finish.outcome,
        summary: table,
    })
}

#[cfg(test)]
mod tests {
    use super::is_loopc_subject;

    #[test]
    fn loopc_subjects() {
        assert!(is_loopc_subject("loop(a): Task A"));
        assert!(is_loopc_subject("loop(my-task_2): multi line title"));
        assert!(is_loopc_subject(
            "loop(auth.a1b2c3d4): from a directory of specs"
        ));
        assert!(is_loopc_subject("loop: merge a (Task A)"));
        assert!(is_loopc_subject(
            "loop: advance specs/inflight/auth.md to review/"
        ));
        assert!(!is_loopc_subject("loop(): x"));
        assert!(!is_loopc_subject("loop(a b): x"));
        assert!(!is_loopc_subject("loop(a) x"));
        assert!(!is_loopc_subject("my work"));
        assert!(!is_loopc_subject("Merge branch 'loop/x'"));
    }
}
