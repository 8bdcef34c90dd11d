//! Branches loopc did not create: `loopc clean` and `loopc run` touch only
//! the task branches recorded in loopc's ledger (`.loopc/branches`); a
//! user's branch or another checkout's with a task branch's name is left
//! alone (the run's number is above theirs), one named `loopc` that blocks
//! the namespace is a pre-flight error.

use crate::harness::{SIMPLE_AGENT, Test};

const TWO_TASKS: &str = r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
"#;

/// A plan whose one task `a` fails its only attempt (leaving `x.txt` in
/// its kept worktree).
fn failing_plan(repo: &Test) {
    repo.script(
        "fail.sh",
        "#!/bin/sh\ncat >/dev/null\necho x > x.txt\nexit 3\n",
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10  failures = 10 }
agent bad { run = "sh @BIN@/fail.sh" }
task a { agent = bad  prompt = "x"  attempts = 1 }
"#,
    );
}

#[test]
fn clean_removes_only_branches_loopc_created() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    failing_plan(&repo);
    // Branches of a plan that never ran, in loopc's shape.
    repo.git(&["branch", "loopc/other/t/1"]);
    repo.loopc(&["run"]).status(1).run();
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loopc/h/a/r1-a1"]));
    let gone = "(no longer there: `loopc clean` removes logs)";
    let before = repo.loopc(&["status"]).run();
    assert!(before.stdout.contains("    logs: "), "{before:?}");
    assert!(!before.stdout.contains(gone), "{before:?}");
    repo.loopc(&["clean"]).status(0).run();
    // The status of that run still names the logs, and says they are gone.
    let after = repo.loopc(&["status"]).run();
    assert!(after.stdout.contains(gone), "{after:?}");
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loopc/h/a/r1-a1"]));
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loopc/other/t/1"]));
}

#[test]
fn a_users_branch_with_a_task_branch_name_is_left_alone() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    // Today's name of run 1's attempt 1, and an earlier version's: the run
    // takes run number 2 and touches neither, nor does `loopc clean`.
    let names = ["loopc/h/a/r1-a1", "loopc/h/a/1"];
    let mine: Vec<String> = names
        .iter()
        .map(|name| {
            repo.git(&["branch", name]);
            repo.git(&["rev-parse", name])
        })
        .collect();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.state()["run"], 2);
    repo.loopc(&["clean"]).status(0).run();
    for (name, tip) in names.iter().zip(&mine) {
        assert_eq!(&repo.git(&["rev-parse", name]), tip);
    }
}

#[test]
fn a_second_checkout_runs_beside_the_first_ones_task_branches() {
    let repo = Test::repo();
    failing_plan(&repo);
    repo.commit("plan");
    repo.loopc(&["run"]).status(1).run();
    let first = "loopc/h/a/r1-a1";
    let tip = repo.git(&["rev-parse", first]);
    let first_wt = repo.root.join(".loopc/worktrees/a.r1-a1");
    assert!(first_wt.is_dir());
    // A second checkout of the same repository: its `.loopc/` (and ledger)
    // is its own, the branches are shared.
    let second = repo.bin.with_file_name("second");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "userwt",
        &second.to_string_lossy(),
    ]);
    repo.loopc(&["run", "--dry-run"])
        .current_dir(&second)
        .status(0)
        .run();
    let r = repo.loopc(&["run"]).current_dir(&second).status(1).run();
    assert!(!r.stderr.contains("not created by loopc"), "{r:?}");
    // Its try takes a run number above the first checkout's.
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/h/a/r2-a1"]));
    assert!(second.join(".loopc/worktrees/a.r2-a1").is_dir());
    // Recovery in the second checkout leaves the first one's alone (`a`
    // ran out of attempts with its key: asked to run again).
    repo.loopc(&["run", "--retry-failed"])
        .current_dir(&second)
        .status(1)
        .run();
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/h/a/r3-a1"]));
    // A run in the first checkout goes on above the second one's
    // numbers and leaves its branches alone.
    repo.loopc(&["run", "--retry-failed"]).status(1).run();
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/h/a/r4-a1"]));
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/h/a/r2-a1"]));
    // `loopc clean` in the second checkout removes only its own.
    repo.loopc(&["clean"]).current_dir(&second).status(0).run();
    for b in ["loopc/h/a/r2-a1", "loopc/h/a/r3-a1"] {
        assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", b]), "{b}");
    }
    assert_eq!(repo.git(&["rev-parse", first]), tip);
    assert!(first_wt.join("x.txt").is_file());
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "loopc/h/a/r4-a1"]));
    repo.loopc(&["clean"]).status(0).run();
    assert!(!first_wt.exists());
    assert!(repo.git(&["branch", "--list", "loopc/*"]).is_empty());
}

