//! What a run says, in words a person reads without a second look: no
//! heading over nothing, no "merged (none)", no "4 of 3", and a task that a
//! budget stopped after a failed attempt is not shown as untouched.

use crate::harness::Test;

/// The feedback the second attempt gets after the first timed out having
/// printed `before` (a shell line, maybe empty).
fn timeout_feedback(before: &str) -> String {
    let repo = Test::repo();
    let feedback = repo.bin.join("feedback.txt");
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ -s "$LOOP_FEEDBACK_FILE" ]; then
  cp "$LOOP_FEEDBACK_FILE" "{fb}"
  echo done > done.txt
  exit 0
fi
{before}
exec sleep 1000
"#,
            fb = feedback.display(),
        ),
    );
    repo.plan(
        r#"
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "x"  attempts = 2  timeout = 300ms }
"#,
    );
    repo.loopc(&["run"]).run();
    std::fs::read_to_string(&feedback).unwrap()
}

#[test]
fn a_timeout_with_no_output_says_so_instead_of_an_empty_heading() {
    let text = timeout_feedback("");
    assert!(text.contains("timed out"), "{text}");
    assert!(text.contains("It printed nothing."), "{text}");
    assert!(!text.contains("Its last output"), "{text}");
    let text = timeout_feedback("echo 'thinking hard'");
    assert!(text.contains("Its last output:\nthinking hard"), "{text}");
}

#[test]
fn a_task_with_no_changes_is_not_merged_none() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
printf '{"status":"completed","summary":"nothing to do","no_changes":true}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).run();
    assert!(!r.stderr.contains("(none)"), "{r:?}");
    assert!(
        r.stderr
            .contains("loopc: t: no changes to merge; the integration branch stays at "),
        "{r:?}"
    );
    // The report's timeline says it in the same words, and of its replay.
    let labels = |repo: &Test| -> Vec<String> {
        let out = repo.loopc(&["report", "--json"]).run().stdout;
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let bars = j["timeline"]["bars"].as_array().unwrap().clone();
        bars.iter()
            .filter_map(|b| b["label"].as_str().map(str::to_string))
            .filter(|l| l.contains("merge") || l.contains("replay"))
            .collect()
    };
    assert_eq!(labels(&repo), ["t #1: no changes to merge"]);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(labels(&repo), ["t: replay (no changes)"]);
    let page = repo.bin.join("page.html");
    repo.loopc(&["report", "-o", page.to_str().unwrap()]).run();
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("(replayed: no changes)"), "{page}");
}

#[test]
fn a_task_stopped_by_a_budget_after_a_failed_attempt_is_shown_stopped() {
    let repo = Test::repo();
    repo.script(
        "fail.sh",
        "#!/bin/sh\ncat > /dev/null\necho broken >&2\nexit 1\n",
    );
    repo.plan(
        r#"
budget { iterations = 1 }
agent bot { run = "sh @BIN@/fail.sh" }
task t { agent = bot  prompt = "x"  attempts = 3 }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    // state.json keeps the task's state; the table says what happened.
    assert_eq!(repo.status_of("t"), "pending");
    let row: Vec<&str> = r
        .stdout
        .lines()
        .find(|l| l.starts_with("t "))
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..3], ["t", "stopped", "1"], "{r:?}");
    assert!(
        r.stdout.contains(
            "  t: stopped after 1 failed attempt (the run stopped before a retry): the agent failed"
        ),
        "{r:?}"
    );
    let s = repo.loopc(&["status"]).run();
    assert!(s.stdout.contains("\nt     stopped"), "{s:?}");
}

#[test]
fn failures_past_the_limit_are_not_worded_as_a_fraction() {
    let repo = Test::repo();
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    // Both attempts run until both have started, then fail together: the
    // streak passes the limit of 1 by the attempt that was already running.
    repo.script(
        "fail.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
touch "{s}/$LOOP_TASK"
i=0
while [ ! -e "{s}/a" ] || [ ! -e "{s}/b" ]; do
  i=$((i+1)); [ $i -gt 400 ] && break
  sleep 0.05
done
exit 1
"#,
            s = sync.display()
        ),
    );
    repo.plan(
        r#"
loop "w" { parallel = 2 }
budget { iterations = 10  failures = 1 }
agent bot { run = "sh @BIN@/fail.sh" }
task a { agent = bot  prompt = "x" }
task b { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.state()["spent"]["consecutive_failures"], 2, "{r:?}");
    assert!(!r.stdout.contains("in a row 2 of 1"), "{r:?}");
    assert!(
        r.stdout.contains(
            "stopped: circuit breaker: 1 failed attempt in a row (budget `failures` = 1)"
        ),
        "{r:?}"
    );
    assert!(
        r.stdout.contains(
            "failures in a row 2 (limit 1: one task's own failed attempts, and attempts already running when it was reached, do not trip it)"
        ),
        "{r:?}"
    );
}

/// The `elapsed_ms` of the first event `kind` of `task`.
fn event_ms(repo: &Test, kind: &str, task: &str) -> u64 {
    repo.events()
        .iter()
        .find(|e| e["event"] == kind && e["task"] == task)
        .and_then(|e| e["elapsed_ms"].as_u64())
        .unwrap_or_else(|| panic!("no {kind} event for {task}"))
}

#[test]
fn a_tasks_time_is_not_the_time_its_result_waited_for_another_merge() {
    // `b` finishes while the coordinator is busy with `a`'s merge gate
    // (4 s, on the merge result only): its result waits for it. Its time
    // is its attempt and its merge, so it is well under the span from its
    // start to its merge, which holds the wait.
    let repo = Test::repo();
    repo.plan(
        r#"
loop "tm" { parallel = 3 }
gate slow = "case \"$PWD\" in */+merge-a.r*) touch @BIN@/gate-started; sleep 4;; esac"
task c { run = "echo c > c.txt" }
task a {
  run = "until git cat-file -e loop/tm:c.txt 2>/dev/null; do sleep 0.05; done; echo a > a.txt"
  gates = [slow]
}
task b { run = "until [ -e @BIN@/gate-started ]; do sleep 0.05; done; echo b > b.txt" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let span = event_ms(&repo, "merged", "b") - event_ms(&repo, "attempt_started", "b");
    let time = repo.task("b")["duration_ms"].as_u64().expect("duration_ms");
    assert!(
        time + 2000 <= span,
        "b's time {time} ms counts the wait (from its start to its merge: {span} ms)"
    );
}

#[test]
fn counts_of_one_are_said_in_the_singular() {
    let repo = Test::repo();
    repo.plan("budget { iterations = 1 }\ntask t { run = \"exit 1\"  attempts = 1 }\n");
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(
        r.stdout
            .contains("kept: 1 worktree of failed or blocked attempts"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("worktree(s)"), "{r:?}");
}
