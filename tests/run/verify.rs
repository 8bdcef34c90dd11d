//! The verification pass (docs/running.md, "Already satisfied: `verify`"):
//! a task that verifies runs its `accept` on its starting commit first,
//! and one that passes there is already satisfied: no agent, no change,
//! recorded and cached like a pass.

use crate::harness::Test;

/// An agent that leaves a mark outside the repository when it starts,
/// then writes its task's file.
fn marking_agent(repo: &Test) {
    let marks = repo.bin.join("marks");
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "{marks}"
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{{"status":"completed","summary":"wrote it"}}' > "$LOOP_HANDOFF"
"#,
            marks = marks.display()
        ),
    );
}

/// The tasks whose agent started, in order.
fn agents_started(repo: &Test) -> Vec<String> {
    std::fs::read_to_string(repo.bin.join("marks"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A repository whose `done.txt` is already there: task `done` is
/// satisfied before any work; `todo` is not.
fn repo_with(plan: &str) -> Test {
    let repo = Test::repo();
    repo.write("done.txt", "it is done\n");
    repo.commit("done already");
    marking_agent(&repo);
    repo.plan(plan);
    repo
}

const PLAN: &str = r#"
loop "v" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot }
task done "Write done.txt" { prompt = "Write done.txt."  accept = "test -s done.txt"  verify = true }
task todo "Write todo.txt": done { prompt = "Write todo.txt."  accept = "test -s todo.txt"  verify = true }
"#;

#[test]
fn a_task_whose_accept_passes_already_is_satisfied_without_an_agent() {
    let repo = repo_with(PLAN);
    let base = repo.git(&["rev-parse", "HEAD"]);
    let out = repo.loopc(&["run"]).status(0).run();
    // `done` was never worked; `todo` was verified, failed it, and worked.
    assert_eq!(agents_started(&repo), ["todo"], "{out:?}");
    let done = repo.task("done");
    assert_eq!(done["status"], "already_satisfied", "{done}");
    assert_eq!(done["attempts"], 0, "{done}");
    assert_eq!(done["history"][0]["outcome"], "already_satisfied");
    assert_eq!(repo.status_of("todo"), "passed");
    assert_eq!(repo.task("todo")["attempts"], 1);
    assert_eq!(repo.state()["spent"]["iterations"], 1);
    // No change: the integration branch holds `todo`'s work on the base.
    let parent = repo.git(&["rev-parse", "loop/v~1"]);
    assert_eq!(parent, base);
    assert_eq!(repo.show("loop/v", "todo.txt").unwrap(), "made by todo\n");
    // The verification's own log, beside the attempt's.
    assert!(
        repo.root
            .join(".loopc/logs/done/1/verify-accept.log")
            .is_file()
    );
    assert!(
        repo.root
            .join(".loopc/logs/todo/1/verify-accept.log")
            .is_file()
    );
    // Shown in the terminal, the summary and the events.
    assert!(
        out.stderr.contains("loopc: done: already satisfied"),
        "{out:?}"
    );
    assert!(
        out.stdout
            .contains("2/2 tasks passed (1 already satisfied), 1 agent attempt"),
        "{out:?}"
    );
    let finished: Vec<_> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "task_finished" && e["task"] == "done")
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "already_satisfied");
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(status.stdout.contains("already satisfied"), "{status:?}");
    // Cached like a pass: the rerun runs no agent at all.
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents_started(&repo), ["todo"]);
    assert_eq!(repo.status_of("done"), "cached");
    assert_eq!(repo.status_of("todo"), "cached");
}

#[test]
fn without_verify_the_agent_works_a_satisfied_task() {
    let repo = repo_with(&PLAN.replace("verify = true", "verify = false"));
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents_started(&repo), ["done", "todo"]);
    assert_eq!(repo.status_of("done"), "passed");
}

#[test]
fn run_verify_and_defaults_verify_every_task() {
    let plain = PLAN.replace("  verify = true", "");
    let repo = repo_with(&plain);
    let dry = repo
        .loopc(&["run", "--dry-run", "--verify"])
        .status(0)
        .run();
    assert!(
        dry.stdout.contains("done: run") && dry.stdout.contains("would verify first"),
        "{dry:?}"
    );
    let without = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(!without.stdout.contains("verify"), "{without:?}");
    repo.loopc(&["run", "--verify"]).status(0).run();
    assert_eq!(agents_started(&repo), ["todo"]);
    assert_eq!(repo.status_of("done"), "already_satisfied");

    // `defaults { verify = true }`, and a task that says `verify = false`.
    let repo = repo_with(
        &plain
            .replace(
                "defaults { agent = bot }",
                "defaults { agent = bot  verify = true }",
            )
            .replace(
                "accept = \"test -s todo.txt\"",
                "accept = \"test -s done.txt\"  verify = false",
            ),
    );
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run();
    let line = |task: &str| {
        dry.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{task}: ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("done").contains("would verify first"), "{dry:?}");
    assert!(!line("todo").contains("verify"), "{dry:?}");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents_started(&repo), ["todo"]);
    assert_eq!(repo.status_of("done"), "already_satisfied");
    assert_eq!(repo.status_of("todo"), "passed");
}

/// An already satisfied task is cached at the commit it was satisfied on:
/// on a new base its `accept` runs again before it is replayed, and once
/// the base no longer satisfies it, its agent works it. Before, the entry
/// was replayed with nothing to apply and no check, and the integration
/// branch said `done` passed on a commit without done.txt.
#[test]
fn an_already_satisfied_task_is_checked_again_on_a_new_base() {
    let repo = repo_with(PLAN);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents_started(&repo), ["todo"]);
    // A new base that still satisfies it: checked again, replayed.
    repo.write("other.txt", "x\n");
    repo.commit("unrelated");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("done"), "cached");
    assert_eq!(agents_started(&repo), ["todo"]);
    // A base without done.txt: the replay's accept fails, the agent works
    // (and `todo`, which starts from what `done` now produced, runs too).
    repo.git(&["rm", "-q", "done.txt"]);
    repo.commit("done.txt gone");
    let out = repo.loopc(&["run"]).status(0).run();
    assert!(
        out.stderr
            .contains("done: cache entry not used: the replayed work failed its checks"),
        "{out:?}"
    );
    assert_eq!(agents_started(&repo)[1..], ["done", "todo"], "{out:?}");
    assert_eq!(repo.status_of("done"), "passed", "{out:?}");
    assert_eq!(repo.show("loop/v", "done.txt").unwrap(), "made by done\n");
}
