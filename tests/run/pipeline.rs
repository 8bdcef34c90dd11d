//! `loopc run` on a REEL spec tree (docs/reel.md, "Spec trees"): only the
//! worked stages run, a spec whose tasks all passed moves to the next
//! stage with one commit on the integration branch, dependencies on specs
//! in other stages are met or hold a task back, and reruns replay.

use crate::harness::{SIMPLE_AGENT, Test, no_process_with};

const DEFAULTS: &str = "budget { iterations = 20 }\nagent bot { run = \"sh @BIN@/agent.sh\" }\ndefaults { agent = bot  attempts = 1 }\n";

/// A Markdown spec with one task `id` whose acceptance command is `accept`,
/// depending on `deps` (REEL's spelling allowed).
fn spec(id: &str, accept: &str, deps: &str) -> String {
    let deps = if deps.is_empty() {
        String::new()
    } else {
        format!("**Depends on:** {deps}\n")
    };
    format!("# Spec\n\n## {id}: Task {id}\n\nDo {id}.\n\n{deps}**Acceptance:** `{accept}`\n")
}

/// The tree of the tests, committed on `main`:
/// - todo/later.md: not worked; `waits` depends on it (an earlier stage);
/// - inflight/auth.md (two tasks), billing.json (depends on auth),
///   report.md (depends on active/base.md: a later stage), broken.md (its
///   acceptance fails), waits.md (depends on todo/later.md);
/// - review/old.md; active/base.md; no archived/.
fn tree() -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("tree/defaults.loop", repo.expand(DEFAULTS));
    repo.write("tree/todo/later.md", spec("c0c0c0c0", "true", ""));
    repo.write(
        "tree/inflight/auth.md",
        "# Auth\n\n## a1b2c3d4: Session\n\nWrite it.\n\n**Acceptance:** `test -f auth.a1b2c3d4.txt`\n\n\
         ## b2c3d4e5: Refresh\n\nThen this.\n\n**Depends on:** a1b2c3d4\n**Acceptance:** `test -f auth.b2c3d4e5.txt`\n",
    );
    repo.write(
        "tree/inflight/billing.json",
        r#"{"tasks": [{"id": "0f3a9b2c", "description": "Bill.",
            "acceptance": "test -f billing.0f3a9b2c.txt && test -f auth.a1b2c3d4.txt",
            "depends_on": ["auth:a1b2c3d4"]}]}"#,
    );
    repo.write(
        "tree/inflight/report.md",
        spec("5e5e5e5e", "test -f report.5e5e5e5e.txt", "base:a0a0a0a0"),
    );
    repo.write("tree/inflight/broken.md", spec("dead0001", "false", ""));
    repo.write(
        "tree/inflight/waits.md",
        spec("77777777", "true", "later:c0c0c0c0"),
    );
    repo.write("tree/review/old.md", spec("0d0d0d0d", "true", ""));
    repo.write(
        "tree/active/base.md",
        spec("a0a0a0a0", "test -f base.a0a0a0a0.txt", ""),
    );
    repo.commit("the spec tree");
    repo
}

/// The subjects of the commits on `range`, newest first.
fn subjects(repo: &Test, range: &str) -> Vec<String> {
    repo.git(&["log", "--format=%s", range])
        .lines()
        .map(str::to_string)
        .collect()
}

fn spec_state(repo: &Test, file: &str) -> serde_json::Value {
    repo.state()["specs"]
        .as_array()
        .expect("specs in state.json")
        .iter()
        .find(|s| s["file"] == file)
        .cloned()
        .unwrap_or_else(|| panic!("no spec {file} in state.json"))
}

