//! `loopc run` warns when files the plan reads have uncommitted changes:
//! attempts start from the commit, so the edits are not seen.

use crate::harness::Test;

#[test]
fn uncommitted_changes_to_files_the_plan_reads_are_named() {
    let repo = Test::repo();
    repo.write("scripts/make.sh", "echo one > out.txt\n");
    repo.write("src/lib.py", "x = 1\n");
    repo.plan(
        "loop \"uc\" { }\ntask t { run = \"sh scripts/make.sh\"  inputs = [\"src/*.py\"] }\n",
    );
    repo.commit("a plan and its script");
    let quiet = repo.loopc(&["run"]).status(0).run();
    assert!(!quiet.stderr.contains("uncommitted"), "{quiet:?}");

    repo.write("scripts/make.sh", "echo two > out.txt\n");
    repo.write("src/lib.py", "x = 2\n");
    repo.write("README", "edited, but not read by the plan\n");
    std::fs::write(
        repo.root.join("plan.loop"),
        "loop \"uc\" { }\ntask t { run = \"sh scripts/make.sh\"  inputs = [\"src/*.py\"] }\n# edited\n",
    )
    .unwrap();
    for args in [&["run", "--dry-run"][..], &["run"][..]] {
        let r = repo.loopc(args).status(0).run();
        assert!(
            r.stderr.contains(
                "warning: uncommitted changes to files the plan reads: plan.loop, \
                 scripts/make.sh, src/lib.py; attempts start from the commit"
            ),
            "{args:?}: {r:?}"
        );
        assert!(!r.stderr.contains("README"), "{r:?}");
    }
    // The committed script ran.
    assert_eq!(repo.show("loop/uc", "out.txt").as_deref(), Some("one\n"));
}

#[test]
fn files_the_plan_reads_that_are_not_in_git_are_named() {
    let repo = Test::repo();
    // Written, never added: the first-run mistake.
    repo.write("scripts/make.sh", "echo made > out.txt\n");
    repo.write("data/x.csv", "1\n");
    repo.write("notes.txt", "not read by the plan\n");
    repo.write(".env", "SECRET=1\n");
    repo.plan(
        "loop \"ut\" { copy = [\".env\"] }\n\
         task t { run = \"test -f .env && sh scripts/make.sh\"  inputs = [\"data/*.csv\"]  attempts = 1 }\n",
    );
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(
        r.stderr.contains(
            "warning: files the plan reads are not in git: data/x.csv, scripts/make.sh; \
             attempts start from a commit and will not have them"
        ),
        "{r:?}"
    );
    // Not the plan itself (loopc reads it from the checkout), not what
    // `copy` brings in, not a file the plan does not name.
    for quiet in ["plan.loop", ".env", "notes.txt"] {
        assert!(!r.stderr.contains(quiet), "{quiet}: {r:?}");
    }
    repo.commit("the script and the data");
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(!r.stderr.contains("not in git"), "{r:?}");
}
