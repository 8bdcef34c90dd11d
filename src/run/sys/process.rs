//! Subprocesses: every `run` string is `sh -c STRING` in a process group of
//! its own, with stdout and stderr streamed to log files, stdin either the
//! given bytes (then closed) or `/dev/null`, and a timeout that kills the
//! whole group (SIGTERM, then SIGKILL after a grace period).
//!
//! When it ends, its group is killed, and so is anything that left the group
//! but still carries its `LOOP_WORKTREE` ([`kill_escaped`]). Finding process
//! groups by that variable is also how [`super::recover`] kills what a killed
//! loopc left running; this module calls nothing of loopc's.
//!
//! [`Control`] is the run-wide kill switch: interrupts and the `time` budget
//! set it, and every waiting subprocess then kills its group. The run's
//! switch ([`Control::for_run`]) also trips on Ctrl-C, SIGTERM or SIGHUP by
//! itself ([`super::interrupt`]): a subprocess the coordinator waits for
//! (a merge gate, a resolver) is killed at once, not when the coordinator
//! next looks at the signal.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod escaped;
mod quiet;
pub use escaped::{Skip, end_groups_with_worktree, kill_escaped};
use quiet::Quiet;

/// Variables that would point git at another repository than the worktree
/// (set when loopc itself runs inside a git hook); never passed on.
pub const GIT_LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
];

/// How long a process group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long the process group of a command launched through an executor,
/// or of one a killed loopc left running, gets between SIGTERM and
/// SIGKILL: a launcher such as `srun` cancels its cluster job on SIGTERM
/// and cannot once killed, and it may have to wait for the cluster (a
/// step that takes seconds to end) before it can.
pub const LAUNCHER_GRACE: Duration = Duration::from_secs(10);
/// How often a running subprocess is polled.
const POLL: Duration = Duration::from_millis(20);

/// The run-wide stop switch and the registry of running process groups.
#[derive(Debug, Default)]
pub struct Control {
    stop: AtomicBool,
    interrupts: bool,
    deadline: Mutex<Option<Instant>>,
    groups: Mutex<BTreeSet<i32>>,
}

impl Control {
    /// The run's switch: like [`Control::default`], and it also counts as
    /// stopped once SIGINT, SIGTERM or SIGHUP arrived
    /// ([`super::interrupt::requested`]).
    pub fn for_run() -> Control {
        Control {
            interrupts: true,
            ..Control::default()
        }
    }

    /// Asks every running subprocess to be killed; no new work should start.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Whether [`Control::stop`] was called (or, for the run's switch, an
    /// interrupt arrived).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || (self.interrupts && super::interrupt::requested())
    }

    /// Sets a deadline (monotonic) after which running subprocesses are
    /// killed as if [`Control::stop`] had been called (the `time` budget).
    pub fn set_deadline(&self, at: Instant) {
        if let Ok(mut d) = self.deadline.lock() {
            *d = Some(at);
        }
    }

    /// Whether running subprocesses must be killed now: stopped, or past
    /// the deadline.
    pub fn should_stop(&self) -> bool {
        self.stopped() || self.past_deadline()
    }

    fn past_deadline(&self) -> bool {
        self.deadline
            .lock()
            .ok()
            .and_then(|d| *d)
            .is_some_and(|d| Instant::now() >= d)
    }

    /// Sends SIGKILL to every registered process group (the last resort of
    /// an interrupt).
    pub fn kill_all(&self) {
        if let Ok(groups) = self.groups.lock() {
            for &g in groups.iter() {
                signal_group(g, libc::SIGKILL);
            }
        }
    }

    /// Records a running process group (killed by [`Control::kill_all`]).
    pub fn register(&self, pgid: i32) {
        if let Ok(mut g) = self.groups.lock() {
            g.insert(pgid);
        }
    }

    /// The process groups of the subprocesses running now.
    pub fn groups(&self) -> BTreeSet<i32> {
        self.groups.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Forgets a process group that ended.
    pub fn unregister(&self, pgid: i32) {
        if let Ok(mut g) = self.groups.lock() {
            g.remove(&pgid);
        }
    }
}

