//! Real agents' output: fixture agents (`tests/fixtures/agents/`) that
//! print exactly what `claude -p` and `codex exec --json` print, run
//! through `loopc run`: the result, its errors, what is recorded per
//! attempt, and what the terminal says.

use crate::harness::Test;
use serde_json::Value;

/// The fixture agents' directory.
fn fixtures() -> String {
    format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"))
}

/// Writes `plan.loop` with `@FIX@` replaced by the fixture agents' directory.
fn plan(repo: &Test, text: &str) {
    repo.plan(&text.replace("@FIX@", &fixtures()));
}

/// The `attempt_finished` events of `task`.
fn finished(repo: &Test, task: &str) -> Vec<Value> {
    repo.events()
        .into_iter()
        .filter(|e| e["event"] == "attempt_finished" && e["task"] == task)
        .collect()
}

#[test]
fn claude_json_in_each_of_its_three_shapes_is_read_and_recorded() {
    for (name, args) in [
        ("single", "--output-format json"),
        ("verbose", "--output-format json --verbose"),
        ("stream", "--output-format stream-json --verbose"),
    ] {
        let repo = Test::repo();
        plan(
            &repo,
            &format!(
                r#"
loop "cj" {{ }}
budget {{ cost = $5 }}
agent claude {{ run = "sh @FIX@/claude -p {args}"  output = claude-json }}
task t {{ agent = claude  prompt = "write it" }}
"#
            ),
        );
        repo.loopc(&["run"]).status(0).run();
        let t = repo.task("t");
        assert_eq!(t["cost_micro_usd"], 42_100, "{name}");
        assert_eq!(t["summary"], "Wrote claude.txt", "{name}");
        let agent = &t["history"][0]["agent"];
        assert_eq!(agent["session_id"], "5620625c-b4c7-4185-9b2b-8de430dd2184");
        assert_eq!(agent["num_turns"], 3);
        assert_eq!(agent["cost_micro_usd"], 42_100);
        assert_eq!(agent["model"], "claude-sonnet-4-5-20250929");
        assert_eq!(agent["usage"]["input_tokens"], 12);
        assert_eq!(agent["usage"]["output_tokens"], 160);
        assert_eq!(agent["usage"]["cache_read_input_tokens"], 3400);
        assert_eq!(agent["usage"]["cache_creation_input_tokens"], 1200);
        assert_eq!(t["history"][0]["outcome"], "passed");
        let ev = finished(&repo, "t");
        assert_eq!(ev.len(), 1);
        assert_eq!(&ev[0]["agent"], agent, "{name}");
    }
}

#[test]
fn claude_error_results_fail_the_attempt_whatever_the_exit_status() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "cje" { parallel = 4 }
budget { cost = $5  failures = 20 }
agent turns { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "max_turns" } }
agent exec  { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  env = { FIXTURE_MODE = "during_execution"  FIXTURE_EXIT = "1" } }
agent api   { run = "sh @FIX@/claude -p --output-format stream-json --verbose"  output = claude-json  env = { FIXTURE_MODE = "api_error" } }
task a { agent = turns  prompt = "x"  attempts = 2 }
task b { agent = exec   prompt = "x"  attempts = 1 }
task c { agent = api    prompt = "x"  attempts = 1 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    // error_max_turns with is_error false and exit 0: failed, twice.
    let a = repo.task("a");
    assert_eq!(a["status"], "failed");
    assert_eq!(a["attempts"], 2);
    assert_eq!(
        a["history"][0]["reason"],
        "the agent reported error_max_turns: Reached maximum number of turns (3)"
    );
    assert_eq!(a["history"][0]["agent"]["error"], "error_max_turns");
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/a/2/feedback.md")).unwrap();
    assert_eq!(
        fb,
        "The previous attempt's agent reported an error (error_max_turns, exit status 0):\n\
         Reached maximum number of turns (3)"
    );
    // The cost of a failed result still counts.
    assert_eq!(a["cost_micro_usd"], 84_200);
    // error_during_execution, exit 1: the subtype and errors, not only the status.
    let b = repo.task("b");
    assert_eq!(b["status"], "failed");
    assert_eq!(
        b["history"][0]["reason"],
        "the agent reported error_during_execution: Tool execution failed: Bash exited with \
         an internal error (exit status 1)"
    );
    // An API error: is_error on a success result, with its HTTP status.
    let c = repo.task("c");
    assert_eq!(c["status"], "failed");
    let reason = c["history"][0]["reason"].as_str().unwrap();
    // What failed, not "success".
    assert!(
        reason.starts_with("the agent reported an API error: API Error: 500"),
        "{reason}"
    );
    assert_eq!(c["history"][0]["agent"]["error"], "api_error");
    assert_eq!(c["history"][0]["agent"]["api_error_status"], 500);
    // The terminal names them too.
    assert!(
        r.stderr
            .contains("a attempt 1: failed: the agent reported error_max_turns: Reached maximum number of turns (3)"),
        "{}",
        r.stderr
    );
}

