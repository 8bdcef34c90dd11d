//! The one harness of the integration tests, in the style of just's
//! `tests/test.rs`. A [`Test`] is a scratch directory, optionally a real git
//! repository with a first commit, with a directory of scripted agents
//! beside it and the files and plan a test writes. [`Test::loopc`] starts one
//! invocation of the real `loopc` binary (arguments, environment, working
//! directory; stdin is empty), which asserts the exact stdout, stderr and exit
//! status it was told and returns the [`Output`]; [`Test::state`] and
//! [`Test::events`] read `.loopc/state.json` and `.loopc/events.jsonl`.
//! Real git, real subprocesses, no mocks.

use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A scratch directory (and a sibling directory for scripts) that is deleted
/// when dropped.
pub struct Test {
    tmp: tempfile::TempDir,
    /// Where loopc runs: the repository's top level, or a plain directory.
    pub root: PathBuf,
    /// A directory outside `root` for agent scripts and sync files.
    pub bin: PathBuf,
}

/// What one invocation of loopc printed, and how it exited.
pub struct Output {
    /// Exit status (-1 when killed by a signal).
    pub status: i32,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// The path of the `loopc` binary under test.
/// Sends signal `sig` to our own child process `pid`; the call must succeed.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill only sends a signal to our own child.
    let rc = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

pub fn loopc_path() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_loopc"))
}