/// What to run.
#[derive(Debug)]
pub struct Spec<'a> {
    /// The shell command, run as `sh -c COMMAND`.
    pub command: &'a str,
    /// Working directory.
    pub dir: &'a Path,
    /// Variables added to loopc's own environment; for a key given twice, the later value wins.
    pub env: &'a [(String, String)],
    /// Variables removed from the environment.
    pub env_remove: &'a [&'a str],
    /// Bytes written to stdin before it is closed; `None`: `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// File that receives stdout.
    pub stdout: &'a Path,
    /// File that receives stderr; `None`: the stdout file.
    pub stderr: Option<&'a Path>,
    /// Per-run timeout (monotonic).
    pub timeout: Duration,
    /// How long the command may write nothing to its stdout or stderr
    /// log before it is killed as stalled ([`Exit::Stalled`]); `None`:
    /// no limit.
    pub idle: Option<Duration>,
    /// How long the process group gets between SIGTERM and SIGKILL when it
    /// is killed (at its timeout or when the run stops): [`KILL_GRACE`],
    /// or [`LAUNCHER_GRACE`] for a command launched through an executor.
    pub grace: Duration,
}

/// How a subprocess ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal that loopc did not send ended it.
    Signal(i32),
    /// loopc killed it at its timeout.
    TimedOut,
    /// loopc killed it because it wrote nothing for this long (its
    /// `idle`).
    Stalled(Duration),
    /// loopc killed it because the run is stopping.
    Stopped,
}

impl Exit {
    /// Exit status 0.
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }

    /// A short description for people ("exit status 1", "timed out").
    pub fn describe(self, timeout: Duration) -> String {
        match self {
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut => format!(
                "timed out after {}",
                crate::run::time::human_duration(timeout)
            ),
            Exit::Stalled(idle) => {
                let d = crate::syntax::literal::print_duration(idle);
                format!("stalled: no output for {d} (`idle = {d}`)")
            }
            Exit::Stopped => "stopped (the run is stopping)".to_string(),
        }
    }
}

/// Whether process group `pgid` still has a running member. Zombies do not
/// count: where PID 1 does not reap orphans promptly, a group of zombies
/// would otherwise seem alive for the whole grace period.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: killpg with signal 0 only checks that the group exists.
    if pgid <= 1 || unsafe { libc::killpg(pgid, 0) } != 0 {
        return false;
    }
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return true;
    };
    procs.filter_map(Result::ok).any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parens.
        let mut rest = stat
            .rsplit_once(')')
            .map_or("", |(_, r)| r)
            .split_whitespace();
        let state = rest.next();
        let group = rest.nth(1).and_then(|g| g.parse::<i32>().ok());
        group == Some(pgid) && state != Some("Z")
    })
}

/// Sends `sig` to process group `pgid` (nothing for groups 0 and 1).
pub fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: killpg only sends a signal; an invalid group yields ESRCH.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
}

fn open_log(path: &Path) -> Result<File, String> {
    File::create(path).map_err(|e| format!("cannot create log {}: {e}", path.display()))
}

/// Runs `spec` to completion, timeout or stop.
///
/// Errors: a log file cannot be created or `sh` cannot be started.
pub fn run(spec: &Spec<'_>, control: &Control) -> Result<Exit, String> {
    let out = open_log(spec.stdout)?;
    let err = match spec.stderr {
        Some(p) => open_log(p)?,
        None => out
            .try_clone()
            .map_err(|e| format!("cannot open log {}: {e}", spec.stdout.display()))?,
    };
    // `sh` by absolute path, so that it is spawned, not forked (see
    // `program`), found on the `PATH` the command gets; `$0` stays `sh`.
    let path = spec.env.iter().rev().find(|(k, _)| k == "PATH");
    let sh = super::program::sh(path.map(|(_, v)| std::ffi::OsStr::new(v)), spec.dir);
    let mut expr = duct::cmd(sh, ["-c", spec.command])
        .dir(spec.dir)
        .stdout_file(out)
        .stderr_file(err)
        .unchecked()
        .before_spawn(|c| {
            c.process_group(0).arg0("sh");
            Ok(())
        });
    expr = match &spec.stdin {
        Some(bytes) => expr.stdin_bytes(bytes.clone()),
        None => expr.stdin_null(),
    };
    // duct lets the first `env` call for a key win (inner expressions take
    // precedence), so pass only each key's last value: later entries (the
    // `LOOP_*` protocol variables) must win over the plan's `env`.
    for (i, (k, v)) in spec.env.iter().enumerate() {
        if spec.env[i + 1..].iter().all(|(later, _)| later != k) {
            expr = expr.env(k, v);
        }
    }
    for k in spec.env_remove.iter().chain(GIT_LOCATION_VARS) {
        expr = expr.env_remove(k);
    }
    let handle = expr
        .start()
        .map_err(|e| format!("cannot start `sh -c` in {}: {e}", spec.dir.display()))?;
    let pgid = handle.pids().first().map(|&p| p as i32).unwrap_or(0);
    // Its start, while it cannot have been reaped: what it leaves behind
    // started no earlier (`kill_escaped` below).
    let born = u32::try_from(pgid).ok().and_then(escaped::stat);
    control.register(pgid);
    let started = Instant::now();
    let quiet = spec.idle.map(|idle| Quiet::new(spec, idle));
    let result = wait(
        &handle,
        pgid,
        (started + spec.timeout, quiet),
        spec.grace,
        control,
    );
    // Whatever the command left running in its group goes with it, and
    // whatever escaped the group but still carries this worktree.
    signal_group(pgid, libc::SIGKILL);
    control.unregister(pgid);
    if let Some((_, worktree)) = spec.env.iter().find(|(k, _)| k == "LOOP_WORKTREE") {
        let others = control.groups();
        let skip = Skip {
            started_before: born.map(|s| s.started),
            groups: Some(&others),
        };
        kill_escaped(worktree, skip);
    }
    cap_log(spec.stdout, LOG_LIMIT);
    if let Some(p) = spec.stderr {
        cap_log(p, LOG_LIMIT);
    }
    result
}