#[test]
fn claude_older_cost_name_is_read() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "old" { }
budget { cost = $5 }
agent claude { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "old_cost" } }
task t { agent = claude  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("t")["cost_micro_usd"], 42_100);
}

#[test]
fn a_verbose_array_larger_than_16_mib_still_gives_its_cost() {
    for args in [
        "--output-format json --verbose",
        "--output-format stream-json --verbose",
    ] {
        let repo = Test::repo();
        plan(
            &repo,
            &format!(
                r#"
loop "huge" {{ }}
budget {{ cost = $5 }}
agent claude {{ run = "sh @FIX@/claude -p {args}"  output = claude-json  env = {{ FIXTURE_MODE = "huge" }} }}
task t {{ agent = claude  prompt = "x" }}
"#
            ),
        );
        repo.loopc(&["run"]).status(0).run();
        let size = std::fs::metadata(repo.root.join(".loopc/logs/t/1/agent.stdout"))
            .unwrap()
            .len();
        assert!(size > 17 * 1024 * 1024, "{size}");
        let t = repo.task("t");
        assert_eq!(t["cost_micro_usd"], 42_100, "{args}");
        assert_eq!(t["summary"], "Wrote claude.txt");
    }
}

#[test]
fn a_one_line_verbose_array_over_64_mib_is_read_to_its_result() {
    // Claude Code's `--verbose` array on one line, over 64 MiB: the log is
    // cut to its first and last 32 MiB, and the result at its end decides.
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "cut" { parallel = 2 }
budget { cost = $5 }
agent ok    { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  env = { FIXTURE_PAD_MIB = "70" } }
agent turns { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  env = { FIXTURE_PAD_MIB = "70"  FIXTURE_MODE = "max_turns" } }
task good { agent = ok     prompt = "x" }
task bad  { agent = turns  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    for task in ["good", "bad"] {
        let log = repo.root.join(format!(".loopc/logs/{task}/1/agent.stdout"));
        let size = std::fs::metadata(&log).unwrap().len();
        assert!(size < 65 * 1024 * 1024, "{task}: not cut: {size}");
    }
    let bad = repo.task("bad");
    assert_eq!(bad["status"], "failed");
    assert_eq!(
        bad["history"][0]["reason"],
        "the agent reported error_max_turns: Reached maximum number of turns (3)"
    );
    assert_eq!(bad["history"][0]["agent"]["error"], "error_max_turns");
    assert_eq!(bad["cost_micro_usd"], 42_100);
    let good = repo.task("good");
    assert_eq!(good["status"], "passed");
    assert_eq!(good["cost_micro_usd"], 42_100);
    assert_eq!(good["summary"], "Wrote claude.txt");
    let agent = &good["history"][0]["agent"];
    assert_eq!(agent["num_turns"], 3);
    assert_eq!(agent["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(agent["usage"]["output_tokens"], 160);
}

#[test]
fn codex_json_summary_tokens_and_failed_turns() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "cx" { parallel = 3 }
budget { cost = $5  failures = 20 }
agent codex  { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $0.50 }
agent broken { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $0.10  env = { FIXTURE_MODE = "turn_failed"  FIXTURE_EXIT = "1" } }
agent denied { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $0.25  env = { FIXTURE_MODE = "error" } }
task ok { agent = codex   prompt = "x" }
task tf { agent = broken  prompt = "x"  attempts = 1 }
task er { agent = denied  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let ok = repo.task("ok");
    assert_eq!(ok["status"], "passed");
    assert_eq!(ok["summary"], "Wrote codex.txt with a greeting.");
    // Codex reports no cost: the cap is counted.
    assert_eq!(ok["cost_micro_usd"], 500_000);
    let agent = &ok["history"][0]["agent"];
    assert_eq!(agent["session_id"], "0199a213-81c0-7800-8aa1-bbab2a035a53");
    assert_eq!(agent["usage"]["input_tokens"], 24_763);
    assert_eq!(agent["usage"]["cached_input_tokens"], 24_448);
    assert_eq!(agent["usage"]["output_tokens"], 122);
    assert_eq!(agent["num_turns"], 1);
    assert!(agent.get("cost_micro_usd").is_none(), "{agent}");
    let tf = repo.task("tf");
    assert_eq!(tf["status"], "failed");
    assert_eq!(
        tf["history"][0]["reason"],
        "the agent reported turn.failed: stream error: unexpected status 500 Internal Server \
         Error (exit status 1)"
    );
    // A refused login: no retry can fix it.
    let er = repo.task("er");
    assert_eq!(er["status"], "blocked");
    assert_eq!(
        er["history"][0]["reason"],
        "the agent cannot authenticate: unexpected status 401 Unauthorized"
    );
    assert_eq!(er["cost_micro_usd"], 250_000);
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 850_000);
}

#[test]
fn an_agent_gate_with_an_error_result_rejects() {
    let repo = Test::repo();
    repo.script("work.sh", "#!/bin/sh\ncat >/dev/null\necho x > x.txt\n");
    plan(
        &repo,
        r#"
loop "g" { }
budget { cost = $5 }
agent bot { run = "sh @BIN@/work.sh"  cost = $0.01 }
agent reviewer { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "max_turns"  FIXTURE_FILE = "/dev/null" } }
gate review { agent = reviewer  prompt = "review" }
task t { agent = bot  prompt = "x"  gates = [review]  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    assert_eq!(
        t["history"][0]["reason"],
        "gate `review`'s agent reported error_max_turns: Reached maximum number of turns (3)"
    );
    // The gate's cost is counted (with the agent's cap).
    assert_eq!(t["cost_micro_usd"], 52_100);
}

#[test]
fn a_missing_program_stops_the_run_before_any_work() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "ff" { setup = "true" }
budget { iterations = 10 }
agent claude { run = "claud -p --output-format json"  output = claude-json }
agent ok { run = "sh @FIX@/claude -p" }
gate lint = "rufff check ."
task a { agent = claude  prompt = "x" }
task b { agent = ok  prompt = "x"  gates = [lint] }
task c { run = "true" }
"#,
    );
    let r = repo.loopc(&["run"]).status(2).run();
    assert!(
        r.stderr.contains(
            "error: plan.loop:4:22: agent `claude` (task `a`): `claud` is not a command the shell \
             can find (run = \"claud -p --output-format json\"); nothing was run"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("plan.loop:6:13: gate `lint` (task `b`): `rufff` is not a command"),
        "{}",
        r.stderr
    );
    // Nothing ran: no state, no events, no worktree.
    assert!(!repo.root.join(".loopc/state.json").exists());
    assert!(!repo.root.join(".loopc/events.jsonl").exists());
    assert!(repo.extra_worktrees().is_empty());
}

#[test]
fn an_agent_that_exits_127_blocks_its_task_at_once() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "nf" { }
budget { iterations = 10 }
agent wrapped { run = "sh -c 'cat >/dev/null; claud -p'" }
task t { agent = wrapped  prompt = "x"  attempts = 3 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "blocked");
    assert_eq!(t["attempts"], 1);
    let reason = t["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the agent's command could not run (exit status 127): ")
            && reason.contains("claud: not found"),
        "{reason}"
    );
    assert!(r.stderr.contains("claud: not found"), "{}", r.stderr);
}

