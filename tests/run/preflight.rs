//! The checks that refuse a run come before anything changes, and
//! `run --dry-run` makes every one of them, failing the same way with the
//! same exit status.

use crate::harness::{SIMPLE_AGENT, Test};

const PLAN: &str = r#"
loop "pre" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
"#;

/// `loopc run` and `loopc run --dry-run` both exit 2 with `needle` on stderr.
fn both_refuse(repo: &Test, needle: &str) {
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = repo.loopc(args).status(2).run();
        assert!(r.stderr.contains(needle), "{args:?}: {r:?}");
        assert!(!r.stdout.contains("dry run of plan"), "{args:?}: {r:?}");
    }
}

#[test]
fn a_refused_run_cleans_nothing_up_first() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(PLAN);
    // What a killed run leaves: a worktree on one of its task branches.
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "loopc/pre/a/1",
        ".loopc/worktrees/a-1",
    ]);
    repo.write(".loopc/branches", "loopc/pre/a/1\n");
    repo.git(&["checkout", "-q", "-b", "loop/pre"]);
    both_refuse(&repo, "is checked out at");
    assert!(repo.root.join(".loopc/worktrees/a-1").is_dir());
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loopc/pre/a/1"]));
}

#[test]
fn dry_run_refuses_a_missing_program() {
    let repo = Test::repo();
    repo.plan(
        "loop \"pre\" { }\nagent bot { run = \"no-such-program-here --go\" }\n\
         task a { agent = bot  prompt = \"x\" }\n",
    );
    both_refuse(&repo, "no-such-program-here");
}

#[test]
fn a_missing_program_is_named_once_and_its_other_strings_counted() {
    let repo = Test::repo();
    repo.plan(
        "loop \"pre\" { }\n\
         task a { run = \"true\"  accept = \"no-such-check-here a\" }\n\
         task b { run = \"true\"  accept = \"no-such-check-here b\" }\n\
         task c { run = \"true\"  accept = \"no-such-check-here c\" }\n\
         task d { run = \"true\"  accept = \"no-such-check-here c\" }\n",
    );
    let r = repo.loopc(&["run", "--dry-run"]).status(2).run();
    assert_eq!(
        r.stderr,
        "error: plan.loop:2:33: the `accept` of task `a`: `no-such-check-here` is not a command \
         the shell can find (run = \"no-such-check-here a\"); nothing was run\n\
         error: 3 more commands start `no-such-check-here`, which the shell cannot find either\n",
    );
}

#[test]
fn dry_run_refuses_while_another_run_holds_the_lock() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(PLAN);
    std::fs::create_dir_all(repo.root.join(".loopc")).unwrap();
    let path = repo.root.join(".loopc/lock");
    std::fs::write(&path, format!("pid {}\n", std::process::id())).unwrap();
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    fs4::FileExt::lock(&held).unwrap();
    both_refuse(&repo, "holds the lock");
    drop(held);
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(r.stdout.contains("a: run"), "{r:?}");
}

#[test]
fn dry_run_refuses_an_unreadable_state() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(PLAN);
    repo.write(".loopc/state.json", "{ not json");
    both_refuse(&repo, "state.json");
}

/// A branch named as a directory of the integration branch (`loop` for
/// `loop/pre`), or one inside it, keeps git from creating it: both the run
/// and the dry run refuse, naming it, and the last run's logs stay where
/// they are.
#[test]
fn a_branch_in_the_integration_branchs_way_is_refused_before_anything_changes() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(PLAN);
    repo.loopc(&["run"]).status(0).run();
    let logs = repo.root.join(".loopc/logs/a/1");
    assert!(logs.is_dir());
    repo.git(&["branch", "-D", "loop/pre"]);
    for blocker in ["loop", "loop/pre/x"] {
        repo.git(&["branch", blocker]);
        both_refuse(
            &repo,
            &format!(
                "error: a branch named `{blocker}` exists, which keeps git from creating the \
                 integration branch `loop/pre`; rename it (git branch -m {blocker} <new-name>)"
            ),
        );
        assert!(logs.is_dir(), "{blocker}");
        assert!(!repo.root.join(".loopc/earlier-logs").exists(), "{blocker}");
        repo.git(&["branch", "-D", blocker]);
    }
    repo.loopc(&["run"]).status(0).run();
}

