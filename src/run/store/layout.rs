//! Where loopc keeps things: the `.loopc/` directory at the repository root
//! (state, events, progress, logs, worktrees, lock, cache index) as paths,
//! the log directories of attempts, and the two list files loopc keeps
//! there: the ledger of branches it created (`.loopc/branches`) and the
//! task branches whose worktrees are kept (`.loopc/kept`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Paths of loopc's files in one repository.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `.loopc/`.
    pub dir: PathBuf,
    /// `.loopc/state.json`.
    pub state: PathBuf,
    /// `.loopc/events.jsonl`.
    pub events: PathBuf,
    /// `.loopc/progress.md`.
    pub progress: PathBuf,
    /// `.loopc/logs/`: this run's logs.
    pub logs: PathBuf,
    /// `.loopc/earlier-logs/`: earlier runs' logs, `<k>/` each.
    pub earlier_logs: PathBuf,
    /// `.loopc/worktrees/`.
    pub worktrees: PathBuf,
    /// `.loopc/lock`.
    pub lock: PathBuf,
    /// `.loopc/branches`: the ledger of branches loopc created, one a line.
    pub branches: PathBuf,
    /// `.loopc/answers/`: people's answers, `<task>.json` each.
    pub answers: PathBuf,
    /// `.loopc/kept`: the task branches of attempts that ended failed or
    /// blocked, one a line; their worktrees are kept until `loopc clean`.
    pub kept: PathBuf,
}

