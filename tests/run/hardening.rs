//! Defects a tester found in the interpreter: history rewritten below
//! `LOOP_BASE`, a foreign integration-branch move, closed or full stdout,
//! scratch worktree names, the protocol variables against a plan's `env`,
//! `--force` swallowing the plan, gates that change files, terminal escapes
//! in agent text, empty reasons.

use crate::harness::{Output, SIMPLE_AGENT, Test};

const TWO_TASKS: &str = r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
"#;

// 1. History rewrite ----------------------------------------------------------

#[test]
fn an_agent_that_drops_the_base_commit_fails_and_loses_no_work() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "rewrite.sh",
        r#"#!/bin/sh
cat > /dev/null
git reset -q --hard HEAD~1
echo rewritten > "$LOOP_TASK.txt"
"#,
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent evil { run = "sh @BIN@/rewrite.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = evil  prompt = "y"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "failed");
    let reason = repo.task("b")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("rewrote history below LOOP_BASE"),
        "{reason}"
    );
    // a's work is still on the integration branch; b's is not.
    assert_eq!(repo.show("loop/h", "a.txt").unwrap(), "made by a\n");
    assert!(repo.show("loop/h", "b.txt").is_none());
}

#[test]
fn an_integration_branch_moved_off_loopcs_work_stops_the_run() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    // b's agent moves the integration branch back to main (dropping a).
    repo.script(
        "mover.sh",
        r#"#!/bin/sh
cat > /dev/null
git update-ref refs/heads/loop/h refs/heads/main
echo b > b.txt
"#,
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent mover { run = "sh @BIN@/mover.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = mover  prompt = "y" }
task c: b { agent = bot  prompt = "z" }
"#,
    );
    let main = repo.git(&["rev-parse", "main"]);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr.contains("`loop/h` was moved by someone else"),
        "{r:?}"
    );
    assert!(r.stderr.contains(&format!("to {main}")), "{r:?}");
    assert_ne!(repo.status_of("c"), "passed");
}

#[test]
fn an_integration_branch_moved_onto_a_descendant_is_adopted() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    // On its first try, b's agent adds a commit on top of the integration
    // branch (keeping loopc's work), then does its own change; loopc adopts
    // the new head and merges the attempt onto it.
    repo.script(
        "adder.sh",
        r#"#!/bin/sh
cat > /dev/null
marker="$LOOP_WORKTREE/../../moved"
if [ ! -e "$marker" ]; then
  : > "$marker"
  head=$(git rev-parse refs/heads/loop/h)
  tree=$(git rev-parse "$head^{tree}")
  extra=$(echo "someone else" | git commit-tree "$tree" -p "$head")
  git update-ref refs/heads/loop/h "$extra" "$head"
fi
echo b > b.txt
"#,
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent adder { run = "sh @BIN@/adder.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = adder  prompt = "y" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert!(repo.root.join(".loopc/moved").exists());
    assert_eq!(repo.show("loop/h", "a.txt").unwrap(), "made by a\n");
    assert_eq!(repo.show("loop/h", "b.txt").unwrap(), "b\n");
    let log = repo.git(&["log", "--format=%s", "loop/h"]);
    assert!(log.contains("someone else"), "{log}");
    assert_eq!(repo.task("b")["attempts"], 1);
}

// 2. Closed and full stdout ---------------------------------------------------

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    // `| true`: the reader is gone before loopc writes.
    let Output {
        stdout: out,
        stderr: err,
        ..
    } = repo.shell("(\"$LOOPC\" run; echo \"exit=$?\" >&2) | true");
    assert!(err.contains("exit=0"), "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(repo.status_of("b"), "passed");
    let st = repo.state();
    assert_eq!(st["exit_code"], 0, "{st}");
    for cmd in ["status", "status --json", "run --dry-run"] {
        let script = format!("(sleep 0.2; \"$LOOPC\" {cmd}; echo \"exit=$?\" >&2) | true");
        let Output { stderr: err, .. } = repo.shell(&script);
        assert!(err.contains("exit=0"), "{cmd}: {err}");
        assert!(!err.contains("panicked"), "{cmd}: {err}");
    }
}

#[test]
fn a_full_stdout_is_exit_2_with_a_message() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    repo.loopc(&["run"]).run();
    for cmd in ["status", "status --json", "run --dry-run"] {
        let Output {
            status: code,
            stderr: err,
            ..
        } = repo.shell(&format!("\"$LOOPC\" {cmd} > /dev/full"));
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("No space left on device"), "{cmd}: {err}");
    }
    // A run's own result does not depend on its stdout.
    let Output {
        status: code,
        stderr: err,
        ..
    } = repo.shell("\"$LOOPC\" run > /dev/full");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: cannot write the run's summary to stdout"),
        "{err}"
    );
    // check --format json with diagnostics to print.
    repo.write("bad.loop", "task a { agent = nobody  prompt = \"x\" }\n");
    let Output {
        status: code,
        stderr: err,
        ..
    } = repo.shell("\"$LOOPC\" check --format json bad.loop > /dev/full");
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("error: "), "{err}");
}

// 3. Scratch worktree names ---------------------------------------------------