#[test]
fn a_branch_named_loopc_is_a_preflight_error() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    repo.git(&["branch", "loopc"]);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("`loopc`"), "{r:?}");
    assert!(!repo.root.join(".loopc/worktrees/a.r1-a1").exists());
}

#[test]
fn clean_integration_leaves_a_branch_loopc_did_not_create() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    // The user made the integration branch before loopc's first run.
    repo.git(&["branch", "loop/h"]);
    repo.loopc(&["run"]).run();
    let c = repo.loopc(&["clean", "--integration"]).status(2).run();
    assert!(c.stderr.contains("not created by loopc"), "{c:?}");
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/h"]));
}

#[test]
fn clean_integration_refuses_before_removing_anything() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "h" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "a" }
task bad { run = "exit 1"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    // The failed attempt's worktree and logs are kept until `loopc clean`.
    let kept = repo.root.join(".loopc/worktrees/bad.r1-a1");
    assert!(kept.exists());
    let elsewhere = repo.bin.join("inspect");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        &elsewhere.to_string_lossy(),
        "loop/h",
    ]);
    let c = repo.loopc(&["clean", "--integration"]).status(2).run();
    assert!(
        c.stderr.contains(&format!(
            "the integration branch loop/h is checked out at {}",
            elsewhere.display()
        )),
        "{c:?}"
    );
    assert!(c.stderr.contains("nothing was removed"), "{c:?}");
    assert_eq!(c.stderr.lines().count(), 1, "{c:?}");
    assert!(kept.exists(), "the refused clean removed a worktree");
    assert!(repo.root.join(".loopc/logs").exists());
}

#[test]
fn a_branch_blocking_the_plans_namespace_is_a_preflight_error() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    repo.git(&["branch", "loopc/h/b"]);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("`loopc/h/b`"), "{r:?}");
    assert!(!repo.root.join(".loopc/worktrees/a.r1-a1").exists());
}

const ON_MAIN: &str = r#"
loop "m" { branch = "main" }
task a "Task A" { run = "echo a > a.txt" }
task b "Task B": a { run = "echo b > b.txt" }
"#;

#[test]
fn an_existing_integration_branch_with_a_users_commits_is_refused() {
    let repo = Test::repo();
    repo.write("mine.txt", "precious\n");
    repo.commit("my work");
    let mine = repo.git(&["rev-parse", "main"]);
    // Run from another branch, one commit behind main.
    repo.git(&["checkout", "-q", "-b", "work", "main~1"]);
    repo.plan(ON_MAIN);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("`main`"), "{r:?}");
    assert!(r.stderr.contains("my work"), "{r:?}");
    assert!(r.stderr.contains("choose another `branch`"), "{r:?}");
    assert_eq!(repo.git(&["rev-parse", "main"]), mine);
    assert!(!repo.root.join(".loopc/worktrees/a.r1-a1").exists());
    assert!(!repo.root.join(".loopc/logs/a").exists());
}

#[test]
fn an_existing_integration_branch_with_only_loopcs_commits_is_rebuilt() {
    let repo = Test::repo();
    repo.git(&["checkout", "-q", "-b", "work"]);
    repo.plan(ON_MAIN);
    // `main` is behind nothing and ahead of nothing: loopc may use it.
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("main", "b.txt").as_deref(), Some("b\n"));
    // Without the ledger (the user deleted `.loopc/`), main's commits that
    // are not on the base are all loopc's: it is rebuilt.
    std::fs::remove_dir_all(repo.root.join(".loopc")).unwrap();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("main", "b.txt").as_deref(), Some("b\n"));
    // A commit of the user's on top makes it the user's branch again.
    repo.git(&["checkout", "-q", "main"]);
    repo.write("mine.txt", "precious\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "-q", "-m", "my work"]);
    let mine = repo.git(&["rev-parse", "main"]);
    repo.git(&["checkout", "-q", "work"]);
    std::fs::remove_dir_all(repo.root.join(".loopc")).unwrap();
    repo.loopc(&["run"]).status(2).run();
    assert_eq!(repo.git(&["rev-parse", "main"]), mine);
}

