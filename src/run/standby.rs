//! Standby, `loopc run --watch` (docs/running.md, "Standby"): between two
//! rounds of a run, waiting for a change to what the plan is made of.
//!
//! [`Watched`] is what one round read: the plan's files (a `.loop` file, or
//! a REEL spec tree's defaults plan and specs, with the tree's directory),
//! every task's `inputs` globs (a fragment's producer's too) and the commit
//! the base branch (`loop.base`, default the branch checked out) was at.
//! [`Standby`] watches the repository with `notify` (events debounced by
//! `notify-debouncer-full`): the top directory and each directory in it,
//! but not those git ignores (no file of theirs is in a key), nor
//! `.loopc/` (the worktrees, logs and state a run writes) nor `.git/`
//! (watched only for the base branch's ref: an event there makes the base
//! be read again, and only a new commit of it counts), so that a round
//! never wakes the next one. [`Standby::wait`] returns what changed,
//! or that Ctrl-C (SIGINT, SIGTERM, SIGHUP) arrived. Nothing here prints.

use super::sys::git::Git;
use super::sys::interrupt;
use notify_debouncer_full::notify::event::{AccessKind, AccessMode};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// How long the file system must be quiet before a change counts (an
/// editor's save, a `git commit`: one change, not many).
const QUIET: Duration = Duration::from_millis(300);

/// How often a wait looks at the interrupt flag.
const TICK: Duration = Duration::from_millis(100);

/// What a round read, and so what a change to wakes the next one.
#[derive(Debug, Clone, Default)]
pub struct Watched {
    /// The plan's files (absolute) and the BLAKE3 hash of their bytes
    /// when the round compiled them (`None`: unreadable then).
    pub files: Vec<(PathBuf, Option<[u8; 32]>)>,
    /// Directories (absolute) any file below which is the plan's: a REEL
    /// spec tree's (a spec added or moved changes the plan).
    pub dirs: Vec<PathBuf>,
    /// Every task's `inputs` globs, relative to the repository's top.
    pub inputs: Vec<String>,
    /// `loop.base` (`None`: the branch checked out) and the commit it was
    /// at when the round started (`None`: not known).
    pub base: (Option<String>, Option<String>),
    /// The top of the repository that holds the plan (`None`: in none).
    pub root: Option<PathBuf>,
}

impl Watched {
    /// What a round of the plan compiled from the file or directory `plan`
    /// (relative to `cwd`) reads, taken before it runs: the files behind
    /// `compilation` (their names as given, relative to `cwd`), the
    /// `inputs` of its plan's tasks (without a plan, `previous`'s: a plan
    /// edited into an error still reads what the last good round read),
    /// its base branch and the commit that is at now.
    pub fn of(
        plan: &Path,
        cwd: &Path,
        compilation: Option<&crate::Compilation>,
        previous: Option<&Watched>,
    ) -> Watched {
        let plan = &cwd.join(plan);
        let plan_built = compilation.and_then(|c| c.plan.as_ref());
        // The plan as given (unreadable: a file that appears is a change)
        // and every file the compilation read.
        let mut paths = vec![plan.clone()];
        if let Some(c) = compilation {
            paths.extend(c.files.files().iter().map(|f| cwd.join(&f.name)));
        }
        let mut files: Vec<(PathBuf, Option<[u8; 32]>)> = Vec::new();
        for path in paths.iter().filter(|p| !p.is_dir()) {
            let path = absolute(path);
            if !files.iter().any(|(f, _)| *f == path) {
                let hash = hash_of(&path);
                files.push((path, hash));
            }
        }
        let dirs = if plan.is_dir() {
            vec![absolute(plan)]
        } else {
            Vec::new()
        };
        let (inputs, base) = match plan_built {
            Some(p) => {
                let mut inputs: Vec<String> = p
                    .tasks
                    .iter()
                    .flat_map(|t| t.inputs.iter().cloned())
                    .collect();
                inputs.sort_unstable();
                inputs.dedup();
                (inputs, (p.settings.base.clone(), None))
            }
            None => previous.map_or_else(Default::default, |w| (w.inputs.clone(), w.base.clone())),
        };
        let dir = if plan.is_dir() {
            plan.as_path()
        } else {
            plan.parent().unwrap_or(cwd)
        };
        let git = Git::discover(dir).ok();
        let commit = git.as_ref().and_then(|g| base_commit(g, base.0.as_deref()));
        Watched {
            files,
            dirs,
            inputs,
            base: (base.0, commit.or(base.1)),
            root: git.map(|g| g.root),
        }
    }
}

/// The BLAKE3 hash of the file at `path`; `None` when it cannot be read.
fn hash_of(path: &Path) -> Option<[u8; 32]> {
    std::fs::read(path)
        .ok()
        .map(|b| *blake3::hash(&b).as_bytes())
}

