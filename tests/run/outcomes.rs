//! How attempts end: failed and blocked handoffs, dependents skipped while
//! independent work goes on, "no changes", feedback on retry, timeouts that
//! kill the process group, and claude-json cost parsing.

use crate::harness::{SIMPLE_AGENT, Test};

#[test]
fn failed_handoff_retries_then_fails_and_skips_dependents() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "fails.sh",
        r#"#!/bin/sh
cat > /dev/null
echo partial > partial.txt
printf '{"status":"failed","summary":"could not do it (attempt %s)"}' "$LOOP_ATTEMPT" > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop "f" { parallel = 2 }
budget { iterations = 20  failures = 10 }
agent ok { run = "sh @BIN@/agent.sh" }
agent bad { run = "sh @BIN@/fails.sh" }
task broken { agent = bad  prompt = "x"  attempts = 2 }
task after: broken { agent = ok  prompt = "y" }
task later: after { agent = ok  prompt = "z" }
task free { agent = ok  prompt = "independent" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("broken"), "failed");
    assert_eq!(repo.task("broken")["attempts"], 2);
    assert!(
        repo.task("broken")["reason"]
            .as_str()
            .unwrap()
            .contains("could not do it (attempt 2)"),
        "{:?}",
        repo.task("broken")
    );
    assert_eq!(repo.status_of("after"), "skipped");
    assert_eq!(repo.status_of("later"), "skipped");
    assert_eq!(repo.status_of("free"), "passed");
    assert!(repo.files_at("loop/f").contains(&"free.txt".to_string()));
    assert!(!repo.files_at("loop/f").contains(&"partial.txt".to_string()));
    // The second attempt was told why the first failed.
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/broken/2/feedback.md")).unwrap();
    assert!(fb.contains("could not do it (attempt 1)"), "{fb}");
    // Failed attempts keep their worktrees (until `loopc clean`).
    assert!(repo.root.join(".loopc/worktrees/broken.r1-a1").is_dir());
    assert_eq!(repo.state()["status"], "failed");
}

