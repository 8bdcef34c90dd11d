//! Gates: agent-judged review gates (approve, reject with feedback, no
//! verdict), `on_fail = block` and `fail`, gates that change tracked files,
//! and `setup` failures as infrastructure failures.

use crate::harness::{SIMPLE_AGENT, Test};

/// A reviewer that approves `<task>.txt` only when it contains "good".
const REVIEWER: &str = r#"#!/bin/sh
cat > "$LOOP_HANDOFF.prompt"
if grep -q good "$LOOP_TASK.txt" && [ -s "$LOOP_DIFF_FILE" ]; then
  printf '{"status":"completed","summary":"looks good"}' > "$LOOP_HANDOFF"
else
  printf '{"status":"failed","summary":"%s.txt must say good"}' "$LOOP_TASK" > "$LOOP_HANDOFF"
fi
"#;

#[test]
fn agent_gate_rejects_with_feedback_then_approves() {
    let repo = Test::repo();
    repo.script("reviewer.sh", REVIEWER);
    repo.script(
        "writer.sh",
        r#"#!/bin/sh
cat > /dev/null
if grep -q "must say good" "$LOOP_FEEDBACK_FILE"; then echo good > "$LOOP_TASK.txt"; else echo meh > "$LOOP_TASK.txt"; fi
"#,
    );
    repo.plan(
        r#"
loop "rev" { }
budget { iterations = 10 }
agent writer { run = "sh @BIN@/writer.sh" }
agent reviewer { run = "sh @BIN@/reviewer.sh" }
gate review { agent = reviewer  prompt = "Review $LOOP_DIFF_FILE" }
task t { agent = writer  prompt = "write"  gates = [review] }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("t")["attempts"], 2);
    assert_eq!(repo.show("loop/rev", "t.txt").unwrap(), "good\n");
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/t/2/feedback.md")).unwrap();
    assert!(fb.contains("t.txt must say good"), "{fb}");
    // The reviewer got its prompt and the verdict instructions on stdin.
    let seen = std::fs::read_to_string(
        repo.root
            .join(".loopc/logs/t/1/gate-review.handoff.json.prompt"),
    )
    .unwrap();
    assert!(seen.starts_with("Review $LOOP_DIFF_FILE"), "{seen}");
    assert!(seen.contains("LOOP_HANDOFF"));
}

#[test]
fn agent_gate_without_verdict_rejects_and_on_fail_block_blocks() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script("silent.sh", "#!/bin/sh\ncat > /dev/null\n");
    repo.plan(
        r#"
loop "nv" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent silent { run = "sh @BIN@/silent.sh" }
gate review { agent = silent  prompt = "review"  on_fail = block }
task t { agent = bot  prompt = "x"  gates = [review] }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "blocked");
    assert_eq!(repo.task("t")["attempts"], 1);
    assert!(
        repo.task("t")["reason"]
            .as_str()
            .unwrap()
            .contains("no verdict")
    );
}

#[test]
fn on_fail_fail_stops_the_run() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "stop" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
gate never { run = "false"  on_fail = fail }
task first { agent = bot  prompt = "x"  gates = [never] }
task second { agent = bot  prompt = "y" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("first"), "failed");
    assert_eq!(repo.task("first")["attempts"], 1);
    assert_eq!(repo.status_of("second"), "pending");
    assert!(
        repo.state()["stop_reason"]
            .as_str()
            .unwrap()
            .contains("on_fail = fail")
    );
}

#[test]
fn a_gate_that_changes_tracked_files_fails() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "dirty" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
gate sneaky = "echo extra >> README"
task t { agent = bot  prompt = "x"  gates = [sneaky]  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert!(
        repo.task("t")["reason"]
            .as_str()
            .unwrap()
            .contains("gate `sneaky` changed tracked files: README")
    );
}

#[test]
fn accept_runs_before_gates() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    let order = repo.bin.join("order");
    repo.plan(&format!(
        r#"
loop "acc" {{ }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
gate g = "echo gate >> {o}"
task t {{ agent = bot  prompt = "x"  accept = "echo accept >> {o}"  gates = [g] }}
"#,
        o = order.display()
    ));
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(std::fs::read_to_string(order).unwrap(), "accept\ngate\n");
}

#[test]
fn setup_failure_is_retried_uncounted_then_blocks() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "setup" { setup = "echo broken; exit 7" }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "blocked");
    assert_eq!(
        repo.task("t")["attempts"],
        0,
        "setup failures are not counted"
    );
    // The first try and its 3 retries.
    let infra = repo.finished_attempts("infrastructure").len();
    assert_eq!(infra, 4);
    assert_eq!(repo.state()["spent"]["iterations"], 0);
}

#[test]
fn infrastructure_failures_keep_their_worktrees_until_clean() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "infra" { setup = "echo setup-out; exit 4" }
budget { iterations = 5 }
agent a { run = "echo hi > hi.txt" }
task one { agent = a  prompt = "x" }
"#,
    );
    repo.commit("plan");
    let r = repo.loopc(&["run"]).status(1).run();
    // The first try and 3 retries.
    let tries = [
        "one.r1-a1",
        "one.r1-a1.retry-2",
        "one.r1-a1.retry-3",
        "one.r1-a1.retry-4",
    ];
    for t in tries {
        assert!(repo.root.join(".loopc/worktrees").join(t).is_dir(), "{t}");
    }
    assert!(r.stdout.contains("kept: 4 worktrees of"), "{r:?}");
    let kept = std::fs::read_to_string(repo.root.join(".loopc/kept")).unwrap();
    for b in ["r1-a1", "r1-a1.retry-2", "r1-a1.retry-3", "r1-a1.retry-4"] {
        assert!(
            kept.lines().any(|l| l == format!("loopc/infra/one/{b}")),
            "{kept}"
        );
    }
    let history = &repo.task("one")["history"];
    assert!(
        history[3]["worktree"]
            .as_str()
            .is_some_and(|w| w.ends_with("one.r1-a1.retry-4")),
        "{history}"
    );
    // The next run leaves them alone: they are kept, not stale.
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(!r.stderr.contains("stale worktree"), "{r:?}");
    assert!(r.stdout.contains("kept: 8 worktrees of"), "{r:?}");
    assert!(repo.root.join(".loopc/worktrees/one.r1-a1").is_dir());
    repo.loopc(&["clean"]).status(0).run();
    assert!(
        repo.extra_worktrees().is_empty(),
        "{:?}",
        repo.extra_worktrees()
    );
    assert!(repo.git(&["branch", "--list", "loopc/*"]).is_empty());
}

#[test]
fn an_agent_gate_that_asks_a_person_blocks_the_task_with_its_question() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "asker.sh",
        "#!/bin/sh\ncat > /dev/null\nprintf '{\"status\":\"needs_human\",\"summary\":\"ask\",\"question\":\"is this ok?\"}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        r#"
loop "g" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent asker { run = "sh @BIN@/asker.sh" }
gate review { agent = asker  prompt = "Review." }
task t { agent = bot  prompt = "x"  gates = [review] }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "blocked");
    assert_eq!(
        repo.task("t")["reason"],
        "gate `review` asks a person: is this ok?"
    );
}
