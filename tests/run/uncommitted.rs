//! Attempts start from a commit: `loopc run` says once what of the main
//! checkout they do not see (uncommitted changes, files never added),
//! leaving the plan file out of it (loopc reads it from the checkout), and
//! refuses before any work an agent whose command runs a file the commit
//! does not have.

use crate::harness::Test;

#[test]
fn the_uncommitted_changes_attempts_do_not_see_are_said_once() {
    let repo = Test::repo();
    repo.write("scripts/make.sh", "echo one > out.txt\n");
    repo.write("src/lib.py", "x = 1\n");
    repo.plan(
        "loop \"uc\" { }\ntask t { run = \"sh scripts/make.sh\"  inputs = [\"src/*.py\"] }\n",
    );
    repo.commit("a plan and its script");
    let clean = repo.loopc(&["run"]).status(0).run();
    assert!(!clean.stderr.contains("uncommitted"), "{clean:?}");

    // A committed plan with uncommitted edits is no surprise: loopc reads
    // it from the checkout.
    std::fs::write(
        repo.root.join("plan.loop"),
        "loop \"uc\" { }\ntask t { run = \"sh scripts/make.sh\"  inputs = [\"src/*.py\"] }\n# edited\n",
    )
    .unwrap();
    let plan_only = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(!plan_only.stderr.contains("warning"), "{plan_only:?}");

    repo.write("scripts/make.sh", "echo two > out.txt\n");
    repo.write("src/lib.py", "x = 2\n");
    repo.write("README", "edited, but not read by the plan\n");
    repo.write("notes.txt", "never added\n");
    for args in [&["run", "--dry-run"][..], &["run"][..]] {
        let r = repo.loopc(args).status(0).run();
        let warnings: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("warning"))
            .collect();
        // The files the plan reads first, a few named, the rest counted.
        assert_eq!(warnings.len(), 1, "{args:?}: {r:?}");
        assert!(
            warnings[0].starts_with("warning: attempts start from commit ")
                && warnings[0].ends_with(
                    " and do not see 4 uncommitted changes in this checkout: scripts/make.sh, \
                     src/lib.py, README and 1 more; commit them first if the run needs them"
                ),
            "{args:?}: {r:?}"
        );
        assert!(!r.stderr.contains("plan.loop"), "{r:?}");
    }
    // The committed script ran.
    assert_eq!(repo.show("loop/uc", "out.txt").as_deref(), Some("one\n"));
    // `-q`: errors and the output asked for only.
    let quiet = repo.loopc(&["-q", "run"]).status(0).run();
    assert_eq!(quiet.stderr, "", "{quiet:?}");
}

#[test]
fn an_untracked_plan_is_left_out_and_files_not_in_git_are_marked() {
    let repo = Test::repo();
    // Written, never added: the first-run mistake.
    repo.write("scripts/make.sh", "echo made > out.txt\n");
    repo.write("data/x.csv", "1\n");
    repo.write(".env", "SECRET=1\n");
    repo.plan(
        "loop \"ut\" { copy = [\".env\"] }\n\
         task t { run = \"test -f .env && sh scripts/make.sh\"  inputs = [\"data/*.csv\"]  attempts = 1 }\n",
    );
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(
        r.stderr.contains(
            "do not see 2 uncommitted changes in this checkout: data/x.csv (not in git), \
             scripts/make.sh (not in git); commit them first"
        ),
        "{r:?}"
    );
    // Not the plan itself (untracked too), not what `copy` brings in.
    for quiet in ["plan.loop", ".env"] {
        assert!(!r.stderr.contains(quiet), "{quiet}: {r:?}");
    }
    repo.commit("the script and the data");
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(!r.stderr.contains("uncommitted"), "{r:?}");
}

/// A script above the repository's top cannot be committed or copied in
/// (`copy` cannot leave the repository): the refusal says what works.
#[test]
fn an_agent_script_outside_the_repository_gets_advice_that_works() {
    let repo = Test::repo();
    repo.plan(
        "budget { cost = $1 }\nagent out { run = \"sh ../tools/agent.sh\"  cost = $0.1 }\n\
         task a { agent = out  prompt = \"x\" }\n",
    );
    repo.loopc(&["run", "--dry-run"])
        .status(2)
        .stderr(
            "error: plan.loop:2:19: agent `out` (task `a`): `../tools/agent.sh` is outside the \
             repository (run = \"sh ../tools/agent.sh\"): an attempt runs in a worktree of \
             it, where that path names nothing; give the file's absolute path, or move it \
             into the repository and commit it; nothing was run\n",
        )
        .run();
}

/// The agent's script exists in the checkout but not in the commit: every
/// attempt would fail "cannot open scripts/agent.sh" and be charged, so
/// the run is refused before any work, naming it, as a missing program is.
#[test]
fn an_agent_whose_script_is_not_committed_is_refused_before_any_work() {
    let repo = Test::repo();
    repo.write(
        "scripts/agent.sh",
        "cat >/dev/null\necho x > \"$LOOP_TASK.txt\"\nprintf '{\"status\":\"completed\"}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        "loop \"sc\" { }\nbudget { cost = $1 }\n\
         agent bot { run = \"sh scripts/agent.sh\"  cost = $0.1 }\n\
         defaults { agent = bot }\n\
         task a { prompt = \"x\" }\ntask b { prompt = \"y\" }\n",
    );
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = repo.loopc(args).status(2).run();
        assert_eq!(
            r.stderr,
            "error: plan.loop:3:19: agent `bot` (task `a`): `scripts/agent.sh` is not in the \
             commit attempts start from ("
                .to_string()
                + &repo.git(&["rev-parse", "--short=10", "HEAD"])
                + "): it is not in git (run = \"sh scripts/agent.sh\"); commit it, or bring it \
                   in with `loop { copy = [...] }`; nothing was run\n\
                   error: 1 more command runs `scripts/agent.sh`\n",
            "{args:?}"
        );
    }
    assert!(!repo.root.join(".loopc/state.json").exists());
    assert!(repo.extra_worktrees().is_empty());
    repo.git(&["add", "scripts/agent.sh"]);
    repo.loopc(&["run", "--dry-run"])
        .status(2)
        .stderr_contains("it is added but not committed")
        .run();
    repo.commit("the agent");
    repo.loopc(&["run"]).status(0).run();
}

/// A script the check cannot see (a quoted path) that the shell cannot
/// open blocks the task at its first attempt, as exit 127 does: no retry
/// can make the file appear.
#[test]
fn a_shell_that_cannot_open_the_agents_script_blocks_at_once() {
    let repo = Test::repo();
    repo.plan(
        "loop \"co\" { }\nbudget { iterations = 5 }\n\
         agent bot { run = \"sh 'scripts/agent.sh'\" }\n\
         task a { agent = bot  prompt = \"x\"  attempts = 3 }\n",
    );
    repo.loopc(&["run"]).status(1).run();
    let a = repo.task("a");
    assert_eq!(a["status"], "blocked");
    assert_eq!(a["attempts"], 1);
    let reason = a["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the agent's command could not run (exit status ")
            && reason.contains("scripts/agent.sh"),
        "{reason}"
    );
}
