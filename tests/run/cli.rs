//! The command surface of the interpreter: exit status 2 before any work
//! for an unusable plan or repository, `loopc status`, `loopc clean`, the
//! repository lock, and the budget stop (exit 3).

use crate::harness::{SIMPLE_AGENT, Test};

const PLAN: &str = r#"
loop "cli" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
"#;

fn no_work_started(repo: &Test) {
    assert!(
        !repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cli"])
            || repo.git(&["rev-parse", "loop/cli"]) == repo.git(&["rev-parse", "main"])
    );
    assert!(!repo.root.join(".loopc/worktrees/a.r1-a1").exists());
}

#[test]
fn plan_errors_exit_2_with_diagnostics() {
    let repo = Test::repo();
    repo.plan("task a { prompt = \"x\"  agent = nobody }\n");
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("E0005"), "{r:?}");
    no_work_started(&repo);
}

/// A `PATH` whose only `git` is `git` (a directory made for it), with
/// the shell and coreutils still found.
fn path_with_only(repo: &Test, git: &std::path::Path) -> std::ffi::OsString {
    let dir = repo.bin.join("only-git");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("git");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(git, &link).unwrap();
    std::env::join_paths([dir.as_path(), std::path::Path::new("/bin")]).unwrap()
}

#[test]
fn a_git_older_than_2_40_is_refused_before_any_work() {
    // Debian 12's git is 2.39: replays need `merge-tree --merge-base`
    // (2.40). Runs where such a git is installed (this machine and CI
    // have Debian's beside a newer one).
    let old = std::path::Path::new("/usr/bin/git");
    let version = std::process::Command::new(old).arg("version").output();
    let Ok(version) = version else {
        eprintln!("SKIPPED: no /usr/bin/git");
        return;
    };
    let version = String::from_utf8_lossy(&version.stdout).to_string();
    let minor: u32 = version
        .trim()
        .strip_prefix("git version 2.")
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(99);
    if minor >= 40 {
        eprintln!("SKIPPED: /usr/bin/git is not older than 2.40 ({version})");
        return;
    }
    let repo = Test::repo();
    repo.plan("task a { run = \"echo a > a.txt\" }\n");
    repo.commit("plan");
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = repo
            .loopc(args)
            .env("PATH", path_with_only(&repo, old))
            .status(2)
            .run();
        assert!(
            r.stderr
                .contains("error: loopc needs git 2.40 or newer, and the `git` on PATH is 2."),
            "{r:?}"
        );
        assert!(r.stderr.contains("hint: install a newer git"), "{r:?}");
    }
    assert!(!repo.root.join(".loopc/state.json").exists());
    no_work_started(&repo);
}

#[test]
fn without_git_on_path_it_says_git_is_missing() {
    let repo = Test::repo();
    repo.plan("task a { run = \"true\" }\n");
    let empty = repo.bin.join("no-git");
    std::fs::create_dir_all(&empty).unwrap();
    let path = std::env::join_paths([empty.as_path()]).unwrap();
    let r = repo.loopc(&["run"]).env("PATH", path).status(2).run();
    assert!(
        r.stderr
            .contains("error: cannot run git: No such file or directory (os error 2); loopc needs git (2.40 or newer) on PATH"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("not inside a git repository"), "{r:?}");
}

#[test]
fn not_a_git_repository_exits_2() {
    let repo = Test::repo();
    let outside = repo.bin.join("plain");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("plan.loop"), "task a { run = \"true\" }\n").unwrap();
    let r = repo.loopc(&["run"]).current_dir(&outside).status(2).run();
    assert!(r.stderr.contains("not inside a git repository"), "{r:?}");
    // Said first, before a program the plan names is looked for.
    std::fs::write(
        outside.join("plan.loop"),
        "task a { run = \"no-such-program-here x\" }\n",
    )
    .unwrap();
    let r = repo.loopc(&["run"]).current_dir(&outside).status(2).run();
    assert!(r.stderr.contains("not inside a git repository"), "{r:?}");
    assert!(!r.stderr.contains("no-such-program-here"), "{r:?}");
}

#[test]
fn missing_base_branch_exits_2() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(&PLAN.replace("loop \"cli\" { }", "loop \"cli\" { base = \"nope\" }"));
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr
            .starts_with("error: plan.loop:2:21: the base branch `nope` does not exist in "),
        "{r:?}"
    );
    no_work_started(&repo);
}

