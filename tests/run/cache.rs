//! The content-hash cache (spec §5 step 1, §6): what a rerun redoes, what
//! it replays, and what `--dry-run`, `--force` and `--no-cache` do. Every
//! test runs a real multi-task plan twice in a temporary repository and
//! counts agent invocations through a file the scripted agent appends to.
//!
//! Over 600 lines: each test is one long rerun scenario; splitting the area
//! would only separate scenarios that share the plan and the agent above.

use crate::harness::Test;

/// The agent: logs its task's name, writes `<task>.txt`, hands off.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/agent.log"
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"wrote %s.txt","cost_usd":0.01}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#;

/// `a` reads `src/**`; `b` needs `a`; `c` is independent and has a gate of
/// its own; `d` needs `b` and `c` and reads every `*.txt` (its dependencies'
/// outputs). `setup` and the gates log every run too.
const PLAN: &str = r#"
loop "cache" { setup = "echo setup >> @BIN@/setup.log" }
budget { iterations = 20 cost = $5 }
agent bot {
  run = "sh @BIN@/agent.sh"
  env = { LOG_DIR = "@BIN@" }
}
gate check = "echo check >> @BIN@/gates.log"
gate other = "echo other >> @BIN@/gates.log"
defaults { agent = bot gates = [check] }
task a "Task A" { prompt = "write a" inputs = ["src/**"] }
task b "Task B": a { prompt = "write b" }
task c "Task C" { prompt = "write c" gates = [other] }
task d "Task D": b c { prompt = "write d" inputs = ["*.txt"] }
"#;

fn setup() -> Test {
    let repo = Test::repo();
    repo.write("src/lib.py", "x = 1\n");
    repo.write("docs/notes.md", "notes\n");
    repo.commit("sources");
    repo.script("agent.sh", AGENT);
    repo.plan(PLAN);
    repo
}