/// An agent read as Claude Code's or Codex's JSON that prints plain text
/// (its `run` lacks `--output-format json` or `--json`) is blocked at once,
/// saying so: its cost, summary and errors would be unknown, and no retry
/// changes that (before, it passed silently).
#[test]
fn an_agent_whose_output_has_no_result_is_blocked_saying_why() {
    for (output, expected) in [
        (
            "claude-json",
            "has no result (`claude -p --output-format json`",
        ),
        ("codex-json", "has no finished turn (`codex exec --json`)"),
    ] {
        let repo = Test::repo();
        repo.script(
            "plain.sh",
            "cat > /dev/null\necho made > made.txt\necho 'Wrote the file.'\n",
        );
        repo.plan(&format!(
            "budget {{ iterations = 10 }}\n\
             agent bot {{ run = \"sh @BIN@/plain.sh\"  output = {output} }}\n\
             task t {{ agent = bot  prompt = \"x\"  attempts = 3 }}\n"
        ));
        repo.loopc(&["run"]).status(1).run();
        let t = repo.task("t");
        assert_eq!(t["status"], "blocked", "{output}: {t}");
        assert_eq!(t["attempts"], 1, "{output}: {t}");
        let reason = t["reason"].as_str().unwrap();
        assert!(
            reason.contains(expected) && reason.contains(&format!("`output = {output}`")),
            "{output}: {reason}"
        );
        // Remembered: a rerun of the unchanged plan does not pay for it again.
        let r = repo.loopc(&["run"]).status(1).run();
        assert_eq!(
            repo.task("t")["history"].as_array().map_or(0, Vec::len),
            0,
            "{output}: {r:?}"
        );
        assert!(
            r.stdout.contains("not run: blocked with this key"),
            "{output}: {r:?}"
        );
    }
}

