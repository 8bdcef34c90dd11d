//! The interpreter: `loopc run` (docs/running.md), `loopc status` and `loopc clean`.
//!
//! [`start`] makes the checks that refuse a run, [`Started::recover`]
//! cleans up after a killed one and [`Recovered::run`] runs the plan and
//! returns how it ended ([`Ran`]);
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
//!   `answer` writes only `.loopc/answers/`);
//! - [`standby`]: `loopc run --watch`, waiting between rounds for a
//!   change to what the plan reads (it starts no run: `cli` loops);
//! - [`report`]: `loopc report`, a run as an HTML page or JSON, read from
//!   `.loopc/` through the store (drawn with [`crate::render`]).

pub mod answer;
mod before;
pub mod board;
pub mod clean;
pub mod engine;
pub mod logs;
mod preflight;
pub mod report;
pub mod standby;
pub mod status;
pub mod store;
pub mod sys;
pub mod time;
pub mod ui;

use crate::plan::Plan;
use crate::state::RunState;
use before::{check_named, check_retried, check_skipped, other_plan, warnings};
use engine::context::RunCtx;
pub use engine::remember::RetryFailed;
use engine::worktree_files::WorktreeFiles;
use engine::{cache, dry_run, scheduler};
pub use preflight::start_commit;
use preflight::{Start, preflight, reset_integration};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use store::events::{Event, Recorder, Watcher};
use store::layout::{self, Layout};
use sys::git::Git;
use sys::worktree;
use sys::{interrupt, lock, process, recover};
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

/// How a run that started ended ([`Recovered::run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// How it ended.
    pub outcome: Outcome,
    /// The summary table: a line per task, then the run's totals (for stdout).
    pub summary: String,
    /// Warnings of the run's end (the notify command failed), for stderr.
    pub warnings: Vec<String>,
    /// The repository's top directory.
    pub root: std::path::PathBuf,
    /// Each task of the run (fragments' too) and how it ended, in the
    /// plan's order (`--watch`'s line per round counts them).
    pub tasks: Vec<RanTask>,
    /// The checked-out commit already contains the integration branch's
    /// head: there is nothing to merge from it.
    pub merged_already: bool,
}

