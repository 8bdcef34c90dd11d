//! Gates (docs/running.md step 6): the task's `accept` check, then its gates in
//! order, run in a worktree with `LOOP_DIFF_FILE`. A command gate passes on
//! exit 0; an agent gate passes when its handoff says `completed`
//! ([`judge`]). The files a command check runs are pinned at the
//! task's start ([`pin`]); what a check leaves in the worktree is
//! discarded, and a command gate's change of tracked files fails by
//! default ([`litter`]). The last 64 KiB of a rejecting gate's
//! output is the next attempt's feedback.

mod judge;
mod launch;
mod litter;
mod pin;

use crate::model::{OnChange, Recheck};
use crate::plan::{Agent, Executor, GateKind, OnFail, Task};
use crate::run::engine::context::{AttemptFiles, Io, Protocol};
use crate::run::store::events::Event;
use crate::run::sys::checkout::Checkout;
use crate::run::sys::process;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How much of a gate's output becomes feedback.
pub const FEEDBACK_LIMIT: u64 = 64 * 1024;

/// Room left in [`FEEDBACK_LIMIT`] for what loopc writes around a
/// command's output (the reason it failed, a cut marker): the output gets
/// the rest, so a cut never takes the reason off the top.
const FEEDBACK_HEADROOM: u64 = 1024;

/// Cuts `text` to at most [`FEEDBACK_LIMIT`] bytes for the next attempt:
/// longer text keeps its end (where a failure's cause usually is) after a
/// line saying how many bytes were left out. Cuts at a character boundary.
pub fn cut_feedback(text: String) -> String {
    let limit = FEEDBACK_LIMIT as usize;
    if text.len() <= limit {
        return text;
    }
    // The marker's length depends on the count it holds; counting the
    // widest count keeps the result within the limit.
    let marker = |left_out: usize| {
        format!(
            "[loopc: feedback cut to its last {} KiB; {left_out} bytes left out]\n",
            FEEDBACK_LIMIT / 1024
        )
    };
    let keep = limit.saturating_sub(marker(text.len()).len());
    let mut start = text.len() - keep;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut out = marker(start);
    out.push_str(&text[start..]);
    out
}

/// The end of a command's output for the next attempt's feedback: the
/// logs at `paths` (an agent's stdout and stderr, or one log), each an
/// equal share of [`FEEDBACK_LIMIT`] less [`FEEDBACK_HEADROOM`], decoded
/// lossily. When a log holds more, its share starts with a line saying how
/// many bytes of it were left out.
pub fn output_tail(paths: &[&Path]) -> String {
    let share = (FEEDBACK_LIMIT - FEEDBACK_HEADROOM) / paths.len().max(1) as u64;
    let mut text = String::new();
    for path in paths {
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if len > share {
            text.push_str(&format!(
                "[loopc: output cut to its last {} KiB; {} bytes left out]\n",
                share / 1024,
                len - share
            ));
        }
        text.push_str(&process::tail(path, share));
    }
    text
}

/// One check to run: `accept` or a gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// `accept` or the gate's name.
    pub label: String,
    /// What it runs.
    pub kind: CheckKind,
    /// Timeout of one run.
    pub timeout: Duration,
    /// What a rejection does.
    pub on_fail: OnFail,
    /// What a change of tracked files by a command check does (`accept`:
    /// it fails).
    pub on_change: OnChange,
    /// The executor that launches it (`accept`: the task's; a gate: the gate's).
    pub executor: Option<std::sync::Arc<Executor>>,
    /// The task it belongs to, when that is not the task whose try runs
    /// it (a check of a task merged earlier, run again on a later merge,
    /// replay or move): its variables are then that task's ([`check_env`]).
    /// `None`: the try's own check.
    pub owner: Option<std::sync::Arc<Owner>>,
    /// Whether it runs again on a merge result or a replay onto a new
    /// base (docs/cache.md, "Gates and their verdicts"): every command
    /// check does; an agent gate only with `recheck = merge` (its verdict
    /// on the attempt's change carries over).
    pub recheck: bool,
}

