//! The timeline: each try as a bar on the parallel slot it ran in (its
//! phases within it, then `queued` while it waited for the coordinator),
//! the coordinator's own row (merges, the checks run again on them,
//! resolver sessions, cache replays, spec moves), and rows for the waits
//! for agents' usage limits.

use super::model::{Bar, Lane, Timeline};
use super::spans::{EventTry, Spans};

/// The timeline of `spans`.
pub fn build(spans: &Spans) -> Timeline {
    let end = spans.end_ms;
    let slots = slots_of(&spans.tries, end);
    let slot_lanes = slots.iter().copied().max().unwrap_or(0);
    let mut lanes: Vec<Lane> = (1..=slot_lanes)
        .map(|n| Lane {
            kind: "slot".into(),
            label: format!("slot {n}"),
        })
        .collect();
    let coordinator = lanes.len();
    lanes.push(Lane {
        kind: "coordinator".into(),
        label: "merges".into(),
    });
    let mut bars = Vec::new();
    for (t, &slot) in spans.tries.iter().zip(&slots) {
        try_bars(
            t,
            slot.saturating_sub(1) as usize,
            coordinator,
            end,
            &mut bars,
        );
    }
    for c in &spans.coordinated {
        bars.push(Bar {
            lane: coordinator,
            kind: c.kind.clone(),
            task: c.task.clone(),
            attempt: 0,
            label: format!("{}: {}", c.task, c.label),
            start_ms: c.start_ms,
            end_ms: c.end_ms.max(c.start_ms),
            outcome: None,
        });
    }
    // Waits on rows of their own, packed: a waiting task holds no slot.
    let mut free_at: Vec<u64> = Vec::new();
    for w in &spans.waits {
        let row = match free_at.iter().position(|&f| f <= w.start_ms) {
            Some(r) => r,
            None => {
                free_at.push(0);
                lanes.push(Lane {
                    kind: "wait".into(),
                    label: format!("waiting {}", free_at.len()),
                });
                free_at.len() - 1
            }
        };
        free_at[row] = w.end_ms.max(w.start_ms + 1);
        bars.push(Bar {
            lane: coordinator + 1 + row,
            kind: "wait".into(),
            task: w.task.clone(),
            attempt: 0,
            label: format!("{} waits for {}'s usage limit", w.task, w.agent),
            start_ms: w.start_ms,
            end_ms: w.end_ms.max(w.start_ms),
            outcome: None,
        });
    }
    Timeline {
        end_ms: end,
        lanes,
        bars,
    }
}

/// The slot (1-based) of each try: the one its event names, else the
/// lowest one free when it started (events of loopc versions that did not
/// record slots).
fn slots_of(tries: &[EventTry], end: u64) -> Vec<u32> {
    // Until when each slot is taken, by the tries placed so far.
    let mut taken: Vec<u64> = Vec::new();
    let mut out = Vec::with_capacity(tries.len());
    for t in tries {
        let until = t.work_end(end).max(t.start_ms + 1);
        let slot = match t.slot {
            Some(s) if s > 0 => s,
            _ => taken
                .iter()
                .position(|&u| u <= t.start_ms)
                .map_or(taken.len() + 1, |i| i + 1) as u32,
        };
        let i = slot as usize - 1;
        if taken.len() <= i {
            taken.resize(i + 1, 0);
        }
        taken[i] = taken[i].max(until);
        out.push(slot);
    }
    out
}

