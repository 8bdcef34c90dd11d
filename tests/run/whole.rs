//! The whole-run cache entry (docs/cache.md, "An unchanged rerun"): a run
//! that replayed every task as a fast-forward is recorded once more, and
//! the next unchanged run takes it whole (the branch moves once, no task
//! entry is read), while anything that changed what the replay is made of
//! (a task entry, the base, a prompt) makes the run replay task by task.

use crate::harness::Test;

/// Writes `<task>.txt`, logs its task.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/agent.log"
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"wrote %s.txt"}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

const PLAN: &str = r#"
loop "whole" { parallel = 2 }
agent bot {
  run = "sh @BIN@/agent.sh"
  env = { LOG_DIR = "@BIN@" }
}
gate check = "true"
defaults { agent = bot gates = [check] }
task a "Task A" { prompt = "write a" inputs = ["src/**"] }
task b "Task B": a { prompt = "write b" }
task c "Task C" { prompt = "write c" }
task d "Task D": b c { prompt = "write d" }
"#;

const RUN_REF: &str = "refs/loopc/cache/run/whole";

fn setup() -> Test {
    let repo = Test::repo();
    repo.write("src/lib.py", "x = 1\n");
    repo.commit("sources");
    repo.script("agent.sh", AGENT);
    repo.plan(PLAN);
    repo
}

fn agents(repo: &Test) -> usize {
    std::fs::read_to_string(repo.bin.join("agent.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

fn statuses(repo: &Test) -> Vec<String> {
    ["a", "b", "c", "d"]
        .iter()
        .map(|t| format!("{t}={}", repo.status_of(t)))
        .collect()
}

fn reflog(repo: &Test) -> usize {
    repo.git(&["reflog", "--format=%H", "refs/heads/loop/whole"])
        .lines()
        .count()
}

/// A `git` in front of the real one that logs every command line to
/// `<bin>/git.log`; the `PATH` to run with.
fn logging_git(repo: &Test) -> String {
    let log = repo.bin.join("git.log");
    repo.git_wrapper(|real| {
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        )
    })
}

/// The files under `dir`, recursively (none when it is not there).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.map(Result::unwrap) {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn an_unchanged_rerun_takes_the_run_entry_and_moves_the_branch_once() {
    let repo = setup();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents(&repo), 4);
    // A run in which tasks ran records no run entry: its next run replays
    // task by task (and records one).
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", RUN_REF]));
    repo.loopc(&["run"]).status(0).run();
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", RUN_REF]));
    // Recording it packed the cache's refs: the next run reads one file,
    // not one a task.
    let packed = std::fs::read_to_string(repo.root.join(".git/packed-refs")).unwrap();
    assert_eq!(packed.matches(" refs/loopc/cache/").count(), 5, "{packed}");
    let loose = walk(&repo.root.join(".git/refs/loopc/cache"));
    assert!(loose.is_empty(), "{loose:?}");
    let head = repo.git(&["rev-parse", "loop/whole"]);
    let moves = reflog(&repo);
    let events = repo.events().len();

    let path = logging_git(&repo);
    let r = repo.loopc(&["run"]).env("PATH", &path).status(0).run();
    assert_eq!(agents(&repo), 4);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    assert_eq!(repo.git(&["rev-parse", "loop/whole"]), head);
    // The branch was where the run entry leaves it: it did not move at all
    // (a run replaying task by task resets it to the base first).
    assert_eq!(reflog(&repo), moves);
    let calls = std::fs::read_to_string(repo.bin.join("git.log")).unwrap();
    assert!(
        !calls.contains("%(contents)") && !calls.contains("ls-tree"),
        "no task entry read, no input listed:\n{calls}"
    );
    // Every task is reported as before: events, state, summary, progress.
    let new = &repo.events()[events..];
    assert_eq!(
        new.iter()
            .filter(|e| e["event"] == "cached" && e["how"] == "fast_forward")
            .count(),
        4,
        "{new:?}"
    );
    assert_eq!(repo.task("b")["summary"], "wrote b.txt");
    assert_eq!(repo.task("b")["cache_key"].as_str().map(str::len), Some(64));
    assert!(
        r.stdout
            .contains("4/4 tasks passed (4 from the cache), 0 agent attempts"),
        "{r:?}"
    );
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert!(
        progress.contains("b: Task B — wrote b.txt; b.txt"),
        "{progress}"
    );
    // `--dry-run` still explains every task.
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert_eq!(
        r.stdout,
        "a: cached\nb: cached\nc: cached\nd: cached\n\
         dry run of plan whole: 4 cached, 0 to run; nothing was started\n"
    );
    // The entry's commit was read from git once, then kept beside the
    // cache: the next run reads it from there.
    assert!(calls.contains("cat-file commit"), "{calls}");
    let memo = repo.root.join(".loopc/cache/run-whole.memo");
    let kept = std::fs::read_to_string(&memo).unwrap();
    assert!(kept.contains("loopc run entry"), "{kept}");
    let log = repo.bin.join("git.log");
    std::fs::remove_file(&log).unwrap();
    repo.loopc(&["run"]).env("PATH", &path).status(0).run();
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("cat-file"), "{calls}");
    // A memo that is not the commit's copy (its hash says so) is not
    // believed: git is asked again, and the result is the entry's.
    std::fs::write(&memo, kept.replace(&head, &"0".repeat(40))).unwrap();
    std::fs::remove_file(&log).unwrap();
    repo.loopc(&["run"]).env("PATH", &path).status(0).run();
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("cat-file commit")
    );
    assert_eq!(repo.git(&["rev-parse", "loop/whole"]), head);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    assert_eq!(std::fs::read_to_string(&memo).unwrap(), kept);
}