/// The lines of a log file in the scripts directory (empty if missing).
fn log(repo: &Test, name: &str) -> Vec<String> {
    std::fs::read_to_string(repo.bin.join(name))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Agent invocations so far, in order.
fn agents(repo: &Test) -> Vec<String> {
    log(repo, "agent.log")
}

/// Runs the plan; asserts exit 0; returns the agents it started.
fn run_ok(repo: &Test, args: &[&str]) -> Vec<String> {
    let before = agents(repo).len();
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    repo.loopc(&full).run();
    agents(repo)[before..].to_vec()
}

fn statuses(repo: &Test) -> Vec<String> {
    ["a", "b", "c", "d"]
        .iter()
        .map(|t| format!("{t}={}", repo.status_of(t)))
        .collect()
}

fn edit_plan(repo: &Test, from: &str, to: &str) {
    let text = PLAN.replace(from, to);
    assert_ne!(text, PLAN, "{from} not in the plan");
    repo.plan(&text);
}

/// Writes `path` and commits it on the user's branch (plan.loop stays
/// untracked, as a user's plan would be).
fn commit_file(repo: &Test, path: &str, text: &str, message: &str) {
    repo.write(path, text);
    repo.git(&["add", path]);
    repo.git(&["commit", "-q", "-m", message]);
}

fn cache_refs(repo: &Test) -> String {
    repo.git(&["for-each-ref", "refs/loopc/cache/"])
}

#[test]
fn second_run_with_nothing_changed_runs_nothing_and_starts_no_subprocess() {
    let repo = setup();
    assert_eq!(run_ok(&repo, &[]), ["a", "b", "c", "d"]);
    let head = repo.git(&["rev-parse", "loop/cache"]);
    let (setups, gates) = (log(&repo, "setup.log"), log(&repo, "gates.log"));
    let worktrees = repo.root.join(".loopc/worktrees");
    assert_eq!(std::fs::read_dir(&worktrees).unwrap().count(), 0);
    let events_before = repo.events().len();
    let key_b = repo.task("b")["cache_key"].as_str().unwrap().to_string();
    assert_eq!(key_b.len(), 64);
    assert!(repo.git_ok(&[
        "rev-parse",
        "--verify",
        "-q",
        &format!("refs/loopc/cache/{key_b}")
    ]));

    let r = repo.loopc(&["run"]).status(0).run();
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    // No agent, no setup, no gate, no worktree: only git ran.
    assert_eq!(agents(&repo).len(), 4);
    assert_eq!(log(&repo, "setup.log"), setups);
    assert_eq!(log(&repo, "gates.log"), gates);
    assert_eq!(std::fs::read_dir(&worktrees).unwrap().count(), 0);
    let new_events = &repo.events()[events_before..];
    assert!(
        !new_events.iter().any(|e| e["event"] == "attempt_started"
            || e["event"] == "phase"
            || e["event"] == "cache_miss"),
        "{new_events:?}"
    );
    assert_eq!(
        new_events
            .iter()
            .filter(|e| e["event"] == "cached" && e["how"] == "fast_forward")
            .count(),
        4
    );
    // The same commits: the integration branch is reproduced exactly.
    assert_eq!(repo.git(&["rev-parse", "loop/cache"]), head);
    // Nothing spent; the summary says where the results came from.
    let state = repo.state();
    assert_eq!(state["spent"]["iterations"], 0);
    assert_eq!(state["spent"]["cost_micro_usd"], 0);
    assert_eq!(repo.task("b")["attempts"], 0);
    assert_eq!(repo.task("b")["cache_key"], key_b.as_str());
    assert_eq!(repo.task("b")["summary"], "wrote b.txt");
    assert!(
        r.stdout
            .contains("4/4 tasks passed (4 from the cache), 0 agent attempts, $0"),
        "{r:?}"
    );
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert!(
        progress.contains("b: Task B — wrote b.txt; b.txt"),
        "{progress}"
    );
}

#[test]
fn changing_a_prompt_reruns_that_task_and_its_dependents_only() {
    let repo = setup();
    run_ok(&repo, &[]);
    edit_plan(
        &repo,
        "prompt = \"write b\"",
        "prompt = \"write b, better\"",
    );
    // `b` runs again and writes the very same `b.txt`: `d`, keyed by what
    // its dependencies produced, is replayed (early cutoff).
    assert_eq!(run_ok(&repo, &[]), ["b"]);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=passed", "c=cached", "d=cached"]
    );
    // And the new results are cached in turn.
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    // A prompt whose work differs reruns its dependents.
    edit_plan(
        &repo,
        "prompt = \"write c\"",
        "prompt = \"write c\" env = { X = \"1\" }",
    );
    repo.script(
        "agent.sh",
        &AGENT.replace("made by $LOOP_TASK", "made by $LOOP_TASK${X:+ again}"),
    );
    assert_eq!(run_ok(&repo, &[]), ["c", "d"]);
}

#[test]
fn titles_comments_timeouts_and_budgets_rerun_nothing() {
    let repo = setup();
    run_ok(&repo, &[]);
    let text = PLAN
        .replace("\"Task A\"", "\"A new title\"")
        .replace(
            "budget { iterations = 20 cost = $5 }",
            "budget { iterations = 7 cost = $3 time = 1h }",
        )
        .replace(
            "task c \"Task C\" {",
            "# a comment\ntask c \"Task C\" { # another\n  timeout = 5m attempts = 2",
        )
        .replace(
            "defaults { agent = bot",
            "defaults { timeout = 9m agent = bot",
        );
    repo.plan(&text);
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
}

#[test]
fn changing_an_input_file_reruns_that_task_and_its_dependents() {
    let repo = setup();
    run_ok(&repo, &[]);
    commit_file(&repo, "src/lib.py", "x = 2\n", "edit an input");
    let gates_before = log(&repo, "gates.log").len();
    // `a` runs again, and writes the same `a.txt`: its dependents replay.
    assert_eq!(run_ok(&repo, &[]), ["a"]);
    assert_eq!(
        statuses(&repo),
        ["a=passed", "b=cached", "c=cached", "d=cached"]
    );
    // `c` was replayed onto a different base, so its gate ran again on the
    // result before the branch moved (no agent).
    let gates: Vec<String> = log(&repo, "gates.log")[gates_before..].to_vec();
    assert!(gates.contains(&"other".to_string()), "{gates:?}");
    let replay = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "cached" && e["task"] == "c")
        .unwrap();
    assert_eq!(replay["how"], "gated");
    let files = repo.files_at("loop/cache");
    for f in ["a.txt", "b.txt", "c.txt", "d.txt", "src/lib.py"] {
        assert!(files.contains(&f.to_string()), "{f}: {files:?}");
    }
    assert_eq!(repo.show("loop/cache", "src/lib.py").unwrap(), "x = 2\n");
}