/// A command for the `loopc` binary with the environment every test runs it
/// in: no `NO_COLOR` and no `LOOP_*` protocol variables inherited from the
/// test runner, and no git repository found above `ceiling`.
pub fn loopc_command(ceiling: &Path) -> Command {
    let mut cmd = Command::new(loopc_path());
    cmd.env_remove("NO_COLOR")
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .stdin(Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("LOOP_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// Runs the example script `examples/<rel>` (a `run.sh`) with this build's
/// loopc and its own `TMPDIR`; asserts that it succeeds and leaves nothing
/// in the temporary directory. Returns its stdout.
pub fn run_example_script(rel: &str) -> String {
    run_example_script_with_stderr(rel).0
}

/// [`run_example_script`], returning its stdout and its stderr.
pub fn run_example_script_with_stderr(rel: &str) -> (String, String) {
    let script = examples_dir().join(rel);
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new("bash")
        .arg(&script)
        .env("LOOPC", loopc_path())
        .env("TMPDIR", tmp.path())
        .env("GIT_CEILING_DIRECTORIES", tmp.path())
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the example script");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("read the temporary directory")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    (stdout, stderr)
}

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

impl Test {
    /// A plain (not git) scratch directory.
    pub fn new() -> Test {
        Test::in_dir("work")
    }

    /// A git repository on branch `main` with one commit (a README).
    pub fn repo() -> Test {
        let test = Test::in_dir("repo");
        test.git(&["init", "-q", "-b", "main"]);
        test.git(&["config", "user.email", "test@example.com"]);
        test.git(&["config", "user.name", "Test"]);
        test.write("README", "test project\n");
        test.commit("initial");
        test
    }

    fn in_dir(name: &str) -> Test {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join(name);
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&root).expect("create the test directory");
        std::fs::create_dir_all(&bin).expect("create the scripts directory");
        Test { tmp, root, bin }
    }

    /// Writes `contents` to `name` (relative to the root), for chaining.
    pub fn file(self, name: &str, contents: impl AsRef<[u8]>) -> Self {
        self.write(name, contents);
        self
    }

    /// Writes a file (relative to the root), creating its directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("create directories");
        }
        std::fs::write(p, contents).expect("write a test file");
    }

    /// Writes `plan.loop` (not committed: it is the user's file), with
    /// `@BIN@` replaced by the scripts directory.
    pub fn plan(&self, text: &str) {
        self.write("plan.loop", self.expand(text));
    }

    /// `text` with `@BIN@` replaced by the scripts directory.
    pub fn expand(&self, text: &str) -> String {
        text.replace("@BIN@", &self.bin.to_string_lossy())
    }

    /// Writes an executable script to the scripts directory; returns its path.
    pub fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let p = self.bin.join(name);
        std::fs::write(&p, body).expect("write a script");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
            .expect("make a script executable");
        p.to_string_lossy().into_owned()
    }

    /// A `git` that stands in front of the real one: `script` gets the real
    /// git's path and returns the wrapper's shell script, written to
    /// `<bin>/wrapped/git`. Returns a `PATH` with it first, for
    /// the run's `env`.
    pub fn git_wrapper(&self, script: impl FnOnce(&str) -> String) -> String {
        use std::os::unix::fs::PermissionsExt;
        let out = Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .expect("sh");
        let real = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let dir = self.bin.join("wrapped");
        std::fs::create_dir_all(&dir).expect("wrapper directory");
        let git = dir.join("git");
        std::fs::write(&git, script(&real)).expect("write the git wrapper");
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// A `sleep` whose command line carries `marker` (a symlink in the
    /// scripts directory), so a test can look for its process; its path.
    pub fn marked_sleep(&self, marker: &str) -> String {
        let out = Command::new("sh")
            .args(["-c", "command -v sleep"])
            .output()
            .expect("sh");
        let sleep = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let path = self.bin.join(marker);
        std::os::unix::fs::symlink(sleep, &path).expect("symlink sleep");
        path.to_string_lossy().into_owned()
    }

    /// Starts an invocation of `loopc ARGS` in the root.
    pub fn loopc<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Invocation<'_> {
        Invocation {
            test: self,
            args: args.iter().map(|a| a.as_ref().to_owned()).collect(),
            env: Vec::new(),
            dir: None,
            stdout: None,
            stderr: None,
            stderr_contains: Vec::new(),
            status: 0,
            unprivileged: false,
        }
    }

    /// Runs `sh -c SCRIPT` in the root with `$LOOPC` set to the binary.
    pub fn shell(&self, script: &str) -> Output {
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .env("LOOPC", loopc_path())
            .env("GIT_CEILING_DIRECTORIES", self.tmp.path())
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .output()
            .expect("sh");
        to_output(out)
    }

    /// Runs git in the root; panics on failure; returns trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs git; returns whether it succeeded.
    pub fn git_ok(&self, args: &[&str]) -> bool {
        Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Stages everything and commits.
    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// The contents of `path` at `rev`, or `None` if absent.
    pub fn show(&self, rev: &str, path: &str) -> Option<String> {
        let spec = format!("{rev}:{path}");
        let out = Command::new("git")
            .args(["show", &spec])
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The files of the tree at `rev`.
    pub fn files_at(&self, rev: &str) -> Vec<String> {
        self.git(&["ls-tree", "-r", "--name-only", rev])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Registered worktrees other than the main one.
    pub fn extra_worktrees(&self) -> Vec<String> {
        self.git(&["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(str::to_string)
            .filter(|p| Path::new(p) != self.root.as_path())
            .collect()
    }

    /// The lines of the file `name` beside the scripts, where scripted
    /// agents log what they did (none when it is missing).
    pub fn bin_lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.bin.join(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// `.loopc/state.json`, parsed.
    pub fn state(&self) -> Value {
        let text =
            std::fs::read_to_string(self.root.join(".loopc/state.json")).expect("state.json");
        serde_json::from_str(&text).expect("state.json is JSON")
    }

    /// The state of task `name`.
    pub fn task(&self, name: &str) -> Value {
        self.state()["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no task {name} in state"))
    }

    /// The status word of task `name`.
    pub fn status_of(&self, name: &str) -> String {
        self.task(name)["status"]
            .as_str()
            .expect("status")
            .to_string()
    }

    /// Every event of `.loopc/events.jsonl`, parsed, in file order.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root.join(".loopc/events.jsonl"))
            .expect("events.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("event is JSON"))
            .collect()
    }

    /// The `attempt_finished` events whose `outcome` is `outcome`, in order.
    pub fn finished_attempts(&self, outcome: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == "attempt_finished" && e["outcome"] == outcome)
            .collect()
    }

    /// Complete lines in `.loopc/events.jsonl` (0 when missing).
    pub fn event_count(&self) -> usize {
        std::fs::read(self.root.join(".loopc/events.jsonl"))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
    }

    /// The `seq` of the first event matching `kind` and `task`.
    pub fn seq_of(&self, kind: &str, task: &str) -> u64 {
        self.events()
            .iter()
            .find(|e| e["event"] == kind && e["task"] == task)
            .and_then(|e| e["seq"].as_u64())
            .unwrap_or_else(|| panic!("no {kind} event for {task}"))
    }

    /// What the last [`Invocation::spawn`]ed loopc wrote on stderr.
    pub fn spawned_stderr(&self) -> String {
        std::fs::read_to_string(self.bin.join("loopc.err")).unwrap_or_default()
    }

    /// Polls `cond` every 5 ms, at most `limit` times; whether it held.
    pub fn wait_for(&self, limit: u32, mut cond: impl FnMut() -> bool) -> bool {
        for _ in 0..limit {
            if cond() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        cond()
    }

    /// Whether any process other than this test runs with its working
    /// directory inside the root (Linux `/proc`). After `kill -9` of loopc,
    /// the git commands it had started finish on their own; a rerun that
    /// starts while they still write would race them, which is not the
    /// scenario under test (a person reruns after the crash, not during it).
    pub fn has_processes_inside(&self) -> bool {
        let Ok(root) = self.root.canonicalize() else {
            return false;
        };
        let me = std::process::id().to_string();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return false;
        };
        procs.filter_map(Result::ok).any(|p| {
            let name = p.file_name().to_string_lossy().into_owned();
            name != me
                && name.bytes().all(|b| b.is_ascii_digit())
                && std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
        })
    }
}

/// One run of loopc being set up (stdin is empty): arguments, environment
/// and working directory, and what it must print and how it must exit.
pub struct Invocation<'t> {
    test: &'t Test,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    stdout: Option<String>,
    stderr: Option<String>,
    stderr_contains: Vec<String>,
    status: i32,
    unprivileged: bool,
}

/// The user a test runs loopc as when it must not be root (root may write
/// any file whatever its mode): `nobody`.
pub const NOBODY: u32 = 65534;

/// Whether the tests run as root (then [`Invocation::unprivileged`] runs
/// loopc as [`NOBODY`]).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// The user and group loopc runs as for an [`Invocation::unprivileged`]
/// one: `nobody` when the tests run as root, else the tests' own.
pub fn unprivileged_ids() -> (u32, u32) {
    if running_as_root() {
        (NOBODY, NOBODY)
    } else {
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        unsafe { (libc::geteuid(), libc::getegid()) }
    }
}

/// Gives every file under `dir` to `uid`:`gid` (`chown -R`).
fn chown_all(dir: &Path, uid: u32, gid: u32) {
    let ok = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{gid}"))
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chown -R {uid}:{gid} {}", dir.display());
}

impl Invocation<'_> {
    /// Runs loopc (and so its agents and gates) as a user that is not
    /// root: file modes bind it as they bind a person's agents. When the
    /// tests run as root, the test's directory is given to `nobody` for
    /// the run (loopc is started through `setpriv`, with `HOME` there)
    /// and taken back afterwards, so the test's own git calls work.
    pub fn unprivileged(mut self) -> Self {
        self.unprivileged = true;
        self
    }

    /// Sets an environment variable for loopc.
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.env.push((key.into(), value.as_ref().to_owned()));
        self
    }

    /// Runs in `dir` instead of the test's root.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// The exact standard output expected.
    pub fn stdout(mut self, s: &str) -> Self {
        self.stdout = Some(s.into());
        self
    }

    /// The exact standard error expected.
    pub fn stderr(mut self, s: &str) -> Self {
        self.stderr = Some(s.into());
        self
    }

    /// A text standard error must contain.
    pub fn stderr_contains(mut self, s: &str) -> Self {
        self.stderr_contains.push(s.into());
        self
    }

    /// The exit status expected (0 unless set).
    pub fn status(mut self, status: i32) -> Self {
        self.status = status;
        self
    }

    /// The configured command, for tests that need their own stdio (a
    /// pipe read in part, a full device, a protocol spoken over stdin).
    pub fn command(&self) -> Command {
        let mut cmd = loopc_command(self.test.tmp.path());
        if self.unprivileged && running_as_root() {
            let mut wrapped = Command::new("setpriv");
            wrapped
                .arg(format!("--reuid={NOBODY}"))
                .arg(format!("--regid={NOBODY}"))
                .arg("--clear-groups")
                .arg(cmd.get_program())
                .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .env("HOME", self.test.tmp.path())
                .stdin(Stdio::null());
            for (k, v) in cmd.get_envs() {
                if v.is_none() {
                    wrapped.env_remove(k);
                }
            }
            cmd = wrapped;
        }
        cmd.args(&self.args)
            .current_dir(self.dir.as_deref().unwrap_or(&self.test.root))
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Runs the configured command to the end, as [`Invocation::unprivileged`]
    /// says.
    fn finish(&self) -> Output {
        let handover = self.unprivileged && running_as_root();
        if handover {
            chown_all(self.test.tmp.path(), NOBODY, NOBODY);
        }
        let out = self.command().output().expect("run loopc");
        if handover {
            chown_all(self.test.tmp.path(), 0, 0);
        }
        to_output(out)
    }

    /// Runs loopc to the end and asserts everything that was set.
    pub fn run(self) -> Output {
        let out = self.finish();
        if let Some(want) = &self.stdout {
            assert_eq!(&out.stdout, want, "stdout differs; {out:?}");
        }
        if let Some(want) = &self.stderr {
            assert_eq!(&out.stderr, want, "stderr differs; {out:?}");
        }
        for want in &self.stderr_contains {
            assert!(
                out.stderr.contains(want.as_str()),
                "stderr lacks {want:?}; {out:?}"
            );
        }
        assert_eq!(out.status, self.status, "exit status; {out:?}");
        out
    }

    /// Runs loopc to the end and asserts nothing, for runs whose status is
    /// checked later (after a held run is released, so a failure leaves no
    /// process behind).
    pub fn output(self) -> Output {
        self.finish()
    }

    /// Runs loopc to the end with a full disk as its stdout (`/dev/full`:
    /// every write fails with ENOSPC); asserts nothing.
    pub fn output_to_a_full_disk(self) -> std::process::Output {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full");
        self.command().stdout(full).output().expect("run loopc")
    }

    /// Starts loopc without waiting: stdin empty, stdout and stderr to
    /// `loopc.out` and `loopc.err` in the scripts directory (see
    /// [`Test::spawned_stderr`]). Nothing is asserted.
    pub fn spawn(self) -> Child {
        let out = std::fs::File::create(self.test.bin.join("loopc.out")).expect("loopc.out");
        let err = std::fs::File::create(self.test.bin.join("loopc.err")).expect("loopc.err");
        self.command()
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start loopc")
    }
}

fn to_output(out: std::process::Output) -> Output {
    Output {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An agent script that writes `<task>.txt` and a completed handoff,
/// costing `$0.01`.
pub const SIMPLE_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"wrote %s.txt","cost_usd":0.01}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

/// Whether a live (not zombie) process's command line contains `marker`
/// (read from `/proc`, so no `pgrep` is needed).
pub fn process_alive_with(marker: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    for e in procs.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) && !is_zombie(pid) {
            return true;
        }
    }
    false
}

