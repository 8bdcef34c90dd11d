//! Early cutoff (docs/cache.md, "Early cutoff"): a task is keyed by what its
//! dependencies produced once merged, not by how. A dependency that runs
//! again and produces the same files leaves its dependents replayed; one
//! whose output differs by one byte (however it came to differ: `--force`,
//! a changed input, a changed fragment) runs them again. The scripted
//! agents count their sessions in a file outside the repository.

use crate::harness::Test;

/// The agent: logs its task, then `gen` writes `gen.txt` from `seed` (a
/// file beside the scripts, outside the repository: what it writes can
/// change with nothing in the plan or the repository changing) and from
/// `src/value` when there is one; `use` copies `gen.txt` into `use.txt`.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/sessions.log"
case "$LOOP_TASK" in
  gen) { cat "$LOG_DIR/seed"; cat src/value 2>/dev/null; } > gen.txt ;;
  use) cat gen.txt > use.txt ;;
esac
printf '{"status":"completed","summary":"did %s","cost_usd":0.01}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

const PLAN: &str = r#"
budget { iterations = 20 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
defaults { agent = bot }
task gen { prompt = "generate" inputs = ["src/**"] }
task use: gen { prompt = "use what gen made" }
"#;

fn setup() -> Test {
    let repo = Test::repo();
    repo.write("src/value", "1\n");
    repo.write("src/unread", "u\n");
    repo.commit("sources");
    std::fs::write(repo.bin.join("seed"), "seed\n").unwrap();
    repo.script("agent.sh", AGENT);
    repo.plan(PLAN);
    repo
}

/// The agent sessions started so far, in order.
fn sessions(repo: &Test) -> Vec<String> {
    repo.bin_lines("sessions.log")
}

/// Runs `loopc run ARGS` (exit 0); returns the sessions it started and
/// its output.
fn run(repo: &Test, args: &[&str]) -> (Vec<String>, String) {
    let before = sessions(repo).len();
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    let out = repo.loopc(&full).status(0).run();
    (sessions(repo)[before..].to_vec(), out.stdout + &out.stderr)
}

#[test]
fn a_dependency_run_again_with_the_same_output_lets_its_dependent_replay() {
    let repo = setup();
    assert_eq!(run(&repo, &[]).0, ["gen", "use"]);
    // The dry run cannot know what `gen` will write: it says so.
    let dry = repo.loopc(&["run", "--dry-run", "--force", "gen"]).run();
    assert_eq!(
        dry.stdout,
        "gen: run (forced)\n\
         use: run (dependency `gen` runs first; replayed from the cache instead if it \
         produces the same files as before)\n\
         dry run of plan plan: 0 cached, 2 to run; nothing was started\n",
        "{dry:?}"
    );
    let (ran, out) = run(&repo, &["--force", "gen"]);
    assert_eq!(ran, ["gen"], "{out}");
    assert_eq!(repo.status_of("use"), "cached");
    assert!(
        out.contains(
            "loopc: use: cached: its dependency `gen` ran again and produced the same files"
        ),
        "{out}"
    );
    // A changed prompt, the same output: the same.
    repo.plan(&PLAN.replace("\"generate\"", "\"generate, carefully\""));
    assert_eq!(run(&repo, &[]).0, ["gen"]);
    assert_eq!(repo.status_of("use"), "cached");
    assert_eq!(run(&repo, &[]).0, Vec::<String>::new());
}

#[test]
fn forcing_a_dependency_that_now_writes_one_other_byte_reruns_its_dependent() {
    let repo = setup();
    assert_eq!(run(&repo, &[]).0, ["gen", "use"]);
    assert_eq!(repo.show("loop/plan", "use.txt").unwrap(), "seed\n1\n");
    // Nothing in the plan or the repository changes; `gen` now writes
    // one byte more.
    std::fs::write(repo.bin.join("seed"), "seed!\n").unwrap();
    assert_eq!(run(&repo, &[]).0, Vec::<String>::new());
    let (ran, out) = run(&repo, &["--force", "gen"]);
    // Before early cutoff `use` was replayed, built on the old `gen.txt`.
    assert_eq!(ran, ["gen", "use"], "{out}");
    assert_eq!(repo.status_of("use"), "passed");
    assert_eq!(repo.show("loop/plan", "use.txt").unwrap(), "seed!\n1\n");
    assert_eq!(run(&repo, &[]).0, Vec::<String>::new());
}

#[test]
fn a_changed_input_reruns_the_dependent_only_when_the_output_changed() {
    let repo = setup();
    assert_eq!(run(&repo, &[]).0, ["gen", "use"]);
    // An input `gen` does not write out: it runs, `use` replays.
    repo.write("src/unread", "u2\n");
    repo.commit("edit an input gen ignores");
    assert_eq!(run(&repo, &[]).0, ["gen"]);
    assert_eq!(repo.status_of("use"), "cached");
    // An input it writes out: both run, and `use` sees the new value.
    repo.write("src/value", "2\n");
    repo.commit("edit the value");
    assert_eq!(run(&repo, &[]).0, ["gen", "use"]);
    assert_eq!(repo.show("loop/plan", "use.txt").unwrap(), "seed\n2\n");
}

/// The planner writes `plan/f.loop`, one task per line of `goal.md`; each
/// such task writes `<name>.txt`. `ship` waits for the planner (and so for
/// its fragment's tasks).
const FRAGMENT_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/sessions.log"
if [ "$LOOP_TASK" = design ]; then
  mkdir -p plan
  : > plan/f.loop
  while read -r item; do
    printf 'task %s { prompt = "build %s" }\n' "$item" "$item" >> plan/f.loop
  done < goal.md
else
  echo "$LOOP_TASK" > "$LOOP_TASK.txt"
fi
"#;

#[test]
fn a_planner_that_adds_one_task_runs_with_that_task_alone() {
    let repo = Test::repo();
    repo.write("goal.md", "parser\nlexer\nprinter\n");
    repo.commit("the goal");
    repo.script("agent.sh", FRAGMENT_AGENT);
    repo.plan(
        r#"
budget { iterations = 30 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
defaults { agent = bot }
task design { prompt = "plan the work in goal.md" inputs = ["goal.md"] expands = "plan/f.loop" }
"#,
    );
    let mut first = run(&repo, &[]).0;
    first.sort();
    assert_eq!(
        first,
        ["design", "design.lexer", "design.parser", "design.printer"]
    );
    // One line added to the goal: the planner runs (its input changed) and
    // writes the same tasks plus one; only the new one runs.
    repo.write("goal.md", "parser\nlexer\nprinter\nchecker\n");
    repo.commit("one more goal");
    let (ran, out) = run(&repo, &[]);
    assert_eq!(ran, ["design", "design.checker"], "{out}");
    for t in ["design.parser", "design.lexer", "design.printer"] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {out}");
    }
    assert_eq!(repo.status_of("design.checker"), "passed");
    assert_eq!(
        repo.show("loop/plan", "design.checker.txt").as_deref(),
        Some("design.checker\n")
    );
    // A task of the fragment whose definition changed runs again.
    repo.write("goal.md", "parser\nlexer\nprinter\nchecker2\n");
    repo.commit("rename one goal");
    let (ran, out) = run(&repo, &[]);
    assert_eq!(ran, ["design", "design.checker2"], "{out}");
    assert_eq!(run(&repo, &[]).0, Vec::<String>::new());
}

/// A dependent with a change of its own (here an input file) runs whatever
/// its dependency produces: the dry run says that change, not that it may
/// be replayed (before, it promised a replay the run did not make).
#[test]
fn a_dependent_with_its_own_change_is_said_to_run_for_it() {
    let repo = setup();
    repo.plan(&PLAN.replace(
        "{ prompt = \"use what gen made\" }",
        "{ prompt = \"use what gen made\" inputs = [\"docs/*\"] }",
    ));
    repo.write("docs/notes", "one\n");
    repo.commit("notes");
    assert_eq!(run(&repo, &[]).0, ["gen", "use"]);
    repo.write("docs/notes", "two\n");
    repo.commit("notes again");
    let dry = repo.loopc(&["run", "--dry-run", "--force", "gen"]).run();
    assert_eq!(
        dry.stdout,
        "gen: run (forced)\n\
         use: run (input file docs/notes changed)\n\
         dry run of plan plan: 0 cached, 2 to run; nothing was started\n",
        "{dry:?}"
    );
    let (ran, out) = run(&repo, &["--force", "gen"]);
    assert_eq!(ran, ["gen", "use"], "{out}");
}