#[test]
fn a_users_commit_on_loopcs_own_integration_branch_is_not_dropped() {
    let repo = Test::repo();
    repo.plan("loop \"jg\" { }\ntask a { run = \"echo a > a.txt\" }\n");
    repo.loopc(&["run"]).status(0).run();
    // loopc created loop/jg; the user commits on it afterwards.
    repo.git(&["checkout", "-q", "loop/jg"]);
    repo.write("mine.txt", "precious\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "-q", "-m", "my fix on top"]);
    let mine = repo.git(&["rev-parse", "loop/jg"]);
    repo.git(&["checkout", "-q", "main"]);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("my fix on top"), "{r:?}");
    assert!(r.stderr.contains("merge them into the base"), "{r:?}");
    assert_eq!(repo.git(&["rev-parse", "loop/jg"]), mine);
    assert_eq!(
        repo.show("loop/jg", "mine.txt").as_deref(),
        Some("precious\n")
    );
}

/// An agent that commits in its worktree (`git commit`, then maybe `git
/// revert --no-commit` of it) and leaves one more file for loopc to commit.
fn committing_agent(repo: &Test, revert: bool) {
    let undo = if revert {
        "git revert --no-commit HEAD\n"
    } else {
        ""
    };
    repo.script(
        "commit.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\necho c > c.txt\ngit add c.txt\n\
             git commit -q -m 'agent commit'\n{undo}echo d > d.txt\n\
             echo '{{\"status\":\"completed\",\"summary\":\"committed\"}}' > \"$LOOP_HANDOFF\"\n"
        ),
    );
    repo.plan(
        "loop \"refs\" { }\nbudget { iterations = 5 }\n\
         agent cm { run = \"sh @BIN@/commit.sh\" }\ntask commit { agent = cm  prompt = \"x\" }\n",
    );
}

/// The subjects of the commits on `loop/refs` that are not on `main`.
fn subjects(repo: &Test) -> String {
    repo.git(&["log", "--format=%s", "main..loop/refs"])
}

/// Commits "my fix on top" on `loop/refs` by hand (from `main`, back to
/// it); returns the branch's new head.
fn commit_by_hand(repo: &Test) -> String {
    repo.git(&["checkout", "-q", "loop/refs"]);
    repo.write("mine.txt", "precious\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "-q", "-m", "my fix on top"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["rev-parse", "loop/refs"])
}

#[test]
fn an_agents_own_commits_do_not_block_later_runs() {
    let repo = Test::repo();
    committing_agent(&repo, false);
    for _ in 0..3 {
        repo.loopc(&["run", "-q"]).status(0).run();
        assert_eq!(subjects(&repo), "loop(commit): commit\nagent commit");
        assert_eq!(repo.show("loop/refs", "c.txt").as_deref(), Some("c\n"));
    }
    // Deleting the branch changes nothing: the replay brings the agent's
    // commit back, and the runs after it take it for loopc's.
    repo.loopc(&["clean", "--integration"]).status(0).run();
    for _ in 0..2 {
        repo.loopc(&["run", "-q"]).status(0).run();
        assert_eq!(subjects(&repo), "loop(commit): commit\nagent commit");
    }
    // A commit the user adds by hand is still refused, and kept.
    let mine = commit_by_hand(&repo);
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = repo.loopc(args).status(2).run();
        assert!(
            r.stderr.contains(
                "the integration branch `loop/refs` has 1 commit(s) that are not on the base \
                 and were not made by loopc (first: "
            ) && r.stderr.contains(" my fix on top); loopc rebuilds"),
            "{args:?}: {r:?}"
        );
    }
    assert_eq!(repo.git(&["rev-parse", "loop/refs"]), mine);
}

