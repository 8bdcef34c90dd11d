//! Reading and writing `.loopc/state.json` (its document is [`crate::state`]):
//! rewritten atomically (temporary file + rename) after every change; read
//! strictly, with a message that says what to do when it cannot be used.

use crate::state::{RunState, STATE_VERSION};
use std::io::Write;
use std::path::Path;

/// Writes `state` to `path` atomically.
///
/// Errors: the directory is not writable.
pub fn save(path: &Path, state: &RunState) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    // Streamed to the file: the document grows with the plan, and held
    // whole in memory it was the largest allocation of a large run.
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut f, state)?;
        f.write_all(b"\n")?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        // A full disk leaves half a temporary file: not kept beside the
        // last state that was written whole.
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Checks that `state` can be written at `path` (its temporary file can
/// be created there), before a run changes anything.
///
/// Errors: it cannot; the message names the path.
pub fn probe(path: &Path) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    std::fs::File::create(&tmp)
        .and_then(|_| std::fs::remove_file(&tmp))
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
}

/// Reads the state file at `path`.
///
/// Errors: missing, unreadable, truncated or not valid JSON, or another
/// format version; the message says what to do.
pub fn load(path: &Path) -> Result<RunState, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no run recorded here ({} does not exist); start one with `loopc run`",
                path.display()
            ));
        }
        // `.loopc` is a file: say so (the OS says "Not a directory" of the
        // path under it).
        Err(_) if path.parent().is_some_and(|d| d.exists() && !d.is_dir()) => {
            let dir = path.parent().unwrap_or(path);
            return Err(format!(
                "{} is not a directory; loopc keeps its state there: move it away and run \
                 `loopc run` again",
                dir.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let damaged = |e: &dyn std::fmt::Display| {
        format!(
            "{} is truncated or corrupt ({e}); remove it and run `loopc run` again \
             (passed tasks are kept in the cache and replayed, not run again)",
            path.display()
        )
    };
    // The version first, skipping the rest (no tree of the whole document
    // is built: it grows with the plan, some 400 bytes a task).
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: Option<serde_json::Value>,
    }
    let versioned: Versioned = serde_json::from_slice(&bytes).map_err(|e| damaged(&e))?;
    let version = versioned.version.as_ref().and_then(|v| v.as_u64());
    match version {
        Some(v) if (1..=u64::from(STATE_VERSION)).contains(&v) => {}
        Some(v) if v > u64::from(STATE_VERSION) => {
            return Err(format!(
                "{} was written by a newer loopc (state format version {v}; this loopc reads \
                 version {STATE_VERSION}); use that loopc, or remove the file to go on with this \
                 one (passed tasks are kept in the cache)",
                path.display()
            ));
        }
        Some(v) => {
            return Err(format!(
                "{} has state format version {v}, which this loopc (version {STATE_VERSION}) \
                 does not read; remove it and run `loopc run` again (passed tasks are kept in \
                 the cache)",
                path.display()
            ));
        }
        None => return Err(damaged(&"no format version")),
    }
    serde_json::from_slice(&bytes).map_err(|e| damaged(&e))
}
