//! Gates are cached apart from the work they judge (docs/cache.md, "Gates
//! and their verdicts"): removing a gate runs nothing, adding or changing
//! one runs only it on each cached result, `--skip-gate` leaves results
//! not checked by a gate until a later run checks them, and an agent gate
//! judges an attempt once (not again on its merge or replay, unless
//! `recheck = merge`). The scripted agent and reviewer count their sessions
//! in files outside the repository.

use crate::harness::Test;

/// The worker: logs its task; writes `<task>.txt`, with `ok` in it when
/// its feedback asks for it (unless `stubborn` is beside the scripts).
const WORKER: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK $LOOP_ATTEMPT" >> "$LOG_DIR/sessions.log"
if [ ! -e "$LOG_DIR/stubborn" ] && grep -q "needs ok" "$LOOP_FEEDBACK_FILE" 2>/dev/null; then
  echo "made by $LOOP_TASK, ok" > "$LOOP_TASK.txt"
else
  echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
fi
printf '{"status":"completed","summary":"wrote %s.txt","cost_usd":0.01}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

/// The reviewer: logs the task it judges and the attempt; with `strict`
/// beside the scripts it rejects a `<task>.txt` without `ok`.
const REVIEWER: &str = r#"#!/bin/sh
cat > /dev/null
echo "review $LOOP_TASK $LOOP_ATTEMPT" >> "$LOG_DIR/reviews.log"
if [ -e "$LOG_DIR/strict" ] && ! grep -q ok "$LOOP_TASK.txt"; then
  echo "needs ok in $LOOP_TASK.txt"
  printf '{"status":"failed","summary":"needs ok","cost_usd":0.02}' > "$LOOP_HANDOFF"
  exit 1
fi
printf '{"status":"completed","summary":"fine","cost_usd":0.02}' > "$LOOP_HANDOFF"
"#;

const PLAN: &str = r#"
budget { iterations = 20 cost = $5 }
agent bot { run = "sh @BIN@/worker.sh" env = { LOG_DIR = "@BIN@" } }
agent reviewer { run = "sh @BIN@/reviewer.sh" env = { LOG_DIR = "@BIN@" } }
gate lint = "echo lint $LOOP_TASK >> @BIN@/lints.log"
gate review { agent = reviewer prompt = "Review $LOOP_DIFF_FILE" }
defaults { agent = bot gates = [lint] }
task a { prompt = "write a" }
task b: a { prompt = "write b" }
"#;

fn setup(plan: &str) -> Test {
    let repo = Test::repo();
    repo.script("worker.sh", WORKER);
    repo.script("reviewer.sh", REVIEWER);
    repo.plan(plan);
    repo
}

/// The lines of `name` beside the scripts (empty if missing).
fn log(repo: &Test, name: &str) -> Vec<String> {
    std::fs::read_to_string(repo.bin.join(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `loopc run ARGS` (exit 0); returns the worker sessions, review
/// sessions and lint runs it started, and its output.
fn run(repo: &Test, args: &[&str]) -> [Vec<String>; 3] {
    let before = ["sessions.log", "reviews.log", "lints.log"].map(|f| log(repo, f).len());
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    repo.loopc(&full).status(0).run();
    let mut i = 0;
    ["sessions.log", "reviews.log", "lints.log"].map(|f| {
        let new = log(repo, f)[before[i]..].to_vec();
        i += 1;
        new
    })
}

/// PLAN with both tasks' gates `gates`.
fn with_gates(gates: &str) -> String {
    PLAN.replace("gates = [lint]", &format!("gates = [{gates}]"))
}

const NONE: [&str; 0] = [];

/// What a run that starts no session and no gate returns.
fn nothing() -> [Vec<String>; 3] {
    [Vec::new(), Vec::new(), Vec::new()]
}

#[test]
fn removing_a_gate_runs_nothing() {
    let repo = setup(&with_gates("lint, review"));
    let [work, reviews, lints] = run(&repo, &[]);
    assert_eq!(work, ["a 1", "b 1"]);
    assert_eq!(reviews, ["review a 1", "review b 1"]);
    assert_eq!(lints, ["lint a", "lint b"]);
    repo.plan(&with_gates("lint"));
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        dry.stdout,
        "a: cached\nb: cached\ndry run of plan plan: 2 cached, 0 to run; nothing was started\n"
    );
    assert_eq!(run(&repo, &[]), nothing());
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "cached");
}

#[test]
fn an_added_agent_gate_judges_each_cached_result_and_reruns_only_a_rejected_task() {
    let repo = setup(PLAN);
    run(&repo, &[]);
    // A strict review is added to `b` (a keeps only `lint`): b's cached
    // result fails it.
    std::fs::write(repo.bin.join("strict"), "").unwrap();
    repo.plan(&PLAN.replace(
        "task b: a { prompt = \"write b\" }",
        "task b: a { prompt = \"write b\" gates = [lint, review] }",
    ));
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        dry.stdout,
        "a: cached\n\
         b: cached (gate `review` runs on its cached result first)\n\
         dry run of plan plan: 2 cached, 0 to run; nothing was started\n",
        "{dry:?}"
    );
    let [work, reviews, lints] = run(&repo, &[]);
    // The review judged b's cached result, rejected it; b's agent ran
    // again with the review's feedback, and its new work passed.
    assert_eq!(reviews, ["review b 0", "review b 1"]);
    assert_eq!(work, ["b 1"]);
    assert_eq!(lints, ["lint b"]);
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "passed");
    assert_eq!(repo.show("loop/plan", "b.txt").unwrap(), "made by b, ok\n");
    let feedback = std::fs::read_to_string(repo.root.join(".loopc/logs/b/1/feedback.md")).unwrap();
    assert!(feedback.contains("needs ok in b.txt"), "{feedback}");
    // All of it is recorded: nothing runs next time.
    assert_eq!(run(&repo, &[]), nothing());
}