/// A path made absolute and, where it exists, canonical (the watcher
/// reports canonical paths).
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The commit the base branch `base` (`loop.base`; `None`: the branch
/// checked out) is at, as [`super::start_commit`] reads it; `None` when it
/// names none.
pub fn base_commit(git: &Git, base: Option<&str>) -> Option<String> {
    match base {
        Some(b) => git
            .commit_of(&format!("refs/heads/{b}"))
            .ok()
            .flatten()
            .or_else(|| git.commit_of(b).ok().flatten()),
        None => git.commit_of("HEAD").ok().flatten(),
    }
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Woke {
    /// Something the plan reads changed: the changed paths, relative to
    /// the repository's top (`/`-separated), and `the base branch …` for
    /// a new commit of it; sorted, each once.
    Changed(Vec<String>),
    /// Ctrl-C, SIGTERM or SIGHUP arrived.
    Interrupted,
}

/// The watcher of one repository, kept across rounds so that a change made
/// while a round runs wakes the next one.
pub struct Standby {
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    events: Receiver<DebounceEventResult>,
    git: Git,
    root: PathBuf,
    git_dirs: Vec<PathBuf>,
    watching: Vec<(PathBuf, RecursiveMode)>,
}

impl Standby {
    /// Starts watching the repository whose top is `root`, and installs
    /// the interrupt handlers (a Ctrl-C while waiting ends the wait).
    ///
    /// Errors: `root` is in no git repository, or the system's file
    /// watching cannot be set up (inotify's limits, say), naming the path.
    pub fn start(root: &Path) -> Result<Standby, String> {
        interrupt::install();
        let git = Git::discover(root)?;
        let (tx, events) = channel();
        let debouncer = new_debouncer(QUIET, None, tx)
            .map_err(|e| format!("cannot watch {} for changes: {e}", root.display()))?;
        let root = absolute(&git.root);
        let mut git_dirs = vec![absolute(&git.common_dir)];
        if absolute(&git.git_dir) != git_dirs[0] {
            git_dirs.push(absolute(&git.git_dir));
        }
        let mut standby = Standby {
            debouncer,
            events,
            git,
            root,
            git_dirs,
            watching: Vec::new(),
        };
        standby.watch_tree()?;
        Ok(standby)
    }

    /// Watches the top directory, each directory in it (recursively) but
    /// `.git`, `.loopc` and those git ignores (a build's `target/`: no
    /// file of theirs is in a commit, so none is in a key), and the git
    /// directories' refs: what is not watched yet.
    fn watch_tree(&mut self) -> Result<(), String> {
        let mut wanted = vec![(self.root.clone(), RecursiveMode::NonRecursive)];
        let ignored = self.git.ignored_top_dirs()?;
        let entries = std::fs::read_dir(&self.root)
            .map_err(|e| format!("cannot read {}: {e}", self.root.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name == ".git" || name == ".loopc" || ignored.iter().any(|i| **i == *name) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                wanted.push((entry.path(), RecursiveMode::Recursive));
            }
        }
        for dir in self.git_dirs.clone() {
            wanted.push((dir.clone(), RecursiveMode::NonRecursive));
            let heads = dir.join("refs").join("heads");
            if heads.is_dir() {
                wanted.push((heads, RecursiveMode::Recursive));
            }
        }
        self.watch_all(wanted)
    }

    /// Watches each of `wanted` not watched yet (gone meanwhile: skipped).
    fn watch_all(&mut self, wanted: Vec<(PathBuf, RecursiveMode)>) -> Result<(), String> {
        for (path, mode) in wanted {
            if self.watching.iter().any(|(w, _)| *w == path) {
                continue;
            }
            match self.debouncer.watch(&path, mode) {
                Ok(()) => {
                    self.watching.push((path, mode));
                }
                // Gone between listing and watching: nothing to watch.
                Err(_) if !path.exists() => {}
                Err(e) => return Err(format!("cannot watch {} for changes: {e}", path.display())),
            }
        }
        Ok(())
    }

    /// `what` as it is now: each plan file's hash and the base's commit
    /// read again. A round that found no plan (deleted, moved away) waits
    /// on this, so only a change from now on wakes it, not the plan's
    /// absence over and over.
    pub fn as_now(&self, mut what: Watched) -> Watched {
        for (path, hash) in &mut what.files {
            *hash = hash_of(path);
        }
        let commit = base_commit(&self.git, what.base.0.as_deref());
        what.base.1 = commit;
        what
    }

    /// Waits until something `what` names changes, or an interrupt. A
    /// plan file whose text is no longer what was compiled, or a base
    /// branch no longer at the round's commit, is a change at once (it
    /// changed while the round ran).
    ///
    /// Errors: the watcher failed (its message, naming the path).
    pub fn wait(&mut self, what: &Watched) -> Result<Woke, String> {
        self.watch_plan(what)?;
        let mut changed = self.changed_since(what);
        while changed.is_empty() {
            if interrupt::requested() {
                return Ok(Woke::Interrupted);
            }
            let batch = match self.events.recv_timeout(TICK) {
                Ok(Ok(batch)) => batch,
                Ok(Err(errors)) => {
                    let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    return Err(format!(
                        "watching {} for changes failed: {}",
                        self.root.display(),
                        said.join("; ")
                    ));
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "watching {} for changes stopped",
                        self.root.display()
                    ));
                }
            };
            let mut in_git = false;
            // Reading a file (loopc reads the plan) is no change.
            for event in batch.iter().filter(|e| is_change(&e.kind)) {
                for path in &event.paths {
                    if self.git_dirs.iter().any(|g| path.starts_with(g)) {
                        in_git = true;
                    } else if let Some(rel) = relevant(&self.root, what, path) {
                        changed.push(rel);
                    }
                    // A directory made at the top is watched from now on.
                    if matches!(event.kind, EventKind::Create(_))
                        && path.parent() == Some(self.root.as_path())
                    {
                        self.watch_tree()?;
                    }
                }
            }
            if in_git && let Some(line) = self.base_moved(what) {
                changed.push(line);
            }
        }
        changed.sort_unstable();
        changed.dedup();
        Ok(Woke::Changed(changed))
    }

    /// Watches the directory of each plan file no watch covers yet (a
    /// plan in a directory git ignores), and a spec tree's directory.
    fn watch_plan(&mut self, what: &Watched) -> Result<(), String> {
        let covered = |watching: &[(PathBuf, RecursiveMode)], dir: &Path| {
            watching.iter().any(|(w, mode)| {
                w == dir || (*mode == RecursiveMode::Recursive && dir.starts_with(w))
            })
        };
        let mut wanted = Vec::new();
        for (file, _) in &what.files {
            if let Some(dir) = file.parent()
                && dir.starts_with(&self.root)
                && !covered(&self.watching, dir)
            {
                wanted.push((dir.to_path_buf(), RecursiveMode::NonRecursive));
            }
        }
        for dir in &what.dirs {
            if dir.starts_with(&self.root) && !covered(&self.watching, dir) {
                wanted.push((dir.clone(), RecursiveMode::Recursive));
            }
        }
        self.watch_all(wanted)
    }

    /// What changed of `what` while no event was being looked at: plan
    /// files whose text differs, a base branch that moved.
    fn changed_since(&self, what: &Watched) -> Vec<String> {
        let mut out = Vec::new();
        for (path, hash) in &what.files {
            if hash_of(path) != *hash {
                out.push(shown(&self.root, path));
            }
        }
        out.extend(self.base_moved(what));
        out
    }

    /// `the base branch `B`` (the branch checked out, without
    /// `loop.base`) when the base is no longer at the commit the round
    /// started from.
    fn base_moved(&self, what: &Watched) -> Option<String> {
        let (name, Some(commit)) = &what.base else {
            return None;
        };
        let now = base_commit(&self.git, name.as_deref())?;
        if now == *commit {
            return None;
        }
        let branch = match name {
            Some(b) => Some(b.clone()),
            None => self.git.current_branch().ok().flatten(),
        };
        Some(branch.map_or_else(
            || "the commit checked out (HEAD)".to_string(),
            |b| format!("the base branch `{b}`"),
        ))
    }
}

