//! The event log `.loopc/events.jsonl`: append-only, one JSON object a line,
//! each with a sequence number (`seq`, the order of events), a wall-clock
//! timestamp (`time`, RFC 3339) and the monotonic milliseconds since the run
//! started (`elapsed_ms`). Every event is also shown to the person watching,
//! through a [`Watcher`] (the display in `run::ui` is one; the store does not
//! know it). Format: `docs/state.md`.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run began.
    RunStarted {
        /// The plan's name.
        plan: String,
        /// The integration branch.
        branch: String,
        /// The integration branch's head commit at the start.
        head: String,
        /// Tasks at once.
        parallel: u32,
        /// The run's number (state.json's `run`), which names its
        /// worktrees, task branches and `earlier-logs/<run>/`.
        run: u32,
    },
    /// An attempt of a task started in a fresh worktree.
    AttemptStarted {
        /// The task.
        task: String,
        /// The attempt number (1-based; infrastructure retries repeat it).
        attempt: u32,
        /// The worktree's directory.
        worktree: String,
        /// The commit the worktree starts from.
        base: String,
        /// Which try of this attempt number, from 2 on (an infrastructure
        /// failure such as `setup` retries the attempt without counting it).
        #[serde(skip_serializing_if = "Option::is_none")]
        retry: Option<u32>,
        /// The try's log directory (`logs/<task>/<attempt>` or
        /// `logs/<task>/<attempt>.retry-<retry>`).
        logs: String,
        /// The fallback agent that runs it because the task's own agent is
        /// usage or rate limited (absent: the task's own agent).
        #[serde(skip_serializing_if = "Option::is_none")]
        fallback: Option<String>,
        /// The parallel slot it runs in, 1 to `parallel`: no two attempts
        /// hold one slot at once (absent when not known).
        #[serde(skip_serializing_if = "Option::is_none")]
        slot: Option<u32>,
    },
    /// An attempt entered a phase (`setup`, `agent`, `command`, `commit`,
    /// `gate`, `merge`).
    Phase {
        /// The task.
        task: String,
        /// The attempt number.
        attempt: u32,
        /// The phase.
        phase: String,
        /// The gate's name in the `gate` phase.
        #[serde(skip_serializing_if = "Option::is_none")]
        gate: Option<String>,
    },
    /// A check changed the worktree under test: loopc discarded its
    /// changes (the worktree is the commit under test again).
    GateChanged {
        /// The task.
        task: String,
        /// The attempt number.
        attempt: u32,
        /// The check (`accept` or the gate's name).
        gate: String,
        /// The tracked paths it changed (an agent gate: also the files it
        /// added; `HEAD` when it committed or moved HEAD).
        paths: Vec<String>,
        /// Whether the change fails the attempt (a command gate's
        /// `on_change = fail`, the default).
        fails: bool,
    },
    /// An attempt ended.
    AttemptFinished {
        /// The task.
        task: String,
        /// The attempt number.
        attempt: u32,
        /// `passed`, `failed`, `blocked`, `infrastructure` or `interrupted`.
        outcome: String,
        /// Why, for anything but a pass.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// What the attempt cost in micro-dollars, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_micro_usd: Option<u64>,
        /// What the agent's output reported (`output = claude-json`,
        /// `codex-json`).
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<crate::state::AgentRecord>,
        /// When the attempt's own work (setup, agent, its gates) ended in
        /// its slot, on the `elapsed_ms` clock: what follows, up to this
        /// event, is its wait for the coordinator and its merge.
        #[serde(skip_serializing_if = "Option::is_none")]
        work_end_ms: Option<u64>,
        /// The agent (or an agent gate) reported more than its
        /// per-attempt `cost` cap (absent when not; state version 3).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        over_cap: bool,
        /// The agent (or an agent gate) reported no cost: its `cost` cap
        /// was charged (absent when not).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        capped: bool,
    },
    /// An attempt was set aside because its agent hit a usage or rate
    /// limit; the task waits, then runs the attempt again.
    Waiting {
        /// The task.
        task: String,
        /// The limited agent.
        agent: String,
        /// What the agent said.
        message: String,
        /// How long the task waits, in milliseconds.
        wait_ms: u64,
        /// The sentence shown on the terminal.
        reason: String,
        /// The fallback agent that takes the task's next attempt instead
        /// of waiting (then `wait_ms` is 0); absent when it waits.
        #[serde(skip_serializing_if = "Option::is_none")]
        fallback: Option<String>,
    },
    /// A task's work reached the integration branch.
    Merged {
        /// The task.
        task: String,
        /// The integration branch's new head.
        commit: String,
        /// `fast_forward`, `merge` (gated again), `resolved` (a resolver's
        /// resolution of a conflict, gated) or `none` (nothing to merge).
        how: String,
    },
    /// A resolver ran on a conflict of an attempt's merge.
    ResolverFinished {
        /// The task.
        task: String,
        /// The attempt whose merge conflicted.
        attempt: u32,
        /// What the resolver did.
        #[serde(flatten)]
        record: crate::state::ResolverRecord,
    },
    /// A task's recorded pass was replayed from the cache (docs/running.md step 1).
    Cached {
        /// The task.
        task: String,
        /// Its run-time cache key.
        key: String,
        /// The integration branch's head afterwards.
        commit: String,
        /// `fast_forward`, `replay`, `gated` (checked again) or `none`.
        how: String,
    },
    /// A cache entry existed but could not be replayed; the task runs.
    CacheMiss {
        /// The task.
        task: String,
        /// Its run-time cache key.
        key: String,
        /// Why (a conflict, a failing check).
        reason: String,
    },
    /// A task's plan fragment was spliced into the plan (`expands`): its
    /// tasks run next, before the task's dependents.
    Expanded {
        /// The task that wrote the fragment.
        task: String,
        /// The fragment's path (relative to the repository's top).
        fragment: String,
        /// The tasks it added, in the plan's order.
        tasks: Vec<String>,
    },
    /// A fragment's task ran out of attempts (or an agent gate rejected it)
    /// with `on_fail = replan`: the task that wrote the fragment runs again
    /// to re-plan it (docs/language.md "Re-planning").
    Replanned {
        /// The producing task, which runs again.
        task: String,
        /// The fragment's task that failed.
        failed: String,
        /// Which re-plan this is of the producer's in this run (1-based).
        replan: u32,
        /// How many the producer may have (`replans`).
        replans: u32,
        /// Why the task failed.
        reason: String,
    },
    /// A task's answerer agent answered its `needs_human` question: the
    /// answer was recorded as `loopc answer` records one, and the task
    /// goes on in the same run (docs/language.md "Answers without a
    /// person").
    Answered {
        /// The task that asked.
        task: String,
        /// The agent that answered.
        by: String,
        /// The question.
        question: String,
        /// The answer.
        answer: String,
    },
    /// A spec of a REEL spec tree moved to its next stage: every task of
    /// it passed, and a commit on the integration branch moved its file.
    SpecAdvanced {
        /// The spec file as read (`specs/inflight/auth.md`).
        spec: String,
        /// Its stage before (`inflight`).
        from: String,
        /// Its stage now (`review`).
        to: String,
        /// The integration branch's new head.
        commit: String,
    },
    /// A spec of a REEL spec tree stays in its stage: not every task of it
    /// passed, or its move could not be made.
    SpecStayed {
        /// The spec file as read.
        spec: String,
        /// Its stage.
        stage: String,
        /// Why.
        reason: String,
    },
    /// A task reached a final state.
    TaskFinished {
        /// The task.
        task: String,
        /// `passed`, `cached`, `failed`, `blocked`, `skipped` or `interrupted`.
        status: String,
        /// Why, when it did not pass.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The run ended.
    RunFinished {
        /// The run's status.
        status: String,
        /// The process exit status.
        exit_code: i32,
        /// Why it stopped early, if it did.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// The last sequence number used in the events file at `path` (0 if
/// missing), and whether its last line is torn (no final newline; it used
/// a number too). Read from the file's end: the `seq` of its last whole
/// line (the log grows with every run, so counting its lines would make
/// each run's start slower than the last); where that line cannot be read
/// as an event, by counting lines ([`count_lines`]).
fn last_seq(path: &Path) -> (u64, bool) {
    use std::io::{Read, Seek, SeekFrom};
    let tail = || -> Option<(u64, bool)> {
        let mut f = File::open(path).ok()?;
        let len = f.metadata().ok()?.len();
        if len == 0 {
            return Some((0, false));
        }
        // Enough for any event line; a longer one is counted instead.
        let take = len.min(1 << 20);
        f.seek(SeekFrom::Start(len - take)).ok()?;
        let mut buf = Vec::with_capacity(take as usize);
        f.read_to_end(&mut buf).ok()?;
        let torn = buf.last() != Some(&b'\n');
        let whole = &buf[..buf.iter().rposition(|&b| b == b'\n')?];
        let start = match whole.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if take == len => 0,
            None => return None,
        };
        let last: serde_json::Value = serde_json::from_slice(&whole[start..]).ok()?;
        let seq = last.get("seq")?.as_u64()?;
        Some((seq + u64::from(torn), torn))
    };
    tail().unwrap_or_else(|| count_lines(path))
}

/// The number of lines in the file at `path` (0 if missing), read in
/// chunks, and whether its last line is torn (no final newline).
fn count_lines(path: &Path) -> (u64, bool) {
    use std::io::Read;
    let Ok(mut f) = File::open(path) else {
        return (0, false);
    };
    let mut buf = vec![0u8; 64 * 1024];
    let (mut lines, mut last) = (0u64, b'\n');
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    // A torn last line (loopc killed mid-write) still used a sequence number.
    if last != b'\n' {
        (lines + 1, true)
    } else {
        (lines, false)
    }
}

/// Whoever shows a run to a person: told of every event, in order, and
/// given loopc's own notes (warnings that are not events).
pub trait Watcher: Send + Sync {
    /// Shows one line of loopc's own (an error, a note).
    fn line(&self, text: &str);
    /// Shows a warning (`warning: {text}`); a watcher that shows no
    /// progress (`-q`) shows no warnings either.
    fn warn(&self, text: &str) {
        self.line(&format!("warning: {text}"));
    }
    /// Shows `event`.
    fn on_event(&self, event: &Event);
    /// Shows what `task`'s running attempt `attempt` is doing now (its
    /// agent's last tool call or message, or its last output line). Not an
    /// event: it is not recorded.
    fn activity(&self, task: &str, attempt: u32, text: &str);
    /// The run is over: clears whatever is live (before the summary).
    fn finish(&self);
}

/// Writes events to `events.jsonl` and the watcher, in one order.
pub struct Recorder {
    inner: Mutex<Inner>,
    start: Instant,
    ui: Box<dyn Watcher>,
}

struct Inner {
    file: File,
    seq: u64,
    /// Lines held back by [`Recorder::hold`], written by
    /// [`Recorder::release`] (or when [`HELD_LIMIT`] is reached).
    held: Option<Vec<u8>>,
    /// A write failed and was reported: the next failures are not (a full
    /// disk fails every event's line).
    failed: bool,
}

impl Inner {
    /// Reports a failed write on `ui`, the first only.
    fn failed(&mut self, ui: &dyn Watcher, e: &std::io::Error) {
        if !std::mem::replace(&mut self.failed, true) {
            ui.line(&format!(
                "error: cannot write events.jsonl: {e} (the events after it may be missing \
                 from it too)"
            ));
        }
    }
}

/// The most bytes of held lines kept in memory before they are written.
const HELD_LIMIT: usize = 1 << 20;

impl Recorder {
    /// Opens `path` for appending; sequence numbers continue after the
    /// file's existing lines.
    ///
    /// Errors: the file cannot be opened.
    pub fn open(path: &Path, ui: Box<dyn Watcher>) -> Result<Recorder, String> {
        let (existing, torn) = last_seq(path);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        if torn {
            // End the torn line so that the next event starts a line of its own.
            let _ = (&file).write_all(b"\n");
        }
        Ok(Recorder {
            inner: Mutex::new(Inner {
                file,
                held: None,
                seq: existing,
                failed: false,
            }),
            start: Instant::now(),
            ui,
        })
    }

    /// Milliseconds from the run's start to `at`, on the clock of the
    /// events' `elapsed_ms`.
    pub fn ms_at(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX)
    }

    /// The display.
    pub fn ui(&self) -> &dyn Watcher {
        self.ui.as_ref()
    }

    /// Records `event`. A failure to write the log is reported once on the
    /// display but does not stop the run.
    pub fn emit(&self, event: Event) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.seq += 1;
        let seq = inner.seq;
        let mut value = serde_json::json!({
            "seq": seq,
            "time": crate::run::time::now_rfc3339(),
            "elapsed_ms": self.start.elapsed().as_millis() as u64,
        });
        if let (Some(obj), Ok(serde_json::Value::Object(fields))) =
            (value.as_object_mut(), serde_json::to_value(&event))
        {
            obj.extend(fields);
        }
        let mut line = value.to_string();
        line.push('\n');
        let written = match &mut inner.held {
            Some(held) if held.len() + line.len() <= HELD_LIMIT => {
                held.extend_from_slice(line.as_bytes());
                Ok(())
            }
            Some(_) => {
                let mut lines = inner.held.replace(Vec::new()).unwrap_or_default();
                lines.extend_from_slice(line.as_bytes());
                inner.file.write_all(&lines)
            }
            None => inner.file.write_all(line.as_bytes()),
        };
        if let Err(e) = written {
            inner.failed(self.ui.as_ref(), &e);
        }
        self.ui.on_event(&event);
    }

    /// Holds the lines of the events that follow in memory (up to
    /// [`HELD_LIMIT`] bytes at a time) until [`Recorder::release`], which
    /// writes them at once: for many events of one step (an unchanged rerun
    /// records two a task), one write instead of one an event. The display
    /// still sees each event as it comes.
    pub fn hold(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.held.get_or_insert_with(Vec::new);
        }
    }

    /// Writes the lines held since [`Recorder::hold`] and writes each
    /// event's line as it comes again. A failure to write is reported as
    /// [`Recorder::emit`] reports it.
    pub fn release(&self) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let Some(lines) = inner.held.take() else {
            return;
        };
        if let Err(e) = inner.file.write_all(&lines) {
            inner.failed(self.ui.as_ref(), &e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{count_lines, last_seq};

    /// A display that shows nothing.
    struct Blind;
    impl super::Watcher for Blind {
        fn line(&self, _: &str) {}
        fn on_event(&self, _: &super::Event) {}
        fn activity(&self, _: &str, _: u32, _: &str) {}
        fn finish(&self) {}
    }

    /// Held lines reach the file at the release, in order, numbered on.
    #[test]
    fn held_lines_are_written_at_the_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let events = super::Recorder::open(&path, Box::new(Blind)).unwrap();
        let note = |task: &str| super::Event::TaskFinished {
            task: task.to_string(),
            status: "passed".to_string(),
            reason: None,
        };
        events.emit(note("a"));
        events.hold();
        events.emit(note("b"));
        events.emit(note("c"));
        let lines = || std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines(), 1);
        events.release();
        assert_eq!(lines(), 3);
        events.emit(note("d"));
        assert_eq!(lines(), 4);
        assert_eq!(last_seq(&path), (4, false));
    }

    fn with(text: &str) -> (u64, bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, text).unwrap();
        let found = last_seq(&path);
        // Where the lines are numbered from 1, both ways agree.
        assert_eq!(found, count_lines(&path), "{text:?}");
        found
    }

    #[test]
    fn the_last_sequence_number_is_read_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(last_seq(&dir.path().join("none")), (0, false));
        assert_eq!(with(""), (0, false));
        assert_eq!(with("{\"seq\":1}\n"), (1, false));
        assert_eq!(
            with("{\"seq\":1}\n{\"event\":\"x\",\"seq\":2}\n"),
            (2, false)
        );
        // A torn last line used a number too.
        assert_eq!(
            with("{\"seq\":1}\n{\"seq\":2}\n{\"seq\": 3, \"ev"),
            (3, true)
        );
    }

    #[test]
    fn a_last_line_that_is_no_event_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "{\"seq\":1}\n{\"seq\":2}\nnot json\n").unwrap();
        assert_eq!(last_seq(&path), (3, false));
        // A torn line made whole by a later run, then nothing after it.
        std::fs::write(&path, "{\"seq\":1}\n{\"seq\": 2, \"ev\n").unwrap();
        assert_eq!(last_seq(&path), (2, false));
        // Numbers that do not follow the lines are taken as they are.
        std::fs::write(&path, "{\"seq\":7}\n{\"seq\":8}\n").unwrap();
        assert_eq!(last_seq(&path), (8, false));
    }
}
