//! A run's state document rebuilt from its events alone, for an earlier
//! run that left no copy of its state file (a loopc that kept none, or a
//! run whose every task was replayed, so that no logs were moved aside).
//! What events do not record is left out: titles, the budget, warnings,
//! summaries (the report reads those from the plan and the logs).

use super::events::{Recorded, RunEvents};
use crate::state::{AgentRecord, AttemptRecord, RunState, RunStatus, TaskState, TaskStatus};
use std::collections::HashMap;

/// The state document `events` describe.
pub fn state(events: &RunEvents) -> RunState {
    let started = events.started();
    let finished = events.finished();
    let mut run = RunState {
        version: crate::state::STATE_VERSION,
        run: events.run,
        plan: field(started, |e| e.plan.clone()),
        plan_file: String::new(),
        plan_path: None,
        integration_branch: field(started, |e| e.branch.clone()),
        start_commit: field(started, |e| e.head.clone()),
        head_commit: field(started, |e| e.head.clone()),
        status: finished
            .and_then(|e| e.status.as_deref())
            .map_or(RunStatus::Running, status_of_run),
        stop_reason: finished.and_then(|e| e.reason.clone()),
        exit_code: finished.and_then(|e| e.exit_code),
        started_at: started.map(|e| e.time.clone()).unwrap_or_default(),
        finished_at: finished.map(|e| e.time.clone()),
        spent: Default::default(),
        limits: Default::default(),
        tasks: Vec::new(),
        warnings: Vec::new(),
        specs: Vec::new(),
        carried: Vec::new(),
    };
    run.spent.elapsed_ms = events.end_ms();
    let mut index: HashMap<String, usize> = HashMap::new();
    // Each task's open try: its `attempt_started`.
    let mut open: HashMap<String, Recorded> = HashMap::new();
    for e in &events.events {
        if let Some(commit) = &e.commit {
            run.head_commit = commit.clone();
        }
        let Some(name) = e.task.clone() else {
            continue;
        };
        let i = *index.entry(name.clone()).or_insert_with(|| {
            run.tasks.push(TaskState::pending(name.clone(), None));
            run.tasks.len() - 1
        });
        let t = &mut run.tasks[i];
        match e.event.as_str() {
            "attempt_started" => {
                t.status = TaskStatus::Running;
                t.started_at.get_or_insert_with(|| e.time.clone());
                t.logs = e.logs.clone();
                open.insert(name, e.clone());
            }
            "attempt_finished" => {
                let start = open.remove(&name);
                finish_attempt(&mut run, i, e, start.as_ref());
            }
            "waiting" => run.spent.waited_ms += e.wait_ms.unwrap_or(0),
            "cached" => {
                t.status = TaskStatus::Cached;
                t.cache_key = e.key.clone();
                t.commit = e.commit.clone();
            }
            "merged" => t.commit = e.commit.clone(),
            "task_finished" => {
                if let Some(s) = e
                    .status
                    .as_deref()
                    .and_then(crate::render::state::Status::parse)
                {
                    t.status = s;
                }
                t.reason = e.reason.clone();
                t.finished_at = Some(e.time.clone());
            }
            _ => {}
        }
    }
    run
}

/// Records the attempt `e` ended (started by `start`) in task `i`.
fn finish_attempt(run: &mut RunState, i: usize, e: &Recorded, start: Option<&Recorded>) {
    let outcome = e.outcome.clone().unwrap_or_default();
    // As the budget counts them: not set aside, not before the agent.
    let counted = !matches!(
        outcome.as_str(),
        "limited" | "infrastructure" | "interrupted"
    );
    if counted {
        run.spent.iterations += 1;
    }
    run.spent.cost_micro_usd += e.cost_micro_usd.unwrap_or(0);
    let t = &mut run.tasks[i];
    if counted {
        t.attempts = t.attempts.max(e.attempt.unwrap_or(0));
    }
    t.cost_micro_usd += e.cost_micro_usd.unwrap_or(0);
    t.cost_unknown |= e.cost_micro_usd.is_none();
    if let Some(s) = start {
        t.duration_ms += e.elapsed_ms.saturating_sub(s.elapsed_ms);
    }
    let kept = matches!(
        outcome.as_str(),
        "failed" | "blocked" | "needs-human" | "infrastructure"
    );
    t.history.push(AttemptRecord {
        attempt: e.attempt.unwrap_or(0),
        outcome,
        reason: e.reason.clone(),
        cost_micro_usd: e.cost_micro_usd,
        logs: start.and_then(|s| s.logs.clone()),
        worktree: start.and_then(|s| s.worktree.clone()).filter(|_| kept),
        agent: e
            .agent
            .clone()
            .and_then(|a| serde_json::from_value::<AgentRecord>(a).ok()),
        fallback: start.and_then(|s| s.fallback.clone()),
        resolver: None,
        over_cap: e.over_cap,
        capped: e.capped,
    });
}

/// A field of `e`, or `""`.
fn field(e: Option<&Recorded>, f: impl Fn(&Recorded) -> Option<String>) -> String {
    e.and_then(f).unwrap_or_default()
}

/// The run status a `run_finished` event names.
fn status_of_run(word: &str) -> RunStatus {
    match word {
        "passed" => RunStatus::Passed,
        "failed" => RunStatus::Failed,
        "stopped" => RunStatus::Stopped,
        "interrupted" => RunStatus::Interrupted,
        _ => RunStatus::Running,
    }
}
