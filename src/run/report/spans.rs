//! When things happened in a run, from its events: each try of a task
//! (its start, the phases it went through, when its own work ended, its
//! merge), each wait for a usage limit and each replay or spec move the
//! coordinator checked. Times are the events' `elapsed_ms`.

use super::events::{Recorded, RunEvents};
use std::collections::HashMap;

/// A phase a try entered, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// `setup`, `agent`, `command`, `commit`, `gate`, `merge`, `resolve`,
    /// `merge gate`.
    pub phase: String,
    /// The gate, in gate phases.
    pub gate: Option<String>,
    /// When it began.
    pub at_ms: u64,
}

impl Mark {
    /// Whether the coordinator runs it (a merge and what it runs), not
    /// the try's own slot.
    pub fn on_coordinator(&self) -> bool {
        matches!(self.phase.as_str(), "merge" | "resolve" | "merge gate")
    }

    /// `gate tests`, `merge`, …
    pub fn label(&self) -> String {
        match &self.gate {
            Some(g) => format!("{} {g}", self.phase),
            None => self.phase.clone(),
        }
    }
}

/// One try as its events tell it.
#[derive(Debug, Clone, Default)]
pub struct EventTry {
    /// The task.
    pub task: String,
    /// The attempt number.
    pub attempt: u32,
    /// The infrastructure retry (2, 3, …).
    pub retry: Option<u32>,
    /// Its log directory.
    pub logs: Option<String>,
    /// The fallback agent that ran it.
    pub fallback: Option<String>,
    /// Its slot.
    pub slot: Option<u32>,
    /// When it started.
    pub start_ms: u64,
    /// When it ended (its `attempt_finished`), if it did.
    pub end_ms: Option<u64>,
    /// When its own work ended in its slot.
    pub work_end_ms: Option<u64>,
    /// Its outcome, once it ended.
    pub outcome: Option<String>,
    /// The phases it entered, in order.
    pub marks: Vec<Mark>,
    /// When its resolver finished, if one ran.
    pub resolver_end_ms: Option<u64>,
    /// When its work reached the integration branch.
    pub merged_ms: Option<u64>,
    /// How (the `merged` event's `how`: `fast_forward`, `merge`,
    /// `resolved`, or `none` when it changed nothing).
    pub merged_how: Option<String>,
}

impl EventTry {
    /// When its own work ended: recorded, else when the coordinator took
    /// it up, else its end.
    pub fn work_end(&self, run_end: u64) -> u64 {
        let end = self.end_ms.unwrap_or(run_end);
        self.work_end_ms
            .or_else(|| {
                self.marks
                    .iter()
                    .find(|m| m.on_coordinator())
                    .map(|m| m.at_ms)
            })
            .unwrap_or(end)
            .clamp(self.start_ms, end.max(self.start_ms))
    }
}

/// A task's wait for an agent's usage limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    /// The task.
    pub task: String,
    /// The limited agent.
    pub agent: String,
    /// What the agent said.
    pub message: String,
    /// When it began.
    pub start_ms: u64,
    /// When it ended: the wait was over, the task started again, or the
    /// run ended.
    pub end_ms: u64,
    /// How long it was to last.
    pub planned_ms: u64,
}

/// Checks the coordinator ran for a task outside its attempts: a replay
/// from the cache (`replay`) or a REEL spec's move (`advance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coordinated {
    /// The task.
    pub task: String,
    /// `replay` or `advance`.
    pub kind: String,
    /// What it shows.
    pub label: String,
    /// When it began.
    pub start_ms: u64,
    /// When it ended.
    pub end_ms: u64,
}

/// Everything timed in a run.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    /// Every try, in the order they started.
    pub tries: Vec<EventTry>,
    /// Every wait.
    pub waits: Vec<Wait>,
    /// Every replay and spec move.
    pub coordinated: Vec<Coordinated>,
    /// When the run ended (its last event).
    pub end_ms: u64,
}