#[test]
fn only_inflight_runs_and_each_passed_spec_moves_to_review_with_one_commit() {
    let repo = tree();
    let main_before = repo.git(&["rev-parse", "main"]);
    let r = repo.loopc(&["run", "tree"]).status(1).run();

    // Only the inflight specs' tasks are in the run.
    let names: Vec<String> = repo.state()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "auth.a1b2c3d4",
            "auth.b2c3d4e5",
            "billing.0f3a9b2c",
            "broken.dead0001",
            "report.5e5e5e5e",
            "waits.77777777"
        ],
        "{r:?}"
    );
    for t in [
        "auth.a1b2c3d4",
        "auth.b2c3d4e5",
        "billing.0f3a9b2c",
        "report.5e5e5e5e",
    ] {
        assert_eq!(repo.status_of(t), "passed", "{t}: {r:?}");
    }
    assert_eq!(repo.status_of("broken.dead0001"), "failed");
    // A dependency on a spec in an earlier stage that is not worked holds
    // the task back, saying why; one in a later stage (active/) is met.
    assert_eq!(repo.status_of("waits.77777777"), "blocked");
    let why = repo.task("waits.77777777")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        why.contains("later.c0c0c0c0")
            && why.contains("todo/")
            && why.contains("--stage todo,inflight"),
        "{why}"
    );

    // One commit per passed spec, on the integration branch only.
    let log = subjects(&repo, "main..loop/tree");
    let advances: Vec<&String> = log
        .iter()
        .filter(|s| s.starts_with("loop: advance "))
        .collect();
    assert_eq!(advances.len(), 3, "{log:#?}");
    for s in ["auth.md", "billing.json", "report.md"] {
        assert!(
            log.contains(&format!("loop: advance tree/inflight/{s} to review/")),
            "{s}: {log:#?}"
        );
    }
    // After the spec's last merge: auth's move comes after both its tasks.
    let at = |subject: &str| log.iter().position(|s| s.starts_with(subject)).unwrap();
    assert!(at("loop: advance tree/inflight/auth.md") < at("loop(auth.b2c3d4e5)"));
    assert!(at("loop: advance tree/inflight/auth.md") < at("loop(auth.a1b2c3d4)"));
    let files = repo.files_at("loop/tree");
    for f in [
        "tree/review/auth.md",
        "tree/review/billing.json",
        "tree/review/report.md",
        "tree/review/old.md",
        "tree/inflight/broken.md",
        "tree/inflight/waits.md",
        "tree/todo/later.md",
        "tree/active/base.md",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:#?}");
    }
    assert!(!files.contains(&"tree/inflight/auth.md".to_string()));
    // The move is a rename: the file is the same blob.
    assert_eq!(
        repo.show("loop/tree", "tree/review/auth.md"),
        repo.show("main", "tree/inflight/auth.md")
    );
    // The user's checkout and branch are untouched.
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    assert!(repo.root.join("tree/inflight/auth.md").is_file());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    // Recorded: state.json, events, the summary.
    let auth = spec_state(&repo, "tree/inflight/auth.md");
    assert_eq!(auth["status"], "advanced");
    assert_eq!(auth["to"], "review");
    let broken = spec_state(&repo, "tree/inflight/broken.md");
    assert_eq!(broken["status"], "stayed");
    assert!(
        broken["reason"]
            .as_str()
            .unwrap()
            .contains("`broken.dead0001` is failed")
    );
    let moved: Vec<_> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "spec_advanced")
        .collect();
    assert_eq!(moved.len(), 3);
    assert!(moved.iter().any(|e| e["spec"] == "tree/inflight/auth.md"
        && e["from"] == "inflight"
        && e["to"] == "review"
        && e["commit"] == auth["commit"]));
    assert!(
        r.stdout
            .contains("spec tree/inflight/auth.md: moved from inflight/ to review/"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("spec tree/inflight/broken.md: stays in inflight/"),
        "{r:?}"
    );
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(
        status
            .stdout
            .contains("spec tree/inflight/billing.json: moved from inflight/ to review/"),
        "{status:?}"
    );

    // A rerun replays every passed task and rebuilds the same branch: the
    // same moves, one per spec, not a second one.
    let head = repo.git(&["rev-parse", "loop/tree"]);
    let again = repo.loopc(&["run", "tree"]).status(1).run();
    for t in ["auth.a1b2c3d4", "auth.b2c3d4e5", "billing.0f3a9b2c"] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {again:?}");
    }
    assert_eq!(repo.git(&["rev-parse", "loop/tree"]), head, "{again:?}");
    let log = subjects(&repo, "main..loop/tree");
    assert_eq!(
        log.iter()
            .filter(|s| s.starts_with("loop: advance "))
            .count(),
        3
    );

    // Once merged, the moved specs are in review/, which is not worked:
    // nothing moves again.
    repo.git(&["merge", "-q", "--ff-only", "loop/tree"]);
    repo.loopc(&["run", "tree"]).status(1).run();
    assert_eq!(
        subjects(&repo, "main..loop/tree")
            .iter()
            .filter(|s| s.starts_with("loop: advance "))
            .count(),
        0
    );
    assert_eq!(repo.state()["specs"].as_array().unwrap().len(), 2);
}

