//! Each try of a task: what state.json's `history` recorded of it (outcome,
//! reason, cost, what the agent reported), when its events say it ran,
//! and what its log directory holds (feedback, the handoff's summary, the
//! checks' output, the diff).

use super::model::{Named, TryReport};
use super::spans::EventTry;
use super::text::{Keep, Reader};
use crate::plan::{Agent, Task, TaskKind};
use crate::state::{AttemptRecord, TaskState};
use std::path::{Path, PathBuf};

/// What reading a task's tries needs.
pub struct Sources<'a> {
    /// Where a recorded log directory is now.
    pub log_dir: &'a dyn Fn(&str) -> PathBuf,
    /// The log files read so far.
    pub reader: &'a mut Reader,
}

/// The tries of task `ts` (the plan's `task`, when the plan could be
/// read), whose events are `timed`, in the order they ended (a try still
/// going on last).
pub fn of_task(
    ts: &TaskState,
    task: Option<&Task>,
    timed: &[&EventTry],
    src: &mut Sources<'_>,
) -> Vec<TryReport> {
    let mut used = vec![false; timed.len()];
    let mut out = Vec::new();
    for h in &ts.history {
        let k = (0..timed.len()).find(|&k| {
            !used[k]
                && timed[k].attempt == h.attempt
                && (h.logs.is_none() || timed[k].logs.is_none() || timed[k].logs == h.logs)
        });
        if let Some(k) = k {
            used[k] = true;
        }
        out.push(recorded(h, k.map(|k| timed[k]), task, src));
    }
    // Tries the state has no entry for: still going on (or a state file
    // that lost them).
    for (k, t) in timed.iter().enumerate() {
        if used[k] {
            continue;
        }
        let h = AttemptRecord {
            attempt: t.attempt,
            outcome: t.outcome.clone().unwrap_or_else(|| "running".into()),
            reason: None,
            cost_micro_usd: None,
            logs: t.logs.clone(),
            worktree: None,
            agent: None,
            fallback: t.fallback.clone(),
            resolver: None,
            over_cap: false,
            capped: false,
        };
        let mut r = recorded(&h, Some(t), task, src);
        if t.end_ms.is_none() {
            r.cost_mark = None;
        }
        out.push(r);
    }
    with_summary(out, ts)
}

/// The report of the try `h` recorded, timed by `t`.
fn recorded(
    h: &AttemptRecord,
    t: Option<&EventTry>,
    task: Option<&Task>,
    src: &mut Sources<'_>,
) -> TryReport {
    let agent = task.and_then(|task| agent_of(task, h.fallback.as_deref()));
    let mut r = TryReport {
        attempt: h.attempt,
        retry: t.and_then(|t| t.retry),
        outcome: h.outcome.clone(),
        reason: h.reason.clone(),
        cost_micro_usd: h.cost_micro_usd,
        cost_mark: cost_mark(h, agent),
        agent_name: agent.map(|a| a.name.clone()),
        fallback: h.fallback.clone(),
        agent: h.agent.clone(),
        slot: t.and_then(|t| t.slot),
        start_ms: t.map(|t| t.start_ms),
        end_ms: t.and_then(|t| t.end_ms),
        logs: h.logs.clone(),
        worktree: h.worktree.clone(),
        resolver: h.resolver.clone(),
        ..TryReport::default()
    };
    if let Some(logs) = &h.logs {
        let dir = (src.log_dir)(logs);
        r.logs = Some(dir.to_string_lossy().into_owned());
        read_logs(&mut r, &dir, t, src.reader);
    }
    r
}

/// The summary of the task's passed try when its handoff gave none: what
/// the state recorded (Claude Code's result, say).
fn with_summary(mut tries: Vec<TryReport>, ts: &TaskState) -> Vec<TryReport> {
    if let Some(last) = tries.iter_mut().rev().find(|r| r.outcome == "passed")
        && last.summary.is_none()
    {
        last.summary = ts.summary.clone();
    }
    tries
}

