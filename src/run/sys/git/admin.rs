//! What git's administrative files say about the repository's checkouts,
//! read without starting git: each linked worktree has a directory
//! `<common dir>/worktrees/<id>/` holding `gitdir` (the path of the
//! worktree's `.git` file) and `HEAD`; the main checkout's `HEAD` is in the
//! common directory. A run looks at these around every attempt, so reading
//! them costs no process (`git worktree list` reads the same files).
//!
//! Where the files do not say it plainly (a bare repository, a separate git
//! directory, the reftable ref store, whose `HEAD` files are placeholders),
//! the answers come from `git worktree list` instead.

use super::Git;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The administrative entries found to be loopc's own worktrees, so that
/// the guard, which looks at every checkout twice an attempt and twice a
/// merge, reads each of them once a run instead of every time (with dozens
/// of attempts running, those reads were most of the coordinating thread's
/// system calls). An entry's worktree stays under loopc's worktrees
/// directory while the entry exists (the pool moves its worktrees within
/// it). An entry is known by its name, its directory's inode and its
/// directory's birth time: one removed and made again (for a checkout of
/// the user's, say) is another, even when the file system hands out the
/// same inode again; where the birth time is not known, nothing is
/// remembered.
#[derive(Debug, Default)]
pub struct OwnEntries(Mutex<HashSet<EntryKey>>);

/// An administrative entry's name, inode and birth time.
type EntryKey = (OsString, u64, std::time::SystemTime);

impl OwnEntries {
    fn contains(&self, key: &EntryKey) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(key))
    }

    fn insert(&self, key: EntryKey) {
        if let Ok(mut set) = self.0.lock() {
            set.insert(key);
        }
    }
}

/// One checkout of the repository: its directory and what its HEAD is, as
/// `ref: <refname>` (on a branch, born or not) or `detached at <commit>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutHead {
    /// The checkout's directory.
    pub path: PathBuf,
    /// `ref: refs/heads/…` or `detached at <commit>`.
    pub head: String,
}

/// The reftable ref store writes this into every `HEAD` file.
const REFTABLE_PLACEHOLDER: &str = "ref: refs/heads/.invalid";

/// `ref: …` or `detached at …` from a `HEAD` file's text; `None` when the
/// file is not one git writes (or is the reftable placeholder).
fn head_of(text: &str) -> Option<String> {
    let text = text.trim_end();
    if text == REFTABLE_PLACEHOLDER {
        return None;
    }
    if let Some(r) = text.strip_prefix("ref: ") {
        return Some(format!("ref: {}", r.trim()));
    }
    (text.len() >= 40 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("detached at {text}"))
}

