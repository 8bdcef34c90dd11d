//! Shared helpers for the `loopc run` integration tests: a temporary git
//! repository, scripted agents written as small shell scripts, and readers
//! for `.loopc/state.json` and `.loopc/events.jsonl`. Real git, real
//! subprocesses, no mocks.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch repository (and a sibling directory for scripts) that is
/// deleted when dropped.
pub struct Repo {
    _tmp: tempfile::TempDir,
    /// The repository's top level.
    pub root: PathBuf,
    /// A directory outside the repository for agent scripts and sync files.
    pub bin: PathBuf,
}

/// The result of running loopc.
pub struct Run {
    /// Exit status.
    pub code: i32,
    /// Standard output (lossy).
    pub stdout: String,
    /// Standard error (lossy).
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn to_run(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Repo {
    /// A repository on branch `main` with one commit (README).
    pub fn new() -> Repo {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("repo");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let repo = Repo {
            _tmp: tmp,
            root,
            bin,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "user.name", "Test"]);
        repo.write("README", "test project\n");
        repo.commit("initial");
        repo
    }

    /// Runs git in the repository; panics on failure; returns trimmed stdout.
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
            .map(|s| s.success())
            .unwrap_or(false)
    }

    /// Writes a file in the repository's checkout.
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, text).unwrap();
    }

    /// Stages everything and commits.
    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// Writes an executable script outside the repository; returns its path.
    pub fn script(&self, name: &str, body: &str) -> String {
        let p = self.bin.join(name);
        std::fs::write(&p, body).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        p.to_string_lossy().into_owned()
    }

    /// Writes `plan.loop` (not committed: it is the user's file), with
    /// `@BIN@` replaced by the scripts directory.
    pub fn plan(&self, text: &str) {
        let text = text.replace("@BIN@", &self.bin.to_string_lossy());
        std::fs::write(self.root.join("plan.loop"), text).unwrap();
    }

    /// Runs `loopc ARGS` in the repository.
    pub fn loopc(&self, args: &[&str]) -> Run {
        self.loopc_in(&self.root, args)
    }

    /// Runs `loopc ARGS` in `dir`.
    pub fn loopc_in(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_loopc"));
        cmd.args(args).current_dir(dir).stdin(Stdio::null());
        for (k, _) in std::env::vars() {
            if k.starts_with("LOOP_") {
                cmd.env_remove(k);
            }
        }
        to_run(cmd.output().expect("run loopc"))
    }

    /// Starts `loopc ARGS` in the repository without waiting (stdout and
    /// stderr to files in the scripts directory, `loopc.out`/`loopc.err`).
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_loopc"));
        cmd.args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(self.bin.join("loopc.out")).unwrap())
            .stderr(std::fs::File::create(self.bin.join("loopc.err")).unwrap());
        for (k, _) in std::env::vars() {
            if k.starts_with("LOOP_") {
                cmd.env_remove(k);
            }
        }
        cmd.spawn().expect("start loopc")
    }

    /// What the last [`Repo::spawn`]ed loopc wrote on stderr.
    pub fn spawned_stderr(&self) -> String {
        std::fs::read_to_string(self.bin.join("loopc.err")).unwrap_or_default()
    }

    /// Complete lines in `.loopc/events.jsonl` (0 when missing).
    pub fn event_count(&self) -> usize {
        std::fs::read(self.root.join(".loopc/events.jsonl"))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
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
    /// directory inside the repository (Linux `/proc`). After `kill -9` of
    /// loopc, the git commands it had started finish on their own; a rerun
    /// that starts while they still write would race them, which is not the
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

    /// Registered worktrees other than the main one.
    pub fn extra_worktrees(&self) -> Vec<String> {
        self.git(&["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(str::to_string)
            .filter(|p| std::path::Path::new(p) != self.root.as_path())
            .collect()
    }

    /// `loopc run` with the default plan.
    pub fn run(&self) -> Run {
        self.loopc(&["run"])
    }

    /// `.loopc/state.json`.
    pub fn state(&self) -> Value {
        let text =
            std::fs::read_to_string(self.root.join(".loopc/state.json")).expect("state.json");
        serde_json::from_str(&text).expect("state.json is JSON")
    }

    /// The state of task `name`.
    pub fn task(&self, name: &str) -> Value {
        self.state()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no task {name} in state"))
    }

    /// The status word of task `name`.
    pub fn status_of(&self, name: &str) -> String {
        self.task(name)["status"].as_str().unwrap().to_string()
    }

    /// Every event of `.loopc/events.jsonl`, in file order.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root.join(".loopc/events.jsonl"))
            .expect("events.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("event is JSON"))
            .collect()
    }

    /// The `seq` of the first event matching `kind` and `task`.
    pub fn seq_of(&self, kind: &str, task: &str) -> u64 {
        self.events()
            .iter()
            .find(|e| e["event"] == kind && e["task"] == task)
            .and_then(|e| e["seq"].as_u64())
            .unwrap_or_else(|| panic!("no {kind} event for {task}"))
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
}

/// An agent script that writes `<task>.txt` with `content` and a completed
/// handoff, costing `$0.01`.
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
        if !text.contains(marker) {
            continue;
        }
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if !zombie {
            return true;
        }
    }
    false
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