#[test]
fn a_task_named_like_a_scratch_worktree_keeps_its_worktree() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "fail.sh",
        "#!/bin/sh\ncat > /dev/null\necho partial > partial.txt\nexit 1\n",
    );
    // a waits until b is merged and `_merge-a` has failed, so that its own
    // merge is not a fast-forward and uses a scratch worktree.
    repo.script(
        "wait.sh",
        r#"#!/bin/sh
cat > /dev/null
i=0
while [ $i -lt 400 ]; do
  if git -C "$LOOP_WORKTREE" cat-file -e refs/heads/loop/h:b.txt 2>/dev/null \
     && grep -q '"status": "failed"' "$LOOP_WORKTREE/../../state.json" 2>/dev/null; then
    break
  fi
  sleep 0.05; i=$((i+1))
done
echo a > a.txt
"#,
    );
    repo.plan(
        r#"
loop "h" { parallel = 3 }
budget { iterations = 10  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent bad { run = "sh @BIN@/fail.sh" }
agent waiter { run = "sh @BIN@/wait.sh" }
task a { agent = waiter  prompt = "x"  accept = "test -f a.txt" }
task _merge-a { agent = bad  prompt = "y"  attempts = 1 }
task b { agent = bot  prompt = "z" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("a"), "passed");
    let merged = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "merged" && e["task"] == "a")
        .expect("a merged");
    assert_eq!(merged["how"], "merge", "{merged}");
    // The failed task's worktree is kept (until `loopc clean`).
    assert!(
        repo.root
            .join(".loopc/worktrees/_merge-a.r1-a1/partial.txt")
            .is_file()
    );
}

// 4. Protocol variables win over the plan's env --------------------------------

#[test]
fn loop_variables_win_over_the_plans_env() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" > seen-agent.txt
printf '{"status":"completed","summary":"handoff kept"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop "h" { setup = "echo \"$LOOP_TASK $LOOP_ATTEMPT\" > \"$LOOP_HANDOFF.setup\"" }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh"  env = { LOOP_BASE = "nope" } }
gate g = "test \"$LOOP_TASK\" = a || test \"$LOOP_TASK\" = c"
defaults { env = { LOOP_ATTEMPT = "99" } }
task a { agent = bot  prompt = "x"  gates = [g]
         env = { LOOP_TASK = "evil"  LOOP_HANDOFF = "/tmp/loopc-evil-handoff" } }
task c: a { run = "echo \"$LOOP_TASK\" > seen-command.txt"  gates = [g]
            env = { LOOP_TASK = "evil" } }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/h", "seen-agent.txt").unwrap(), "a\n");
    assert_eq!(repo.show("loop/h", "seen-command.txt").unwrap(), "c\n");
    assert_eq!(repo.task("a")["summary"], "handoff kept");
    let setup =
        std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/handoff.json.setup")).unwrap();
    assert_eq!(setup, "a 1\n");
}

// 5. --force and the plan -------------------------------------------------------

#[test]
fn force_does_not_swallow_the_plan_and_dry_run_checks_its_names() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    std::fs::write(
        repo.root.join("j.loop"),
        TWO_TASKS.replace("@BIN@", &repo.bin.to_string_lossy()),
    )
    .unwrap();
    repo.write("other.loop", "task zzz { run = \"true\" }\n");
    let r = repo
        .loopc(&["run", "--dry-run", "--force", "a", "b", "j.loop"])
        .status(0)
        .run();
    assert!(r.stdout.contains("a"), "{r:?}");
    let r = repo
        .loopc(&["run", "--dry-run", "--force", "a", "nope", "j.loop"])
        .status(2)
        .run();
    assert!(r.stderr.contains("no task named `nope`"), "{r:?}");
    repo.loopc(&["run", "--force", "a", "j.loop"])
        .status(0)
        .run();
    assert_eq!(repo.status_of("b"), "passed");
}

// 7. Gates that change files ------------------------------------------------------

#[test]
fn a_gate_that_changes_tracked_files_names_the_paths() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
gate dirty = "echo junk > a.txt"
task a { agent = bot  prompt = "x"  gates = [dirty]  attempts = 2 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let reason = repo.task("a")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.ends_with(
            "gate `dirty` changed tracked files: a.txt (discarded; a gate whose changes are \
             harmless says `on_change = ignore`)"
        ),
        "{reason}"
    );
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/a/2/feedback.md")).unwrap();
    assert!(fb.contains("a.txt"), "{fb}");
}

// 8 and 9. Text shown to people ------------------------------------------------------

#[test]
fn control_characters_in_agent_text_are_not_printed_raw() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
printf '{"status":"needs_human","summary":"\\u001b]0;pwned\\u0007\\u001b[2Jcleared"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.script(
        "empty.sh",
        r#"#!/bin/sh
