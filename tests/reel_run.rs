//! `loopc run` on REEL specs, end to end: a temporary git repository, a
//! scripted shell agent, the acceptance commands of the specs as gates.

mod common;
use common::repo::{Repo, SIMPLE_AGENT};

const DEFAULTS: &str = "budget { iterations = 10 }\nagent bot { run = \"sh @BIN@/agent.sh\" }\ndefaults { agent = bot }\n";

#[test]
fn a_directory_of_specs_runs_with_cross_file_dependencies() {
    let repo = Repo::new();
    repo.script("agent.sh", SIMPLE_AGENT);
    let specs = repo.root.join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    let write = |name: &str, text: &str| {
        std::fs::write(
            specs.join(name),
            text.replace("@BIN@", &repo.bin.to_string_lossy()),
        )
        .unwrap();
    };
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
    let r = repo.loopc(&["run", "specs"]);
    assert_eq!(r.code, 0, "{r:?}");
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
    let again = repo.loopc(&["run", "specs"]);
    assert_eq!(again.code, 0, "{again:?}");
    for task in ["auth.a1b2c3d4", "billing.0f3a9b2c", "notify.9e8d7c6b"] {
        assert_eq!(repo.status_of(task), "cached", "{task}: {again:?}");
    }
}

#[test]
fn a_failing_acceptance_command_fails_the_task_and_a_bad_spec_runs_nothing() {
    let repo = Repo::new();
    repo.script("agent.sh", SIMPLE_AGENT);
    std::fs::write(
        repo.root.join("defaults.loop"),
        DEFAULTS
            .replace("@BIN@", &repo.bin.to_string_lossy())
            .replace(
                "defaults { agent = bot }",
                "defaults { agent = bot  attempts = 1 }",
            ),
    )
    .unwrap();
    std::fs::write(
        repo.root.join("spec.md"),
        "## a1b2c3d4: Never good enough\n\nTry.\n\n**Acceptance:** `false`\n\n## b2c3d4e5: After it\n\nThen this.\n\n**Depends on:** a1b2c3d4\n**Acceptance:** `true`\n",
    )
    .unwrap();
    let r = repo.loopc(&["run", "spec.md"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(repo.status_of("a1b2c3d4"), "failed");
    // The spec's acceptance command is the task's `accept` gate.
    assert!(
        r.stdout
            .contains("a1b2c3d4: out of attempts (1 of 1): gate `accept` failed"),
        "{r:?}"
    );
    assert_eq!(repo.status_of("b2c3d4e5"), "skipped");

    std::fs::write(repo.root.join("bad.json"), "{\"tasks\": [").unwrap();
    let r = repo.loopc(&["run", "bad.json"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("error[E0001]: invalid JSON"), "{r:?}");
    assert!(r.stderr.contains("bad.json:1:12"), "{r:?}");
}