#[test]
fn changing_an_unmatched_file_reruns_nothing() {
    let repo = setup();
    run_ok(&repo, &[]);
    commit_file(
        &repo,
        "docs/notes.md",
        "more notes\n",
        "edit a file no task reads",
    );
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    assert_eq!(
        repo.show("loop/cache", "docs/notes.md").unwrap(),
        "more notes\n"
    );
    assert_eq!(repo.show("loop/cache", "d.txt").unwrap(), "made by d\n");
}

#[test]
fn a_changed_gate_command_runs_only_that_gate_on_the_cached_results() {
    let repo = setup();
    run_ok(&repo, &[]);
    // `check` is the default gate of a, b and d; c uses `other`.
    edit_plan(
        &repo,
        "gate check = \"echo check >> @BIN@/gates.log\"",
        "gate check = \"echo check2 >> @BIN@/gates.log\"",
    );
    let gates_before = log(&repo, "gates.log").len();
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert_eq!(
        r.stdout,
        "a: cached (gate `check` runs on its cached result first)\n\
         b: cached (gate `check` runs on its cached result first)\n\
         c: cached\n\
         d: cached (gate `check` runs on its cached result first)\n\
         dry run of plan cache: 4 cached, 0 to run; nothing was started\n",
        "{r:?}"
    );
    // No agent: the changed gate judged each cached result once.
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    assert_eq!(
        log(&repo, "gates.log")[gates_before..],
        ["check2", "check2", "check2"]
    );
    // Its verdicts are recorded: the next run runs nothing at all.
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(log(&repo, "gates.log").len(), gates_before + 3);
}

#[test]
fn the_cache_survives_clean_gc_and_a_deleted_integration_branch() {
    let repo = setup();
    run_ok(&repo, &[]);
    repo.loopc(&["clean", "--integration"]).status(0).run();
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cache"]));
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=cached", "d=cached"]
    );
    assert_eq!(repo.show("loop/cache", "d.txt").unwrap(), "made by d\n");
}

#[test]
fn a_conflicting_replay_runs_the_task() {
    let repo = setup();
    run_ok(&repo, &[]);
    // The base now has its own c.txt: replaying c's recorded work conflicts.
    commit_file(&repo, "c.txt", "the user's c\n", "a c.txt of our own");
    assert_eq!(run_ok(&repo, &[]), ["c"]);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=passed", "d=cached"]
    );
    let miss = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "cache_miss" && e["task"] == "c")
        .expect("a cache_miss event for c");
    assert!(
        miss["reason"]
            .as_str()
            .unwrap()
            .contains("conflicts in c.txt"),
        "{miss}"
    );
    assert_eq!(repo.show("loop/cache", "c.txt").unwrap(), "made by c\n");
}