/// Whether process `pid` is a zombie (or gone).
fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

/// Waits (bounded, polling) until no live process's command line contains
/// `marker`; whether that happened.
pub fn no_process_with(marker: &str) -> bool {
    for _ in 0..500 {
        if !process_alive_with(marker) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    !process_alive_with(marker)
}

// Outside programs ------------------------------------------------------------

/// The outside programs tests need, by the name `LOOPC_REQUIRE` takes,
/// and what installs each (Debian packages; `.ci/run` installs them all).
pub const OUTSIDE: &[(&str, &str)] = &[
    ("dot", "graphviz"),
    ("nvim", "neovim"),
    ("bwrap", "bubblewrap"),
    ("tmux", "tmux"),
    ("chromium", "chromium"),
    (
        "slurm",
        "slurm-wlm and munge, run as root: tests/slurm/start-cluster.sh",
    ),
];

/// The tests skipped so far: `(program, test)`.
static SKIPPED: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Writes `text` to the terminal past the test harness's capture of
/// `print!` and `eprint!` (std's stderr handle is not captured), so plain
/// `cargo test` shows it.
fn to_terminal(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Prints the skipped tests' summary when the test binary exits, after
/// libtest's own result line.
extern "C" fn skipped_summary() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if skipped.is_empty() {
        return;
    }
    let mut by_program: Vec<(&str, usize)> = Vec::new();
    for (program, _) in skipped.iter() {
        match by_program.iter_mut().find(|(p, _)| p == program) {
            Some((_, n)) => *n += 1,
            None => by_program.push((program, 1)),
        }
    }
    let parts: Vec<String> = by_program
        .iter()
        .map(|(program, n)| {
            let install = OUTSIDE
                .iter()
                .find(|(p, _)| p == program)
                .map_or("", |(_, i)| *i);
            format!("{program} {n} (install: {install})")
        })
        .collect();
    to_terminal(&format!(
        "\nSKIPPED {} test(s) whose outside programs are not usable here: {}.\n\
         `.ci/run` installs them and sets LOOPC_REQUIRE, under which a missing one fails \
         its tests instead.\n",
        skipped.len(),
        parts.join(", ")
    ));
}

/// Whether `program args…` runs and exits 0 here; if not, why.
pub fn program_runs(program: &str, args: &[&str]) -> Result<(), String> {
    match Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`{program} {}` failed ({s})", args.join(" "))),
        Err(e) => Err(format!("`{program}` cannot be run ({e})")),
    }
}

