//! Reading and writing `.loopc/state.json` (its document is [`crate::state`]):
//! rewritten atomically (temporary file + rename) after every change; read
//! strictly, with a message that says what to do when it cannot be used.

use crate::state::{RunState, STATE_VERSION, TaskState};
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
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))
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
    let bytes = read_checked(path)?;
    serde_json::from_slice(&bytes).map_err(|e| damaged(path, &e))
}

/// The part of the state file at `path` that the next run reads: all but
/// its tasks, and of those only the ones that were waiting for a limit or
/// remember failures (what carries into the next run, `--retry-failed`
/// and the dry run's memory), usually few. The others are parsed one at a
/// time and dropped: the whole list is as large as the plan (some 900
/// bytes a task in memory).
///
/// Errors: as [`load`]'s.
pub fn load_carried(path: &Path) -> Result<RunState, String> {
    let bytes = read_checked(path)?;
    let split: Split = serde_json::from_slice(&bytes).map_err(|e| damaged(path, &e))?;
    let mut rest = split.rest;
    let tasks = serde_json::to_value(&split.tasks).map_err(|e| damaged(path, &e))?;
    rest.insert("tasks".to_string(), tasks);
    serde_json::from_value(serde_json::Value::Object(rest)).map_err(|e| damaged(path, &e))
}

/// The state file's document with its tasks apart, only the carried ones
/// kept ([`load_carried`]).
#[derive(serde::Deserialize)]
struct Split {
    #[serde(deserialize_with = "carried_tasks")]
    tasks: Vec<TaskState>,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// Reads a list of tasks, keeping those a next run carries.
fn carried_tasks<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<TaskState>, D::Error> {
    struct Keep;
    impl<'de> serde::de::Visitor<'de> for Keep {
        type Value = Vec<TaskState>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of tasks")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut kept = Vec::new();
            while let Some(t) = seq.next_element::<TaskState>()? {
                if t.remembered.is_some() || t.waiting_until.is_some() {
                    kept.push(t);
                }
            }
            Ok(kept)
        }
    }
    d.deserialize_seq(Keep)
}

/// Says how the state file at `path` is damaged, and what to do.
fn damaged(path: &Path, e: &dyn std::fmt::Display) -> String {
    format!(
        "{} is truncated or corrupt ({e}); remove it and run `loopc run` again \
         (passed tasks are kept in the cache and replayed, not run again)",
        path.display()
    )
}

/// The bytes of the state file at `path`, once its format version is one
/// this loopc reads.
///
/// Errors: as [`load`]'s.
fn read_checked(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no run recorded here ({} does not exist); start one with `loopc run`",
                path.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    // The version first, skipping the rest (no tree of the whole document
    // is built: it grows with the plan, some 400 bytes a task).
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: Option<serde_json::Value>,
    }
    let versioned: Versioned = serde_json::from_slice(&bytes).map_err(|e| damaged(path, &e))?;
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
        None => return Err(damaged(path, &"no format version")),
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Remembered;

    #[test]
    fn the_next_run_carries_all_but_the_tasks_it_does_not_read() {
        let compiled = crate::compile(
            "test.loop",
            "task a { run = \"true\" }\ntask b { run = \"true\" }\ntask c { run = \"true\" }\n",
        );
        let plan = compiled.plan.expect("the test plan compiles");
        let mut state = crate::run::engine::scheduler::transition::initial(
            &plan,
            "test.loop",
            "base",
            "t0".into(),
        );
        state.tasks[1].remembered = Some(Remembered {
            key: "k".into(),
            attempts: 2,
            feedback: Some("fix it".into()),
            reason: Some("failed".into()),
            branch: None,
        });
        state.tasks[2].waiting_until = Some("2026-12-04T00:00:00Z".into());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        save(&path, &state).unwrap();
        let carried = load_carried(&path).unwrap();
        let mut expected = load(&path).unwrap();
        assert_eq!(expected, state);
        expected.tasks.remove(0);
        assert_eq!(carried, expected);
        // A damaged file is refused as `load` refuses it.
        std::fs::write(&path, "{\"version\": 3, \"tasks\": [").unwrap();
        assert_eq!(
            load_carried(&path).unwrap_err().split(" (").next(),
            load(&path).unwrap_err().split(" (").next()
        );
    }
}