#[test]
fn skip_gate_leaves_results_unchecked_until_a_run_without_it() {
    let repo = setup(&with_gates("lint, review"));
    let r = repo.loopc(&["run", "--skip-gate", "nope"]).status(2).run();
    assert!(
        r.stderr
            .contains("--skip-gate: no task of the plan has a gate named `nope`"),
        "{r:?}"
    );
    let dry = repo
        .loopc(&["run", "--dry-run", "--skip-gate", "review"])
        .run();
    assert_eq!(
        dry.stdout,
        "a: run [gate `review` skipped: --skip-gate]\n\
         b: run [gate `review` skipped: --skip-gate]\n\
         dry run of plan plan: 0 cached, 2 to run; nothing was started\n",
        "{dry:?}"
    );
    let before = log(&repo, "reviews.log").len();
    let out = repo
        .loopc(&["run", "--skip-gate", "review", "--skip-gate", "lint"])
        .status(0)
        .run();
    assert_eq!(log(&repo, "sessions.log"), ["a 1", "b 1"]);
    assert_eq!(log(&repo, "reviews.log").len(), before);
    assert!(log(&repo, "lints.log").is_empty());
    assert!(
        out.stdout
            .contains("not checked in this run: a by gate `lint`, `review` (--skip-gate)"),
        "{out:?}"
    );
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(
        status
            .stdout
            .contains("not checked in this run: b by gate `lint`, `review` (--skip-gate)"),
        "{status:?}"
    );
    assert_eq!(repo.task("a")["not_checked_by"][1], "review");
    // The flag takes one gate: the words after it are tasks.
    let dry = repo
        .loopc(&["run", "--dry-run", "--skip-gate", "review", "a"])
        .status(0)
        .run();
    assert_eq!(
        dry.stdout,
        "a: cached (gate `lint` runs on its cached result first) [gate `review` skipped: \
         --skip-gate]\n\
         dry run of plan plan: 1 cached, 0 to run; nothing was started\n",
        "{dry:?}"
    );
    // Without the flag: just those gates, on those results; no agent.
    let [work, reviews, lints] = run(&repo, &[]);
    assert_eq!(work, NONE);
    assert_eq!(reviews, ["review a 0", "review b 0"]);
    assert_eq!(lints, ["lint a", "lint b"]);
    assert!(repo.task("a").get("not_checked_by").is_none());
    assert_eq!(run(&repo, &[]), nothing());
}

