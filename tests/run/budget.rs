//! Budget boundaries (spec §5 "Budgets are judged after a finished
//! attempt's result"): a pass on the last allowed attempt is a pass, the
//! attempt that reaches a budget keeps its result, an unknown cost under a
//! cost budget counts the agent's cap or stops the run naming the agent.
//! Every stop is exit 3 with the budget and what was spent in state.json,
//! on stderr and in `loopc status`.

use crate::harness::Test;

/// Fails attempts below `$PASS_AT` (by `LOOP_ATTEMPT`), then writes
/// `<task>.txt` with a handoff costing `$COST` (no `cost_usd` when COST is
/// empty).
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_ATTEMPT" -lt "${PASS_AT:-1}" ]; then exit 1; fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
if [ -n "$COST" ]; then
  printf '{"status":"completed","cost_usd":%s}' "$COST" > "$LOOP_HANDOFF"
fi
"#;

fn repo_with(plan: &str) -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", AGENT);
    repo.plan(plan);
    repo
}

#[test]
fn a_pass_on_the_last_allowed_attempt_and_iteration_is_a_pass() {
    // attempts = 3, iterations = 3, failures = 3: two failures then a pass
    // on the third attempt, which is also the last iteration.
    let repo = repo_with(
        r#"
loop "b" { }
budget { iterations = 3  failures = 3 }
agent bot { run = "sh @BIN@/agent.sh"  env = { PASS_AT = "3" } }
task a { agent = bot  prompt = "x"  attempts = 3 }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.task("a")["attempts"], 3);
    let s = repo.state();
    assert_eq!(s["spent"]["iterations"], 3);
    assert_eq!(s["stop_reason"], serde_json::Value::Null);
    assert_eq!(repo.show("loop/b", "a.txt").unwrap(), "made by a\n");
}

#[test]
fn the_attempt_that_spends_the_iterations_keeps_its_result_and_the_run_stops() {
    let repo = repo_with(
        r#"
loop "b" { }
budget { iterations = 1 }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
task b { agent = bot  prompt = "y" }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.show("loop/b", "a.txt").unwrap(), "made by a\n");
    assert_eq!(repo.status_of("b"), "pending");
    let s = repo.state();
    assert_eq!(s["status"], "stopped");
    assert_eq!(s["exit_code"], 3);
    assert_eq!(s["spent"]["iterations"], 1);
    assert_eq!(s["limits"]["iterations"], 1);
    let reason = "budget `iterations` spent: 1 of 1 agent attempt";
    assert_eq!(s["stop_reason"], reason);
    assert!(r.stderr.contains(reason), "{r:?}");
    let st = repo.loopc(&["status"]).status(0).run();
    assert!(st.stdout.contains(&format!("stopped: {reason}")), "{st:?}");
    assert!(
        st.stdout
            .contains("budget: iterations 1 of 1, failures in a row 0 of 3"),
        "{st:?}"
    );
}

#[test]
fn a_budget_spent_by_the_attempt_that_finished_the_plan_stops_nothing() {
    // The only task passes with a cost that cannot be read, and the one
    // that spends the whole cost budget: nothing is left that a stop would
    // keep from running, so the run passed (exit 0), as for iterations.
    for plan in [
        "loop \"b\" { }\nbudget { cost = $10 }\nagent mystery { run = \"sh @BIN@/agent.sh\" }\ntask a { agent = mystery  prompt = \"x\" }\n",
        "loop \"b\" { }\nbudget { cost = $0.05 }\nagent bot { run = \"sh @BIN@/agent.sh\"  env = { COST = \"0.06\" } }\ntask a { agent = bot  prompt = \"x\" }\n",
    ] {
        let repo = repo_with(plan);
        let r = repo.loopc(&["run"]).status(0).run();
        assert_eq!(repo.status_of("a"), "passed");
        let s = repo.state();
        assert_eq!(s["status"], "passed", "{r:?}");
        assert!(s["stop_reason"].is_null(), "{s}");
        assert!(!r.stdout.contains("stopped"), "{r:?}");
    }
}