#[test]
fn merge_in_progress_exits_2() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("f.txt", "one\n");
    repo.commit("f");
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("f.txt", "two\n");
    repo.commit("two");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("f.txt", "three\n");
    repo.commit("three");
    assert!(!repo.git_ok(&["merge", "-q", "other"]));
    repo.plan(PLAN);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("in the middle of a merge"), "{r:?}");
    no_work_started(&repo);
}

#[test]
fn integration_branch_checked_out_exits_2() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.git(&["checkout", "-q", "-b", "loop/cli"]);
    repo.plan(PLAN);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("is checked out"), "{r:?}");
}

#[test]
fn status_and_clean() {
    let repo = Test::repo();
    repo.loopc(&["status"]).status(2).run();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "fail.sh",
        "#!/bin/sh\ncat >/dev/null\necho x > x.txt\nexit 3\n",
    );
    repo.plan(
        r#"
loop "cli" { parallel = 2 }
budget { iterations = 10  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent bad { run = "sh @BIN@/fail.sh" }
task a { agent = bot  prompt = "x" }
task b { agent = bad  prompt = "y"  attempts = 2 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(r.stderr.contains("exit status 3"), "{r:?}");

    let s = repo.loopc(&["status"]).status(0).run();
    assert!(s.stdout.contains("a     passed"), "{s:?}");
    assert!(s.stdout.contains("b     failed"), "{s:?}");
    let j = repo.loopc(&["status", "--json"]).run();
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["version"], 3);
    assert_eq!(v["tasks"][1]["status"], "failed");
    assert_eq!(v["tasks"][1]["attempts"], 2);

    // Failed attempts left worktrees and task branches.
    assert!(repo.root.join(".loopc/worktrees/b.r1-a1").is_dir());
    assert_ne!(repo.git(&["branch", "--list", "loopc/*"]), "");
    // A user branch in a look-alike namespace is not loopc's.
    repo.git(&["branch", "loopc/mine"]);
    repo.loopc(&["clean"]).status(0).run();
    assert_eq!(repo.git(&["branch", "--list", "loopc/*/*/*"]), "");
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loopc/mine"]));
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
    assert!(!repo.root.join(".loopc/logs").exists());
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cli"]));
    // status still works after clean.
    repo.loopc(&["status"]).run();
    let at = repo.git(&["rev-parse", "refs/heads/loop/cli"]);
    let out = repo.loopc(&["clean", "--integration"]).status(0).run();
    // Its work may be nowhere else: the way back is said.
    assert!(
        out.stdout.contains(&format!(
            "removed the integration branch loop/cli (it was at {}: `git branch loop/cli {at}` brings it back)",
            &at[..10]
        )),
        "{out:?}"
    );
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cli"]));
    assert_eq!(repo.git(&["symbolic-ref", "--short", "HEAD"]), "main");
    // A second time there is nothing to remove, and that is not an error.
    repo.loopc(&["clean", "--integration"])
        .stdout("no worktrees, task branches or logs to remove\nno integration branch to remove (loop/cli does not exist)\n")
        .status(0)
        .run();
}

#[test]
fn second_run_is_refused_while_one_holds_the_lock() {
    let repo = Test::repo();
    let sync = repo.bin.join("started");
    let release = repo.bin.join("release");
    repo.script(
        "waiter.sh",
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch {s}\ni=0\nwhile [ ! -e {r} ] && [ $i -lt 500 ]; do i=$((i+1)); sleep 0.02; done\necho w > w.txt\n",
            s = sync.display(),
            r = release.display()
        ),
    );
    repo.plan(
        r#"
loop "cli" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/waiter.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let mut first = repo.loopc(&["run"]).spawn();
    let mut i = 0;
    while !sync.exists() && i < 500 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        i += 1;
    }
    let second = repo.loopc(&["run"]).output();
    // Read-only commands still work while the lock is held.
    let status = repo.loopc(&["status", "--json"]).output();
    std::fs::write(&release, "").unwrap();
    let first_code = first.wait().unwrap().code();
    assert_eq!(second.status, 2, "{second:?}");
    assert!(second.stderr.contains("holds the lock"), "{second:?}");
    assert_eq!(status.status, 0, "{status:?}");
    assert_eq!(first_code, Some(0));
}

