//! `loop.notify`: one command when the run ends, however it ends, with the
//! state document of `loopc status --json` (and where the run's report
//! would be written) on stdin; its failure is
//! reported and never changes the run's exit status.

use crate::harness::Test;

/// A plan whose `notify` saves its stdin and environment in the scripts
/// directory, with `tasks` after it.
fn plan(repo: &Test, tasks: &str) {
    repo.plan(&format!(
        "loop \"nt\" {{ notify = \"cat > @BIN@/notified.json && echo \\\"$LOOP_RUN_STATUS $LOOP_EXIT_STATUS\\\" > @BIN@/notified.txt\" }}\n{tasks}"
    ));
}

fn notified(repo: &Test) -> (String, String) {
    let json = std::fs::read_to_string(repo.bin.join("notified.json")).unwrap_or_default();
    let env = std::fs::read_to_string(repo.bin.join("notified.txt")).unwrap_or_default();
    (json, env)
}

#[test]
fn a_passed_run_notifies_with_the_status_document() {
    let repo = Test::repo();
    plan(&repo, "task t { run = \"echo x > x.txt\" }\n");
    repo.loopc(&["run"]).status(0).run();
    let (json, env) = notified(&repo);
    let status = repo.loopc(&["status", "--json"]).status(0).run().stdout;
    // The state document, and where the run's report would be written.
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let report = doc.as_object_mut().unwrap().remove("report").unwrap();
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(doc, status);
    let file = repo.root.canonicalize().unwrap().join(".loopc/report.html");
    assert_eq!(report["file"], file.to_str().unwrap());
    assert_eq!(env, "passed 0\n");
}

#[test]
fn failed_and_budget_stopped_runs_notify_too() {
    let repo = Test::repo();
    plan(&repo, "task t { run = \"exit 1\"  attempts = 1 }\n");
    repo.loopc(&["run"]).status(1).run();
    let (json, env) = notified(&repo);
    assert!(json.contains("\"status\": \"failed\""), "{json}");
    assert_eq!(env, "failed 1\n");

    plan(
        &repo,
        "budget { time = 1s }\ntask t { run = \"sleep 30; echo x > x.txt\" }\n",
    );
    repo.loopc(&["run"]).status(3).run();
    let (json, env) = notified(&repo);
    assert!(json.contains("budget `time` spent"), "{json}");
    assert_eq!(env, "stopped 3\n");
}

#[test]
fn an_interrupted_run_notifies() {
    let repo = Test::repo();
    let started = repo.bin.join("started");
    plan(
        &repo,
        &format!(
            "task t {{ run = \"touch {} && sleep 30\" }}\n",
            started.display()
        ),
    );
    let mut child = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(2000, || started.exists()), "t never started");
    crate::harness::signal(child.id(), libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let (json, env) = notified(&repo);
    assert!(json.contains("\"status\": \"interrupted\""), "{json}");
    assert_eq!(env, "interrupted 130\n");
}

#[test]
fn a_failing_notify_is_reported_and_changes_no_exit_status() {
    let repo = Test::repo();
    repo.plan("loop \"nt\" { notify = \"echo no webhook >&2; exit 7\" }\ntask t { run = \"echo x > x.txt\" }\n");
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(
        r.stderr
            .contains("the notify command failed (exit status 7)"),
        "{r:?}"
    );
    assert!(r.stderr.contains("+notify.log"), "{r:?}");
    let log = std::fs::read_to_string(repo.root.join(".loopc/logs/+notify.log")).unwrap();
    assert_eq!(log, "no webhook\n");
}

/// A task may be called `notify.log`: its log directory and the notify
/// command's log never take one another's place.
#[test]
fn a_task_named_like_the_notify_log_does_not_stop_the_notice() {
    let repo = Test::repo();
    plan(&repo, "task \"notify.log\" { run = \"echo x > x.txt\" }\n");
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(!r.stderr.contains("warning"), "{r:?}");
    assert_eq!(notified(&repo).1, "passed 0\n");
    assert!(repo.root.join(".loopc/logs/notify.log/1").is_dir());
    assert!(repo.root.join(".loopc/logs/+notify.log").is_file());
}