impl Layout {
    /// [`Layout::new`] for a command run in the checkout at `root`
    /// (`run`, `status`, `logs`, `answer`, `report`, `board`, `clean`),
    /// which must not be a worktree loopc made for an attempt: there a run
    /// would start another loop, with its own state, inside the attempt.
    ///
    /// Errors: `root` lies in a `.loopc/worktrees/` directory; the message
    /// names the checkout to run loopc from.
    pub fn of_checkout(root: &Path) -> Result<Layout, String> {
        let inside = root.ancestors().skip(1).find(|a| {
            a.file_name().is_some_and(|n| n == "worktrees")
                && a.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".loopc")
        });
        if let Some(worktrees) = inside {
            let checkout = worktrees
                .parent()
                .and_then(Path::parent)
                .unwrap_or(worktrees);
            return Err(format!(
                "{} is a worktree loopc made for an attempt, not a checkout to run loopc in; \
                 run it from the checkout it belongs to: cd {}",
                root.display(),
                crate::visible::shell_word(&checkout.display().to_string())
            ));
        }
        Ok(Layout::new(root))
    }

    /// The layout for the repository whose top level is `root`.
    pub fn new(root: &Path) -> Layout {
        let dir = root.join(".loopc");
        Layout {
            state: dir.join("state.json"),
            events: dir.join("events.jsonl"),
            progress: dir.join("progress.md"),
            logs: dir.join("logs"),
            earlier_logs: dir.join("earlier-logs"),
            worktrees: dir.join("worktrees"),
            lock: dir.join("lock"),
            branches: dir.join("branches"),
            kept: dir.join("kept"),
            answers: dir.join("answers"),
            dir,
        }
    }

    /// Creates `.loopc/` and its subdirectories and makes sure git ignores
    /// it (`info/exclude` under `git_common_dir`, the repository's common
    /// git directory).
    ///
    /// Errors: a directory or the exclude file cannot be written.
    pub fn create(&self, git_common_dir: &Path) -> Result<(), String> {
        self.refuse_symlink()?;
        for d in [&self.dir, &self.logs, &self.worktrees] {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        let info = git_common_dir.join("info");
        let exclude = info.join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current
            .lines()
            .any(|l| l.trim() == ".loopc/" || l.trim() == "/.loopc/")
        {
            std::fs::create_dir_all(&info)
                .map_err(|e| format!("cannot create {}: {e}", info.display()))?;
            let mut text = current;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("# loopc's state, logs and worktrees\n/.loopc/\n");
            std::fs::write(&exclude, text)
                .map_err(|e| format!("cannot write {}: {e}", exclude.display()))?;
        }
        Ok(())
    }

    /// Refuses a `.loopc` that is a symbolic link (committed, or made by
    /// hand): loopc would write its lock and state and delete worktrees and
    /// logs wherever it points.
    ///
    /// Errors: a message naming the link and its target.
    pub fn refuse_symlink(&self) -> Result<(), String> {
        match std::fs::symlink_metadata(&self.dir) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&self.dir)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into());
                Err(format!(
                    "{} is a symbolic link (to {target}); loopc keeps its state, logs and \
                     worktrees only in a directory of the repository, and would act outside \
                     it: remove the link (and the entry, if it is committed) and run again",
                    self.dir.display()
                ))
            }
            Ok(m) if !m.is_dir() => Err(format!(
                "{} is not a directory; loopc keeps its state there: move it away and run again",
                self.dir.display()
            )),
            _ => Ok(()),
        }
    }

    /// Checks, before a run changes anything, that the files it writes
    /// under `.loopc/` can be what they must: `progress.md` and
    /// `events.jsonl` files (or absent), `logs/`, `earlier-logs/` and
    /// `worktrees/` directories (or absent), none a symbolic link.
    ///
    /// Errors: a message naming the path and what it is.
    pub fn check_files(&self) -> Result<(), String> {
        for (path, dir) in [
            (&self.progress, false),
            (&self.events, false),
            (&self.state, false),
            (&self.logs, true),
            (&self.earlier_logs, true),
            (&self.worktrees, true),
        ] {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            let ok = if dir {
                meta.file_type().is_dir()
            } else {
                meta.file_type().is_file()
            };
            if !ok {
                let what = if meta.file_type().is_symlink() {
                    "a symbolic link"
                } else if meta.is_dir() {
                    "a directory"
                } else {
                    "a file"
                };
                return Err(format!(
                    "{} is {what}; loopc needs it to be {}: move it away and run again",
                    path.display(),
                    if dir { "a directory" } else { "a file" }
                ));
            }
        }
        Ok(())
    }

    /// The worktree directory of try `id` of a task: `<task>.<try>`
    /// ([`TryId::name`], e.g. `mul.r3-a1`).
    pub fn task_worktree(&self, task: &str, id: TryId) -> PathBuf {
        self.worktrees.join(format!("{task}.{}", id.name()))
    }

    /// The scratch worktree where try `id` of a task is merged and gated
    /// again (`+merge-<task>.<try>`). Its name starts with `+`, which a
    /// task name cannot contain, so it never collides with a task's worktree.
    pub fn merge_worktree(&self, task: &str, id: TryId) -> PathBuf {
        self.worktrees.join(format!("+merge-{task}.{}", id.name()))
    }

    /// The number of the run about to start: one more than the highest
    /// run number anything an earlier run left says: `previous` (the last
    /// state file's), `earlier-logs/<k>/`, the worktree directories under
    /// `worktrees/` and the task branches among `branches` (branch names:
    /// the ledger's, and those of other checkouts, see
    /// [`crate::run::sys::worktree::taken_names`]). So a run's worktree and
    /// branch names never collide with kept ones, nor with another
    /// checkout's. 1 for the first run.
    pub fn next_run(&self, previous: Option<u32>, branches: &BTreeSet<String>) -> u32 {
        let dir_names = |dir: &Path| -> Vec<String> {
            std::fs::read_dir(dir)
                .map(|rd| {
                    rd.filter_map(Result::ok)
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let logs = dir_names(&self.earlier_logs)
            .into_iter()
            .filter_map(|n| n.parse::<u32>().ok());
        let worktrees = dir_names(&self.worktrees).into_iter().filter_map(|n| {
            let n = n.strip_prefix("+merge-").unwrap_or(&n);
            split_try_suffix(n).map(|(_, id)| id.run)
        });
        let branches = branches
            .iter()
            .filter_map(|b| b.rsplit_once('/').and_then(|(_, t)| TryId::parse(t)))
            .map(|id| id.run);
        previous
            .into_iter()
            .chain(logs)
            .chain(worktrees)
            .chain(branches)
            .max()
            .unwrap_or(0)
            .saturating_add(1)
    }

    /// The log directory named `name` (see [`log_name`]) of a task.
    pub fn attempt_logs(&self, task: &str, name: &str) -> PathBuf {
        self.logs.join(task).join(name)
    }

    /// Moves the logs an earlier run left in `.loopc/logs/` to
    /// `.loopc/earlier-logs/<k>/`, so that `logs/<task>/<attempt>/` is
    /// always this run's attempt and nothing of an earlier run is
    /// overwritten: `k` is `run`, the number of the run that wrote them
    /// (from its state file), when it is above every `k` there, else one
    /// more than the highest. The state file that run left goes with them,
    /// as `+state.json` (`loopc report --run <k>` reads it; `+` cannot
    /// start a task name). Returns where they went, `None` when there were
    /// none.
    ///
    /// Errors: a directory cannot be read, made or renamed.
    pub fn keep_earlier_logs(&self, run: Option<u32>) -> Result<Option<PathBuf>, String> {
        let empty = match std::fs::read_dir(&self.logs) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(e) => return Err(format!("cannot read {}: {e}", self.logs.display())),
        };
        if empty {
            return Ok(None);
        }
        std::fs::create_dir_all(&self.earlier_logs)
            .map_err(|e| format!("cannot create {}: {e}", self.earlier_logs.display()))?;
        let highest = std::fs::read_dir(&self.earlier_logs)
            .map_err(|e| format!("cannot read {}: {e}", self.earlier_logs.display()))?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u64>().ok()))
            .max()
            .unwrap_or(0);
        let k = match run {
            Some(r) if u64::from(r) > highest => u64::from(r),
            _ => highest + 1,
        };
        let to = self.earlier_logs.join(k.to_string());
        std::fs::rename(&self.logs, &to).map_err(|e| {
            format!(
                "cannot move {} to {}: {e}",
                self.logs.display(),
                to.display()
            )
        })?;
        std::fs::create_dir_all(&self.logs)
            .map_err(|e| format!("cannot create {}: {e}", self.logs.display()))?;
        // A copy for reports of that run only: a failure loses no state.
        if self.state.is_file() {
            let _ = std::fs::copy(&self.state, to.join(EARLIER_STATE));
        }
        Ok(Some(to))
    }

    /// Keeps a copy of the run's plan file `plan` with its logs
    /// ([`RUN_PLAN`]) when it is a `.loop` file (a REEL spec tree's files
    /// are not copied). Errors: the copy cannot be written.
    pub fn keep_run_plan(&self, plan: &Path) -> Result<(), String> {
        if !plan.is_file() || plan.extension().is_none_or(|e| e != "loop") {
            return Ok(());
        }
        let to = self.logs.join(RUN_PLAN);
        std::fs::copy(plan, &to)
            .map(|_| ())
            .map_err(|e| format!("cannot copy {} to {}: {e}", plan.display(), to.display()))
    }
}

