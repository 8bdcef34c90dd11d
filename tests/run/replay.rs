//! Cache replays onto a moved base: a replay whose checks ran again is
//! recorded (the next run from the same base is a pure cache hit), replays
//! make the same commit from the same inputs, and `--dry-run` says which
//! replays run their checks (their own, those of tasks merged before them,
//! or none).

use crate::harness::Test;

/// How many times the gate ran (it appends a line to a file outside the
/// repository).
fn gate_runs(repo: &Test) -> usize {
    std::fs::read_to_string(repo.bin.join("gate-runs"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn setup() -> Test {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "rp" { }
gate counted = "echo ran >> @BIN@/gate-runs"
task t { run = "echo hi > out.txt"  gates = [counted] }
task u: t { run = "echo more >> out.txt"  gates = [counted] }
"#,
    );
    repo
}

fn dry_run(repo: &Test) -> String {
    repo.loopc(&["run", "--dry-run"]).status(0).run().stdout
}

#[test]
fn a_gated_replay_is_recorded_and_reproducible() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let first = gate_runs(&repo);
    assert!(first >= 2, "each task's gate ran");

    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work on main");
    let base2 = repo.git(&["rev-parse", "main"]);
    assert_eq!(
        dry_run(&repo),
        "t: cached (replayed onto a new base; its checks run again first)\n\
         u: cached (replayed onto a new base; its checks run again first)\n\
         dry run of plan rp: 2 cached, 0 to run; nothing was started\n"
    );
    repo.loopc(&["run"]).status(0).run();
    let second = gate_runs(&repo);
    assert!(second > first, "the replays ran their checks");
    let tip2 = repo.git(&["rev-parse", "loop/rp"]);
    assert_eq!(
        repo.show("loop/rp", "out.txt").as_deref(),
        Some("hi\nmore\n")
    );

    // Same base, same plan: a pure cache hit, no checks, the same commit.
    assert_eq!(
        dry_run(&repo),
        "t: cached\nu: cached\ndry run of plan rp: 2 cached, 0 to run; nothing was started\n"
    );
    for _ in 0..2 {
        repo.loopc(&["run"]).status(0).run();
        assert_eq!(gate_runs(&repo), second, "no check ran again");
        assert_eq!(repo.git(&["rev-parse", "loop/rp"]), tip2);
    }

    // The base moves on and back: replaying onto the second base again
    // makes the very same commits (same inputs, same commit ids).
    repo.write("unrelated.txt", "y\n");
    repo.commit("more unrelated work");
    repo.loopc(&["run"]).status(0).run();
    assert_ne!(repo.git(&["rev-parse", "loop/rp"]), tip2);
    repo.git(&["reset", "-q", "--hard", &base2]);
    // (The branch holds the moved base's commit, which a rebuild would drop.)
    repo.git(&["branch", "-D", "loop/rp"]);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.git(&["rev-parse", "loop/rp"]), tip2);
}

