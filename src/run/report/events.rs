//! Reading `.loopc/events.jsonl` back (its format: docs/state.md): each
//! line leniently (a field this loopc does not know is ignored, a line
//! that is not JSON, such as a line torn by `kill -9`, is skipped), then cut
//! into runs at their `run_started` events.

use serde::Deserialize;
use std::path::Path;

/// One recorded event: the common fields and every event's own fields,
/// each absent when the event does not have it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Recorded {
    /// Sequence number.
    pub seq: u64,
    /// Wall-clock time (RFC 3339).
    pub time: String,
    /// Milliseconds since its run started (monotonic).
    pub elapsed_ms: u64,
    /// The kind (`attempt_started`, …).
    pub event: String,
    /// The task.
    pub task: Option<String>,
    /// The attempt number (0: a replay's or a spec move's checks).
    pub attempt: Option<u32>,
    /// `phase`: the phase.
    pub phase: Option<String>,
    /// `phase`: the gate.
    pub gate: Option<String>,
    /// `attempt_finished`: the outcome.
    pub outcome: Option<String>,
    /// Why (`attempt_finished`, `task_finished`, `run_finished`, …).
    pub reason: Option<String>,
    /// `attempt_finished`: the cost, when known.
    pub cost_micro_usd: Option<u64>,
    /// `attempt_finished`: when its own work ended.
    pub work_end_ms: Option<u64>,
    /// `attempt_finished`: whether it reported more than its cost cap.
    #[serde(default)]
    pub over_cap: bool,
    /// `attempt_finished`: whether a cost cap was charged for a cost not
    /// reported.
    #[serde(default)]
    pub capped: bool,
    /// `attempt_started`: the parallel slot.
    pub slot: Option<u32>,
    /// `attempt_started`: the infrastructure retry.
    pub retry: Option<u32>,
    /// `attempt_started`: the log directory.
    pub logs: Option<String>,
    /// `attempt_started`: the worktree.
    pub worktree: Option<String>,
    /// `attempt_started`, `waiting`: the fallback agent.
    pub fallback: Option<String>,
    /// `waiting`: the limited agent's name; `attempt_finished`: what the
    /// agent reported (an object).
    pub agent: Option<serde_json::Value>,
    /// `waiting`: how long the task waits.
    pub wait_ms: Option<u64>,
    /// `waiting`: what the agent said.
    pub message: Option<String>,
    /// `merged`, `cached`: how.
    pub how: Option<String>,
    /// `merged`, `cached`, `spec_advanced`: the new integration head.
    pub commit: Option<String>,
    /// `cached`, `cache_miss`: the cache key.
    pub key: Option<String>,
    /// `task_finished`, `run_finished`: the status.
    pub status: Option<String>,
    /// `run_finished`: the exit status.
    pub exit_code: Option<i32>,
    /// `run_started`: the plan.
    pub plan: Option<String>,
    /// `run_started`: the integration branch.
    pub branch: Option<String>,
    /// `run_started`: the integration head at the start.
    pub head: Option<String>,
    /// `run_started`: tasks at once.
    pub parallel: Option<u32>,
    /// `run_started`: the run's number.
    pub run: Option<u32>,
    /// `expanded`: the tasks added.
    pub tasks: Option<Vec<String>>,
    /// `resolver_finished`: whether it resolved the conflict.
    pub resolved: Option<bool>,
}

impl Recorded {
    /// The task, or `""`.
    pub fn task(&self) -> &str {
        self.task.as_deref().unwrap_or("")
    }

    /// The agent's name of a `waiting` event.
    pub fn agent_name(&self) -> Option<&str> {
        self.agent.as_ref().and_then(|a| a.as_str())
    }
}

/// The events of one run, from its `run_started` on.
#[derive(Debug, Clone, Default)]
pub struct RunEvents {
    /// The run's number: its `run_started`'s, else the one its worktree
    /// names carry (`<task>.r<run>-a<n>`, for logs of earlier versions).
    pub run: Option<u32>,
    /// Its events, in order.
    pub events: Vec<Recorded>,
}

impl RunEvents {
    /// The run's `run_started` event.
    pub fn started(&self) -> Option<&Recorded> {
        self.events.first().filter(|e| e.event == "run_started")
    }

    /// Its `run_finished` event, once it ended.
    pub fn finished(&self) -> Option<&Recorded> {
        self.events.iter().rev().find(|e| e.event == "run_finished")
    }

    /// The last event's `elapsed_ms`: how long the run went on as far as
    /// its events tell.
    pub fn end_ms(&self) -> u64 {
        self.events.iter().map(|e| e.elapsed_ms).max().unwrap_or(0)
    }
}

/// The runs recorded in the event log at `path`, oldest first; none when
/// the file does not exist.
///
/// Errors: it exists but cannot be read.
pub fn read(path: &Path) -> Result<Vec<RunEvents>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut runs: Vec<RunEvents> = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(event) = serde_json::from_slice::<Recorded>(line) else {
            continue;
        };
        if event.event == "run_started" || runs.is_empty() {
            runs.push(RunEvents::default());
        }
        if let Some(run) = runs.last_mut() {
            run.events.push(event);
        }
    }
    for run in &mut runs {
        run.run = run
            .started()
            .and_then(|e| e.run)
            .or_else(|| run.events.iter().find_map(run_of_worktree));
    }
    Ok(runs)
}

/// The run number in an `attempt_started` event's worktree name
/// (`…/<task>.r<run>-a<attempt>`).
fn run_of_worktree(e: &Recorded) -> Option<u32> {
    let name = Path::new(e.worktree.as_deref()?).file_name()?.to_str()?;
    let (_, id) = crate::run::store::layout::split_try_suffix(name)?;
    Some(id.run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_runs_and_skips_torn_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"seq":1,"time":"t","elapsed_ms":0,"event":"run_started","plan":"p","parallel":2}"#,
                "\n",
                r#"{"seq":2,"time":"t","elapsed_ms":5,"event":"attempt_started","task":"a","attempt":1,"worktree":"/r/.loopc/worktrees/a.r4-a1"}"#,
                "\n",
                r#"{"seq":3,"time":"t","elapsed_ms":9,"ev"#,
                "\n",
                r#"{"seq":4,"time":"t","elapsed_ms":0,"event":"run_started","plan":"p","run":5}"#,
                "\n",
                r#"{"seq":5,"time":"t","elapsed_ms":7,"event":"waiting","task":"a","agent":"claude","wait_ms":10}"#,
                "\n",
            ),
        )
        .expect("write");
        let runs = read(&path).expect("read");
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].run, Some(4));
        assert_eq!(runs[0].events.len(), 2);
        assert_eq!(runs[1].run, Some(5));
        assert_eq!(runs[1].events[1].agent_name(), Some("claude"));
        assert_eq!(runs[1].end_ms(), 7);
        assert!(read(&dir.path().join("none")).expect("missing").is_empty());
    }
}