/// The copy of a run's state file kept with its logs in
/// `earlier-logs/<k>/` ([`Layout::keep_earlier_logs`]).
pub const EARLIER_STATE: &str = "+state.json";

/// The copy of a `.loop` plan file as its run read it, kept with the run's
/// logs (`logs/+plan.loop`, then `earlier-logs/<k>/+plan.loop`): `loopc
/// report` draws the run's graph from it, not from the plan as edited
/// since ([`Layout::keep_run_plan`]).
pub const RUN_PLAN: &str = "+plan.loop";

/// The name of the log directory of attempt `attempt`'s `retry`th try
/// (1 for the first; an infrastructure failure such as `setup` retries the
/// same attempt): `<attempt>`, then `<attempt>.retry-<retry>`. Checks of a
/// replay from the cache (attempt 0) log to `replay`.
pub fn log_name(attempt: u32, retry: u32) -> String {
    match (attempt, retry) {
        (0, _) => "replay".to_string(),
        (a, 0 | 1) => a.to_string(),
        (a, r) => format!("{a}.retry-{r}"),
    }
}

/// Which try of a task a worktree, task branch and log directory belong
/// to: the run's number (`state.json`'s `run`), the attempt number (0: the
/// checks of a replay from the cache) and which try of that attempt it is
/// (1 for the first; an infrastructure failure retries the same attempt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TryId {
    /// The run's number, 1 for a repository's first run.
    pub run: u32,
    /// The attempt number; 0 for a replay's checks.
    pub attempt: u32,
    /// Which try of the attempt: 1, then 2… for infrastructure retries.
    pub retry: u32,
}

impl TryId {
    /// The try's part of its worktree's and task branch's names: `r<run>-`
    /// and the name of its log directory ([`log_name`]) after an `a`:
    /// `r3-a1`, `r3-a1.retry-2`; a replay's checks: `r3-replay`.
    pub fn name(self) -> String {
        match self.attempt {
            0 => format!("r{}-replay", self.run),
            a => format!("r{}-a{}", self.run, log_name(a, self.retry)),
        }
    }

    /// The try a [`TryId::name`] names; `None` for any other text.
    pub fn parse(text: &str) -> Option<TryId> {
        let number = |t: &str| -> Option<u32> {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
        };
        let (run, rest) = text.strip_prefix('r')?.split_once('-')?;
        let run = number(run)?;
        if rest == "replay" {
            return Some(TryId {
                run,
                attempt: 0,
                retry: 1,
            });
        }
        let rest = rest.strip_prefix('a')?;
        let (attempt, retry) = match rest.split_once(".retry-") {
            Some((a, r)) => (number(a)?, number(r)?),
            None => (number(rest)?, 1),
        };
        (attempt > 0 && retry > 0).then_some(TryId {
            run,
            attempt,
            retry,
        })
    }
}