#[test]
fn the_flag_and_the_setting_work_other_stages_and_a_move_keeps_the_cache() {
    let repo = tree();
    repo.loopc(&["run", "tree"]).status(1).run();
    repo.git(&["merge", "-q", "--ff-only", "loop/tree"]);

    // `--stage review`: the specs that moved there are replayed from the
    // cache (moving a spec keeps its tasks' keys) and move on to active/.
    let r = repo
        .loopc(&["run", "tree", "--stage", "review"])
        .status(0)
        .run();
    for t in [
        "auth.a1b2c3d4",
        "auth.b2c3d4e5",
        "billing.0f3a9b2c",
        "report.5e5e5e5e",
    ] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {r:?}");
    }
    assert_eq!(repo.status_of("old.0d0d0d0d"), "passed");
    let files = repo.files_at("loop/tree");
    for f in ["auth.md", "billing.json", "report.md", "old.md"] {
        assert!(
            files.contains(&format!("tree/active/{f}")),
            "{f}: {files:#?}"
        );
    }
    // Not merged: in the checkout, active/ holds base.md only.

    // `loop.stages` in defaults.loop: active/ is worked, and its specs
    // move to archived/, which does not exist yet.
    assert!(!repo.root.join("tree/archived").exists());
    repo.write(
        "tree/defaults.loop",
        format!(
            "{}loop {{ stages = [\"active\"] }}\n",
            repo.expand(DEFAULTS)
        ),
    );
    repo.commit("work active/");
    let r = repo.loopc(&["run", "tree"]).status(0).run();
    assert_eq!(repo.status_of("base.a0a0a0a0"), "passed", "{r:?}");
    let files = repo.files_at("loop/tree");
    assert!(
        files.contains(&"tree/archived/base.md".to_string()),
        "{files:#?}"
    );
    assert!(!files.contains(&"tree/active/base.md".to_string()));
    repo.git(&["merge", "-q", "--ff-only", "loop/tree"]);

    // archived/ is the last stage: its specs run, and stay.
    let r = repo
        .loopc(&["run", "tree", "--stage", "archived"])
        .status(0)
        .run();
    assert!(
        r.stdout.contains(
            "spec tree/archived/base.md: stays in archived/: archived/ is the last stage"
        ),
        "{r:?}"
    );
    assert_eq!(
        subjects(&repo, "main..loop/tree")
            .iter()
            .filter(|s| s.starts_with("loop: advance "))
            .count(),
        0
    );
}

