//! What a run finds left by an earlier one: stale worktrees and task
//! branches, a task branch the user checked out, work still running after
//! `kill -9` of loopc, a damaged state.json and a torn events.jsonl.

use crate::harness::{SIMPLE_AGENT, Test, no_process_with, process_alive_with};

const PLAN: &str = r#"
loop "res" { }
budget { iterations = 20 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot }
task a { prompt = "a" }
task b: a { prompt = "b" }
"#;

fn setup() -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(PLAN);
    repo
}

fn set_state_status(repo: &Test, status: &str) {
    let mut s = repo.state();
    s["status"] = status.into();
    std::fs::write(
        repo.root.join(".loopc/state.json"),
        serde_json::to_string_pretty(&s).unwrap(),
    )
    .unwrap();
}

#[test]
fn stale_worktrees_and_task_branches_of_a_killed_run_are_cleaned_up() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let wt = repo.root.join(".loopc/worktrees");
    let p = |name: &str| wt.join(name).to_string_lossy().into_owned();
    // What a killed run can leave: a worktree on a task branch, one whose
    // directory vanished, a locked scratch worktree, a locked one whose
    // directory vanished, a directory git never registered, a task branch
    // without a worktree.
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "loopc/res/a/5",
        &p("a-5"),
        "main",
    ]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "loopc/res/b/6",
        &p("b-6"),
        "main",
    ]);
    std::fs::remove_dir_all(wt.join("b-6")).unwrap();
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        &p("_merge-b-3"),
        "main",
    ]);
    repo.git(&["worktree", "lock", &p("_merge-b-3")]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "loopc/res/a/9",
        &p("a-9"),
        "main",
    ]);
    repo.git(&["worktree", "lock", "--reason", "initializing", &p("a-9")]);
    std::fs::remove_dir_all(wt.join("a-9")).unwrap();
    // `git worktree add` cut off before it checked out the task branch: its
    // HEAD is still git's placeholder, the entry locked "initializing".
    repo.git(&["worktree", "add", "-q", "--detach", &p("a-7"), "main"]);
    repo.git(&["worktree", "lock", "--reason", "initializing", &p("a-7")]);
    std::fs::write(
        repo.root.join(".git/worktrees/a-7/HEAD"),
        format!("{}\n", "0".repeat(40)),
    )
    .unwrap();
    // `git worktree add` cut off after writing `.git` and some files, its
    // administrative entry gone (a plain directory there is not loopc's and
    // stays: see run_safety).
    std::fs::create_dir_all(wt.join("c-2/sub")).unwrap();
    std::fs::write(wt.join("c-2/sub/f"), "x").unwrap();
    let admin = repo.root.join(".git/worktrees/c-2");
    std::fs::write(
        wt.join("c-2/.git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    repo.git(&["branch", "loopc/res/b/4", "main"]);
    // The same in today's names, `<task>.r<run>-a<attempt>` (the ones above
    // are what versions before run-numbered names left).
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "loopc/res/a/r3-a1",
        &p("a.r3-a1"),
        "main",
    ]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        &p("+merge-b.r3-replay"),
        "main",
    ]);
    repo.git(&["worktree", "lock", &p("+merge-b.r3-replay")]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        &p("b.r3-a1.retry-2"),
        "main",
    ]);
    repo.git(&[
        "worktree",
        "lock",
        "--reason",
        "initializing",
        &p("b.r3-a1.retry-2"),
    ]);
    std::fs::write(
        repo.root.join(".git/worktrees/b.r3-a1.retry-2/HEAD"),
        format!("{}\n", "0".repeat(40)),
    )
    .unwrap();
    std::fs::create_dir_all(wt.join("c.r3-a2")).unwrap();
    repo.git(&["branch", "loopc/res/b/r2-a2", "main"]);
    // loopc records a task branch in its ledger before making it.
    let ledger = repo.root.join(".loopc/branches");
    let mut text = std::fs::read_to_string(&ledger).unwrap_or_default();
    for b in [
        "loopc/res/a/5",
        "loopc/res/b/6",
        "loopc/res/a/9",
        "loopc/res/b/4",
        "loopc/res/a/r3-a1",
        "loopc/res/b/r2-a2",
    ] {
        text.push_str(b);
        text.push('\n');
    }
    std::fs::write(&ledger, text).unwrap();
    // Not loopc's (or not this plan's): left alone.
    let user_wt = repo.bin.join("user-wt");
    repo.git(&["branch", "feature", "main"]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        &user_wt.to_string_lossy(),
        "feature",
    ]);
    repo.git(&["branch", "loopc/other/a/1", "main"]);
    set_state_status(&repo, "running");

    let r = repo.loopc(&["run"]).status(0).run();
    assert!(r.stderr.contains("did not finish"), "{r:?}");
    assert!(r.stderr.contains("stale worktree"), "{r:?}");
    assert!(
        r.stderr
            .contains("task branches loopc/res/… left by an earlier run"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("not made by loopc"), "{r:?}");
    // Both tasks were replayed from the cache: this run made no worktree,
    // so everything that is gone was removed by reconciling.
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "cached");
    let left: Vec<_> = std::fs::read_dir(&wt).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        repo.extra_worktrees(),
        [user_wt.to_string_lossy().into_owned()]
    );
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname:short)", "refs/heads/"]),
        "feature\nloop/res\nloopc/other/a/1\nmain"
    );
    assert!(!repo.root.join(".git/worktrees/_merge-b-3").exists());
    // The ledger forgets the branches it removed.
    let ledger = std::fs::read_to_string(&ledger).unwrap();
    assert!(!ledger.contains("loopc/res/b/4"), "{ledger}");
    assert!(!ledger.contains("loopc/res/b/r2-a2"), "{ledger}");
}