#[test]
fn iterations_budget_stops_with_exit_3() {
    let repo = Test::repo();
    repo.script("fail.sh", "#!/bin/sh\ncat >/dev/null\nexit 1\n");
    repo.plan(
        r#"
loop "cli" { }
budget { iterations = 2  failures = 10 }
agent bad { run = "sh @BIN@/fail.sh" }
task a { agent = bad  prompt = "x"  attempts = 5 }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    let s = repo.state();
    assert_eq!(s["status"], "stopped");
    assert_eq!(s["spent"]["iterations"], 2);
    assert!(
        s["stop_reason"].as_str().unwrap().contains("iterations"),
        "{s}"
    );
}

#[test]
fn circuit_breaker_stops_with_exit_3() {
    let repo = Test::repo();
    repo.script("fail.sh", "#!/bin/sh\ncat >/dev/null\nexit 1\n");
    repo.plan(
        r#"
loop "cli" { }
budget { iterations = 20  failures = 2 }
agent bad { run = "sh @BIN@/fail.sh" }
task a { agent = bad  prompt = "x"  attempts = 5 }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    assert!(
        repo.state()["stop_reason"]
            .as_str()
            .unwrap()
            .contains("circuit breaker")
    );
    assert_eq!(repo.task("a")["attempts"], 2);
}

#[test]
fn time_budget_stops_running_attempts_with_exit_3() {
    let repo = Test::repo();
    repo.script("sleepy.sh", "#!/bin/sh\ncat >/dev/null\nsleep 1000\n");
    repo.plan(
        r#"
loop "cli" { }
budget { time = 300ms iterations = 5 }
agent bot { run = "sh @BIN@/sleepy.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.status_of("a"), "interrupted");
    // The attempt ran until the budget killed it: it counts (unlike one
    // cut off by Ctrl-C, see run_signals).
    assert_eq!(
        repo.task("a")["attempts"],
        1,
        "an attempt killed by the time budget is counted"
    );
    assert_eq!(repo.state()["spent"]["iterations"], 1);
    assert!(r.stdout.contains("1 agent attempt,"), "{r:?}");
    let status = repo.loopc(&["status"]).run();
    assert!(
        status.stdout.contains("stopped by the `time` budget"),
        "{status:?}"
    );
    assert!(
        repo.state()["stop_reason"]
            .as_str()
            .unwrap()
            .contains("budget `time`")
    );
}

#[test]
fn sigterm_kills_running_work_and_exits_130() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    let pidfile = repo.bin.join("agent.pid");
    repo.script(
        "sleepy.sh",
        &format!(
            "#!/bin/sh\ncat >/dev/null\necho $$ > {p}\ntouch {s}\nsleep 1000\n",
            p = pidfile.display(),
            s = started.display()
        ),
    );
    repo.plan(
        r#"
loop "cli" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/sleepy.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
"#,
    );
    let mut child = repo.loopc(&["run"]).spawn();
    let mut i = 0;
    while !started.exists() && i < 500 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        i += 1;
    }
    assert!(started.exists(), "the agent never started");
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130));
    let state = repo.state();
    assert_eq!(state["status"], "interrupted");
    // Not "run interrupted: interrupted".
    assert_eq!(state["stop_reason"], "SIGTERM received");
    assert!(
        repo.spawned_stderr()
            .contains("loopc: run interrupted: SIGTERM received"),
        "{}",
        repo.spawned_stderr()
    );
    assert_eq!(repo.status_of("a"), "interrupted");
    assert_eq!(repo.status_of("b"), "pending");
    // The agent's process is gone (or a zombie awaiting init).
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    };
    let mut tries = 0;
    while alive() && tries < 250 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        tries += 1;
    }
    assert!(!alive(), "agent {pid} survived the interrupt");
}

#[test]
fn missing_plan_file_exits_2() {
    let repo = Test::repo();
    let r = repo.loopc(&["run", "nope.loop"]).status(2).run();
    assert!(r.stderr.contains("nope.loop"), "{r:?}");
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("no plan given"), "{r:?}");
}

#[test]
fn jobs_flag_overrides_parallel() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "cli" { parallel = 4 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b { agent = bot  prompt = "y" }
task c { agent = bot  prompt = "z" }
"#,
    );
    repo.loopc(&["run", "-j", "1"]).status(0).run();
    assert_eq!(repo.events()[0]["parallel"], 1);
    // One at a time: each attempt finishes before the next starts.
    let a_end = repo.seq_of("attempt_finished", "a");
    let b_start = repo.seq_of("attempt_started", "b");
    let b_end = repo.seq_of("attempt_finished", "b");
    let c_start = repo.seq_of("attempt_started", "c");
    assert!(a_end < b_start && b_end < c_start);
    // Every merge was a fast-forward: nothing ran concurrently.
    assert!(
        repo.events()
            .iter()
            .filter(|e| e["event"] == "merged")
            .all(|e| e["how"] == "fast_forward")
    );
}

