//! Money: each try's cost as it was charged (when the try ended), the
//! run's total after each, and that total against the `cost` budget.

use super::model::{CostPoint, CostSummary, TaskReport};
use crate::state::RunState;

/// Each ended try's cost in the order they ended, with the run's known
/// total after it (`budget`: the `cost` budget, for `over_budget`).
pub fn series(tasks: &[TaskReport], budget: Option<u64>) -> Vec<CostPoint> {
    let mut points: Vec<CostPoint> = tasks
        .iter()
        .flat_map(|t| {
            t.tries
                .iter()
                .filter(|r| r.outcome != "running")
                .map(|r| CostPoint {
                    at_ms: r.end_ms.unwrap_or(0),
                    task: t.name.clone(),
                    attempt: r.attempt,
                    cost_micro_usd: r.cost_micro_usd,
                    cost_mark: r.cost_mark.clone(),
                    cumulative_micro_usd: 0,
                    over_budget: false,
                })
        })
        .collect();
    points.sort_by_key(|p| p.at_ms);
    let mut total = 0u64;
    for p in &mut points {
        total = total.saturating_add(p.cost_micro_usd.unwrap_or(0));
        p.cumulative_micro_usd = total;
        p.over_budget = budget.is_some_and(|b| total > b);
    }
    points
}

/// The run's cost against its budget.
pub fn summary(state: &RunState) -> CostSummary {
    let budget = state.limits.cost_micro_usd;
    let spent = state.spent.cost_micro_usd;
    CostSummary {
        spent_micro_usd: spent,
        unknown: state.tasks.iter().any(|t| t.cost_unknown),
        budget_micro_usd: budget,
        over_budget: budget.is_some_and(|b| spent > b),
    }
}
