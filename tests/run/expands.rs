//! Plans that grow (`expands`): a task writes a plan fragment, loopc checks
//! it with the plan and splices its tasks in. The architect example end to
//! end (a rejected first fragment, its diagnostic as feedback, the fixed
//! fragment's tasks in dependency order, the producer's dependent after
//! them, a rerun all from the cache), `graph` and `status` of a grown
//! plan, the field's own check errors, the depth limit and a missing
//! fragment.

use crate::harness::{Test, examples_dir};

/// A repository holding the architect example's goal and plan, with
/// `ARCHITECT_AGENT` for its scripted agents.
fn architect() -> (Test, String) {
    let dir = examples_dir().join("architect");
    let repo = Test::repo();
    for f in ["goal.md", "architect.loop"] {
        repo.write(f, std::fs::read(dir.join(f)).unwrap());
    }
    repo.commit("the goal");
    (repo, dir.join("agent.sh").to_string_lossy().into_owned())
}

/// The names of the tasks in state.json, in order.
fn task_names(repo: &Test) -> Vec<String> {
    repo.state()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The `seq` of the first event of `kind` for `task` matching `pred`.
fn seq_where(
    repo: &Test,
    kind: &str,
    task: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> u64 {
    repo.events()
        .iter()
        .find(|e| e["event"] == kind && e["task"] == task && pred(e))
        .and_then(|e| e["seq"].as_u64())
        .unwrap_or_else(|| panic!("no matching {kind} event for {task}"))
}

#[test]
fn architect_fixes_its_fragment_then_the_backlog_runs_in_order() {
    let (repo, agent) = architect();
    let out = repo
        .loopc(&["run", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();

    // Attempt 1's fragment misspelled a dependency: the attempt failed
    // with the diagnostic, naming the fragment's file and line.
    let design = repo.task("design");
    assert_eq!(design["status"], "passed", "{out:?}");
    assert_eq!(design["attempts"], 2);
    let first = &design["history"][0];
    assert_eq!(first["outcome"], "failed");
    assert_eq!(
        first["reason"],
        "plan fragment plan/features.loop does not check: plan/features.loop:7: unknown task `parserr`"
    );
    // The architect was told what a fragment is and what it may use.
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/design/1/prompt.md")).unwrap();
    assert!(
        prompt.contains(
            "## Plan fragment (required)\nThis task writes the plan fragment `plan/features.loop`"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "The plan's agents: `architect`, `builder` (a task without `agent` is done by \
             `builder`); its gates: none."
        ),
        "{prompt}"
    );
    // The second attempt was given the whole diagnostic as its feedback.
    let feedback =
        std::fs::read_to_string(repo.root.join(".loopc/logs/design/2/feedback.md")).unwrap();
    assert!(
        feedback.contains("error[E0005]: unknown task `parserr`"),
        "{feedback}"
    );
    assert!(
        feedback.contains("┌─ plan/features.loop:7:50"),
        "{feedback}"
    );
    // Nothing of the bad fragment ran: the only fragment tasks are the
    // fixed fragment's, started after design's second attempt passed.
    let names = task_names(&repo);
    assert_eq!(
        names,
        [
            "design",
            "design.parser",
            "design.counter",
            "design.docs",
            "release"
        ]
    );
    let design_passed = seq_where(&repo, "task_finished", "design", |_| true);
    let expanded = seq_where(&repo, "expanded", "design", |_| true);
    assert!(expanded > design_passed);
    let ev = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "expanded")
        .unwrap();
    assert_eq!(ev["fragment"], "plan/features.loop");
    assert_eq!(
        ev["tasks"],
        serde_json::json!(["design.parser", "design.counter", "design.docs"])
    );
    for t in ["design.parser", "design.counter", "design.docs"] {
        let ts = repo.task(t);
        assert_eq!(ts["status"], "passed", "{t}: {out:?}");
        assert_eq!(ts["expanded_from"], "design");
        assert!(repo.seq_of("attempt_started", t) > expanded);
    }
    assert_eq!(
        repo.task("design.counter")["dependencies"],
        serde_json::json!(["design", "design.parser"])
    );
    // counter depends on parser: it started after parser passed, and saw
    // parser's work.
    assert!(
        repo.seq_of("attempt_started", "design.counter")
            > repo.seq_of("task_finished", "design.parser")
    );
    let counter = repo.show("loop/architect", "features/counter.txt").unwrap();
    assert!(
        counter.starts_with("Count the words the parser found\n")
            && counter.contains("saw features/parser.txt\n"),
        "{counter}"
    );
    // release depends on design: it waited for all three.
    let release = repo.seq_of("attempt_started", "release");
    for t in ["design.parser", "design.counter", "design.docs"] {
        assert!(release > repo.seq_of("task_finished", t), "{t}");
    }
    let notes = repo.show("loop/architect", "RELEASE.txt").unwrap();
    for title in [
        "Split the input into words",
        "Count the words the parser found",
        "Document how to use the tool",
    ] {
        assert!(notes.contains(title), "{notes}");
    }
    // The budget covers the spliced tasks: 2 architect + 3 builder attempts.
    assert_eq!(repo.state()["spent"]["iterations"], 5);

    // `status` lists the tasks the fragment added.
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(
        status.stdout.contains(
            "grown: design's plan fragment added 3 tasks: design.parser, design.counter, design.docs\n"
        ),
        "{status:?}"
    );
    assert!(
        status.stdout.contains("\ndesign.counter  passed "),
        "{status:?}"
    );

    // `graph --state` draws what the run added.
    let graph = repo
        .loopc(&["graph", "--state", "architect.loop"])
        .status(0)
        .run();
    insta::assert_snapshot!("architect_graph_state", graph.stdout);
    let dot = repo
        .loopc(&["graph", "--state", "--format", "dot", "architect.loop"])
        .status(0)
        .run();
    insta::assert_snapshot!("architect_graph_state_dot", dot.stdout);

    // A rerun re-splices the fragment from the cache: nothing runs.
    let head = repo.git(&["rev-parse", "loop/architect"]);
    repo.loopc(&["run", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    for t in [
        "design",
        "design.parser",
        "design.counter",
        "design.docs",
        "release",
    ] {
        assert_eq!(repo.status_of(t), "cached", "{t}");
    }
    assert_eq!(repo.state()["spent"]["iterations"], 0);
    assert_eq!(repo.git(&["rev-parse", "loop/architect"]), head);
}

#[test]
fn graph_draws_the_task_that_expands_as_a_cluster_to_fill() {
    let (repo, _) = architect();
    for format in ["text", "dot", "mermaid"] {
        let out = repo
            .loopc(&["graph", "architect.loop", "--format", format])
            .status(0)
            .run();
        insta::assert_snapshot!(format!("architect_graph_{format}"), out.stdout);
    }
    let json = repo
        .loopc(&["graph", "architect.loop", "--format", "json"])
        .status(0)
        .run();
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["tasks"][0]["expands"], "plan/features.loop");
    assert!(doc["tasks"][1].get("expands").is_none());
}

#[test]
fn the_field_is_checked() {
    let repo = Test::new();
    repo.write(
        "plan.loop",
        r#"agent a { run = "true" }
defaults { agent = a }
budget { iterations = 3 }
loop { expand_depth = 0 }
task one { prompt = "x" expands = "../up.loop" }
task two { prompt = "x" expands = "/abs.loop" }
task three { prompt = "x" expands = "notes.txt" }
task four { prompt = "x" expands = 3 }
task five { prompt = "x" expands = ".git/x.loop" }
task six { prompt = "x" expands = "" }
"#,
    );
    let out = repo.loopc(&["check", "plan.loop"]).status(1).run();
    assert_eq!(
        out.stderr
            .matches("error[E0009]: `expands` is empty")
            .count(),
        1,
        "{out:?}"
    );
    assert!(!out.stderr.contains("`expands` cannot be ``"), "{out:?}");
    for want in [
        "error[E0009]: `expands` cannot be `.git/x.loop`",
        "git's and loopc's own directories are never part of a commit",
        "error[E0009]: `expand_depth` must be at least 1",
        "┌─ plan.loop:4:23",
        "error[E0009]: `expands` cannot be `../up.loop`",
        "┌─ plan.loop:5:35",
        "the path leaves the repository (`..`)",
        "error[E0009]: `expands` cannot be `/abs.loop`",
        "the path is absolute",
        "error[E0009]: `expands` cannot be `notes.txt`",
        "a plan fragment is a `.loop` file",
        "error[E0007]",
        "┌─ plan.loop:8:36",
    ] {
        assert!(out.stderr.contains(want), "lacks {want:?}: {out:?}");
    }
}

#[test]
fn agents_left_for_fragments_are_not_called_unused() {
    let repo = Test::new();
    repo.write(
        "plan.loop",
        r#"agent architect { run = "true" }
agent writer { run = "true" }
budget { iterations = 3 }
task design { agent = architect prompt = "x" expands = "plan/f.loop" }
"#,
    );
    let out = repo.loopc(&["check", "plan.loop"]).status(0).run();
    assert!(!out.stderr.contains("W0001"), "{out:?}");
    // Without `expands`, `writer` is unused.
    repo.write(
        "plan.loop",
        r#"agent architect { run = "true" }
agent writer { run = "true" }
budget { iterations = 3 }
task design { agent = architect prompt = "x" }
"#,
    );
    repo.loopc(&["check", "plan.loop"])
        .stderr_contains("warning[W0001]: agent `writer` is defined but never used")
        .status(0)
        .run();
}

/// A plan whose `a` writes `frag/a.loop` (a copy of `$FRAGMENT_A`, when
/// that file exists) and whose fragment's `b` writes `frag/b.loop` from
/// `$FRAGMENT_B`; `z` depends on `a`.
fn producer_plan(repo: &Test, depth: u32, attempts: u32) {
    repo.script(
        "producer.sh",
        r#"#!/bin/sh
cat > /dev/null
case "$LOOP_TASK" in
  a) echo a > a.txt; mkdir -p frag; cp "$FRAGMENT_A" frag/a.loop 2>/dev/null ;;
  a.b) echo b > b.txt; mkdir -p frag; cp "$FRAGMENT_B" frag/b.loop ;;
  *) echo "$LOOP_TASK" > "$LOOP_TASK.txt" ;;
esac
printf '{"status":"completed"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(&format!(
        r#"loop "grow" {{ expand_depth = {depth} }}
budget {{ iterations = 20 }}
agent worker {{ run = "sh @BIN@/producer.sh" }}
defaults {{ agent = worker attempts = {attempts} }}
task a {{ prompt = "write the fragment" expands = "frag/a.loop" }}
task z: a {{ prompt = "after" }}
"#
    ));
}