/// Whether `bwrap` can make a sandbox here (it needs user namespaces).
fn bwrap_works() -> Result<(), String> {
    crate::harness::program_runs("bwrap", &["--ro-bind", "/", "/", "--dev", "/dev", "true"])
}

#[test]
fn sandboxed_agents_and_gates_can_report() {
    if !crate::harness::require("bwrap", bwrap_works()) {
        return;
    }
    let repo = Test::repo();
    // Everything read-only but the worktree: what a workspace-write
    // sandbox allows.
    let sandbox = r#"bwrap --ro-bind / / --dev /dev --bind \"$LOOP_WORKTREE\" \"$LOOP_WORKTREE\""#;
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
set -e
cat > /dev/null
test -s "$LOOP_PROMPT_FILE"
tmp=$(mktemp)
echo scratch > "$tmp"
if echo x > "$LOOP_WORKTREE/../outside.txt" 2>/dev/null; then echo "the sandbox lets me write outside" >&2; exit 3; fi
echo sandboxed > work.txt
printf '{"status":"completed","summary":"wrote work.txt in a sandbox (tmp %s)"}' "$tmp" > "$LOOP_HANDOFF"
"#,
    );
    repo.script(
        "review.sh",
        r#"#!/bin/sh
set -e
cat > /dev/null
grep -q sandboxed "$LOOP_DIFF_FILE"
mktemp > /dev/null
printf '{"status":"completed","summary":"the diff adds work.txt"}' > "$LOOP_HANDOFF"
"#,
    );
    plan(
        &repo,
        &format!(
            r#"
loop "sb" {{ }}
budget {{ iterations = 4 }}
agent boxed {{ run = "{sandbox} sh @BIN@/agent.sh" }}
agent reviewer {{ run = "{sandbox} sh @BIN@/review.sh" }}
gate review {{ agent = reviewer  prompt = "review the diff" }}
task t {{ agent = boxed  prompt = "write work.txt"  gates = [review]  attempts = 1 }}
"#
        ),
    );
    repo.loopc(&["run"]).status(0).run();
    let t = repo.task("t");
    let summary = t["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("wrote work.txt in a sandbox (tmp "),
        "{summary}"
    );
    // TMPDIR is the attempt's own, inside the worktree.
    assert!(
        summary.contains("/.loopc/worktrees/t.r1-a1/.loopc/attempt/tmp/"),
        "{summary}"
    );
    assert_eq!(repo.show("loop/sb", "work.txt").unwrap(), "sandboxed\n");
    // Nothing of loopc's files was committed.
    let files = repo.git(&["ls-tree", "-r", "--name-only", "loop/sb"]);
    assert_eq!(files, "README\nwork.txt", "{files}");
    // The logs hold copies of what the agent and the gate wrote.
    let logs = repo.root.join(".loopc/logs/t/1");
    for f in [
        "prompt.md",
        "feedback.md",
        "handoff.json",
        "diff.patch",
        "gate-review.prompt.md",
        "gate-review.handoff.json",
    ] {
        assert!(logs.join(f).is_file(), "{f} is not in the logs");
    }
    let verdict = std::fs::read_to_string(logs.join("gate-review.handoff.json")).unwrap();
    assert!(verdict.contains("the diff adds work.txt"), "{verdict}");
}