/// The one rule for a test that needs an outside program (`dot`, `nvim`,
/// `bwrap`, `tmux`, `slurm`: see [`OUTSIDE`]): whether it may go on,
/// given `usable` (the program's probe). When the program is not usable,
/// the calling test skips what needs it: one line on the terminal now,
/// and a summary when the test binary exits; unless `LOOPC_REQUIRE`
/// names the program (comma-separated, or `all`), when the test fails.
pub fn require(program: &str, usable: Result<(), String>) -> bool {
    let Err(why) = usable else {
        return true;
    };
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let install = OUTSIDE
        .iter()
        .find(|(p, _)| *p == program)
        .map_or("", |(_, i)| *i);
    let required = std::env::var("LOOPC_REQUIRE").is_ok_and(|r| {
        r.split(',')
            .any(|p| p.trim() == program || p.trim() == "all")
    });
    assert!(
        !required,
        "{test} needs {program}, which LOOPC_REQUIRE requires, but {why} (install: {install})"
    );
    static SUMMARY: std::sync::Once = std::sync::Once::new();
    SUMMARY.call_once(|| {
        // SAFETY: registers a plain function, run once at exit.
        unsafe {
            libc::atexit(skipped_summary);
        }
    });
    to_terminal(&format!(
        "SKIPPED {test}: what needs {program} is left out: {why} (install: {install})\n"
    ));
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((program.to_string(), test));
    false
}
