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
    "fragment-check.log",
    "diff.patch",
];

/// The output logs `--follow` keeps reading.
const LIVE: &[&str] = &["setup.log", "agent.stdout", "agent.stderr", "command.log"];

/// The tries logged in `dir` (a task's directory of logs), sorted:
/// attempt number, retry, path. Directory names: `<n>` and `<n>.retry-<k>`.
fn tries_in(dir: &Path) -> Vec<(u32, u32, PathBuf)> {
    let mut tries: Vec<(u32, u32, PathBuf)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let (n, k) = match name.split_once(".retry-") {
                        Some((n, k)) => (n.parse().ok()?, k.parse().ok()?),
                        None => (name.parse().ok()?, 1),
                    };
                    Some((n, k, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    tries.sort();
    tries
}

/// Attempt `attempt` (its last try) of `tries`, else the last try.
fn pick(mut tries: Vec<(u32, u32, PathBuf)>, attempt: Option<u32>) -> Option<PathBuf> {
    match attempt {
        Some(n) => tries.into_iter().rfind(|t| t.0 == n).map(|t| t.2),
        None => tries.pop().map(|t| t.2),
    }
}

/// Where the logs shown were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// In this run's logs (`.loopc/logs/`).
    ThisRun,
    /// This run has none of them (e.g. the task was replayed from the
    /// cache): they are the latest earlier run's that has them, in this
    /// directory (`.loopc/earlier-logs/<k>/`).
    EarlierRun(PathBuf),
    /// The last run replayed the task from the cache: they are the logs
    /// of the earlier run whose attempt made the result it replayed (its
    /// state, kept with its logs, has the task passed under the same
    /// cache key), in this directory (`.loopc/earlier-logs/<k>/`).
    Replayed(PathBuf),
}

/// The log directory of `task`'s attempt `attempt` (its last try, when
/// infrastructure failures retried it), else of the task's last try: in
/// this run's logs, else in the latest earlier run's that has it.
fn directory(
    layout: &Layout,
    task: &str,
    attempt: Option<u32>,
) -> Result<(PathBuf, Found), String> {
    if let Some(d) = pick(tries_in(&layout.logs.join(task)), attempt) {
        return Ok((d, Found::ThisRun));
    }
    // Earlier runs' logs: `earlier-logs/<k>/`, the highest k the latest.
    let mut earlier: Vec<(u64, PathBuf)> = std::fs::read_dir(&layout.earlier_logs)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
                .collect()
        })
        .unwrap_or_default();
    earlier.sort();
    if let Some(run) = original_run(layout, task, &earlier)
        && let Some(d) = pick(tries_in(&run.join(task)), attempt)
    {
        return Ok((d, Found::Replayed(run)));
    }
    for (_, run) in earlier.into_iter().rev() {
        if let Some(d) = pick(tries_in(&run.join(task)), attempt) {
            return Ok((d, Found::EarlierRun(run)));
        }
    }
    // Say what is wrong rather than where nothing was found: no run yet, or
    // a task the last run did not have.
    if !layout.state.exists() && !layout.logs.exists() {
        return Err("there is no run yet, so no logs: `loopc run` first".to_string());
    }
    if let Ok(state) = super::store::state::load(&layout.state)
        && !state.tasks.iter().any(|t| t.name == task)
    {
        let names: Vec<&str> = state.tasks.iter().map(|t| t.name.as_str()).collect();
        let hint = crate::check::names::suggest(task, names.iter().copied())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        let listed = if names.len() > 10 {
            format!("{}, … ({} in all)", names[..10].join(", "), names.len())
        } else {
            names.join(", ")
        };
        return Err(format!(
            "the last run has no task `{task}`{hint} (its tasks: {listed})"
        ));
    }
    let what = match attempt {
        Some(n) => format!("attempt {n} of task `{task}`"),
        None => format!("task `{task}`"),
    };
    Err(format!(
        "no logs of {what} in this run ({}) or an earlier one ({})",
        layout.logs.join(task).display(),
        layout.earlier_logs.display()
    ))
}

