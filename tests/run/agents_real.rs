//! Claude Code and Codex as users recorded them (issue 28): every
//! usage-limit wording waits, a reset time is read in the zone it names and
//! with its date, error results say what failed, a login no retry can fix
//! blocks the task, refused tool calls reach the next attempt, the agent's
//! own cost cap is named, Codex's stream retries fail no turn and its older
//! `{"id","msg"}` shape is read. The fixture agents print the recorded
//! output (tests/fixtures/agents/README.md).

use crate::harness::Test;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::Value;

fn fixtures() -> String {
    format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"))
}

fn plan(repo: &Test, text: &str) {
    repo.plan(&text.replace("@FIX@", &fixtures()));
}

/// The next `hour`:00 in `zone` after `now`.
fn next_in(zone: &str, hour: i8, now: Timestamp) -> Timestamp {
    let tz = TimeZone::get(zone).unwrap();
    let here = now.to_zoned_datetime(tz.clone());
    let at = |d: jiff::civil::Date| {
        d.to_datetime(jiff::civil::Time::new(hour, 0, 0, 0).unwrap())
            .to_zoned_datetime(tz.clone())
            .unwrap()
            .timestamp()
    };
    let today = at(here.date());
    if today > now {
        today
    } else {
        at(here.date().tomorrow().unwrap())
    }
}

#[test]
fn every_claude_limit_wording_is_a_wait_not_a_failure() {
    let repo = Test::repo();
    let mut text = String::from(
        "loop \"lw\" { parallel = 4 }\nbudget { iterations = 8  failures = 1  wait = 1s }\n",
    );
    let wordings = [
        "Weekly limit reached ∙ resets 5am",
        "5-hour limit reached ∙ resets 2am",
        "You've hit your session limit · resets 1:40pm",
        "You're out of extra usage · resets 9pm",
    ];
    for (i, w) in wordings.iter().enumerate() {
        text.push_str(&format!(
            "agent a{i} {{ run = \"sh @FIX@/claude -p --output-format stream-json --verbose\"  output = claude-json  env = {{ FIXTURE_MODE = \"limit_text\"  FIXTURE_LIMIT_TEXT = \"{w}\" }} }}\n\
             task t{i} {{ agent = a{i}  prompt = \"x\" }}\n"
        ));
    }
    plan(&repo, &text);
    // Each waits (beyond the 1s `wait` budget: left for the next run),
    // none fails: `failures = 1` would have stopped the run.
    repo.loopc(&["run"]).status(3).run();
    for (i, w) in wordings.iter().enumerate() {
        let t = repo.task(&format!("t{i}"));
        assert_eq!(t["history"][0]["outcome"], "limited", "{w}: {t}");
        assert_eq!(t["attempts"], 0, "{w}");
        assert!(t["waiting_until"].is_string(), "{w}: {t}");
    }
    assert_eq!(repo.state()["spent"]["iterations"], 0);
}

#[test]
fn a_reset_in_a_named_zone_and_a_dated_reset_are_waited_for_until_then() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "lz" { parallel = 2 }
budget { iterations = 4  wait = 1s }
agent warsaw { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "limit_text"  FIXTURE_LIMIT_TEXT = "You've hit your limit · resets 11pm (Europe/Warsaw)" } }
agent seoul  { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  env = { FIXTURE_MODE = "limit_text"  FIXTURE_LIMIT_TEXT = "You're out of extra usage · resets Feb 7, 11am (Asia/Seoul)" } }
task w { agent = warsaw  prompt = "x" }
task s { agent = seoul   prompt = "x" }
"#,
    );
    let before = Timestamp::now();
    repo.loopc(&["run"]).status(3).run();
    let until = |task: &str| -> Timestamp {
        let t = repo.task(task);
        t["waiting_until"]
            .as_str()
            .unwrap_or_else(|| panic!("{t}"))
            .parse()
            .unwrap()
    };
    // 11pm in Warsaw, whatever this machine's zone.
    assert_eq!(until("w"), next_in("Europe/Warsaw", 23, before));
    // Feb 7, 11am in Seoul: this year's, or next year's once it has passed.
    let s = until("s").to_zoned_datetime(TimeZone::get("Asia/Seoul").unwrap());
    assert_eq!((s.month(), s.day(), s.hour(), s.minute()), (2, 7, 11, 0));
    assert!(until("s") > before);
}