#[test]
fn fragments_nest_up_to_the_depth_limit() {
    // Depth 2: a's fragment adds `b`, which expands in turn into `c`.
    let repo = Test::repo();
    producer_plan(&repo, 2, 1);
    let frag_a = repo.bin.join("a.loop");
    let frag_b = repo.bin.join("b.loop");
    std::fs::write(
        &frag_a,
        "task b { prompt = \"more\" expands = \"frag/b.loop\" }\n",
    )
    .unwrap();
    std::fs::write(&frag_b, "task c { prompt = \"leaf\" }\n").unwrap();
    let out = repo
        .loopc(&["run"])
        .env("FRAGMENT_A", &frag_a)
        .env("FRAGMENT_B", &frag_b)
        .status(0)
        .run();
    assert_eq!(repo.task("a.b.c")["expanded_from"], "a.b", "{out:?}");
    assert_eq!(repo.task("a.b")["expanded_from"], "a");
    // z waited for the nested task too.
    assert!(repo.seq_of("attempt_started", "z") > repo.seq_of("task_finished", "a.b.c"));

    // Depth 1: the same fragment fails `a`; nothing of it runs and `z` is
    // skipped.
    let repo = Test::repo();
    producer_plan(&repo, 1, 1);
    let out = repo
        .loopc(&["run"])
        .env("FRAGMENT_A", &frag_a)
        .env("FRAGMENT_B", &frag_b)
        .status(1)
        .run();
    let a = repo.task("a");
    assert_eq!(a["status"], "failed", "{out:?}");
    assert_eq!(
        a["reason"],
        "out of attempts (1 of 1): plan fragment frag/a.loop does not check: frag/a.loop:1: \
         task `a.b` would expand a fragment 2 levels deep"
    );
    assert_eq!(repo.status_of("z"), "skipped");
    let names = task_names(&repo);
    assert_eq!(names, ["a", "z"]);
    assert!(!repo.events().iter().any(|e| e["event"] == "expanded"));
}

