//! What a check leaves in the worktree under test (docs/running.md,
//! "Checks an agent cannot game"): the worktree is put back to the commit
//! under test after every check, before the next one and before the merge.
//! Untracked files a check makes (`__pycache__/`, `.pytest_cache`,
//! coverage) are litter: removed, never a failure, never committed. A
//! check that changed tracked files (or committed) is reported (terminal,
//! events, the log `<stem>.changes.txt`) and its changes discarded; a
//! command check's `on_change` says whether that fails the attempt (`fail`,
//! the default). An agent gate is read-only: its edits, tracked or not, are
//! discarded and reported, and its verdict stands.

use super::judge::reject;
use super::{Check, Verdict, is_agent};
use crate::model::OnChange;
use crate::run::engine::context::{Io, Protocol};
use crate::run::engine::outcome::stopping;
use crate::run::store::events::Event;
use crate::run::sys::checkout::Checkout;

/// The worktree after one check.
pub(super) struct Left<'a> {
    /// The try that ran the check.
    pub proto: &'a Protocol<'a>,
    /// The worktree under test.
    pub co: &'a Checkout,
    /// The commit under test.
    pub commit: &'a str,
    /// The check.
    pub check: &'a Check,
    /// How messages name it.
    pub gate: &'a str,
    /// Its log files' stem.
    pub stem: &'a str,
    /// The paths loopc pinned for it ([`super::pin`]): changed by loopc,
    /// not by the check.
    pub pinned: &'a [String],
}

impl Left<'_> {
    /// Restores the worktree to the commit under test and reports what the
    /// check changed. `Err`: the verdict the change gives (a command
    /// check's tracked change under `on_change = fail`), or why loopc could
    /// not look or restore.
    pub(super) fn discard(&self, io: Io<'_>) -> Result<(), Verdict> {
        let failed = |e: String| {
            if stopping(io.control) {
                Verdict::Stopped
            } else {
                Verdict::Error(e)
            }
        };
        if let Err(e) = io.git.verify_checkout(self.co, None) {
            // Not a worktree loopc can put back.
            return Err(reject(
                self.check,
                format!("{} changed the worktree: {e}", self.gate),
                format!("A gate must not change the worktree: {e}"),
            ));
        }
        let status = io.git.status_entries(self.co).map_err(failed)?;
        let head = io
            .git
            .run_co(self.co, &["rev-parse", "--verify", "HEAD"])
            .map_err(failed)?;
        let moved = head.stdout.trim() != self.commit;
        if status.is_empty() && !moved {
            return Ok(());
        }
        io.git.restore(self.co, self.commit).map_err(failed)?;
        let agent = is_agent(self.check);
        let mut paths: Vec<String> = Vec::new();
        for (untracked, path) in status {
            if (untracked && !agent) || self.pinned.contains(&path) || paths.contains(&path) {
                continue;
            }
            paths.push(path);
        }
        if moved {
            paths.push("HEAD".to_string());
        }
        if paths.is_empty() {
            return Ok(());
        }
        let fails = !agent && self.check.on_change == OnChange::Fail;
        self.report(io, &paths, fails);
        if !fails {
            return Ok(());
        }
        Err(reject(
            self.check,
            format!(
                "{} changed tracked files: {}{}",
                self.gate,
                paths.join(", "),
                // A gate can be told its changes are harmless; `accept` cannot.
                if self.check.label == "accept" {
                    ""
                } else {
                    " (discarded; a gate whose changes are harmless says `on_change = ignore`)"
                }
            ),
            format!(
                "A gate must not change tracked files; loopc discarded its changes to:\n{}\n\
                 (a gate whose changes are harmless says `on_change = ignore`)",
                paths.join("\n")
            ),
        ))
    }

    /// Tells the terminal and events.jsonl, and writes `<stem>.changes.txt`
    /// to the logs.
    fn report(&self, io: Io<'_>, paths: &[String], fails: bool) {
        let log = self
            .proto
            .files
            .dir
            .join(format!("{}.changes.txt", self.stem));
        let mut text = format!(
            "{} changed the worktree; loopc discarded the changes{}:\n",
            self.gate,
            if fails { " and failed the attempt" } else { "" }
        );
        for p in paths {
            text.push_str(p);
            text.push('\n');
        }
        let _ = std::fs::write(log, text);
        io.events.emit(Event::GateChanged {
            task: self.proto.task.name.clone(),
            attempt: self.proto.attempt,
            gate: self.check.label.clone(),
            paths: paths.to_vec(),
            fails,
        });
    }
}
