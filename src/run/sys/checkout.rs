//! A task's worktree as loopc made it ([`Checkout`]), and the git calls that
//! act on one: they name its administrative directory and its files
//! explicitly (`--git-dir`, `--work-tree`), so an agent that deleted or
//! replaced the worktree's `.git` makes them fail instead of reaching the
//! repository above it; loopc verifies the worktree before it stages or
//! commits. Also: whether a commit's gitlinks survive the worktree.

use super::git::{Git, GitOutput, same_path, why};
use std::path::{Path, PathBuf};

/// A worktree loopc made, as it made it: git calls for it name its
/// administrative directory and its files explicitly, so they act on it or
/// fail, never on a repository git would find above it.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// The worktree's directory.
    pub dir: PathBuf,
    /// Its administrative directory (`<common dir>/worktrees/<name>`).
    pub admin: PathBuf,
    /// The text of its `.git` file when loopc made it.
    dotgit: String,
    /// Paths (relative to the worktree) loopc brought in from the main
    /// checkout (`loop.copy`, `loop.link`): never staged, and not a change
    /// a gate made.
    pub excluded: Vec<String>,
}

/// What differs between two commits ([`Git::changes`]).
#[derive(Debug, Default)]
pub struct Changes {
    /// Every path that differs, in git's order.
    pub paths: Vec<String>,
    /// The gitlinks added or changed: `(path, commit)`.
    pub gitlinks: Vec<(String, String)>,
}