/// A directory that holds no REEL spec, named as the plan, stands for its
/// plan (its `plan.loop`, else its only `*.loop` file) in `run`, `graph`
/// and `list`, as when the command is run there; several plans and no
/// `plan.loop` are still refused, naming the way out.
#[test]
fn a_directory_named_as_the_plan_stands_for_its_plan() {
    let repo = Test::repo();
    repo.write("r/plan.loop", "task a { run = \"echo a > a.txt\" }\n");
    repo.write("two/x.loop", "task x { run = \"true\" }\n");
    repo.write("two/y.loop", "task y { run = \"true\" }\n");
    repo.commit("plans");
    repo.loopc(&["run", "r"]).status(0).run();
    assert_eq!(repo.show("loop/plan", "a.txt").as_deref(), Some("a\n"));
    repo.loopc(&["list", "r"])
        .status(0)
        .stdout("task  status  title\na     passed\n")
        .run();
    repo.loopc(&["graph", "r", "--format", "mermaid"])
        .status(0)
        .stdout("flowchart TD\n  t0[\"a<br/>command\"]\n")
        .run();
    repo.loopc(&["graph", "two"])
        .status(2)
        .stderr_contains("a directory of 2 .loop plan(s) and no REEL spec")
        .run();
}

#[test]
fn status_during_a_run_counts_a_running_tasks_time_to_now() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    let release = repo.bin.join("release");
    repo.plan(&format!(
        "loop \"s\" {{ }}\ntask a {{ run = \"touch {s}; while [ ! -e {r} ]; do sleep 0.02; done; echo a > a.txt\" }}\n",
        s = started.display(),
        r = release.display()
    ));
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(4000, || started.exists()),
        "the task never started"
    );
    // Its first attempt has not ended: state.json counts no time for it
    // yet, and `status` counts it to now.
    let time_of_a = || {
        let out = repo.loopc(&["status"]).run().stdout;
        out.lines()
            .find(|l| l.starts_with("a "))
            .and_then(|l| l.split_whitespace().nth(3).map(str::to_string))
            .unwrap_or_default()
    };
    let counted = repo.wait_for(1000, || time_of_a() != "-");
    std::fs::write(&release, "").unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(0));
    assert!(counted, "a running task's time stayed `-`");
}

#[test]
fn loopc_run_and_status_refuse_a_worktree_loopc_made() {
    let repo = Test::repo();
    repo.plan("loop \"k\" { }\ntask a { run = \"exit 1\"  attempts = 1 }\n");
    repo.loopc(&["run", "-q"]).status(1).run();
    let kept = repo.root.join(".loopc/worktrees/a.r1-a1");
    assert!(kept.is_dir());
    // Without a plan there, `run` says where it is, not `loopc init`.
    let r = repo.loopc(&["run"]).current_dir(&kept).status(2).run();
    assert!(
        r.stderr.contains("is a worktree loopc made for an attempt"),
        "{r:?}"
    );
    std::fs::write(
        kept.join("plan.loop"),
        "loop \"k\" { }\ntask b { run = \"true\" }\n",
    )
    .unwrap();
    for args in [&["run"][..], &["status"][..], &["clean"][..]] {
        let r = repo.loopc(args).current_dir(&kept).status(2).run();
        assert!(
            r.stderr.contains("is a worktree loopc made for an attempt, not a checkout to run loopc in; run it from the checkout it belongs to: cd "),
            "{args:?}: {r:?}"
        );
    }
    assert!(!kept.join(".loopc").join("state.json").exists());
}

#[test]
fn status_json_is_state_json_field_for_field_in_its_order() {
    let repo = Test::repo();
    repo.plan("loop \"o\" { }\ntask a { run = \"echo a > a.txt\" }\n");
    repo.loopc(&["run", "-q"]).status(0).run();
    let printed = repo.loopc(&["status", "--json"]).run().stdout;
    let file = std::fs::read_to_string(repo.root.join(".loopc/state.json")).unwrap();
    assert_eq!(printed, file);
    assert!(printed.starts_with("{\n  \"version\": 3,"), "{printed}");
}

#[test]
fn a_mistyped_plan_file_name_is_said_to_be_no_file_either() {
    let repo = Test::repo();
    repo.plan("loop \"t\" { }\ntask a { run = \"echo a > a.txt\" }\n");
    repo.loopc(&["run", "plan.lop"])
        .stderr(
            "error: no task named `plan.lop` in the plan, and no file `plan.lop` (a plan is named first: `loopc run PLAN [TASK…]`)\n",
        )
        .status(2)
        .run();
}
