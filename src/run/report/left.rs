//! What a run left for a person: worktrees kept for inspection, questions
//! waiting for an answer, tasks out of attempts or otherwise not passed,
//! waits for usage limits, and warnings.

use super::model::{Kept, Left, Question, TaskNote, TaskReport, Unreviewed};
use crate::run::store::layout::Layout;
use crate::state::{RunState, TaskStatus};
use std::path::Path;

/// What `state` (reported as `tasks`) left, as things stand now in `layout`.
pub fn left(state: &RunState, tasks: &[TaskReport], layout: &Layout) -> Left {
    let mut left = Left::default();
    for t in tasks {
        for r in &t.tries {
            if let Some(w) = &r.worktree {
                left.kept_worktrees.push(Kept {
                    task: t.name.clone(),
                    attempt: r.attempt,
                    path: w.clone(),
                    exists: Path::new(w).is_dir(),
                });
            }
        }
        let note = || TaskNote {
            task: t.name.clone(),
            status: t.status,
            reason: t.reason.clone(),
        };
        match t.status {
            TaskStatus::NeedsHuman => {
                let question = t.question.clone().unwrap_or_default();
                let answered = crate::run::store::answers::load(layout, &t.name)
                    .is_ok_and(|a| a.last().is_some_and(|a| a.question == question));
                left.questions.push(Question {
                    task: t.name.clone(),
                    question,
                    answered,
                });
            }
            TaskStatus::Failed if out_of_attempts(t) => left.out_of_attempts.push(note()),
            TaskStatus::CompletedUnreviewed if t.branch.is_some() => {
                let branch = t.branch.clone().unwrap_or_default();
                left.unreviewed.push(Unreviewed {
                    task: t.name.clone(),
                    merge: format!("git merge {branch}"),
                    branch,
                    reason: t.reason.clone(),
                });
            }
            s if s.is_done() => {}
            _ => left.not_passed.push(note()),
        }
    }
    for ts in &state.tasks {
        if let Some(until) = &ts.waiting_until {
            left.waiting.push(TaskNote {
                task: ts.name.clone(),
                status: ts.status,
                reason: Some(match &ts.waiting_for {
                    Some(agent) => format!("waits for {agent}'s usage limit until {until}"),
                    None => format!("waits for a usage limit until {until}"),
                }),
            });
        }
    }
    left.warnings = state.warnings.clone();
    let unknown: Vec<&str> = tasks
        .iter()
        .filter(|t| t.cost_unknown)
        .map(|t| t.name.as_str())
        .collect();
    if !unknown.is_empty() {
        left.warnings.push(format!(
            "the cost of {} is unknown (an agent reported none and has no `cost` cap): the \
             total is a lower bound",
            unknown.join(", ")
        ));
    }
    left
}

/// Whether failed task `t` used every attempt it had.
fn out_of_attempts(t: &TaskReport) -> bool {
    t.reason
        .as_deref()
        .is_some_and(|r| r.starts_with("out of attempts"))
        || t.max_attempts.is_some_and(|m| t.attempts >= m)
}