/// `loopc run /elsewhere/app/plan.loop` from another repository runs the
/// plan in its own repository, saying so; nothing is written in the
/// current one.
#[test]
fn a_plan_runs_in_its_own_repository_not_the_current_directorys() {
    let app = Test::repo();
    app.script("agent.sh", crate::harness::SIMPLE_AGENT);
    app.plan(PLAN);
    let other = Test::repo();
    let plan = app.root.join("plan.loop");
    let r = other
        .loopc(&[std::ffi::OsStr::new("run"), plan.as_os_str()])
        .status(0)
        .run();
    assert!(
        r.stderr.contains(&format!(
            "note: the plan {} is in the repository {}, not in the current directory's ({}): \
             it runs there",
            plan.display(),
            app.root.display(),
            other.root.display()
        )),
        "{r:?}"
    );
    assert!(app.show("loop/pre", "a.txt").is_some(), "{r:?}");
    assert!(!other.root.join(".loopc").exists());
    assert!(!other.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/pre"]));
}

/// Outside a repository the refusal says how to make one; in one without
/// a commit it says to commit first, and writes nothing (no `.loopc/`).
#[test]
fn no_repository_or_no_commit_is_refused_with_the_way_out_and_writes_nothing() {
    let plain = Test::new();
    plain.plan("task a { run = \"true\" }\n");
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = plain.loopc(args).status(2).run();
        assert!(
            r.stderr
                .starts_with("error: plan.loop is not inside a git repository: ")
                && r.stderr.contains("`git init`")
                && r.stderr.contains("commit the project"),
            "{r:?}"
        );
    }
    let empty = Test::new();
    empty.git(&["init", "-q", "-b", "main"]);
    empty.plan("task a { run = \"true\" }\n");
    both_refuse(&empty, "has no commit to start from");
    assert!(!empty.root.join(".loopc").exists());
    assert!(!empty.root.join(".git/loopc-lock").exists());
}

/// Every kind of pre-flight error at once, as `check` reports every error
/// of a file: a missing program, an agent script not in the commit, a
/// `context` file not committed (E0015, last); one `copy` that matches
/// nothing is said too, and then which scripts `copy` brings is not known.
#[test]
fn every_kind_of_preflight_error_is_said_in_one_run() {
    let repo = Test::repo();
    repo.write("scripts/agent.sh", "cat\n");
    repo.plan(
        r#"
budget { iterations = 5 }
agent a { run = "claud -p" }
agent b { run = "sh scripts/agent.sh" }
task x { agent = a  prompt = "p"  context = ["DESIGN.md"] }
task y { agent = b  prompt = "p" }
"#,
    );
    let r = repo.loopc(&["run", "--dry-run"]).status(2).run();
    let at = |needle: &str| {
        r.stderr
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {}", r.stderr))
    };
    let program = at("`claud` is not a command the shell can find");
    let script = at("`scripts/agent.sh` is not in the commit attempts start from");
    let context = at("error[E0015]: context file `DESIGN.md` is not in the commit");
    assert!(program < script && script < context, "{}", r.stderr);
    assert!(
        r.stderr.ends_with(
            "error: plan.loop names context files that are not in the commit attempts start \
             from; nothing was run\n"
        ),
        "{}",
        r.stderr
    );
    // A `copy` that matches nothing: said with the rest.
    repo.plan(
        r#"
loop { copy = [".env"] }
budget { iterations = 5 }
agent a { run = "claud -p" }
task x { agent = a  prompt = "p" }
"#,
    );
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(r.stderr.contains("`claud` is not a command"), "{r:?}");
    assert!(
        r.stderr
            .contains("`loop.copy` names \".env\", which matches no file"),
        "{r:?}"
    );
}