#[test]
fn a_login_no_retry_can_fix_blocks_the_task_at_once() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "auth" { parallel = 2 }
budget { iterations = 10  failures = 5 }
agent claude { run = "sh @FIX@/claude -p --output-format stream-json --verbose"  output = claude-json  env = { FIXTURE_MODE = "not_logged_in" } }
agent json   { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "not_logged_in" } }
task a { agent = claude  prompt = "x"  attempts = 3 }
task b { agent = json    prompt = "x"  attempts = 3 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    for name in ["a", "b"] {
        let t = repo.task(name);
        assert_eq!(t["status"], "blocked", "{t}");
        assert_eq!(t["attempts"], 1, "{t}");
        assert_eq!(
            t["reason"],
            "the agent cannot authenticate: Not logged in · Please run /login"
        );
    }
    assert!(
        r.stderr.contains("Not logged in · Please run /login"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_synthetic_model_of_the_clis_own_messages_is_not_recorded() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "syn" { }
budget { iterations = 4  wait = 1s }
agent claude { run = "sh @FIX@/claude -p --output-format json --verbose"  output = claude-json  env = { FIXTURE_MODE = "limit_text" } }
task t { agent = claude  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    let agent = &repo.task("t")["history"][0]["agent"];
    // The init message names the session's model; the `<synthetic>`
    // message after it does not replace it.
    assert_eq!(agent["model"], "claude-sonnet-4-5-20250929", "{agent}");
}

#[test]
fn refused_tool_calls_reach_the_next_attempt_and_the_logs() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "deny" { }
budget { iterations = 4  cost = $5 }
agent claude { run = "sh @FIX@/claude -p --output-format json"  output = claude-json  env = { FIXTURE_MODE = "denied" } }
task t { agent = claude  prompt = "x"  attempts = 2  accept = "false" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    let denials = &t["history"][0]["agent"]["permission_denials"];
    let list: Vec<&str> = denials
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(list.len(), 2, "{denials}");
    assert!(
        list[0].starts_with("Write ") && list[0].ends_with("/claude.txt"),
        "{list:?}"
    );
    assert_eq!(list[1], "Bash npm install");
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/t/2/feedback.md")).unwrap();
    assert!(
        fb.contains("The agent was refused these tool calls") && fb.contains("- Bash npm install"),
        "{fb}"
    );
    let logs = repo.loopc(&["logs", "t", "--attempt", "1"]).status(0).run();
    assert!(
        logs.stdout.contains("permission-denials.txt <==")
            && logs.stdout.contains("Bash npm install"),
        "{}",
        logs.stdout
    );
}

#[test]
fn the_agents_own_cost_cap_is_named_and_its_cost_counted() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "cap" { }
budget { cost = $5  failures = 5 }
agent claude { run = "sh @FIX@/claude -p --output-format json --max-budget-usd 0.01"  output = claude-json  env = { FIXTURE_MODE = "budget" } }
task t { agent = claude  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "failed");
    assert_eq!(
        t["history"][0]["reason"],
        "the agent stopped at its cost cap (error_max_budget_usd: Reached maximum budget ($0.01)) \
         (exit status 1)"
    );
    assert_eq!(t["cost_micro_usd"], 12_700);
    let fb = std::fs::read_to_string(repo.root.join(".loopc/logs/t/1/agent.stdout")).unwrap();
    assert!(fb.contains("budget_exhausted"));
}

#[test]
fn a_codex_stream_retry_the_turn_survives_fails_nothing() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "rc" { }
budget { iterations = 2  failures = 1 }
agent codex { run = "sh @FIX@/codex exec --json --sandbox workspace-write -"  output = codex-json  cost = $0.50  env = { FIXTURE_MODE = "reconnect" } }
task t { agent = codex  prompt = "x"  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "passed", "{t}");
    assert_eq!(t["summary"], "Wrote codex.txt with a greeting.");
    assert!(t["history"][0]["agent"].get("error").is_none(), "{t}");
}

#[test]
fn the_older_codex_json_shape_is_read() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "old" { }
budget { iterations = 2 }
agent codex { run = "sh @FIX@/codex exec --json -"  output = codex-json  cost = $0.50  env = { FIXTURE_MODE = "legacy" } }
task t { agent = codex  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let t = repo.task("t");
    assert_eq!(t["summary"], "Wrote codex.txt with a greeting.");
    let agent: &Value = &t["history"][0]["agent"];
    assert_eq!(agent["session_id"], "0199a7b2-4c1e-7d30-9b1a-2f4e6c8d0a11");
    assert_eq!(agent["model"], "gpt-5-codex");
    assert_eq!(agent["usage"]["input_tokens"], 24_763);
    assert_eq!(agent["usage"]["cached_input_tokens"], 24_448);
    assert_eq!(agent["usage"]["output_tokens"], 122);
}
