//! The prompt an agent receives says how its task is checked: its title,
//! its `accept` command and each gate (docs/running.md, "The agent
//! protocol"), on every attempt.

use crate::harness::{SIMPLE_AGENT, Test};

/// A reviewer that approves whatever it is shown.
const APPROVER: &str = r#"#!/bin/sh
cat > /dev/null
printf '{"status":"completed","summary":"fine"}' > "$LOOP_HANDOFF"
"#;

#[test]
fn the_prompt_names_the_title_the_accept_command_and_every_gate() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script("approve.sh", APPROVER);
    repo.plan(
        r#"
loop "told" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
agent reviewer { run = "sh @BIN@/approve.sh" }
gate lint = "test -s checked.txt"
gate review {
  agent  = reviewer
  prompt = """
    Check that checked.txt says who made it.
    Reject an empty file.
    """
}
task checked "Write the checked file" {
  agent  = bot
  prompt = "Write checked.txt."
  accept = "grep -q made checked.txt"
  gates  = [lint, review]
}
task bare: checked { agent = bot  prompt = "Write bare.txt." }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let prompt =
        std::fs::read_to_string(repo.root.join(".loopc/logs/checked/1/prompt.md")).unwrap();
    insta::assert_snapshot!("checked_prompt", prompt);
    // A task with no check is told so, under the same heading.
    let bare = std::fs::read_to_string(repo.root.join(".loopc/logs/bare/1/prompt.md")).unwrap();
    assert!(
        bare.contains(
            "## How this task is checked\nTask `bare`\nNo acceptance command and no gate"
        ),
        "{bare}"
    );
    // The reviewer is the check: its own prompt is not told about checks.
    let review = std::fs::read_to_string(
        repo.root
            .join(".loopc/logs/checked/1/gate-review.prompt.md"),
    )
    .unwrap();
    assert!(!review.contains("How this task is checked"), "{review}");
}

#[test]
fn a_retry_is_told_how_it_is_checked_too() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "again" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "Write t.txt."  accept = "test -e never-there"  attempts = 2 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let second = std::fs::read_to_string(repo.root.join(".loopc/logs/t/2/prompt.md")).unwrap();
    let checked = second
        .find("## How this task is checked\nTask `t`\n")
        .unwrap_or_else(|| panic!("{second}"));
    assert!(
        second
            .contains("1. `accept`: the command `test -e never-there` must exit with status 0.\n"),
        "{second}"
    );
    let feedback = second
        .find("## Feedback from the previous attempt")
        .unwrap();
    assert!(checked < feedback, "{second}");
}
