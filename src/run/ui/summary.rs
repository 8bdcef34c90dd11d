//! The table printed at the end of a run and by `loopc status`: task,
//! status, attempts (with those earlier runs spent under the same key),
//! time, cost, then the run's totals (budget, warnings, the tasks plan
//! fragments added, why tasks did not pass, attempts over their cost cap). Text from
//! agents is shown with its control characters escaped.

use super::display::sanitize_line;
use crate::state::{RunState, TaskStatus};
use std::time::Duration;

/// The summary table of `state`, one line per task, then a total line.
pub fn table(state: &RunState) -> String {
    table_as(state, state.status.as_str())
}

/// [`table`] with the run's status in the total line given as `status`
/// (`killed` for a run whose state says running but whose loopc is gone).
pub fn table_as(state: &RunState, status: &str) -> String {
    let any_unknown = state.tasks.iter().any(|t| t.cost_unknown);
    let mut out = task_rows(state, status == "running");
    out.push_str(&total_line(state, status, any_unknown));
    out.push_str(&budget_line(state, any_unknown));
    if let Some(r) = &state.stop_reason {
        out.push_str(&format!("stopped: {}\n", sanitize_line(r)));
    }
    for w in &state.warnings {
        out.push_str(&format!("warning: {}\n", sanitize_line(w)));
    }
    grown_lines(state, &mut out);
    replan_lines(state, &mut out);
    answer_lines(state, &mut out);
    spec_lines(state, &mut out);
    reason_lines(state, &mut out);
    unchecked_lines(state, &mut out);
    over_cap_lines(state, &mut out);
    out
}

/// A line per attempt that reported more than its agent's per-attempt
/// `cost` cap: its real cost is what was charged.
fn over_cap_lines(state: &RunState, out: &mut String) {
    for t in &state.tasks {
        for h in t.history.iter().filter(|h| h.over_cap) {
            let cost = h
                .cost_micro_usd
                .map_or_else(|| "?".to_string(), crate::run::time::dollars);
            out.push_str(&format!(
                "over cap: {} attempt {} cost {cost}, more than its agent's `cost` cap \
                 (counted in full against the budget)\n",
                sanitize_line(&t.name),
                h.attempt
            ));
        }
    }
}

/// The attempts column of task `t`: its attempts, with those earlier runs
/// spent under the same key (it was resumed) said.
fn attempts_cell(t: &crate::state::TaskState) -> String {
    if t.earlier_attempts > 0 {
        format!("{} ({} earlier)", t.attempts, t.earlier_attempts)
    } else {
        t.attempts.to_string()
    }
}

/// A line per task whose result this run did not check with some of its
/// gates (`--skip-gate`).
fn unchecked_lines(state: &RunState, out: &mut String) {
    for t in state.tasks.iter().filter(|t| !t.not_checked_by.is_empty()) {
        let gates: Vec<String> = t
            .not_checked_by
            .iter()
            .map(|g| format!("`{}`", sanitize_line(g)))
            .collect();
        out.push_str(&format!(
            "not checked in this run: {} by gate {} (--skip-gate)\n",
            sanitize_line(&t.name),
            gates.join(", "),
        ));
    }
}

/// The table's header and a row per task, in columns; nothing for a plan
/// without tasks (a header over no rows says nothing). `live`: the run is
/// still going (running tasks' times are counted to now).
fn task_rows(state: &RunState, live: bool) -> String {
    if state.tasks.is_empty() {
        return String::new();
    }
    let mut rows: Vec<[String; 5]> = vec![[
        "task".into(),
        "status".into(),
        "attempts".into(),
        "time".into(),
        "cost".into(),
    ]];
    for t in &state.tasks {
        let cost = if t.cost_unknown {
            format!("{}+?", crate::run::time::dollars(t.cost_micro_usd))
        } else {
            crate::run::time::dollars(t.cost_micro_usd)
        };
        rows.push([
            t.name.clone(),
            shown_status(state, t).into(),
            attempts_cell(t),
            time_cell(t, live),
            cost,
        ]);
    }
    let mut widths = [0usize; 5];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The run's total line: status, tasks passed, agent attempts, cost, the
/// integration branch.
fn total_line(state: &RunState, status: &str, any_unknown: bool) -> String {
    let total_cost: u64 = state.tasks.iter().map(|t| t.cost_micro_usd).sum();
    let passed = state.tasks.iter().filter(|t| t.status.is_done()).count();
    let count = |s: TaskStatus| state.tasks.iter().filter(|t| t.status == s).count();
    let (cached, satisfied) = (
        count(TaskStatus::Cached),
        count(TaskStatus::AlreadySatisfied),
    );
    let mut how = Vec::new();
    if cached > 0 {
        how.push(format!("{cached} from the cache"));
    }
    if satisfied > 0 {
        how.push(format!("{satisfied} already satisfied"));
    }
    format!(
        "run {}: {passed}/{} tasks passed{}, {} agent attempt{}, {}{}, integration branch {} at {}\n",
        status,
        state.tasks.len(),
        if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join(", "))
        },
        state.spent.iterations,
        if state.spent.iterations == 1 { "" } else { "s" },
        crate::run::time::dollars(total_cost),
        // `+?` in a row is said in words once, here.
        if any_unknown {
            " (some costs unknown, shown `+?`: an agent reported none and has no `cost` cap)"
        } else {
            ""
        },
        sanitize_line(&state.integration_branch),
        state.head_commit.get(..10).unwrap_or(&state.head_commit),
    )
}

