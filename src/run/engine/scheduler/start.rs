//! Starting an attempt: whether a task may start now (a usage limit's
//! wait is over), and the attempt handed to the thread pool, its result
//! coming back to the coordinator.

use super::Scheduler;
use crate::run::engine::attempt;
use crate::run::engine::outcome::{AttemptInput, AttemptResult, Outcome};
use crate::run::engine::scheduler::transition;
use crate::run::store::layout;
use crate::run::time::now_rfc3339;
use crate::state::RunState;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

impl Scheduler {
    /// Whether task `i` may start now: it is not parked, and any wait for
    /// a usage limit's reset is over (then forgotten).
    pub(super) fn wait_over(&mut self, state: &mut RunState, i: usize) -> bool {
        if self.books.slots[i].parked {
            return false;
        }
        match self.books.slots[i].wait_until {
            Some(t) if Instant::now() < t => false,
            Some(_) => {
                self.books.slots[i].wait_until = None;
                state.tasks[i].waiting_until = None;
                state.tasks[i].waiting_for = None;
                true
            }
            None => true,
        }
    }

    /// Starts the next attempt of task `i` on the thread pool; its result
    /// comes back on `tx`.
    pub(super) fn start_attempt(
        &mut self,
        state: &mut RunState,
        pool: &rayon::ThreadPool,
        tx: &mpsc::Sender<super::Arrived>,
        i: usize,
    ) {
        let ctx = Arc::clone(&self.ctx);
        let task = &ctx.plan.tasks[i];
        let (attempt, retry) =
            transition::started(&ctx.plan, state, &mut self.books, i, now_rfc3339());
        let id = layout::TryId {
            run: self.ctx.run,
            attempt,
            retry,
        };
        let agent = self.agent_for(i);
        let slot = &mut self.books.slots[i];
        slot.since = Some(Instant::now());
        let ts = &mut state.tasks[i];
        let input = AttemptInput {
            task: i,
            attempt,
            id,
            retry,
            base: self.head.clone(),
            feedback: slot.feedback.clone(),
            progress: self.progress.for_attempt(),
            agent,
            instructions: self.growth.prompt_section(&ctx.plan, i),
            verify: task.verify && task.accept.is_some() && !slot.verified,
        };
        ts.worktree = Some(
            self.ctx
                .layout
                .task_worktree(&task.name, id)
                .to_string_lossy()
                .into_owned(),
        );
        ts.logs = Some(
            self.ctx
                .layout
                .attempt_logs(&task.name, &layout::log_name(attempt, retry))
                .to_string_lossy()
                .into_owned(),
        );
        self.running += 1;
        let ctx = Arc::clone(&self.ctx);
        let tx = tx.clone();
        pool.spawn(move || {
            // A bug in an attempt must not leave the coordinator waiting
            // forever: a panic becomes an infrastructure failure.
            let fallback = input.clone();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                attempt::run(&ctx, input)
            }))
            .unwrap_or_else(|_| {
                let why = Outcome::Infrastructure("internal error in the attempt".into());
                AttemptResult::new(ctx.try_names(fallback.task, fallback.id), fallback, why)
            });
            // When it ended, measured here: the coordinator may get to
            // it later, after a budget it noticed meanwhile.
            let name = ctx.plan.tasks[result.input.task].name.clone();
            let _ = tx.send((result, Instant::now(), name));
        });
        self.save(state);
    }
}