#[test]
fn a_task_branch_checked_out_elsewhere_is_left_alone_and_named() {
    let repo = setup();
    // A failed attempt keeps its task branch; the user checks it out
    // elsewhere to look at it.
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\necho bad > bad.txt\nexit 1\n",
    );
    repo.plan(&PLAN.replace(
        "task a { prompt = \"a\" }",
        "task a { prompt = \"a\"  attempts = 1 }",
    ));
    repo.loopc(&["run"]).status(1).run();
    let inspect = repo.bin.join("inspect");
    let kept = repo.root.join(".loopc/worktrees/a.r1-a1");
    repo.git(&["worktree", "remove", "--force", &kept.to_string_lossy()]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        &inspect.to_string_lossy(),
        "loopc/res/a/r1-a1",
    ]);
    let before = repo.git(&["rev-parse", "loopc/res/a/r1-a1"]);
    repo.script("agent.sh", SIMPLE_AGENT);

    // `a` ran out of attempts with its key (the agent's script is not in
    // it): it runs again when asked.
    let r = repo.loopc(&["run", "--retry-failed"]).status(0).run();
    assert!(
        r.stderr.contains(&format!(
            "the task branch `loopc/res/a/r1-a1` is checked out at {}",
            inspect.display()
        )),
        "{r:?}"
    );
    // The user's worktree and branch are as they were; the task's attempt
    // is named for this run, run 2.
    assert_eq!(repo.git(&["rev-parse", "loopc/res/a/r1-a1"]), before);
    assert!(inspect.join("README").exists());
    let started: Vec<_> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "attempt_started" && e["task"] == "a")
        .collect();
    assert!(
        // The second run's only attempt of `a` (the first run's came first).
        started.len() == 2
            && started[1]["worktree"]
                .as_str()
                .unwrap()
                .ends_with("a.r2-a1"),
        "{started:?}"
    );
    assert_eq!(repo.status_of("a"), "passed");

    // `loopc clean` keeps it too, and says so.
    let c = repo.loopc(&["clean"]).status(0).run();
    assert!(c.stderr.contains("loopc/res/a/r1-a1"), "{c:?}");
    assert_eq!(repo.git(&["rev-parse", "loopc/res/a/r1-a1"]), before);
}

#[test]
fn work_left_running_by_a_killed_loopc_is_killed_by_the_next_run() {
    let repo = setup();
    let marker = format!("orphan-marker-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    let hold = repo.bin.join("hold");
    let started = repo.bin.join("started");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ -e {hold} ]; then
  {sleeper} 1000 &
  touch {started}
  {sleeper} 1000
fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
"#,
            hold = hold.display(),
            sleeper = sleeper,
            started = started.display()
        ),
    );
    let mut child = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(2000, || started.exists()),
        "the agent never started"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // Killing loopc alone leaves its agent running.
    assert!(
        repo.wait_for(2000, || process_alive_with(&marker)),
        "the precondition: orphans survive kill -9"
    );

    std::fs::remove_file(&hold).unwrap();
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(r.stderr.contains("killed 1 process group"), "{r:?}");
    assert!(no_process_with(&marker), "the orphaned agent survived");
    assert_eq!(repo.status_of("b"), "passed");
}