#[test]
fn a_needs_human_handoff_ends_the_task_without_more_attempts() {
    let repo = Test::repo();
    repo.script(
        "blocked.sh",
        r#"#!/bin/sh
cat > /dev/null
printf '{"status":"needs_human","summary":"which database?"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop "b" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/blocked.sh" }
task ask { agent = bot  prompt = "x" }
task next: ask { run = "true" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("ask"), "needs-human");
    assert_eq!(repo.task("ask")["attempts"], 1);
    assert!(
        repo.task("ask")["reason"]
            .as_str()
            .unwrap()
            .contains("which database?")
    );
    assert_eq!(repo.status_of("next"), "skipped");
}

#[test]
fn no_changes_fails_unless_the_handoff_says_so() {
    let repo = Test::repo();
    repo.script("idle.sh", "#!/bin/sh\ncat > /dev/null\n");
    repo.script(
        "nothing-needed.sh",
        r#"#!/bin/sh
cat > /dev/null
printf '{"status":"completed","summary":"already fine","no_changes":true}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop "nc" { parallel = 2 }
budget { iterations = 10  failures = 10 }
agent idle { run = "sh @BIN@/idle.sh" }
agent fine { run = "sh @BIN@/nothing-needed.sh" }
task lazy { agent = idle  prompt = "x"  attempts = 1 }
task ok { agent = fine  prompt = "y" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("lazy"), "failed");
    assert!(
        repo.task("lazy")["reason"]
            .as_str()
            .unwrap()
            .contains("no changes")
    );
    assert_eq!(repo.status_of("ok"), "passed");
}

#[test]
fn gate_output_is_feedback_for_the_next_attempt() {
    let repo = Test::repo();
    // First attempt writes the wrong value; the second reads the feedback
    // file and writes the value the gate asked for.
    repo.script(
        "learner.sh",
        r#"#!/bin/sh
cat > /dev/null
if grep -q "expected 42" "$LOOP_FEEDBACK_FILE"; then echo 42 > answer.txt; else echo 41 > answer.txt; fi
"#,
    );
    repo.script(
        "gate.sh",
        r#"#!/bin/sh
v=$(cat answer.txt)
[ "$v" = 42 ] && exit 0
echo "wrong answer $v: expected 42"
exit 1
"#,
    );
    repo.plan(
        r#"
loop "fb" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/learner.sh" }
gate answer = "sh @BIN@/gate.sh"
task solve { agent = bot  prompt = "answer"  gates = [answer] }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("solve")["attempts"], 2);
    assert_eq!(repo.show("loop/fb", "answer.txt").unwrap(), "42\n");
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/solve/2/prompt.md")).unwrap();
    assert!(
        prompt.contains("wrong answer 41: expected 42"),
        "feedback in prompt: {prompt}"
    );
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let repo = Test::repo();
    let pidfile = repo.bin.join("bg.pid");
    repo.script(
        "sleeper.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
sleep 1000 &
echo $! > "{p}"
sleep 1000
"#,
            p = pidfile.display()
        ),
    );
    repo.plan(
        r#"
loop "to" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/sleeper.sh" }
task slow { agent = bot  prompt = "x"  attempts = 1  timeout = 300ms }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("slow"), "failed");
    assert!(
        repo.task("slow")["reason"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    // The background grandchild is gone too: no process, or a zombie
    // waiting for init to reap it (polled, bounded).
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
    let alive = alive();
    assert!(!alive, "background process {pid} survived the timeout");
}

#[test]
fn claude_json_result_gives_cost_and_summary() {
    let repo = Test::repo();
    repo.script(
        "claude.sh",
        r#"#!/bin/sh
cat > /dev/null
echo done > done.txt
echo '{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.0425,"result":"Implemented the thing","session_id":"s"}'
"#,
    );
    repo.script(
        "claude-error.sh",
        r#"#!/bin/sh
cat > /dev/null
echo x > x.txt
echo '{"type":"result","is_error":true,"total_cost_usd":0.5,"result":"API error"}'
"#,
    );
    repo.plan(
        r#"
loop "cj" { parallel = 2 }
budget { cost = $5  failures = 10 }
agent claude { run = "sh @BIN@/claude.sh"  output = claude-json }
agent broken { run = "sh @BIN@/claude-error.sh"  output = claude-json }
task t "Do it" { agent = claude  prompt = "x" }
task e { agent = broken  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "passed");
    assert_eq!(t["cost_micro_usd"], 42_500);
    assert_eq!(t["summary"], "Implemented the thing");
    let e = repo.task("e");
    assert_eq!(e["status"], "failed");
    assert_eq!(e["cost_micro_usd"], 500_000);
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 542_500);
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert!(
        progress.contains("t: Do it — Implemented the thing; done.txt"),
        "{progress}"
    );
}

#[test]
fn bytes_that_are_not_utf8_do_not_break_anything() {
    let repo = Test::repo();
    repo.script(
        "binary.sh",
        r#"#!/bin/sh
cat > /dev/null
printf 'out \377\376 junk\n'
printf 'err \300 junk\n' >&2
if [ "$LOOP_ATTEMPT" = 1 ]; then exit 1; fi
printf '\377' > bin.dat
printf '{"status":"completed","summary":"bad \377 byte"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.script("gate.sh", "#!/bin/sh\nprintf 'gate \\377\\n'\n");
    repo.plan(
        r#"
loop "bytes" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/binary.sh" }
gate g = "sh @BIN@/gate.sh"
task t { agent = bot  prompt = "x"  gates = [g] }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/t/2/feedback.md")).unwrap();
    assert!(fb.contains("out \u{fffd}\u{fffd} junk"), "{fb}");
    assert!(fb.contains("err \u{fffd} junk"), "{fb}");
    // The logs keep the raw bytes.
    let raw = std::fs::read(repo.root.join(".loopc/logs/t/1/agent.stdout")).unwrap();
    assert!(raw.windows(2).any(|w| w == [0xff, 0xfe]));
    // The handoff with a raw byte is read lossily; the file keeps its byte.
    assert_eq!(repo.task("t")["summary"], "bad \u{fffd} byte");
    assert_eq!(repo.show("loop/bytes", "bin.dat").unwrap(), "\u{fffd}");
}

#[test]
fn claude_json_verbose_array_output_is_read() {
    let repo = Test::repo();
    repo.script(
        "claude.sh",
        r#"#!/bin/sh
cat > /dev/null
echo done > done.txt
echo '[{"type":"system","subtype":"init","session_id":"s"},'
echo ' {"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}},'
echo ' {"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.0425,"result":"Implemented the array thing","session_id":"s"}]'
"#,
    );
    repo.plan(
        r#"
loop "cja" { }
budget { cost = $5 }
agent claude { run = "sh @BIN@/claude.sh"  output = claude-json }
task t { agent = claude  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let t = repo.task("t");
    assert_eq!(t["cost_micro_usd"], 42_500);
    assert_eq!(t["summary"], "Implemented the array thing");
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 42_500);
}
