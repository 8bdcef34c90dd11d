//! `loopc run` on REEL specs, end to end: a temporary git repository, a
//! scripted shell agent, the acceptance commands of the specs as gates.

use crate::harness::{SIMPLE_AGENT, Test};

const DEFAULTS: &str = "budget { iterations = 10 }\nagent bot { run = \"sh @BIN@/agent.sh\" }\ndefaults { agent = bot }\n";

#[test]
fn a_directory_of_specs_runs_with_cross_file_dependencies() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    let write = |name: &str, text: &str| repo.write(&format!("specs/{name}"), repo.expand(text));
    write("defaults.loop", DEFAULTS);
    write(
        "auth.md",
        "# Auth\n\n## a1b2c3d4: Extract session manager\n\nWrite the session module.\n\n**Acceptance:** `test -f auth.a1b2c3d4.txt`\n",
    );
    // The acceptance command sees the dependency's work: it was merged first.
    write(
        "billing.json",
        r#"{"name": "billing", "tasks": [{"id": "0f3a9b2c", "title": "Bill per session",
            "description": "Bill per session.",
            "acceptance": "test -f billing.0f3a9b2c.txt && test -f auth.a1b2c3d4.txt",
            "depends_on": ["auth.a1b2c3d4"]}]}"#,
    );
    write(
        "notify.feature",
        "Feature: Notify\n\n  @id:9e8d7c6b @depends-on:billing.0f3a9b2c\n  @acceptance:grep -q 'made by notify.9e8d7c6b' notify.9e8d7c6b.txt\n  Scenario: Warn before expiry\n    Given a session about to expire\n    Then the user is warned\n",
    );
    let main_before = repo.git(&["rev-parse", "main"]);
    let r = repo.loopc(&["run", "specs"]).status(0).run();
    for task in ["auth.a1b2c3d4", "billing.0f3a9b2c", "notify.9e8d7c6b"] {
        assert_eq!(repo.status_of(task), "passed", "{task}: {r:?}");
    }
    assert_eq!(repo.state()["plan_file"], "specs");
    // The integration branch is named after the directory and holds every task's work.
    let files = repo.files_at("loop/specs");
    for f in [
        "auth.a1b2c3d4.txt",
        "billing.0f3a9b2c.txt",
        "notify.9e8d7c6b.txt",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    // Dependencies ran first.
    assert!(
        repo.seq_of("attempt_started", "billing.0f3a9b2c")
            > repo.seq_of("attempt_finished", "auth.a1b2c3d4")
    );
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);

    // A second run replays every task from the cache: the lowered tasks'
    // keys are stable from one compilation of the specs to the next.
    let again = repo.loopc(&["run", "specs"]).status(0).run();
    for task in ["auth.a1b2c3d4", "billing.0f3a9b2c", "notify.9e8d7c6b"] {
        assert_eq!(repo.status_of(task), "cached", "{task}: {again:?}");
    }
}

#[test]
fn a_failing_acceptance_command_fails_the_task_and_a_bad_spec_runs_nothing() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write(
        "defaults.loop",
        repo.expand(DEFAULTS).replace(
            "defaults { agent = bot }",
            "defaults { agent = bot  attempts = 1 }",
        ),
    );
    repo.write(
        "spec.md",
        "## a1b2c3d4: Never good enough\n\nTry.\n\n**Acceptance:** `false`\n\n## b2c3d4e5: After it\n\nThen this.\n\n**Depends on:** a1b2c3d4\n**Acceptance:** `true`\n",
    );
    let r = repo.loopc(&["run", "spec.md"]).status(1).run();
    assert_eq!(repo.status_of("a1b2c3d4"), "failed");
    // The spec's acceptance command is the task's `accept` gate.
    assert!(
        r.stdout
            .contains("a1b2c3d4: out of attempts (1 of 1): gate `accept` failed"),
        "{r:?}"
    );
    assert_eq!(repo.status_of("b2c3d4e5"), "skipped");

    repo.write("bad.json", "{\"tasks\": [");
    let r = repo.loopc(&["run", "bad.json"]).status(2).run();
    assert!(r.stderr.contains("error[E0001]: invalid JSON"), "{r:?}");
    assert!(r.stderr.contains("bad.json:1:12"), "{r:?}");
}