/// The budget line (what each limit of the plan's `budget` spent of it);
/// empty when the plan sets none.
fn budget_line(state: &RunState, any_unknown: bool) -> String {
    let l = &state.limits;
    let s = &state.spent;
    let mut budget = Vec::new();
    if let Some(n) = l.iterations {
        budget.push(format!("iterations {}", of(s.iterations, n)));
    }
    if let Some(c) = l.cost_micro_usd {
        // A cost that could not be read is not $0: the table's `$…+?`.
        budget.push(format!(
            "cost {}{} of {}",
            crate::run::time::dollars(s.cost_micro_usd),
            if any_unknown { "+?" } else { "" },
            crate::run::time::dollars(c)
        ));
    }
    if let Some(t) = l.time_ms {
        budget.push(format!(
            "time {} of {}",
            crate::run::time::human_duration(Duration::from_millis(s.elapsed_ms)),
            crate::run::time::human_duration(Duration::from_millis(t))
        ));
    }
    if let Some(w) = l.wait_ms {
        budget.push(format!(
            "wait {} of {}",
            crate::run::time::human_duration(Duration::from_millis(s.waited_ms)),
            crate::run::time::human_duration(Duration::from_millis(w))
        ));
    }
    if l.failures > 0 {
        let (spent, limit) = (s.consecutive_failures, l.failures);
        budget.push(if spent <= limit {
            format!("failures in a row {spent} of {limit}")
        } else {
            // Past the limit without tripping it: a streak of one task's
            // own attempts does not (docs/resilience.md), nor do attempts
            // already running when it was reached.
            format!(
                "failures in a row {spent} (limit {limit}: one task's own failed attempts, \
                 and attempts already running when it was reached, do not trip it)"
            )
        });
    }
    if budget.is_empty() {
        String::new()
    } else {
        format!("budget: {}\n", budget.join(", "))
    }
}

/// The tasks that plan fragments added, by the task that wrote each.
fn grown_lines(state: &RunState, out: &mut String) {
    let mut producers: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &state.tasks {
        if let Some(p) = &t.expanded_from {
            match producers.iter_mut().find(|(q, _)| q == p) {
                Some((_, added)) => added.push(&t.name),
                None => producers.push((p, vec![&t.name])),
            }
        }
    }
    for (p, added) in producers {
        out.push_str(&format!(
            "grown: {p}'s plan fragment added {} task{}: {}\n",
            added.len(),
            if added.len() == 1 { "" } else { "s" },
            crate::visible::some_of(&added, 20)
        ));
    }
}

/// A line per re-plan (docs/language.md "Re-planning"): which producer
/// re-planned its fragment for which failed task.
fn replan_lines(state: &RunState, out: &mut String) {
    for t in &state.tasks {
        for (k, r) in t.replans.iter().enumerate() {
            out.push_str(&format!(
                "re-planned: {} wrote its plan fragment again ({} of this run) for `{}`: {}\n",
                sanitize_line(&t.name),
                k + 1,
                sanitize_line(&r.task),
                sanitize_line(r.reason.lines().next().unwrap_or_default()),
            ));
        }
    }
}

/// A line per task whose question an answerer agent answered in this run
/// (docs/language.md "Answers without a person"), with how to override it.
fn answer_lines(state: &RunState, out: &mut String) {
    for t in &state.tasks {
        if let Some(by) = &t.answered_by {
            out.push_str(&format!(
                "answered by agent `{}`: {}'s question (a person overrides it with `loopc answer {} \"…\"`)\n",
                sanitize_line(by),
                sanitize_line(&t.name),
                t.name
            ));
        }
    }
}