#[test]
fn a_usage_limit_is_waited_for_not_counted() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "lim" { parallel = 2 }
budget { iterations = 2  failures = 1  cost = $5  wait = 1m }
agent claude { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json }
task a { agent = claude  prompt = "x"  attempts = 1  env = { FIXTURE_LIMIT_ONCE = "@BIN@/a.limited"  FIXTURE_FILE = "a.txt" } }
task b { agent = claude  prompt = "x"  attempts = 1  env = { FIXTURE_LIMIT_ONCE = "@BIN@/b.limited"  FIXTURE_FILE = "b.txt" } }
"#,
    );
    // Two limited tasks trip neither the circuit breaker (failures = 1),
    // nor `attempts` (1 each), nor `iterations` (2 in all).
    let r = repo.loopc(&["run"]).status(0).run();
    for name in ["a", "b"] {
        let t = repo.task(name);
        assert_eq!(t["status"], "passed", "{name}");
        assert_eq!(t["attempts"], 1, "{name}");
        assert_eq!(t["history"][0]["outcome"], "limited", "{name}: {t}");
        assert_eq!(t["history"][1]["outcome"], "passed", "{name}: {t}");
        assert!(t.get("waiting_until").is_none(), "{t}");
    }
    let state = repo.state();
    assert_eq!(state["spent"]["iterations"], 2);
    assert!(state["spent"]["waited_ms"].as_u64().unwrap() >= 1000);
    assert_eq!(state["limits"]["wait_ms"], 60_000);
    let waits: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "waiting")
        .collect();
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert_eq!(waits[0]["agent"], "claude");
    assert!(
        r.stderr
            .contains("waiting for claude's usage limit: resets ")
            && r.stderr.contains(", in "),
        "{}",
        r.stderr
    );
}

#[test]
fn waiting_is_bounded_by_the_wait_budget() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "lw" { }
budget { iterations = 5  wait = 1s }
agent codex { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $1  env = { FIXTURE_MODE = "usage_limit" } }
task t { agent = codex  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(3).run();
    let state = repo.state();
    let reason = state["stop_reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("budget `wait` would be spent: waiting for codex's usage limit (resets "),
        "{reason}"
    );
    // The budget line says the budget that stopped it.
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("budget: "))
        .unwrap_or("");
    assert!(
        line == "budget: iterations 0 of 5, wait 0ms of 1.0s, failures in a row 0 of 3",
        "{line:?} in {}",
        r.stdout
    );
    let t = repo.task("t");
    assert_eq!(t["attempts"], 0);
    assert_eq!(t["history"][0]["outcome"], "limited");
    assert_eq!(state["spent"]["iterations"], 0);
    // A refused request did no work: the agent's `cost` cap is not charged.
    assert_eq!(state["spent"]["cost_micro_usd"], 0);
    assert_eq!(t["cost_micro_usd"], 0);
    assert_eq!(t["cost_unknown"], false);
}

