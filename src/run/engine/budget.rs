//! Budget counters (docs/language.md `budget`, docs/running.md "Budgets are judged after a
//! finished attempt's result"). The scheduler asks [`Meter::exhausted`]
//! before it starts an attempt and records every finished attempt; what an
//! attempt, a gate or a merge cost is a [`Cost`].

use crate::plan::Budget;
use crate::state::Spent;
use std::time::Instant;

/// What an attempt cost. An agent (or agent gate) whose cost cannot be read
/// is charged its per-attempt `cost` cap; only one without a cap leaves the
/// cost unknown (docs/running.md: unknown cost is never counted as zero).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cost {
    /// Known (or capped) cost in micro-dollars.
    pub micro_usd: u64,
    /// Some part (the agent or an agent gate) did not report its cost and
    /// has no cap.
    pub unknown: bool,
    /// The first agent whose cost was unknown (named when the run stops).
    pub unknown_agent: Option<String>,
    /// The first agent that reported more than its per-attempt `cost` cap:
    /// its name, what it reported and the cap, in micro-dollars. Its real
    /// cost is what counts (docs/running.md "Over its cap").
    pub over_cap: Option<OverCap>,
    /// Some part (the agent or an agent gate) reported no cost and its
    /// `cost` cap was charged instead.
    pub capped: bool,
}

/// An agent run that reported more than its per-attempt `cost` cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverCap {
    /// The agent's name.
    pub agent: String,
    /// What it reported, in micro-dollars.
    pub reported: u64,
    /// Its cap, in micro-dollars.
    pub cap: u64,
}