#[test]
fn a_gates_rejection_of_a_cached_result_is_recorded_and_not_paid_again() {
    let repo = setup(&with_gates("review").replace("defaults {", "defaults { attempts = 1"));
    std::fs::write(repo.bin.join("strict"), "").unwrap();
    std::fs::write(repo.bin.join("stubborn"), "").unwrap();
    // `--skip-gate` passes work the review would reject.
    let [work, reviews, _] = run(&repo, &["--skip-gate", "review"]);
    assert_eq!(work, ["a 1", "b 1"]);
    assert_eq!(reviews, NONE);
    // Without it the review judges a's cached result and rejects it; a's
    // agent runs again, and its new work is rejected too.
    let runs = |args: &[&str]| {
        let before = log(&repo, "reviews.log").len();
        let mut full = vec!["run"];
        full.extend_from_slice(args);
        let out = repo.loopc(&full).status(1).run();
        (log(&repo, "reviews.log")[before..].to_vec(), out)
    };
    let (reviews, _) = runs(&[]);
    assert_eq!(reviews, ["review a 0", "review a 1"]);
    assert_eq!(repo.status_of("a"), "completed_unreviewed");
    // The rejection is recorded with the entry: the next run does not pay
    // the review again on the unchanged result, and says how to take it.
    let words = "a: cache entry not used: gate `review` rejected its cached result in an \
                 earlier run; that verdict is recorded and the gate is not run again: \
                 `--skip-gate review` takes the result as it is, or change the work";
    let (reviews, out) = runs(&[]);
    assert_eq!(reviews, NONE, "{out:?}");
    assert!(out.stderr.contains(words), "{out:?}");
    assert_eq!(repo.status_of("a"), "completed_unreviewed");
    assert_eq!(log(&repo, "sessions.log"), ["a 1", "b 1", "a 1"]);
    let dry = repo.loopc(&["run", "--dry-run", "--retry-failed"]).run();
    assert!(
        dry.stdout.starts_with(
            "a: run (gate `review` rejected its cached result in an earlier run; that verdict \
             is recorded"
        ),
        "{dry:?}"
    );
    // `--retry-failed` pays the agent again, with the recorded feedback,
    // but not the review of the cached result.
    let (reviews, _) = runs(&["--retry-failed"]);
    assert_eq!(reviews, ["review a 1"]);
    let feedback = std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/feedback.md")).unwrap();
    assert!(feedback.contains("needs ok in a.txt"), "{feedback}");
    // And `--skip-gate review` takes the result again, with nothing paid.
    assert_eq!(run(&repo, &["--skip-gate", "review"]), nothing());
    assert_eq!(repo.status_of("a"), "cached");
}

/// Two independent tasks at once, each with the review: the second to
/// finish is merged onto the first's work (not a fast-forward).
const PARALLEL: &str = r#"
loop { parallel = 2 }
budget { iterations = 20 cost = $5 }
agent bot { run = "sh @BIN@/worker.sh" env = { LOG_DIR = "@BIN@" } }
agent reviewer { run = "sh @BIN@/reviewer.sh" env = { LOG_DIR = "@BIN@" } }
gate lint = "echo lint $LOOP_TASK >> @BIN@/lints.log"
gate review { agent = reviewer prompt = "Review $LOOP_DIFF_FILE" RECHECK }
defaults { agent = bot gates = [lint, review] }
task a { prompt = "write a" }
task b { prompt = "write b" }
"#;

#[test]
fn an_agent_gate_judges_an_attempt_once_unless_it_asks_for_merges() {
    let repo = setup(&PARALLEL.replace("RECHECK", ""));
    let [work, mut reviews, lints] = run(&repo, &[]);
    assert_eq!(work.len(), 2);
    let merge = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "merged")
        .map(|e| e["how"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(merge, ["fast_forward", "merge"]);
    // Two attempts, two reviews; the command gate re-checked the merge.
    reviews.sort();
    assert_eq!(reviews, ["review a 1", "review b 1"]);
    assert_eq!(lints.len(), 3, "{lints:?}");
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 60_000);

    // `recheck = merge`: the review runs again on the merge result.
    let repo = setup(&PARALLEL.replace("RECHECK", "recheck = merge"));
    let [_, reviews, _] = run(&repo, &[]);
    assert_eq!(reviews.len(), 3, "{reviews:?}");
    // And on a replay onto a new base, as command gates do.
    repo.write("unrelated.md", "x\n");
    repo.commit("unrelated");
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(
        dry.stdout
            .contains("(replayed onto a new base; its checks run again first)"),
        "{dry:?}"
    );
    let [work, reviews, _] = run(&repo, &[]);
    assert_eq!(work, NONE);
    assert_eq!(reviews.len(), 2, "{reviews:?}");
}