#[test]
fn a_hand_commit_with_a_subject_like_loopcs_is_still_refused() {
    let repo = Test::repo();
    committing_agent(&repo, false);
    repo.loopc(&["run", "-q"]).status(0).run();
    // The subject loopc writes, but none of its `Loop-Task` trailer.
    repo.git(&["checkout", "-q", "loop/refs"]);
    repo.write("mine.txt", "precious\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "-q", "-m", "loop(commit): my own fix"]);
    repo.git(&["checkout", "-q", "main"]);
    let mine = repo.git(&["rev-parse", "loop/refs"]);
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr.contains("were not made by loopc")
            && r.stderr.contains(" loop(commit): my own fix)"),
        "{r:?}"
    );
    assert_eq!(repo.git(&["rev-parse", "loop/refs"]), mine);
}

#[test]
fn loopcs_commits_count_as_loopcs_without_the_cache_and_the_state() {
    // The subjects and their `Loop-Task` trailers are all there is then.
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "refs" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
"#,
    );
    repo.loopc(&["run", "-q"]).status(0).run();
    repo.loopc(&["clean", "--cache"]).status(0).run();
    std::fs::remove_file(repo.root.join(".loopc/state.json")).unwrap();
    repo.loopc(&["run", "-q"]).status(0).run();
    assert_eq!(repo.status_of("b"), "passed");
}

#[test]
fn an_agents_reverted_commit_does_not_block_runs_without_the_cache() {
    let repo = Test::repo();
    committing_agent(&repo, true);
    // No cache entry records the work: the last run's state does.
    for _ in 0..3 {
        repo.loopc(&["run", "-q", "--no-cache"]).status(0).run();
        assert_eq!(subjects(&repo), "loop(commit): commit\nagent commit");
        assert_eq!(repo.show("loop/refs", "c.txt"), None);
        assert_eq!(repo.show("loop/refs", "d.txt").as_deref(), Some("d\n"));
    }
    assert!(repo.git(&["for-each-ref", "refs/loopc/cache"]).is_empty());
    commit_by_hand(&repo);
    let r = repo.loopc(&["run", "--no-cache"]).status(2).run();
    assert!(
        r.stderr.contains("were not made by loopc") && r.stderr.contains(" my fix on top)"),
        "{r:?}"
    );
}

/// Task names git refuses as they are in a branch name (`a.lock` ends with
/// `.lock`) or only at a ref's end (`v1.`) run like any other: their
/// branches carry the name made ref-safe, their work lands, a failed
/// attempt's branch is kept and cleaned, and a rerun replays them.
#[test]
fn task_names_ending_in_a_dot_or_dot_lock_run_kept_and_cached() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script(
        "once.sh",
        "#!/bin/sh\ncat >/dev/null\n[ \"$LOOP_ATTEMPT\" = 1 ] && exit 3\necho \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n",
    );
    repo.plan(
        r#"
loop "h" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
agent once { run = "sh @BIN@/once.sh" }
task "a.lock" { agent = once  prompt = "x" }
task "v1.": "a.lock" { agent = bot  prompt = "y" }
task "a.lock-" { agent = bot  prompt = "z" }
"#,
    );
    repo.loopc(&["check"]).status(0).run();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        repo.show("loop/h", "a.lock.txt").unwrap(),
        "made by a.lock\n"
    );
    assert_eq!(repo.show("loop/h", "v1..txt").unwrap(), "made by v1.\n");
    assert_eq!(
        repo.show("loop/h", "a.lock-.txt").unwrap(),
        "made by a.lock-\n"
    );
    // The failed first attempt's branch is kept, under the ref-safe name.
    let kept = std::fs::read_to_string(repo.root.join(".loopc/kept")).unwrap();
    assert_eq!(kept.trim(), "loopc/h/a.lock+/r1-a1", "{kept}");
    let task_branches = || {
        repo.git(&[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/loopc",
        ])
    };
    assert_eq!(task_branches().trim(), "loopc/h/a.lock+/r1-a1");
    repo.loopc(&["clean"]).status(0).run();
    assert_eq!(task_branches().trim(), "");
    repo.loopc(&["run"]).status(0).run();
    for t in ["a.lock", "v1.", "a.lock-"] {
        assert_eq!(repo.status_of(t), "cached", "{t}");
    }
}

