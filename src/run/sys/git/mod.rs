//! The git layer: every repository operation loopc performs, as calls to the
//! real `git` binary (through duct, stdin `/dev/null`, output captured; git's
//! own output is small). Nothing here touches the user's checkout, index or
//! branches other than the ones it is asked to by name. Calls for a task's
//! worktree are in [`super::checkout`].
//!
//! Over 600 lines: one small wrapper per git operation loopc performs, and
//! the runner that bounds and isolates every call; each is a few lines.

pub use super::objects::MergeTree;
mod admin;
mod discover;
mod exec;
pub use exec::{nul_list, path_option};

use super::process::Control;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Configuration every git command of loopc's own runs with, whatever the
/// user's configuration says: no hooks (a `post-checkout` hook must not run,
/// or hang, in `git worktree add`), no commit signing (no passphrase
/// prompt), no automatic gc or maintenance while several worktrees commit
/// at once, no file-system monitor daemon; paths as they are (not C-quoted
/// octal escapes) in file lists. Agents, gates and `setup` run git with the
/// user's configuration.
pub const SAFE_CONFIG: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
    "-c",
    "maintenance.auto=false",
    "-c",
    "gc.auto=0",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
];

/// The most of git's standard error kept in a message (its head and tail).
pub const STDERR_LIMIT: usize = 8 * 1024;

/// A handle on the repository loopc runs in.
///
/// Every call names the repository explicitly (`--git-dir`), so no git
/// command of loopc's depends on what git would discover from a directory an
/// agent can change; calls for a task's worktree go through a
/// [`super::checkout::Checkout`], which names both its administrative
/// directory and its files.
#[derive(Clone, Debug)]
pub struct Git {
    /// The repository's top-level directory (the checkout loopc was started in).
    pub root: PathBuf,
    /// The common git directory (`.git` of the main worktree).
    pub common_dir: PathBuf,
    /// The git directory of `root` (`common_dir`, or its
    /// `worktrees/<name>` when `root` is a linked worktree).
    pub git_dir: PathBuf,
    /// Extra environment for every git call (a fallback commit identity).
    pub(super) env: Vec<(String, String)>,
    /// The run's kill switch: a call is killed when the run stops or its
    /// `time` budget runs out (`None` outside a run).
    control: Option<Arc<Control>>,
    /// The longest one call may take (`None`: no limit of its own).
    timeout: Option<Duration>,
    /// Which administrative entries are loopc's own worktrees (shared by clones).
    pub(super) own_entries: Arc<admin::OwnEntries>,
    /// The commit identities `git var -l` gave, once asked (shared by
    /// clones; a clone with other variables does not use them):
    /// [`Git::write_commit`].
    pub(in crate::run::sys) stamp: Arc<std::sync::OnceLock<Option<super::loose::Stamp>>>,
}