/// The path a worktree entry's `gitdir` names: as it is when absolute,
/// else from the entry's directory `admin`, `..` taken off lexically (the
/// worktree may be gone, so nothing is resolved on disk).
fn admin_relative(admin: &Path, gitdir: &str) -> PathBuf {
    use std::path::Component;
    let path = Path::new(gitdir);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let mut out = admin.to_path_buf();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl Git {
    /// The linked worktrees git has registered: (the worktree's directory,
    /// its administrative directory), in no particular order. An entry
    /// whose `gitdir` cannot be read, or is empty (half-written), is left
    /// out.
    pub fn linked_worktrees(&self) -> Vec<(PathBuf, PathBuf)> {
        self.linked_worktrees_but(None)
    }

    /// [`Git::linked_worktrees`]; with `is_own`, but for those it says are
    /// loopc's, remembered ([`OwnEntries`]) so that their files are read once.
    fn linked_worktrees_but(
        &self,
        is_own: Option<&dyn Fn(&Path) -> bool>,
    ) -> Vec<(PathBuf, PathBuf)> {
        use std::os::unix::fs::DirEntryExt;
        let Ok(entries) = std::fs::read_dir(self.common_dir.join("worktrees")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in entries.filter_map(Result::ok) {
            // One `statx` of the entry (not of its files): its birth time.
            let key = is_own
                .and_then(|_| e.metadata().ok()?.created().ok())
                .map(|born| (e.file_name(), e.ino(), born));
            if key.as_ref().is_some_and(|k| self.own_entries.contains(k)) {
                continue;
            }
            let admin = e.path();
            // `git worktree add` writes an entry file by file: one whose
            // `gitdir` is still empty names no directory yet.
            let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else {
                continue;
            };
            if gitdir.trim().is_empty() {
                continue;
            }
            // Relative to the entry since git 2.48's `worktree.useRelativePaths`.
            let dotgit = admin_relative(&admin, gitdir.trim_end_matches(['\n', '\r']));
            let dir = dotgit.parent().map(Path::to_path_buf).unwrap_or(dotgit);
            if is_own.is_some_and(|own| own(&dir)) {
                if let Some(key) = key {
                    self.own_entries.insert(key);
                }
                continue;
            }
            out.push((dir, admin));
        }
        out
    }

    /// Whether `path` is a registered linked worktree.
    pub fn is_registered_worktree(&self, path: &Path) -> bool {
        let entries = self.linked_worktrees();
        if entries.iter().any(|(dir, _)| dir == path) {
            return true;
        }
        // git records a worktree's real path: `path` is resolved once, and
        // only an entry of the same name resolved too (one `realpath` per
        // entry made each look cost as much as the pool was large).
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        entries.iter().any(|(dir, _)| {
            *dir == real
                || (dir.file_name() == real.file_name()
                    && std::fs::canonicalize(dir).is_ok_and(|d| d == real))
        })
    }

    /// The HEAD of every checkout of the repository, but for loopc's own
    /// worktrees (those under `own`, a directory given as it is and
    /// canonical): the main one first, then the linked worktrees in
    /// directory order.
    ///
    /// Errors: git failed (only when the files do not say it plainly).
    pub fn checkout_heads(&self, own: &[&Path]) -> Result<Vec<CheckoutHead>, String> {
        let is_own = |p: &Path| own.iter().any(|o| p.starts_with(o));
        if let Some(heads) = self.checkout_heads_from_files(&is_own) {
            return Ok(heads);
        }
        // Other attempts add worktrees meanwhile, and `git worktree add`
        // writes an entry's files one after another: git reading a
        // half-written entry fails ("failed to read …/commondir"). That
        // passes in moments, so try a few times before calling it an error.
        let mut tries = 0;
        let entries = loop {
            match self.worktrees_from_git() {
                Ok(entries) => break entries,
                Err(e) if tries < 8 && e.contains("/worktrees/") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5 << tries));
                }
                Err(e) => return Err(e),
            }
        };
        Ok(entries
            .into_iter()
            .filter(|w| !is_own(&w.path))
            .map(|w| CheckoutHead {
                path: w.path,
                head: match (w.branch, w.head) {
                    (Some(b), _) => format!("ref: {b}"),
                    (None, Some(h)) => format!("detached at {h}"),
                    (None, None) => "unborn".to_string(),
                },
            })
            .collect())
    }

    /// [`Git::checkout_heads`] from the administrative files; `None` when
    /// they do not say it plainly.
    /// The registered worktrees as `git worktree list` lists them (the main
    /// checkout first, then the linked ones in directory order, not git's
    /// order), read from git's files, each `HEAD` resolved to its commit;
    /// `None` when the files do not say it plainly: [`Self::checkout_heads`]'
    /// cases, an entry half written or whose `gitdir` is unreadable (git
    /// has its own answer for those), a `HEAD` whose ref is unclear.
    pub(super) fn worktrees_from_files(&self) -> Option<Vec<super::WorktreeEntry>> {
        let entries = match std::fs::read_dir(self.common_dir.join("worktrees")) {
            Ok(dir) => dir.count(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(_) => return None,
        };
        let heads = self.checkout_heads_from_files(&|_| false)?;
        if heads.len() != entries + 1 {
            return None;
        }
        // git lists an unborn branch's commit as the zero id.
        let unborn = || {
            "0".repeat(if super::super::room::is_sha256(&self.common_dir) {
                64
            } else {
                40
            })
        };
        heads
            .into_iter()
            .map(|h| {
                let (branch, head) = match h.head.strip_prefix("ref: ") {
                    Some(refname) => (
                        Some(refname.to_string()),
                        Some(self.ref_from_files(refname)?.unwrap_or_else(unborn)),
                    ),
                    None => (
                        None,
                        h.head.strip_prefix("detached at ").map(str::to_string),
                    ),
                };
                Some(super::WorktreeEntry {
                    path: h.path,
                    branch,
                    head,
                })
            })
            .collect()
    }

    fn checkout_heads_from_files(
        &self,
        is_own: &dyn Fn(&Path) -> bool,
    ) -> Option<Vec<CheckoutHead>> {
        // The main checkout is the directory holding the common `.git`.
        if self.common_dir.file_name()? != ".git" {
            return None;
        }
        let main = self.common_dir.parent()?.to_path_buf();
        if !main.join(".git").is_dir() {
            return None;
        }
        let head = head_of(&std::fs::read_to_string(self.common_dir.join("HEAD")).ok()?)?;
        let mut heads = vec![CheckoutHead { path: main, head }];
        let mut linked = self.linked_worktrees_but(Some(is_own));
        linked.sort();
        for (path, admin) in linked {
            let head = head_of(&std::fs::read_to_string(admin.join("HEAD")).ok()?)?;
            heads.push(CheckoutHead { path, head });
        }
        Some(heads)
    }
}

