//! A task that may change nothing (`changes = optional`), and the "no
//! changes" failure saying how to declare it.

use crate::harness::Test;

#[test]
fn a_check_only_task_fails_no_changes_with_the_fix_unless_it_says_optional() {
    let repo = Test::repo();
    repo.plan("loop \"ch\" { }\ntask lint { run = \"test -f README\"  attempts = 1 }\n");
    repo.loopc(&["run"]).status(1).run();
    let reason = repo.task("lint")["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.contains("no changes"), "{reason}");
    assert!(reason.contains("`changes = optional`"), "{reason}");

    repo.plan(
        "loop \"ch\" { }\ntask lint { run = \"test -f README\"  attempts = 1  changes = optional }\n",
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("lint"), "passed");
}

#[test]
fn changes_takes_required_or_optional() {
    let repo = Test::repo();
    repo.plan("task lint { run = \"true\"  changes = maybe }\n");
    let r = repo.loopc(&["check", "plan.loop"]).status(1).run();
    assert!(r.stderr.contains("E0007"), "{r:?}");
    assert!(r.stderr.contains("`required` or `optional`"), "{r:?}");
    repo.plan("task lint { run = \"true\"  changes = \"optional\" }\n");
    let r = repo.loopc(&["check", "plan.loop"]).status(1).run();
    assert!(r.stderr.contains("E0007"), "{r:?}");
}