/// The most a log file keeps: over this, its head and tail (half each) are
/// kept with a marker between them.
pub const LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// Shrinks the log at `path` to its first and last `limit / 2` bytes with a
/// marker line between them, when it is larger than `limit`. Streams; never
/// holds the log in memory. Errors leave the log as it was.
pub fn cap_log(path: &Path, limit: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    let Ok(len) = std::fs::metadata(path).map(|m| m.len()) else {
        return;
    };
    if len <= limit {
        return;
    }
    let half = limit / 2;
    let tmp = path.with_extension("capped");
    let copy = || -> std::io::Result<()> {
        let mut src = File::open(path)?;
        let mut dst = File::create(&tmp)?;
        std::io::copy(&mut (&mut src).take(half), &mut dst)?;
        dst.write_all(cut_marker(len - 2 * half, half).as_bytes())?;
        src.seek(SeekFrom::Start(len - half))?;
        std::io::copy(&mut src.take(half), &mut dst)?;
        dst.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    if copy().is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The line [`cap_log`] puts between the head and the tail it keeps, with
/// the newline before and after it: `left_out` bytes were cut, `half`
/// bytes are kept on each side.
fn cut_marker(left_out: u64, half: u64) -> String {
    format!(
        "\n[loopc: {left_out} bytes of output left out here; the log keeps its first and last {half} bytes]\n"
    )
}

/// Where a log that [`cap_log`] cut to `limit` (bytes; runs use
/// [`LOG_LIMIT`]) holds what is left of the output: `(head_len,
/// tail_start)`, the head being bytes `0..head_len` and the tail
/// `tail_start..` to the end. `None` when the log was not cut (or cannot
/// be read).
pub fn log_cut(path: &Path, limit: u64) -> Option<(u64, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let half = limit / 2;
    let len = std::fs::metadata(path).ok()?.len();
    // The marker is the bytes between the head and the tail.
    let marker_len = len.checked_sub(2 * half)?;
    if marker_len == 0 || marker_len > 256 {
        return None;
    }
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(half)).ok()?;
    let mut marker = Vec::new();
    file.take(marker_len).read_to_end(&mut marker).ok()?;
    (marker == cut_marker(left_out_of(&marker)?, half).as_bytes())
        .then_some((half, half + marker_len))
}

/// The count of bytes left out that a cut marker names.
fn left_out_of(marker: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(marker).ok()?;
    let rest = text.strip_prefix("\n[loopc: ")?;
    rest.split(' ').next()?.parse().ok()
}

fn status_of(out: &std::process::Output) -> Exit {
    match (out.status.code(), out.status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        (None, None) => Exit::Code(-1),
    }
}

fn wait(
    handle: &duct::Handle,
    pgid: i32,
    (deadline, mut quiet): (Instant, Option<Quiet>),
    grace: Duration,
    control: &Control,
) -> Result<Exit, String> {
    let why = loop {
        // Woken by SIGCHLD: the end is seen at once, not at the next poll.
        let pause = deadline.saturating_duration_since(Instant::now()).min(POLL);
        match handle.wait_timeout(pause) {
            Ok(Some(out)) => return Ok(status_of(out)),
            Ok(None) => {}
            Err(e) => return Err(format!("cannot wait for subprocess: {e}")),
        }
        if Instant::now() >= deadline {
            break Exit::TimedOut;
        }
        if let Some(q) = quiet.as_mut()
            && q.stalled()
        {
            break Exit::Stalled(q.idle);
        }
        if control.stopped() || control.past_deadline() {
            break Exit::Stopped;
        }
    };
    signal_group(pgid, libc::SIGTERM);
    // The grace is the whole group's: a launcher (`srun`, `bwrap`) under
    // the shell may need a moment after the shell is gone to end what it
    // started (cancel a cluster job).
    let grace = Instant::now() + grace;
    while Instant::now() < grace {
        if let Ok(Some(_)) = handle.try_wait()
            && !group_alive(pgid)
        {
            return Ok(why);
        }
        std::thread::sleep(POLL);
    }
    signal_group(pgid, libc::SIGKILL);
    let _ = handle.kill();
    let _ = handle.wait();
    Ok(why)
}

/// The last `limit` bytes of the file at `path`, as bytes (empty when the
/// file is missing or unreadable). Never reads more than `limit` bytes.
pub fn tail_bytes(path: &Path, limit: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > limit && f.seek(SeekFrom::Start(len - limit)).is_err() {
        return Vec::new();
    }
    let mut buf = Vec::new();
    let _ = f.take(limit).read_to_end(&mut buf);
    buf
}

/// The last `limit` bytes of the file at `path`, lossily decoded and then
/// cut to at most `limit` bytes of text (empty when the file is missing).
/// Never reads more than `limit` bytes.
pub fn tail(path: &Path, limit: u64) -> String {
    let buf = tail_bytes(path, limit);
    let text = String::from_utf8_lossy(&buf).into_owned();
    // A replacement character is 3 bytes for 1 bad byte: keep the end that fits.
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    if text.len() <= limit {
        return text;
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_log_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        let mut data = vec![b'h'; 100];
        data.extend(vec![b'm'; 1000]);
        data.extend(vec![b't'; 100]);
        std::fs::write(&p, &data).unwrap();
        assert_eq!(log_cut(&p, 200), None);
        cap_log(&p, 200);
        let marker = cut_marker(1000, 100).len() as u64;
        assert_eq!(log_cut(&p, 200), Some((100, 100 + marker)));
        let out = std::fs::read(&p).unwrap();
        assert!(out.starts_with(&[b'h'; 100]));
        assert!(out.ends_with(&[b't'; 100]));
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("1000 bytes of output left out"), "{text}");
        cap_log(&p, 1 << 20);
        assert_eq!(std::fs::read(&p).unwrap(), out);
    }

    #[test]
    fn tail_is_lossy_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        std::fs::write(&p, b"abc\xffdef").unwrap();
        assert_eq!(tail(&p, 6), "\u{fffd}def");
        assert_eq!(tail(&dir.path().join("missing"), 4), "");
        std::fs::write(&p, [0xffu8; 10]).unwrap();
        assert!(tail(&p, 10).len() <= 10);
    }

    #[test]
    fn exit_codes_and_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let control = Control::default();
        let spec = Spec {
            command: "cat; exit 3",
            dir: dir.path(),
            env: &[],
            env_remove: &[],
            stdin: Some(b"prompt".to_vec()),
            stdout: &out,
            stderr: None,
            timeout: Duration::from_secs(30),
            idle: None,
            grace: KILL_GRACE,
        };
        assert_eq!(run(&spec, &control).unwrap(), Exit::Code(3));
        assert_eq!(std::fs::read(&out).unwrap(), b"prompt");
        // Quiet past its `idle`: stalled, not timed out.
        let quiet = Spec {
            command: "echo started; sleep 30",
            stdin: None,
            idle: Some(Duration::from_millis(500)),
            ..spec
        };
        assert_eq!(
            run(&quiet, &control).unwrap(),
            Exit::Stalled(Duration::from_millis(500))
        );
    }

    #[test]
    fn a_group_of_zombies_is_not_alive() {
        use std::os::unix::process::CommandExt as _;
        let mut live = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut done = std::process::Command::new("true")
            .process_group(0)
            .spawn()
            .unwrap();
        let (live_group, done_group) = (live.id() as i32, done.id() as i32);
        // Not reaped yet: a zombie, alone in its group.
        let zombie = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            std::fs::read_to_string(format!("/proc/{done_group}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
        });
        assert!(zombie);
        assert!(group_alive(live_group));
        assert!(!group_alive(done_group));
        signal_group(live_group, libc::SIGKILL);
        live.wait().unwrap();
        done.wait().unwrap();
        assert!(!group_alive(live_group));
    }
}