#[test]
fn stages_are_checked_and_named_tasks_must_be_in_a_worked_stage() {
    let repo = tree();
    // The setting: an unknown stage is a diagnostic at the string.
    repo.write(
        "tree/defaults.loop",
        format!(
            "{}loop {{ stages = [\"inflight\", \"reveiw\"] }}\n",
            repo.expand(DEFAULTS)
        ),
    );
    let r = repo.loopc(&["check", "tree"]).status(1).run();
    assert!(
        r.stderr
            .contains("error[E0007]: `reveiw` is not a stage of a spec tree"),
        "{r:?}"
    );
    assert!(r.stderr.contains("tree/defaults.loop:4:30"), "{r:?}");
    assert!(r.stderr.contains("did you mean `\"review\"`?"), "{r:?}");
    repo.write("tree/defaults.loop", repo.expand(DEFAULTS));

    // The flag: exit 2, nothing runs.
    let r = repo
        .loopc(&["run", "tree", "--stage", "inflight,reveiw"])
        .status(2)
        .run();
    assert!(
        r.stderr
            .contains("--stage: `reveiw` is not a stage of a spec tree"),
        "{r:?}"
    );
    assert!(!repo.root.join(".loopc/state.json").exists());

    // A stage named twice, or an empty name: exit 2 with what is wrong.
    let r = repo
        .loopc(&["run", "tree", "--stage", "todo,todo"])
        .status(2)
        .run();
    assert!(
        r.stderr
            .contains("error: --stage: `todo` is named twice; name each stage once"),
        "{r:?}"
    );
    let r = repo.loopc(&["run", "tree", "--stage", ""]).status(2).run();
    assert!(
        r.stderr
            .contains("error: --stage: an empty stage name (the stages are todo, "),
        "{r:?}"
    );
    // From inside the tree (a stage directory), the tree is the plan, not
    // its defaults.loop.
    let r = repo
        .loopc(&["run", "--dry-run"])
        .current_dir(repo.root.join("tree/inflight"))
        .status(0)
        .run();
    assert!(r.stdout.contains("dry run of plan tree"), "{r:?}");
    assert!(!repo.root.join(".loopc/state.json").exists());

    // A task that grows the plan cannot be in a spec tree: the grown plan
    // would lose the stage cut. E0010, from `check` too; nothing runs.
    repo.write(
        "tree/defaults.loop",
        format!(
            "{}task design {{ run = \"true\"  expands = \"plan/more.loop\" }}\n",
            repo.expand(DEFAULTS)
        ),
    );
    for args in [&["run", "tree"][..], &["check", "tree"][..]] {
        let r = repo.loopc(args).output();
        assert!(
            r.stderr.contains(
                "error[E0010]: task `design` has `expands`, which a REEL spec tree does not take"
            ),
            "{args:?}: {r:?}"
        );
        assert!(r.stderr.contains("tree/defaults.loop:"), "{args:?}: {r:?}");
    }
    repo.loopc(&["run", "tree"]).status(2).run();
    repo.loopc(&["check", "tree"]).status(1).run();
    assert!(!repo.root.join(".loopc/state.json").exists());
    repo.write("tree/defaults.loop", repo.expand(DEFAULTS));

    // A task of a stage that is not worked, named on the command line.
    let r = repo
        .loopc(&["run", "tree", "later.c0c0c0c0"])
        .status(2)
        .run();
    assert!(
        r.stderr.contains(
            "task `later.c0c0c0c0` is in tree/todo/later.md (todo/), a stage this run does not work"
        ),
        "{r:?}"
    );
    // With its stage worked, it runs, and so does the task it held back.
    repo.loopc(&["run", "tree", "--stage", "todo,inflight", "waits.77777777"])
        .status(0)
        .run();
    assert_eq!(repo.status_of("later.c0c0c0c0"), "passed");
    assert_eq!(repo.status_of("waits.77777777"), "passed");

    // check, graph and list cover the whole tree, every stage.
    let r = repo
        .loopc(&["graph", "tree", "--format", "json"])
        .status(0)
        .run();
    for t in ["later.c0c0c0c0", "old.0d0d0d0d", "base.a0a0a0a0"] {
        assert!(r.stdout.contains(t), "{t}: {r:?}");
    }

    // The dry run says what would move and what is held back.
    let r = repo.loopc(&["run", "tree", "--dry-run"]).status(0).run();
    assert!(
        r.stdout
            .contains("waits.77777777: blocked: depends on `later.c0c0c0c0`"),
        "{r:?}"
    );
    assert!(
        r.stdout.contains(
            "spec tree/inflight/auth.md: moves from inflight/ to review/ once its 2 task(s) pass"
        ),
        "{r:?}"
    );

    // A stage directory named alone with --stage: the tree is what to name.
    let r = repo
        .loopc(&[
            "run",
            "tree/todo",
            "--defaults",
            "tree/defaults.loop",
            "--stage",
            "review",
        ])
        .status(2)
        .run();
    assert_eq!(
        r.stderr,
        "error: --stage applies to a REEL spec tree, and tree/todo is one of its stages: name \
         the tree, `loopc run tree --stage review`\n",
        "{r:?}"
    );
    // Any other directory: not a tree.
    let r = repo
        .loopc(&["run", "tree/todo/..", "--stage", "review", "--dry-run"])
        .run();
    assert!(!r.stderr.contains("one of its stages"), "{r:?}");
    // A spec outside every stage cannot be read as part of the tree.
    repo.write("tree/stray.md", spec("5a5a5a5a", "true", ""));
    let r = repo.loopc(&["check", "tree"]).status(2).run();
    assert!(
        r.stderr
            .contains("the spec tree/stray.md lies outside every stage: move it into one"),
        "{r:?}"
    );
    std::fs::remove_file(repo.root.join("tree/stray.md")).unwrap();

    // Two stages holding specs of one stem: E0004 at the second.
    repo.write("tree/review/auth.md", spec("0e0e0e0e", "true", ""));
    let r = repo.loopc(&["check", "tree"]).status(1).run();
    assert!(
        r.stderr
            .contains("error[E0004]: two specs have the stem `auth`"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("a spec is in one stage at a time"),
        "{r:?}"
    );
}

#[test]
fn a_spec_edited_meanwhile_or_failing_the_move_s_checks_stays() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    // A gate that holds only while the spec is in inflight/: the move
    // fails it (gated like a merge).
    repo.write(
        "tree/defaults.loop",
        format!(
            "{}gate layout = \"test -f tree/inflight/pinned.md\"\n",
            repo.expand(DEFAULTS).replace(
                "defaults { agent = bot  attempts = 1 }",
                "defaults { agent = bot  attempts = 1  gates = [layout] }"
            )
        ),
    );
    repo.write("tree/inflight/pinned.md", spec("1a1a1a1a", "true", ""));
    repo.write("tree/inflight/edited.md", spec("2b2b2b2b", "true", ""));
    repo.write("tree/review/.keep", "");
    repo.commit("a small tree");
    // Edited after the commit: the run reads the edited text.
    repo.write(
        "tree/inflight/edited.md",
        format!("{}\nA note.\n", spec("2b2b2b2b", "true", "")),
    );
    let r = repo.loopc(&["run", "tree"]).status(1).run();
    assert_eq!(repo.status_of("pinned.1a1a1a1a"), "passed", "{r:?}");
    assert_eq!(repo.status_of("edited.2b2b2b2b"), "passed", "{r:?}");
    let pinned = spec_state(&repo, "tree/inflight/pinned.md");
    assert_eq!(pinned["status"], "stayed");
    assert!(
        pinned["reason"]
            .as_str()
            .unwrap()
            .contains("its move failed a check: gate `layout` of task `pinned.1a1a1a1a` failed"),
        "{pinned}"
    );
    let edited = spec_state(&repo, "tree/inflight/edited.md");
    assert_eq!(edited["status"], "stayed");
    assert!(
        edited["reason"]
            .as_str()
            .unwrap()
            .contains("is not the text this run read"),
        "{edited}"
    );
    // Neither moved; the integration branch holds the tasks' work only.
    let files = repo.files_at("loop/tree");
    assert!(files.contains(&"tree/inflight/pinned.md".to_string()));
    assert!(files.contains(&"tree/inflight/edited.md".to_string()));
    assert!(
        !subjects(&repo, "main..loop/tree")
            .iter()
            .any(|s| s.starts_with("loop: advance "))
    );
}

