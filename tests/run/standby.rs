//! Standby, `loopc run --watch` (docs/running.md, "Standby"): a real
//! `loopc` subprocess on a real repository runs a round, waits, runs only
//! what a change affects, reports a plan edited into an error and keeps
//! waiting, and Ctrl-C ends it with the interrupted run's status.

use crate::harness::{SIMPLE_AGENT, Test, signal};
use std::process::Child;

/// Polls of 5 ms: two minutes, for a round on a loaded machine.
const GENEROUS: u32 = 24_000;

/// What the spawned loopc wrote on stdout.
fn stdout(repo: &Test) -> String {
    std::fs::read_to_string(repo.bin.join("loopc.out")).unwrap_or_default()
}

/// Waits for `line` on the spawned loopc's stdout; fails showing both
/// streams (and ends loopc) when it does not come.
fn see(repo: &Test, child: &mut Child, line: &str) {
    if !repo.wait_for(GENEROUS, || stdout(repo).contains(line)) {
        let _ = child.kill();
        panic!(
            "no {line:?} on stdout\n--- stdout\n{}\n--- stderr\n{}",
            stdout(repo),
            repo.spawned_stderr()
        );
    }
}

/// How many times standby said it waits, on stderr.
fn waits(repo: &Test) -> usize {
    repo.spawned_stderr()
        .matches("note: waiting for a change")
        .count()
}

/// Sends SIGINT and checks that standby ends as an interrupted run does
/// (exit 130).
fn ends_on_ctrl_c(repo: &Test, child: &mut Child) {
    signal(child.id(), libc::SIGINT);
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{}", repo.spawned_stderr());
}

/// Writes the agent and `plan`, starts `loopc run --watch`, waits for its
/// first round's `line` and for it to wait.
fn start(repo: &Test, plan: &str, line: &str) -> Child {
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(plan);
    let mut child = repo.loopc(&["run", "--watch"]).spawn();
    see(repo, &mut child, line);
    assert!(repo.wait_for(GENEROUS, || waits(repo) == 1));
    child
}

const PLAN: &str = r#"
loop "wait" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "a" }
task b : a { agent = bot  prompt = "b" }
"#;

#[test]
fn a_task_appended_to_the_plan_runs_alone_an_error_is_waited_on_and_ctrl_c_ends_it() {
    let repo = Test::repo();
    let mut child = start(
        &repo,
        PLAN,
        "round 1: passed: 2 ran (a, b), 0 from the cache\n",
    );
    // The first round's own worktrees and state did not wake a second one:
    // it is the plan's change that does.
    repo.plan(&format!(
        "{PLAN}task c : b {{ agent = bot  prompt = \"c\" }}\n"
    ));
    see(
        &repo,
        &mut child,
        "round 2: passed: 1 ran (c), 2 from the cache\n",
    );
    assert!(
        repo.spawned_stderr()
            .contains("note: round 2: plan.loop changed\n"),
        "{}",
        repo.spawned_stderr()
    );
    assert_eq!(repo.status_of("c"), "passed");
    assert_eq!(repo.status_of("a"), "cached");

    // A plan edited into an error: reported as a run reports it, and waited on.
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 2));
    repo.plan(&format!(
        "{PLAN}task c : b {{ agent = nobody  prompt = \"c\" }}\n"
    ));
    see(&repo, &mut child, "round 3: not run: ");
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 3));
    let err = repo.spawned_stderr();
    assert!(
        err.contains("nobody"),
        "no diagnostic naming the agent:\n{err}"
    );
    assert!(
        err.contains("plan.loop:"),
        "the diagnostic names no place:\n{err}"
    );
    assert!(child.try_wait().unwrap().is_none(), "loopc ended:\n{err}");

    // Fixed again, it runs on.
    repo.plan(&format!(
        "{PLAN}task c : b {{ agent = bot  prompt = \"c\" }}\n"
    ));
    see(
        &repo,
        &mut child,
        "round 4: passed: 0 ran, 3 from the cache\n",
    );
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 4));
    ends_on_ctrl_c(&repo, &mut child);
}