/// When the last run replayed `task` from the cache: the latest of the
/// `earlier` runs' log directories whose kept state has the task passed
/// under the cache key it was replayed from (the run whose attempt made
/// that result); `None` otherwise.
fn original_run(layout: &Layout, task: &str, earlier: &[(u64, PathBuf)]) -> Option<PathBuf> {
    use crate::state::TaskStatus;
    let state = super::store::state::load(&layout.state).ok()?;
    let replayed = state
        .tasks
        .iter()
        .find(|t| t.name == task && t.status == TaskStatus::Cached)?;
    let key = replayed.cache_key.as_deref()?;
    let made = earlier.iter().rev().map(|(_, run)| run).find(|run| {
        let saved = run.join(super::store::layout::EARLIER_STATE);
        super::store::state::load(&saved).is_ok_and(|s| {
            s.tasks.iter().any(|t| {
                t.name == task
                    && t.status == TaskStatus::Passed
                    && t.cache_key.as_deref() == Some(key)
            })
        })
    });
    made.cloned()
}

/// The files of an attempt's log directory `dir` in [`ORDER`], then the
/// rest by name, then those of its `resolver/` (a resolver's run on a
/// conflict of the attempt's merge) in the same order.
fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut files = files_in(dir);
    files.extend(files_in(&dir.join("resolver")));
    files
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
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

/// Whether the try of `task` logged in `dir` (this run's) is still going:
/// a live loopc holds the lock, and state.json says the task is running,
/// or still pending (the run writes state.json at most every 250 ms, so it
/// may not say `running` yet), and has no ended try with these logs.
fn running(layout: &Layout, task: &str, dir: &Path) -> bool {
    use crate::state::TaskStatus;
    super::sys::lock::holder_alive(&layout.lock)
        && super::store::state::load(&layout.state).is_ok_and(|s| {
            s.tasks.iter().any(|t| {
                t.name == task
                    && matches!(t.status, TaskStatus::Running | TaskStatus::Pending)
                    && !t.history.iter().any(|h| {
                        h.logs
                            .as_deref()
                            .is_some_and(|l| Path::new(l).file_name() == dir.file_name())
                    })
            })
        })
}

/// `loopc logs`: writes the attempt's files to `out` (the repository is
/// the one holding `cwd`), each under a `==> path <==` header; returns where
/// they were found. A closed stdout (`| head`) ends it quietly.
///
/// Errors: not in a git repository, no such logs in this run or an
/// earlier one (the message says which and where it looked), or the logs
/// could not be written (a full disk) or read.
pub fn logs(cwd: &Path, req: &LogsRequest, out: &mut dyn Write) -> Result<Found, String> {
    let git = Git::discover(cwd)?;
    let layout = Layout::of_checkout(&git.root)?;
    let (dir, found) = directory(&layout, &req.task, req.attempt)?;
    let mut ends = Vec::new();
    // The file whose bytes were printed last: output of another file
    // gets its own header first.
    let mut last: Option<String> = None;
    for f in files_of(&dir) {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        if let Err(e) = writeln!(out, "==> {} <==", f.display()) {
            return ended(e, &f, found);
        }
        match copy_from(&f, 0, out) {
            Ok(end) => ends.push((name.clone(), end)),
            Err(e) => return ended(e, &f, found),
        }
        last = Some(name);
        if let Err(e) = writeln!(out) {
            return ended(e, &f, found);
        }
    }
    // Following an earlier run's logs: nothing is running there.
    if req.follow && found == Found::ThisRun {
        // New bytes of the output logs, until the attempt ends.
        loop {
            let live = running(&layout, &req.task, &dir);
            for name in LIVE {
                let path = dir.join(name);
                let at = ends.iter().position(|(n, _)| n == name);
                let from = at.map_or(0, |i| ends[i].1);
                let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                if size <= from {
                    continue;
                }
                if last.as_deref() != Some(*name) {
                    if let Err(e) = writeln!(out, "\n==> {} <==", path.display()) {
                        return ended(e, &path, found);
                    }
                    last = Some((*name).to_string());
                }
                match copy_from(&path, from, out) {
                    Ok(end) => match at {
                        Some(i) => ends[i].1 = end,
                        None => ends.push((name.to_string(), end)),
                    },
                    Err(e) => return ended(e, &path, found),
                }
            }
            if let Err(e) = out.flush() {
                return ended(e, &dir, found);
            }
            if !live {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    match out.flush() {
        Ok(()) => Ok(found),
        Err(e) => ended(e, &dir, found),
    }
}

/// How printing `path` ended on error `e`: quietly when the reader went
/// away (a closed pipe), else an error naming the file.
fn ended(e: std::io::Error, path: &Path, found: Found) -> Result<Found, String> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(found)
    } else {
        Err(format!("cannot print {}: {e}", path.display()))
    }
}