cat > /dev/null
printf '{"status":"blocked","summary":""}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent quiet { run = "sh @BIN@/empty.sh" }
task a { agent = bot  prompt = "x" }
task e { agent = quiet  prompt = "y" }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(!r.stdout.contains('\u{1b}'), "{r:?}");
    assert!(!r.stderr.contains('\u{1b}'), "{r:?}");
    assert!(!r.stdout.contains('\u{7}'), "{r:?}");
    assert!(r.stdout.contains("cleared"), "{r:?}");
    let s = repo.loopc(&["status"]).status(0).run();
    assert!(!s.stdout.contains('\u{1b}'), "{s:?}");
    assert!(s.stdout.contains("cleared"), "{s:?}");
    // JSON keeps the exact text.
    let j = repo.loopc(&["status", "--json"]).run();
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    let reason = v["tasks"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("\u{1b}]0;pwned\u{7}"), "{reason}");
    // 9. An empty summary leaves no dangling colon.
    assert_eq!(repo.task("e")["reason"], "the handoff says blocked");
    assert!(s.stdout.contains("e: the handoff says blocked\n"), "{s:?}");
}

/// A `setup` failure retries the attempt without counting it; the events
/// and the log directories name the same tries: `logs/a/1`, then
/// `logs/a/1.retry-2`, `logs/a/1.retry-3`.
#[test]
fn setup_retries_are_named_alike_in_events_and_log_directories() {
    let repo = Test::repo();
    let count = repo.bin.join("setups");
    repo.script(
        "setup.sh",
        &format!(
            "#!/bin/sh\necho x >> {c}\nn=$(wc -l < {c})\necho \"setup try $n\"\n[ \"$n\" -ge 3 ]\n",
            c = count.display()
        ),
    );
    repo.plan(
        r#"
loop "h" { setup = "sh @BIN@/setup.sh" }
task a { run = "echo a > a.txt"  attempts = 1 }
"#,
    );
    let r = repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("a")["attempts"], 1);
    let logs = repo.root.join(".loopc/logs/a");
    let mut dirs: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["1", "1.retry-2", "1.retry-3"]);
    for (dir, n) in [("1", 1), ("1.retry-2", 2), ("1.retry-3", 3)] {
        let log = std::fs::read_to_string(logs.join(dir).join("setup.log")).unwrap();
        assert!(log.contains(&format!("setup try {n}")), "{dir}: {log}");
    }
    let started: Vec<(u64, Option<u64>, String)> = repo
        .events()
        .iter()
        .filter(|e| e["event"] == "attempt_started" && e["task"] == "a")
        .map(|e| {
            (
                e["attempt"].as_u64().unwrap(),
                e["retry"].as_u64(),
                e["logs"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(started.len(), 3, "{started:?}");
    for ((attempt, retry, path), (want_retry, dir)) in
        started
            .iter()
            .zip([(None, "1"), (Some(2), "1.retry-2"), (Some(3), "1.retry-3")])
    {
        assert_eq!(*attempt, 1);
        assert_eq!(*retry, want_retry);
        assert!(path.ends_with(&format!(".loopc/logs/a/{dir}")), "{path}");
    }
    assert!(r.stderr.contains("a attempt 1 (retry 2): started"), "{r:?}");
}

#[test]
fn a_task_that_cleans_its_worktree_with_git_clean_x_still_lands() {
    // `git clean -fdx` (common in build scripts) also removes loopc's
    // ignored `.loopc/` work directory in the worktree; loopc makes it
    // again for the diff and the gates.
    let repo = Test::repo();
    repo.plan(
        r#"
loop "h" { }
gate g = "test -s \"$LOOP_DIFF_FILE\""
task clean { run = "echo built > out.txt; git clean -fdxq; echo z > z.txt"  gates = [g] }
"#,
    );
    let r = repo.loopc(&["run"]).run();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(repo.show("loop/h", "z.txt").unwrap(), "z\n");
    assert_eq!(repo.task("clean")["attempts"], 1);
}

#[test]
fn a_command_too_long_for_the_system_is_blocked_at_once() {
    // One environment string over the kernel's 128 KiB: E2BIG, which no
    // retry changes.
    let repo = Test::repo();
    let big = "x".repeat(200_000);
    repo.plan(&format!(
        "loop \"h\" {{ }}\ntask t {{ run = \"true\"  env = {{ BIG = \"{big}\" }} }}\n"
    ));
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "blocked");
    let t = repo.task("t");
    assert_eq!(t["history"].as_array().unwrap().len(), 1, "{t}");
    assert!(
        t["reason"]
            .as_str()
            .unwrap()
            .contains("too long for the system to start"),
        "{t}"
    );
}

#[test]
fn an_agent_that_moves_the_integration_branch_onto_its_own_work_stops_the_run() {
    let repo = Test::repo();
    repo.script(
        "mover.sh",
        "#!/bin/sh\ncat > /dev/null\necho evil > evil.txt\ngit add evil.txt\ngit commit -qm evil\n\
         git update-ref refs/heads/loop/h \"$(git rev-parse HEAD)\"\necho more > more.txt\n\
         printf '{\"status\":\"completed\",\"summary\":\"ok\"}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10 }
agent mover { run = "sh @BIN@/mover.sh" }
task a { agent = mover  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr
            .contains("an agent moved it onto work no check judged there; the run stops"),
        "{r:?}"
    );
    assert!(!r.stdout.contains("run passed"), "{r:?}");
}
