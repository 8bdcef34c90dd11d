//! The repository lock `.loopc/lock`: an advisory exclusive lock (fs4) held
//! for the whole run, so a second `loopc run` on the repository is refused.
//! The kernel releases it when the process dies, so a lock left by a killed
//! run never blocks the next one. Read-only commands do not take it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct RepoLock {
    _file: File,
}

/// Takes the lock at `path`, recording this process's id in it.
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
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another loopc run".to_string()
            } else {
                format!("another loopc run (pid {holder})")
            };
            return Err(format!(
                "{who} holds the lock {} on this repository; wait for it to finish",
                path.display()
            ));
        }
        Err(fs4::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(RepoLock { _file: file })
}