/// `examples/reel-pipeline/run.sh` itself: both specs move to review/ with
/// one commit each, the rerun rebuilds the same branch, and nothing is
/// left in the temporary directory.
#[test]
fn the_example_script_runs_and_leaves_nothing_behind() {
    let stdout = crate::harness::run_example_script("reel-pipeline/run.sh");
    for line in [
        "loop: advance specs/inflight/notes.md to review/",
        "loop: advance specs/inflight/profile.json to review/",
        "specs/review/notes.md",
        "specs/todo/search.md",
        "the integration branch is rebuilt exactly as before",
        "the scratch repository is removed",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
}

#[test]
fn a_signal_during_a_replayed_spec_s_move_check_interrupts_the_run() {
    // The spec's acceptance is slow only on the moved tree, so the move's
    // check is what the signal finds running. Run 1 runs the task; run 2
    // replays it from the cache, and the coordinator itself runs the check.
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    let started = repo.bin.join("move-check-started");
    let marker = format!("move-check-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    repo.write("specs/defaults.loop", repo.expand(DEFAULTS));
    repo.write(
        "specs/inflight/slow.md",
        spec(
            "88888888",
            &format!(
                "if [ -f specs/review/slow.md ]; then touch {}; {sleeper} 1000; fi; true",
                started.display()
            ),
            "",
        ),
    );
    repo.commit("a spec whose move is slow to check");
    for run in 1..=2 {
        let _ = std::fs::remove_file(&started);
        let mut child = repo.loopc(&["run", "specs"]).spawn();
        assert!(
            repo.wait_for(6000, || started.exists()),
            "run {run}: the move's check never started: {}",
            repo.spawned_stderr()
        );
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(130), "run {run}: {}", repo.spawned_stderr());
        let state = repo.state();
        assert_eq!(state["status"], "interrupted", "run {run}: {state}");
        assert!(
            repo.wait_for(2000, || no_process_with(&marker)),
            "run {run}: the move's check survived"
        );
    }
    // Run 2 replayed the task: the interrupt came during the coordinator's
    // own work, not an attempt's.
    assert_eq!(repo.status_of("slow.88888888"), "cached");
}

#[test]
fn specs_not_committed_as_they_are_are_warned_about_before_the_run() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("specs/defaults.loop", repo.expand(DEFAULTS));
    repo.write("specs/inflight/kept.md", spec("11111111", "true", ""));
    repo.write("specs/inflight/edited.md", spec("22222222", "true", ""));
    repo.commit("two specs");
    repo.write(
        "specs/inflight/edited.md",
        spec("22222222", "true && true", ""),
    );
    repo.write("specs/inflight/new.md", spec("33333333", "true", ""));
    let r = repo.loopc(&["run", "--dry-run", "specs"]).status(0).run();
    assert!(
        r.stderr.contains(
            "warning: specs of the worked stages are not committed as they are: \
             specs/inflight/edited.md (uncommitted changes), specs/inflight/new.md (not in git); \
             a spec moves to its next stage only as committed, so these would stay: commit them first"
        ),
        "{r:?}"
    );
    assert!(!r.stderr.contains("kept.md"), "{r:?}");
    // A worked stage without specs is said, not a silent "0/0 passed".
    let r = repo
        .loopc(&["run", "--dry-run", "specs", "--stage", "review"])
        .status(0)
        .run();
    assert!(
        r.stderr.contains(
            "warning: no spec in the worked stage(s) review/ of specs: no spec of the tree runs"
        ),
        "{r:?}"
    );
    // Some tasks of a spec (`run TASK…`): they run, no spec moves, and no
    // warning says that no spec runs.
    repo.write(
        "specs/inflight/kept.md",
        spec("11111111", "true", "") + &spec("44444444", "true", "").replace("# Spec\n", ""),
    );
    repo.git(&["add", "-A"]);
    repo.commit("all specs");
    let r = repo
        .loopc(&["run", "--dry-run", "specs", "kept.11111111"])
        .status(0)
        .run();
    assert!(!r.stderr.contains("no spec in the worked stage"), "{r:?}");
    assert_eq!(r.stdout.lines().next(), Some("kept.11111111: run"), "{r:?}");
}

