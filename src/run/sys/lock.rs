//! The locks: `.loopc/lock` for the checkout and `loopc-lock` in the common
//! git directory for the repository (linked worktrees share its refs, so
//! two runs from two checkouts would interfere). Advisory exclusive locks
//! (fs4) held for the whole run or `loopc clean`, so a second one is refused.
//! The kernel releases it when the process dies, so a lock left by a killed
//! run never blocks the next one (whatever the file still says). Read-only
//! commands do not take it. The file holds `pid N` and `started TIME` lines
//! naming the holder, for the message a second run is refused with.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The repository-wide lock file: `loopc-lock` in the common git directory,
/// shared by every checkout (linked worktree) of the repository.
pub fn repository_lock(git: &super::git::Git) -> std::path::PathBuf {
    git.common_dir.join("loopc-lock")
}

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct RepoLock {
    _file: File,
}

/// The holder's pid, from the lock file's `pid N` line (or a bare number,
/// as older versions wrote).
fn holder_pid(text: &str) -> Option<String> {
    let first = text.lines().next()?.trim();
    let pid = first.strip_prefix("pid ").unwrap_or(first).trim();
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| pid.to_string())
}

/// The value of the lock file's `key VALUE` line.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key)?.strip_prefix(' '))
        .map(str::trim)
}

/// "another loopc run (pid N, started T)", as far as the lock file says
/// (`a loopc clean …` when `loopc clean` holds it; the checkout it runs in
/// when that is not `here`).
fn describe_holder(text: &str, here: Option<&Path>) -> String {
    let who = match field(text, "command") {
        Some("clean") => "a loopc clean",
        _ => "another loopc run",
    };
    let mut facts = Vec::new();
    if let Some(pid) = holder_pid(text) {
        facts.push(format!("pid {pid}"));
    }
    if let Some(at) = field(text, "started") {
        facts.push(format!("started {at}"));
    }
    if let Some(c) = field(text, "checkout")
        && here.is_none_or(|h| Path::new(c) != h)
    {
        facts.push(format!("in {c}"));
    }
    if facts.is_empty() {
        who.to_string()
    } else {
        format!("{who} ({})", facts.join(", "))
    }
}

/// Whether the process the lock file at `path` names is alive (a hint for
/// `loopc status`, which takes no lock: a state that says `running` with
/// no live holder was left by a killed loopc). False when the file names
/// no process.
pub fn holder_alive(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let Some(pid) = holder_pid(&text).and_then(|p| p.parse::<i32>().ok()) else {
        return false;
    };
    // A killed loopc whose parent has not reaped it yet is a zombie: it
    // still exists but holds no lock and does no work.
    crate::pid::alive(pid)
}

/// Takes the lock at `path` for `command` (`run`, `clean`) started in the
/// checkout `checkout`, recording this process's id, start time, command
/// and checkout in it.
///
/// Errors: another run holds it (the message names its pid) or the file
/// cannot be opened.
pub fn acquire(path: &Path, command: &str, checkout: &Path) -> Result<RepoLock, String> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => {}
        Err(fs4::TryLockError::WouldBlock) => {
            return Err(held(&mut file, path, checkout));
        }
        Err(fs4::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(
        file,
        "pid {}\nstarted {}\ncommand {command}\ncheckout {}\n",
        std::process::id(),
        crate::run::time::now_rfc3339(),
        checkout.display()
    );
    let _ = file.flush();
    Ok(RepoLock { _file: file })
}

/// The message refusing a run because the lock at `path` (open as
/// `file`) is held by the process its file names.
fn held(file: &mut std::fs::File, path: &Path, checkout: &Path) -> String {
    let mut holder = String::new();
    let _ = file.read_to_string(&mut holder);
    let stop = match holder_pid(&holder) {
        Some(pid) => format!("stop it (Ctrl-C or `kill {pid}`)"),
        None => "stop it".to_string(),
    };
    format!(
        "{} holds the lock {} on this repository; wait for it to finish, or {stop} and run \
         again",
        describe_holder(&holder, Some(checkout)),
        path.display(),
    )
}

/// Checks, without taking it or writing anything, that no other loopc run
/// or clean holds the lock at `path` (for `run --dry-run`, which refuses
/// what `run` would refuse). A missing file is free.
///
/// Errors: the lock is held (the message is [`acquire`]'s) or the file
/// cannot be opened.
pub fn check_free(path: &Path, checkout: &Path) -> Result<(), String> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
    };
    match fs4::FileExt::try_lock_shared(&file) {
        Ok(()) => Ok(()),
        Err(fs4::TryLockError::WouldBlock) => Err(held(&mut file, path, checkout)),
        Err(fs4::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_is_described_from_the_file() {
        assert_eq!(
            describe_holder("pid 42\nstarted 2026-01-01T00:00:00Z\n", None),
            "another loopc run (pid 42, started 2026-01-01T00:00:00Z)"
        );
        assert_eq!(describe_holder("42", None), "another loopc run (pid 42)");
        assert_eq!(describe_holder("", None), "another loopc run");
        assert_eq!(describe_holder("pid x", None), "another loopc run");
        let clean = "pid 7\nstarted T\ncommand clean\ncheckout /a\n";
        assert_eq!(
            describe_holder(clean, Some(Path::new("/a"))),
            "a loopc clean (pid 7, started T)"
        );
        assert_eq!(
            describe_holder(clean, Some(Path::new("/b"))),
            "a loopc clean (pid 7, started T, in /a)"
        );
    }

    #[test]
    fn a_second_lock_is_refused_and_a_dropped_one_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let held = acquire(&path, "run", dir.path()).unwrap();
        let err = acquire(&path, "run", dir.path()).unwrap_err();
        assert!(
            err.contains(&format!("pid {}, started ", std::process::id())),
            "{err}"
        );
        drop(held);
        assert!(acquire(&path, "run", dir.path()).is_ok());
    }
}