/// A task whose work is on the integration branch, as its checks see it
/// when they run again on a later task's merge, replay or move: the
/// variables that describe the task and its work are its own
/// (docs/running.md, "The agent protocol").
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    /// The task (its name, title, `env`, agent's cost cap).
    pub task: Task,
    /// Its attempt whose work was merged (`LOOP_ATTEMPT`); 0 for a replay.
    pub attempt: u32,
    /// That attempt's feedback file in its log directory (`None`: a
    /// replay, which had none: the check gets an empty file).
    pub feedback: Option<PathBuf>,
    /// Its work: the commits the check's `LOOP_DIFF_FILE` is the diff
    /// between (the attempt's base and commit, or the head a replay
    /// moved the integration branch from and to).
    pub work: (String, String),
}

impl Owner {
    /// The owner's [`AttemptFiles`] for a check run by the try `proto` in
    /// the work directory `work`: its feedback and diff are copied to
    /// `work/of-<task>/` (where a sandboxed gate can read them); the
    /// prompt, progress and handoff files are the try's.
    ///
    /// Errors: a file cannot be written, or git cannot make the diff.
    fn files(&self, io: Io<'_>, proto: &Protocol<'_>, work: &Path) -> Result<AttemptFiles, String> {
        let dir = work.join(format!("of-{}", self.task.name));
        let feedback = dir.join("feedback.md");
        let diff = dir.join("diff.patch");
        if !diff.exists() {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let copied = self
                .feedback
                .as_ref()
                .filter(|f| f.exists())
                .map(|f| std::fs::copy(f, &feedback).map(|_| ()));
            copied
                .unwrap_or_else(|| std::fs::write(&feedback, ""))
                .map_err(|e| format!("cannot write {}: {e}", feedback.display()))?;
            io.git.diff_to_file(&self.work.0, &self.work.1, &diff)?;
        }
        Ok(AttemptFiles {
            feedback,
            diff,
            ..proto.files.clone()
        })
    }
}

/// The variables `check`, run by the try `proto` in `dir`, sees: those of
/// the task it belongs to ([`Check::owner`]; the try's own task when
/// `None`), with `prompt` and `handoff` its own files, `LOOP_BASE`, the
/// worktree and the progress file the try's, and `LOOP_DIFF_FILE` the
/// owner's work (the try's own `diff` for its own checks). The one place a
/// check's environment is made.
///
/// Errors: the owner's files cannot be made ([`Owner`]).
pub(super) fn check_env(
    io: Io<'_>,
    proto: &Protocol<'_>,
    check: &Check,
    dir: &Path,
    (prompt, handoff, diff): (&Path, &Path, &Path),
) -> Result<Vec<(String, String)>, String> {
    let Some(owner) = check.owner.as_deref() else {
        return Ok(proto.env(io.git, dir, prompt, handoff, Some(diff)));
    };
    let files = owner.files(io, proto, &crate::run::engine::context::work_dir(dir))?;
    let theirs = Protocol {
        task: &owner.task,
        attempt: owner.attempt,
        base: proto.base,
        files: &files,
    };
    Ok(theirs.env(io.git, dir, prompt, handoff, Some(&files.diff)))
}

/// What a check runs.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckKind {
    /// A shell command; passes on exit 0.
    Command(String),
    /// An agent judging the diff; passes on a `completed` handoff.
    Agent {
        /// The agent.
        agent: Agent,
        /// The review prompt.
        prompt: String,
    },
}

/// The checks of `task`: `accept` first (timeout: the task's), then its gates.
pub fn checks_of(task: &Task) -> Vec<Check> {
    let mut out = Vec::new();
    if let Some(accept) = &task.accept {
        out.push(Check {
            label: "accept".to_string(),
            kind: CheckKind::Command(accept.clone()),
            timeout: task.timeout,
            on_fail: OnFail::Retry,
            on_change: OnChange::Fail,
            executor: task.executor.clone(),
            owner: None,
            recheck: true,
        });
    }
    out.extend(task.gates.iter().map(|g| gate_check(g)));
    out
}

/// The checks of `task` that run again on a merge result that is not a
/// fast-forward and on a replay onto a new base: `accept`, its command
/// gates, and its agent gates with `recheck = merge` (docs/cache.md).
pub fn rechecks_of(task: &Task) -> Vec<Check> {
    checks_of(task).into_iter().filter(|c| c.recheck).collect()
}