#[test]
fn worktrees_branches_and_logs_are_named_by_run_and_attempt() {
    let repo = Test::repo();
    // The gate rejects the replay's check (attempt 0), passes attempts.
    repo.plan(
        r#"
loop "rn" { }
gate g = "test \"$LOOP_ATTEMPT\" != 0"
task t { run = "echo hi > out.txt"  gates = [g] }
task bad { run = "echo x > x.txt; exit 1"  attempts = 2 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(
        r.stdout
            .contains("kept: 2 worktrees of failed or blocked attempts")
            && r.stdout.contains("remove them with `loopc clean`"),
        "{r:?}"
    );
    assert_eq!(repo.state()["run"], 1);
    let wt = repo.root.join(".loopc/worktrees");
    assert!(wt.join("bad.r1-a1").is_dir() && wt.join("bad.r1-a2").is_dir());
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work");
    // `bad` ran out of attempts with its key: asked to run again.
    repo.loopc(&["run", "--retry-failed"]).status(1).run();
    assert_eq!(repo.state()["run"], 2);
    // A missed replay's checks take no attempt: `t`'s attempt 1 of run 2.
    let started: Vec<String> = repo
        .events()
        .iter()
        .filter(|e| e["event"] == "attempt_started" && e["task"] == "t")
        .map(|e| e["worktree"].as_str().unwrap_or_default().to_string())
        .collect();
    let last = started.last().cloned().unwrap_or_default();
    assert!(last.ends_with("/.loopc/worktrees/t.r2-a1"), "{started:?}");
    // Run 1's kept worktrees hold `bad`'s attempts 1 and 2; run 2's
    // attempts 1 and 2 are named for run 2, and their state history says so.
    let kept: Vec<String> = repo.task("bad")["history"]
        .as_array()
        .map(|h| {
            h.iter()
                .map(|a| a["worktree"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].ends_with("/.loopc/worktrees/bad.r2-a1"), "{kept:?}");
    assert!(kept[1].ends_with("/.loopc/worktrees/bad.r2-a2"), "{kept:?}");
    // Worktree, task branch and log directory agree: run 1's attempt 1 is
    // `bad.r1-a1` on `loopc/rn/bad/r1-a1`, logged in `earlier-logs/1/bad/1`.
    for (run, attempt) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        let name = format!("bad.r{run}-a{attempt}");
        assert!(wt.join(&name).is_dir(), "{name}");
        let branch = format!("loopc/rn/bad/r{run}-a{attempt}");
        assert!(
            repo.git_ok(&["rev-parse", "--verify", "-q", &branch]),
            "{branch}"
        );
        let logs = if run == 1 {
            format!(".loopc/earlier-logs/1/bad/{attempt}")
        } else {
            format!(".loopc/logs/bad/{attempt}")
        };
        assert!(
            repo.root.join(&logs).join("command.log").is_file(),
            "{logs}"
        );
    }
    repo.loopc(&["clean"]).status(0).run();
    let r = repo.loopc(&["run", "--retry-failed"]).status(1).run();
    assert!(r.stdout.contains("kept: 2 worktrees of"), "{r:?}");
    // `loopc clean` kept the state file: numbering goes on.
    assert!(wt.join("bad.r3-a1").is_dir());
}

/// The `how` of each `cached` event of the last run, by task.
fn cached_how(repo: &Test) -> Vec<(String, String)> {
    repo.events()
        .iter()
        .filter(|e| e["event"] == "cached")
        .map(|e| {
            (
                e["task"].as_str().unwrap_or_default().to_string(),
                e["how"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A repository where `plan` ran and passed, then `main` moved on.
fn ran_then_base_moved(plan: &str) -> Test {
    let repo = Test::repo();
    repo.plan(plan);
    repo.loopc(&["run"]).status(0).run();
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work on main");
    repo
}

#[test]
fn a_replay_with_no_check_to_run_says_so_and_runs_none() {
    let repo = ran_then_base_moved(
        r#"
loop "nc" { }
task a { run = "echo a > a.txt" }
task b: a { run = "echo b > b.txt" }
"#,
    );
    assert_eq!(
        dry_run(&repo),
        "a: cached (replayed onto a new base)\n\
         b: cached (replayed onto a new base)\n\
         dry run of plan nc: 2 cached, 0 to run; nothing was started\n"
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        cached_how(&repo),
        [("a".into(), "replay".into()), ("b".into(), "replay".into())]
    );
    assert!(!repo.root.join(".loopc/logs/a/replay").exists());
}

#[test]
fn a_replay_without_checks_of_its_own_runs_those_merged_before_it() {
    let repo = ran_then_base_moved(
        r#"
loop "mixed" { }
gate counted = "echo ran >> @BIN@/gate-runs"
task c { run = "echo c > c.txt"  gates = [counted] }
task a { run = "echo a > a.txt" }
"#,
    );
    assert_eq!(
        dry_run(&repo),
        "c: cached (replayed onto a new base; its checks run again first)\n\
         a: cached (replayed onto a new base; the checks of tasks merged before it run on it first)\n\
         dry run of plan mixed: 2 cached, 0 to run; nothing was started\n"
    );
    let before = gate_runs(&repo);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        cached_how(&repo),
        [("c".into(), "gated".into()), ("a".into(), "gated".into())]
    );
    assert_eq!(gate_runs(&repo), before + 2, "c's gate ran for c and for a");
}

#[test]
fn replays_onto_a_new_base_follow_the_order_the_earlier_run_merged_in() {
    // `late` waits (bounded) until `early` is merged, so `early` merges
    // first although `late` comes first in the plan's order.
    let repo = ran_then_base_moved(
        r#"
loop "order" { parallel = 2 }
task late { run = "i=0; while ! git cat-file -e refs/heads/loop/order:early.txt 2>/dev/null && [ $i -lt 250 ]; do i=$((i+1)); sleep 0.02; done; echo late > late.txt" }
task early { run = "echo early > early.txt" }
"#,
    );
    assert!(repo.seq_of("merged", "early") < repo.seq_of("merged", "late"));
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        cached_how(&repo),
        [
            ("early".into(), "replay".into()),
            ("late".into(), "replay".into())
        ]
    );
    let subjects = repo.git(&["log", "--format=%s", "-2", "loop/order"]);
    assert_eq!(
        subjects, "loop(late): late\nloop(early): early",
        "{subjects}"
    );
}

#[test]
fn after_the_integration_branch_is_merged_into_the_base_a_rerun_runs_nothing() {
    // Each task appends to one file: replayed onto a base that already
    // holds them, their diffs would conflict; their commits are in it.
    let repo = Test::repo();
    repo.write("calc.py", "# calc\n");
    repo.commit("calc");
    repo.plan(
        r#"
loop "m" { }
task sub { run = "echo 'def sub(): pass' >> calc.py" }
task mul: sub { run = "echo 'def mul(): pass' >> calc.py" }
task div { run = "echo 'def div(): pass' >> calc.py" }
"#,
    );
    repo.loopc(&["run", "-q"]).status(0).run();
    repo.git(&["merge", "-q", "--no-edit", "loop/m"]);
    let merged = std::fs::read_to_string(repo.root.join("calc.py")).unwrap();
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(dry.contains("3 cached, 0 to run"), "{dry}");
    let r = repo.loopc(&["run"]).status(0).run();
    for t in ["sub", "mul", "div"] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {r:?}");
    }
    assert_eq!(repo.show("loop/m", "calc.py").unwrap(), merged);
}