#[test]
fn a_missing_fragment_fails_the_attempt() {
    let repo = Test::repo();
    producer_plan(&repo, 3, 2);
    let nothing = repo.bin.join("missing.loop");
    let out = repo
        .loopc(&["run"])
        .env("FRAGMENT_A", &nothing)
        .status(1)
        .run();
    let a = repo.task("a");
    assert_eq!(a["status"], "failed", "{out:?}");
    assert_eq!(a["attempts"], 2);
    assert_eq!(
        a["history"][0]["reason"],
        "plan fragment frag/a.loop is missing: the task's commit has no `frag/a.loop`"
    );
    assert_eq!(repo.status_of("z"), "skipped");
}

/// `examples/architect/run.sh` itself: it succeeds and leaves nothing in
/// the temporary directory.
#[test]
fn architect_example_script_runs() {
    let stdout = crate::harness::run_example_script("architect/run.sh");
    assert!(
        stdout.contains("error[E0005]: unknown task `parserr`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("run passed: 5/5 tasks passed (5 from the cache)"),
        "{stdout}"
    );
}

#[test]
fn spliced_tasks_run_beside_an_attempt_that_started_before() {
    // `slow` starts beside `a`; once `a`'s fragment is spliced, its two
    // tasks run while `slow` still runs: the three meet (bounded wait), so
    // the run had room for all three, and `slow`'s result, which started
    // under the smaller plan, lands on the grown one.
    let repo = Test::repo();
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    repo.script(
        "meet.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_TASK" = a ]; then
  mkdir -p frag
  printf 'task x1 {{ prompt = "1" }}\ntask x2 {{ prompt = "2" }}\n' > frag/a.loop
else
  touch "{sync}/$LOOP_TASK"
  i=0
  while [ ! -e "{sync}/slow" ] || [ ! -e "{sync}/a.x1" ] || [ ! -e "{sync}/a.x2" ]; do
    i=$((i+1)); [ $i -gt 500 ] && break
    sleep 0.02
  done
  if [ $i -gt 500 ]; then echo alone > "$LOOP_TASK.txt"; else echo together > "$LOOP_TASK.txt"; fi
fi
printf '{{"status":"completed"}}' > "$LOOP_HANDOFF"
"#,
            sync = sync.display()
        ),
    );
    repo.plan(
        r#"loop "meet" { parallel = 3 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/meet.sh" }
defaults { agent = bot attempts = 1 }
task a { prompt = "plan" expands = "frag/a.loop" }
task slow { prompt = "wait" }
"#,
    );
    let out = repo.loopc(&["run"]).status(0).run();
    for t in ["slow", "a.x1", "a.x2"] {
        assert_eq!(
            repo.show("loop/meet", &format!("{t}.txt")).as_deref(),
            Some("together\n"),
            "{t}: {out:?}"
        );
    }
    assert_eq!(task_names(&repo), ["a", "slow", "a.x1", "a.x2"]);
}

