//! Worktree files: `loop.copy` and `loop.link` bring untracked or ignored
//! files of the main checkout into every new worktree (copies are part of
//! the cache key, and never committed), `LOOP_REPO_ROOT` names the main
//! checkout, and a pattern that matches nothing stops `run` and
//! `--dry-run` before anything starts.

use crate::harness::Test;

const PLAN: &str = r#"loop "wf" {
  copy = [".env", "*.local"]
  link = ["node_modules"]
  setup = "test -f .env && test -n \"$LOOP_REPO_ROOT\""
}

gate clean = "test -f .env"

task t {
  run = "cat .env > seen.txt && echo \"$LOOP_REPO_ROOT\" > root.txt && test -L node_modules && ls node_modules/pkg > ls.txt"
  gates = [clean]
}
"#;

fn setup() -> Test {
    let repo = Test::repo();
    repo.write(".gitignore", ".env\nnode_modules/\n");
    repo.commit("ignore local files");
    repo.write(".env", "A=1\n");
    repo.write("notes.local", "untracked, not ignored\n");
    repo.write("node_modules/pkg/index.js", "module.exports = 1;\n");
    repo.plan(PLAN);
    repo
}

#[test]
fn copied_and_linked_files_reach_setup_the_task_and_its_gates_but_no_commit() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/wf", "seen.txt").as_deref(), Some("A=1\n"));
    assert_eq!(
        repo.show("loop/wf", "ls.txt").as_deref(),
        Some("index.js\n")
    );
    let root = repo.git(&["rev-parse", "--show-toplevel"]);
    assert_eq!(
        repo.show("loop/wf", "root.txt")
            .map(|s| s.trim().to_string()),
        Some(root)
    );
    let files = repo.files_at("loop/wf");
    for brought in [".env", "notes.local", "node_modules"] {
        assert!(
            !files.iter().any(|f| f.starts_with(brought)),
            "{brought} was committed: {files:?}"
        );
    }
}

#[test]
fn a_copied_files_content_is_part_of_the_cache_key() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(r.stdout.starts_with("t: cached\n"), "{r:?}");
    repo.write(".env", "A=2\n");
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(
        r.stdout.starts_with("t: run (copied file .env changed)\n"),
        "{r:?}"
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("t"), "passed");
    assert_eq!(repo.show("loop/wf", "seen.txt").as_deref(), Some("A=2\n"));
}

#[test]
fn a_pattern_matching_nothing_stops_run_and_dry_run_naming_it() {
    let repo = setup();
    std::fs::remove_file(repo.root.join(".env")).unwrap();
    for args in [&["run"][..], &["run", "--dry-run"][..]] {
        let r = repo.loopc(args).status(2).run();
        assert!(
            r.stderr
                .contains("plan.loop:2:11: `loop.copy` names \".env\", which matches no file"),
            "{args:?}: {r:?}"
        );
    }
    assert!(repo.extra_worktrees().is_empty());
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/wf"]));
}

#[test]
fn copy_and_link_are_checked_and_formatted() {
    let repo = Test::repo();
    repo.plan("loop { copy = [1]  link = [\"/etc/x\"] }\ntask t { run = \"true\" }\n");
    let r = repo.loopc(&["check", "plan.loop"]).status(1).run();
    assert!(r.stderr.contains("E0007"), "{r:?}");
    assert!(r.stderr.contains("E0014"), "{r:?}");
    assert!(
        r.stderr.contains("invalid glob `/etc/x` in `link`"),
        "{r:?}"
    );
    repo.plan("loop {copy=[\".env\"]   link=[\"node_modules\"] notify=\"true\"}\ntask t { run = \"true\"  changes = optional }\n");
    repo.loopc(&["fmt", "plan.loop"]).status(0).run();
    let text = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    assert!(text.contains("copy   = [\".env\"]"), "{text}");
    assert!(text.contains("changes = optional"), "{text}");
    repo.loopc(&["check", "plan.loop"]).status(0).run();
}
