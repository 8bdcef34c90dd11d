//! Cache replays onto a moved base: a replay whose checks ran again is
//! recorded (the next run from the same base is a pure cache hit), replays
//! make the same commit from the same inputs, and `--dry-run` says which
//! replays run their checks.

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
fn a_missed_replay_takes_no_try_number_and_kept_worktrees_are_counted() {
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
            .contains("kept: 2 worktree(s) of failed or blocked attempts")
            && r.stdout.contains("remove them with `loopc clean`"),
        "{r:?}"
    );
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated work");
    repo.loopc(&["run"]).status(1).run();
    let started: Vec<String> = repo
        .events()
        .iter()
        .filter(|e| e["event"] == "attempt_started" && e["task"] == "t")
        .map(|e| e["worktree"].as_str().unwrap_or_default().to_string())
        .collect();
    let last = started.last().cloned().unwrap_or_default();
    assert!(last.ends_with("/.loopc/worktrees/t-1"), "{started:?}");
    // The earlier run's kept worktrees hold `bad-1` and `bad-2`: this run's
    // attempts 1 and 2 of `bad` say where theirs are.
    let kept: Vec<String> = repo.task("bad")["history"]
        .as_array()
        .map(|h| {
            h.iter()
                .map(|a| a["worktree"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].ends_with("/.loopc/worktrees/bad-3"), "{kept:?}");
    assert!(kept[1].ends_with("/.loopc/worktrees/bad-4"), "{kept:?}");
    repo.loopc(&["clean"]).status(0).run();
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(r.stdout.contains("kept: 2 worktree(s)"), "{r:?}");
}
