//! Crash safety (spec §5: "After `kill -9` of loopc the next run cleans
//! stale worktrees and resumes with nothing lost"): loopc is killed with
//! SIGKILL at many points of a four-task run, then run again to the end; the
//! integration branch must hold exactly what an uninterrupted run makes.

use crate::harness::Test;
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

fn setup() -> Test {
    let repo = Test::repo();
    repo.write("shared.txt", "start\n");
    repo.commit("shared file");
    repo.script("agent.sh", AGENT);
    repo.script("once.sh", ONCE);
    repo.plan(PLAN);
    repo
}

/// Checks the end state of a completed run of plan `branch`: its tree,
/// every task done, nothing of loopc's left behind.
fn assert_complete(repo: &Test, branch: &str, tasks: &[&str], reference_tree: &str, label: &str) {
    let tree = repo.git(&["rev-parse", &format!("{branch}^{{tree}}")]);
    assert_eq!(tree, reference_tree, "{label}: integration tree");
    for t in tasks {
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

/// For every kill point N in `points`: a fresh repository from `setup`,
/// `loopc run` killed with SIGKILL once `events.jsonl` has N lines, then
/// `loopc run` again, whose result `check` judges. [`WORKERS`] at once; every
/// failure is collected and reported. Returns how many kills hit a loopc
/// that was still running.
/// Kill points tried at once (the runs mostly wait on git and the disk).
const WORKERS: usize = 3;

fn kill_and_rerun(
    points: &[usize],
    setup: &(dyn Fn() -> Test + Sync),
    check: &(dyn Fn(&Test, &str) + Sync),
) -> usize {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let in_progress = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| {
                loop {
                    let Some(&n) = points.get(next.fetch_add(1, Ordering::SeqCst)) else {
                        return;
                    };
                    let repo = setup();
                    let mut child = repo.loopc(&["run"]).spawn();
                    let mut exited = false;
                    repo.wait_for(4000, || {
                        exited = matches!(child.try_wait(), Ok(Some(_)));
                        exited || repo.event_count() >= n
                    });
                    let _ = child.kill();
                    let _ = child.wait();
                    // Let the git commands the killed loopc had started end
                    // (bounded: agents left running are the rerun's to kill).
                    repo.wait_for(2000, || !repo.has_processes_inside());
                    if !exited {
                        in_progress.fetch_add(1, Ordering::SeqCst);
                    }
                    let label = format!("kill point {n}");
                    let r = repo.loopc(&["run"]).output();
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        assert_eq!(r.status, 0, "{label}: {r:?}");
                        check(&repo, &label);
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
    in_progress.into_inner()
}

#[test]
fn kill_9_at_33_points_then_rerun_ends_like_an_uninterrupted_run() {
    // The reference: one uninterrupted run.
    let reference = setup();
    reference.loopc(&["run"]).status(0).run();
    let reference_tree = reference.git(&["rev-parse", "loop/crash^{tree}"]);
    let events = reference.event_count();
    assert!(events >= 34, "the reference run has {events} events");
    assert_eq!(
        reference.show("loop/crash", "shared.txt").unwrap(),
        "start\na\nb\nc\nd\n"
    );
    // Kill points: after the N-th event line appears, N = 1..=33 (the last
    // event ends the run).
    let points: Vec<usize> = (1..=33).collect();
    let hit = kill_and_rerun(&points, &setup, &|repo, label| {
        // Each task's work exactly once: none lost, none merged twice.
        let shared = repo.show("loop/crash", "shared.txt").unwrap_or_default();
        assert_eq!(shared, "start\na\nb\nc\nd\n", "{label}: shared.txt");
        assert_complete(
            repo,
            "loop/crash",
            &["a", "b", "c", "d"],
            &reference_tree,
            label,
        );
    });
    // Most kills hit a run in progress (not one that had already ended).
    assert!(hit >= 30, "only {hit} kills hit a running loopc");
}

/// Two tasks at a time: merges of concurrent work (gated again in scratch
/// worktrees) and replays that are not fast-forwards are killed too. Tasks
/// write files of their own, so the final tree does not depend on the order
/// of merges.
const PARALLEL_PLAN: &str = r#"
loop "par" { parallel = 2 }
budget { iterations = 100  failures = 100 }
agent bot { run = "sh @BIN@/agent.sh" }
gate has = "sh @BIN@/has.sh"
defaults { agent = bot  gates = [has] }
task p { prompt = "p" }
task q { prompt = "q" }
task r: p q { prompt = "r" }
task s { prompt = "s" }
"#;

fn setup_parallel() -> Test {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\necho \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n",
    );
    repo.script("has.sh", "#!/bin/sh\ntest -f \"$LOOP_TASK.txt\"\n");
    repo.plan(PARALLEL_PLAN);
    repo
}

#[test]
fn kill_9_during_parallel_work_then_rerun_ends_with_the_same_tree() {
    let reference = setup_parallel();
    reference.loopc(&["run"]).status(0).run();
    let reference_tree = reference.git(&["rev-parse", "loop/par^{tree}"]);
    let events = reference.event_count();
    assert!(events >= 24, "the reference run has {events} events");
    let points: Vec<usize> = (1..events).step_by(3).collect();
    kill_and_rerun(&points, &setup_parallel, &|repo, label| {
        assert_complete(
            repo,
            "loop/par",
            &["p", "q", "r", "s"],
            &reference_tree,
            label,
        );
        for t in ["p", "q", "r", "s"] {
            assert_eq!(
                repo.show("loop/par", &format!("{t}.txt")).as_deref(),
                Some(format!("made by {t}\n").as_str()),
                "{label}"
            );
        }
    });
}
