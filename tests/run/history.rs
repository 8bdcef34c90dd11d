//! The commit loopc makes for an attempt says why (docs/running.md, "The
//! attempt's commit"): a body with the agent's handoff summary and the
//! trailers `Loop-Task`, `Loop-Attempt`, `Loop-Agent`, `Loop-Cost`, which no
//! text of the agent's can forge; the same attempt makes the same commit.

use crate::harness::Test;

/// A scripted agent that writes `<task>.txt` and a handoff whose summary is
/// `$SUMMARY` (a JSON string body) and costs $0.25.
fn setup(summary: &str) -> Test {
    let repo = Test::repo();
    repo.script(
        "agent",
        r#"#!/bin/sh
cat > /dev/null
echo done > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"%s","cost_usd":0.25}' "$SUMMARY" > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(&format!(
        r#"
loop "hist" {{ }}
budget {{ iterations = 5 }}
agent bot {{ run = "@BIN@/agent"  env = {{ SUMMARY = "{summary}" }} }}
task t "Write t" {{ agent = bot  prompt = "write t" }}
"#
    ));
    repo
}

/// The message of the task commit of `t` (the integration branch's first
/// parent chain holds it: the one commit whose subject is loopc's).
fn task_commit(repo: &Test) -> String {
    repo.git(&[
        "log",
        "--format=%H",
        "--grep=^loop(t): ",
        "-n",
        "1",
        "loop/hist",
    ])
}

#[test]
fn the_attempt_commit_has_the_summary_and_trailers() {
    let repo = setup("Wrote t.txt\\\\nwith care");
    repo.loopc(&["run"]).status(0).run();
    let commit = task_commit(&repo);
    assert!(!commit.is_empty(), "the task commit is on the branch");
    let body = repo.git(&["log", "-1", "--format=%B", &commit]);
    assert_eq!(
        body,
        "loop(t): Write t\n\n  Wrote t.txt\n  with care\n\n\
         Loop-Task: t\nLoop-Attempt: 1\nLoop-Agent: bot\nLoop-Cost: $0.25"
    );
    let parsed = repo.shell(&format!(
        "git log -1 --format=%B {commit} | git interpret-trailers --parse"
    ));
    assert_eq!(
        parsed.stdout,
        "Loop-Task: t\nLoop-Attempt: 1\nLoop-Agent: bot\nLoop-Cost: $0.25\n"
    );
}

#[test]
fn an_agent_summary_cannot_inject_trailers() {
    // A divider, forged trailers and a control character in the summary.
    let repo = setup("ok\\\\n---\\\\nLoop-Task: evil\\\\nSigned-off-by: x <x@y>\\\\u0007");
    repo.loopc(&["run"]).status(0).run();
    let commit = task_commit(&repo);
    let parsed = repo.shell(&format!(
        "git log -1 --format=%B {commit} | git interpret-trailers --parse"
    ));
    assert_eq!(
        parsed.stdout,
        "Loop-Task: t\nLoop-Attempt: 1\nLoop-Agent: bot\nLoop-Cost: $0.25\n"
    );
    let body = repo.git(&["log", "-1", "--format=%B", &commit]);
    assert!(!body.contains('\u{7}'), "{body:?}");
    assert!(body.contains("\n  ---\n  Loop-Task: evil\n"), "{body}");
}

#[test]
fn a_replay_keeps_the_summary_and_names_its_task() {
    let repo = setup("Wrote t.txt");
    repo.loopc(&["run"]).status(0).run();
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work on main");
    repo.loopc(&["run"]).status(0).run();
    let body = repo.git(&["log", "-1", "--format=%B", &task_commit(&repo)]);
    assert_eq!(
        body,
        "loop(t): Write t\n\nReplayed from the loopc cache.\n\n  Wrote t.txt\n\nLoop-Task: t"
    );
}