/// The check that runs gate `g`.
pub fn gate_check(g: &crate::plan::Gate) -> Check {
    let kind = match &g.kind {
        GateKind::Command { run } => CheckKind::Command(run.clone()),
        GateKind::Agent { agent, prompt } => CheckKind::Agent {
            agent: (**agent).clone(),
            prompt: prompt.clone(),
        },
    };
    Check {
        label: g.name.clone(),
        recheck: matches!(kind, CheckKind::Command(_)) || g.recheck == Recheck::Merge,
        kind,
        timeout: g.timeout,
        on_fail: g.on_fail,
        on_change: g.on_change,
        executor: g.executor.clone(),
        owner: None,
    }
}

/// The result of running a list of checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every check passed.
    Pass,
    /// A check rejected the change.
    Reject {
        /// Why (one line).
        reason: String,
        /// Feedback for the next attempt.
        feedback: String,
        /// The check's `on_fail`.
        on_fail: OnFail,
        /// The label of the check that rejected it (`accept` or the
        /// gate's name): a cached result's rejection by an agent gate is
        /// recorded under that gate (docs/cache.md, "Gates and their
        /// verdicts").
        by: String,
    },
    /// An agent gate said `blocked` or `needs_human`.
    Blocked(String),
    /// An agent gate hit a usage or rate limit: no verdict yet.
    Limited(crate::run::engine::outcome::Limited),
    /// The run is stopping.
    Stopped,
    /// loopc could not run a check (infrastructure).
    Error(String),
}

/// Cost of agent gates: the same accounting as an attempt's.
pub type GateCost = crate::run::engine::budget::Cost;

fn file_name_part(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs `checks` in order in `co` (a worktree at the commit under test),
/// stopping at the first rejection. `tag` distinguishes log files of
/// different check rounds (`gate`, `merge`). Before each check the
/// worktree is the commit under test, with the files a command check runs
/// pinned as they are at `proto.base` ([`pin`]); after each, what
/// the check left is discarded ([`litter`]).
pub fn run_checks(
    io: Io<'_>,
    proto: &Protocol<'_>,
    co: &Checkout,
    checks: &[Check],
    tag: &str,
    cost: &mut GateCost,
) -> Verdict {
    let (work, commit) = match ready(io, proto, co, checks) {
        Ok(r) => r,
        Err(v) => return v,
    };
    let diff = work.join("diff.patch");
    for check in checks {
        let run = One {
            proto,
            co,
            check,
            commit: &commit,
            tag,
            files: (&work, &diff),
        };
        if let Err(v) = run.run(io, cost) {
            return v;
        }
    }
    Verdict::Pass
}

/// The work directory of the checks in `co` (with the diff they read,
/// `LOOP_DIFF_FILE`) and the commit under test (`co`'s HEAD).
fn ready(
    io: Io<'_>,
    proto: &Protocol<'_>,
    co: &Checkout,
    checks: &[Check],
) -> Result<(PathBuf, String), Verdict> {
    if checks.is_empty() {
        return Ok((PathBuf::new(), String::new()));
    }
    // What a gate reads and writes lies in the worktree under test, where a
    // sandboxed reviewer may write; copies go to the logs.
    let work = crate::run::engine::context::reclaim_work_dir(&co.dir).map_err(Verdict::Error)?;
    let diff = work.join("diff.patch");
    if diff != proto.files.diff
        && let Err(e) = std::fs::copy(&proto.files.diff, &diff)
    {
        return Err(Verdict::Error(format!(
            "cannot copy {} to {}: {e}",
            proto.files.diff.display(),
            diff.display()
        )));
    }
    let commit = match io.git.run_co(co, &["rev-parse", "--verify", "HEAD"]) {
        Ok(out) => out.stdout.trim().to_string(),
        Err(_) if crate::run::engine::outcome::stopping(io.control) => {
            return Err(Verdict::Stopped);
        }
        Err(e) => return Err(Verdict::Error(e)),
    };
    Ok((work, commit))
}

/// One check of [`run_checks`].
pub(super) struct One<'a> {
    /// The try that runs it.
    pub proto: &'a Protocol<'a>,
    /// The worktree under test.
    pub co: &'a Checkout,
    /// The check.
    pub check: &'a Check,
    /// The commit under test: the worktree is restored to it after the check.
    commit: &'a str,
    tag: &'a str,
    /// The work directory and the diff in it.
    pub files: (&'a Path, &'a Path),
}

