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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    /// The run's number ([`Layout::next_run`]): with the attempt, it names
    /// each try's worktree and task branch.
    pub run: u32,
    /// `refs/heads/<integration branch>`.
    pub integration_ref: String,
    /// The kill switch (shared with `git`, whose calls it also stops).
    pub control: std::sync::Arc<Control>,
    /// The event log and display.
    pub events: Arc<Recorder>,
    /// Serializes `git worktree add/remove` (they share `.git/worktrees`).
    pub worktree_lock: Arc<Mutex<()>>,
    /// What `loop.copy` and `loop.link` bring into every new worktree.
    pub brought: crate::run::engine::worktree_files::WorktreeFiles,
    /// Passed attempts' worktrees, kept for later attempts ([`crate::run::engine::pool`]).
    pub pool: Arc<crate::run::engine::pool::Pool>,
    /// The plan file being run, relative to the repository's top (`None`
    /// outside it, or for a REEL spec tree): no attempt may change it
    /// unless its task's `may_change` says so (docs/running.md).
    pub plan_file: Option<String>,
}

/// The part of a run that a step touching the outside world needs: the
/// repository, the kill switch (whether the run is stopping) and the event
/// log. Borrowed from [`RunCtx::io`]: the rooms' steps take this, or only
/// one of its pieces, rather than the whole run.
#[derive(Clone, Copy)]
pub struct Io<'a> {
    /// The repository (its calls stop with the run's kill switch).
    pub git: &'a Git,
    /// The run's kill switch.
    pub control: &'a Control,
    /// The event log and display.
    pub events: &'a Recorder,
}

/// How a run makes worktrees: where they go, the lock `git worktree`
/// calls share, what every new one gets copied or linked, and the pool of
/// passed attempts' worktrees to reuse. Borrowed from [`RunCtx::checkouts`].
#[derive(Clone, Copy)]
pub struct Checkouts<'a> {
    /// `.loopc/` paths (the worktrees' directory).
    pub layout: &'a Layout,
    /// Serializes `git worktree add/remove`.
    pub lock: &'a Mutex<()>,
    /// What `loop.copy` and `loop.link` bring into every new worktree.
    pub brought: &'a crate::run::engine::worktree_files::WorktreeFiles,
    /// Passed attempts' worktrees, kept for later attempts.
    pub pool: &'a crate::run::engine::pool::Pool,
}

impl RunCtx {
    /// The repository, the kill switch and the event log.
    pub fn io(&self) -> Io<'_> {
        Io {
            git: &self.git,
            control: &self.control,
            events: &self.events,
        }
    }

    /// How this run makes worktrees.
    pub fn checkouts(&self) -> Checkouts<'_> {
        Checkouts {
            layout: &self.layout,
            lock: &self.worktree_lock,
            brought: &self.brought,
            pool: &self.pool,
        }
    }

    /// The worktree and the task branch of try `id` of task `task` (an
    /// index into the plan's tasks).
    pub fn try_names(
        &self,
        task: usize,
        id: crate::run::store::layout::TryId,
    ) -> (PathBuf, String) {
        let name = &self.plan.tasks[task].name;
        (
            self.layout.task_worktree(name, id),
            crate::run::sys::worktree::task_branch(&self.slug, name, id),
        )
    }

    /// The same run with the plan grown to `plan` (a plan fragment was
    /// spliced in): attempts that started before share the event log, the
    /// kill switch and the worktree lock with those that start after.
    pub fn with_plan(&self, plan: Plan) -> RunCtx {
        RunCtx {
            plan,
            git: self.git.clone(),
            layout: self.layout.clone(),
            slug: self.slug.clone(),
            run: self.run,
            integration_ref: self.integration_ref.clone(),
            control: Arc::clone(&self.control),
            events: Arc::clone(&self.events),
            worktree_lock: Arc::clone(&self.worktree_lock),
            brought: self.brought.clone(),
            pool: Arc::clone(&self.pool),
            plan_file: self.plan_file.clone(),
        }
    }
}

