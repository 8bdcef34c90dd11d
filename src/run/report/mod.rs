//! `loopc report`: one run (the last, or an earlier one) as a self-contained
//! HTML page or a JSON document (docs/report.md). It reads `.loopc/` only
//! (state, events, logs; never the lock but to see whether a run that says
//! `running` is alive) and the plan file, and changes nothing.
//!
//! [`build`] gathers the [`model::Report`]: [`source`] finds the run's
//! state (the last run's state.json, an earlier run's copy, else what its
//! events alone say, [`synth`]) and its events ([`events`]); [`spans`]
//! times its tries, waits and replays, [`timeline`] lays them on slots,
//! [`tries`] reads each try's logs ([`text`] cuts them), [`cost`] adds up
//! the money, [`left`] says what the run left; [`graph`] compiles the plan
//! for the drawing. [`html`] writes the page, [`json`] the document. The
//! command line (`src/cli/report.rs`) writes the file.

pub mod cost;
pub mod events;
pub mod graph;
pub mod html;
pub mod json;
pub mod left;
pub mod model;
pub mod source;
pub mod spans;
pub mod synth;
pub mod text;
pub mod timeline;
pub mod tries;

use crate::plan::Plan;
use crate::run::store::layout::Layout;
use crate::run::sys::git::Git;
use crate::state::{RunStatus, TaskStatus};
use model::{Counts, Report, TaskReport};
use source::Found;
use spans::Spans;
use std::path::{Path, PathBuf};

/// Where `loopc report` writes the page unless told otherwise, under the
/// repository's top.
pub const DEFAULT_FILE: &str = ".loopc/report.html";

/// What to report.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--run N`: an earlier run (`None`: the last one).
    pub run: Option<u32>,
}

/// A report and the plan its graph is drawn from.
#[derive(Debug, Clone)]
pub struct Built {
    /// The report.
    pub report: Report,
    /// The run's plan, when it could be compiled.
    pub plan: Option<Plan>,
    /// The run's state document (for the graph's colours).
    pub state: crate::state::RunState,
    /// The repository's top.
    pub root: PathBuf,
}

impl Built {
    /// The report as an HTML page.
    pub fn html(&self) -> String {
        html::page(&self.report, self.plan.as_ref(), &self.state)
    }
}

/// The default report file of the repository whose top is `root`.
pub fn default_file(root: &Path) -> PathBuf {
    root.join(DEFAULT_FILE)
}

/// The report of a run recorded in the repository containing `cwd`.
///
/// Errors: not in a git repository, no run recorded yet, no such run, or
/// its state or events cannot be read (one line saying what to do).
pub fn build(cwd: &Path, options: &Options) -> Result<Built, String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::of_checkout(&git.root)?;
    // The page is written into `.loopc/` by default: not wherever a link
    // points, as a run and `loopc clean` refuse it.
    layout.refuse_symlink()?;
    let found = source::find(&layout, options.run)?;
    let mut notes = Vec::new();
    let saved = found.logs_root.join(crate::run::store::layout::RUN_PLAN);
    let plan = match graph::plan_of(&found.state, &git.root, cwd, &saved) {
        Ok(p) => Some(p),
        Err(e) => {
            notes.push(e);
            None
        }
    };
    if found.source == "events" {
        notes.push(
            "this run left no copy of its state file: the report shows what its events \
             recorded (no budget, warnings or task titles but the plan's)"
                .to_string(),
        );
    }
    // A run still going on: its running tries reach to now.
    let live = found.last
        && found.state.status == RunStatus::Running
        && crate::run::sys::lock::holder_alive(&layout.lock);
    let spans = spans::collect(&found.events, live.then_some(found.state.spent.elapsed_ms));
    let tasks = tasks_of(&found, &layout, plan.as_ref(), &spans);
    let branch_now = git
        .commit_of(&format!("refs/heads/{}", found.state.integration_branch))
        .ok()
        .flatten();
    let mut report = assemble(&found, &layout, plan.as_ref(), &spans, tasks);
    report.branch_now = branch_now;
    report.notes = notes;
    Ok(Built {
        report,
        plan,
        state: found.state,
        root: git.root.clone(),
    })
}

/// Every task of the run `found`, each with its tries.
fn tasks_of(found: &Found, layout: &Layout, plan: Option<&Plan>, spans: &Spans) -> Vec<TaskReport> {
    let log_dir = |recorded: &str| found.log_dir(layout, recorded);
    let mut reader = text::Reader::default();
    let mut src = tries::Sources {
        log_dir: &log_dir,
        reader: &mut reader,
    };
    let mut tasks: Vec<TaskReport> = found
        .state
        .tasks
        .iter()
        .map(|ts| task_report(ts, plan, spans, &found.events, &mut src))
        .collect();
    // Rebuilt from events, the tasks are in the order they first did
    // something: the plan's order instead.
    if found.source == "events"
        && let Some(p) = plan
    {
        tasks.sort_by_key(|t| p.task_index(&t.name).unwrap_or(usize::MAX));
    }
    tasks
}

