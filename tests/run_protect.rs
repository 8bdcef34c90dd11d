//! Checks an agent cannot game (docs/running.md, "Checks an agent cannot
//! game"): protected paths, the check the plan names is the check that
//! runs, verdicts only from a gate's own exit status or handoff, gates'
//! litter, and read-only reviewers. Each test is a hostile scripted agent
//! in a real repository.

use crate::harness::{SIMPLE_AGENT, Test};

/// A repository whose `verify.sh` fails until `fixed.txt` says "fixed",
/// with a test script under `tests/`.
fn checked_repo() -> Test {
    let repo = Test::repo();
    repo.write(
        "verify.sh",
        "grep -q fixed fixed.txt 2>/dev/null || { echo 'fixed.txt must say fixed'; exit 1; }\n",
    );
    repo.write("tests/test_a.sh", "exit 1\n");
    repo.commit("checks");
    repo
}

/// An agent running `body` (a shell script) in its worktree, then handing off.
fn hostile(repo: &Test, body: &str) {
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\n{body}\nprintf '{{\"status\":\"completed\"}}' > \"$LOOP_HANDOFF\"\n"
        ),
    );
}

fn reason(repo: &Test, task: &str) -> String {
    repo.task(task)["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn feedback(repo: &Test, task: &str, attempt: u32) -> String {
    std::fs::read_to_string(
        repo.root
            .join(format!(".loopc/logs/{task}/{attempt}/feedback.md")),
    )
    .unwrap_or_default()
}

#[test]
fn changing_a_protected_path_fails_and_the_feedback_names_it() {
    let repo = checked_repo();
    // Each attempt tries another way around the check.
    hostile(
        &repo,
        r#"case $LOOP_ATTEMPT in
1) echo 'exit 0' > verify.sh ;;
2) rm tests/test_a.sh ;;
3) chmod +x verify.sh ;;
4) git mv -k tests/test_a.sh tests/test_b.sh ;;
5) echo new > tests/new.sh ;;
esac
echo fixed > fixed.txt"#,
    );
    repo.plan(
        r#"
loop "p" { protect = ["verify.sh"] }
budget { iterations = 10 failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot  protect = ["tests/**"] }
task t { prompt = "fix it"  accept = "sh verify.sh"  attempts = 5 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "failed");
    assert_eq!(repo.task("t")["attempts"], 5);
    assert!(
        reason(&repo, "t").contains("tests/new.sh"),
        "{}",
        reason(&repo, "t")
    );
    for (attempt, paths) in [
        (2, &["verify.sh"][..]),
        (3, &["tests/test_a.sh"]),
        (4, &["verify.sh"]),
        (5, &["tests/test_a.sh", "tests/test_b.sh"]),
    ] {
        let fb = feedback(&repo, "t", attempt);
        assert!(fb.contains("not the checks"), "{fb}");
        for p in paths {
            assert!(fb.contains(&format!("- {p}\n")), "attempt {attempt}: {fb}");
        }
    }
    // Nothing of it was merged.
    assert_eq!(
        repo.show("loop/p", "verify.sh").unwrap(),
        repo.show("main", "verify.sh").unwrap()
    );
}

#[test]
fn may_change_lifts_a_protection_for_one_task() {
    let repo = checked_repo();
    hostile(
        &repo,
        "echo 'exit 0' > tests/test_a.sh\necho fixed > fixed.txt",
    );
    repo.plan(
        r#"
loop "m" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot  protect = ["tests/**", "verify.sh"] }
task t { prompt = "write the test"  may_change = ["tests/**"]  accept = "sh verify.sh" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/m", "tests/test_a.sh").unwrap(), "exit 0\n");
}
