//! The repository lock `.loopc/lock`: an advisory exclusive lock (fs4) held
//! for the whole run, so a second `loopc run` on the repository is refused.
//! The kernel releases it when the process dies, so a lock left by a killed
//! run never blocks the next one (whatever the file still says). Read-only
//! commands do not take it. The file holds `pid N` and `started TIME` lines
//! naming the holder, for the message a second run is refused with.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

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

/// "another loopc run (pid N, started T)", as far as the lock file says.
fn describe_holder(text: &str) -> String {
    let started = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("started "))
        .map(str::trim);
    match (holder_pid(text), started) {
        (Some(pid), Some(at)) => format!("another loopc run (pid {pid}, started {at})"),
        (Some(pid), None) => format!("another loopc run (pid {pid})"),
        _ => "another loopc run".to_string(),
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
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A killed loopc whose parent has not reaped it yet is a zombie: it
    // still exists but holds no lock and does no work (Linux: `/proc`).
    exists && !is_zombie(pid)
}

/// Whether process `pid` is a zombie, from `/proc/<pid>/stat` (field 3);
/// false when that cannot be read.
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // `pid (comm) state …`; comm may contain spaces and parens.
            let rest = stat.rsplit_once(')')?.1.to_string();
            rest.split_whitespace().next().map(|s| s == "Z")
        })
        .unwrap_or(false)
}

/// Takes the lock at `path`, recording this process's id and start time in it.
///
/// Errors: another run holds it (the message names its pid) or the file
/// cannot be opened.
pub fn acquire(path: &Path) -> Result<RepoLock, String> {
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
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(format!(
                "{} holds the lock {} on this repository; wait for it to finish, or stop it \
                 (Ctrl-C or `kill {}`) and run again",
                describe_holder(&holder),
                path.display(),
                holder_pid(&holder).unwrap_or_else(|| "PID".into())
            ));
        }
        Err(fs4::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(
        file,
        "pid {}\nstarted {}\n",
        std::process::id(),
        crate::run::time::now_rfc3339()
    );
    let _ = file.flush();
    Ok(RepoLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_is_described_from_the_file() {
        assert_eq!(
            describe_holder("pid 42\nstarted 2026-01-01T00:00:00Z\n"),
            "another loopc run (pid 42, started 2026-01-01T00:00:00Z)"
        );
        assert_eq!(describe_holder("42"), "another loopc run (pid 42)");
        assert_eq!(describe_holder(""), "another loopc run");
        assert_eq!(describe_holder("pid x"), "another loopc run");
    }

    #[test]
    fn a_second_lock_is_refused_and_a_dropped_one_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let held = acquire(&path).unwrap();
        let err = acquire(&path).unwrap_err();
        assert!(
            err.contains(&format!("pid {}, started ", std::process::id())),
            "{err}"
        );
        drop(held);
        assert!(acquire(&path).is_ok());
    }
}