/// The bars of try `t`: the try on its slot's lane `lane`, its phases, the
/// wait for the coordinator and what the coordinator did with it.
fn try_bars(t: &EventTry, lane: usize, coordinator: usize, run_end: u64, bars: &mut Vec<Bar>) {
    let end = t.end_ms.unwrap_or(run_end).max(t.start_ms);
    let work_end = t.work_end(run_end);
    let name = match t.retry {
        Some(r) => format!("{} #{} (retry {r})", t.task, t.attempt),
        None => format!("{} #{}", t.task, t.attempt),
    };
    let bar = |lane: usize, kind: &str, label: String, start: u64, stop: u64| Bar {
        lane,
        kind: kind.into(),
        task: t.task.clone(),
        attempt: t.attempt,
        label,
        start_ms: start,
        end_ms: stop.max(start),
        outcome: None,
    };
    let mut whole = bar(lane, "attempt", name.clone(), t.start_ms, work_end);
    whole.outcome = Some(t.outcome.clone().unwrap_or_else(|| "running".into()));
    bars.push(whole);
    let own: Vec<_> = t.marks.iter().filter(|m| !m.on_coordinator()).collect();
    for (k, m) in own.iter().enumerate() {
        let stop = own.get(k + 1).map_or(work_end, |n| n.at_ms).min(work_end);
        let kind = if m.phase == "gate" { "gate" } else { &m.phase };
        bars.push(bar(
            lane,
            kind,
            format!("{name}: {}", m.label()),
            m.at_ms,
            stop,
        ));
    }
    let coordinated: Vec<_> = t.marks.iter().filter(|m| m.on_coordinator()).collect();
    let taken_up = coordinated.first().map_or(end, |m| m.at_ms);
    if taken_up > work_end {
        bars.push(bar(
            lane,
            "queued",
            format!("{name}: done, waiting for the coordinator"),
            work_end,
            taken_up,
        ));
    }
    for (k, m) in coordinated.iter().enumerate() {
        let mut stop = coordinated.get(k + 1).map_or(end, |n| n.at_ms);
        if m.phase == "resolve"
            && let Some(r) = t.resolver_end_ms
        {
            stop = stop.min(r.max(m.at_ms));
        }
        bars.push(bar(
            coordinator,
            &m.phase,
            format!("{name}: {}", m.label()),
            m.at_ms,
            stop,
        ));
    }
    // A fast-forward (or a task that changed nothing) runs no checks: a
    // moment on the coordinator's row.
    if coordinated.is_empty()
        && let Some(at) = t.merged_ms
    {
        let label = match t.merged_how.as_deref() {
            Some("none") => format!("{name}: no changes to merge"),
            _ => format!("{name}: merge"),
        };
        bars.push(bar(coordinator, "merge", label, at, at));
    }
}

#[cfg(test)]
mod tests {
    use super::super::spans::{EventTry, Mark, Spans, Wait};
    use super::*;

    fn mark(phase: &str, gate: Option<&str>, at_ms: u64) -> Mark {
        Mark {
            phase: phase.into(),
            gate: gate.map(str::to_string),
            at_ms,
        }
    }

    #[test]
    fn phases_queue_and_merge_fall_on_their_rows() {
        let t = EventTry {
            task: "a".into(),
            attempt: 1,
            slot: Some(2),
            start_ms: 10,
            end_ms: Some(100),
            work_end_ms: Some(60),
            outcome: Some("passed".into()),
            marks: vec![
                mark("agent", None, 12),
                mark("gate", Some("tests"), 40),
                mark("merge", None, 80),
                mark("merge gate", Some("tests"), 85),
            ],
            ..EventTry::default()
        };
        let spans = Spans {
            tries: vec![t],
            waits: vec![Wait {
                task: "b".into(),
                agent: "claude".into(),
                message: String::new(),
                start_ms: 5,
                end_ms: 50,
                planned_ms: 45,
            }],
            coordinated: Vec::new(),
            end_ms: 120,
        };
        let tl = build(&spans);
        let kinds: Vec<(&str, usize, u64, u64)> = tl
            .bars
            .iter()
            .map(|b| (b.kind.as_str(), b.lane, b.start_ms, b.end_ms))
            .collect();
        assert_eq!(
            kinds,
            [
                ("attempt", 1, 10, 60),
                ("agent", 1, 12, 40),
                ("gate", 1, 40, 60),
                ("queued", 1, 60, 80),
                ("merge", 2, 80, 85),
                ("merge gate", 2, 85, 100),
                ("wait", 3, 5, 50),
            ]
        );
        let lanes: Vec<&str> = tl.lanes.iter().map(|l| l.kind.as_str()).collect();
        assert_eq!(lanes, ["slot", "slot", "coordinator", "wait"]);
    }

    #[test]
    fn tries_without_slots_are_packed() {
        let t = |start_ms, end| EventTry {
            task: "t".into(),
            attempt: 1,
            start_ms,
            end_ms: Some(end),
            ..EventTry::default()
        };
        let slots = slots_of(&[t(0, 10), t(5, 20), t(10, 30), t(12, 14)], 40);
        assert_eq!(slots, [1, 2, 1, 3]);
    }
}
