//! Usage and rate limits as the coordinator meets them: an attempt set
//! aside for a limit marks its agent limited until the reset; the task's
//! next attempt goes to the first of its agent's fallbacks that is not
//! limited, else the task waits (within the `wait` and `time` budgets). A
//! wait is recorded in state.json, so a rerun after Ctrl-C waits out the
//! rest of it instead of starting an attempt at once.

use super::Scheduler;
use crate::plan::{Agent, GateKind, Plan, Task, TaskKind};
use crate::run::engine::agent::limits;
use crate::run::engine::outcome::Limited;
use crate::run::store::events::Event;
use crate::state::{RunState, TaskStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An agent's usage or rate limit as the coordinator knows it.
#[derive(Debug, Clone)]
pub struct Limit {
    /// Until when the agent is taken to be limited.
    until: Instant,
    /// The limit that said so (the one lasting longest, of several).
    hit: Limited,
}

/// Carries the waits of `previous` (the last run's state) into `state`:
/// a task of `plan` that was waiting for an agent's limit when that run
/// ended waits for the rest of it ([`Scheduler::resume_waits`] starts the
/// clocks), if it still uses that agent ([`uses_agent`]).
pub fn carry_waits(plan: &Plan, previous: &RunState, state: &mut RunState) {
    let previous = previous.tasks_by_name();
    for (task, ts) in plan.tasks.iter().zip(&mut state.tasks) {
        if let Some(old) = previous.get(ts.name.as_str())
            && old.status == TaskStatus::Pending
            && old.waiting_until.is_some()
            && old
                .waiting_for
                .as_deref()
                .is_none_or(|a| uses_agent(task, a))
        {
            ts.waiting_until.clone_from(&old.waiting_until);
            ts.waiting_for.clone_from(&old.waiting_for);
        }
    }
}

/// Whether `task` runs the agent called `name`: its own or a fallback of
/// it, an agent gate's, its resolver or its answerer. A task edited to use
/// another agent does not wait for the old one's limit.
pub fn uses_agent(task: &Task, name: &str) -> bool {
    let is = |a: &Agent| a.name == name || a.fallbacks.iter().any(|f| f.name == name);
    matches!(&task.kind, TaskKind::Agent { agent, .. } if is(agent))
        || task
            .gates
            .iter()
            .any(|g| matches!(&g.kind, GateKind::Agent { agent, .. } if is(agent)))
        || task.resolver.as_deref().is_some_and(is)
        || task.answerer.as_deref().is_some_and(is)
}

/// How the reason of a task whose limited agent hands its next attempt to
/// a fallback ends (`` claude's usage limit: …; `codex` takes the next
/// attempt ``).
pub(super) const TAKES_NEXT: &str = " takes the next attempt";

impl Scheduler {
    /// Whether a pending task waits for an agent's limit to reset.
    pub(super) fn waiting(&self, state: &RunState) -> bool {
        self.books
            .slots
            .iter()
            .zip(&state.tasks)
            .any(|(s, t)| t.status == TaskStatus::Pending && s.wait_until.is_some())
    }

    /// Starts the waits carried over from the last run ([`carry_waits`]):
    /// one whose reset time is still ahead is waited out (and counts in
    /// the `wait` budget); one already past is dropped.
    pub(super) fn resume_waits(&mut self, state: &mut RunState) {
        let now = limits::now_epoch();
        for i in 0..state.tasks.len() {
            let ts = &mut state.tasks[i];
            let until = ts
                .waiting_until
                .as_deref()
                .and_then(crate::run::time::parse_rfc3339);
            let agent = ts.waiting_for.clone();
            ts.waiting_until = None;
            ts.waiting_for = None;
            let (Some(until), Some(agent)) = (until, agent) else {
                continue;
            };
            if until <= now {
                continue;
            }
            let l = Limited {
                agent,
                resets_at: Some(until),
                message: "the last run was waiting for this limit".to_string(),
            };
            self.mark_limited(i, &l);
            self.wait_for_limit(state, i, &l);
        }
    }

    /// How long `l` lasts from now: to its reset time, else the backoff of
    /// task `i`'s limits in a row.
    fn limit_length(&self, i: usize, l: &Limited) -> Duration {
        let now = limits::now_epoch();
        match l.resets_at {
            Some(at) if at > now => Duration::from_secs(at - now),
            _ => limits::backoff(self.books.slots[i].limit_backoffs),
        }
    }

    /// Records `l.agent` as limited for the length of `l`.
    fn mark_limited(&mut self, i: usize, l: &Limited) {
        let until = Instant::now() + self.limit_length(i, l);
        if self.limited.get(&l.agent).is_none_or(|k| k.until < until) {
            let hit = l.clone();
            self.limited.insert(l.agent.clone(), Limit { until, hit });
        }
    }

    /// Whether agent `name` is limited now.
    fn is_limited(&self, name: &str) -> bool {
        self.limited
            .get(name)
            .is_some_and(|k| Instant::now() < k.until)
    }

    /// The limit task `i` waits for after `l`: when `l.agent` is the
    /// task's own agent or one of its fallbacks (then every one of them is
    /// limited), the one of them that ends first; else `l`'s own.
    fn first_to_end(&self, i: usize, l: &Limited) -> Limit {
        let own = Limit {
            until: self
                .limited
                .get(&l.agent)
                .map_or_else(Instant::now, |k| k.until),
            hit: l.clone(),
        };
        let TaskKind::Agent { agent, .. } = &self.ctx.plan.tasks[i].kind else {
            return own;
        };
        let chain: Vec<&str> = std::iter::once(agent.name.as_str())
            .chain(agent.fallbacks.iter().map(|f| f.name.as_str()))
            .collect();
        if !chain.contains(&l.agent.as_str()) {
            return own;
        }
        chain
            .iter()
            .filter_map(|name| self.limited.get(*name))
            .filter(|k| k.until > Instant::now())
            .min_by_key(|k| k.until)
            .cloned()
            .unwrap_or(own)
    }

    /// Who may run task `i`'s next attempt: `Some(None)` its own agent,
    /// `Some(Some(a))` fallback `a`, `None` no one (all are limited, or it
    /// is a command task).
    fn free_agent(&self, i: usize) -> Option<Option<Arc<Agent>>> {
        let TaskKind::Agent { agent, .. } = &self.ctx.plan.tasks[i].kind else {
            return None;
        };
        if !self.is_limited(&agent.name) {
            return Some(None);
        }
        agent
            .fallbacks
            .iter()
            .find(|f| !self.is_limited(&f.name))
            .map(|f| Some(Arc::clone(f)))
    }

    /// The fallback agent that runs task `i`'s next attempt, `None` for its
    /// own agent (also when every agent of its chain is limited).
    pub(super) fn agent_for(&self, i: usize) -> Option<Arc<Agent>> {
        self.free_agent(i).flatten()
    }

    /// Task `i`'s attempt was set aside for the usage or rate limit `l`:
    /// when the limited agent is the task's own or one of its fallbacks and
    /// another of them is free, that one takes the next attempt at once;
    /// otherwise the task waits.
    pub(super) fn limit_hit(&mut self, state: &mut RunState, i: usize, l: &Limited) {
        self.mark_limited(i, l);
        let in_chain = match &self.ctx.plan.tasks[i].kind {
            TaskKind::Agent { agent, .. } => {
                agent.name == l.agent || agent.fallbacks.iter().any(|f| f.name == l.agent)
            }
            TaskKind::Command { .. } => false,
        };
        let next = match (in_chain, self.free_agent(i)) {
            (true, Some(Some(f))) => f.name.clone(),
            (true, Some(None)) => match &self.ctx.plan.tasks[i].kind {
                TaskKind::Agent { agent, .. } => agent.name.clone(),
                TaskKind::Command { .. } => return self.wait_for_limit(state, i, l),
            },
            _ => return self.wait_for_limit(state, i, l),
        };
        let why = format!(
            "{}'s usage limit: {}; `{next}`{TAKES_NEXT}",
            l.agent, l.message
        );
        let ts = &mut state.tasks[i];
        ts.status = TaskStatus::Pending;
        ts.reason = Some(why.clone());
        self.ctx.events.emit(Event::Waiting {
            task: ts.name.clone(),
            agent: l.agent.clone(),
            message: l.message.clone(),
            wait_ms: 0,
            reason: why,
            fallback: Some(next),
        });
    }

    /// Task `i`'s attempt was set aside for a usage or rate limit: it waits
    /// until the limit resets (else backs off), within the `wait` and
    /// `time` budgets.
    pub(super) fn wait_for_limit(&mut self, state: &mut RunState, i: usize, l: &Limited) {
        let now = limits::now_epoch();
        // With its own agent and fallbacks all limited, the task waits for
        // the first of them to be free again.
        let first = self.first_to_end(i, l);
        let l = &first.hit;
        let wait = first.until.saturating_duration_since(Instant::now());
        let given = l.resets_at.filter(|&at| at > now);
        let slot = &mut self.books.slots[i];
        if given.is_some() {
            slot.limit_backoffs = 0;
        } else {
            slot.limit_backoffs += 1;
        }
        let until = Instant::now() + wait;
        slot.wait_until = Some(until);
        // The wall-clock time it waits for: the reset time the agent gave
        // (to the second, as it said it), else now plus the back-off.
        let at = given.unwrap_or(now + wait.as_secs());
        let resets = limits::clock(at);
        let said = match (given, l.resets_at) {
            (Some(_), _) => format!("resets {resets}"),
            (None, Some(past)) => format!(
                "its reset time {} has passed; trying again at {resets}",
                limits::clock(past)
            ),
            (None, None) => format!("no reset time given; trying again at {resets}"),
        };
        let why = format!(
            "waiting for {}'s usage limit: {said}, in {}",
            l.agent,
            crate::run::time::human_duration(wait)
        );
        let waited = Duration::from_millis(self.books.meter.spent.waited_ms) + wait;
        // Reached now (for the order of budget stops).
        let now_ms = self.books.meter.now_ms();
        // (the run's stop reason, whole; the task's, after `why`)
        let over = if let Some(cap) = self.books.meter.limits.wait
            && waited > cap
        {
            let (waited, cap) = (
                crate::run::time::human_duration(waited),
                crate::run::time::human_duration(cap),
            );
            Some((
                format!(
                    "budget `wait` would be spent: waiting for {}'s usage limit ({said}) would \
                     make {waited} of waiting, over {cap}",
                    l.agent,
                ),
                format!("budget `wait` would be spent ({waited} of waiting, over {cap})"),
            ))
        } else if let Some(d) = self.books.meter.deadline()
            && until > d
        {
            Some((
                format!(
                    "budget `time` ends before {}'s usage limit resets ({said})",
                    l.agent
                ),
                "budget `time` ends before then".to_string(),
            ))
        } else {
            None
        };
        let parked = over.is_some();
        let why = match over {
            // The task starts no attempt in this run; work that is not
            // limited goes on, and the run stops for this budget once it
            // has ended (the next run waits out the rest).
            Some((reason, short)) => {
                let slot = &mut self.books.slots[i];
                slot.wait_until = None;
                slot.parked = true;
                self.books.parked.get_or_insert((now_ms, reason));
                format!("{why}; {short}: left for the next run")
            }
            None => {
                self.books.meter.spent.waited_ms = waited.as_millis() as u64;
                why
            }
        };
        let ts = &mut state.tasks[i];
        ts.status = TaskStatus::Pending;
        ts.reason = Some(why.clone());
        ts.waiting_until = Some(crate::run::time::format_rfc3339(Duration::from_secs(at)));
        ts.waiting_for = Some(l.agent.clone());
        self.ctx.events.emit(Event::Waiting {
            task: ts.name.clone(),
            agent: l.agent.clone(),
            message: l.message.clone(),
            // A wait left for the next run is not waited here.
            wait_ms: if parked { 0 } else { wait.as_millis() as u64 },
            reason: why,
            fallback: None,
        });
    }
}
