//! `loopc run` end to end: parallel tasks, the user's checkout untouched,
//! state, events and progress files, command tasks, the environment
//! protocol, and the shell-injection case.

use crate::harness::{SIMPLE_AGENT, Test};

/// An agent that waits (bounded) until both `a` and `b` have started, so
/// the test proves overlap structurally, then writes its file.
fn rendezvous_agent(repo: &Test) -> String {
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    repo.script(
        "rendezvous.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
touch "{sync}/$LOOP_TASK"
i=0
while [ ! -e "{sync}/a" ] || [ ! -e "{sync}/b" ]; do
  i=$((i+1)); [ $i -gt 400 ] && break
  sleep 0.02
done
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{{"status":"completed","summary":"wrote %s.txt","cost_usd":0.25}}' "$LOOP_TASK" > "$LOOP_HANDOFF"
"#,
            sync = sync.display()
        ),
    )
}

#[test]
fn independent_tasks_run_in_parallel_and_merge() {
    let repo = Test::repo();
    rendezvous_agent(&repo);
    repo.plan(
        r#"
loop "par" { parallel = 2 }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/rendezvous.sh" }
defaults { agent = bot }
task a "Task A" { prompt = "write a" }
task b "Task B" { prompt = "write b" }
task c "Task C": a b { run = "cat a.txt b.txt > c.txt" }
"#,
    );
    let main_before = repo.git(&["rev-parse", "main"]);
    let r = repo.loopc(&["run"]).status(0).run();

    // Both attempts started before either finished: they overlapped.
    let a_start = repo.seq_of("attempt_started", "a");
    let b_start = repo.seq_of("attempt_started", "b");
    let a_end = repo.seq_of("attempt_finished", "a");
    let b_end = repo.seq_of("attempt_finished", "b");
    assert!(a_start < b_end && b_start < a_end, "no overlap: {r:?}");
    // And the dependent started only after both passed.
    let c_start = repo.seq_of("attempt_started", "c");
    assert!(c_start > a_end && c_start > b_end);
    // Sequence numbers are 1, 2, 3, … in file order.
    let seqs: Vec<u64> = repo
        .events()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());

    // The work is on the integration branch; the user's branch is untouched.
    let files = repo.files_at("loop/par");
    for f in ["a.txt", "b.txt", "c.txt"] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:?}");
    }
    assert_eq!(
        repo.show("loop/par", "c.txt").unwrap(),
        "made by a\nmade by b\n"
    );
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    assert_eq!(repo.git(&["symbolic-ref", "--short", "HEAD"]), "main");
    assert!(!repo.root.join("a.txt").exists());
    // Only plan.loop (the user's own file) is untracked; .loopc/ is excluded.
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? plan.loop");

    // State, progress, summary.
    let state = repo.state();
    assert_eq!(state["version"], 3);
    assert_eq!(state["status"], "passed");
    assert_eq!(state["exit_code"], 0);
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.task("a")["cost_micro_usd"], 250_000);
    assert_eq!(state["spent"]["iterations"], 2);
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert!(
        progress.contains("a: Task A — wrote a.txt; a.txt"),
        "{progress}"
    );
    assert!(
        r.stdout.contains("task") && r.stdout.contains("attempts"),
        "{r:?}"
    );
    // Passed attempts leave no worktree and no task branch behind.
    assert_eq!(repo.git(&["branch", "--list", "loopc/*"]), "", "{r:?}");
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn environment_protocol_and_prompt_on_stdin() {
    let repo = Test::repo();
    let out = repo.bin.join("seen");
    repo.script(
        "env-agent.sh",
        &format!(
            r#"#!/bin/sh
cat > "{out}.stdin"
env | grep '^LOOP_' | sort > "{out}.env"
pwd > "{out}.pwd"
echo x > x.txt
"#,
            out = out.display()
        ),
    );
    repo.plan(
        r#"
loop "envs" { }
budget { iterations = 3 }
agent bot { run = "sh @BIN@/env-agent.sh"  cost = $0.5  env = { FROM_AGENT = "1" } }
task t "The title" { agent = bot  prompt = "PROMPT-TEXT"  env = { FROM_TASK = "2" } }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let stdin = std::fs::read_to_string(format!("{}.stdin", out.display())).unwrap();
    assert!(stdin.starts_with("PROMPT-TEXT"), "{stdin}");
    assert!(
        stdin.contains("LOOP_HANDOFF"),
        "handoff instructions appended"
    );
    let env = std::fs::read_to_string(format!("{}.env", out.display())).unwrap();
    for needle in [
        "LOOP_TASK=t\n",
        "LOOP_TITLE=The title\n",
        "LOOP_ATTEMPT=1\n",
        "LOOP_COST_CAP_USD=0.5\n",
        "LOOP_WORKTREE=",
        "LOOP_PROMPT_FILE=",
        "LOOP_FEEDBACK_FILE=",
        "LOOP_PROGRESS_FILE=",
        "LOOP_HANDOFF=",
        "LOOP_BASE=",
    ] {
        assert!(env.contains(needle), "{needle} missing in\n{env}");
    }
    assert!(!env.contains("LOOP_DIFF_FILE"), "only gates get the diff");
    let pwd = std::fs::read_to_string(format!("{}.pwd", out.display())).unwrap();
    assert!(pwd.contains(".loopc/worktrees/t.r1-a1"), "{pwd}");
    // The prompt file holds the same prompt.
    let prompt = std::fs::read_to_string(repo.root.join(".loopc/logs/t/1/prompt.md")).unwrap();
    assert_eq!(prompt, stdin);
}

#[test]
fn shell_injection_in_title_runs_nothing() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    let marker = repo.bin.join("pwned");
    repo.plan(&format!(
        r#"
loop "inj" {{ }}
budget {{ iterations = 3 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
gate g = "test -n \"$LOOP_TITLE\""
task evil "$(touch {m}) `touch {m}`; touch {m}" {{ agent = bot  prompt = "$(touch {m})"  gates = [g] }}
"#,
        m = marker.display()
    ));
    repo.loopc(&["run"]).status(0).run();
    assert!(!marker.exists(), "a value was pasted into a shell command");
    let log = repo.git(&["log", "-1", "--format=%s", "loop/inj"]);
    assert!(log.starts_with("loop(evil): $(touch"), "{log}");
}

#[test]
fn command_tasks_need_no_agent() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "cmds" { parallel = 2 }
task gen { run = "echo generated > gen.txt" }
task check: gen { run = "grep -q generated gen.txt && echo ok > checked.txt" }
"#,
    );
    let r = repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/cmds", "checked.txt").unwrap(), "ok\n");
    assert_eq!(repo.state()["spent"]["iterations"], 0);
    // The work is on the integration branch: a passed run says how to
    // bring it onto the user's.
    assert!(
        r.stdout
            .contains("\nto bring the work onto your branch: git merge loop/cmds\n"),
        "{r:?}"
    );
    repo.git(&["merge", "-q", "loop/cmds"]);
    assert!(repo.root.join("checked.txt").exists());
    let msg = repo.git(&["log", "-1", "--format=%s", "loop/cmds"]);
    assert_eq!(msg, "loop(check): check");
    // Once merged, a rerun has nothing to bring over, and does not say so.
    let again = repo.loopc(&["run"]).status(0).run();
    assert!(
        !again.stdout.contains("to bring the work onto your branch"),
        "{again:?}"
    );
}

