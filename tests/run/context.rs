//! `context` (docs/language.md "Context every agent reads"): the files
//! every prompt of a task carries, from `defaults` (also a REEL tree's
//! `defaults.loop`) and the task, as they are in the commit the attempt
//! starts from; part of the cache key; a missing one refuses the run
//! before any work (E0015 at its span) or blocks the task that needs it.
//! And `defaults.inputs`.

use crate::harness::{SIMPLE_AGENT, Test};

/// A repository with `DESIGN.md` and `AGENTS.md` committed and the simple
/// agent.
fn setup() -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.write("DESIGN.md", "# Design\nOne way data flow.\n");
    repo.write("AGENTS.md", "Run the tests.\n");
    repo.commit("docs");
    repo
}

/// The prompt attempt `n` of `task` was given.
fn prompt(repo: &Test, task: &str, n: u32) -> String {
    std::fs::read_to_string(repo.root.join(format!(".loopc/logs/{task}/{n}/prompt.md")))
        .expect("the attempt's prompt is in its logs")
}

const PLAN: &str = r#"
loop "ctx" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot  context = ["DESIGN.md"] }
task a { prompt = "Write a."  context = ["AGENTS.md", "DESIGN.md"] }
task b { prompt = "Write b." }
"#;

#[test]
fn each_prompt_starts_with_its_context_files() {
    let repo = setup();
    repo.plan(PLAN);
    repo.loopc(&["run"]).status(0).run();
    // A task's list adds to the defaults' (each file once, defaults first).
    let a = prompt(&repo, "a", 1);
    assert!(
        a.starts_with(
            "## Context: DESIGN.md\n# Design\nOne way data flow.\n\n\
             ## Context: AGENTS.md\nRun the tests.\n\n## Task\nWrite a.\n"
        ),
        "{a}"
    );
    let b = prompt(&repo, "b", 1);
    assert!(
        b.starts_with("## Context: DESIGN.md\n# Design\nOne way data flow.\n\n## Task\nWrite b.\n"),
        "{b}"
    );
}

#[test]
fn an_agent_gates_prompt_starts_with_its_tasks_context_files() {
    let repo = setup();
    // The reviewer keeps the prompt it was given on its standard input.
    repo.script(
        "reviewer.sh",
        r#"#!/bin/sh
cat > "$SEEN/$LOOP_TASK.review.md"
printf '{"status":"completed","summary":"fine"}' > "$LOOP_HANDOFF"
"#,
    );
    repo.plan(&PLAN.replace(
        "defaults {",
        "agent reviewer { run = \"sh @BIN@/reviewer.sh\" env = { SEEN = \"@BIN@\" } }\n\
         gate review { agent = reviewer prompt = \"Review the diff.\" }\n\
         defaults { gates = [review]",
    ));
    repo.loopc(&["run"]).status(0).run();
    let a = std::fs::read_to_string(repo.bin.join("a.review.md")).unwrap();
    assert!(
        a.starts_with(
            "## Context: DESIGN.md\n# Design\nOne way data flow.\n\n\
             ## Context: AGENTS.md\nRun the tests.\n\n## Review\nReview the diff.\n"
        ),
        "{a}"
    );
    let b = std::fs::read_to_string(repo.bin.join("b.review.md")).unwrap();
    assert!(
        b.starts_with(
            "## Context: DESIGN.md\n# Design\nOne way data flow.\n\n## Review\nReview the diff.\n"
        ),
        "{b}"
    );
    // The prompt the gate was given is kept with the attempt's logs.
    let kept = std::fs::read_to_string(repo.root.join(".loopc/logs/b/1/gate-review.prompt.md"));
    assert_eq!(kept.ok().as_deref(), Some(b.as_str()));
}

#[test]
fn a_changed_context_file_runs_its_tasks_again() {
    let repo = setup();
    repo.plan(PLAN);
    repo.loopc(&["run"]).status(0).run();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "cached");
    // AGENTS.md is only `a`'s.
    repo.write("AGENTS.md", "Run the tests twice.\n");
    repo.commit("stricter");
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run().stdout;
    assert!(
        dry.contains("a: run (context file AGENTS.md changed)"),
        "{dry}"
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert!(prompt(&repo, "a", 1).contains("Run the tests twice."));
    assert_eq!(repo.status_of("b"), "cached");
}

#[test]
fn a_context_file_missing_from_the_base_commit_refuses_the_run() {
    let repo = setup();
    repo.plan(&PLAN.replace("[\"AGENTS.md\", ", "[\"NOTES.md\", "));
    // In the checkout but never committed: attempts would not see it.
    repo.write("NOTES.md", "not committed\n");
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr.contains(
            "error[E0015]: context file `NOTES.md` is not in the commit attempts start from"
        ),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("plan.loop:6:"),
        "the span is shown: {r:?}"
    );
    assert!(r.stderr.contains("nothing was run"), "{r:?}");
    assert!(
        !repo.root.join(".loopc/logs").exists(),
        "no attempt started"
    );
}

#[test]
fn a_context_file_an_earlier_task_removed_blocks_the_task_naming_it() {
    let repo = setup();
    repo.plan(
        r#"
loop "gone" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
task rm { run = "git rm -q AGENTS.md" }
task a: rm { agent = bot  prompt = "Write a."  context = ["AGENTS.md"] }
task c: a { run = "true"  changes = optional }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("rm"), "passed");
    assert_eq!(repo.status_of("a"), "blocked");
    let reason = repo.task("a")["reason"].as_str().unwrap_or("").to_string();
    assert!(
        reason.contains(
            "task `a`: context file `AGENTS.md` is not in the commit the attempt starts from"
        ),
        "{reason}"
    );
    assert_eq!(repo.status_of("c"), "skipped");
}

#[test]
fn defaults_inputs_are_part_of_every_tasks_key() {
    let repo = setup();
    repo.write("data/x.csv", "1\n");
    repo.commit("data");
    repo.plan(
        r#"
loop "in" { }
defaults { inputs = ["data/*.csv"] }
task a { run = "echo a > a.txt" }
task b { run = "echo b > b.txt"  inputs = ["DESIGN.md"] }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "cached");
    repo.write("data/x.csv", "2\n");
    repo.commit("new data");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "passed");
    // A task's `inputs` add to the defaults'.
    repo.write("DESIGN.md", "# Design\nChanged.\n");
    repo.commit("design");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "cached");
    assert_eq!(repo.status_of("b"), "passed");
}

#[test]
fn a_reel_trees_defaults_give_every_spec_task_its_context() {
    let repo = setup();
    repo.write(
        "specs/defaults.loop",
        repo.expand(
            "budget { iterations = 10 }\nagent bot { run = \"sh @BIN@/agent.sh\" }\n\
             defaults { agent = bot  context = [\"DESIGN.md\"] }\n",
        ),
    );
    repo.write(
        "specs/auth.md",
        "# Auth\n\n## a1b2c3d4: Extract session manager\n\nWrite the session module.\n\n\
         **Acceptance:** `test -f auth.a1b2c3d4.txt`\n",
    );
    repo.commit("specs");
    repo.loopc(&["run", "specs"]).status(0).run();
    let p = prompt(&repo, "auth.a1b2c3d4", 1);
    assert!(
        p.starts_with("## Context: DESIGN.md\n# Design\nOne way data flow.\n\n## Task\n"),
        "{p}"
    );
}