#[test]
fn force_reruns_named_tasks_and_no_cache_neither_reads_nor_writes() {
    let repo = setup();
    run_ok(&repo, &[]);
    // --force: b is not read from the cache; its dependents still hit
    // (b's key is unchanged) and are replayed onto b's new work.
    assert_eq!(run_ok(&repo, &["--force", "b"]), ["b"]);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=passed", "c=cached", "d=cached"]
    );
    // The forced result was written: a plain rerun hits everything.
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());

    let refs = cache_refs(&repo);
    let index = std::fs::read(repo.root.join(".loopc/cache/index.json")).unwrap();
    assert_eq!(run_ok(&repo, &["--no-cache"]), ["a", "b", "c", "d"]);
    assert_eq!(
        statuses(&repo),
        ["a=passed", "b=passed", "c=passed", "d=passed"]
    );
    assert_eq!(cache_refs(&repo), refs, "--no-cache wrote the cache");
    assert_eq!(
        std::fs::read(repo.root.join(".loopc/cache/index.json")).unwrap(),
        index
    );

    let r = repo.loopc(&["run", "--force", "nope"]).status(2).run();
    assert!(r.stderr.contains("no task named `nope`"), "{r:?}");
    // A near miss gets the closest name, as `run TASK` does.
    let r = repo.loopc(&["run", "--force", "bb"]).status(2).run();
    assert!(
        r.stderr
            .contains("--force: no task named `bb` in the plan; did you mean `b`?"),
        "{r:?}"
    );
    // A task of the plan that the selection leaves out is not "no task".
    repo.loopc(&["run", "b", "--force", "c", "--dry-run"])
        .status(2)
        .stderr_contains(
            "\nerror: --force: task `c` is not among the tasks this run works (`b` and the \
             tasks it depends on); name it as a task to run too: `loopc run b c --force c`\n",
        )
        .run();
    repo.loopc(&["run", "a", "--retry-failed", "d", "--dry-run"])
        .status(2)
        .stderr_contains("--retry-failed: task `d` is not among the tasks this run works")
        .run();
}

#[test]
fn dry_run_says_what_would_run_and_what_changed() {
    let repo = setup();
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert_eq!(
        r.stdout,
        "a: run\nb: run\nc: run\nd: run\n\
         dry run of plan cache: 0 cached, 4 to run; nothing was started\n"
    );
    // A dry run starts nothing and writes nothing.
    assert!(!repo.root.join(".loopc").exists());
    assert!(!repo.git_ok(&["rev-parse", "--verify", "-q", "refs/heads/loop/cache"]));

    run_ok(&repo, &[]);
    let r = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        r.stdout,
        "a: cached\nb: cached\nc: cached\nd: cached\n\
         dry run of plan cache: 4 cached, 0 to run; nothing was started\n"
    );
    let r = repo.loopc(&["run", "--dry-run", "--no-cache"]).run();
    assert_eq!(
        r.stdout,
        "a: run (cache disabled)\nb: run (cache disabled)\nc: run (cache disabled)\n\
         d: run (cache disabled)\n\
         dry run of plan cache: 0 cached, 4 to run; nothing was started\n"
    );

    commit_file(&repo, "src/lib.py", "x = 3\n", "edit an input");
    edit_plan(&repo, "prompt = \"write c\"", "prompt = \"write c again\"");
    let events = repo.events().len();
    let head = repo.git(&["rev-parse", "loop/cache"]);
    let r = repo
        .loopc(&["run", "--dry-run", "--force", "b"])
        .status(0)
        .run();
    assert_eq!(
        r.stdout,
        "a: run (input file src/lib.py changed)\n\
         b: run (forced)\n\
         c: run (prompt changed)\n\
         d: run (dependency `b` runs first; replayed from the cache instead if it \
         produces the same files as before)\n\
         dry run of plan cache: 0 cached, 4 to run; nothing was started\n"
    );
    assert_eq!(repo.events().len(), events);
    assert_eq!(repo.git(&["rev-parse", "loop/cache"]), head);
    assert_eq!(agents(&repo).len(), 4);
    // A file the inputs match now, another they match no longer: said as
    // added and removed, not "changed".
    let before = repo.git(&["rev-parse", "HEAD"]);
    commit_file(&repo, "src/new.py", "y = 1\n", "a new input");
    repo.git(&["rm", "-q", "src/lib.py"]);
    repo.git(&["commit", "-qm", "an input gone"]);
    let r = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(
        r.stdout.starts_with(
            "a: run (input file src/lib.py removed and input file src/new.py added)\n"
        ),
        "{r:?}"
    );
    repo.git(&["reset", "-q", "--hard", &before]);

    // Agent, gates and env changes are named too.
    let text = PLAN
        .replace(
            "run = \"sh @BIN@/agent.sh\"",
            "run = \"sh @BIN@/agent.sh --v2\"",
        )
        .replace(
            "task c \"Task C\" { prompt = \"write c\" gates = [other] }",
            "task c \"Task C\" { prompt = \"write c\" gates = [other, check] env = { X = \"1\" } }",
        );
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    repo.plan(&text);
    let r = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        r.stdout,
        "a: run (agent changed)\n\
         b: run (agent changed)\n\
         c: run (agent and env changed)\n\
         d: run (agent changed)\n\
         dry run of plan cache: 0 cached, 4 to run; nothing was started\n",
        "{r:?}"
    );
}