#[test]
fn a_wait_that_outlasts_a_budget_leaves_that_task_and_the_other_work_goes_on() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "lp" { parallel = 1 }
budget { iterations = 5  wait = 1s }
agent codex { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $1  env = { FIXTURE_MODE = "usage_limit" } }
task t { agent = codex  prompt = "x" }
task later: t { run = "echo later > later.txt" }
task other { run = "echo other > other.txt" }
"#,
    );
    // `t` is limited first (topological order, one at a time); its wait
    // would pass the `wait` budget, so it is left for the next run, and
    // `other`, which no limit holds up, still runs. Then the run stops
    // for that budget (exit 3), naming it.
    repo.loopc(&["run"]).status(3).run();
    assert_eq!(repo.status_of("other"), "passed");
    assert_eq!(
        repo.show("loop/lp", "other.txt").as_deref(),
        Some("other\n")
    );
    assert_eq!(repo.status_of("t"), "pending");
    assert_eq!(repo.status_of("later"), "pending");
    let state = repo.state();
    let reason = state["stop_reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("budget `wait` would be spent: waiting for codex's usage limit (resets "),
        "{reason}"
    );
    let t = repo.task("t");
    let why = t["reason"].as_str().unwrap();
    assert!(why.ends_with(": left for the next run"), "{t}");
    // The limit is said once; the budget says how much waiting it would be.
    assert!(
        why.starts_with("waiting for codex's usage limit: resets "),
        "{why}"
    );
    assert_eq!(why.matches("usage limit").count(), 1, "{why}");
    assert!(why.contains("; budget `wait` would be spent ("), "{why}");
    // Not waited in this run: its event says so.
    let waiting = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "waiting" && e["task"] == "t")
        .expect("a waiting event");
    assert_eq!(waiting["wait_ms"], 0, "{waiting}");
    // The next run is told when the limit resets.
    assert!(t["waiting_until"].is_string(), "{t}");
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(dry.contains("codex's usage limit"), "{dry}");
    // Given another agent, the task no longer waits for codex's limit.
    let text = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    std::fs::write(
        repo.root.join("plan.loop"),
        text.replace(
            "task t { agent = codex  prompt = \"x\" }",
            "agent other { run = \"sh -c 'cat >/dev/null; echo t > t.txt'\" }\ntask t { agent = other  prompt = \"x\" }",
        ),
    )
    .unwrap();
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(!dry.contains("usage limit"), "{dry}");
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("t"), "passed");
}

