//! `loopc board` in a real terminal: tmux runs it (its own server socket),
//! `send-keys` types and `capture-pane` reads the screen, while a real
//! `loopc run` goes on beside it.
//!
//! Without `tmux` the tests are skipped, saying so
//! ([`crate::harness::require`]), unless `LOOPC_REQUIRE` names `tmux`
//! (`.ci/run` installs Debian's `tmux` and does).

use crate::harness::{Test, examples_dir, loopc_path};
use std::path::Path;
use std::process::{Command, Output};

/// A tmux server of this test's own, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `loopc board ARGS` in a 120×32 window in `dir`, or `None` when
    /// tmux is missing (and not required).
    fn board(name: &str, dir: &Path, args: &str) -> Option<Tmux> {
        Tmux::start(
            name,
            dir,
            &format!("{} board {args}", loopc_path().display()),
        )
    }

    /// Starts the shell command `command` in a 120×32 window in `dir`, or
    /// `None` when tmux is missing (and not required).
    fn start(name: &str, dir: &Path, command: &str) -> Option<Tmux> {
        if !crate::harness::require("tmux", crate::harness::program_runs("tmux", &["-V"])) {
            return None;
        }
        let tmux = Tmux {
            socket: format!("loopc-board-{name}-{}", std::process::id()),
        };
        let out = tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "32",
            "-c",
            &dir.to_string_lossy(),
            command,
        ]);
        assert!(out.status.success(), "{out:?}");
        Some(tmux)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("TERM", "xterm-256color")
            .output()
            .expect("run tmux")
    }

    /// The screen as text.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Waits (polling, bounded) until the screen shows every one of `texts`;
    /// the last screen.
    fn wait_for(&self, repo: &Test, texts: &[&str]) -> String {
        let mut screen = String::new();
        let seen = repo.wait_for(3000, || {
            screen = self.screen();
            texts.iter().all(|t| screen.contains(t))
        });
        assert!(seen, "expected {texts:?} on the board:\n{screen}");
        screen
    }

    /// Whether the session (the board) is still there.
    fn alive(&self) -> bool {
        self.run(&["has-session"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn the_board_follows_a_live_run_without_taking_its_lock_and_quits_on_q() {
    let repo = Test::repo();
    let hold = repo.bin.join("hold");
    let started = repo.bin.join("started");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "slow.sh",
        &format!(
            "#!/bin/sh\necho warming up\ntouch {started}\nwhile [ -e {hold} ]; do sleep 0.05; done\necho a > a.txt\n",
            started = started.display(),
            hold = hold.display(),
        ),
    );
    repo.plan(
        r#"
loop "board" { parallel = 1 }
task a "First task" { run = "sh @BIN@/slow.sh" }
task b "Second task": a { run = "echo b > b.txt" }
task f "Doomed" { run = "echo boom; exit 1"  attempts = 1 }
"#,
    );
    repo.commit("plan");
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(4000, || started.exists()));

    let Some(tmux) = Tmux::board("live", &repo.root, "") else {
        std::fs::remove_file(&hold).unwrap();
        let _ = run.wait();
        return;
    };
    tmux.wait_for(
        &repo,
        &[
            "plan board: running",
            "running (1)",
            "pending (2)",
            "First task",
        ],
    );
    // The selection starts on the first card (b, pending); move right to a.
    tmux.keys(&["Right"]);
    tmux.wait_for(&repo, &["last output: warming up"]);

    // The board holds no lock: the run goes on and finishes.
    std::fs::remove_file(&hold).unwrap();
    let status = run.wait().unwrap().code();
    assert_eq!(status, Some(1), "{}", repo.spawned_stderr());
    // Refreshed (every 2 s) to the end state, with the selection still on a.
    // One wait for all of it: a capture can fall between the terminal
    // writes of one redraw (columns drawn, details not yet).
    tmux.wait_for(
        &repo,
        &[
            "plan board: failed",
            "passed (2)",
            "failed (1)",
            "state: passed",
        ],
    );
    tmux.keys(&["Right"]);
    tmux.wait_for(&repo, &["state: failed", "last output: boom", "logs: "]);

    tmux.keys(&["q"]);
    assert!(repo.wait_for(2000, || !tmux.alive()), "{}", tmux.screen());
}

#[test]
fn a_reel_tree_is_shown_by_stage() {
    let repo = Test::repo()
        .file(
            "specs/todo/later.md",
            "# Later\n\n## a1b2c3d4: Someday\n\nDo it.\n\n**Acceptance:** `true`\n",
        )
        .file(
            "specs/inflight/auth.md",
            "# Auth\n\n## 0badf00d: Login\n\nLog in.\n\n**Acceptance:** `true`\n",
        )
        .file("specs/archived/old.md", "# Old\n");
    let Some(tmux) = Tmux::board("reel", &repo.root, "specs") else {
        return;
    };
    let screen = tmux.wait_for(
        &repo,
        &[
            "todo (1)",
            "inflight (1)",
            "archived (1)",
            "auth.md",
            "later.md",
        ],
    );
    assert!(
        !screen.contains("design ("),
        "no design/ directory:\n{screen}"
    );
    tmux.keys(&["q"]);
    assert!(repo.wait_for(2000, || !tmux.alive()));
}

#[test]
fn without_a_terminal_the_board_says_what_to_use_instead() {
    let repo = Test::repo();
    let out = repo.loopc(&["board"]).status(2).run();
    assert!(
        out.stderr.contains("loopc board needs a terminal"),
        "{out:?}"
    );
    assert!(out.stderr.contains("loopc status --json"), "{out:?}");
    let out = repo.loopc(&["board", "nowhere"]).status(2).run();
    assert!(out.stderr.contains("nowhere is not a directory"), "{out:?}");
}

#[test]
fn the_example_opens_the_board_beside_its_run_and_cleans_up_after_q() {
    let repo = Test::repo();
    let tmp = tempfile::tempdir().unwrap();
    let command = format!(
        "env LOOPC={} TMPDIR={} BOARD_STEP_SECONDS=1 bash {}",
        loopc_path().display(),
        tmp.path().display(),
        examples_dir().join("board/run.sh").display()
    );
    let Some(tmux) = Tmux::start("example", &repo.root, &command) else {
        return;
    };
    // The board comes up on the live run, and follows it to the end (the
    // refresh is every 2 s; the run takes a few seconds).
    tmux.wait_for(&repo, &["plan board: running", "Write the schema"]);
    let mut screen = String::new();
    let ended = repo.wait_for(60_000, || {
        screen = tmux.screen();
        screen.contains("plan board: passed") && screen.contains("passed (6)")
    });
    assert!(ended, "the run did not end on the board:\n{screen}");
    // q quits the board; the script waits for the run, prints its status
    // and removes its scratch directory, and the window closes.
    tmux.keys(&["q"]);
    assert!(repo.wait_for(20_000, || !tmux.alive()), "{}", tmux.screen());
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