/// The directory, inside a worktree, that holds what an agent or gate must
/// read or write there (prompt, feedback, progress, handoff, diff, `TMPDIR`):
/// a workspace-write sandbox lets an agent write only inside its working
/// directory. `.loopc/` is ignored by git in every worktree of the
/// repository (`info/exclude`), so nothing there is ever committed; loopc
/// copies the files into the attempt's log directory.
pub const WORK_DIR: &str = ".loopc/attempt";

/// The [`WORK_DIR`] of the worktree `worktree`.
pub fn work_dir(worktree: &Path) -> PathBuf {
    worktree.join(WORK_DIR)
}

/// The `TMPDIR` of subprocesses running in `worktree`.
pub fn tmp_dir(worktree: &Path) -> PathBuf {
    work_dir(worktree).join("tmp")
}

/// Creates the [`WORK_DIR`] of `worktree` and its `tmp/`.
///
/// Errors: a directory cannot be created.
pub fn create_work_dir(worktree: &Path) -> Result<PathBuf, String> {
    let tmp = tmp_dir(worktree);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    Ok(work_dir(worktree))
}

/// Makes the [`WORK_DIR`] of `worktree` loopc's again once an agent (or an
/// agent gate) ran there, before loopc writes in it: a `.loopc` or work
/// directory the agent replaced by a link or a file is removed (the link,
/// never what it points at) and made again, as is a work directory it
/// deleted (`git clean -fdx`), and every link in it is removed, so that
/// no file loopc writes there (the diff, a gate's prompt) and none it
/// keeps for the logs is another file outside the worktree.
///
/// Errors: a link cannot be removed or a directory made.
pub fn reclaim_work_dir(worktree: &Path) -> Result<PathBuf, String> {
    let work = work_dir(worktree);
    for dir in [worktree.join(".loopc"), work.clone()] {
        if let Ok(m) = std::fs::symlink_metadata(&dir)
            && !m.is_dir()
        {
            std::fs::remove_file(&dir)
                .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
        }
    }
    create_work_dir(worktree)?;
    let entries =
        std::fs::read_dir(&work).map_err(|e| format!("cannot read {}: {e}", work.display()))?;
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            let path = e.path();
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
    }
    Ok(work)
}

/// Copies the regular files of `from` (not its subdirectories: `tmp/` is
/// the agent's) into `to`, replacing files of the same name. Best effort:
/// a file that cannot be copied is left out of the logs.
///
/// A file is linked where it can be (the log directory and the worktrees
/// lie on one file system under `.loopc/`), copied where not: nothing
/// writes the work directory once the try has ended (a reused worktree is
/// cleaned, unlinking its files, before its next try writes anything; a
/// failed try's kept worktree and its logs then show the same files), and
/// a link costs no new inode. With dozens of attempts at once, allocating
/// inodes among many freed moments ago was most of the kernel's time.
pub fn copy_files(from: &Path, to: &Path) {
    copy_files_but(from, to, &[]);
}

/// [`copy_files`] but the files named `but`.
fn copy_files_but(from: &Path, to: &Path, but: &[&str]) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) && !but.iter().any(|b| e.file_name() == *b) {
            let _ = keep_file(&e.path(), &to.join(e.file_name()));
        }
    }
}

/// Puts the file `src` at `dst` for the logs: a link where it can, else a
/// copy. What was at `dst` is removed first, never written through: it
/// may itself be a link to a file of a worktree.
///
/// Errors: neither a link nor a copy could be made.
pub fn keep_file(src: &Path, dst: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dst);
    if std::fs::hard_link(src, dst).is_ok() {
        return Ok(());
    }
    std::fs::copy(src, dst).map(|_| ())
}

