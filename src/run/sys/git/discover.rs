//! Finding the repository loopc runs in ([`Git::discover`]): its top level,
//! its git directory and its common git directory, as git names them,
//! whatever bytes those paths hold. A path with a line break is read whole
//! (one value a call when the answer has more lines than values); a path
//! that is not UTF-8 is refused naming that cause, since loopc writes paths
//! as text (state.json, events, `LOOP_*` variables).

use super::{Git, why};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `git rev-parse` is asked, in order: the top level, the git
/// directory, the common git directory.
const WHERE: [&str; 3] = ["--show-toplevel", "--absolute-git-dir", "--git-common-dir"];

impl Git {
    /// Finds the repository containing `cwd` (`git rev-parse --show-toplevel`).
    ///
    /// Errors: git is not installed, `cwd` is not inside a git worktree, or
    /// the repository's path is not UTF-8.
    pub fn discover(cwd: &Path) -> Result<Git, String> {
        let probe = Git::at(cwd.to_path_buf(), cwd.to_path_buf(), cwd.to_path_buf());
        let [top, git_dir, common] = probe.locations(cwd)?;
        let root = PathBuf::from(top);
        let git_dir = PathBuf::from(git_dir);
        let mut common_dir = PathBuf::from(common);
        if common_dir.is_relative() {
            common_dir = cwd.join(common_dir);
        }
        let common_dir = std::fs::canonicalize(&common_dir).unwrap_or(common_dir);
        let mut git = Git::at(root, common_dir, git_dir);
        // A repository without a commit identity (fresh CI machines) still
        // gets commits: loopc signs as itself, only for its own git calls.
        // Both keys in one call; each key's last value is the one git uses.
        let identity = git
            .try_run_in(
                &git.root.clone(),
                &["config", "--get-regexp", r"^user\.(name|email)$"],
            )
            .map(|o| o.stdout)
            .unwrap_or_default();
        let configured = |key: &str| {
            identity
                .lines()
                .map(|l| l.split_once(' ').unwrap_or((l, "")))
                .rfind(|(k, _)| k.eq_ignore_ascii_case(key))
                .is_some_and(|(_, v)| !v.trim().is_empty())
        };
        for (key, name, value) in [
            ("user.name", "NAME", "loopc"),
            ("user.email", "EMAIL", "loopc@localhost"),
        ] {
            if !configured(key) {
                git.env.push((format!("GIT_AUTHOR_{name}"), value.into()));
                git.env
                    .push((format!("GIT_COMMITTER_{name}"), value.into()));
            }
        }
        Ok(git)
    }

    /// A handle on the repository at `root` with these git directories,
    /// not bound to a run.
    fn at(root: PathBuf, common_dir: PathBuf, git_dir: PathBuf) -> Git {
        Git {
            root,
            common_dir,
            git_dir,
            env: Vec::new(),
            control: None,
            timeout: None,
            own_entries: Arc::default(),
            stamp: Arc::default(),
        }
    }

    /// The answers to [`WHERE`] for `cwd`: one `git rev-parse` call, or,
    /// when a path holds a line break (more lines than values), one call a
    /// value, each answer all but its closing line break.
    fn locations(&self, cwd: &Path) -> Result<[String; 3], String> {
        let ask = |args: &[&str]| -> Result<String, String> {
            let mut full = vec!["rev-parse"];
            full.extend_from_slice(args);
            let out = self
                .exec(cwd, &[], &full, None, None)
                .and_then(|o| if o.code == 0 { Ok(o) } else { Err(why(&o)) })
                .map_err(|e| {
                    if e.starts_with("cannot run git") {
                        // Not a repository problem: git itself is missing.
                        format!("{e}; loopc needs git (2.40 or newer) on PATH")
                    } else if let Some(deep) = crate::run::sys::room::git_failed_in(cwd) {
                        // git says "not a git repository" where its own
                        // files' paths would be too long.
                        format!("{deep} (git said: {e})")
                    } else {
                        format!("{} is not inside a git repository ({e})", cwd.display())
                    }
                })?;
            if !out.stdout_was_utf8 {
                return Err(format!(
                    "the repository at {cwd:?} has a path that is not UTF-8; loopc records \
                     paths as text (state.json, its events, the `LOOP_*` variables of agents): \
                     move or rename the repository to a UTF-8 path"
                ));
            }
            Ok(out.stdout)
        };
        let all = ask(&WHERE)?;
        let lines: Vec<&str> = all.strip_suffix('\n').unwrap_or("").split('\n').collect();
        if let [top, git_dir, common] = lines.as_slice() {
            return Ok([top.to_string(), git_dir.to_string(), common.to_string()]);
        }
        let mut out: [String; 3] = Default::default();
        for (slot, arg) in out.iter_mut().zip(WHERE) {
            let text = ask(&[arg])?;
            let value = text.strip_suffix('\n').unwrap_or(&text);
            if value.is_empty() {
                return Err(format!(
                    "{} is not inside a git worktree (`git rev-parse {arg}` said nothing)",
                    cwd.display()
                ));
            }
            *slot = value.to_string();
        }
        Ok(out)
    }
}