#[test]
fn an_input_file_and_the_base_branch_wake_it_and_other_or_ignored_files_do_not() {
    let repo = Test::repo();
    repo.write("data/x.txt", "one\n");
    repo.write(".gitignore", "build/\n");
    repo.write("build/old.txt", "a build's output\n");
    repo.commit("data");
    let plan = r#"
loop "inp" { }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "t"  inputs = ["data/*.txt", "build/*.txt"] }
"#;
    let mut child = start(
        &repo,
        plan,
        "round 1: passed: 1 ran (t), 0 from the cache\n",
    );
    // A file no task reads, one git ignores (in no commit, so in no key),
    // then an input: only the input wakes it.
    repo.write("notes.md", "not read by the plan\n");
    repo.write("build/new.txt", "ignored\n");
    repo.write("data/x.txt", "two\n");
    see(&repo, &mut child, "round 2: ");
    assert!(
        repo.spawned_stderr()
            .contains("note: round 2: data/x.txt changed\n"),
        "{}",
        repo.spawned_stderr()
    );
    // Attempts start from a commit: an uncommitted input changes no key.
    see(
        &repo,
        &mut child,
        "round 2: passed: 0 ran, 1 from the cache\n",
    );
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 2));
    // Committed, the base branch moved and the input changed: `t` runs.
    repo.git(&["add", "data/x.txt"]);
    repo.git(&["commit", "-q", "-m", "two"]);
    see(
        &repo,
        &mut child,
        "round 3: passed: 1 ran (t), 0 from the cache\n",
    );
    let err = repo.spawned_stderr();
    let woke = err.lines().find(|l| l.starts_with("note: round 3: "));
    assert!(
        woke.is_some_and(|l| l.contains("the base branch `main`")),
        "{err}"
    );
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 3));
    ends_on_ctrl_c(&repo, &mut child);
}

#[test]
fn ctrl_c_during_a_round_ends_standby_as_it_ends_a_run() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\ntouch {}\ni=0\nwhile [ $i -lt 2000 ]; do sleep 0.05; i=$((i+1)); done\n",
            started.display()
        ),
    );
    repo.plan(PLAN);
    let mut child = repo.loopc(&["run", "--watch"]).spawn();
    assert!(
        repo.wait_for(GENEROUS, || started.exists()),
        "the agent never started"
    );
    ends_on_ctrl_c(&repo, &mut child);
    assert!(
        stdout(&repo).contains("round 1: interrupted: 1 ran (a), 0 from the cache"),
        "{}",
        stdout(&repo)
    );
    assert_eq!(waits(&repo), 0, "{}", repo.spawned_stderr());
}

#[test]
fn a_deleted_plan_is_waited_on_once_until_it_comes_back() {
    let repo = Test::repo();
    let mut child = start(
        &repo,
        PLAN,
        "round 1: passed: 2 ran (a, b), 0 from the cache\n",
    );
    let plan = repo.root.join("plan.loop");
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::remove_file(&plan).unwrap();
    see(&repo, &mut child, "round 2: not run: ");
    assert!(repo.wait_for(GENEROUS, || waits(&repo) == 2));
    // Back again: the very next round runs it. Before, the plan's absence
    // woke round after round (hundreds a second) until it came back.
    std::fs::write(&plan, text).unwrap();
    see(
        &repo,
        &mut child,
        "round 3: passed: 0 ran, 2 from the cache\n",
    );
    assert!(!stdout(&repo).contains("round 4:"), "{}", stdout(&repo));
    ends_on_ctrl_c(&repo, &mut child);
}

/// A plan in no repository cannot be waited on: the error, exit 2, and no
/// round line that says it again.
#[test]
fn a_plan_in_no_repository_ends_standby_at_once() {
    let dir = Test::new();
    dir.write("plan.loop", "task a { run = \"true\" }\n");
    let r = dir.loopc(&["run", "--watch"]).status(2).run();
    assert_eq!(r.stdout, "", "{r:?}");
    assert!(
        r.stderr
            .starts_with("error: plan.loop is not inside a git repository"),
        "{r:?}"
    );
}

/// A round's `ran` counts the tasks that had an attempt in it: one not run
/// for the failures remembered under its key is not among them.
#[test]
fn a_task_not_run_for_its_remembered_failures_is_not_counted_as_ran() {
    let repo = Test::repo();
    let plan = "task a { run = \"false\"  attempts = 1 }\ntask b: a { run = \"true\" }\n";
    repo.plan(plan);
    repo.loopc(&["run"]).status(1).run();
    let mut child = start(
        &repo,
        plan,
        "round 1: failed: 0 ran, 0 from the cache, 2 did not pass (a, b)\n",
    );
    ends_on_ctrl_c(&repo, &mut child);
}
