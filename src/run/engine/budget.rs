//! Budget counters (spec §3 `budget`, §5 "Budgets are judged after a
//! finished attempt's result"). The scheduler asks [`Meter::exhausted`]
//! before it starts an attempt and records every finished attempt.

use crate::plan::Budget;
use crate::state::Spent;
use std::time::Instant;

/// The run's spending against its budget.
#[derive(Debug, Clone)]
pub struct Meter {
    /// The limits.
    pub limits: Budget,
    /// The counters (saved in state.json).
    pub spent: Spent,
    /// Set by the scheduler while the current streak of failed attempts is
    /// all one task's, which has just failed or been blocked: the breaker
    /// does not trip on it (spec §5: independent work goes on after a failed
    /// task), but the streak keeps counting into the next failure.
    pub breaker_spares_streak: bool,
    start: Instant,
}

impl Meter {
    /// A fresh meter; the `time` budget runs from now (monotonic clock).
    pub fn new(limits: Budget) -> Meter {
        Meter {
            limits,
            spent: Spent::default(),
            breaker_spares_streak: false,
            start: Instant::now(),
        }
    }

    /// When the `time` budget runs out, if one is set.
    pub fn deadline(&self) -> Option<Instant> {
        self.limits.time.map(|t| self.start + t)
    }

    /// Refreshes the elapsed-time counter.
    pub fn tick(&mut self) {
        self.spent.elapsed_ms = self.start.elapsed().as_millis() as u64;
    }

    /// The budget that forbids starting another attempt (`agent`: whether it
    /// is an agent attempt), as a message naming it and what was spent.
    pub fn exhausted(&mut self, agent: bool) -> Option<String> {
        self.tick();
        let s = &self.spent;
        if let Some(limit) = self.limits.iterations
            && agent
            && s.iterations >= limit
        {
            return Some(format!(
                "budget `iterations` spent: {} of {limit} agent attempts",
                s.iterations
            ));
        }
        if let Some(limit) = self.limits.cost
            && s.cost_micro_usd >= limit
        {
            return Some(format!(
                "budget `cost` spent: {} of {}",
                crate::run::time::dollars(s.cost_micro_usd),
                crate::run::time::dollars(limit)
            ));
        }
        if let Some(limit) = self.limits.time
            && self.start.elapsed() >= limit
        {
            return Some(format!(
                "budget `time` spent: {} of {}",
                crate::run::time::human_duration(self.start.elapsed()),
                crate::run::time::human_duration(limit)
            ));
        }
        if self.limits.failures > 0
            && s.consecutive_failures >= self.limits.failures
            && !self.breaker_spares_streak
        {
            return Some(format!(
                "circuit breaker: {} failed attempts in a row (budget `failures` = {})",
                s.consecutive_failures, self.limits.failures
            ));
        }
        None
    }

    /// Whether a cost budget is set (then an unknown cost must not count as zero).
    pub fn counts_cost(&self) -> bool {
        self.limits.cost.is_some()
    }
}