/// A spec's move runs the checks of each of its tasks with that task's
/// variables, not those of the spec's last task, whose log directory holds
/// the move's logs.
#[test]
fn a_move_s_checks_see_their_own_task_s_variables() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("tree/defaults.loop", repo.expand(DEFAULTS));
    repo.write(
        "tree/inflight/auth.md",
        "# Auth\n\n## a1b2c3d4: Session\n\nWrite it.\n\n\
         **Acceptance:** `echo \"first: $LOOP_TASK\"; test \"$LOOP_TASK\" = auth.a1b2c3d4`\n\n\
         ## b2c3d4e5: Refresh\n\nThen this.\n\n**Depends on:** a1b2c3d4\n\
         **Acceptance:** `test \"$LOOP_TASK\" = auth.b2c3d4e5`\n",
    );
    repo.write("tree/review/.keep", "");
    repo.commit("a small tree");
    let r = repo.loopc(&["run", "tree"]).status(0).run();
    let auth = spec_state(&repo, "tree/inflight/auth.md");
    assert_eq!(auth["status"], "advanced", "{auth} {r:?}");
    let log = std::fs::read_to_string(
        repo.root
            .join(".loopc/logs/auth.b2c3d4e5/advance/advance-accept_of_auth_a1b2c3d4.log"),
    )
    .unwrap();
    assert_eq!(log, "first: auth.a1b2c3d4\n");
}

/// An unchanged rerun of a tree whose second spec depends on the first:
/// the dry run makes the first spec's move as the run does (the same
/// commit), so it says the second is replayed as the fast-forward the run
/// then makes (it said "replayed onto a new base; its checks run again").
#[test]
fn the_dry_run_moves_specs_as_the_run_does() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("specs/defaults.loop", repo.expand(DEFAULTS));
    repo.write("specs/inflight/auth.md", spec("a1b2c3d4", "true", ""));
    repo.write(
        "specs/inflight/billing.md",
        spec("0f3a9b2c", "true", "auth:a1b2c3d4"),
    );
    repo.commit("two specs");
    repo.loopc(&["run", "specs"]).status(0).run();
    let dry = repo.loopc(&["run", "--dry-run", "specs"]).status(0).run();
    assert!(
        dry.stdout
            .starts_with("auth.a1b2c3d4: cached\nbilling.0f3a9b2c: cached\n"),
        "{dry:?}"
    );
    let r = repo.loopc(&["run", "specs"]).status(0).run();
    let all = r.stdout + &r.stderr;
    assert!(
        all.contains("billing.0f3a9b2c: replayed from the cache (fast-forward)"),
        "{all}"
    );
}