/// The spans of `events`; `until`: for a run still going on, how long it
/// has run (ms), to which its open spans (a try still running) reach.
pub fn collect(events: &RunEvents, until: Option<u64>) -> Spans {
    let end = events.end_ms().max(until.unwrap_or(0));
    let mut s = Spans {
        end_ms: end,
        ..Spans::default()
    };
    let mut open: HashMap<String, usize> = HashMap::new();
    let mut waiting: HashMap<String, usize> = HashMap::new();
    let mut checking: HashMap<String, usize> = HashMap::new();
    for e in &events.events {
        let task = e.task().to_string();
        let at = e.elapsed_ms;
        match e.event.as_str() {
            "attempt_started" => {
                if let Some(w) = waiting.remove(&task) {
                    s.waits[w].end_ms = s.waits[w].end_ms.min(at);
                }
                open.insert(task.clone(), s.tries.len());
                s.tries.push(started(e, task));
            }
            "phase" if e.attempt == Some(0) => check_phase(&mut s, &mut checking, e, task),
            "phase" => {
                if let Some(&i) = open.get(&task) {
                    s.tries[i].marks.push(Mark {
                        phase: e.phase.clone().unwrap_or_default(),
                        gate: e.gate.clone(),
                        at_ms: at,
                    });
                }
            }
            "resolver_finished" => {
                if let Some(&i) = open.get(&task) {
                    s.tries[i].resolver_end_ms = Some(at);
                }
            }
            "merged" => {
                if let Some(&i) = open.get(&task) {
                    s.tries[i].merged_ms = Some(at);
                    s.tries[i].merged_how = e.how.clone();
                }
            }
            "attempt_finished" => {
                if let Some(i) = open.remove(&task) {
                    let t = &mut s.tries[i];
                    t.end_ms = Some(at);
                    t.outcome = e.outcome.clone();
                    t.work_end_ms = e.work_end_ms;
                }
            }
            "waiting" => {
                let planned = e.wait_ms.unwrap_or(0);
                if planned > 0 && e.fallback.is_none() {
                    waiting.insert(task.clone(), s.waits.len());
                    s.waits.push(Wait {
                        agent: e.agent_name().unwrap_or("").to_string(),
                        message: e.message.clone().unwrap_or_default(),
                        start_ms: at,
                        end_ms: at.saturating_add(planned).min(end),
                        planned_ms: planned,
                        task,
                    });
                }
            }
            "cached" | "cache_miss" => replayed(&mut s, &mut checking, e, task),
            "spec_advanced" | "spec_stayed" => {
                let ended: Vec<String> = checking
                    .iter()
                    .filter(|(_, c)| s.coordinated[**c].kind == "advance")
                    .map(|(t, _)| t.clone())
                    .collect();
                for t in ended {
                    if let Some(c) = checking.remove(&t) {
                        s.coordinated[c].end_ms = at;
                    }
                }
            }
            _ => {}
        }
    }
    s
}

/// A `cached` event's `how` (docs/state.md) in words: `fast-forward`,
/// `onto a new base`, `checked again`, `no changes`; another as it is.
pub fn replay_words(how: &str) -> &str {
    match how {
        "fast_forward" => "fast-forward",
        "replay" => "onto a new base",
        "gated" => "checked again",
        "none" => "no changes",
        other => other,
    }
}

/// A `cached` or `cache_miss` event `e`: the end of the replay's checks
/// (`checking` holds the open ones), or a moment of its own when nothing
/// was checked (a fast-forward).
fn replayed(s: &mut Spans, checking: &mut HashMap<String, usize>, e: &Recorded, task: String) {
    let at = e.elapsed_ms;
    let label = match (&e.event[..], e.how.as_deref()) {
        ("cached", Some(how)) => format!("replay ({})", replay_words(how)),
        ("cached", None) => "replay".to_string(),
        _ => "replay (cache entry not used)".to_string(),
    };
    match checking.remove(&task) {
        Some(c) => {
            s.coordinated[c].end_ms = at;
            s.coordinated[c].label = label;
        }
        // Nothing was checked (a fast-forward): a moment.
        None => s.coordinated.push(Coordinated {
            task,
            kind: "replay".into(),
            label,
            start_ms: at,
            end_ms: at,
        }),
    }
}

/// The try `e` (an `attempt_started`) starts.
fn started(e: &Recorded, task: String) -> EventTry {
    EventTry {
        task,
        attempt: e.attempt.unwrap_or(0),
        retry: e.retry,
        logs: e.logs.clone(),
        fallback: e.fallback.clone(),
        slot: e.slot,
        start_ms: e.elapsed_ms,
        ..EventTry::default()
    }
}

/// A phase of attempt 0: a replay's or a spec move's checks, which the
/// coordinator runs.
fn check_phase(s: &mut Spans, checking: &mut HashMap<String, usize>, e: &Recorded, task: String) {
    let phase = e.phase.as_deref().unwrap_or("");
    let kind = if phase.starts_with("advance") {
        "advance"
    } else {
        "replay"
    };
    match checking.get(&task) {
        Some(&c) if s.coordinated[c].kind == kind => {}
        _ => {
            checking.insert(task.clone(), s.coordinated.len());
            s.coordinated.push(Coordinated {
                task,
                kind: kind.into(),
                label: if kind == "advance" {
                    "spec move".into()
                } else {
                    "replay".into()
                },
                start_ms: e.elapsed_ms,
                end_ms: s.end_ms,
            });
        }
    }
}