#[test]
fn progress_shows_non_ascii_file_names_as_they_are() {
    let repo = Test::repo();
    repo.plan("loop \"nm\" { }\ntask a { run = \"echo x > 'ü sp.txt'\" }\n");
    repo.loopc(&["run"]).status(0).run();
    let progress = std::fs::read_to_string(repo.root.join(".loopc/progress.md")).unwrap();
    assert!(progress.contains("ü sp.txt"), "{progress}");
    assert!(!progress.contains("\\303"), "{progress}");
}

#[test]
fn a_huge_parallel_runs_no_more_threads_than_tasks() {
    // `-j 100000` on two tasks once started a thread per slot and hung.
    let repo = Test::repo();
    repo.plan("task a { run = \"echo a > a1.txt\" }\ntask b: a { run = \"echo b > b1.txt\" }\n");
    repo.commit("plan");
    let r = repo.loopc(&["run", "-j", "100000", "plan.loop"]).output();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "passed");
}

#[test]
fn a_plan_without_tasks_passes_with_no_empty_table() {
    let repo = Test::repo();
    repo.plan("loop \"e\" { }\n");
    let head = repo.git(&["rev-parse", "--short=10", "HEAD"]);
    repo.loopc(&["run"])
        .status(0)
        .stdout(&format!(
            "run passed: 0/0 tasks passed, 0 agent attempts, $0, integration branch loop/e at \
             {head}\nbudget: iterations 0 of 20, failures in a row 0 of 3\n\
             report: loopc report -o .loopc/report.html\n"
        ))
        .run();
}