#[test]
fn a_replay_failing_its_checks_runs_the_task() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/agent.log"
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
if [ -e strict ]; then touch "$LOOP_TASK.fixed"; fi
"#,
    );
    repo.plan(
        r#"
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
defaults { agent = bot }
task a { prompt = "write a" accept = "test ! -e strict || test -e a.fixed" }
task b: a { prompt = "write b" }
"#,
    );
    assert_eq!(run_ok(&repo, &[]), ["a", "b"]);
    // The base gains a file that makes a's recorded work fail its check.
    commit_file(&repo, "strict", "\n", "stricter");
    // `a` runs again and now also writes `a.fixed`: it produced something
    // else, so `b` runs too (no replay built on a's old result).
    assert_eq!(run_ok(&repo, &[]), ["a", "b"]);
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "passed");
    let miss = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "cache_miss" && e["task"] == "a")
        .expect("a cache_miss event for a");
    assert!(
        miss["reason"]
            .as_str()
            .unwrap()
            .contains("failed its checks"),
        "{miss}"
    );
    // The branch never pointed at the failing replay: every commit on it
    // passes a's check.
    for commit in repo.git(&["rev-list", "loop/plan"]).lines() {
        let files = repo.files_at(commit);
        let has = |f: &str| files.contains(&f.to_string());
        assert!(
            !has("strict") || !has("a.txt") || has("a.fixed"),
            "{commit}"
        );
    }
}

#[test]
fn an_unreadable_entry_is_a_miss() {
    let repo = setup();
    run_ok(&repo, &[]);
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".loopc/cache/index.json")).unwrap(),
    )
    .unwrap();
    let key = index["plans"]["cache"]["c"].as_str().unwrap().to_string();
    // Point c's entry at a commit whose message is not an entry.
    repo.git(&["update-ref", &format!("refs/loopc/cache/{key}"), "main"]);
    assert_eq!(run_ok(&repo, &[]), ["c"]);
    assert_eq!(
        statuses(&repo),
        ["a=cached", "b=cached", "c=passed", "d=cached"]
    );
    // The run wrote a good entry again.
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
}

#[test]
fn command_tasks_and_tasks_that_change_nothing_are_cached_in_parallel_runs() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/agent.log"
printf '{"status":"completed","summary":"nothing to do","no_changes":true}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
loop { parallel = 3 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
defaults { agent = bot }
task idle { prompt = "nothing to change" }
# `gen` waits (bounded) until `other` is merged, so `other` merges first
# although `gen` comes first in the plan's order.
task gen { run = "i=0; while ! git cat-file -e refs/heads/loop/plan:other.txt 2>/dev/null && [ $i -lt 250 ]; do i=$((i+1)); sleep 0.02; done; echo gen >> @BIN@/agent.log; echo generated > gen.txt" }
task other { run = "echo other >> @BIN@/agent.log; echo other > other.txt" }
task last: idle gen other { run = "echo last >> @BIN@/agent.log; cat gen.txt other.txt > last.txt" }
"#,
    );
    let mut first = run_ok(&repo, &[]);
    first.sort();
    assert_eq!(first, ["gen", "idle", "last", "other"]);
    assert!(repo.seq_of("merged", "other") < repo.seq_of("merged", "gen"));
    let head = repo.git(&["rev-parse", "loop/plan"]);
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert_eq!(
        dry.stdout,
        "idle: cached\ngen: cached\nother: cached\nlast: cached\n\
         dry run of plan plan: 4 cached, 0 to run; nothing was started\n",
        "{dry:?}"
    );
    let events = repo.events().len();
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    // Whatever order the parallel run merged in, the rerun follows it:
    // only fast-forwards, no checks, no worktree.
    for e in &repo.events()[events..] {
        assert_ne!(e["event"], "phase", "{e}");
        if e["event"] == "cached" {
            assert!(e["how"] == "fast_forward" || e["how"] == "none", "{e}");
        }
    }
    for t in ["idle", "gen", "other", "last"] {
        assert_eq!(repo.status_of(t), "cached", "{t}");
    }
    assert_eq!(repo.task("idle")["summary"], "nothing to do");
    assert_eq!(
        repo.show("loop/plan", "last.txt").unwrap(),
        "generated\nother\n"
    );
    assert_eq!(repo.git(&["rev-parse", "loop/plan"]), head);
}

