//! What every part of a run shares: the plan, the repository, the layout,
//! the kill switch and the event recorder. Built once by the coordinator
//! and shared (`Arc`) with the attempts on the thread pool. It is the
//! engine's: only the engine holds a run together (`sys` and the store are
//! handed the pieces they need).

use crate::plan::{Plan, Task, TaskKind};
use crate::run::store::events::Recorder;
use crate::run::store::layout::Layout;
use crate::run::sys::git::Git;
use crate::run::sys::process::Control;
use std::path::Path;
use std::sync::Mutex;

/// Shared, read-mostly state of one run.
pub struct RunCtx {
    /// The compiled plan.
    pub plan: Plan,
    /// The repository.
    pub git: Git,
    /// `.loopc/` paths.
    pub layout: Layout,
    /// The plan's name as a ref component.
    pub slug: String,
    /// Task branches the user has checked out elsewhere: never used.
    pub reserved: std::collections::HashSet<String>,
    /// `refs/heads/<integration branch>`.
    pub integration_ref: String,
    /// The kill switch.
    pub control: Control,
    /// The event log and display.
    pub events: Recorder,
    /// Serializes `git worktree add/remove` (they share `.git/worktrees`).
    pub worktree_lock: Mutex<()>,
}

/// Where one try of a task keeps its files (all outside its worktree).
#[derive(Debug, Clone)]
pub struct AttemptFiles {
    /// The log directory `.loopc/logs/<task>/<name>/` ([`crate::run::sys::worktree::log_name`]).
    pub dir: std::path::PathBuf,
    /// The prompt given on stdin (`LOOP_PROMPT_FILE`).
    pub prompt: std::path::PathBuf,
    /// The previous attempt's feedback (`LOOP_FEEDBACK_FILE`).
    pub feedback: std::path::PathBuf,
    /// Progress of passed tasks (`LOOP_PROGRESS_FILE`).
    pub progress: std::path::PathBuf,
    /// The agent's handoff (`LOOP_HANDOFF`).
    pub handoff: std::path::PathBuf,
    /// The attempt's diff (`LOOP_DIFF_FILE` for gates).
    pub diff: std::path::PathBuf,
}

impl AttemptFiles {
    /// The files of `task`'s try whose log directory is named `name`;
    /// creates the directory. Earlier runs' logs were moved out of
    /// `.loopc/logs/` when this run started ([`Layout::keep_earlier_logs`]).
    ///
    /// Errors: the directory cannot be created.
    pub fn create(layout: &Layout, task: &str, name: &str) -> Result<AttemptFiles, String> {
        let dir = layout.attempt_logs(task, name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(AttemptFiles {
            prompt: dir.join("prompt.md"),
            feedback: dir.join("feedback.md"),
            progress: dir.join("progress.md"),
            handoff: dir.join("handoff.json"),
            diff: dir.join("diff.patch"),
            dir,
        })
    }
}

/// The environment protocol of spec §5 step 3 for one subprocess of an
/// attempt: the task's `env` first, then the `LOOP_*` variables (which win).
#[derive(Debug, Clone)]
pub struct Protocol<'a> {
    /// The task.
    pub task: &'a Task,
    /// The attempt number (1-based).
    pub attempt: u32,
    /// The commit the attempt started from.
    pub base: &'a str,
    /// The attempt's files.
    pub files: &'a AttemptFiles,
}

impl Protocol<'_> {
    /// The variables for a subprocess running in `worktree`, with
    /// `handoff` and `prompt` files of its own (gates have theirs) and
    /// `LOOP_DIFF_FILE` when `diff` is set.
    pub fn env(
        &self,
        git: &Git,
        worktree: &Path,
        prompt: &Path,
        handoff: &Path,
        diff: Option<&Path>,
    ) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = git.identity_env().to_vec();
        env.extend(self.task.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let cap = match &self.task.kind {
            TaskKind::Agent { agent, .. } => agent.cost.map(crate::run::time::decimal_usd),
            TaskKind::Command { .. } => None,
        };
        let p = |p: &Path| p.to_string_lossy().into_owned();
        let mut set = vec![
            ("LOOP_TASK", self.task.name.clone()),
            (
                "LOOP_TITLE",
                self.task
                    .title
                    .clone()
                    .unwrap_or_else(|| self.task.name.clone()),
            ),
            ("LOOP_ATTEMPT", self.attempt.to_string()),
            ("LOOP_WORKTREE", p(worktree)),
            ("LOOP_PROMPT_FILE", p(prompt)),
            ("LOOP_FEEDBACK_FILE", p(&self.files.feedback)),
            ("LOOP_PROGRESS_FILE", p(&self.files.progress)),
            ("LOOP_HANDOFF", p(handoff)),
            ("LOOP_BASE", self.base.to_string()),
            ("LOOP_COST_CAP_USD", cap.unwrap_or_default()),
        ];
        if let Some(d) = diff {
            set.push(("LOOP_DIFF_FILE", p(d)));
        }
        env.extend(set.into_iter().map(|(k, v)| (k.to_string(), v)));
        env
    }
}
