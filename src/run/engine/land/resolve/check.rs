//! What a resolution must be to be merged: no conflict markers left, the
//! task's change kept, no file both sides changed deleted unless the
//! handoff lists it, no file outside the conflict changed unless the
//! handoff lists it, and the handoff's list itself inside the worktree.

use super::{Refusal, Side, Stop};
use crate::run::engine::context::Io;
use crate::run::engine::outcome::stopping;
use crate::run::sys::checkout::Checkout;
use std::path::{Component, Path};

/// Which sides of the merge have a conflicted path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Presence {
    /// The integration branch head has it.
    pub head: bool,
    /// The task's commit has it.
    pub task: bool,
}

impl Presence {
    /// Both sides have it: both changed it (a content conflict, or both
    /// added it). Deleting it drops both changes.
    pub fn both(self) -> bool {
        self.head && self.task
    }
}

/// Which sides have each of `side.conflicts`, in order.
///
/// Errors: git fails.
pub(super) fn presence(io: Io<'_>, side: &Side<'_>) -> Result<Vec<Presence>, String> {
    let has = |rev: &str, path: &str| -> Result<bool, String> {
        let spec = format!("{rev}:{path}");
        let out = io
            .git
            .try_run_in(&io.git.root, &["cat-file", "-e", &spec])?;
        Ok(out.code == 0)
    };
    side.conflicts
        .iter()
        .map(|p| {
            Ok(Presence {
                head: has(side.head, p)?,
                task: has(side.commit, p)?,
            })
        })
        .collect()
}

/// Refuses a handoff's `extra_files` entry that is absolute or leaves the
/// worktree (`../x`, `a/../../x`): one reason naming every such entry.
pub(super) fn check_extra_files(extra_files: &[String]) -> Result<(), Refusal> {
    let bad: Vec<&str> = extra_files
        .iter()
        .map(String::as_str)
        .filter(|p| !inside(p))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let reason = format!(
        "its handoff's \"extra_files\" names paths that are not inside the worktree: {} \
         (each must be relative to the repository root and stay inside it)",
        bad.join(", ")
    );
    Err(Refusal::new(reason, String::new()))
}

/// Whether `path` is relative and, read lexically, stays inside the
/// directory it is relative to.
fn inside(path: &str) -> bool {
    if path.trim().is_empty() {
        return false;
    }
    let mut depth = 0usize;
    for c in Path::new(path).components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// `path` with `./` and a trailing `/` left out, as the handoff may write it.
fn plain(path: &str) -> &str {
    path.trim_start_matches("./").trim_end_matches('/')
}

/// Refuses a resolution that leaves markers, deletes a file both sides
/// changed without listing it in `extra_files`, drops the task's change or
/// changes unlisted files outside the conflict; writes what the resolver
/// changed to `resolution.patch` in `dir`. `sides` are the conflicts'
/// [`Presence`], in order.
pub(super) fn check_resolution(
    io: Io<'_>,
    co: &Checkout,
    side: &Side<'_>,
    sides: &[Presence],
    tree: &str,
    extra_files: &[String],
    dir: &Path,
) -> Result<(), Stop> {
    let left: Vec<String> = side
        .conflicts
        .iter()
        .filter_map(|p| {
            let bytes = std::fs::read(co.dir.join(p)).ok()?;
            marker_line(&bytes).map(|n| format!("{p}:{n}"))
        })
        .collect();
    if !left.is_empty() {
        return Err(Refusal::new(
            format!(
                "its resolution leaves conflict markers ({})",
                left.join(", ")
            ),
            String::new(),
        )
        .into());
    }
    let listed = |p: &str| extra_files.iter().any(|x| plain(x) == p);
    // A file both sides changed, deleted: both changes are lost. Only on
    // purpose (listed), never by accident.
    let deleted: Vec<&str> = side
        .conflicts
        .iter()
        .zip(sides)
        .filter(|(p, s)| {
            s.both() && std::fs::symlink_metadata(co.dir.join(p)).is_err() && !listed(p)
        })
        .map(|(p, _)| p.as_str())
        .collect();
    if !deleted.is_empty() {
        return Err(Refusal::new(
            format!(
                "its resolution deletes {}, which both sides changed (that drops both \
                 changes; a deletion on purpose is listed in the handoff's \"extra_files\")",
                deleted.join(", ")
            ),
            String::new(),
        )
        .into());
    }
    let git_err = |e: String| -> Stop {
        if stopping(io.control) {
            Stop::Stopped
        } else {
            Refusal::new(format!("loopc could not compare its resolution: {e}"), e).into()
        }
    };
    if io.git.tree_of(side.head).map_err(git_err)? == tree {
        return Err(Refusal::new(
            "its resolution drops the task's change (the result is the integration branch head)",
            String::new(),
        )
        .into());
    }
    // What the merge left before the resolver ran (conflicted files with
    // their markers), against what it left after.
    let before = io
        .git
        .merge_tree_with_markers(side.head, side.commit)
        .map_err(git_err)?;
    let _ = io
        .git
        .diff_to_file(&before, tree, &dir.join("resolution.patch"));
    let changed = io.git.changes(&before, tree).map_err(git_err)?.paths;
    let outside: Vec<&str> = changed
        .iter()
        .filter(|p| !side.conflicts.contains(p) && !listed(p))
        .map(String::as_str)
        .collect();
    if !outside.is_empty() {
        return Err(Refusal::new(
            format!(
                "its resolution changes files outside the conflict that its handoff does not \
                 list in \"extra_files\": {}",
                outside.join(", ")
            ),
            String::new(),
        )
        .into());
    }
    Ok(())
}

/// The 1-based number of the first line of `bytes` that is a conflict
/// marker (`<<<<<<<`, `|||||||` or `>>>>>>>`, alone or followed by a
/// space); `None` when there is none. `=======` alone is not counted: it
/// is also a Markdown heading's underline.
pub fn marker_line(bytes: &[u8]) -> Option<usize> {
    bytes
        .split(|&b| b == b'\n')
        .position(|line| {
            [b"<<<<<<<", b"|||||||", b">>>>>>>"].iter().any(|m| {
                line.starts_with(*m) && matches!(line.get(7), None | Some(b' ' | b'\r' | b'\t'))
            })
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_by_line() {
        assert_eq!(marker_line(b"a\n<<<<<<< HEAD\nb\n"), Some(2));
        assert_eq!(marker_line(b"a\n>>>>>>>\n"), Some(2));
        assert_eq!(marker_line(b"||||||| base\r\n"), Some(1));
        assert_eq!(marker_line(b"Title\n=======\n"), None);
        assert_eq!(marker_line(b"<<<<<<<<<< not one\n"), None);
        assert_eq!(marker_line(b"clean\n"), None);
    }

    #[test]
    fn extra_files_stay_inside_the_worktree() {
        for ok in ["a.txt", "./docs/x.md", "docs/", "a/../b.txt"] {
            assert!(inside(ok), "{ok}");
        }
        for bad in ["../escaped.txt", "/etc/passwd", "a/../../x", "", "./.."] {
            assert!(!inside(bad), "{bad}");
        }
        let r = check_extra_files(&["ok.txt".into(), "../e.txt".into(), "/etc/passwd".into()])
            .unwrap_err();
        assert!(r.reason.ends_with(
            "inside the worktree: ../e.txt, /etc/passwd (each must be relative to the \
             repository root and stay inside it)"
        ));
    }
}