#[test]
fn damaged_or_newer_state_is_refused_with_what_to_do() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let path = repo.root.join(".loopc/state.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let newer = good.replacen("\"version\": 3", "\"version\": 99", 1);
    assert_ne!(newer, good);
    let cases = [
        (
            "truncated",
            good[..good.len() / 2].to_string(),
            "truncated or corrupt",
        ),
        ("empty", String::new(), "truncated or corrupt"),
        (
            "garbage",
            "\u{0}\u{1}not json{".to_string(),
            "truncated or corrupt",
        ),
        (
            "no version",
            "{\"plan\": \"res\"}".to_string(),
            "truncated or corrupt",
        ),
        ("newer", newer, "written by a newer loopc"),
    ];
    for (what, text, says) in cases {
        std::fs::write(&path, &text).unwrap();
        for args in [&["status"][..], &["status", "--json"], &["run"]] {
            let r = repo.loopc(args).output();
            assert_eq!(r.status, 2, "{what} {args:?}: {r:?}");
            assert!(r.stderr.contains("state.json"), "{what} {args:?}: {r:?}");
            assert!(r.stderr.contains(says), "{what} {args:?}: {r:?}");
            assert!(
                r.stderr.contains("remove") && !r.stderr.contains("panicked"),
                "{what} {args:?}: {r:?}"
            );
        }
        // `run` refused before doing anything: the file is as it was.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{what}");
    }
    // Doing what the message says works, and loses no passed work.
    std::fs::remove_file(&path).unwrap();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "cached");
}

#[test]
fn a_torn_last_event_line_is_tolerated() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let path = repo.root.join(".loopc/events.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let lines_before = text.lines().count();
    text.push_str("{\"seq\": 999, \"event\": \"attempt_sta");
    std::fs::write(&path, &text).unwrap();

    repo.loopc(&["status"]).status(0).run();
    repo.loopc(&["graph", "plan.loop", "--state"])
        .status(0)
        .run();
    repo.loopc(&["run"]).status(0).run();

    // The torn line stays on a line of its own; every new event is whole.
    let after = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(
        lines[lines_before],
        "{\"seq\": 999, \"event\": \"attempt_sta"
    );
    let new: Vec<serde_json::Value> = lines[lines_before + 1..]
        .iter()
        .map(|l| serde_json::from_str(l).expect("a whole event"))
        .collect();
    assert_eq!(new[0]["event"], "run_started");
    assert_eq!(new.last().unwrap()["event"], "run_finished");
    // Sequence numbers go on after the torn line's.
    assert_eq!(new[0]["seq"], (lines_before + 2) as u64);
}

#[test]
fn a_users_worktree_under_loopcs_worktrees_directory_is_left_alone() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let mine = repo.root.join(".loopc/worktrees/mine");
    repo.git(&["branch", "feature", "main"]);
    repo.git(&["worktree", "add", "-q", &mine.to_string_lossy(), "feature"]);
    std::fs::write(mine.join("draft.txt"), "unsaved work\n").unwrap();
    // Named like a task worktree, but on the user's own branch.
    let also = repo.root.join(".loopc/worktrees/a-7");
    repo.git(&["branch", "feature2", "main"]);
    repo.git(&["worktree", "add", "-q", &also.to_string_lossy(), "feature2"]);
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(!r.stderr.contains("stale worktree"), "{r:?}");
    assert!(r.stderr.contains("not made by loopc"), "{r:?}");
    assert!(r.stderr.contains("feature"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(mine.join("draft.txt")).unwrap(),
        "unsaved work\n"
    );
    assert!(also.join("README").exists());
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(
        listed.lines().any(|l| l == "branch refs/heads/feature"),
        "{listed}"
    );
    assert!(
        listed.lines().any(|l| l == "branch refs/heads/feature2"),
        "{listed}"
    );
    // `loopc clean` leaves them alone too.
    let c = repo.loopc(&["clean"]).status(0).run();
    assert!(c.stderr.contains("not made by loopc"), "{c:?}");
    assert_eq!(
        std::fs::read_to_string(mine.join("draft.txt")).unwrap(),
        "unsaved work\n"
    );
    assert!(also.join("README").exists());
}

#[test]
fn failed_attempts_keep_their_worktrees_until_clean() {
    let repo = Test::repo();
    repo.write(
        "a.loop",
        "task f { run = \"echo wip > work.txt; exit 1\" attempts = 1 }\n",
    );
    repo.write("b.loop", "task f { run = \"echo 1 > ok.txt\" }\n");
    repo.loopc(&["run", "a.loop"]).status(1).run();
    let kept = repo.root.join(".loopc/worktrees/f.r1-a1/work.txt");
    assert!(kept.exists(), "the failed attempt's worktree is kept");
    // Another plan, with a task of the same name, must neither remove it
    // nor reuse its directory.
    let r = repo.loopc(&["run", "b.loop"]).status(0).run();
    assert!(!r.stderr.contains("stale worktree"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "wip\n");
    // The same plan again: the new attempt is run 3's.
    repo.loopc(&["run", "a.loop"]).status(1).run();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "wip\n");
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/a/f/r1-a1"]));
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/a/f/r3-a1"]));
    repo.loopc(&["clean"]).status(0).run();
    assert!(!kept.exists());
    assert!(repo.extra_worktrees().is_empty());
}