/// One task of a finished run, as `--watch`'s line per round counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RanTask {
    /// Its name.
    pub name: String,
    /// How it ended.
    pub status: crate::state::TaskStatus,
    /// Whether it had an attempt in this run (one that ended, or was
    /// interrupted), or verified (`already_satisfied`): not one that was
    /// replayed, skipped, or not run for its remembered failures.
    pub attempted: bool,
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
    /// `--skip-gate GATE`, once per gate: gates this run does not run (docs/cache.md).
    pub skip_gates: Vec<String>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--retry-failed [TASK…]`: tasks that ran out of attempts under an
    /// unchanged key that run again (docs/resilience.md).
    pub retry_failed: RetryFailed,
    /// `--verify`: every task verifies first, as with `verify = true`
    /// (docs/running.md, "Already satisfied: `verify`").
    pub verify: bool,
    /// The plan file as given (recorded in state.json), relative to the
    /// current directory.
    pub plan_file: String,
    /// The repository the run uses ([`Git::discover`] from the plan's
    /// directory: a plan names its own project's files), whatever the
    /// current directory.
    pub repository: Git,
    /// The commit runs start from when the caller has just found it with
    /// [`start_commit`] (the command line does, to check the agents'
    /// scripts are in it); `None`: [`start`] finds it.
    pub start_commit: Option<String>,
    /// The process exit status of each outcome, recorded in state.json and
    /// the `run_finished` event; the command line decides it.
    pub exit_status: fn(Outcome) -> i32,
    /// The plan's syntax tree and sources, which the plan fragments of
    /// tasks with `expands` are compiled with (`None`: such a task fails).
    pub base: Option<crate::expand::Base>,
}

/// The line after the summary table saying how many worktrees (each with
/// its task branch) of failed or blocked attempts, of attempts that asked
/// a question (answered or not: docs/language.md "Answers without a
/// person") and of infrastructure failures are kept, this run's and
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
        let worktrees = if here == 1 { "worktree" } else { "worktrees" };
        format!(
            "kept: {here} {worktrees} of failed or blocked attempts, questions and \
             infrastructure failures (of this run and earlier ones), each with its task branch, in {}; remove \
             them with `loopc clean`\n",
            ui::display::sanitize_line(&layout.worktrees.display().to_string())
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

/// A run whose every refusing check passed ([`start`]): nothing has
/// changed yet but `.loopc/` and the locks it holds until it is dropped.
pub struct Started {
    /// Warnings for the person before the run: uncommitted changes the
    /// attempts will not see, a spec tree stage with no spec (each line
    /// starts with `warning: `); and notes (`note: `): a task
    /// `--retry-failed` names has no remembered failure.
    pub warnings: Vec<String>,
    plan: Plan,
    options: Options,
    git: Git,
    layout: Layout,
    _locks: Option<(lock::RepoLock, lock::RepoLock)>,
    /// The last run's state, but for the tasks it has nothing to carry
    /// over for ([`carried`]).
    previous: Option<RunState>,
    start: Start,
    slug: String,
    loopc_branches: Vec<String>,
    brought: WorktreeFiles,
    around: cache::Surroundings,
    /// Per task that had some: the gates `--skip-gate` took off it.
    skipped: crate::plan::SkippedGates,
    /// The plan file as the run read it (kept with its logs for reports).
    plan_path: PathBuf,
}

/// A started run that has cleaned up after a killed one ([`Started::recover`]).
pub struct Recovered {
    /// Notes for the person watching (the previous run did not finish, what
    /// was cleaned up after it), without the `note: ` prefix.
    pub notes: Vec<String>,
    started: Started,
}

/// Takes the run's locks (a dry run only checks that they are free).
fn take_locks(
    git: &Git,
    layout: &Layout,
    dry_run: bool,
) -> Result<Option<(lock::RepoLock, lock::RepoLock)>, RunError> {
    if dry_run {
        for path in [layout.lock.clone(), lock::repository_lock(git)] {
            lock::check_free(&path, &git.root).map_err(RunError::usage)?;
        }
        return Ok(None);
    }
    layout.create(&git.common_dir).map_err(RunError::usage)?;
    let here = lock::acquire(&layout.lock, "run", &git.root).map_err(RunError::usage)?;
    let repo =
        lock::acquire(&lock::repository_lock(git), "run", &git.root).map_err(RunError::usage)?;
    Ok(Some((here, repo)))
}

/// Makes every check that refuses a run of `plan` in the repository
/// containing `cwd`, before anything is cleaned up or changed (`--dry-run`
/// makes the same ones: a dry run that passes is a run that starts). The
/// locks come first: while another run holds them, what it is doing must
/// not look like a problem here.
///
/// Errors: the repository or the options cannot be used (exit 2).
pub fn start(mut plan: Plan, options: &Options, cwd: &Path) -> Result<Started, RunError> {
    let git = options.repository.clone();
    git.require_min_version().map_err(RunError::usage)?;
    // A repository with nothing to start from is refused before anything
    // is written (no `.loopc/`).
    let layout = Layout::of_checkout(&git.root).map_err(RunError::usage)?;
    let base_commit = match &options.start_commit {
        Some(commit) => commit.clone(),
        None => start_commit(&git, &plan, None)?,
    };
    check_named(&plan, &options.force, "--force")?;
    check_retried(&plan, &options.retry_failed)?;
    check_skipped(&plan, &options.skip_gates)?;
    let skipped = plan.skip_gates(&options.skip_gates);
    if options.verify {
        plan.verify_all();
    }
    layout.refuse_symlink().map_err(RunError::usage)?;
    layout.check_files().map_err(RunError::usage)?;
    let locks = take_locks(&git, &layout, options.dry_run)?;
    // The previous run's state: unreadable is refused (the person decides).
    let previous = if layout.state.exists() {
        Some(carried(
            store::state::load(&layout.state).map_err(RunError::usage)?,
        ))
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
    // Answers are part of what a task runs with (its key): an answered
    // question is never replayed over.
    let around = cache::Surroundings {
        copied: brought.digests.clone(),
        answers: store::answers::digests(&layout).map_err(RunError::usage)?,
    };
    let mut warnings = warnings(&git, &plan, options, cwd, &start, &brought);
    warnings.extend(other_plan(
        &git,
        &plan,
        previous.as_ref(),
        &cwd.join(&options.plan_file),
    ));
    for name in engine::remember::unremembered(&options.retry_failed, previous.as_ref()) {
        warnings.push(format!(
            "note: --retry-failed: task `{name}` has no remembered failure: it runs, or is \
             replayed from the cache, as it would without the flag"
        ));
    }
    Ok(Started {
        warnings,
        plan,
        options: options.clone(),
        git,
        layout,
        _locks: locks,
        previous,
        start,
        slug,
        loopc_branches,
        brought,
        around,
        skipped,
        plan_path: cwd.join(&options.plan_file),
    })
}

impl Started {
    /// `--dry-run`: what would run or be replayed from the cache; runs nothing.
    ///
    /// Errors: the cache cannot be read.
    pub fn dry_run(self) -> Result<String, RunError> {
        let store = if self.options.no_cache {
            None
        } else {
            Some(cache::Store::load(&self.git, &self.layout).map_err(RunError::usage)?)
        };
        let remembered: std::collections::HashMap<String, crate::state::Remembered> = self
            .previous
            .iter()
            .flat_map(|p| &p.tasks)
            .filter_map(|t| Some((t.name.clone(), t.remembered.clone()?)))
            .collect();
        // The waits `run` would carry over (`carry_waits`): pending tasks'.
        let waits: std::collections::HashMap<String, (String, u64)> = self
            .previous
            .iter()
            .flat_map(|p| &p.tasks)
            .filter(|t| t.status == crate::state::TaskStatus::Pending)
            .filter_map(|t| {
                let until = crate::run::time::parse_rfc3339(t.waiting_until.as_deref()?)?;
                let agent = t.waiting_for.clone()?;
                let task = &self.plan.tasks[self.plan.task_index(&t.name)?];
                scheduler::uses_agent(task, &agent).then(|| (t.name.clone(), (agent, until)))
            })
            .collect();
        let memory = dry_run::Memory {
            remembered: &remembered,
            retry: &self.options.retry_failed,
            waits: &waits,
        };
        Ok(dry_run::report(
            &self.plan,
            (&self.options.force, &self.options.skip_gates, &self.skipped),
            memory,
            &self.around,
            &self.git,
            store.as_ref(),
            &self.start.base,
            engine::expand::Growth::new(self.options.base.clone(), self.options.verify),
        ))
    }

    /// Cleans up after a run that never finished (it was killed): its
    /// worktrees, task branches and half-made state ([`recover::reconcile`]).
    ///
    /// Errors: what it left cannot be cleaned up.
    pub fn recover(self) -> Result<Recovered, RunError> {
        let mut notes = Vec::new();
        if let Some(previous) = &self.previous
            && previous.status == crate::state::RunStatus::Running
        {
            notes.push(format!(
                "the previous run (started {}) did not finish: loopc was killed; \
                 cleaning up after it and resuming (passed tasks are replayed from the cache)",
                previous.started_at
            ));
        }
        let reconciled =
            recover::reconcile(&self.git, &self.layout, &self.slug).map_err(RunError::usage)?;
        notes.extend(reconciled.notes);
        Ok(Recovered {
            notes,
            started: self,
        })
    }
}

impl Recovered {
    /// Runs the plan, showing its progress through `display`, and returns
    /// how it ended.
    ///
    /// Errors: a file of `.loopc/` cannot be written, or the integration
    /// branch cannot be reset; found before any work starts.
    pub fn run(self, display: Box<dyn Watcher>) -> Result<Ran, RunError> {
        let s = self.started;
        let options = &s.options;
        // An unchanged rerun takes its run entry whole: no task's entry is
        // read, the branch moves once.
        let whole = (!options.no_cache && options.force.is_empty())
            .then(|| engine::run_entry::run_key(&s.plan, &s.start.base, &s.around))
            .flatten();
        let whole_hit = whole.and_then(|k| {
            let memo = engine::run_entry::memo_path(&s.layout.dir, &s.plan);
            engine::run_entry::lookup(&s.git, &s.plan, &k, &memo)
        });
        let cache_use = scheduler::CacheUse {
            store: if options.no_cache || whole_hit.is_some() {
                None
            } else {
                Some(cache::Store::load(&s.git, &s.layout).map_err(RunError::usage)?)
            },
            forced: s
                .plan
                .tasks
                .iter()
                .map(|t| options.force.iter().any(|f| f == &t.name))
                .collect(),
            around: s.around.clone(),
            skip_gates: options.skip_gates.clone(),
            whole,
            whole_hit,
            retry_failed: options.retry_failed.clone(),
        };
        let parallel = options.jobs.unwrap_or(s.plan.settings.parallel).max(1);
        // Every file the run writes must be writable before anything moves: a
        // run that cannot start changes nothing.
        store::state::probe(&s.layout.state).map_err(RunError::usage)?;
        let events = Recorder::open(&s.layout.events, display).map_err(RunError::usage)?;
        // A new run starts new logs (an earlier run's are kept) and a new
        // progress file.
        let previous_run = s.previous.as_ref().and_then(|p| p.run);
        s.layout
            .keep_earlier_logs(previous_run)
            .map_err(RunError::usage)?;
        // A copy for this run's reports only: a failure loses no state.
        let _ = s.layout.keep_run_plan(&s.plan_path);
        // The run's number names its worktrees and task branches: above any an
        // earlier run left (kept worktrees, ledger) and any the plan's task
        // branches or another checkout's ledger hold, so names never collide.
        let taken = worktree::taken_names(&s.git, &s.layout, &s.slug, &s.loopc_branches)
            .map_err(RunError::usage)?;
        let run = s.layout.next_run(previous_run, &taken);
        std::fs::write(&s.layout.progress, "").map_err(|e| {
            RunError::usage(format!("cannot write {}: {e}", s.layout.progress.display()))
        })?;
        // Rebuilt from the base; with a run entry, moved to its head at once.
        let target = cache_use
            .whole_hit
            .as_ref()
            .map_or(&s.start.base, |hit| &hit.head);
        reset_integration(&s.git, &s.layout, &s.plan, &s.start, target)?;
        let head = s.start.base.clone();
        let plan_path = engine::uncommitted::repo_relative(&s.plan_path, &s.git.root);
        let control = Arc::new(process::Control::for_run());
        let mut git = s.git;
        git.bind(Arc::clone(&control));
        let plan_file = plan_path.clone().filter(|p| p.ends_with(".loop"));
        let ctx = Arc::new(RunCtx {
            plan_file,
            slug: s.slug,
            run,
            integration_ref: format!("refs/heads/{}", s.plan.settings.branch),
            plan: s.plan,
            git,
            layout: s.layout,
            control,
            events: Arc::new(events),
            worktree_lock: Arc::new(Mutex::new(())),
            brought: s.brought,
            pool: Arc::new(engine::pool::Pool::new(parallel.max(1) as usize)),
        });
        let ran = schedule(
            &ctx,
            options,
            parallel,
            (s.previous, &s.skipped, plan_path),
            &head,
            cache_use,
        );
        drop(s._locks);
        Ok(ran)
    }
}

/// The part of the last run's state that a run reads: all but its tasks,
/// and of those the ones that were waiting for a limit or remember
/// failures ([`scheduler::carry_waits`],
/// [`scheduler::transition::carry_remembered`], `--retry-failed`, the dry
/// run's memory), usually few. The rest goes at once: it is as large as
/// the plan (some 700 bytes a task in memory), as the run's own state is.
/// The tasks an earlier run carried past the last one (`carried`) join
/// them where the last run did not include them.
fn carried(mut previous: RunState) -> RunState {
    previous
        .tasks
        .retain(|t| t.remembered.is_some() || t.waiting_until.is_some());
    let carried = std::mem::take(&mut previous.carried);
    let known: std::collections::HashSet<String> =
        previous.tasks.iter().map(|t| t.name.clone()).collect();
    previous
        .tasks
        .extend(carried.into_iter().filter(|t| !known.contains(&t.name)));
    previous.tasks.shrink_to_fit();
    previous
}

/// Announces the run, hands it to the scheduler and, once it ended, writes
/// its summary and runs the notify command.
fn schedule(
    ctx: &Arc<RunCtx>,
    options: &Options,
    parallel: u32,
    (previous, skipped, plan_path): (Option<RunState>, &crate::plan::SkippedGates, Option<String>),
    head: &str,
    cache_use: scheduler::CacheUse,
) -> Ran {
    ctx.events.emit(Event::RunStarted {
        plan: ctx.plan.name.clone(),
        branch: ctx.plan.settings.branch.clone(),
        head: head.to_string(),
        parallel,
        run: ctx.run,
    });
    interrupt::install();
    let mut state = scheduler::initial_state(ctx, &options.plan_file, head);
    state.run = Some(ctx.run);
    state.plan_path = plan_path;
    let at: std::collections::HashMap<String, usize> = (state.tasks.iter().enumerate())
        .filter(|_| !skipped.is_empty())
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    for (task, gates) in skipped {
        if let Some(&i) = at.get(task) {
            state.tasks[i].not_checked_by = gates.clone();
        }
    }
    // A task that was waiting for an agent's usage limit waits out the rest.
    // Failures remembered under the tasks' keys: resumed, not paid twice.
    if let Some(previous) = previous {
        scheduler::carry_waits(&ctx.plan, &previous, &mut state);
        scheduler::transition::carry_remembered(&previous, &mut state);
    }
    let finish = scheduler::run(
        Arc::clone(ctx),
        parallel,
        state,
        cache_use,
        options.exit_status,
        engine::expand::Growth::new(options.base.clone(), options.verify),
    );
    ctx.events.ui().finish();
    let mut table = summary::table(&finish.state);
    if let Some(note) = kept_note(&ctx.layout) {
        table.push_str(&note);
    }
    let mut warnings = Vec::new();
    if let Some(command) = &ctx.plan.settings.notify {
        // `+` cannot start a task name: no task's log directory takes it.
        let log = ctx.layout.logs.join("+notify.log");
        let report = report::default_file(&ctx.git.root);
        if let Err(e) = engine::notify::notify(command, &ctx.git.root, &finish.state, &log, &report)
        {
            warnings.push(format!("warning: {e}"));
        }
    }
    let merged_already = ctx
        .git
        .is_ancestor(&finish.state.head_commit, "HEAD")
        .unwrap_or(false);
    Ran {
        outcome: finish.outcome,
        summary: table,
        warnings,
        merged_already,
        root: ctx.git.root.clone(),
        tasks: finish
            .state
            .tasks
            .iter()
            .map(|t| RanTask {
                name: t.name.clone(),
                status: t.status,
                attempted: !t.history.is_empty()
                    || matches!(
                        t.status,
                        crate::state::TaskStatus::Interrupted
                            | crate::state::TaskStatus::AlreadySatisfied
                    ),
            })
            .collect(),
    }
}