#[test]
fn a_replay_onto_a_new_base_says_the_agent_gates_verdict_carries_over() {
    let repo = setup(&with_gates("lint, review"));
    run(&repo, &[]);
    repo.write("unrelated.md", "x\n");
    repo.commit("unrelated");
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        dry.stdout,
        "a: cached (replayed onto a new base; its checks run again first; agent gate \
         `review` not run again: its verdict carries over)\n\
         b: cached (replayed onto a new base; its checks run again first; agent gate \
         `review` not run again: its verdict carries over)\n\
         dry run of plan plan: 2 cached, 0 to run; nothing was started\n",
        "{dry:?}"
    );
    let [work, reviews, lints] = run(&repo, &[]);
    assert_eq!(work, NONE);
    assert_eq!(reviews, NONE);
    assert_eq!(lints, ["lint a", "lint b"]);
}

#[test]
fn recheck_takes_attempt_or_merge() {
    let repo = Test::repo();
    repo.plan(
        r#"
agent r { run = "r" }
gate g { agent = r prompt = "p" recheck = merj }
task a { run = "true" gates = [g] }
"#,
    );
    let out = repo.loopc(&["check"]).status(1).run();
    assert!(
        out.stdout.contains("E0007") || out.stderr.contains("E0007"),
        "{out:?}"
    );
    assert!(
        (out.stdout.clone() + &out.stderr).contains("merge"),
        "{out:?}"
    );
}

/// Two gates added at once: the dry run says they run, in the plural.
#[test]
fn two_added_gates_are_said_in_the_plural() {
    let repo = setup(PLAN);
    run(&repo, &[]);
    repo.plan(
        &PLAN
            .replace("gate review {", "gate style = \"true\"\ngate review {")
            .replace(
                "task b: a { prompt = \"write b\" }",
                "task b: a { prompt = \"write b\" gates = [lint, style, review] }",
            ),
    );
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        dry.stdout,
        "a: cached\n\
         b: cached (gates `style` and `review` run on its cached result first)\n\
         dry run of plan plan: 2 cached, 0 to run; nothing was started\n",
        "{dry:?}"
    );
}

#[test]
fn the_dry_run_says_what_a_remembered_failure_does_if_a_gate_rejects_a_cached_result() {
    let repo = Test::repo();
    let plan = |check: &str| {
        format!(
            "loop \"g\" {{ }}\ngate g = \"{check}\"\n\
             task a {{ run = \"echo a > a.txt\"  gates = [g] }}\n\
             task c: a {{ run = \"echo c > c.txt\" }}\n"
        )
    };
    repo.plan(&plan("true"));
    repo.loopc(&["run"]).status(0).run();
    // The gate now rejects a's cached result, and every attempt of a.
    repo.plan(&plan("false"));
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("a"), "failed");
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(
        dry.contains(
            "a: cached (gate `g` runs on its cached result first), and if it is rejected: \
             not run: ran out of attempts (3 of 3) with this key"
        ),
        "{dry}"
    );
    let r = repo.loopc(&["run"]).status(1).run();
    assert!(
        r.stdout
            .contains("not run: ran out of attempts (3 of 3) with this key"),
        "{r:?}"
    );
}

#[test]
fn gates_added_to_a_cached_result_are_named_as_a_list() {
    let repo = Test::repo();
    // Gates are keyed by what they run: two gates running the same command
    // judge a result once.
    let plan = |one: &str, two: &str, gates: &str| {
        format!(
            "loop \"g\" {{ }}\ngate g1 = \"{one}\"\ngate g2 = \"{two}\"\n\
             task a {{ run = \"echo a > a.txt\"  gates = {gates} }}\n"
        )
    };
    repo.plan(&plan("true", "test 1 = 1", "[g1]"));
    repo.loopc(&["run"]).status(0).run();
    repo.plan(&plan("true", "test 1 = 1", "[g1, g2]"));
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(
        r.stderr
            .contains("loopc: a: cached: gate `g2` ran on its cached result and passed"),
        "{r:?}"
    );
    repo.plan(&plan("test 2 = 2", "test 3 = 3", "[g1, g2]"));
    let r = repo.loopc(&["run"]).status(0).run();
    assert!(
        r.stderr
            .contains("loopc: a: cached: gates `g1` and `g2` ran on its cached result and passed"),
        "{r:?}"
    );
}
