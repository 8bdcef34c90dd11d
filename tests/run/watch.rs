//! Watching a run: what the display shows while an agent works (its last
//! tool call, command or message, read from its streamed output), and
//! `loopc logs --follow`.

use crate::harness::Test;

/// Writes `plan.loop` with `@FIX@` replaced by the fixture agents' directory.
fn plan(repo: &Test, text: &str) {
    let fix = format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"));
    repo.plan(&text.replace("@FIX@", &fix));
}

/// Runs the plan, waits until loopc's stderr (plain lines: it is not a
/// terminal) shows `line`, then lets the agent finish; the run passes.
fn shows_while_running(repo: &Test, line: &str) {
    let mut run = repo.loopc(&["run"]).spawn();
    let seen = repo.wait_for(4000, || repo.spawned_stderr().contains(line));
    std::fs::write(repo.bin.join("go"), "").unwrap();
    assert_eq!(
        run.wait().unwrap().code(),
        Some(0),
        "{}",
        repo.spawned_stderr()
    );
    assert!(
        seen,
        "{line:?} not shown while the agent ran:\n{}",
        repo.spawned_stderr()
    );
}

#[test]
fn a_running_claude_agents_last_tool_call_is_shown() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "wc" { }
budget { cost = $5 }
agent claude {
  run = "sh @FIX@/claude -p --output-format stream-json --verbose"
  output = claude-json
  env = { FIXTURE_WAIT_FOR = "@BIN@/go" }
}
task t { agent = claude  prompt = "x" }
"#,
    );
    shows_while_running(&repo, "loopc: t attempt 1: now: Write claude.txt\n");
}

#[test]
fn a_running_codex_agents_command_is_shown() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "wx" { }
budget { iterations = 2 }
agent codex {
  run = "sh @FIX@/codex exec --json --sandbox workspace-write -"
  output = codex-json
  env = { FIXTURE_WAIT_FOR = "@BIN@/go" }
}
task t { agent = codex  prompt = "x" }
"#,
    );
    shows_while_running(&repo, "loopc: t attempt 1: now: $ bash -lc ls\n");
}

#[test]
fn a_running_text_agents_last_output_line_is_shown() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "reading the code"
echo "running the tests"
while [ ! -e "$GO" ]; do sleep 0.05; done
echo done > done.txt
"#,
    );
    plan(
        &repo,
        r#"
loop "wt" { }
budget { iterations = 2 }
agent bot { run = "sh @BIN@/agent.sh"  env = { GO = "@BIN@/go" } }
task t { agent = bot  prompt = "x" }
"#,
    );
    shows_while_running(&repo, "loopc: t attempt 1: now: running the tests\n");
}

#[test]
fn loopc_logs_follow_puts_new_output_under_its_own_header() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "first stdout line"
echo "first stderr line" >&2
while [ ! -e "$GO" ]; do sleep 0.05; done
echo "second stdout line"
echo done > done.txt
"#,
    );
    plan(
        &repo,
        r#"
loop "lf" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh"  env = { GO = "@BIN@/go" } }
task t { agent = bot  prompt = "x" }
"#,
    );
    let mut run = repo.loopc(&["run"]).spawn();
    let stderr_log = repo.root.join(".loopc/logs/t/1/agent.stderr");
    assert!(repo.wait_for(4000, || {
        std::fs::read_to_string(&stderr_log).is_ok_and(|t| t.contains("first stderr line"))
    }));
    let out_path = repo.bin.join("follow.out");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut follow = repo.loopc(&["logs", "t", "--follow"]).command();
    let mut follow = follow
        .stdout(std::process::Stdio::from(out))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once it has printed what there is, the agent writes more.
    assert!(repo.wait_for(4000, || {
        std::fs::read_to_string(&out_path).is_ok_and(|t| t.contains("first stderr line"))
    }));
    std::fs::write(repo.bin.join("go"), "").unwrap();
    assert!(follow.wait().unwrap().success());
    assert_eq!(run.wait().unwrap().code(), Some(0));
    let text = std::fs::read_to_string(&out_path).unwrap();
    let second = text.find("second stdout line").expect(&text);
    let header = text[..second].rfind("==> ").unwrap();
    assert!(
        text[header..second].contains("agent.stdout <==\n"),
        "{text}"
    );
}