#[cfg(test)]
mod tests {
    use super::head_of;
    use crate::run::sys::git::Git;

    /// A repository `<dir>/repo` with one commit on `main`; its path.
    fn repo_with_a_commit(dir: &std::path::Path) -> std::path::PathBuf {
        let root = dir.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        run_git(&root, &["init", "-q", "-b", "main"]);
        let identity = ["-c", "user.name=n", "-c", "user.email=n@e"];
        let commit = ["commit", "-q", "--allow-empty", "-m", "i"];
        run_git(&root, &[&identity[..], &commit[..]].concat());
        root
    }

    /// Runs git in `root`; the test fails if it does.
    fn run_git(root: &std::path::Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    /// Every name taken as plainly valid without asking git, git takes too;
    /// the others are git's to judge, whatever it says.
    #[test]
    fn plainly_valid_branch_names_are_valid_to_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo_with_a_commit(dir.path());
        let git = Git::discover(&root).unwrap();
        let names = [
            ("loop/plan", true),
            ("loop/my-plan_2.0", true),
            ("feature/x.y", true),
            ("HEAD", false),
            ("-x", false),
            ("a/.b", false),
            ("a..b", false),
            ("a.lock", false),
            ("a/b.", false),
            ("a//b", false),
            ("a/", false),
            ("a b", false),
            ("@", false),
            ("caf\u{e9}", false),
        ];
        for (name, plain) in names {
            assert_eq!(super::super::plainly_valid_branch(name), plain, "{name:?}");
            let by_git = std::process::Command::new("git")
                .args(["check-ref-format", "--branch", name])
                .current_dir(&root)
                .output()
                .unwrap()
                .status
                .success();
            if plain {
                assert!(by_git, "{name:?}");
            }
            assert_eq!(git.valid_branch_name(name).unwrap(), by_git, "{name:?}");
        }
    }

