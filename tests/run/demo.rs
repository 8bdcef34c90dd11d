//! The shipped demo (examples/demo) runs end to end: a real Python project
//! whose unittest suite is the gate, the scripted agent, two tasks in
//! parallel, a retry that succeeds from the feedback file, and an
//! agent-judged review gate.

use crate::harness::Test;
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() == "__pycache__" {
                continue;
            }
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn demo_plan_runs_end_to_end() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let repo = Test::repo();
    copy_dir(&demo.join("project"), &repo.root);
    std::fs::copy(demo.join("demo.loop"), repo.root.join("demo.loop")).unwrap();
    repo.commit("demo project");

    let out = repo
        .loopc(&["run", "demo.loop"])
        .env("DEMO_AGENT", demo.join("agent.py"))
        .run();
    let stderr = out.stderr;

    for t in ["slugify", "titlecase", "cli"] {
        assert_eq!(repo.status_of(t), "passed", "{stderr}");
    }
    // titlecase failed its tests once and was fixed from the feedback.
    assert_eq!(repo.task("titlecase")["attempts"], 2);
    let fb =
        std::fs::read_to_string(repo.root.join(".loopc/logs/titlecase/2/feedback.md")).unwrap();
    assert!(fb.contains("The Lord of the Rings"), "{fb}");
    // slugify and titlecase overlapped.
    let s_start = repo.seq_of("attempt_started", "slugify");
    let t_start = repo.seq_of("attempt_started", "titlecase");
    let s_end = repo.seq_of("attempt_finished", "slugify");
    let t_end = repo.seq_of("attempt_finished", "titlecase");
    assert!(s_start < t_end && t_start < s_end);
    // Later prompts carry the progress of passed tasks.
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/cli/1/prompt.md")).unwrap();
    assert!(
        prompt.contains("- slugify: Add slugify() — added slugify() with tests"),
        "{prompt}"
    );
    assert!(prompt.contains("- titlecase: Add title_case()"), "{prompt}");
    // The review gate ran and approved.
    let review =
        std::fs::read_to_string(repo.root.join(".loopc/logs/cli/1/gate-review.handoff.json"))
            .unwrap();
    assert!(review.contains("\"completed\""), "{review}");
    // The merged project's own tests pass on the integration branch.
    let files = repo.files_at("loop/demo");
    for f in [
        "textkit/slug.py",
        "textkit/titlecase.py",
        "textkit/__main__.py",
        "tests/test_cli.py",
    ] {
        assert!(files.contains(&f.to_string()), "{f}: {files:?}");
    }
}

/// `examples/demo/run.sh` itself, as the README's first command runs it:
/// it succeeds and leaves nothing in the temporary directory.
#[test]
fn demo_script_leaves_no_temp_directory_behind() {
    let stdout = crate::harness::run_example_script("demo/run.sh");
    assert!(
        stdout.contains("the scratch repository is removed"),
        "{stdout}"
    );
    // No line points into the scratch directory the script removes (the
    // kept worktree of titlecase's failed attempt is said to go with it).
    assert!(!stdout.contains("/loopc-demo."), "{stdout}");
    assert!(
        stdout.contains(
            "kept: 1 worktree of failed or blocked attempts, questions and infrastructure \
             failures (of this run and earlier ones), each with its task branch, in the scratch repository, \
             which this script removes at its end"
        ),
        "{stdout}"
    );
    // Nor a report command run bare, as if the repository were still there.
    assert!(
        stdout.contains(
            "report: `loopc report -o .loopc/report.html` in the scratch repository (run.sh --keep keeps it)"
        ),
        "{stdout}"
    );
    // A build says it is one, and how long it may take.
    let lib = std::fs::read_to_string(crate::harness::examples_dir().join("lib.sh")).unwrap();
    assert!(
        lib.contains("==> building loopc (cargo build: a few minutes on a fresh clone"),
        "{lib}"
    );
}

/// A `LOOPC` that is no program is refused at once, naming it (exit 2),
/// not carried into the git commands that come after it.
#[test]
fn demo_script_refuses_a_loopc_that_is_no_program() {
    let tmp = tempfile::tempdir().unwrap();
    for loopc in ["/nonexistent/loopc", "/"] {
        let out = std::process::Command::new("bash")
            .arg(crate::harness::examples_dir().join("demo/run.sh"))
            .env("LOOPC", loopc)
            .env("TMPDIR", tmp.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "run.sh: LOOPC={loopc} is not a program loopc can be run as (unset LOOPC to build one)\n"
            )
        );
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
