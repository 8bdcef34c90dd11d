//! `loopc logs TASK [--attempt N] [--follow]`: one attempt's log directory
//! (`.loopc/logs/<task>/<attempt>/`), file by file; with `--follow`, then
//! what the running attempt's output logs gain until the attempt ends. It
//! takes no lock. The command line is `src/cli/logs.rs`.

use super::store::layout::Layout;
use super::sys::git::Git;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `loopc logs` is asked for.
#[derive(Debug, Clone)]
pub struct LogsRequest {
    /// The task.
    pub task: String,
    /// The attempt number; `None`: the task's last try.
    pub attempt: Option<u32>,
    /// Keep printing what the output logs gain while the attempt runs.
    pub follow: bool,
}

/// The files printed first, in this order; the rest follow by name.
const ORDER: &[&str] = &[
    "prompt.md",
    "feedback.md",
    "progress.md",
    "setup.log",
    "agent.stdout",
    "agent.stderr",
    "command.log",
    "handoff.json",
    "diff.patch",
];

/// The output logs `--follow` keeps reading.
const LIVE: &[&str] = &["setup.log", "agent.stdout", "agent.stderr", "command.log"];

/// The log directory of `task`'s attempt `attempt` (its last try, when
/// infrastructure failures retried it), else of the task's last try.
fn directory(layout: &Layout, task: &str, attempt: Option<u32>) -> Result<PathBuf, String> {
    let dir = layout.logs.join(task);
    if !dir.is_dir() {
        return Err(format!(
            "no logs of task `{task}` in this run ({} does not exist)",
            dir.display()
        ));
    }
    // Directory names: `<n>` and `<n>.retry-<k>`.
    let mut tries: Vec<(u32, u32, PathBuf)> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (n, k) = match name.split_once(".retry-") {
                Some((n, k)) => (n.parse().ok()?, k.parse().ok()?),
                None => (name.parse().ok()?, 1),
            };
            Some((n, k, e.path()))
        })
        .collect();
    tries.sort();
    let chosen = match attempt {
        Some(n) => tries.into_iter().rfind(|t| t.0 == n),
        None => tries.pop(),
    };
    chosen.map(|t| t.2).ok_or_else(|| match attempt {
        Some(n) => format!("task `{task}` has no attempt {n} in this run's logs"),
        None => format!("task `{task}` has no attempt in this run's logs"),
    })
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|n| {
        (
            ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()),
            n.clone(),
        )
    });
    names.into_iter().map(|n| dir.join(n)).collect()
}

/// Copies the file at `path` from byte `from` to `out`; returns where it
/// ended.
fn copy_from(path: &Path, from: u64, out: &mut dyn Write) -> std::io::Result<u64> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Ok(from);
    };
    f.seek(SeekFrom::Start(from))?;
    let n = std::io::copy(&mut (&mut f).take(u64::MAX), out)?;
    Ok(from + n)
}

/// Whether `task` has an attempt running now (state.json says so and a
/// live loopc holds the lock).
fn running(layout: &Layout, task: &str) -> bool {
    super::sys::lock::holder_alive(&layout.lock)
        && super::store::state::load(&layout.state).is_ok_and(|s| {
            s.tasks
                .iter()
                .any(|t| t.name == task && t.status == crate::state::TaskStatus::Running)
        })
}

/// `loopc logs`: writes the attempt's files to `out` (the repository is
/// the one holding `cwd`). A write that fails (a closed stdout) ends it
/// quietly.
///
/// Errors: not in a git repository, or no such logs (the message says which).
pub fn logs(cwd: &Path, req: &LogsRequest, out: &mut dyn Write) -> Result<(), String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::new(&git.root);
    let dir = directory(&layout, &req.task, req.attempt)?;
    let mut ends = Vec::new();
    for f in files_of(&dir) {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        if writeln!(out, "==> {} <==", f.display()).is_err() {
            return Ok(());
        }
        match copy_from(&f, 0, out) {
            Ok(end) => ends.push((name, end)),
            Err(_) => return Ok(()),
        }
        let _ = writeln!(out);
    }
    if req.follow {
        // New bytes of the output logs, until the attempt ends.
        loop {
            let live = running(&layout, &req.task);
            for name in LIVE {
                let path = dir.join(name);
                let at = ends.iter().position(|(n, _)| n == name);
                let from = at.map_or(0, |i| ends[i].1);
                match copy_from(&path, from, out) {
                    Ok(end) if end > from => match at {
                        Some(i) => ends[i].1 = end,
                        None => ends.push((name.to_string(), end)),
                    },
                    Ok(_) => {}
                    Err(_) => return Ok(()),
                }
            }
            if out.flush().is_err() || !live {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let _ = out.flush();
    Ok(())
}