#[test]
fn a_recorded_fragment_that_no_longer_checks_is_not_replayed() {
    let (repo, agent) = architect();
    repo.loopc(&["run", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    // The fragment's tasks relied on `defaults.agent`; without it they
    // have no agent (E0013), so the recorded fragment no longer checks:
    // `design` is not replayed but runs, told why.
    let plan = std::fs::read_to_string(repo.root.join("architect.loop")).unwrap();
    let changed = plan.replace("  agent    = builder\n", "");
    assert_ne!(changed, plan);
    repo.write("architect.loop", &changed);
    let out = repo
        .loopc(&["run", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(1)
        .run();
    let miss = repo
        .events()
        .into_iter()
        .rev()
        .find(|e| e["event"] == "cache_miss" && e["task"] == "design")
        .unwrap_or_else(|| panic!("no cache miss for design: {out:?}"));
    let reason = miss["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "plan fragment plan/features.loop does not check (3 errors): plan/features.loop:3: "
        ),
        "{reason}"
    );
    // The attempts that followed were told the same, and failed the same
    // way: nothing of the fragment ran.
    let feedback =
        std::fs::read_to_string(repo.root.join(".loopc/logs/design/1/feedback.md")).unwrap();
    assert!(feedback.contains("error[E0013]"), "{feedback}");
    assert_eq!(repo.status_of("design"), "failed");
    assert_eq!(repo.status_of("release"), "skipped");
    assert_eq!(task_names(&repo), ["design", "release"]);
}

#[test]
fn running_some_tasks_adds_a_fragments_tasks_only_when_they_are_needed() {
    // `run design`: the fragment is checked, but its tasks are not needed.
    let (repo, agent) = architect();
    repo.loopc(&["run", "architect.loop", "design"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    assert_eq!(task_names(&repo), ["design"]);
    assert_eq!(repo.task("design")["attempts"], 2);
    // `run release`: release waits for them, so they run (design replays).
    repo.loopc(&["run", "architect.loop", "release"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    assert_eq!(
        task_names(&repo),
        [
            "design",
            "design.parser",
            "design.counter",
            "design.docs",
            "release"
        ]
    );
    assert_eq!(repo.status_of("design"), "cached");
    assert_eq!(repo.status_of("design.counter"), "passed");
}

/// A plan whose `design` writes `plan/f.loop` with tasks `one` and `two`;
/// the other tasks write `<task>.txt`.
fn design_plan(repo: &Test) {
    repo.write(
        "agent.sh",
        "cat >/dev/null; if [ \"$LOOP_TASK\" = design ]; then mkdir -p plan; \
         printf 'task one { prompt = \"1\" }\\ntask two { prompt = \"2\" }\\n' > plan/f.loop; \
         else echo \"$LOOP_TASK\" > \"$LOOP_TASK.txt\"; fi\n",
    );
    repo.write(
        "plan.loop",
        r#"budget { iterations = 10 }
agent bot { run = "sh agent.sh" }
defaults { agent = bot }
task design { prompt = "d" expands = "plan/f.loop" }
"#,
    );
    repo.commit("the plan");
}

#[test]
fn a_rerun_after_the_base_moved_runs_the_replayed_fragments_tasks() {
    let repo = Test::repo();
    design_plan(&repo);
    repo.loopc(&["run", "-q"]).status(0).run();
    // An unrelated commit: `design` is replayed onto a new base (not a
    // fast-forward), and the tasks its fragment adds must still run.
    repo.write("a.txt", "a\n");
    repo.commit("unrelated");
    let out = repo.loopc(&["run"]).status(0).run();
    for t in ["design", "design.one", "design.two"] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {out:?}");
    }
    assert_eq!(repo.show("loop/plan", "a.txt").as_deref(), Some("a\n"));
    assert_eq!(
        repo.show("loop/plan", "design.two.txt").as_deref(),
        Some("design.two\n")
    );

    // The architect example as shipped, the same way.
    let (repo, agent) = architect();
    repo.loopc(&["run", "-q", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    repo.write("unrelated.txt", "x\n");
    repo.commit("unrelated");
    let out = repo
        .loopc(&["run", "architect.loop"])
        .env("ARCHITECT_AGENT", &agent)
        .status(0)
        .run();
    assert_eq!(task_names(&repo).len(), 5, "{out:?}");
    for t in task_names(&repo) {
        assert_eq!(repo.status_of(&t), "cached", "{t}: {out:?}");
    }
}

#[test]
fn a_rerun_replays_each_producers_own_fragment_not_the_merged_file() {
    // p1 and p2 both write plan/same.loop, one line each, from the same
    // base; the second to merge conflicts and a resolver keeps both lines.
    // Each producer's fragment is the one its own attempt wrote: p1 adds
    // p1.from_p1, p2 adds p2.from_p2, in the run and in every rerun.
    let repo = Test::repo();
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    repo.script(
        "both.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
case "$LOOP_TASK" in
  p1|p2)
    touch "{s}/$LOOP_TASK"
    i=0
    while [ ! -e "{s}/p1" ] || [ ! -e "{s}/p2" ]; do
      i=$((i+1)); [ $i -gt 400 ] && break
      sleep 0.02
    done
    mkdir -p plan
    echo "task from_$LOOP_TASK {{ prompt = \"x\" }}" > plan/same.loop ;;
  *) echo "$LOOP_TASK" > "$LOOP_TASK.txt" ;;
esac
"#,
            s = sync.display()
        ),
    );
    repo.script(
        "keep_both.sh",
        r#"#!/bin/sh
cat > /dev/null
grep -v '^\(<<<<<<<\|=======\|>>>>>>>\|||||||\)' plan/same.loop > "$TMPDIR/r"
cat "$TMPDIR/r" > plan/same.loop
"#,
    );
    repo.plan(
        r#"loop "two" { parallel = 2 resolver = fixer }
budget { iterations = 20 }
agent bot { run = "sh @BIN@/both.sh" }
agent fixer { run = "sh @BIN@/keep_both.sh" }
defaults { agent = bot attempts = 1 }
task p1 { prompt = "1" expands = "plan/same.loop" }
task p2 { prompt = "2" expands = "plan/same.loop" }
"#,
    );
    let out = repo.loopc(&["run"]).status(0).run();
    let merged = repo.show("loop/two", "plan/same.loop").unwrap();
    assert_eq!(merged.lines().count(), 2, "{merged}: {out:?}");
    let mut names = task_names(&repo);
    names.sort();
    assert_eq!(names, ["p1", "p1.from_p1", "p2", "p2.from_p2"], "{out:?}");

    // An unchanged rerun replays the same plan: nothing added, nothing run.
    let out = repo.loopc(&["run"]).status(0).run();
    let mut names = task_names(&repo);
    names.sort();
    assert_eq!(names, ["p1", "p1.from_p1", "p2", "p2.from_p2"], "{out:?}");
    for t in &names {
        assert_eq!(repo.status_of(t), "cached", "{t}: {out:?}");
    }
    assert_eq!(repo.state()["spent"]["iterations"], 0);
    // `graph --state` draws the same plan.
    let graph = repo.loopc(&["graph", "--state"]).status(0).run();
    assert!(graph.stdout.contains("p2.from_p2"), "{}", graph.stdout);
    assert!(!graph.stdout.contains("p2.from_p1"), "{}", graph.stdout);
    assert!(!graph.stdout.contains("p1.from_p2"), "{}", graph.stdout);
}

#[test]
fn a_dry_run_grows_the_plan_from_the_recorded_fragments_as_the_run_does() {
    let repo = Test::repo();
    repo.write(
        "agent.sh",
        "cat >/dev/null; if [ \"$LOOP_TASK\" = design ]; then mkdir -p plan; \
         printf 'task one { prompt = \"1\" agent = other }\\ntask two { prompt = \"2\" }\\n' \
         > plan/f.loop; else echo \"$LOOP_TASK\" > \"$LOOP_TASK.txt\"; fi\n",
    );
    let plan = r#"budget { iterations = 10 }
agent bot { run = "sh agent.sh" }
agent other { run = "sh agent.sh" }
defaults { agent = bot }
task design { prompt = "d" expands = "plan/f.loop" }
task after: design { prompt = "a" }
"#;
    repo.write("plan.loop", plan);
    repo.commit("the plan");
    repo.loopc(&["run", "-q"]).status(0).run();
    // After a passing run: everything, the fragment's tasks too, replays.
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert_eq!(
        dry.stdout,
        "design: cached\ndesign.one: cached\ndesign.two: cached\nafter: cached\n\
         dry run of plan plan: 4 cached, 0 to run; nothing was started\n"
    );
    // Without the agent the fragment uses, the recorded fragment does not
    // check: the run does not use design's entry, and the dry run says so.
    repo.write(
        "plan.loop",
        plan.replace("agent other { run = \"sh agent.sh\" }\n", ""),
    );
    repo.commit("no other agent");
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert_eq!(
        dry.stdout,
        "design: run (cache entry not used: plan fragment plan/f.loop does not check: \
         plan/f.loop:1: unknown agent `other`)\n\
         after: run (it waits for the tasks of the plan fragment `design` writes when it \
         runs; those decide whether it replays)\n\
         dry run of plan plan: 0 cached, 2 to run; nothing was started\n"
    );
    let out = repo.loopc(&["run"]).status(1).run();
    assert!(
        out.stderr.contains(
            "design: cache entry not used: plan fragment plan/f.loop does not check: \
             plan/f.loop:1: unknown agent `other`"
        ),
        "{out:?}"
    );
}

#[test]
fn a_fragment_that_is_not_utf8_is_e0001_at_its_path() {
    // The same bytes in a plan file are E0001; in a fragment they are
    // too, at the fragment's path and line.
    let repo = Test::repo();
    producer_plan(&repo, 3, 1);
    let bad = repo.bin.join("bad.loop");
    std::fs::write(&bad, b"task one { prompt = \"caf\xe9\" }\n").unwrap();
    let plan = repo.root.join("bad.loop");
    std::fs::write(
        &plan,
        b"agent a { run = \"true\" }\ntask one { agent = a prompt = \"caf\xe9\" }\n",
    )
    .unwrap();
    repo.loopc(&["check", "bad.loop"])
        .stderr_contains("error[E0001]: file is not valid UTF-8")
        .status(1)
        .run();
    std::fs::remove_file(&plan).unwrap();
    let out = repo.loopc(&["run"]).env("FRAGMENT_A", &bad).status(1).run();
    let a = repo.task("a");
    assert_eq!(
        a["reason"],
        "out of attempts (1 of 1): plan fragment frag/a.loop does not check: frag/a.loop:1: \
         file is not valid UTF-8",
        "{out:?}"
    );
    assert_eq!(task_names(&repo), ["a", "z"]);
}

#[test]
fn the_last_attempts_fragment_diagnostics_are_kept_and_shown() {
    // Two errors, one a name too long once prefixed: the reason holds the
    // first; every one is in the attempt's logs, and `loopc logs` shows
    // them.
    let repo = Test::repo();
    producer_plan(&repo, 3, 1);
    let long = "n".repeat(63);
    let frag = repo.bin.join("two.loop");
    std::fs::write(
        &frag,
        format!("task one: nope {{ prompt = \"1\" }}\ntask {long} {{ prompt = \"2\" }}\n"),
    )
    .unwrap();
    let out = repo
        .loopc(&["run"])
        .env("FRAGMENT_A", &frag)
        .status(1)
        .run();
    let reason = repo.task("a")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("(2 errors)"), "{reason}: {out:?}");
    let check =
        std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/fragment-check.log")).unwrap();
    assert!(
        check.contains("error[E0005]: unknown task `nope`"),
        "{check}"
    );
    assert!(check.contains("error[E0011]: invalid task name"), "{check}");
    assert!(
        check.contains(
            "`a.` takes 2, so the fragment's own name may have at most 62 (this one has 63)"
        ),
        "{check}"
    );
    let logs = repo.loopc(&["logs", "a"]).status(0).run();
    assert!(
        logs.stdout.contains("fragment-check.log") && logs.stdout.contains("unknown task `nope`"),
        "{logs:?}"
    );
    // The prompt listed every field a fragment's task may have, and how
    // long its names may be.
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/prompt.md")).unwrap();
    assert!(prompt.contains("(at most 62 characters each"), "{prompt}");
    assert!(
        prompt.contains("`env`, `resolver`, `on_fail`, `answerer`, `expands` (a fragment"),
        "{prompt}"
    );
}

#[test]
fn a_fragment_path_git_ignores_is_said_to_be_ignored() {
    let repo = Test::repo();
    producer_plan(&repo, 3, 1);
    repo.write(".gitignore", "frag/\n");
    repo.commit("ignore frag/");
    let frag = repo.bin.join("ok.loop");
    std::fs::write(&frag, "task one { prompt = \"1\" }\n").unwrap();
    let out = repo
        .loopc(&["run"])
        .env("FRAGMENT_A", &frag)
        .status(1)
        .run();
    assert_eq!(
        repo.task("a")["reason"],
        "out of attempts (1 of 1): plan fragment frag/a.loop is missing: the task's commit has \
         no `frag/a.loop`, which git ignores (a `.gitignore` matches it), so it was not committed",
        "{out:?}"
    );
}

#[test]
fn list_graph_and_task_names_know_a_fragments_tasks() {
    let repo = Test::repo();
    design_plan(&repo);
    repo.loopc(&["run", "-q"]).status(0).run();
    // `list` shows the tasks the run added, marked, as `status` does.
    let list = repo.loopc(&["list"]).status(0).run();
    assert_eq!(
        list.stdout,
        "task        status  title\n\
         design      passed\n\
         design.one  passed  (added by design's plan fragment)\n\
         design.two  passed  (added by design's plan fragment)\n"
    );
    // From outside the repository, naming the plan: the plan's repository's
    // last run, as `run` uses it.
    let plan = repo.root.join("plan.loop");
    let outside = repo
        .loopc(&["list", plan.to_str().unwrap()])
        .current_dir(&repo.bin)
        .status(0)
        .run();
    assert_eq!(outside.stdout, list.stdout, "{outside:?}");
    assert_eq!(outside.stderr, "", "{outside:?}");
    let graph = repo
        .loopc(&["graph", "--state", plan.to_str().unwrap()])
        .current_dir(&repo.bin)
        .status(0)
        .run();
    assert!(graph.stdout.contains("design.two"), "{graph:?}");
    assert!(graph.stdout.contains("passed"), "{graph:?}");
    assert_eq!(graph.stderr, "", "{graph:?}");
    let json = repo.loopc(&["list", "--json"]).status(0).run();
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["tasks"][1]["name"], "design.one");
    assert_eq!(doc["tasks"][1]["expanded_from"], "design");
    assert!(doc["tasks"][0].get("expanded_from").is_none());
    // A fragment's task named on the command line: not in the plan yet,
    // and the message says whose fragment adds it.
    let hint = "`design.one` would be a task of the plan fragment `design` writes (`expands`): \
                it exists only once `design` has passed, during a run";
    repo.loopc(&["run", "design.one"])
        .stderr_contains(hint)
        .status(2)
        .run();
    repo.loopc(&["run", "--force", "design.one"])
        .stderr_contains(hint)
        .status(2)
        .run();
}

#[test]
fn graph_state_draws_an_empty_fragment_as_spliced() {
    let repo = Test::repo();
    producer_plan(&repo, 3, 1);
    let empty = repo.bin.join("empty.loop");
    std::fs::write(&empty, "# nothing more to do\n").unwrap();
    repo.loopc(&["run"])
        .env("FRAGMENT_A", &empty)
        .status(0)
        .run();
    let graph = repo.loopc(&["graph", "--state"]).status(0).run();
    assert!(
        graph.stdout.contains("┆ expanded frag/a.loop: no tasks"),
        "{}",
        graph.stdout
    );
    let dot = repo
        .loopc(&["graph", "--state", "--format", "dot"])
        .status(0)
        .run();
    assert!(dot.stdout.contains("(no tasks)"), "{}", dot.stdout);
    // Without `--state`, the fragment is still to come.
    let graph = repo.loopc(&["graph"]).status(0).run();
    assert!(
        graph
            .stdout
            .contains("┆ expands frag/a.loop (tasks to come)"),
        "{}",
        graph.stdout
    );
}

#[test]
fn a_fragments_task_out_of_attempts_is_not_paid_for_again() {
    let repo = Test::repo();
    repo.write(
        "agent.sh",
        "cat >/dev/null; echo \"$LOOP_TASK\" >> \"$SESSIONS\"; \
         if [ \"$LOOP_TASK\" = design ]; then mkdir -p plan; \
         printf 'task bad { prompt = \"b\"  accept = \"false\"  attempts = 2 }\\n' > plan/f.loop; \
         else echo \"$LOOP_TASK\" > \"$LOOP_TASK.txt\"; fi\n",
    );
    let sessions = repo.bin.join("sessions");
    repo.write(
        "plan.loop",
        format!(
            r#"budget {{ iterations = 10 }}
agent bot {{ run = "sh agent.sh"  env = {{ SESSIONS = "{}" }} }}
defaults {{ agent = bot }}
task design {{ prompt = "d" expands = "plan/f.loop" }}
"#,
            sessions.display()
        ),
    );
    repo.commit("the plan");
    repo.loopc(&["run", "-q"]).status(1).run();
    let count = || {
        std::fs::read_to_string(&sessions)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(count(), 3, "design once, bad twice");
    let r = repo.loopc(&["run"]).status(1).run();
    assert_eq!(count(), 3, "nothing paid again: {r:?}");
    assert!(
        r.stdout
            .contains("design.bad: not run: ran out of attempts (2 of 2) with this key"),
        "{r:?}"
    );
    let state = repo.state();
    assert!(
        state.get("carried").is_none(),
        "the run included it: {state}"
    );
    // The hint can be followed.
    repo.loopc(&["run", "--retry-failed", "design.bad"])
        .status(1)
        .run();
    assert_eq!(count(), 5, "--retry-failed runs it again");
}
