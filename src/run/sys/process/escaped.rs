//! What a subprocess left running outside its process group, found in
//! `/proc` by the `LOOP_WORKTREE` in its environment or, without a
//! terminal, by a working directory inside the worktree.
//!
//! One pass over `/proc` reads every process's `stat` (one small read that
//! does not touch the process's memory). Only a process that can be the
//! finished subprocess's descendant (started no earlier than it, and not in
//! the group of another subprocess still running, whose own end kills that
//! group) has its environment and working directory read: reading
//! `environ` maps the other process's pages, and doing it for every
//! process after every attempt made the cost of an attempt grow with
//! `parallel` (docs/benchmarks.md, "Issue 33 (d)").

use super::{LAUNCHER_GRACE, POLL, group_alive, signal_group};
use std::collections::{BTreeSet, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

/// The processes a search may pass over without reading their
/// environment: none, by default.
#[derive(Debug, Default, Clone, Copy)]
pub struct Skip<'a> {
    /// Processes started before this time, in clock ticks since boot
    /// (`/proc/<pid>/stat` field 22): the finished subprocess's own start,
    /// before which none of its descendants can have started.
    pub started_before: Option<u64>,
    /// The process groups of other subprocesses still running.
    pub groups: Option<&'a BTreeSet<i32>>,
}

/// What loopc reads of a process's `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Its process group (field 5).
    pub group: i32,
    /// Its controlling terminal (field 7; 0: none).
    pub tty: i64,
    /// When it started, in clock ticks since boot (field 22).
    pub started: u64,
}

/// Process `pid`'s [`Stat`]; `None` when it is gone or the file is not
/// one Linux writes.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(text: &str) -> Option<Stat> {
    // `pid (comm) state ppid pgrp session tty_nr …`; comm may contain
    // spaces and parens, so fields are counted after the last `)`.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    Some(Stat {
        group: fields.get(2)?.parse().ok()?,
        tty: fields.get(4)?.parse().ok()?,
        started: fields.get(19)?.parse().ok()?,
    })
}

/// Kills (SIGKILL) the process groups of processes whose `LOOP_WORKTREE`
/// is exactly `worktree`, or that run inside `worktree` without a
/// controlling terminal: what a finished subprocess of an attempt left
/// behind even outside its process group (`setsid`, a double fork into a
/// new session, `env -i`), passing over what `skip` allows. Linux only.
/// Returns the number of groups killed.
pub fn kill_escaped(worktree: &str, skip: Skip<'_>) -> usize {
    let groups = groups_with_worktree(worktree.as_bytes(), true, skip);
    for &g in &groups {
        signal_group(g, libc::SIGKILL);
    }
    groups.len()
}

/// Ends the process groups of processes (other than loopc's own group)
/// whose `LOOP_WORKTREE` starts with `prefix`, what a killed loopc left
/// running: SIGTERM first, so that a launcher can end what it started
/// elsewhere (a cluster job), then SIGKILL for the groups still there after
/// [`LAUNCHER_GRACE`]. Returns the number of groups.
pub fn end_groups_with_worktree(prefix: &[u8]) -> usize {
    let groups = groups_with_worktree(prefix, false, Skip::default());
    for &g in &groups {
        signal_group(g, libc::SIGTERM);
    }
    let until = Instant::now() + LAUNCHER_GRACE;
    while Instant::now() < until && groups.iter().any(|&g| group_alive(g)) {
        std::thread::sleep(POLL);
    }
    for &g in &groups {
        signal_group(g, libc::SIGKILL);
    }
    groups.len()
}

/// The process groups (other than loopc's own) of processes whose
/// `LOOP_WORKTREE` equals `value` (`exact`) or starts with it, and, with
/// `exact`, of processes without a terminal running inside `value`; the
/// processes `skip` names are not looked at.
fn groups_with_worktree(value: &[u8], exact: bool, skip: Skip<'_>) -> HashSet<i32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return HashSet::new();
    };
    let mut wanted = b"LOOP_WORKTREE=".to_vec();
    wanted.extend_from_slice(value);
    let me = std::process::id();
    // SAFETY: getpgrp has no preconditions.
    let my_group = unsafe { libc::getpgrp() };
    let mut groups = HashSet::new();
    let here = exact.then(|| {
        let p = Path::new(std::ffi::OsStr::from_bytes(value));
        std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
    });
    for entry in procs.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(st) = stat(pid) else {
            continue;
        };
        if pid == me
            || st.group <= 1
            || st.group == my_group
            || skip.started_before.is_some_and(|t| st.started < t)
            || skip.groups.is_some_and(|g| g.contains(&st.group))
        {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let matches = |v: &[u8]| {
            if exact {
                v == wanted.as_slice()
            } else {
                v.starts_with(&wanted)
            }
        };
        // A process that dropped its environment (`env -i setsid …`) is
        // still found by its working directory inside the worktree, when it
        // has no controlling terminal (a person's shell there has one and
        // is left alone).
        let escaped_here = || {
            here.as_ref().is_some_and(|dir| {
                st.tty == 0
                    && std::fs::read_link(entry.path().join("cwd"))
                        .is_ok_and(|cwd| cwd.starts_with(dir))
            })
        };
        if environ.split(|&b| b == 0).any(matches) || escaped_here() {
            groups.insert(st.group);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn own_stat_is_read() {
        let me = stat(std::process::id()).unwrap();
        // SAFETY: getpgrp has no preconditions.
        assert_eq!(me.group, unsafe { libc::getpgrp() });
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        let st = stat(child.id()).unwrap();
        assert_eq!(st.group, child.id() as i32);
        assert_eq!(st.tty, 0);
        // A child starts no earlier than its parent.
        assert!(st.started >= me.started);
        signal_group(st.group, libc::SIGKILL);
        child.wait().unwrap();
    }

    #[test]
    fn stat_fields_are_counted_after_the_last_paren() {
        let text = "42 (a) b (c)) S 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(
            parse_stat(text),
            Some(Stat {
                group: 77,
                tty: 0,
                started: 123456
            })
        );
        assert_eq!(parse_stat("42 (x) S 1"), None);
    }

    #[test]
    fn skipped_groups_and_older_processes_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().to_str().unwrap().to_string();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("LOOP_WORKTREE", &wt)
            .process_group(0)
            .spawn()
            .unwrap();
        let group = child.id() as i32;
        let started = stat(child.id()).unwrap().started;
        let find = |skip| groups_with_worktree(wt.as_bytes(), true, skip);
        // Until it has exec'd `sleep`, the child has loopc's environment
        // (a busy machine shows that moment).
        let environ = format!("/proc/{}/environ", child.id());
        let wanted = format!("LOOP_WORKTREE={wt}");
        for _ in 0..500 {
            let env = std::fs::read(&environ).unwrap_or_default();
            if env.split(|&b| b == 0).any(|v| v == wanted.as_bytes()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(find(Skip::default()).contains(&group));
        let live = BTreeSet::from([group]);
        let skip = Skip {
            groups: Some(&live),
            ..Skip::default()
        };
        assert!(!find(skip).contains(&group));
        let later = Skip {
            started_before: Some(started + 1),
            ..Skip::default()
        };
        assert!(!find(later).contains(&group));
        let same = Skip {
            started_before: Some(started),
            ..Skip::default()
        };
        assert!(find(same).contains(&group));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
