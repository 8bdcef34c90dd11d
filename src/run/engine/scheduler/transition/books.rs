//! The scheduler's books besides `state.json`: per-task slots, the budget
//! meter, the current failure streak and why the run stops (a budget stop
//! keeps the limit reached first).

use super::StopKind;
use crate::plan::Plan;
use crate::run::engine::budget::{Cost, Meter};
use crate::state::RunState;

/// How much a reason to stop weighs (see [`Books::set_stop`]).
fn rank(kind: StopKind) -> u8 {
    match kind {
        StopKind::BranchMoved => 4,
        StopKind::Interrupted => 3,
        StopKind::Budget => 2,
        StopKind::FailedTask => 1,
    }
}

/// Per-task bookkeeping that is not saved.
#[derive(Debug, Default)]
pub struct Slot {
    /// Infrastructure failures so far.
    pub infra: u32,
    /// The attempt number of the last try and which try of it that was
    /// (infrastructure retries repeat the attempt number).
    pub last_try: (u32, u32),
    /// Feedback for the next attempt.
    pub feedback: String,
    /// The attempts counted before the task's last re-plan
    /// (docs/language.md "Re-planning"): its `attempts` count from there.
    pub attempt_base: u32,
    /// When the current attempt started (monotonic).
    pub since: Option<std::time::Instant>,
    /// Whether the cache was consulted for this task already.
    pub cache_tried: bool,
    /// Waiting for an agent's usage or rate limit: no attempt before this.
    pub wait_until: Option<std::time::Instant>,
    /// Limits in a row without a reset time (the backoff's exponent).
    pub limit_backoffs: u32,
    /// Its wait would outlast the `wait` or `time` budget: it starts no
    /// attempt in this run, while work that is not limited goes on.
    pub parked: bool,
    /// Its run-time key (hex) when its first attempt of the run was
    /// about to start, which its remembered failures are kept under
    /// ([`crate::state::Remembered`]); `None` until then, or when it
    /// could not be computed.
    pub key: Option<String>,
    /// Whether its remembered failures were looked at ([`super::resume`]).
    pub resume_checked: bool,
    /// Its verification (`verify`) reached a verdict in this run: its
    /// later attempts go straight to the agent.
    pub verified: bool,
    /// Micro-dollars the `cost` budget holds for its attempt running (its
    /// agent's cap; [`crate::run::engine::budget::Meter::hold`]).
    pub held: u64,
}

/// What the scheduler keeps besides `state.json`: the budget meter, the
/// per-task slots, the current streak of failures and why the run stops.
#[derive(Debug)]
pub struct Books {
    /// The budget counters.
    pub meter: Meter,
    /// One per task, in plan order.
    pub slots: Vec<Slot>,
    /// The tasks whose failed attempts make up the current run of
    /// consecutive failures (see `Books::task_ended_failing`).
    pub streak: Vec<usize>,
    /// Why the run stops starting work, once it does.
    pub stop: Option<(StopKind, String)>,
    /// For a budget stop: when (milliseconds from the run's start) its
    /// limit was reached.
    stop_at: u64,
    /// The first budget a parked wait ([`Slot::parked`]) would outlast, and
    /// when: the run's stop once the work that could go on has ended.
    pub parked: Option<(u64, String)>,
    /// The first task that was done and is pending again (a producer that
    /// re-plans), since the coordinator's scan last looked: the scan's
    /// front moves back to it.
    pub reopened: Option<usize>,
}

impl Books {
    /// Fresh books for `plan` with `meter`.
    pub fn new(plan: &Plan, meter: Meter) -> Books {
        Books {
            meter,
            slots: (0..plan.tasks.len()).map(|_| Slot::default()).collect(),
            streak: Vec::new(),
            stop: None,
            stop_at: u64::MAX,
            parked: None,
            reopened: None,
        }
    }

    /// Stops the run for `kind` unless it is stopping for a weightier
    /// reason already: a foreign move of the integration branch outranks an
    /// interrupt, which outranks a budget stop, which outranks a failed task.
    /// A budget stop set so counts as reached now, after any other
    /// ([`Books::set_budget_stop`]).
    pub fn set_stop(&mut self, kind: StopKind, reason: String) {
        if kind == StopKind::Budget {
            return self.set_budget_stop(u64::MAX, reason);
        }
        if self
            .stop
            .as_ref()
            .is_none_or(|(k, _)| rank(kind) > rank(*k))
        {
            self.stop = Some((kind, reason));
        }
    }

    /// Stops the run for a budget whose limit was reached at `at_ms`
    /// (milliseconds from the run's start), unless it is stopping for a
    /// weightier reason ([`Books::set_stop`]); of two budget stops, the
    /// limit reached first is the reason, however late the scheduler
    /// noticed it (ties keep the first).
    pub fn set_budget_stop(&mut self, at_ms: u64, reason: String) {
        let replace = match &self.stop {
            None => true,
            Some((StopKind::Budget, _)) => at_ms < self.stop_at,
            Some((k, _)) => rank(StopKind::Budget) > rank(*k),
        };
        if replace {
            self.stop = Some((StopKind::Budget, reason));
            self.stop_at = at_ms;
        }
    }

    /// The kind of stop, if the run is stopping.
    pub fn stop_kind(&self) -> Option<StopKind> {
        self.stop.as_ref().map(|s| s.0)
    }

    /// A task ended failed or blocked. When every failure of the current
    /// streak is its own, the streak is that task's failure and nothing more
    /// (the breaker waits: one more failure of another task trips it):
    /// docs/running.md lets independent work go on after a failed task, which with
    /// `attempts` and `failures` both at their default of 3 the circuit
    /// breaker would otherwise forbid. Failures spanning tasks still count.
    pub(super) fn task_ended_failing(&mut self, i: usize) {
        self.meter.breaker_spares_streak = self.streak == [i];
    }

    /// Charges task `i` what was spent (`cost`, and `elapsed_ms` of its
    /// time) by an attempt or replay that ended at `ended_ms` (from the
    /// run's start); an unknown cost under a cost budget stops the run with
    /// the message `unknown(agent)` makes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn charge(
        &mut self,
        state: &mut RunState,
        i: usize,
        cost: &Cost,
        elapsed_ms: Option<u64>,
        ended_ms: u64,
        unknown: impl FnOnce(&str) -> String,
    ) {
        // Unknown costs were charged the agent's cap where it has one; one
        // without a cap under a cost budget stops the run, as reached when
        // the attempt ended (a `time` budget spent before then is named).
        if cost.unknown && self.meter.counts_cost() {
            let name = cost.unknown_agent.as_deref().unwrap_or("?");
            self.set_budget_stop(ended_ms, unknown(name));
        }
        self.meter.spent.cost_micro_usd += cost.micro_usd;
        let ts = &mut state.tasks[i];
        ts.cost_micro_usd += cost.micro_usd;
        ts.cost_unknown |= cost.unknown;
        if let Some(ms) = elapsed_ms {
            ts.duration_ms += ms;
        }
    }
}