/// Fills `r` from its log directory `dir`.
fn read_logs(r: &mut TryReport, dir: &Path, t: Option<&EventTry>, reader: &mut Reader) {
    r.summary = std::fs::read(dir.join("handoff.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("summary")?.as_str().map(str::to_string))
        .filter(|s| !s.trim().is_empty());
    r.feedback = reader
        .read(&dir.join("feedback.md"), Keep::Tail)
        .filter(|t| !t.text.trim().is_empty());
    for (file, name) in [
        ("setup.log", "setup"),
        ("command.log", "command output"),
        ("fragment-check.log", "plan fragment check"),
    ] {
        if let Some(log) = reader.read(&dir.join(file), Keep::Tail) {
            r.output.push(Named {
                name: name.into(),
                log,
            });
        }
    }
    // The checks in the order they ran, then any other check's log.
    let mut names: Vec<String> = Vec::new();
    for m in t.map_or(&[][..], |t| &t.marks[..]) {
        let file = match (m.phase.as_str(), &m.gate) {
            ("gate", Some(g)) => format!("gate-{g}.log"),
            ("merge gate", Some(g)) => format!("merge-{g}.log"),
            _ => continue,
        };
        if !names.contains(&file) {
            names.push(file);
        }
    }
    let mut rest: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    (n.starts_with("gate-") || n.starts_with("merge-")) && n.ends_with(".log")
                })
                .filter(|n| !names.contains(n))
                .collect()
        })
        .unwrap_or_default();
    rest.sort();
    names.extend(rest);
    for file in names {
        let Some(log) = reader.read(&dir.join(&file), Keep::Tail) else {
            continue;
        };
        let stem = file.trim_end_matches(".log");
        let name = match stem.strip_prefix("gate-") {
            Some(g) => g.to_string(),
            None => format!("merge {}", stem.trim_start_matches("merge-")),
        };
        r.gates.push(Named { name, log });
    }
    r.diff = reader.read(&dir.join("diff.patch"), Keep::Head);
}

/// The agent that ran a try of `task`: its `fallback`, else the task's own.
fn agent_of<'a>(task: &'a Task, fallback: Option<&str>) -> Option<&'a Agent> {
    let TaskKind::Agent { agent, .. } = &task.kind else {
        return None;
    };
    match fallback {
        Some(f) => agent
            .fallbacks
            .iter()
            .find(|a| a.name == f)
            .map(|a| a.as_ref()),
        None => Some(agent.as_ref()),
    }
}

/// How try `h`'s cost is to be read (docs/report.md): `unknown`, `capped`
/// (its agent reported none, so its `cost` cap was charged), `over cap`
/// (its agent reported more than the cap), or `None`.
pub fn cost_mark(h: &AttemptRecord, agent: Option<&Agent>) -> Option<String> {
    if h.cost_micro_usd.is_none() {
        return Some("unknown".into());
    }
    if h.over_cap {
        return Some("over cap".into());
    }
    if h.capped {
        return Some("capped".into());
    }
    // Records that predate `over_cap`: what the agent's output reported.
    let cap = agent?.cost?;
    let reported = h.agent.as_ref().and_then(|a| a.cost_micro_usd);
    reported.is_some_and(|c| c > cap).then(|| "over cap".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::AgentRecord;

    fn attempt(outcome: &str, cost: Option<u64>, reported: Option<u64>) -> AttemptRecord {
        AttemptRecord {
            attempt: 1,
            outcome: outcome.into(),
            reason: None,
            cost_micro_usd: cost,
            logs: None,
            worktree: None,
            agent: reported.map(|c| AgentRecord {
                cost_micro_usd: Some(c),
                ..AgentRecord::default()
            }),
            fallback: None,
            resolver: None,
            over_cap: false,
            capped: false,
        }
    }

    #[test]
    fn costs_are_marked_unknown_capped_or_over_the_cap() {
        let plan = crate::compile(
            "t.loop",
            "agent a { run = \"x\"  cost = $1 }\nagent b { run = \"y\" }\n\
             task t { agent = a  prompt = \"p\" }\ntask u { agent = b  prompt = \"p\" }\n",
        )
        .plan
        .expect("a plan");
        let a = agent_of(&plan.tasks[0], None);
        let b = agent_of(&plan.tasks[1], None);
        let mark = |h: AttemptRecord, agent| cost_mark(&h, agent);
        assert_eq!(
            mark(attempt("failed", None, None), a).as_deref(),
            Some("unknown")
        );
        // The cap charged because nothing was reported, as the run
        // records it; a cost the handoff reported is no cap.
        let capped = AttemptRecord {
            capped: true,
            ..attempt("passed", Some(1_000_000), None)
        };
        assert_eq!(mark(capped, a).as_deref(), Some("capped"));
        assert_eq!(mark(attempt("passed", Some(10_000), None), a), None);
        let over = AttemptRecord {
            over_cap: true,
            ..attempt("passed", Some(3_000_000), None)
        };
        assert_eq!(mark(over, a).as_deref(), Some("over cap"));
        assert_eq!(
            mark(attempt("passed", Some(2_000_000), Some(2_000_000)), a).as_deref(),
            Some("over cap")
        );
        assert_eq!(
            mark(attempt("passed", Some(500_000), Some(500_000)), a),
            None
        );
        assert_eq!(mark(attempt("limited", Some(0), None), a), None);
        assert_eq!(mark(attempt("passed", Some(7), Some(7)), b), None);
        assert_eq!(
            agent_of(&plan.tasks[0], Some("nobody")).map(|a| a.name.clone()),
            None
        );
    }
}