impl Cost {
    /// Adds what one agent run reported (`None`: nothing readable), charging
    /// `cap` when the cost is unknown and the agent has one.
    pub fn add_reported(&mut self, reported: Option<u64>, agent: &crate::plan::Agent) {
        match (reported, agent.cost) {
            (Some(c), cap) => {
                self.micro_usd += c;
                if let Some(cap) = cap.filter(|&cap| c > cap)
                    && self.over_cap.is_none()
                {
                    self.over_cap = Some(OverCap {
                        agent: agent.name.clone(),
                        reported: c,
                        cap,
                    });
                }
            }
            (None, Some(cap)) => {
                self.micro_usd += cap;
                self.capped = true;
            }
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
        self.capped |= other.capped;
        if self.unknown_agent.is_none() {
            self.unknown_agent = other.unknown_agent;
        }
        if self.over_cap.is_none() {
            self.over_cap = other.over_cap;
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
    /// does not trip on it (docs/running.md: independent work goes on after a failed
    /// task), but the streak keeps counting into the next failure.
    pub breaker_spares_streak: bool,
    /// When (milliseconds from the start) limits were reached.
    reached: Reached,
    start: Instant,
    /// Micro-dollars held for the agent attempts running: each one's
    /// per-attempt cap, from its start until its cost is charged (an
    /// attempt may spend up to its cap, so the next one is covered only by
    /// what is left besides).
    held: u64,
}

/// Whether the `cost` budget covers an attempt at its agent's cap
/// ([`Meter::cover`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cover {
    /// It does (or no cost budget or no cap applies).
    Yes,
    /// Not while the attempts running may still spend their caps: wait
    /// for them, then look again.
    AfterRunning,
    /// It cannot, whatever the attempts running spend: the message that
    /// stops the run.
    No(String),
}

/// When the limits other than `time` were reached, in milliseconds from the
/// run's start (`None`: not reached).
#[derive(Debug, Clone, Default)]
struct Reached {
    cost: Option<u64>,
    iterations: Option<u64>,
    failures: Option<u64>,
}

impl Meter {
    /// A fresh meter; the `time` budget runs from now (monotonic clock).
    pub fn new(limits: Budget) -> Meter {
        Meter {
            limits,
            spent: Spent::default(),
            breaker_spares_streak: false,
            reached: Reached::default(),
            start: Instant::now(),
            held: 0,
        }
    }

    /// Holds `cap` micro-dollars for an agent attempt that starts.
    pub fn hold(&mut self, cap: u64) {
        self.held = self.held.saturating_add(cap);
    }

    /// Frees what [`Meter::hold`] held for an attempt that ended (its cost
    /// is charged apart).
    pub fn free(&mut self, cap: u64) {
        self.held = self.held.saturating_sub(cap);
    }

    /// When the `time` budget runs out, if one is set.
    pub fn deadline(&self) -> Option<Instant> {
        self.limits.time.map(|t| self.start + t)
    }

    /// Refreshes the elapsed-time counter.
    pub fn tick(&mut self) {
        self.spent.elapsed_ms = self.start.elapsed().as_millis() as u64;
    }

    /// Milliseconds from the run's start to `at` (0 before it).
    pub fn ms_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_millis() as u64
    }

    /// Milliseconds since the run's start.
    pub fn now_ms(&self) -> u64 {
        self.ms_at(Instant::now())
    }

    /// An attempt (an agent's: `agent`) finished at `at_ms`, after its cost
    /// was charged: notes when the `cost`, `iterations` and `failures`
    /// limits were reached, for [`Meter::exhausted_at`].
    pub fn note_finished(&mut self, at_ms: u64, agent: bool) {
        let s = &self.spent;
        let cost = self.limits.cost.is_some_and(|l| s.cost_micro_usd >= l);
        let iterations = agent && self.limits.iterations.is_some_and(|l| s.iterations >= l);
        let failures = self.limits.failures > 0 && s.consecutive_failures >= self.limits.failures;
        for (hit, slot) in [
            (cost, &mut self.reached.cost),
            (iterations, &mut self.reached.iterations),
            (failures, &mut self.reached.failures),
        ] {
            if !hit {
                *slot = None;
            } else if slot.is_none() {
                *slot = Some(at_ms);
            }
        }
    }

    /// The budget that forbids starting another attempt (`agent`: whether it
    /// is an agent attempt), as a message naming it and what was spent.
    pub fn exhausted(&mut self, agent: bool) -> Option<String> {
        self.exhausted_at(agent).map(|(_, why)| why)
    }

    /// Like [`Meter::exhausted`], with when (milliseconds from the run's
    /// start) the limit was reached. Of several limits spent, the one
    /// reached first is named: `time` at its limit, `cost`, `iterations`
    /// and the circuit breaker when the attempt that spent them finished
    /// ([`Meter::note_finished`]; now, if not noted). Ties go to `time`,
    /// then `cost`, `iterations`, the breaker: the answer never depends on
    /// the order in which the scheduler noticed them.
    pub fn exhausted_at(&mut self, agent: bool) -> Option<(u64, String)> {
        self.tick();
        let now = self.now_ms();
        let mut spent: Vec<(u64, String)> = self.time_spent().into_iter().collect();
        let s = &self.spent;
        if let Some(limit) = self.limits.cost
            && s.cost_micro_usd >= limit
        {
            spent.push((
                self.reached.cost.unwrap_or(now),
                format!(
                    "budget `cost` spent: {} of {}",
                    crate::run::time::dollars(s.cost_micro_usd),
                    crate::run::time::dollars(limit)
                ),
            ));
        }
        if let Some(limit) = self.limits.iterations
            && agent
            && s.iterations >= limit
        {
            spent.push((
                self.reached.iterations.unwrap_or(now),
                format!(
                    "budget `iterations` spent: {} of {limit} agent {}",
                    s.iterations,
                    if limit == 1 { "attempt" } else { "attempts" }
                ),
            ));
        }
        if self.limits.failures > 0
            && s.consecutive_failures >= self.limits.failures
            && !self.breaker_spares_streak
        {
            spent.push((
                self.reached.failures.unwrap_or(now),
                format!(
                    "circuit breaker: {} failed attempt{} in a row (budget `failures` = {})",
                    s.consecutive_failures,
                    if s.consecutive_failures == 1 { "" } else { "s" },
                    self.limits.failures
                ),
            ));
        }
        // `min_by_key` keeps the first of equals: the order above.
        spent.into_iter().min_by_key(|(at, _)| *at)
    }

    /// The `time` budget's limit and the message naming it, once it is
    /// spent (a check or an attempt stopped by it names it so).
    pub fn time_spent(&self) -> Option<(u64, String)> {
        let limit = self.limits.time?;
        if self.start.elapsed() < limit {
            return None;
        }
        Some((
            limit.as_millis() as u64,
            format!(
                "budget `time` spent: {} of {}",
                crate::run::time::human_duration(self.start.elapsed()),
                crate::run::time::human_duration(limit)
            ),
        ))
    }

    /// Whether the `cost` budget left pays for an attempt of `agent` at
    /// its per-attempt cap (`cap`, micro-dollars) besides what the agent
    /// attempts running may still spend ([`Meter::hold`]): no attempt
    /// starts that may spend more than is left (docs/running.md
    /// "Budgets"). [`Cover::Yes`] without a cost budget or a cap.
    pub fn cover(&self, agent: &str, cap: Option<u64>) -> Cover {
        let (Some(limit), Some(cap)) = (self.limits.cost, cap) else {
            return Cover::Yes;
        };
        let left = limit.saturating_sub(self.spent.cost_micro_usd);
        if cap > left {
            return Cover::No(format!(
                "budget `cost`: {} left of {}, less than agent `{agent}`'s per-attempt cap of {}",
                crate::run::time::dollars(left),
                crate::run::time::dollars(limit),
                crate::run::time::dollars(cap)
            ));
        }
        if cap > left - self.held.min(left) {
            return Cover::AfterRunning;
        }
        Cover::Yes
    }

    /// Whether a cost budget is set (then an unknown cost must not count as zero).
    pub fn counts_cost(&self) -> bool {
        self.limits.cost.is_some()
    }
}