#[test]
fn loopc_logs_prints_an_attempts_files() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        r#"#!/bin/sh
cat > /dev/null
echo "agent says hello on attempt $LOOP_ATTEMPT"
echo "and warns" >&2
if [ "$LOOP_ATTEMPT" = 1 ]; then exit 1; fi
echo done > done.txt
"#,
    );
    plan(
        &repo,
        r#"
loop "lg" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "say hello" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    // A full disk is an error (exit 2 naming what could not be printed);
    // a closed pipe is a normal end.
    let full = repo.shell("\"$LOOPC\" logs t > /dev/full");
    assert_eq!(full.status, 2, "{full:?}");
    assert!(full.stderr.contains("error: cannot print "), "{full:?}");
    let last = repo.loopc(&["logs", "t"]).status(0).run();
    assert!(
        last.stdout
            .contains("/.loopc/logs/t/2/prompt.md <==\nsay hello"),
        "{}",
        last.stdout
    );
    assert!(
        last.stdout
            .contains("/.loopc/logs/t/2/agent.stdout <==\nagent says hello on attempt 2\n"),
        "{}",
        last.stdout
    );
    assert!(last.stdout.contains("and warns"), "{}", last.stdout);
    // The prompt comes first, then the feedback, then the agent's output.
    let (p, f, o) = (
        last.stdout.find("prompt.md <==").unwrap(),
        last.stdout.find("feedback.md <==").unwrap(),
        last.stdout.find("agent.stdout <==").unwrap(),
    );
    assert!(p < f && f < o, "{}", last.stdout);
    let first = repo
        .loopc(&["logs", "t", "--attempt", "1", "--follow"])
        .status(0)
        .run();
    assert!(
        first.stdout.contains("agent says hello on attempt 1"),
        "{}",
        first.stdout
    );
    let none = repo.loopc(&["logs", "t", "--attempt", "3"]).status(2).run();
    assert!(
        none.stderr
            .contains("error: no logs of attempt 3 of task `t` in this run ("),
        "{}",
        none.stderr
    );
    repo.loopc(&["logs", "tt"])
        .stderr("error: the last run has no task `tt`; did you mean `t`? (its tasks: t)\n")
        .status(2)
        .run();
    // Before any run: say so.
    Test::repo()
        .loopc(&["logs", "t"])
        .stderr("error: there is no run yet, so no logs: `loopc run` first\n")
        .status(2)
        .run();

    // A rerun replays `t` from the cache and has no logs of it: `loopc
    // logs` shows the earlier run's and says where they are.
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.task("t")["status"], "cached");
    let cached = repo.loopc(&["logs", "t"]).status(0).run();
    assert!(
        cached.stdout.contains(
            "/.loopc/earlier-logs/1/t/2/agent.stdout <==\nagent says hello on attempt 2\n"
        ),
        "{}",
        cached.stdout
    );
    assert!(
        cached
            .stderr
            .contains("note: the last run replayed task `t` from the cache; these are the logs of the earlier run whose attempt made that result")
            && cached.stderr.contains("/.loopc/earlier-logs/1"),
        "{}",
        cached.stderr
    );
}

#[test]
fn the_logs_of_a_replayed_task_are_those_of_the_run_that_made_its_result() {
    // Run 1 makes `t`'s result with prompt one, run 2 another with prompt
    // two, run 3 (prompt one again) replays run 1's: its logs are shown,
    // not run 2's, the latest.
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\necho \"prompt: $(cat)\"\necho \"$LOOP_RUN\" > t.txt\ndate +%N >> t.txt\n",
    );
    let with_prompt = |p: &str| {
        plan(
            &repo,
            &format!(
                "loop \"rl\" {{ }}\nbudget {{ iterations = 5 }}\nagent bot {{ run = \"sh @BIN@/agent.sh\" }}\ntask t {{ agent = bot  prompt = \"{p}\" }}\n"
            ),
        );
        repo.loopc(&["run"]).status(0).run();
    };
    with_prompt("one");
    with_prompt("two");
    with_prompt("one");
    assert_eq!(repo.task("t")["status"], "cached");
    let r = repo.loopc(&["logs", "t"]).status(0).run();
    assert!(r.stdout.contains("prompt: one"), "{r:?}");
    assert!(r.stdout.contains("/.loopc/earlier-logs/1/t/1/"), "{r:?}");
    assert!(
        r.stderr
            .contains("note: the last run replayed task `t` from the cache"),
        "{r:?}"
    );
}

#[test]
fn a_failing_agents_last_stderr_line_is_in_the_reason() {
    let repo = Test::repo();
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'error: cannot reach the model API: connection refused' >&2\nexit 2\n",
    );
    plan(
        &repo,
        r#"
loop "se" { }
budget { iterations = 3 }
agent bot { run = "sh @BIN@/agent.sh" }
task t { agent = bot  prompt = "x"  attempts = 1 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    let reason = repo.task("t")["history"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        reason,
        "the agent failed (exit status 2): error: cannot reach the model API: connection refused"
    );
    assert!(r.stdout.contains("cannot reach the model API"), "{r:?}");
}