#[test]
fn a_gated_replay_keeps_agent_gates_verdicts_and_runs_no_agent() {
    let repo = Test::repo();
    repo.script("agent.sh", AGENT);
    repo.script(
        "review.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "review $LOOP_TASK $LOOP_ATTEMPT" >> "$LOG_DIR/review.log"
printf '{"status":"completed","summary":"fine","cost_usd":0.02}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(
        r#"
budget { iterations = 10 cost = $1 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
agent reviewer { run = "sh @BIN@/review.sh" env = { LOG_DIR = "@BIN@" } }
gate review { agent = reviewer prompt = "Review $LOOP_DIFF_FILE" }
defaults { agent = bot gates = [review] }
task a { prompt = "write a" }
task b: a { prompt = "write b" }
"#,
    );
    assert_eq!(run_ok(&repo, &[]), ["a", "b"]);
    assert_eq!(log(&repo, "review.log"), ["review a 1", "review b 1"]);
    commit_file(&repo, "unrelated.md", "x\n", "unrelated");
    assert_eq!(run_ok(&repo, &[]), Vec::<String>::new());
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "cached");
    // The replays landed on a new base, but an agent gate judges an
    // attempt once: its verdict on the work carries over, nothing is paid.
    assert_eq!(log(&repo, "review.log"), ["review a 1", "review b 1"]);
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 0);
    assert_eq!(repo.state()["spent"]["iterations"], 0);
}

#[test]
fn an_interrupted_run_resumes_without_redoing_passed_tasks() {
    let repo = Test::repo();
    let hold = repo.bin.join("hold");
    let started = repo.bin.join("b-started");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> "$LOG_DIR/agent.log"
if [ "$LOOP_TASK" = b ] && [ -e {hold} ]; then touch {started}; sleep 1000; fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
"#,
            hold = hold.display(),
            started = started.display()
        ),
    );
    repo.plan(
        r#"
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" env = { LOG_DIR = "@BIN@" } }
defaults { agent = bot }
task a { prompt = "write a" }
task b: a { prompt = "write b" }
"#,
    );
    let mut child = repo.loopc(&["run"]).spawn();
    let mut i = 0;
    while !started.exists() && i < 500 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        i += 1;
    }
    assert!(started.exists(), "b never started");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "interrupted");

    std::fs::remove_file(&hold).unwrap();
    assert_eq!(run_ok(&repo, &[]), ["b"]);
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "passed");
    assert_eq!(agents(&repo), ["a", "b", "b"]);
    assert_eq!(repo.show("loop/plan", "b.txt").unwrap(), "made by b\n");
}

/// A task whose `inputs` match a file an independent task writes is said
/// to race it (docs/cache.md "Inputs"), once, naming both and the file.
#[test]
fn an_input_an_independent_task_writes_is_warned_about() {
    let repo = Test::repo();
    repo.plan(
        "loop \"race\" { parallel = 2 }\n\
         task a { run = \"echo a > a.txt\" }\n\
         task b { run = \"echo b > b.txt\"  inputs = [\"*.txt\"] }\n\
         task c: a { run = \"echo c > c.txt\"  inputs = [\"a.txt\"] }\n",
    );
    let r = repo.loopc(&["run"]).status(0).run();
    let all = r.stdout.clone() + &r.stderr;
    let warned: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("neither depends"))
        .collect();
    // `b` reads what `a` (and `c`) write; `c` depends on `a`, and `a`
    // reads nothing: one warning, for `b`.
    assert_eq!(warned.len(), 1, "{all}");
    assert!(
        warned[0].starts_with("warning: task `b`'s inputs match `")
            && warned[0].contains("but neither depends on the other: whether `b` sees it"),
        "{all}"
    );
}
