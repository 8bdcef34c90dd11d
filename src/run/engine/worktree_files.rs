//! Worktree files (`loop.copy`, `loop.link`): files of the main checkout
//! that git does not track (`.env`, local configuration, `node_modules`)
//! brought into every new worktree, copied or symbolically linked.
//!
//! [`resolve`] matches the plan's globs once, before any attempt (a pattern
//! that matches nothing stops the run); [`place`] puts the matches into a
//! fresh worktree before `setup`. Copied files' contents are digested for
//! the cache key ([`WorktreeFiles::digests`]); linked ones are not (they
//! are shared, like a tool installed on the machine).

use crate::model::PathPattern;
use crate::plan::Plan;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// What the plan brings into every worktree, resolved in the main checkout.
#[derive(Debug, Clone, Default)]
pub struct WorktreeFiles {
    /// The main checkout's top level (`LOOP_REPO_ROOT`).
    pub root: PathBuf,
    /// Paths (relative to `root`) copied; a directory is copied whole.
    pub copy: Vec<String>,
    /// Paths (relative to `root`) linked.
    pub link: Vec<String>,
    /// Every copied file (directories walked) and the blake3 digest of its
    /// content (of its target, for a symbolic link), for the cache key.
    pub digests: BTreeMap<String, String>,
}

impl WorktreeFiles {
    /// Every path brought in, relative to a worktree's top level.
    pub fn paths(&self) -> Vec<String> {
        self.copy.iter().chain(&self.link).cloned().collect()
    }
}

/// A `copy` or `link` pattern that matches no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched {
    /// `copy` or `link`.
    pub field: &'static str,
    /// The pattern and where it is written.
    pub pattern: PathPattern,
}

impl Unmatched {
    /// One line saying so; `at` is where the pattern is written
    /// (`file:line:column`), if known.
    pub fn message(&self, root: &Path, at: Option<&str>) -> String {
        let at = at.map(|a| format!("{a}: ")).unwrap_or_default();
        format!(
            "{at}`loop.{}` names \"{}\", which matches no file in {}; every new worktree \
             needs it: create it there, or remove it from the plan; nothing was run",
            self.field,
            self.pattern.pattern,
            root.display()
        )
    }
}

