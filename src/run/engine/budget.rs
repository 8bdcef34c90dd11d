//! Budget counters (spec §3 `budget`, §5 "Budgets are judged after a
//! finished attempt's result"). The scheduler asks [`Meter::exhausted`]
//! before it starts an attempt and records every finished attempt; what an
//! attempt, a gate or a merge cost is a [`Cost`].

use crate::plan::Budget;
use crate::state::Spent;
use std::time::Instant;

/// What an attempt cost. An agent (or agent gate) whose cost cannot be read
/// is charged its per-attempt `cost` cap; only one without a cap leaves the
/// cost unknown (spec §5: unknown cost is never counted as zero).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cost {
    /// Known (or capped) cost in micro-dollars.
    pub micro_usd: u64,
    /// Some part (the agent or an agent gate) did not report its cost and
    /// has no cap.
    pub unknown: bool,
    /// The first agent whose cost was unknown (named when the run stops).
    pub unknown_agent: Option<String>,
}

impl Cost {
    /// Adds what one agent run reported (`None`: nothing readable), charging
    /// `cap` when the cost is unknown and the agent has one.
    pub fn add_reported(&mut self, reported: Option<u64>, agent: &crate::plan::Agent) {
        match (reported, agent.cost) {
            (Some(c), _) => self.micro_usd += c,
            (None, Some(cap)) => self.micro_usd += cap,
            (None, None) => {
                self.unknown = true;
                if self.unknown_agent.is_none() {
                    self.unknown_agent = Some(agent.name.clone());
                }
            }
        }
    }

    /// Adds `other` (a gate's or a merge's cost).
    pub fn absorb(&mut self, other: Cost) {
        self.micro_usd += other.micro_usd;
        self.unknown |= other.unknown;
        if self.unknown_agent.is_none() {
            self.unknown_agent = other.unknown_agent;
        }
    }
}

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
                "circuit breaker: {} failed attempt{} in a row (budget `failures` = {})",
                s.consecutive_failures,
                if s.consecutive_failures == 1 { "" } else { "s" },
                self.limits.failures
            ));
        }
        None
    }

    /// Whether a cost budget is set (then an unknown cost must not count as zero).
    pub fn counts_cost(&self) -> bool {
        self.limits.cost.is_some()
    }
}