impl One<'_> {
    /// Pins, launches and judges the check, then discards what it left in
    /// the worktree. `Err`: the verdict that ends the round.
    fn run(&self, io: Io<'_>, cost: &mut GateCost) -> Result<(), Verdict> {
        let (proto, check) = (self.proto, self.check);
        io.events.emit(Event::Phase {
            task: proto.task.name.clone(),
            attempt: proto.attempt,
            phase: if self.tag == "gate" {
                "gate".into()
            } else {
                format!("{} gate", self.tag)
            },
            gate: Some(check.label.clone()),
        });
        let stem = format!("{}-{}", self.tag, file_name_part(&check.label));
        let gate = describe(check);
        let pinned = pin::pin(io, self.co, proto, check)?;
        let ran = launch::launch(io, self, &stem, &gate)?;
        // A reviewing agent's links in the work directory go before its
        // verdict is read and the next check's files are written.
        if is_agent(check) {
            crate::run::engine::context::reclaim_work_dir(&self.co.dir).map_err(Verdict::Error)?;
        }
        let verdict = judge::judge(check, &ran, &gate, cost)?;
        if verdict.is_some() && !is_agent(check) {
            // Rejected: no later check runs and nothing is merged.
            return verdict.map_or(Ok(()), Err);
        }
        if verdict.is_none() && crate::run::engine::outcome::stopping(io.control) {
            // The check may have passed, but the run is stopping: what
            // follows (loopc's own git calls) would be killed anyway.
            return Err(Verdict::Stopped);
        }
        let left = litter::Left {
            proto,
            co: self.co,
            commit: self.commit,
            check,
            gate: &gate,
            stem: &stem,
            pinned: &pinned,
        };
        left.discard(io)?;
        verdict.map_or(Ok(()), Err)
    }
}

/// How messages name `check`: `gate `x``, or, for a check of another
/// task, `gate `x` of task `y`` (`accept of y` says whose it is itself).
fn describe(check: &Check) -> String {
    match check.owner.as_deref() {
        Some(o) if check.label != format!("accept of {}", o.task.name) => {
            format!("gate `{}` of task `{}`", check.label, o.task.name)
        }
        _ => format!("gate `{}`", check.label),
    }
}

/// Whether `check` is agent-judged.
pub fn is_agent(check: &Check) -> bool {
    matches!(check.kind, CheckKind::Agent { .. })
}

#[cfg(test)]
mod cut_tests {
    use super::*;

    #[test]
    fn feedback_is_cut_to_the_limit_at_a_char_boundary() {
        let short = "short".to_string();
        assert_eq!(cut_feedback(short.clone()), short);
        let long = format!("head{}tail", "\u{fffd}".repeat(100_000));
        let cut = cut_feedback(long.clone());
        assert!(cut.len() <= FEEDBACK_LIMIT as usize, "{}", cut.len());
        assert!(cut.ends_with("tail"));
        // The marker counts the bytes that are not there.
        let (marker, kept) = cut.split_once('\n').unwrap();
        let left_out: usize = marker
            .strip_prefix("[loopc: feedback cut to its last 64 KiB; ")
            .and_then(|m| m.strip_suffix(" bytes left out]"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(left_out + kept.len(), long.len());
    }

    #[test]
    fn a_long_output_keeps_its_end_and_says_how_much_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("gate.log");
        std::fs::write(&log, format!("{}TAIL", "x".repeat(200_000))).unwrap();
        let short = dir.path().join("short.log");
        std::fs::write(&short, "all of it\n").unwrap();
        let tail = output_tail(&[&log]);
        let share = (FEEDBACK_LIMIT - FEEDBACK_HEADROOM) as usize;
        assert_eq!(
            tail,
            format!(
                "[loopc: output cut to its last 63 KiB; {} bytes left out]\n{}TAIL",
                200_004 - share,
                "x".repeat(share - 4)
            )
        );
        // With the reason above it, nothing more is cut.
        let feedback = format!("gate `big` failed (exit status 1)\n\n{tail}");
        assert_eq!(cut_feedback(feedback.clone()), feedback);
        // Two streams share the room; one short enough is whole.
        let both = output_tail(&[&short, &log]);
        assert!(both.starts_with("all of it\n[loopc: output cut to its last 31 KiB; "));
        assert!(both.len() <= share + 100, "{}", both.len());
    }
}