/// The report of the run `found` (its branch's head now and the notes
/// left empty), its tasks `tasks`.
fn assemble(
    found: &Found,
    layout: &Layout,
    plan: Option<&Plan>,
    spans: &Spans,
    tasks: Vec<TaskReport>,
) -> Report {
    let state = &found.state;
    let mut limits = state.limits.clone();
    if found.source == "events"
        && let Some(p) = plan
    {
        limits = crate::state::Limits::of(&p.budget);
    }
    // An earlier run still marked running was killed: the run after it
    // could only start once it no longer held the lock.
    let killed = state.status == RunStatus::Running
        && (!found.last || !crate::run::sys::lock::holder_alive(&layout.lock));
    let mut cost = cost::summary(state);
    cost.budget_micro_usd = limits.cost_micro_usd;
    cost.over_budget = cost
        .budget_micro_usd
        .is_some_and(|b| cost.spent_micro_usd > b);
    Report {
        version: model::REPORT_VERSION,
        run: state.run.or(found.events.run),
        last: found.last,
        source: found.source.to_string(),
        plan: state.plan.clone(),
        plan_file: state.plan_file.clone(),
        status: if killed {
            "killed".to_string()
        } else {
            state.status.as_str().to_string()
        },
        exit_code: state.exit_code,
        stop_reason: state.stop_reason.clone(),
        started_at: state.started_at.clone(),
        finished_at: state.finished_at.clone(),
        elapsed_ms: if state.spent.elapsed_ms > 0 {
            state.spent.elapsed_ms
        } else {
            spans.end_ms
        },
        waited_ms: state.spent.waited_ms,
        parallel: found.events.started().and_then(|e| e.parallel),
        integration_branch: state.integration_branch.clone(),
        start_commit: state.start_commit.clone(),
        head_commit: state.head_commit.clone(),
        branch_now: None,
        counts: counts(&tasks),
        agent_attempts: state.spent.iterations,
        cost_series: cost::series(&tasks, limits.cost_micro_usd),
        cost,
        limits,
        left: left::left(state, &tasks, layout),
        timeline: timeline::build(spans),
        tasks,
        notes: Vec::new(),
    }
}

/// The report of task `ts`.
fn task_report(
    ts: &crate::state::TaskState,
    plan: Option<&Plan>,
    spans: &Spans,
    events: &events::RunEvents,
    src: &mut tries::Sources<'_>,
) -> TaskReport {
    let task = plan.and_then(|p| p.task_index(&ts.name).map(|i| &p.tasks[i]));
    let timed: Vec<&spans::EventTry> = spans.tries.iter().filter(|t| t.task == ts.name).collect();
    let dependencies = match (plan, task) {
        (Some(p), Some(t)) => t
            .dependencies
            .iter()
            .filter_map(|&d| p.tasks.get(d).map(|d| d.name.clone()))
            .collect(),
        _ => ts.dependencies.clone(),
    };
    TaskReport {
        name: ts.name.clone(),
        title: ts
            .title
            .clone()
            .or_else(|| task.and_then(|t| t.title.clone())),
        status: ts.status,
        attempts: ts.attempts,
        max_attempts: task.map(|t| t.attempts),
        dependencies,
        duration_ms: ts.duration_ms,
        cost_micro_usd: ts.cost_micro_usd,
        cost_unknown: ts.cost_unknown,
        summary: ts.summary.clone(),
        reason: ts.reason.clone(),
        commit: ts.commit.clone(),
        cache_key: ts.cache_key.clone(),
        cached_how: events
            .events
            .iter()
            .rfind(|e| e.event == "cached" && e.task() == ts.name)
            .and_then(|e| e.how.clone()),
        question: ts.question.clone(),
        branch: ts.branch.clone(),
        expanded_from: ts.expanded_from.clone(),
        earlier_attempts: ts.earlier_attempts,
        not_checked_by: ts.not_checked_by.clone(),
        tries: tries::of_task(ts, task, &timed, src),
    }
}

/// How many of `tasks` ended in each way.
fn counts(tasks: &[TaskReport]) -> Counts {
    let mut c = Counts {
        tasks: tasks.len(),
        ..Counts::default()
    };
    for t in tasks {
        match t.status {
            TaskStatus::Passed | TaskStatus::AlreadySatisfied => c.passed += 1,
            TaskStatus::Cached => c.cached += 1,
            TaskStatus::Failed => c.failed += 1,
            TaskStatus::CompletedUnreviewed => c.unreviewed += 1,
            TaskStatus::Blocked | TaskStatus::NeedsHuman => c.blocked += 1,
            TaskStatus::Skipped => c.skipped += 1,
            TaskStatus::Pending | TaskStatus::Running | TaskStatus::Interrupted => c.not_run += 1,
        }
    }
    c
}
