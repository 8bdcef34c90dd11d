//! Crash safety (spec §5: "After `kill -9` of loopc the next run cleans
//! stale worktrees and resumes with nothing lost"): loopc is killed with
//! SIGKILL at many points of a four-task run, then run again to the end; the
//! integration branch must hold exactly what an uninterrupted run makes.

mod common;

use common::repo::Repo;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every task appends its name to `shared.txt` (so work merged twice shows
/// as a repeated line and lost work as a missing one) and writes its own
/// file. A gate checks the line is there exactly once; `setup` runs too, so
/// every phase of an attempt is a kill point.
const PLAN: &str = r#"
loop "crash" { setup = "true" }
budget { iterations = 100  failures = 100 }
agent bot { run = "sh @BIN@/agent.sh" }
gate once = "sh @BIN@/once.sh"
defaults { agent = bot  gates = [once] }
task a { prompt = "a" }
task b: a { prompt = "b" }
task c { prompt = "c" }
task d: b c { prompt = "d" }
"#;

const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> shared.txt
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"did %s","cost_usd":0.01}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

const ONCE: &str = r#"#!/bin/sh
n=$(grep -c "^$LOOP_TASK\$" shared.txt)
[ "$n" = 1 ] || { echo "$LOOP_TASK appears $n times"; exit 1; }
"#;

fn setup() -> Repo {
    let repo = Repo::new();
    repo.write("shared.txt", "start\n");
    repo.commit("shared file");
    repo.script("agent.sh", AGENT);
    repo.script("once.sh", ONCE);
    repo.plan(PLAN);
    repo
}

/// Checks the end state of a completed run: the branch's tree, each line
/// once, every task done, nothing of loopc's left behind.
fn assert_complete(repo: &Repo, reference_tree: &str, label: &str) {
    let tree = repo.git(&["rev-parse", "loop/crash^{tree}"]);
    let shared = repo.show("loop/crash", "shared.txt").unwrap_or_default();
    assert_eq!(shared, "start\na\nb\nc\nd\n", "{label}: shared.txt");
    assert_eq!(tree, reference_tree, "{label}: integration tree");
    for t in ["a", "b", "c", "d"] {
        let s = repo.status_of(t);
        assert!(s == "passed" || s == "cached", "{label}: task {t} is {s}");
    }
    assert_eq!(repo.state()["status"], "passed", "{label}");
    assert!(
        repo.extra_worktrees().is_empty(),
        "{label}: worktrees left: {:?}",
        repo.extra_worktrees()
    );
    let branches = repo.git(&["for-each-ref", "--format=%(refname)", "refs/heads/loopc/"]);
    assert_eq!(branches, "", "{label}: task branches left");
    let left: Vec<_> = std::fs::read_dir(repo.root.join(".loopc/worktrees"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{label}: directories left: {left:?}");
    // The user's checkout was never touched.
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "?? plan.loop",
        "{label}"
    );
    assert_eq!(repo.git(&["symbolic-ref", "--short", "HEAD"]), "main");
}

#[test]
fn kill_9_at_33_points_then_rerun_ends_like_an_uninterrupted_run() {
    // The reference: one uninterrupted run.
    let reference = setup();
    let r = reference.run();
    assert_eq!(r.code, 0, "{r:?}");
    let reference_tree = reference.git(&["rev-parse", "loop/crash^{tree}"]);
    let events = reference.event_count();
    assert!(events >= 34, "the reference run has {events} events");
    assert_eq!(
        reference.show("loop/crash", "shared.txt").unwrap(),
        "start\na\nb\nc\nd\n"
    );

    // Kill points: after the N-th event line appears, N = 1..=33 (the last
    // event ends the run). Two workers share them.
    let next = AtomicUsize::new(1);
    let failures = Mutex::new(Vec::new());
    let killed_at = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n > 33 {
                        return;
                    }
                    let repo = setup();
                    let mut child = repo.spawn(&["run"]);
                    let mut exited = false;
                    repo.wait_for(4000, || {
                        exited = matches!(child.try_wait(), Ok(Some(_)));
                        exited || repo.event_count() >= n
                    });
                    let _ = child.kill();
                    let _ = child.wait();
                    killed_at
                        .lock()
                        .unwrap()
                        .push((n, repo.event_count(), exited));
                    let r = repo.run();
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        assert_eq!(r.code, 0, "kill point {n}: {r:?}");
                        assert_complete(&repo, &reference_tree, &format!("kill point {n}"));
                    }));
                    if let Err(e) = outcome {
                        let msg = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        failures.lock().unwrap().push(msg);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Most kills hit a run in progress (not one that had already ended).
    let killed_at = killed_at.into_inner().unwrap();
    let in_progress = killed_at.iter().filter(|(_, _, exited)| !exited).count();
    assert!(
        in_progress >= 30,
        "kills that hit a running loopc: {killed_at:?}"
    );
}