/// Splits a worktree directory name `<task>.<try>` ([`Layout::task_worktree`])
/// into the task's name and the try; `None` when it has no such suffix.
/// Task names may hold dots, so the try is the suffix after the last dot
/// that leaves a valid try name (`r1-a2.retry-3` holds a dot itself).
pub fn split_try_suffix(name: &str) -> Option<(&str, TryId)> {
    name.match_indices('.')
        .rev()
        .filter(|(i, _)| *i > 0)
        .find_map(|(i, _)| TryId::parse(&name[i + 1..]).map(|id| (&name[..i], id)))
}

/// The non-empty lines of the list file `path` (empty when it is missing).
fn read_list(path: &Path) -> Result<BTreeSet<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeSet::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Appends `line` to the list file `path` unless it is there already.
fn append_to_list(path: &Path, line: &str) -> Result<(), String> {
    use std::io::Write;
    if read_list(path)?.contains(line) {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| writeln!(f, "{line}"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Rewrites the list file `path` as `lines`.
fn write_list(path: &Path, lines: &BTreeSet<String>) -> Result<(), String> {
    let text: String = lines.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The branches loopc recorded as its own in `.loopc/branches` (empty when
/// there is no ledger yet).
///
/// Errors: the ledger exists but cannot be read.
pub fn ledger(layout: &Layout) -> Result<BTreeSet<String>, String> {
    read_list(&layout.branches)
}

/// Records `branch` in the ledger as created by loopc. Called before the
/// branch is made, so that a crash in between leaves it recorded.
///
/// Errors: the ledger cannot be written.
pub fn record_branch(layout: &Layout, branch: &str) -> Result<(), String> {
    append_to_list(&layout.branches, branch)
}

/// Removes `branch` from the ledger (it was recorded, then not created).
///
/// Errors: the ledger cannot be read or written.
pub fn forget_branch(layout: &Layout, branch: &str) -> Result<(), String> {
    let mut branches = ledger(layout)?;
    if branches.remove(branch) {
        write_ledger(layout, &branches)?;
    }
    Ok(())
}

/// The task branches whose worktrees are kept (`.loopc/kept`): attempts
/// that ended failed or blocked (docs/running.md). Empty when there is no file.
///
/// Errors: the file exists but cannot be read.
pub fn kept(layout: &Layout) -> Result<BTreeSet<String>, String> {
    read_list(&layout.kept)
}

/// Records that the worktree of the attempt on task branch `branch` is kept
/// until `loopc clean`.
///
/// Errors: the file cannot be written.
pub fn record_kept(layout: &Layout, branch: &str) -> Result<(), String> {
    append_to_list(&layout.kept, branch)
}

/// Rewrites the kept list as `branches` (removing the file when empty).
///
/// Errors: the file cannot be written or removed.
pub fn write_kept(layout: &Layout, branches: &BTreeSet<String>) -> Result<(), String> {
    if branches.is_empty() {
        return match std::fs::remove_file(&layout.kept) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {}: {e}", layout.kept.display())),
        };
    }
    write_list(&layout.kept, branches)
}

/// Rewrites the ledger as `branches`.
///
/// Errors: the ledger cannot be written.
pub fn write_ledger(layout: &Layout, branches: &BTreeSet<String>) -> Result<(), String> {
    write_list(&layout.branches, branches)
}

#[cfg(test)]
mod tests {
    use super::{TryId, log_name, split_try_suffix};

    #[test]
    fn try_names_round_trip() {
        let id = |run, attempt, retry| TryId {
            run,
            attempt,
            retry,
        };
        for (t, name) in [
            (id(3, 1, 1), "r3-a1"),
            (id(12, 2, 3), "r12-a2.retry-3"),
            (id(1, 0, 1), "r1-replay"),
        ] {
            assert_eq!(t.name(), name);
            assert_eq!(TryId::parse(name), Some(t));
        }
        for bad in [
            "1",
            "r-a1",
            "r1-a",
            "r1-a0",
            "r1-b1",
            "r1a1",
            "r1-a1.retry-",
            "x",
        ] {
            assert_eq!(TryId::parse(bad), None, "{bad}");
        }
        assert_eq!(split_try_suffix("mul.r2-a1"), Some(("mul", id(2, 1, 1))));
        assert_eq!(
            split_try_suffix("auth.a1b2.r2-a1.retry-2"),
            Some(("auth.a1b2", id(2, 1, 2)))
        );
        assert_eq!(split_try_suffix("mul-1"), None);
        assert_eq!(split_try_suffix(".r1-a1"), None);
    }

    #[test]
    fn log_names() {
        assert_eq!(log_name(1, 1), "1");
        assert_eq!(log_name(2, 1), "2");
        assert_eq!(log_name(1, 2), "1.retry-2");
        assert_eq!(log_name(0, 1), "replay");
    }
}
