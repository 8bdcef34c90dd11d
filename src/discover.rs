//! Plan discovery: which plan a command uses when none is named. Every
//! command that takes an optional PLAN (`run`, `check`, `graph`, `fmt`,
//! `list`) finds it the same way, with [`find_plan`].

use std::path::{Path, PathBuf};

/// The plan file a directory's plan is looked for under first, and the file
/// `loopc init` writes.
pub const PLAN_FILE: &str = "plan.loop";

/// Why no plan was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscoverError {
    /// No `plan.loop` or `*.loop` in any directory searched (`searched`,
    /// nearest first).
    NotFound {
        /// The directories looked in, from the current directory up.
        searched: Vec<PathBuf>,
    },
    /// The nearest directory with plans has several `*.loop` files and no
    /// `plan.loop`.
    Several {
        /// The directory (as [`find_plan`] would have returned it: relative
        /// to the current directory).
        dir: PathBuf,
        /// The candidates' file names, sorted.
        plans: Vec<String>,
    },
    /// A directory could not be read.
    Read {
        /// The directory.
        dir: PathBuf,
        /// The I/O error, as text.
        error: String,
    },
}

impl std::fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiscoverError::NotFound { searched } => {
                let first = searched.first().map(|p| p.display().to_string());
                let first = first.unwrap_or_default();
                match searched.last() {
                    Some(last) if searched.len() > 1 => write!(
                        f,
                        "no plan given, and no {PLAN_FILE} or *.loop file in {first} or the \
                         directories above it up to the repository root {} \
                         (`loopc init` writes a starter plan)",
                        last.display()
                    ),
                    _ => write!(
                        f,
                        "no plan given, and no {PLAN_FILE} or *.loop file in {first} \
                         (`loopc init` writes a starter plan)"
                    ),
                }
            }
            DiscoverError::Several { dir, plans } => {
                let shown = if dir.as_os_str().is_empty() {
                    ".".to_string()
                } else {
                    dir.display().to_string()
                };
                write!(
                    f,
                    "no plan given, and {} plans in {shown}: {}; name one (e.g. `{}`)",
                    plans.len(),
                    plans.join(", "),
                    dir.join(plans.first().map_or("", String::as_str)).display()
                )
            }
            DiscoverError::Read { dir, error } => {
                write!(f, "cannot read {}: {error}", dir.display())
            }
        }
    }
}

/// Finds the plan when none is named: in `cwd`, then in each directory
/// above it up to the top of the git repository containing `cwd` (only
/// `cwd` outside a repository), the first directory that has a plan gives
/// it: its `plan.loop`, else its only `*.loop` file, or the directory
/// itself when that file is the `defaults.loop` of a REEL spec tree or of
/// the specs beside it.
///
/// Returns the plan's path relative to `cwd` (`plan.loop`,
/// `../../plan.loop`).
///
/// Errors: no directory searched has a plan; the nearest that has plans has
/// several `*.loop` files and no `plan.loop` (all are named); a directory
/// cannot be read.
pub fn find_plan(cwd: &Path) -> Result<PathBuf, DiscoverError> {
    let top = repository_top(cwd);
    let mut searched = Vec::new();
    let mut up = PathBuf::new();
    let mut dir = cwd.to_path_buf();
    loop {
        searched.push(dir.clone());
        if dir.join(PLAN_FILE).is_file() {
            return Ok(up.join(PLAN_FILE));
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| DiscoverError::Read {
            dir: dir.clone(),
            error: e.to_string(),
        })?;
        let mut plans: Vec<String> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "loop"))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        plans.sort();
        match plans.len() {
            0 => {}
            // A REEL defaults plan is not a plan of its own: the spec tree,
            // or the directory of specs beside it, is (with those defaults).
            1 if crate::compile::is_reel_defaults(&dir.join(&plans[0])) => {
                return Ok(if up.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    up
                });
            }
            1 => return Ok(up.join(&plans[0])),
            _ => return Err(DiscoverError::Several { dir: up, plans }),
        }
        let at_top = top.as_deref().is_none_or(|t| t == dir);
        match dir.parent() {
            Some(parent) if !at_top => {
                dir = parent.to_path_buf();
                up.push("..");
            }
            _ => return Err(DiscoverError::NotFound { searched }),
        }
    }
}

/// The plan a directory named as the plan stands for, when it holds no
/// REEL spec (a spec directory, or a tree, is a plan itself): its
/// `plan.loop`, else its only `*.loop` file, as [`find_plan`] finds one
/// there (without looking above it). `None` when `dir` is a spec directory
/// or tree, holds no `.loop` file or several and no `plan.loop`, or cannot
/// be read: compiling the directory then says which.
pub fn plan_in(dir: &Path) -> Option<PathBuf> {
    if crate::reel::is_spec_tree(dir) || crate::reel::spec_files(dir).is_ok_and(|f| !f.is_empty()) {
        return None;
    }
    if dir.join(PLAN_FILE).is_file() {
        return Some(dir.join(PLAN_FILE));
    }
    let mut plans = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "loop"));
    match (plans.next(), plans.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The top directory of the git repository (or worktree) containing `dir`:
/// the nearest directory at or above it with a `.git` entry.
fn repository_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn nearest_directory_wins_up_to_the_repository_top() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        touch(&repo.join("plan.loop"));
        let deep = repo.join("src/a");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find_plan(&deep), Ok(PathBuf::from("../../plan.loop")));
        assert_eq!(find_plan(&repo), Ok(PathBuf::from("plan.loop")));
        touch(&repo.join("src/only.loop"));
        assert_eq!(find_plan(&deep), Ok(PathBuf::from("../only.loop")));
        touch(&repo.join("src/other.loop"));
        let err = find_plan(&deep).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no plan given, and 2 plans in ..: only.loop, other.loop; name one (e.g. `../only.loop`)"
        );
    }

    #[test]
    fn inside_a_spec_tree_the_tree_is_the_plan() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        touch(&repo.join("specs/defaults.loop"));
        touch(&repo.join("specs/inflight/auth.md"));
        assert_eq!(find_plan(&repo.join("specs")), Ok(PathBuf::from(".")));
        assert_eq!(
            find_plan(&repo.join("specs/inflight")),
            Ok(PathBuf::from(".."))
        );
        // Without stage directories or specs beside it a `defaults.loop`
        // is a plan like any.
        touch(&repo.join("other/defaults.loop"));
        assert_eq!(
            find_plan(&repo.join("other")),
            Ok(PathBuf::from("defaults.loop"))
        );
        // Beside specs it is theirs: the directory is the plan.
        touch(&repo.join("flat/defaults.loop"));
        touch(&repo.join("flat/auth.md"));
        assert_eq!(find_plan(&repo.join("flat")), Ok(PathBuf::from(".")));
    }

    #[test]
    fn outside_a_repository_only_the_directory_itself() {
        let tmp = tempfile::tempdir().unwrap();
        touch(&tmp.path().join("plan.loop"));
        let sub = tmp.path().join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        // No `.git` above (unless the temporary directory is in a
        // repository, which a test machine's is not).
        if repository_top(&sub).is_none() {
            assert!(matches!(
                find_plan(&sub),
                Err(DiscoverError::NotFound { .. })
            ));
        }
        assert_eq!(find_plan(tmp.path()), Ok(PathBuf::from("plan.loop")));
    }
}