/// The text of the `.git` file at `path`, which must be a regular file
/// (not a directory, not a symbolic link).
fn read_dotgit(path: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("it is not a file".to_string());
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

impl Git {
    /// Identifies the worktree loopc has just made at `dir`: its `.git`
    /// file must name an administrative directory under
    /// `<common dir>/worktrees/` whose `gitdir` names `dir/.git` back.
    ///
    /// Errors: `dir` is not such a worktree.
    pub fn checkout(&self, dir: &Path) -> Result<Checkout, String> {
        let dotgit_path = dir.join(".git");
        let dotgit = read_dotgit(&dotgit_path)?;
        let admin = dotgit
            .trim_end()
            .strip_prefix("gitdir: ")
            .map(PathBuf::from)
            .ok_or_else(|| format!("{} does not name a git directory", dotgit_path.display()))?;
        let admin = if admin.is_relative() {
            dir.join(admin)
        } else {
            admin
        };
        let admin = std::fs::canonicalize(&admin)
            .map_err(|e| format!("cannot read {}: {e}", admin.display()))?;
        let worktrees = self.common_dir.join("worktrees");
        let back = std::fs::read_to_string(admin.join("gitdir")).unwrap_or_default();
        if !admin.starts_with(&worktrees) || !same_path(Path::new(back.trim()), &dotgit_path) {
            return Err(format!(
                "{} is not a worktree of the repository at {}",
                dir.display(),
                self.root.display()
            ));
        }
        Ok(Checkout {
            dir: dir.to_path_buf(),
            admin,
            dotgit,
            excluded: Vec::new(),
        })
    }

    /// Verifies that `co` is still the worktree loopc made: its `.git` file
    /// is there, unchanged, and (with `branch`) its HEAD is on
    /// `refs/heads/<branch>`. loopc stages and commits only after this.
    ///
    /// Errors: a sentence saying what changed, for the attempt's feedback.
    pub fn verify_checkout(&self, co: &Checkout, branch: Option<&str>) -> Result<(), String> {
        let path = co.dir.join(".git");
        match read_dotgit(&path) {
            Ok(text) if text == co.dotgit => {}
            Ok(_) => {
                return Err(format!(
                    "the worktree's `.git` file ({}) was changed: it no longer names the \
                     worktree's git directory {}",
                    path.display(),
                    co.admin.display()
                ));
            }
            Err(_) if !co.dir.is_dir() => {
                return Err(format!(
                    "the worktree {} was removed (or replaced)",
                    co.dir.display()
                ));
            }
            Err(e) => {
                return Err(format!(
                    "the worktree's `.git` file ({}) is missing or unreadable ({e}): it was \
                     removed or replaced",
                    path.display()
                ));
            }
        }
        if !co.admin.is_dir() {
            return Err(format!(
                "the worktree's git directory {} was removed",
                co.admin.display()
            ));
        }
        if let Some(b) = branch {
            let want = format!("refs/heads/{b}");
            // The worktree's HEAD file says it plainly unless the ref store
            // is reftable (whose HEAD files are placeholders).
            if let Ok(text) = std::fs::read_to_string(co.admin.join("HEAD"))
                && text.trim_end() == format!("ref: {want}")
                && !self.common_dir.join("reftable").exists()
            {
                return Ok(());
            }
            let head = self.try_run_co(co, &["symbolic-ref", "-q", "HEAD"])?;
            let on = head.stdout.trim();
            if head.code != 0 || on != want {
                let now = if head.code != 0 {
                    "detached".to_string()
                } else {
                    format!("on `{}`", on.strip_prefix("refs/heads/").unwrap_or(on))
                };
                return Err(format!(
                    "the worktree's HEAD is {now}, not on its task branch `{b}`"
                ));
            }
        }
        Ok(())
    }

    /// Checks out the files and index of worktree `co`, made without them
    /// (`git worktree add --no-checkout`), as `git worktree add` itself
    /// does (`git reset --hard --no-recurse-submodules`): the whole tree,
    /// whatever sparse checkout the checkout loopc runs in has (what `git
    /// worktree add` copied of it is removed first,
    /// [`drop_copied_config`]). It touches only `co`, so
    /// it needs no lock: only registering a worktree must not overlap
    /// another (a `git worktree add` reading the half-made entry of
    /// another fails).
    ///
    /// Errors: git failed, or the copied configuration cannot be removed.
    pub fn fill(&self, co: &Checkout) -> Result<(), String> {
        drop_copied_config(&co.admin)?;
        self.run_co(co, &["reset", "-q", "--hard", "--no-recurse-submodules"])
            .map(|_| ())
    }

    /// Removes every file and directory of worktree `co` that git does not
    /// track, ignored ones and nested repositories included (`git clean
    /// -ffdx`): with [`super::worktree::reuse_task`], what makes a reused
    /// worktree hold exactly what a fresh one would. It touches only `co`.
    ///
    /// Errors: git failed (a file it could not remove).
    pub fn clean(&self, co: &Checkout) -> Result<(), String> {
        self.run_co(co, &["clean", "-q", "-ffdx"]).map(|_| ())
    }

    /// Puts worktree `co` back to `commit` after a check ran in it: its
    /// HEAD (and the branch HEAD is on), index and tracked files are
    /// `commit`'s (`git reset --hard`), and the untracked files that are
    /// not ignored are removed (`git clean -ffd`; the files loopc brought
    /// in and ignored ones, caches and `.loopc/` among them, stay).
    ///
    /// Errors: git failed.
    pub fn restore(&self, co: &Checkout, commit: &str) -> Result<(), String> {
        self.run_co(
            co,
            &["reset", "-q", "--hard", "--no-recurse-submodules", commit],
        )?;
        // The files loopc brought in (`loop.copy`, `loop.link`) stay: they
        // are few, named by the plan, so a pathspec of them is bounded.
        let exclusions: Vec<String> = co
            .excluded
            .iter()
            .map(|p| format!(":(exclude,literal){p}"))
            .collect();
        let mut args = vec!["clean", "-q", "-ffd"];
        if !exclusions.is_empty() {
            args.extend(["--", "."]);
            args.extend(exclusions.iter().map(String::as_str));
        }
        self.run_co(co, &args).map(|_| ())
    }

    /// Runs `git ARGS` for worktree `co`, naming its git directory and its
    /// files explicitly (`--git-dir`, `--work-tree`); any exit status.
    ///
    /// Errors: git could not be started, or it was killed.
    pub fn try_run_co(&self, co: &Checkout, args: &[&str]) -> Result<GitOutput, String> {
        let pre = [
            super::git::path_option("git-dir", &co.admin),
            super::git::path_option("work-tree", &co.dir),
        ];
        self.exec(&co.dir, &pre, args, None, None)
    }

    /// [`Git::try_run_co`] with `input` on git's standard input.
    ///
    /// Errors: git could not be started, or it was killed.
    pub fn try_run_co_fed(
        &self,
        co: &Checkout,
        args: &[&str],
        input: &[u8],
    ) -> Result<GitOutput, String> {
        let pre = [
            super::git::path_option("git-dir", &co.admin),
            super::git::path_option("work-tree", &co.dir),
        ];
        self.exec(&co.dir, &pre, args, Some(input), None)
    }

    /// [`Git::try_run_co`], requiring exit status 0.
    ///
    /// Errors: git failed (its whole standard error, bounded).
    pub fn run_co(&self, co: &Checkout, args: &[&str]) -> Result<GitOutput, String> {
        let out = self.try_run_co(co, args)?;
        if out.code != 0 {
            return Err(format!("`git {}` failed: {}", args.join(" "), why(&out)));
        }
        Ok(out)
    }

    /// Stages everything in worktree `co` and commits it with `message` when
    /// anything is staged. Call [`Git::verify_checkout`] first. Returns the
    /// task branch's commit afterwards when that is known to contain
    /// `base`: the branch was still at `base` before (the agent made no
    /// commit of its own), read from git's files. `None`: ask
    /// [`Git::tip_containing`].
    ///
    /// Errors: git failed.
    pub fn commit_all(
        &self,
        co: &Checkout,
        message: &str,
        base: &str,
    ) -> Result<Option<String>, String> {
        // The branch HEAD is on (verified), read without a process.
        let branch = std::fs::read_to_string(co.admin.join("HEAD"))
            .ok()
            .and_then(|t| t.trim_end().strip_prefix("ref: ").map(str::to_string));
        let at_base = branch
            .as_deref()
            .and_then(|b| self.ref_from_files(b))
            .is_some_and(|tip| tip.as_deref() == Some(base));
        self.stage_all(co)?;
        // Commit first: with nothing staged it fails, and only then is
        // the index asked whether that was all (one process when there is
        // work to commit, the usual case).
        // The message on standard input (`-F -`), as `-m` would give it.
        let commit = self.try_run_co_fed(
            co,
            &["commit", "-q", "--no-verify", "-F", "-"],
            message.as_bytes(),
        )?;
        if commit.code != 0 {
            let staged = self.try_run_co(co, &["diff", "--cached", "--quiet"])?;
            match staged.code {
                0 => {}
                1 => {
                    return Err(format!(
                        "`git commit` failed in {}: {}",
                        co.dir.display(),
                        why(&commit)
                    ));
                }
                _ => {
                    return Err(format!(
                        "`git diff --cached` failed in {}: {}",
                        co.dir.display(),
                        why(&staged)
                    ));
                }
            }
        }
        if !at_base {
            return Ok(None);
        }
        Ok(branch
            .as_deref()
            .and_then(|b| self.ref_from_files(b))
            .flatten())
    }

    /// Stages everything in worktree `co` but the files loopc brought
    /// into it (`loop.copy`, `loop.link`); a merge in progress is
    /// resolved in the index as the files now are.
    ///
    /// Errors: git failed.
    pub fn stage_all(&self, co: &Checkout) -> Result<(), String> {
        self.run_co(co, &["add", "-A"])?;
        if !co.excluded.is_empty() {
            // Unstaged again (an exclusion pathspec in `add` is refused
            // for an ignored path); the paths on standard input, as many
            // as `copy` matched.
            let literal =
                super::git::nul_list(co.excluded.iter().map(|p| format!(":(literal){p}")));
            let args = [
                "rm",
                "-r",
                "-q",
                "--cached",
                "--ignore-unmatch",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            self.run_co_fed(co, &args, &literal)?;
        }
        Ok(())
    }

    /// The tree of worktree `co`'s index (`git write-tree`): after
    /// [`Git::stage_all`], the tree of its files.
    ///
    /// Errors: git failed (an unmerged path is left in the index).
    pub fn write_tree(&self, co: &Checkout) -> Result<String, String> {
        Ok(self.run_co(co, &["write-tree"])?.stdout.trim().to_string())
    }

    /// The commit branch `branch` points at if it contains commit `base`
    /// (one `git for-each-ref --contains`, where reading the branch and
    /// asking `merge-base --is-ancestor` would be two calls); `None` when it
    /// does not, or the branch does not exist.
    ///
    /// Errors: git failed.
    pub fn tip_containing(&self, branch: &str, base: &str) -> Result<Option<String>, String> {
        let refname = format!("refs/heads/{branch}");
        let out = self.read(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "--contains",
            base,
            &refname,
        ])?;
        // The pattern also matches refs below `refname/`: take the exact one.
        Ok(out
            .lines()
            .filter_map(|l| l.split_once(' '))
            .find(|(name, _)| *name == refname)
            .map(|(_, id)| id.to_string()))
    }

    /// The paths `git status` of worktree `co` names (both sides of a
    /// rename; untracked files one by one), but for the files loopc
    /// brought in ([`Checkout::excluded`], left out here rather than in a
    /// pathspec: they may be many). Empty: the worktree is clean.
    ///
    /// Errors: git failed.
    pub fn status_paths(&self, co: &Checkout) -> Result<Vec<String>, String> {
        Ok(self
            .status_entries(co)?
            .into_iter()
            .map(|(_, path)| path)
            .collect())
    }

    /// [`Git::status_paths`], each path with whether it is untracked (`??`).
    ///
    /// Errors: git failed.
    pub fn status_entries(&self, co: &Checkout) -> Result<Vec<(bool, String)>, String> {
        let out = self.run_co(
            co,
            &["status", "--porcelain", "-z", "--untracked-files=all"],
        )?;
        let brought = |path: &str| {
            co.excluded.iter().any(|e| {
                path == e
                    || path
                        .strip_prefix(e.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        };
        let mut paths = Vec::new();
        let mut records = out.stdout.split('\0').filter(|r| !r.is_empty());
        while let Some(record) = records.next() {
            let (status, path) = record.split_at(record.len().min(3));
            let mut named = vec![path];
            // A rename or copy is followed by its source path.
            if (status.starts_with('R') || status.starts_with('C'))
                && let Some(from) = records.next()
            {
                named.push(from);
            }
            let untracked = status.starts_with("??");
            paths.extend(
                named
                    .into_iter()
                    .filter(|p| !brought(p))
                    .map(|p| (untracked, p.to_string())),
            );
        }
        Ok(paths)
    }

    /// What differs between commits `from` and `to` (one `git diff-tree`):
    /// every path, as it is (`-z`: no quoting; names that are not UTF-8
    /// decoded lossily), and the gitlinks (submodules, nested repositories)
    /// that `to` adds or changes, as `(path, commit)` pairs.
    ///
    /// Errors: git failed.
    pub fn changes(&self, from: &str, to: &str) -> Result<Changes, String> {
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
        // `:oldmode newmode oldid newid status` NUL `path` NUL, repeated.
        let mut fields = out.stdout.split('\0');
        let mut changes = Changes::default();
        while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            if let [_, new_mode, _, new_id, _] = parts.as_slice()
                && *new_mode == "160000"
            {
                changes
                    .gitlinks
                    .push((path.to_string(), new_id.to_string()));
            }
            changes.paths.push(path.to_string());
        }
        Ok(changes)
    }

    /// Whether commit `id` is in the object store of the repository (or
    /// submodule repository) whose git directory is `store`.
    ///
    /// Errors: git could not be run.
    pub fn store_has_commit(&self, store: &Path, id: &str) -> Result<bool, String> {
        let pre = [super::git::path_option("git-dir", store)];
        let spec = format!("{id}^{{commit}}");
        let out = self.exec(&self.root, &pre, &["cat-file", "-e", &spec], None, None)?;
        Ok(out.code == 0)
    }

    /// The git directories of the repository's shared object stores: its
    /// own, and every submodule repository kept under `<common dir>/modules/`
    /// (the main checkout's; a worktree's own copies live under its
    /// administrative directory and go with it).
    pub fn shared_stores(&self) -> Vec<PathBuf> {
        let mut stores = vec![self.common_dir.clone()];
        let mut todo = vec![(self.common_dir.join("modules"), 0)];
        while let Some((dir, depth)) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(Result::ok) {
                let p = e.path();
                if !p.is_dir() {
                    continue;
                }
                if p.join("objects").is_dir() && p.join("HEAD").is_file() {
                    stores.push(p.clone());
                    todo.push((p.join("modules"), depth + 1));
                } else if depth < 8 {
                    // Submodule names may contain `/`.
                    todo.push((p, depth + 1));
                }
            }
        }
        stores
    }
}

/// What `git worktree add` copies from the checkout it runs in into a new
/// worktree's administrative directory: the sparse-checkout patterns, and
/// the per-worktree configuration (`extensions.worktreeConfig`), where
/// `git sparse-checkout` turns sparseness on. An attempt's worktree holds
/// the whole tree, and its configuration is the repository's: the agent
/// and the gates see every file, and may create one anywhere.
const COPIED: &[&str] = &["config.worktree", "info/sparse-checkout"];

/// Removes from the administrative directory `admin` of a worktree just
/// added what `git worktree add` copied from the user's checkout
/// (`COPIED`); nothing is there to remove unless that checkout is sparse
/// or has a configuration of its own.
///
/// Errors: a file there cannot be removed.
pub fn drop_copied_config(admin: &Path) -> Result<(), String> {
    for rel in COPIED {
        let p = admin.join(rel);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", p.display())),
        }
    }
    Ok(())
}
