//! The checks of tasks merged in this run, run again on later merges,
//! replays and moves (docs/running.md step 7): each as a check of the task
//! it belongs to ([`gate::Owner`]), whose variables it sees.

use super::Scheduler;
use crate::run::engine::attempt::gate;
use crate::run::engine::outcome::{AttemptResult, Outcome};
use std::sync::Arc;

/// What ended, for [`Scheduler::apply`].
#[derive(Clone, Copy)]
pub(super) enum Ended<'a> {
    /// A finished attempt, and the head its work was merged onto.
    Attempt(&'a AttemptResult, &'a str),
    /// A replay that moved the integration branch from the first head to
    /// the second (the same head: it changed nothing, or it missed).
    Replay(&'a str, &'a str),
    /// Nothing ran (a task held back at the start).
    Nothing,
}

impl Scheduler {
    /// Adds task `i`'s command checks to those gated again on later merges,
    /// as checks of its work that `ended` landed ([`owner`]): they see its
    /// variables. A command another merged task's check runs already is
    /// not added: it runs once, as the first task's.
    pub(super) fn remember_checks(&mut self, i: usize, ended: Ended<'_>) {
        let task = &self.ctx.plan.tasks[i];
        let mut added: Vec<gate::Check> = Vec::new();
        for mut c in gate::checks_of(task) {
            if !gate::is_agent(&c)
                && !self.merged_checks.iter().any(|k| k.kind == c.kind)
                && !added.iter().any(|k| k.kind == c.kind)
            {
                if c.label == "accept" {
                    c.label = format!("accept of {}", task.name);
                }
                added.push(c);
            }
        }
        // Only a REEL spec's move asks for the owners of tasks without
        // such checks: an owner holds a copy of its task, and a plan of
        // 100,000 tasks would keep one for each.
        let spec_tree = self.ctx.plan.pipeline.is_some();
        if added.is_empty() && !spec_tree {
            return;
        }
        let Some(owner) = owner(task, ended) else {
            return;
        };
        let owner = Arc::new(owner);
        for mut c in added {
            c.owner = Some(Arc::clone(&owner));
            self.merged_checks.push(c);
        }
        if spec_tree {
            self.owners.insert(task.name.clone(), owner);
        }
    }
}

/// `task`'s work on the integration branch as `ended` landed it: a passed
/// attempt's (its number, feedback and diff), or a replay's (attempt 0, no
/// feedback, the diff between the heads it moved the branch between).
fn owner(task: &crate::plan::Task, ended: Ended<'_>) -> Option<gate::Owner> {
    match ended {
        Ended::Attempt(r, _) => match &r.outcome {
            Outcome::Passed { commit, .. } => Some(gate::Owner {
                task: task.clone(),
                attempt: r.input.attempt,
                feedback: r.files.as_ref().map(|f| f.dir.join("feedback.md")),
                work: (r.input.base.clone(), commit.clone()),
            }),
            _ => None,
        },
        Ended::Replay(from, to) => Some(gate::Owner {
            task: task.clone(),
            attempt: 0,
            feedback: None,
            work: (from.to_string(), to.to_string()),
        }),
        Ended::Nothing => None,
    }
}