/// Whether an event of `kind` changes something: not a file opened or
/// closed unwritten.
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// `path` relative to `root`, `/`-separated (as it is, outside it).
fn shown(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `path`, as shown, when `what` reads it: a plan file, a file below a
/// spec tree's directory, or a file an `inputs` glob matches; never a file
/// of `.loopc/` or `.git/`.
fn relevant(root: &Path, what: &Watched, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let first = rel.components().next()?.as_os_str();
    if first == ".loopc" || first == ".git" {
        return None;
    }
    let shown = shown(root, path);
    let plan =
        what.files.iter().any(|(f, _)| f == path) || what.dirs.iter().any(|d| path.starts_with(d));
    (plan || matches_inputs(&what.inputs, &shown)).then_some(shown)
}

/// Whether the repository-relative `path` matches one of `globs` (as
/// `inputs` are matched: `*` and `?` do not cross `/`, `**` does; a glob
/// that does not compile matches nothing, the checker refused it).
fn matches_inputs(globs: &[String], path: &str) -> bool {
    globs.iter().any(|g| {
        globset::GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .is_ok_and(|glob| glob.compile_matcher().is_match(path))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_matched_as_the_cache_matches_them() {
        let globs = vec!["src/*.py".to_string(), "docs/**".to_string()];
        assert!(matches_inputs(&globs, "src/a.py"));
        assert!(!matches_inputs(&globs, "src/x/a.py"));
        assert!(matches_inputs(&globs, "docs/x/y.md"));
        assert!(!matches_inputs(&globs, "README"));
    }

    #[test]
    fn files_of_loopc_and_git_are_never_relevant() {
        let root = Path::new("/r");
        let what = Watched {
            inputs: vec!["**".to_string()],
            ..Watched::default()
        };
        assert_eq!(
            relevant(root, &what, Path::new("/r/.loopc/state.json")),
            None
        );
        assert_eq!(relevant(root, &what, Path::new("/r/.git/index")), None);
        assert_eq!(
            relevant(root, &what, Path::new("/r/src/a.py")),
            Some("src/a.py".to_string())
        );
    }
}