/// Whether `pattern` has glob syntax (else it is one path).
fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// The paths under `root` that `pattern` matches, relative to `root`, in
/// order. A matching directory is one match (not walked); `.git` and
/// `.loopc` at the top level are never matched.
fn matches(root: &Path, pattern: &str) -> Result<Vec<String>, String> {
    let pattern = pattern.trim_end_matches('/');
    if !is_glob(pattern) {
        return Ok(match std::fs::symlink_metadata(root.join(pattern)) {
            Ok(_) => vec![pattern.to_string()],
            Err(_) => Vec::new(),
        });
    }
    let glob = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("glob `{pattern}`: {e}"))?
        .compile_matcher();
    // Walk only below the literal directories the pattern starts with.
    let prefix: Vec<&str> = pattern.split('/').take_while(|c| !is_glob(c)).collect();
    let start = prefix.join("/");
    let mut out = Vec::new();
    let mut stack = vec![start];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<(String, bool)> = entries
            .filter_map(Result::ok)
            .map(|e| {
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                (e.file_name().to_string_lossy().into_owned(), is_dir)
            })
            .collect();
        names.sort();
        for (name, is_dir) in names.into_iter().rev() {
            if rel.is_empty() && (name == ".git" || name == ".loopc") {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if glob.is_match(&path) {
                out.push(path);
            } else if is_dir {
                stack.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Every file under `path` (itself when it is not a directory), relative
/// to `root`, that git does not track.
fn files_under(root: &Path, path: &str, tracked: &HashSet<String>) -> Vec<String> {
    let full = root.join(path);
    let is_dir = std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return if tracked.contains(path) {
            Vec::new()
        } else {
            vec![path.to_string()]
        };
    }
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&full) else {
        return out;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        out.extend(files_under(root, &format!("{path}/{name}"), tracked));
    }
    out
}

/// The digest of the file (or symbolic link) at `path`.
fn digest(path: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = if meta.file_type().is_symlink() {
        std::fs::read_link(path)
            .map(|t| t.to_string_lossy().into_owned().into_bytes())
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
    };
    Ok(blake3::hash(&bytes).to_hex().to_string())
}

/// Matches the plan's `copy` and `link` globs in the main checkout `root`,
/// leaving out paths git tracks (`tracked`: every worktree has those), and
/// digests what is copied.
///
/// Errors: `Err(Ok(list))` names the patterns that match nothing;
/// `Err(Err(message))` a file that cannot be read.
#[allow(clippy::type_complexity)]
pub fn resolve(
    plan: &Plan,
    root: &Path,
    tracked: &HashSet<String>,
) -> Result<WorktreeFiles, Result<Vec<Unmatched>, String>> {
    let mut out = WorktreeFiles {
        root: root.to_path_buf(),
        ..WorktreeFiles::default()
    };
    let mut unmatched = Vec::new();
    let mut seen = BTreeSet::new();
    for (field, patterns) in [("copy", &plan.settings.copy), ("link", &plan.settings.link)] {
        for p in patterns {
            let found = matches(root, &p.pattern).map_err(Err)?;
            if found.is_empty() {
                unmatched.push(Unmatched {
                    field,
                    pattern: p.clone(),
                });
            }
            for path in found {
                if tracked.contains(&path) || !seen.insert(path.clone()) {
                    continue;
                }
                if field == "copy" {
                    for f in files_under(root, &path, tracked) {
                        let d = digest(&root.join(&f)).map_err(Err)?;
                        out.digests.insert(f, d);
                    }
                    out.copy.push(path);
                } else {
                    out.link.push(path);
                }
            }
        }
    }
    if unmatched.is_empty() {
        Ok(out)
    } else {
        Err(Ok(unmatched))
    }
}

/// The check `loopc run` (and `--dry-run`) makes before anything else:
/// every `copy` and `link` pattern matches a file in the main checkout of
/// the repository containing `top`; returns the paths they bring in
/// (relative to the top). Outside a repository there is nothing to check
/// here (the run says so itself).
///
/// Errors: one line per pattern that matches nothing, naming it and where
/// it is written (`file:line:column`), or why the files cannot be read.
pub fn check(
    plan: &Plan,
    compilation: &crate::Compilation,
    top: &Path,
) -> Result<Vec<String>, Vec<String>> {
    if plan.settings.copy.is_empty() && plan.settings.link.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(git) = crate::run::sys::git::Git::discover(top) else {
        return Ok(Vec::new());
    };
    let tracked = git.tracked_paths().map_err(|e| vec![e])?;
    match resolve(plan, &git.root, &tracked) {
        Ok(files) => Ok(files.paths()),
        Err(Err(e)) => Err(vec![e]),
        Err(Ok(unmatched)) => Err(unmatched
            .iter()
            .map(|u| {
                let at =
                    crate::run::engine::agent::programs::span_location(compilation, u.pattern.span);
                u.message(&git.root, at.as_deref())
            })
            .collect()),
    }
}

/// Copies `from` (a file, a symbolic link or a directory, walked) to `to`,
/// leaving alone what is there already (the files git checked out).
fn copy_into(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            copy_into(&e.path(), &to.join(e.file_name()))?;
        }
        return Ok(());
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

/// Brings `files` into the new worktree `worktree`: copies and symbolic
/// links to the main checkout's files; a path the worktree has already is
/// left as it is.
///
/// Errors: a message naming the path that could not be brought.
pub fn place(files: &WorktreeFiles, worktree: &Path) -> Result<(), String> {
    for path in &files.copy {
        copy_into(&files.root.join(path), &worktree.join(path))
            .map_err(|e| format!("cannot copy {path} into the worktree (loop.copy): {e}"))?;
    }
    for path in &files.link {
        let to = worktree.join(path);
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let made = to
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::os::unix::fs::symlink(files.root.join(path), &to));
        made.map_err(|e| format!("cannot link {path} into the worktree (loop.link): {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_below_their_literal_prefix_and_take_directories_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [".env", "config/a.local.toml", "config/b.toml", "nm/x/y.js"] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        std::fs::create_dir_all(root.join(".git")).unwrap();
        assert_eq!(matches(root, ".env").unwrap(), [".env"]);
        assert_eq!(
            matches(root, "config/*.local.toml").unwrap(),
            ["config/a.local.toml"]
        );
        assert_eq!(matches(root, "n*").unwrap(), ["nm"]);
        assert_eq!(matches(root, "nm/").unwrap(), ["nm"]);
        assert!(matches(root, ".g*").unwrap().is_empty());
        assert!(matches(root, "missing").unwrap().is_empty());
        let none = HashSet::new();
        assert_eq!(files_under(root, "nm", &none), ["nm/x/y.js"]);
    }
}
