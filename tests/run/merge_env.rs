//! Which task's variables a check sees when it runs again on a later
//! task's merge or replay (docs/running.md step 7, docs/cache.md): its
//! own task's (`LOOP_TASK`, `LOOP_TITLE`, `LOOP_ATTEMPT`, the task's `env`,
//! `LOOP_DIFF_FILE` with its own work), never the task being merged.

use crate::harness::Test;
use serde_json::Value;

/// `x`'s gate checks x's own variables; `y` has no checks. `x` finishes
/// only once `y`'s attempt has started (so `y`'s worktree starts before
/// `x`'s merge), and `y` only once `x`'s work is on the integration
/// branch: `y`'s merge is never a fast-forward. Both waits are bounded.
/// With `breaks`, `y`'s first attempt adds a file `x`'s gate forbids.
fn setup(breaks: bool) -> Test {
    let repo = Test::repo();
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    let x = repo.script(
        "x.sh",
        &format!(
            r#"i=0
while [ ! -e "{s}/y-started" ]; do i=$((i+1)); [ $i -gt 1000 ] && break; sleep 0.02; done
touch x.ok x.txt
"#,
            s = sync.display()
        ),
    );
    let y = repo.script(
        "y.sh",
        &format!(
            r#"touch "{s}/y-started"
i=0
until git -C "$LOOP_REPO_ROOT" cat-file -e loop/envdemo:x.txt 2>/dev/null; do
  i=$((i+1)); [ $i -gt 1000 ] && break; sleep 0.02
done
echo y > y.txt
if [ -n "$BREAK" ] && [ ! -s "$LOOP_FEEDBACK_FILE" ]; then touch broken; fi
"#,
            s = sync.display()
        ),
    );
    repo.write(
        "own.sh",
        r#"echo "gate run with LOOP_TASK=$LOOP_TASK LOOP_TITLE=$LOOP_TITLE LOOP_ATTEMPT=$LOOP_ATTEMPT WHO=$WHO"
test -f "$LOOP_TASK.ok" || { echo "no $LOOP_TASK.ok"; exit 1; }
test "$LOOP_TITLE" = "Task X" || exit 1
test "$WHO" = x-env || exit 1
grep -q 'x\.txt' "$LOOP_DIFF_FILE" || { echo "x.txt not in the diff"; exit 1; }
if grep -q 'y\.txt' "$LOOP_DIFF_FILE"; then echo "y.txt in the diff"; exit 1; fi
test -f "$LOOP_FEEDBACK_FILE" || { echo "no feedback file"; exit 1; }
if test -e broken; then echo "broken is there"; exit 1; fi
"#,
    );
    repo.commit("the gate's script");
    repo.plan(&format!(
        r#"
loop "envdemo" {{ parallel = 2 }}
gate own = "sh own.sh"
task x "Task X" {{ run = "sh {x}"  gates = [own]  env = {{ WHO = "x-env" }} }}
task y "Task Y" {{ run = "sh {y}"  env = {{ WHO = "y-env" {brk} }} }}
"#,
        brk = if breaks { "BREAK = \"1\"" } else { "" }
    ));
    repo
}

fn events_of(repo: &Test, kind: &str, task: &str) -> Vec<Value> {
    repo.events()
        .into_iter()
        .filter(|e| e["event"] == kind && e["task"] == task)
        .collect()
}

fn log(repo: &Test, rel: &str) -> String {
    std::fs::read_to_string(repo.root.join(".loopc/logs").join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn an_earlier_tasks_gate_rerun_on_a_merge_sees_its_own_task() {
    let repo = setup(false);
    repo.loopc(&["run"]).status(0).run();
    let failed: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "attempt_finished" && e["outcome"] != "passed")
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    let merged = events_of(&repo, "merged", "y");
    assert_eq!(merged.len(), 1, "{merged:?}");
    assert_eq!(merged[0]["how"], "merge", "y's merge was not a real merge");
    assert_eq!(repo.task("y")["attempts"], 1);
    let gate = log(&repo, "y/1/merge-own.log");
    assert!(
        gate.contains("LOOP_TASK=x LOOP_TITLE=Task X LOOP_ATTEMPT=1 WHO=x-env"),
        "{gate}"
    );
}

#[test]
fn an_earlier_tasks_gate_rerun_on_a_replay_sees_its_own_task() {
    let repo = setup(false);
    repo.loopc(&["run"]).status(0).run();
    // A new base: both entries replay onto it, and their checks run again.
    repo.write("other.txt", "new\n");
    repo.commit("a new base");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("x"), "cached");
    assert_eq!(repo.status_of("y"), "cached");
    let last_run = repo.events();
    let started = last_run
        .iter()
        .rposition(|e| e["event"] == "run_started")
        .unwrap();
    let cached: Vec<&Value> = last_run[started..]
        .iter()
        .filter(|e| e["event"] == "cached")
        .collect();
    assert_eq!(cached.len(), 2, "{cached:?}");
    assert!(cached.iter().all(|e| e["how"] == "gated"), "{cached:?}");
    let gate = log(&repo, "y/replay/merge-own.log");
    assert!(
        gate.contains("LOOP_TASK=x LOOP_TITLE=Task X LOOP_ATTEMPT=0 WHO=x-env"),
        "{gate}"
    );
}

/// A check of another task that fails on a merge says whose check it is,
/// and the merging task's next attempt gets its output as feedback.
#[test]
fn an_earlier_tasks_gate_failing_on_a_merge_is_named_with_its_task() {
    let repo = setup(true);
    repo.loopc(&["run"]).status(0).run();
    let failed = repo.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["task"], "y");
    assert_eq!(
        failed[0]["reason"],
        "after merging with the integration branch: gate `own` of task `x` failed (exit status 1)"
    );
    let feedback = log(&repo, "y/2/feedback.md");
    assert!(feedback.contains("broken is there"), "{feedback}");
    assert!(feedback.contains("LOOP_TASK=x "), "{feedback}");
    assert_eq!(repo.task("y")["attempts"], 2);
}