/// Every task branch the docs show is the shape a run makes,
/// `loopc/<plan>/<task>/r<run>-a<attempt>` (or `…/<n>`, as earlier versions
/// named them): none is under the integration branch's `loop/`, none ends
/// in a bare `<attempt>`.
#[test]
fn the_docs_name_task_branches_as_a_run_makes_them() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            docs.push(path);
        }
    }
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for code in text.split('`').skip(1).step_by(2) {
            let Some(at) = code.find("/<plan>/") else {
                continue;
            };
            let branch = code;
            assert!(
                code[..at].ends_with("loopc"),
                "{}: `{branch}`: task branches are under loopc/",
                doc.display()
            );
            // A prefix (`loopc/<plan>/`, `loopc/<plan>/<task>`) is no branch.
            if branch.split('/').count() < 4 {
                continue;
            }
            let last = branch.rsplit('/').next().unwrap();
            // `r3-a1`: an example of one.
            let example = last
                .strip_prefix('r')
                .and_then(|l| l.split_once("-a"))
                .is_some_and(|(run, attempt)| {
                    [run, attempt]
                        .iter()
                        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                });
            assert!(
                example || ["r<run>-a<attempt>", "<n>", "…"].contains(&last),
                "{}: `{branch}` does not end as a task branch does",
                doc.display()
            );
        }
    }
    // And that is the shape a run makes.
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(TWO_TASKS);
    repo.loopc(&["run"]).run();
    let ledger = std::fs::read_to_string(repo.root.join(".loopc/branches")).unwrap();
    assert!(
        ledger
            .lines()
            .any(|l| l.starts_with("loopc/h/a/r") && l.contains("-a1")),
        "{ledger}"
    );
}

#[test]
fn without_a_configured_name_loopc_signs_its_commits_as_itself() {
    let repo = Test::repo();
    repo.git(&["config", "--unset", "user.name"]);
    // An empty value is no name either (git refuses it for commits).
    repo.git(&["config", "user.email", ""]);
    repo.plan("loop \"who\" { }\ntask a { run = \"echo a > a.txt\" }\n");
    let nowhere = repo.root.join("no-global-config");
    let run = |args: &[&str]| {
        repo.loopc(args)
            .env("GIT_CONFIG_GLOBAL", &nowhere)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status(0)
            .run()
    };
    run(&["run"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>", "loop/who"]),
        "loopc <loopc@localhost> / loopc <loopc@localhost>"
    );

    // A configured identity is git's own.
    repo.git(&["config", "user.name", "Test"]);
    repo.git(&["config", "user.email", "test@example.com"]);
    run(&["run", "--force", "a"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae>", "loop/who"]),
        "Test <test@example.com>"
    );
}

#[test]
fn a_plan_file_of_the_same_name_in_another_directory_is_said_to_share_the_branch() {
    let repo = Test::repo();
    repo.write("a/plan.loop", "task x { run = \"echo a > a.txt\" }\n");
    repo.write("b/plan.loop", "task x { run = \"echo b > b.txt\" }\n");
    repo.commit("two plans");
    let a = repo.loopc(&["run"]).current_dir(repo.root.join("a")).run();
    assert!(!a.stderr.contains("another plan file"), "{a:?}");
    assert_eq!(repo.state()["plan_path"], "a/plan.loop");
    let b = repo.loopc(&["run"]).current_dir(repo.root.join("b")).run();
    assert!(
        b.stderr.contains(
            "warning: the integration branch `loop/plan` was last used by another plan file, \
             a/plan.loop; this run of b/plan.loop rebuilds it from the base (a/plan.loop's \
             passed tasks stay in the cache). To give each plan its own branch, name it: \
             `loop \"<name>\" { }` (or `loop { branch = \"…\" }`)"
        ),
        "{b:?}"
    );
    assert_eq!(repo.show("loop/plan", "a.txt"), None);
    // The same plan again: nothing to say.
    let again = repo.loopc(&["run"]).current_dir(repo.root.join("b")).run();
    assert!(!again.stderr.contains("another plan file"), "{again:?}");
}