    /// What git's files say about the worktrees is what `git worktree
    /// list` says: branches loose and packed, detached, unborn, locked, a
    /// directory gone; where the files are unclear (a half-written entry)
    /// they say nothing and git is asked.
    #[test]
    fn worktrees_from_files_are_what_git_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo_with_a_commit(dir.path());
        let git = |args: &[&str]| run_git(&root, args);
        git(&["worktree", "add", "-q", "-b", "loose", "../on-branch"]);
        git(&["worktree", "add", "-q", "-b", "packed", "../on-packed"]);
        git(&["pack-refs", "--all"]);
        git(&["worktree", "add", "-q", "--detach", "../detached"]);
        git(&[
            "worktree",
            "add",
            "-q",
            "--orphan",
            "-b",
            "unborn",
            "../unborn",
        ]);
        git(&["worktree", "add", "-q", "--detach", "../locked"]);
        git(&["worktree", "lock", "../locked"]);
        git(&["worktree", "add", "-q", "--detach", "../gone"]);
        std::fs::remove_dir_all(dir.path().join("gone")).unwrap();
        let repo = Git::discover(&root).unwrap();
        let sorted = |mut list: Vec<crate::run::sys::git::WorktreeEntry>| {
            list[1..].sort_by(|a, b| a.path.cmp(&b.path));
            list
        };
        let from_git = sorted(repo.worktrees_from_git().unwrap());
        assert_eq!(from_git.len(), 7, "{from_git:?}");
        let from_files = repo
            .worktrees_from_files()
            .expect("the files say it plainly");
        assert_eq!(sorted(from_files), from_git);
        // Half written: the files say nothing, git's answer is the one.
        let half = root.join(".git/worktrees/half");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("gitdir"), "").unwrap();
        assert_eq!(repo.worktrees_from_files(), None);
    }

    /// `HEAD` read from git's files is what `git rev-parse HEAD^{commit}`
    /// says: on a loose branch, a packed one, detached, unborn, in a linked
    /// worktree.
    #[test]
    fn head_from_files_is_what_git_says() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo_with_a_commit(dir.path());
        let git = |args: &[&str]| run_git(&root, args);
        let by_git = |at: &std::path::Path| {
            let out = std::process::Command::new("git")
                .args(["rev-parse", "-q", "--verify", "HEAD^{commit}"])
                .current_dir(at)
                .output()
                .unwrap();
            out.status
                .success()
                .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
        };
        let check = |at: &std::path::Path, what: &str| {
            let repo = Git::discover(at).unwrap();
            assert!(repo.head_from_files().is_some(), "{what}: files unclear");
            assert_eq!(repo.commit_of("HEAD").unwrap(), by_git(at), "{what}");
        };
        check(&root, "loose");
        git(&["pack-refs", "--all"]);
        check(&root, "packed");
        git(&["checkout", "-q", "--detach"]);
        check(&root, "detached");
        git(&["worktree", "add", "-q", "-b", "linked", "../linked"]);
        check(&dir.path().join("linked"), "linked");
        git(&["checkout", "-q", "--orphan", "unborn"]);
        check(&root, "unborn");
        assert_eq!(by_git(&root), None);
    }

    /// A relative `gitdir` (`worktree.useRelativePaths`) is read from the
    /// entry's directory.
    #[test]
    fn relative_gitdirs_are_read_from_the_entry() {
        let admin = std::path::Path::new("/r/.git/worktrees/wt");
        assert_eq!(
            super::admin_relative(admin, "../../../../wt/.git"),
            std::path::Path::new("/wt/.git")
        );
        assert_eq!(
            super::admin_relative(admin, "/abs/wt/.git"),
            std::path::Path::new("/abs/wt/.git")
        );
    }

    /// An entry `git worktree add` has begun to write (its `gitdir` still
    /// empty) is no checkout: it names no directory yet.
    #[test]
    fn half_written_entries_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo_with_a_commit(dir.path());
        let git = |args: &[&str]| run_git(&root, args);
        git(&["worktree", "add", "-q", "--detach", "../wt"]);
        let half = root.join(".git/worktrees/half");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("gitdir"), "").unwrap();
        std::fs::write(half.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let repo = Git::discover(&root).unwrap();
        let heads = repo.checkout_heads(&[]).unwrap();
        let paths: Vec<_> = heads.iter().map(|h| h.path.clone()).collect();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert!(paths.iter().all(|p| !p.as_os_str().is_empty()), "{paths:?}");
    }

    /// loopc's own worktrees are left out (and remembered), the user's are
    /// read every time; an entry removed and made again for a checkout of
    /// the user's is the user's.
    #[test]
    fn own_worktrees_are_left_out_and_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let root = repo_with_a_commit(dir.path());
        let git = |args: &[&str]| run_git(&root, args);
        let own = dir.path().join("own");
        git(&["worktree", "add", "-q", "--detach", "../own/wt1"]);
        git(&["worktree", "add", "-q", "-b", "u", "../user"]);
        let repo = Git::discover(&root).unwrap();
        let paths = |repo: &Git| -> Vec<String> {
            let heads = repo.checkout_heads(&[&own]).unwrap();
            heads
                .iter()
                .map(|h| h.path.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(paths(&repo), ["repo", "user"]);
        // Remembered where the file system knows birth times.
        if std::fs::metadata(&root).unwrap().created().is_ok() {
            assert_eq!(repo.own_entries.0.lock().unwrap().len(), 1);
        }
        // Still registered, for the callers that ask about loopc's own.
        assert!(repo.is_registered_worktree(&own.join("wt1")));
        // The same entry name, now for the user's checkout elsewhere.
        git(&["worktree", "remove", "--force", "../own/wt1"]);
        git(&["worktree", "add", "-q", "--detach", "../elsewhere/wt1"]);
        assert_eq!(paths(&repo), ["repo", "wt1", "user"]);
    }

    #[test]
    fn head_files() {
        assert_eq!(
            head_of("ref: refs/heads/main\n").as_deref(),
            Some("ref: refs/heads/main")
        );
        let oid = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            head_of(&format!("{oid}\n")),
            Some(format!("detached at {oid}"))
        );
        assert_eq!(head_of("ref: refs/heads/.invalid\n"), None);
        assert_eq!(head_of("garbage"), None);
    }
}