/// The captured result of one git call.
#[derive(Debug)]
pub struct GitOutput {
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Whether standard output was UTF-8 as it came (else `stdout` holds
    /// U+FFFD for the bytes that were not).
    pub stdout_was_utf8: bool,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeEntry {
    /// The worktree's directory.
    pub path: PathBuf,
    /// The checked-out branch (`refs/heads/...`), if any.
    pub branch: Option<String>,
    /// The commit checked out (`None` on an unborn branch).
    pub head: Option<String>,
}

/// Git's standard error for a message: all of it, trimmed, or its first and
/// last [`STDERR_LIMIT`]` / 2` bytes around a marker when longer.
pub fn bounded_stderr(s: &str) -> String {
    let s = s.trim();
    if s.len() <= STDERR_LIMIT {
        return s.to_string();
    }
    let half = STDERR_LIMIT / 2;
    let mut head = half;
    while !s.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = s.len() - half;
    while !s.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[loopc: {} bytes left out]\n{}",
        &s[..head],
        tail - head,
        &s[tail..]
    )
}

/// What went wrong in a git call that exited non-zero: its whole standard
/// error (bounded), else its standard output's.
pub(super) fn why(out: &GitOutput) -> String {
    let e = bounded_stderr(&out.stderr);
    if e.is_empty() {
        bounded_stderr(&out.stdout)
    } else {
        e
    }
}

fn output_of(out: &std::process::Output) -> GitOutput {
    let stdout = String::from_utf8_lossy(&out.stdout);
    GitOutput {
        code: out.status.code().unwrap_or(-1),
        stdout_was_utf8: matches!(stdout, std::borrow::Cow::Borrowed(_)),
        stdout: stdout.into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The oldest git loopc runs with (major, minor): `git merge-tree
/// --write-tree --merge-base` came in 2.40.
pub const MIN_VERSION: (u32, u32) = (2, 40);

/// The (major, minor) of `git version`'s answer (`git version 2.39.5`,
/// `git version 2.47.3.windows.1`); `None` when it says no version.
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let version = text.strip_prefix("git version ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor))
}

impl Git {
    /// Checks that the `git` loopc runs is at least [`MIN_VERSION`]
    /// (`git version`): replays merge onto a moved base with
    /// `git merge-tree --write-tree --merge-base`, which git 2.40 added.
    ///
    /// Errors: git cannot be run, its version cannot be read, or it is older.
    pub fn require_min_version(&self) -> Result<(), String> {
        let out = self.try_run_in(&self.root.clone(), &["version"])?;
        let text = out.stdout.trim();
        let found = parse_version(text)
            .ok_or_else(|| format!("cannot read git's version from `git version`: {text:?}"))?;
        if found < MIN_VERSION {
            let (major, minor) = MIN_VERSION;
            return Err(format!(
                "loopc needs git {major}.{minor} or newer, and the `git` on PATH is {} \
                 (`{text}`)\nhint: install a newer git, or put one first on PATH",
                text.trim_start_matches("git version ")
            ));
        }
        Ok(())
    }

    /// Binds every later call to the run's kill switch: a git command still
    /// running when the run stops (Ctrl-C, SIGTERM, the `time` budget) is
    /// killed, like any other subprocess of the run.
    pub fn bind(&mut self, control: Arc<Control>) {
        self.control = Some(control);
    }

    /// This handle with each call limited to `timeout` (an attempt's git
    /// calls get the task's timeout).
    pub fn with_timeout(&self, timeout: Duration) -> Git {
        Git {
            timeout: Some(timeout),
            ..self.clone()
        }
    }

    /// Environment variables loopc adds to git calls (also given to
    /// subprocesses so that an agent's own commits work).
    pub fn identity_env(&self) -> &[(String, String)] {
        &self.env
    }

    /// Runs `git ARGS` in `dir` on the repository of `root` (named with
    /// `--git-dir`, never discovered from `dir`); any exit status is
    /// returned.
    ///
    /// Errors: git could not be started, or it was killed (timeout, stop).
    pub fn try_run_in(&self, dir: &Path, args: &[&str]) -> Result<GitOutput, String> {
        self.exec(dir, &[self.git_dir_option()], args, None, None)
    }

    /// Runs `git ARGS` in `dir` and requires exit status 0.
    ///
    /// Errors: git failed; the message names the command and carries git's
    /// whole standard error (bounded, [`bounded_stderr`]).
    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Result<GitOutput, String> {
        let out = self.try_run_in(dir, args)?;
        if out.code != 0 {
            return Err(format!("`git {}` failed: {}", args.join(" "), why(&out)));
        }
        Ok(out)
    }

    /// Runs `git ARGS` at the repository root, requiring success; returns
    /// trimmed stdout.
    pub fn read(&self, args: &[&str]) -> Result<String, String> {
        Ok(self.run_in(&self.root, args)?.stdout.trim().to_string())
    }

    /// The commit `rev` names, or `None` when it names no commit. A branch
    /// (`refs/heads/…`, which git keeps on commits) and `HEAD` (on a branch,
    /// born or not, or detached at a commit) are read from git's files when
    /// they say it plainly ([`Git::ref_from_files`]): no process.
    pub fn commit_of(&self, rev: &str) -> Result<Option<String>, String> {
        if rev.starts_with("refs/heads/")
            && let Some(id) = self.ref_from_files(rev)
        {
            return Ok(id);
        }
        if rev == "HEAD"
            && let Some(id) = self.head_from_files()
        {
            return Ok(id);
        }
        let spec = format!("{rev}^{{commit}}");
        let out = self.try_run_in(&self.root, &["rev-parse", "-q", "--verify", &spec])?;
        Ok((out.code == 0).then(|| out.stdout.trim().to_string()))
    }

    /// [`Git::commit_of`] for `HEAD` (`root`'s own, in `git_dir`) from
    /// git's files: `Some(None)` on an unborn branch; `None` when the files
    /// do not say it plainly (the reftable store's placeholder, a ref
    /// outside `refs/heads/`, a file git would not write).
    fn head_from_files(&self) -> Option<Option<String>> {
        let text = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let text = text.trim_end();
        match text.strip_prefix("ref: ") {
            Some(refname) if refname.starts_with("refs/heads/") => self.ref_from_files(refname),
            Some(_) => None,
            None => super::oid::is_oid(text).then(|| Some(text.to_string())),
        }
    }

    /// The tree of commit `rev`.
    pub fn tree_of(&self, rev: &str) -> Result<String, String> {
        self.read(&["rev-parse", &format!("{rev}^{{tree}}")])
    }

    /// Whether `name` is a valid branch name (`git check-ref-format --branch`;
    /// a name that plainly is, [`plainly_valid_branch`], without asking).
    pub fn valid_branch_name(&self, name: &str) -> Result<bool, String> {
        if plainly_valid_branch(name) {
            return Ok(true);
        }
        Ok(self
            .try_run_in(&self.root, &["check-ref-format", "--branch", name])?
            .code
            == 0)
    }

    /// The branch checked out in the main worktree, or `None` when HEAD is
    /// detached or unborn.
    pub fn current_branch(&self) -> Result<Option<String>, String> {
        let out = self.try_run_in(&self.root, &["symbolic-ref", "-q", "--short", "HEAD"])?;
        Ok((out.code == 0).then(|| out.stdout.trim().to_string()))
    }

    /// Moves `refname` to `new` only if it currently points at `old`
    /// (`None`: only if it does not exist). Returns false when the ref had
    /// moved (compare-and-swap lost). A git stopped or killed as it ran
    /// (Ctrl-C) may have moved the ref already: then it is read again, and
    /// a ref at `new` is a success.
    pub fn update_ref(&self, refname: &str, new: &str, old: Option<&str>) -> Result<bool, String> {
        let zero = super::oid::zero_oid(new);
        let args = [
            "update-ref",
            "-m",
            "loopc",
            refname,
            new,
            old.unwrap_or(&zero),
        ];
        let landed = || self.commit_of(refname).ok().flatten().as_deref() == Some(new);
        let out = match self.try_run_in(&self.root, &args) {
            Ok(out) => out,
            Err(_) if landed() => return Ok(true),
            Err(e) => return Err(e),
        };
        if out.code == 0 {
            return Ok(true);
        }
        match self.commit_of(refname)?.as_deref() {
            Some(current) if current == new => Ok(true),
            current if current != old => Ok(false),
            _ => Err(format!("cannot move {refname}: {}", why(&out))),
        }
    }

    /// Deletes `refname` if it exists (`git update-ref -d` succeeds on a
    /// missing ref: one call, no look first).
    pub fn delete_ref(&self, refname: &str) -> Result<(), String> {
        self.run_in(&self.root, &["update-ref", "-d", refname])
            .map(|_| ())
    }

    /// Deletes the branches `names` (`refs/heads/<name>`) with one `git
    /// branch -D`, as many as are given: a branch already gone is no error.
    ///
    /// Errors: git failed for a branch that still exists (its message).
    pub fn delete_branches(&self, names: &[String]) -> Result<(), String> {
        if names.is_empty() {
            return Ok(());
        }
        let mut args = vec!["branch", "-D", "-q", "--"];
        args.extend(names.iter().map(String::as_str));
        let out = self.try_run_in(&self.root, &args)?;
        if out.code == 0 {
            return Ok(());
        }
        let left: Vec<&String> = names
            .iter()
            .filter(|b| !matches!(self.commit_of(&format!("refs/heads/{b}")), Ok(None)))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        Err(format!(
            "cannot delete the task branch(es) {}: {}",
            left.iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", "),
            why(&out)
        ))
    }

    /// The registered worktrees (`git worktree list --porcelain -z`: a
    /// path with a line break is read whole), from git's files when they
    /// say it plainly (no process: every run asks once before any task).
    pub fn worktrees(&self) -> Result<Vec<WorktreeEntry>, String> {
        if let Some(list) = self.worktrees_from_files() {
            return Ok(list);
        }
        self.worktrees_from_git()
    }

    /// [`Git::worktrees`] as `git worktree list` says it.
    fn worktrees_from_git(&self) -> Result<Vec<WorktreeEntry>, String> {
        let out = self.run_in(&self.root, &["worktree", "list", "--porcelain", "-z"])?;
        let mut list = Vec::new();
        let mut current: Option<WorktreeEntry> = None;
        for line in out.stdout.split('\0') {
            if let Some(p) = line.strip_prefix("worktree ") {
                if let Some(e) = current.take() {
                    list.push(e);
                }
                current = Some(WorktreeEntry {
                    path: PathBuf::from(p),
                    branch: None,
                    head: None,
                });
            } else if let Some(h) = line.strip_prefix("HEAD ")
                && let Some(e) = current.as_mut()
            {
                e.head = Some(h.to_string());
            } else if let Some(b) = line.strip_prefix("branch ")
                && let Some(e) = current.as_mut()
            {
                e.branch = Some(b.to_string());
            }
        }
        if let Some(e) = current {
            list.push(e);
        }
        Ok(list)
    }

    /// Adds a worktree at `path` on a new branch `branch` (or detached when
    /// `None`) at `commit`; with `checkout` false its files and index are
    /// left for [`super::checkout`]'s `fill` (`--no-checkout`).
    pub fn worktree_add(
        &self,
        path: &Path,
        branch: Option<&str>,
        commit: &str,
        checkout: bool,
    ) -> Result<(), String> {
        let p = path.to_string_lossy();
        let mut args = vec!["worktree", "add", "--quiet"];
        if !checkout {
            args.push("--no-checkout");
        }
        match branch {
            Some(b) => args.extend(["-b", b]),
            None => args.push("--detach"),
        }
        args.extend([p.as_ref(), commit]);
        self.run_in(&self.root, &args).map(|_| ())
    }

    /// Removes the worktree at `path` (forced: loopc owns it), then its
    /// directory if git left it behind, whatever modes its files have
    /// (git cannot empty a read-only directory: it is opened up and git
    /// asked again).
    pub fn worktree_remove(&self, path: &Path) -> Result<(), String> {
        let p = path.to_string_lossy();
        if self.is_registered_worktree(path) {
            let args = ["worktree", "remove", "--force", "--force", p.as_ref()];
            // git drops its entry even when it could not empty the
            // directory; with the entry left, it is asked again.
            if self.run_in(&self.root, &args).is_err() && self.is_registered_worktree(path) {
                super::modes::open_up(path);
                self.run_in(&self.root, &args)?;
            }
        }
        if path.exists() {
            super::modes::remove_tree(path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Writes `git diff from to` to the file `out` (streamed, not held in memory).
    pub fn diff_to_file(&self, from: &str, to: &str, out: &Path) -> Result<(), String> {
        let file = std::fs::File::create(out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        let args = [
            "diff",
            "--binary",
            "--no-ext-diff",
            "--no-textconv",
            from,
            to,
        ];
        let res = self.exec(
            &self.root,
            &[self.git_dir_option()],
            &args,
            None,
            Some(file),
        )?;
        if res.code != 0 {
            return Err(format!("`git diff {from} {to}` failed: {}", why(&res)));
        }
        Ok(())
    }

    /// Every file of the tree of `rev` (recursively): `(path, object id)`
    /// pairs in git's order (`git ls-tree -r -z --full-tree`).
    pub fn tree_files(&self, rev: &str) -> Result<Vec<(String, String)>, String> {
        let out = self.run_in(&self.root, &["ls-tree", "-r", "-z", "--full-tree", rev])?;
        let mut files = Vec::new();
        for record in out.stdout.split('\0').filter(|r| !r.is_empty()) {
            // `<mode> SP <type> SP <object> TAB <path>`
            let Some((meta, path)) = record.split_once('\t') else {
                return Err(format!("unexpected `git ls-tree` output: {record}"));
            };
            let Some(oid) = meta.split(' ').nth(2) else {
                return Err(format!("unexpected `git ls-tree` output: {record}"));
            };
            files.push((path.to_string(), oid.to_string()));
        }
        Ok(files)
    }

    /// The files that differ between the trees of `from` and `to`, each
    /// with `<mode> <object id>` in `to` (git's zero id, mode `000000`,
    /// when `to` has no such file): `git diff-tree -r -z --no-renames`.
    /// The paths are read whole (`-z`), in git's order.
    pub fn changed_files(&self, from: &str, to: &str) -> Result<Vec<(String, String)>, String> {
        let out = self.run_in(
            &self.root,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--no-commit-id",
                from,
                to,
            ],
        )?;
        let mut files = Vec::new();
        let mut fields = out.stdout.split('\0').filter(|r| !r.is_empty());
        while let Some(meta) = fields.next() {
            // `:<old mode> <new mode> <old id> <new id> <status>`, then the path.
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let (Some(mode), Some(oid), Some(path)) = (parts.get(1), parts.get(3), fields.next())
            else {
                return Err(format!("unexpected `git diff-tree` output: {meta}"));
            };
            files.push((path.to_string(), format!("{mode} {oid}")));
        }
        Ok(files)
    }

    /// Points `refname` at `new`, whatever it pointed at before.
    pub fn set_ref(&self, refname: &str, new: &str) -> Result<(), String> {
        self.run_in(&self.root, &["update-ref", "-m", "loopc", refname, new])
            .map(|_| ())
    }

    /// The full message of every commit a ref under `prefix` points at:
    /// `(refname, message)` pairs, read with one `git for-each-ref`.
    pub fn ref_messages(&self, prefix: &str) -> Result<Vec<(String, String)>, String> {
        let out = self.run_in(
            &self.root,
            &[
                "for-each-ref",
                "--format=%(refname)%00%(contents)%00",
                prefix,
            ],
        )?;
        let mut fields = out.stdout.split('\0');
        let mut list = Vec::new();
        while let (Some(name), Some(message)) = (fields.next(), fields.next()) {
            list.push((name.trim_start().to_string(), message.to_string()));
        }
        Ok(list)
    }

    /// Whether the main worktree is in the middle of a merge, rebase,
    /// cherry-pick or revert (spec: "dirty merge state").
    pub fn operation_in_progress(&self) -> Result<Option<&'static str>, String> {
        let git_dir = &self.git_dir;
        for (file, what) in [
            ("MERGE_HEAD", "a merge"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or `git am`"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
        ] {
            if git_dir.join(file).exists() {
                return Ok(Some(what));
            }
        }
        Ok(None)
    }

    /// Whether commit `ancestor` is `descendant` or one of its ancestors
    /// (`git merge-base --is-ancestor`).
    ///
    /// Errors: git failed (not merely answered no).
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, String> {
        let out = self.try_run_in(
            &self.root,
            &["merge-base", "--is-ancestor", ancestor, descendant],
        )?;
        match out.code {
            0 => Ok(true),
            1 => Ok(false),
            _ => Err(format!(
                "`git merge-base --is-ancestor` failed: {}",
                why(&out)
            )),
        }
    }

    /// Branch names (without `refs/heads/`) equal to `name` or under
    /// `name/`; unlike [`Git::branches_under`], never abbreviated.
    pub fn branch_refs(&self, name: &str) -> Result<Vec<String>, String> {
        if let Some(found) = self.branches_from_files(name) {
            return Ok(found);
        }
        let pattern = format!("refs/heads/{name}");
        Ok(self
            .read(&["for-each-ref", "--format=%(refname)", &pattern])?
            .lines()
            .filter_map(|l| l.strip_prefix("refs/heads/"))
            .map(str::to_string)
            .collect())
    }

    /// Branch names (short form) under `refs/heads/<prefix>`.
    pub fn branches_under(&self, prefix: &str) -> Result<Vec<String>, String> {
        if prefix.ends_with('/')
            && let Some(found) = self.branches_from_files(prefix)
        {
            // Read from the files: each its full name, which is what
            // `%(refname:short)` gives but where a tag has the same name.
            return Ok(found);
        }
        let pattern = format!("refs/heads/{prefix}");
        Ok(self
            .read(&["for-each-ref", "--format=%(refname:short)", &pattern])?
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// The branches `git for-each-ref refs/heads/<name>` lists (the branch
    /// `name`, unless it ends in `/`, and those under `name/`), by name
    /// without `refs/heads/`, sorted, read from git's files; `None` when
    /// the files do not say it plainly or `name` is a pattern (ask git).
    fn branches_from_files(&self, name: &str) -> Option<Vec<String>> {
        if name.is_empty() || name.contains(['*', '?', '[', '\\']) {
            return None;
        }
        let exact = format!("refs/heads/{}", name.trim_end_matches('/'));
        let mut found = Vec::new();
        if !name.ends_with('/') && self.ref_from_files(&exact)?.is_some() {
            found.push(name.to_string());
        }
        let under = self.refs_under_from_files(&format!("{exact}/"), &[])?;
        found.extend(
            under
                .keys()
                .filter_map(|r| r.strip_prefix("refs/heads/"))
                .map(str::to_string),
        );
        Some(found)
    }
}

/// Whether `name` is a branch name git accepts by every rule of `git
/// check-ref-format --branch`, judged only for the plain names most are:
/// `/`-separated components of ASCII letters, digits, `_`, `-` and `.`,
/// none empty, starting with `.` or `-`, or ending with `.` or `.lock`, no
/// `..`, and not `HEAD`. Any other name is for git to judge (false here is
/// no verdict).
pub fn plainly_valid_branch(name: &str) -> bool {
    name != "HEAD"
        && !name.contains("..")
        && name.split('/').all(|c| {
            !c.is_empty()
                && !c.starts_with(['.', '-'])
                && !c.ends_with('.')
                && !c.ends_with(".lock")
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        })
}

/// Whether two paths name the same directory (canonicalized when possible).
pub fn same_path(a: &Path, b: &Path) -> bool {
    let ca = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
    let cb = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
    ca == cb
}