#[test]
fn a_changed_task_entry_base_or_prompt_replays_task_by_task() {
    let repo = setup();
    for _ in 0..2 {
        repo.loopc(&["run"]).status(0).run();
    }
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", RUN_REF]));
    // A task entry pointed elsewhere: the run entry no longer stands.
    let key = repo.task("c")["cache_key"].as_str().unwrap().to_string();
    repo.git(&["update-ref", &format!("refs/loopc/cache/{key}"), "main"]);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents(&repo), 5);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=passed", "d=cached"]
    );
    // A new base: replayed task by task onto it (a's input is unchanged).
    repo.write("other.md", "x\n");
    repo.commit("unrelated");
    let base = repo.git(&["rev-parse", "main"]);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents(&repo), 5);
    assert!(repo.git_ok(&["merge-base", "--is-ancestor", &base, "loop/whole"]));
    repo.loopc(&["run"]).status(0).run();
    assert!(repo.git_ok(&["merge-base", "--is-ancestor", &base, "loop/whole"]));
    // A changed prompt runs its task; it writes what it wrote before, so
    // what depends on it is replayed (early cutoff).
    repo.plan(&PLAN.replace("write b", "write b again"));
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents(&repo), 6);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=passed", "c=cached", "d=cached"]
    );
}

/// A task given `context` runs (its prompt has the file), even after an
/// unchanged rerun recorded the run entry: the run key holds each task's
/// `context` list (before, the run took the entry and the task never saw
/// its context).
#[test]
fn a_task_given_context_runs_though_a_run_entry_stands() {
    let repo = setup();
    repo.write("DESIGN.md", "the design\n");
    repo.commit("design");
    for _ in 0..2 {
        repo.loopc(&["run"]).status(0).run();
    }
    assert!(repo.git_ok(&["rev-parse", "--verify", "-q", RUN_REF]));
    assert_eq!(agents(&repo), 4);
    repo.plan(&PLAN.replace(
        "{ prompt = \"write c\" }",
        "{ prompt = \"write c\" context = [\"DESIGN.md\"] }",
    ));
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(dry.stdout.contains("c: run (context changed)"), "{dry:?}");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(agents(&repo), 5);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=passed", "d=cached"]
    );
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/c/1/prompt.md")).unwrap();
    assert!(prompt.contains("the design"), "{prompt}");
}
