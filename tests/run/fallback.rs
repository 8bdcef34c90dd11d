//! Usage limits beyond the first wait: an agent's `fallback` that takes the
//! attempt instead of waiting, and a wait that survives Ctrl-C (the rerun
//! waits out the rest of it rather than starting an attempt at once).

use crate::harness::Test;
use serde_json::Value;

/// Writes `plan.loop` with `@FIX@` replaced by the fixture agents' directory.
fn plan(repo: &Test, text: &str) {
    let fix = format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"));
    repo.plan(&text.replace("@FIX@", &fix));
}

fn events(repo: &Test, kind: &str) -> Vec<Value> {
    repo.events()
        .into_iter()
        .filter(|e| e["event"] == kind)
        .collect()
}

#[test]
fn a_limited_agents_fallback_takes_the_attempt_instead_of_waiting() {
    let repo = Test::repo();
    // Claude is limited for an hour; with `wait = 1s`, waiting would stop
    // the run (exit 3). Its fallback, codex, does the work instead, with
    // its own environment (claude's FIXTURE_MODE does not reach it).
    plan(
        &repo,
        r#"
loop "fb" { }
budget { iterations = 5  wait = 1s }
agent claude {
  run = "sh @FIX@/claude -p --output-format json"
  output = claude-json
  fallback = codex
  env = { FIXTURE_MODE = "rate_limited" }
}
agent codex { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $1 }
task t { agent = claude  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).status(0).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "passed", "{t}");
    assert_eq!(t["attempts"], 1, "{t}");
    assert_eq!(t["history"][0]["outcome"], "limited", "{t}");
    assert!(t["history"][0].get("fallback").is_none(), "{t}");
    assert_eq!(t["history"][1]["outcome"], "passed", "{t}");
    assert_eq!(t["history"][1]["fallback"], "codex", "{t}");
    let started = events(&repo, "attempt_started");
    assert!(started[0].get("fallback").is_none(), "{started:?}");
    assert_eq!(started[1]["fallback"], "codex", "{started:?}");
    let waits = events(&repo, "waiting");
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(waits[0]["fallback"], "codex");
    assert_eq!(waits[0]["wait_ms"], 0);
    assert!(
        r.stderr.contains("`codex` takes the next attempt"),
        "{}",
        r.stderr
    );
    assert_eq!(
        repo.show("loop/fb", "codex.txt").as_deref(),
        Some("written by the codex fixture\n")
    );
}

#[test]
fn ctrl_c_during_a_wait_ends_the_run_and_the_rerun_waits_out_the_rest() {
    let repo = Test::repo();
    let resets = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let text = |budget: &str| {
        format!(
            r#"
loop "rw" {{ }}
budget {{ iterations = 5 {budget} }}
agent claude {{
  run = "echo run >> @BIN@/runs; sh @FIX@/claude -p --output-format json"
  output = claude-json
  env = {{ FIXTURE_MODE = "rate_limited"  FIXTURE_RESETS_AT = "{resets}" }}
}}
task t {{ agent = claude  prompt = "x" }}
"#
        )
    };
    plan(&repo, &text(""));
    let runs = || {
        std::fs::read_to_string(repo.bin.join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let mut first = repo.loopc(&["run"]).spawn();
    let events_file = repo.root.join(".loopc/events.jsonl");
    assert!(repo.wait_for(4000, || {
        std::fs::read_to_string(&events_file).is_ok_and(|t| t.contains(r#""event":"waiting""#))
    }));
    crate::harness::signal(first.id(), libc::SIGINT);
    assert_eq!(first.wait().unwrap().code(), Some(130));
    let t = repo.task("t");
    assert_eq!(t["status"], "pending", "{t}");
    assert_eq!(t["waiting_for"], "claude", "{t}");
    assert!(t["waiting_until"].is_string(), "{t}");
    assert_eq!(runs(), 1);

    // The rerun knows the limit: it waits for the rest of the hour (here
    // over its `wait` budget, so it stops) and starts no attempt; its dry
    // run says so.
    plan(&repo, &text("wait = 1s"));
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(
        dry.stdout.starts_with(&format!(
            "t: run (first waits for claude's usage limit, which resets {} (the last run was \
             waiting for it))\n",
            loopc::run::engine::agent::limits::clock(resets)
        )),
        "{dry:?}"
    );
    let r = repo.loopc(&["run"]).status(3).run();
    assert_eq!(runs(), 1, "the rerun started an attempt: {}", r.stderr);
    let state = repo.state();
    let reason = state["stop_reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("budget `wait` would be spent: waiting for claude's usage limit (resets "),
        "{reason}"
    );
    let waits = events(&repo, "waiting");
    let last = waits.last().unwrap();
    assert_eq!(last["message"], "the last run was waiting for this limit");
}

/// A fallback the `cost` budget cannot pay for at its cap takes no
/// attempt: the run stops, and the task's reason does not say it took one.
#[test]
fn a_fallback_the_budget_cannot_pay_for_is_said_not_to_have_started() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "fb" { }
budget { cost = $1  wait = 1s }
agent claude {
  run = "sh @FIX@/claude -p --output-format json"
  output = claude-json
  cost = $0.50
  fallback = codex
  env = { FIXTURE_MODE = "rate_limited" }
}
agent codex { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $2 }
task t { agent = claude  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    let reason = repo.task("t")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.ends_with(
            "`codex` was to take the next attempt; not started: budget `cost`: $1 left of $1, \
             less than agent `codex`'s per-attempt cap of $2"
        ),
        "{reason}"
    );
    assert!(reason.starts_with("claude's usage limit: "), "{reason}");
}
