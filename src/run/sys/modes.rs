//! File modes in loopc's worktrees, whatever an agent or its tools left:
//! removing a tree that holds read-only directories (Go's module cache is
//! 0555, its files 0444), and giving a reused worktree the modes and owner
//! a fresh checkout has (an agent that made a tracked file read-only must
//! not make the next attempt in that worktree fail "Permission denied").
//!
//! Unlinking an entry takes write and search permission on its directory,
//! not on the entry; so only directories need opening up. Symbolic links
//! are never followed, and nothing outside the tree is touched.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The owner's read, write and search bits.
const OWNER_ALL: u32 = 0o700;

/// `S_ISGID`: on a directory, new entries take its group (and new
/// directories the bit itself).
const SET_GID: u32 = 0o2000;

/// The process's file mode creation mask, read once from
/// `/proc/self/status` (Linux; elsewhere, or unreadable, the usual 022).
/// Read, not set: `umask(2)` can only be read by setting it, which would
/// race the run's other threads creating files.
fn umask() -> u32 {
    static MASK: OnceLock<u32> = OnceLock::new();
    *MASK.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
            })
            .unwrap_or(0o022)
    })
}

/// Every directory under `root` (itself included), depth first, each
/// given `fix` before it is read; entries that cannot be read are skipped.
fn walk_dirs(root: &Path, mut fix: impl FnMut(&Path, &std::fs::Metadata)) {
    let mut todo: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        fix(&dir, &meta);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            }
        }
    }
}

/// Gives every directory under `root` (itself included) that lacks them
/// its owner's read, write and search permission, so that what is in it
/// can be removed. A directory of another user is left as it is (its
/// removal then fails, naming it).
pub fn open_up(root: &Path) {
    walk_dirs(root, |dir, meta| {
        let mode = meta.permissions().mode();
        if mode & OWNER_ALL != OWNER_ALL {
            let _ =
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | OWNER_ALL));
        }
    });
}

/// Removes the directory tree at `path` whatever modes it holds: at once
/// when it can be, else after [`open_up`].
///
/// Errors: what removing it failed with (a missing `path` included).
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            open_up(path);
            std::fs::remove_dir_all(path)
        }
        done => done,
    }
}

/// The mode and owner a fresh checkout gives what it writes under a
/// worktree directory made in `parent`.
struct Fresh {
    /// A directory's mode.
    dir: u32,
    /// A file's mode.
    file: u32,
    /// An executable file's mode.
    exec: u32,
    /// The owner: this process's effective user.
    uid: u32,
    /// The group: `parent`'s when it has `S_ISGID`, else the process's.
    gid: u32,
}

impl Fresh {
    fn of(parent: &Path) -> Fresh {
        let mask = umask();
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        let (uid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let inherit = std::fs::metadata(parent)
            .ok()
            .filter(|m| m.permissions().mode() & SET_GID != 0);
        Fresh {
            dir: (0o777 & !mask) | inherit.as_ref().map_or(0, |_| SET_GID),
            file: 0o666 & !mask,
            exec: 0o777 & !mask,
            uid,
            gid: inherit.map_or(egid, |m| m.gid()),
        }
    }
}

/// Gives every entry of the worktree at `root` (itself included) the mode
/// and group a fresh checkout would give it, keeping a file's executable
/// bit (git's own; `git checkout -f` restores it where it differs from
/// the commit's): directories `0777`, files `0666` or `0777`, less the
/// umask. Symbolic links are left as they are. Run before a reused
/// worktree is checked out and cleaned, it also lets both remove what
/// read-only directories hold.
///
/// Errors: an entry owned by another user, or whose mode or group cannot
/// be set (the worktree is then not reused: a fresh one is made).
pub fn as_fresh(root: &Path) -> Result<(), String> {
    let fresh = Fresh::of(root.parent().unwrap_or(root));
    let mut todo: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if meta.uid() != fresh.uid {
            return Err(format!(
                "{} is owned by another user (uid {})",
                path.display(),
                meta.uid()
            ));
        }
        if meta.file_type().is_symlink() {
            continue;
        }
        if meta.gid() != fresh.gid {
            std::os::unix::fs::lchown(&path, None, Some(fresh.gid))
                .map_err(|e| format!("cannot change the group of {}: {e}", path.display()))?;
        }
        let mode = meta.permissions().mode() & 0o7777;
        let want = if meta.is_dir() {
            fresh.dir
        } else if mode & 0o100 != 0 {
            fresh.exec
        } else {
            fresh.file
        };
        if mode != want {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(want))
                .map_err(|e| format!("cannot change the mode of {}: {e}", path.display()))?;
        }
        if meta.is_dir() {
            let entries = std::fs::read_dir(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            todo.extend(entries.filter_map(Result::ok).map(|e| e.path()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_directories_are_removed_and_modes_made_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("wt");
        let deep = tree.join("pkg/mod/x@v1");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("go.mod"), "module x\n").unwrap();
        std::fs::write(tree.join("run.sh"), "echo\n").unwrap();
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        set(&deep.join("go.mod"), 0o444);
        set(&tree.join("run.sh"), 0o500);
        for d in [&deep, &tree.join("pkg/mod"), &tree.join("pkg")] {
            set(d, 0o555);
        }
        as_fresh(&tree).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let mask = umask();
        assert_eq!(mode(&deep), 0o777 & !mask);
        assert_eq!(mode(&deep.join("go.mod")), 0o666 & !mask);
        assert_eq!(mode(&tree.join("run.sh")), 0o777 & !mask);
        set(&tree.join("pkg"), 0o555);
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
    }
}
