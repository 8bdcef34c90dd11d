//! Room for git's own paths. The system bounds the length of a path
//! (`PATH_MAX`, 4096 bytes with its closing NUL on Linux); a repository
//! whose path is close to that works for a while, then git fails in ways
//! that name something else ("not a git repository", HEAD names no
//! commit, a branch name "is not valid", "'$GIT_DIR' too big"). A run
//! makes paths longer than the user's own git does: its attempts'
//! worktrees under `.loopc/worktrees/`, their administrative directories
//! and the task branches' logs. So before anything, a run checks that the
//! longest of them fits, and says so when it does not.

use super::git::Git;
use std::path::Path;

/// The most bytes a path may have (`PATH_MAX` less its closing NUL).
pub const LONGEST: usize = libc::PATH_MAX as usize - 1;

/// What is added to a task's name to make the name of one of its tries'
/// worktrees and branches, at the longest (`.r<run>-a<attempt>.retry-N`,
/// with room to spare).
const TRY_SUFFIX: usize = ".r999999-a9999.retry-99".len();

/// The longest of git's own paths below a git directory whose objects
/// have `hex` hexadecimal digits: an object file (`objects/ab/<rest>`).
fn object_path(hex: usize) -> usize {
    "/objects/ab/".len() + hex - 2
}

/// Whether the repository whose common git directory is `common` keeps
/// SHA-256 object ids (`extensions.objectFormat = sha256` in its config).
pub(super) fn is_sha256(common: &Path) -> bool {
    std::fs::read_to_string(common.join("config")).is_ok_and(|c| {
        c.lines().any(|l| {
            let l = l.trim().to_ascii_lowercase().replace(' ', "");
            l == "objectformat=sha256"
        })
    })
}

/// The message for a repository at `root` too deep for git: the longest
/// path needed is `need` bytes, for `what`.
fn too_deep(root: &Path, need: usize, what: &str) -> String {
    format!(
        "the repository at {} is too deep for git: its path is {} bytes long, and {what} \
         would be {need} bytes, over the {LONGEST} bytes the system allows a path (PATH_MAX); \
         move the repository to a shorter path",
        root.display(),
        root.as_os_str().len()
    )
}

/// When git failed in `dir` because `dir` is too deep for git's own files
/// below it: the sentence saying so (else `None`, the failure is another).
pub fn git_failed_in(dir: &Path) -> Option<String> {
    let need = dir.as_os_str().len() + "/.git".len() + object_path(64);
    (need > LONGEST).then(|| too_deep(dir, need, "git's own files below it"))
}

/// Checks that the paths a run of tasks whose longest name is `longest`
/// bytes needs fit: git's object files, the attempts' worktrees under
/// `worktrees` (their administrative directories, the task branches'
/// logs, and the longest tracked file, asked of git only when the rest
/// leaves it less than 1 KiB).
///
/// Errors: one does not fit (the message names the length, the limit and
/// what to do).
pub fn check(git: &Git, worktrees: &Path, plan_slug: &str, longest: usize) -> Result<(), String> {
    let common = git.common_dir.as_os_str().len();
    let hex = if is_sha256(&git.common_dir) { 64 } else { 40 };
    let name = longest + TRY_SUFFIX;
    let tree = worktrees.as_os_str().len() + 1 + name + "/.git".len();
    let needs = [
        (common + object_path(hex), "git's object files"),
        (
            common + "/worktrees/".len() + name + "/ORIG_HEAD.lock".len(),
            "an attempt's worktree's git files",
        ),
        (
            common + "/logs/refs/heads/loopc//".len() + plan_slug.len() + 1 + name + ".lock".len(),
            "the logs of its task branches",
        ),
        (tree, "an attempt's worktree"),
    ];
    let worst = needs.iter().max_by_key(|(n, _)| *n).copied();
    if let Some((need, what)) = worst
        && need > LONGEST
    {
        return Err(too_deep(&git.root, need, what));
    }
    if tree + 1024 > LONGEST {
        let deepest = git
            .tracked_paths()
            .map(|p| p.iter().map(String::len).max().unwrap_or(0))
            .unwrap_or(0);
        let need = tree - "/.git".len() + 1 + deepest;
        if need > LONGEST {
            return Err(too_deep(
                &git.root,
                need,
                "its deepest file in an attempt's worktree",
            ));
        }
    }
    Ok(())
}