/// Where one try of a task keeps its files: what its agent and gates read
/// and write lies in its worktree's [`WORK_DIR`] (`work`), where a
/// sandboxed agent may write; loopc's own logs lie in `dir`, outside the
/// worktree, and receive `work`'s files (links, else copies) when the try ends.
#[derive(Debug, Clone)]
pub struct AttemptFiles {
    /// The log directory `.loopc/logs/<task>/<name>/` ([`crate::run::store::layout::log_name`]).
    pub dir: PathBuf,
    /// The worktree's [`WORK_DIR`].
    pub work: PathBuf,
    /// The prompt given on stdin (`LOOP_PROMPT_FILE`).
    pub prompt: PathBuf,
    /// The previous attempt's feedback (`LOOP_FEEDBACK_FILE`).
    pub feedback: PathBuf,
    /// Progress of passed tasks (`LOOP_PROGRESS_FILE`).
    pub progress: PathBuf,
    /// The agent's handoff (`LOOP_HANDOFF`).
    pub handoff: PathBuf,
    /// The attempt's diff (`LOOP_DIFF_FILE` for gates).
    pub diff: PathBuf,
}

impl AttemptFiles {
    /// The files of `task`'s try whose log directory is named `name` and
    /// whose worktree is `worktree` (`None`: no worktree of its own, as
    /// for the checks of a cache replay; the files then lie in the log
    /// directory and gates get copies in their scratch worktree); creates
    /// the log directory (the work directory is made once the worktree
    /// exists, [`create_work_dir`]), and without a worktree an empty
    /// feedback file (such a try follows no failed attempt). Earlier runs'
    /// logs were moved out of `.loopc/logs/` when this run started
    /// ([`Layout::keep_earlier_logs`]).
    ///
    /// Errors: the directory or the feedback file cannot be created.
    pub fn create(
        layout: &Layout,
        task: &str,
        name: &str,
        worktree: Option<&Path>,
    ) -> Result<AttemptFiles, String> {
        let dir = layout.attempt_logs(task, name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let work = worktree.map_or_else(|| dir.clone(), work_dir);
        let files = AttemptFiles::in_dirs(dir, work);
        if worktree.is_none() {
            std::fs::write(&files.feedback, "")
                .map_err(|e| format!("cannot write {}: {e}", files.feedback.display()))?;
        }
        Ok(files)
    }

    /// The files of a run whose logs lie in `dir` and whose agent reads
    /// and writes in `work` (a worktree's [`WORK_DIR`]); creates nothing.
    pub fn in_dirs(dir: PathBuf, work: PathBuf) -> AttemptFiles {
        AttemptFiles {
            prompt: work.join("prompt.md"),
            feedback: work.join("feedback.md"),
            progress: work.join("progress.md"),
            handoff: work.join("handoff.json"),
            diff: work.join("diff.patch"),
            work,
            dir,
        }
    }

    /// Copies the work directory's files into the log directory, but the
    /// feedback: the logs hold loopc's own copy ([`AttemptFiles::write_feedback`]),
    /// not what an agent may have written over it (later checks of the
    /// task read it as `LOOP_FEEDBACK_FILE`).
    pub fn save_logs(&self) {
        if self.work != self.dir {
            copy_files_but(&self.work, &self.dir, &["feedback.md"]);
        }
    }

    /// Writes the previous attempt's feedback `text` for the agent and,
    /// apart, for the logs.
    ///
    /// Errors: a file cannot be written.
    pub fn write_feedback(&self, text: &str) -> Result<(), String> {
        let logged = self.dir.join("feedback.md");
        let mut paths = vec![&self.feedback];
        if logged != self.feedback {
            paths.push(&logged);
        }
        for path in paths {
            std::fs::write(path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    }
}

/// The environment protocol of docs/running.md step 3 for one subprocess of an
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
            ("LOOP_REPO_ROOT", p(&git.root)),
            ("LOOP_COST_CAP_USD", cap.unwrap_or_default()),
            ("TMPDIR", p(&tmp_dir(worktree))),
        ];
        if let Some(d) = diff {
            set.push(("LOOP_DIFF_FILE", p(d)));
        }
        env.extend(set.into_iter().map(|(k, v)| (k.to_string(), v)));
        env
    }
}