/// A REEL spec tree: where each spec of the worked stages went.
fn spec_lines(state: &RunState, out: &mut String) {
    for s in &state.specs {
        let line = match (s.status, &s.to, &s.commit, &s.reason) {
            (crate::state::SpecStatus::Advanced, Some(to), Some(c), _) => format!(
                "spec {}: moved from {}/ to {to}/ at {}",
                s.file,
                s.stage,
                c.get(..10).unwrap_or(c)
            ),
            (_, _, _, Some(why)) => format!("spec {}: stays in {}/: {why}", s.file, s.stage),
            _ => format!("spec {}: {} in {}/", s.file, s.status.as_str(), s.stage),
        };
        out.push_str(&sanitize_line(&line));
        out.push('\n');
    }
}

/// Why each task that did not pass did not, with its question and where
/// to look.
fn reason_lines(state: &RunState, out: &mut String) {
    for t in &state.tasks {
        if let Some(r) = &t.reason
            && !t.status.is_done()
        {
            if shown_status(state, t) == STOPPED {
                // An attempt whose question an answerer answered did not
                // fail: the next one was to go on with the answer.
                let failed = t.history.last().is_none_or(|h| h.outcome == "failed");
                out.push_str(&format!(
                    "  {}: stopped after {} {}attempt{} (the run stopped before {}): {}\n",
                    t.name,
                    t.attempts,
                    if failed { "failed " } else { "" },
                    if t.attempts == 1 { "" } else { "s" },
                    if failed {
                        "a retry"
                    } else {
                        "the next attempt"
                    },
                    sanitize_line(r)
                ));
            } else {
                out.push_str(&format!("  {}: {}\n", t.name, sanitize_line(r)));
            }
            if t.status == TaskStatus::NeedsHuman {
                if let Some(q) = &t.question
                    && q.trim().lines().nth(1).is_some()
                {
                    for line in q.trim().lines() {
                        out.push_str(&format!("    > {}\n", sanitize_line(line)));
                    }
                }
                out.push_str(&answer_hint(&t.name));
            }
            if t.status == TaskStatus::CompletedUnreviewed
                && let Some(branch) = &t.branch
            {
                let branch = sanitize_line(branch);
                out.push_str(&format!(
                    "    its work passed every command check and waits on branch {branch}: \
                     review it, then take it with `git merge {branch}`\n"
                ));
            }
            // Where to look: the last attempt's log directory.
            if (matches!(
                t.status,
                TaskStatus::Failed
                    | TaskStatus::Blocked
                    | TaskStatus::NeedsHuman
                    | TaskStatus::CompletedUnreviewed
            ) || shown_status(state, t) == STOPPED)
                && let Some(logs) = &t.logs
            {
                // `loopc status` after `loopc clean`: the path no longer
                // leads anywhere.
                let gone = if std::path::Path::new(logs).exists() {
                    ""
                } else {
                    " (no longer there: `loopc clean` removes logs)"
                };
                out.push_str(&format!("    logs: {}{gone}\n", sanitize_line(logs)));
            }
        }
    }
}

/// The status column's word for a task of a stopped run that had failed
/// attempts and was waiting for a retry (state.json keeps `pending`).
const STOPPED: &str = "stopped";

/// The status shown for task `t`: its state, except that a task still
/// `pending` after failed attempts in a run that has ended is `stopped`
/// (the run ended before its retry), so it does not look untouched.
fn shown_status(state: &RunState, t: &crate::state::TaskState) -> &'static str {
    if t.status == crate::state::TaskStatus::Pending
        && t.attempts > 0
        && state.status != crate::state::RunStatus::Running
    {
        STOPPED
    } else {
        t.status.shown()
    }
}

/// `spent of limit`; past the limit (attempts that were already running
/// when it was reached still finish and count) it says so instead of
/// reading like a wrong sum.
fn of(spent: u32, limit: u32) -> String {
    if spent <= limit {
        format!("{spent} of {limit}")
    } else {
        format!("{spent} (limit {limit}: attempts already running when it was reached still count)")
    }
}

/// The line under a task that needs a person: how to answer it.
pub fn answer_hint(task: &str) -> String {
    format!("    answer with `loopc answer {task} \"…\"` (or `--file PATH`), then `loopc run`\n")
}

/// A task's time: its attempts' and merges' (`-` for none); for a task
/// still running in a live run (`live`), the time since it started, which
/// state.json only adds up once an attempt ends.
fn time_cell(t: &crate::state::TaskState, live: bool) -> String {
    let mut ms = t.duration_ms;
    if live
        && t.status == TaskStatus::Running
        && let Some(start) = t
            .started_at
            .as_deref()
            .and_then(crate::run::time::parse_rfc3339)
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        ms = ms.max(now.saturating_sub(start).saturating_mul(1000));
    }
    if ms == 0 {
        "-".into()
    } else {
        crate::run::time::human_duration(Duration::from_millis(ms))
    }
}