#[test]
fn the_attempt_that_reaches_the_cost_budget_keeps_its_result() {
    let repo = repo_with(
        r#"
loop "b" { }
budget { cost = $0.05 }
agent bot { run = "sh @BIN@/agent.sh"  env = { COST = "0.06" } }
task a { agent = bot  prompt = "x" }
task b { agent = bot  prompt = "y" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "pending");
    let s = repo.state();
    assert_eq!(s["spent"]["cost_micro_usd"], 60_000);
    assert_eq!(s["limits"]["cost_micro_usd"], 50_000);
    let reason = s["stop_reason"].as_str().unwrap();
    assert!(
        reason.contains("budget `cost` spent: $0.06 of $0.05"),
        "{reason}"
    );
    let st = repo.loopc(&["status"]).run();
    assert!(st.stdout.contains("cost $0.06 of $0.05"), "{st:?}");
}

#[test]
fn an_unknown_cost_counts_the_agents_cap() {
    // No cost reported; the cap $0.50 is counted: after one attempt the
    // $0.10 left cannot pay for another at its cap, so the second task
    // does not start.
    let repo = repo_with(
        r#"
loop "b" { }
budget { cost = $0.60 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $0.50 }
task a { agent = bot  prompt = "x" }
task b: a { agent = bot  prompt = "y" }
task c: b { agent = bot  prompt = "z" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "pending");
    assert_eq!(repo.status_of("c"), "pending");
    let s = repo.state();
    assert_eq!(s["spent"]["cost_micro_usd"], 500_000);
    assert_eq!(repo.task("a")["cost_micro_usd"], 500_000);
    assert_eq!(repo.task("a")["cost_unknown"], false);
    assert_eq!(
        s["stop_reason"],
        "budget `cost`: $0.10 left of $0.60, less than agent `bot`'s per-attempt cap of $0.50",
        "{s}"
    );
}

#[test]
fn an_unknown_cost_without_a_cap_stops_the_run_naming_the_agent() {
    let repo = repo_with(
        r#"
loop "b" { }
budget { cost = $10 }
agent mystery { run = "sh @BIN@/agent.sh" }
task a { agent = mystery  prompt = "x" }
task b { agent = mystery  prompt = "y" }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    // The attempt keeps its result; nothing else starts.
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.show("loop/b", "a.txt").unwrap(), "made by a\n");
    assert_eq!(repo.status_of("b"), "pending");
    let a = repo.task("a");
    assert_eq!(a["cost_unknown"], true, "never counted as zero");
    let reason = repo.state()["stop_reason"].as_str().unwrap().to_string();
    assert!(reason.contains("agent `mystery`"), "{reason}");
    assert!(reason.contains("no `cost` cap"), "{reason}");
    assert!(r.stderr.contains("agent `mystery`"), "{r:?}");
    // The table says the cost is not known rather than $0.
    // `+?` in words, the first time it is printed.
    assert!(
        r.stdout.contains(
            "(some costs unknown, shown `+?`: an agent reported none and has no `cost` cap)"
        ),
        "{r:?}"
    );
    assert!(r.stdout.contains("budget: cost $0+? of $10"), "{r:?}");
}

#[test]
fn without_a_cost_budget_an_unknown_cost_does_not_stop_the_run() {
    let repo = repo_with(
        r#"
loop "b" { }
budget { iterations = 5 }
agent mystery { run = "sh @BIN@/agent.sh" }
task a { agent = mystery  prompt = "x" }
task b { agent = mystery  prompt = "y" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("b")["cost_unknown"], true);
}

#[test]
fn the_circuit_breaker_names_itself_and_the_failures() {
    let repo = repo_with(
        r#"
loop "b" { }
budget { failures = 2 }
agent bot { run = "sh @BIN@/agent.sh"  env = { PASS_AT = "9" } }
task a { agent = bot  prompt = "x"  attempts = 5 }
task b { agent = bot  prompt = "y"  attempts = 5 }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    let s = repo.state();
    assert_eq!(s["spent"]["consecutive_failures"], 2);
    let reason = "circuit breaker: 2 failed attempts in a row (budget `failures` = 2)";
    assert_eq!(s["stop_reason"], reason);
    assert!(r.stderr.contains(reason), "{r:?}");
}

#[test]
fn an_agent_gates_unknown_cost_counts_its_own_cap_or_stops_naming_it() {
    // The reviewer writes a verdict without a cost.
    let setup = |reviewer_cap: &str| {
        let repo = repo_with(&format!(
            r#"
loop "b" {{ }}
budget {{ cost = $5 }}
agent bot {{ run = "sh @BIN@/agent.sh"  env = {{ COST = "0.01" }}  cost = $3 }}
agent reviewer {{ run = "sh @BIN@/review.sh" {reviewer_cap} }}
gate review {{ agent = reviewer  prompt = "review" }}
task a {{ agent = bot  prompt = "x"  gates = [review] }}
task b: a {{ agent = bot  prompt = "y" }}
"#
        ));
        repo.script(
            "review.sh",
            "#!/bin/sh\ncat > /dev/null\nprintf '{\"status\":\"completed\"}' > \"$LOOP_HANDOFF\"\n",
        );
        repo
    };
    let capped = setup("cost = $0.25");
    capped.loopc(&["run"]).status(0).run();
    // $0.01 reported by bot for a, its reviewer's cap $0.25, $0.01 for b.
    assert_eq!(capped.task("a")["cost_micro_usd"], 260_000);
    assert_eq!(capped.state()["spent"]["cost_micro_usd"], 270_000);

    let uncapped = setup("");
    uncapped.loopc(&["run"]).status(3).run();
    let reason = uncapped.state()["stop_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("agent `reviewer`"), "{reason}");
    assert_eq!(uncapped.status_of("a"), "passed");
    assert_eq!(uncapped.status_of("b"), "pending");
}

#[test]
fn an_agent_gate_cut_off_by_ctrl_c_is_charged_its_cap() {
    // The reviewer never reports: interrupted while it runs, it costs its
    // $0.50 cap on top of the maker's reported $0.10, as a cut-off agent.
    let repo = repo_with(
        r#"
loop "b" { }
budget { cost = $10 }
agent bot { run = "sh @BIN@/agent.sh"  env = { COST = "0.10" }  cost = $3 }
agent slow { run = "sh @BIN@/slow.sh"  cost = $0.50 }
gate review { agent = slow  prompt = "review" }
task a { agent = bot  prompt = "x"  gates = [review] }
"#,
    );
    let started = repo.bin.join("started");
    repo.script(
        "slow.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\ntouch {}\nexec sleep 600\n",
            started.display()
        ),
    );
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(4000, || started.exists()),
        "the reviewer never started"
    );
    crate::harness::signal(run.id(), libc::SIGINT);
    assert_eq!(run.wait().unwrap().code(), Some(130));
    assert_eq!(
        repo.task("a")["cost_micro_usd"],
        600_000,
        "{}",
        repo.state()
    );
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 600_000);
}

#[test]
fn a_task_running_out_of_attempts_does_not_trip_the_default_breaker() {
    // Defaults: attempts 3, failures 3. `bad` fails three times; its
    // dependent is skipped and the independent `good` still runs (spec §5).
    let repo = repo_with(
        r#"
loop "b" { }
task bad { run = "exit 1" }
task after: bad { run = "echo > after" }
task good { run = "echo > good" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.task("bad")["status"], "failed");
    assert_eq!(repo.task("after")["status"], "skipped");
    assert_eq!(repo.task("good")["status"], "passed");
}

#[test]
fn failures_across_tasks_trip_the_breaker() {
    // Three tasks with one attempt each fail in a row: the breaker (3) stops
    // the run before the fourth starts.
    let repo = repo_with(
        r#"
loop "b" { }
task a { run = "exit 1"  attempts = 1 }
task b { run = "exit 1"  attempts = 1 }
task c { run = "exit 1"  attempts = 1 }
task d { run = "echo > d" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.task("d")["status"], "pending");
}

#[test]
fn a_negative_handoff_cost_is_an_invalid_handoff_and_an_unknown_cost() {
    let repo = repo_with(
        r#"
loop "b" { }
agent bot { run = "COST=-5 sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let a = repo.task("a");
    assert_eq!(a["status"], "failed");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("cost_usd (-5) is invalid"),
        "{a}"
    );
    assert_eq!(a["cost_unknown"], true, "{a}");
    let fb =
        std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/feedback.md")).unwrap_or_default();
    let events = std::fs::read_to_string(repo.root.join(".loopc/events.jsonl")).unwrap();
    assert!(
        fb.contains("cost_usd (-5) is invalid") || events.contains("cost_usd (-5) is invalid"),
        "{fb}"
    );
}
