//! Paying once (docs/resilience.md "Failures are remembered", docs/running.md
//! "A per-attempt cost cap"): failures and their feedback are remembered
//! across runs under the task's key, a task out of attempts is not paid
//! for again unless `--retry-failed`, an interrupted run resumes at the
//! next attempt with the last feedback; an attempt over its cost cap is
//! said and counted in full, the run starts no attempt the `cost` budget
//! cannot cover at its cap, and a plan with no budget stops after 20
//! agent attempts. The scripted agents report a cost and count their
//! sessions in a file outside the repository.

use crate::harness::Test;

/// The agent: logs `<task> <attempt>` and the feedback it was given, then
/// per `MODE`: `fail` reports failure, `hold` holds its second attempt on
/// a marked sleep while `hold` exists (its first fails), `pass` writes
/// `<task>.txt`; it reports `COST` dollars (default 0.10).
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK $LOOP_ATTEMPT" >> "$LOG_DIR/sessions.log"
{ echo "== $LOOP_TASK $LOOP_ATTEMPT"; cat "$LOOP_FEEDBACK_FILE"; echo; } >> "$LOG_DIR/feedback.log"
cost="${COST:-0.10}"
if [ "$MODE" = hold ] && [ "$LOOP_ATTEMPT" = 2 ] && [ -e "$LOG_DIR/hold" ]; then
  touch "$LOG_DIR/started"
  "$SLEEPER" 1000
fi
if [ "$MODE" = fail ] || { [ "$MODE" = hold ] && [ "$LOOP_ATTEMPT" = 1 ]; }; then
  printf '{"status":"failed","summary":"attempt %s got the sign wrong","cost_usd":%s}' "$LOOP_ATTEMPT" "$cost" > "$LOOP_HANDOFF"
  exit 0
fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"did %s","cost_usd":%s}' "$LOOP_TASK" "$cost" > "$LOOP_HANDOFF"
"#;

/// A repository with the agent, and the plan `plan` (`@MODE@` is `mode`).
fn setup(plan: &str, mode: &str) -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", AGENT);
    let sleeper = repo.marked_sleep(&format!("pay-sleep-{}", std::process::id()));
    repo.plan(&plan.replace("@MODE@", mode).replace("@SLEEPER@", &sleeper));
    repo
}

/// The agent sessions started so far, `<task> <attempt>` each.
fn sessions(repo: &Test) -> Vec<String> {
    repo.bin_lines("sessions.log")
}

/// Runs `loopc run ARGS`, expecting exit `status`; returns the sessions it
/// started and its stdout and stderr.
fn run(repo: &Test, args: &[&str], status: i32) -> (Vec<String>, String) {
    let before = sessions(repo).len();
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    let out = repo.loopc(&full).status(status).run();
    (sessions(repo)[before..].to_vec(), out.stdout + &out.stderr)
}

const FAILING: &str = r#"
loop "pay" { }
budget { iterations = 20  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $1  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@" } }
defaults { agent = bot }
task t { prompt = "compute"  attempts = 2 }
task after: t { prompt = "use it" }
"#;

#[test]
fn a_task_out_of_attempts_is_not_paid_for_again_until_retried_or_changed() {
    let repo = setup(FAILING, "fail");
    let (ran, out) = run(&repo, &[], 1);
    assert_eq!(ran, ["t 1", "t 2"], "{out}");
    // The same plan again: nothing is paid for, and it says why and how.
    let dry = repo.loopc(&["run", "--dry-run"]).status(0).run();
    assert!(
        dry.stdout.contains(
            "t: not run: ran out of attempts (2 of 2) with this key; --retry-failed to run it\n\
             after: skipped: dependency `t` is not run\n"
        ),
        "{dry:?}"
    );
    assert!(dry.stdout.contains("0 to run, 2 not run"), "{dry:?}");
    let (ran, out) = run(&repo, &[], 1);
    assert_eq!(ran, Vec::<String>::new(), "{out}");
    let t = repo.task("t");
    assert_eq!(t["status"], "failed");
    // Its attempts are the earlier run's, said as such.
    assert_eq!(
        (&t["attempts"], &t["earlier_attempts"]),
        (&2.into(), &2.into())
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("t ") && l.contains(" 2 (2 earlier) ")),
        "{out}"
    );
    let reason = t["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "not run: ran out of attempts (2 of 2) with this key; \
             `loopc run --retry-failed t` to run it (its last failure: the handoff says failed"
        ),
        "{reason}"
    );
    assert_eq!(repo.status_of("after"), "skipped");
    // Said as the dry run says it: `t` did not run.
    assert_eq!(repo.task("after")["reason"], "dependency `t` is not run");
    assert!(
        out.contains("  after: dependency `t` is not run\n"),
        "{out}"
    );
    assert!(
        out.contains("--retry-failed t"),
        "the summary says how: {out}"
    );
    let status = repo.loopc(&["status"]).run();
    assert!(status.stdout.contains("--retry-failed t"), "{status:?}");
    // `--no-cache` replays nothing but still remembers: the dry run says
    // what the run does.
    let dry = repo.loopc(&["run", "--dry-run", "--no-cache"]).run();
    assert_eq!(
        dry.stdout,
        "t: not run: ran out of attempts (2 of 2) with this key; --retry-failed to run it\n\
         after: skipped: dependency `t` is not run\n\
         dry run of plan pay: 0 cached, 0 to run, 2 not run; nothing was started\n",
        "{dry:?}"
    );
    let dry = repo.loopc(&["run", "--dry-run", "--force", "t"]).run();
    assert!(
        dry.stdout.starts_with(
            "t: run (forced; --force: it ran out of attempts (2 of 2) with this key; starts \
             over at attempt 1 with the last failure's feedback)\n"
        ),
        "{dry:?}"
    );
    let (ran, out) = run(&repo, &["--no-cache"], 1);
    assert_eq!(ran, Vec::<String>::new(), "{out}");
    assert_eq!(repo.status_of("after"), "skipped");
    let dry = repo
        .loopc(&["run", "--dry-run", "--no-cache", "--retry-failed"])
        .run();
    assert!(
        dry.stdout.starts_with(
            "t: run (cache disabled; --retry-failed: it ran out of attempts (2 of 2) with this \
             key; starts over at attempt 1 with the last failure's feedback)\n\
             after: run (cache disabled)\n"
        ),
        "{dry:?}"
    );
    // `--retry-failed` runs it again, from attempt 1, told the last feedback.
    let (ran, out) = run(&repo, &["--retry-failed"], 1);
    assert_eq!(ran, ["t 1", "t 2"], "{out}");
    let feedback = std::fs::read_to_string(repo.bin.join("feedback.log")).unwrap();
    assert!(
        feedback.contains(
            "== t 1\nThe previous attempt reported failure:\nattempt 2 got the sign wrong"
        ),
        "{feedback}"
    );
    let (ran, _) = run(&repo, &["--retry-failed", "t"], 1);
    assert_eq!(ran, ["t 1", "t 2"]);
    let (ran, _) = run(&repo, &["--force", "t"], 1);
    assert_eq!(ran, ["t 1", "t 2"], "--force runs it too");
    // A changed key runs it.
    repo.plan(
        &FAILING
            .replace("@MODE@", "fail")
            .replace("\"compute\"", "\"compute again\""),
    );
    let (ran, _) = run(&repo, &[], 1);
    assert_eq!(ran, ["t 1", "t 2"]);
    // Once it passes, nothing is remembered.
    repo.plan(
        &FAILING
            .replace("@MODE@", "pass")
            .replace("\"compute\"", "\"compute again\""),
    );
    let (ran, out) = run(&repo, &[], 0);
    assert_eq!(ran, ["t 1", "after 1"], "{out}");
    assert!(repo.task("t").get("remembered").is_none());
}

#[test]
fn retry_failed_names_tasks_of_the_plan() {
    let repo = setup(FAILING, "fail");
    repo.loopc(&["run", "--retry-failed", "nope", "plan.loop"])
        .status(2)
        .stderr_contains("--retry-failed: no task named `nope` in the plan")
        .run();
}

#[test]
fn retry_failed_says_when_a_task_it_names_has_no_remembered_failure() {
    let repo = setup(FAILING, "pass");
    let note = "note: --retry-failed: task `after` has no remembered failure: it runs, or is \
                replayed from the cache, as it would without the flag";
    let (ran, out) = run(&repo, &["--retry-failed", "after"], 0);
    assert_eq!(ran, ["t 1", "after 1"], "{out}");
    assert!(out.contains(note), "{out}");
    // The dry run says it too; a task whose failure is remembered is not named.
    repo.plan(
        &FAILING
            .replace("@MODE@", "fail")
            .replace("\"compute\"", "\"compute again\""),
    );
    run(&repo, &[], 1);
    let dry = repo
        .loopc(&[
            "run",
            "--dry-run",
            "--retry-failed",
            "t",
            "--retry-failed",
            "after",
        ])
        .status(0)
        .run();
    assert!(dry.stderr.contains(note), "{dry:?}");
    assert!(!dry.stderr.contains("task `t` has no"), "{dry:?}");
}

const HOLDING: &str = r#"
loop "pay" { }
budget { iterations = 20  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $1  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@"  SLEEPER = "@SLEEPER@" } }
task t { agent = bot  prompt = "compute"  attempts = 3 }
"#;

/// Runs the holding plan, stops loopc with `sig` during attempt 2 (it
/// exits `code`), and checks that the rerun goes on at attempt 2 with
/// attempt 1's feedback.
fn resumes_after(sig: i32, code: Option<i32>) {
    let repo = setup(HOLDING, "hold");
    std::fs::write(repo.bin.join("hold"), "").unwrap();
    let started = repo.bin.join("started");
    let mut child = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(4000, || started.exists()));
    crate::harness::signal(child.id(), sig);
    assert_eq!(child.wait().unwrap().code(), code);
    std::fs::remove_file(repo.bin.join("hold")).unwrap();
    assert_eq!(sessions(&repo), ["t 1", "t 2"]);
    let remembered = &repo.task("t")["remembered"];
    assert_eq!(remembered["attempts"], 1, "{remembered}");
    // The rerun goes on at attempt 2, told what attempt 1 was told.
    let (ran, out) = run(&repo, &[], 0);
    assert_eq!(ran, ["t 2"], "{out}");
    let feedback = std::fs::read_to_string(repo.bin.join("feedback.log")).unwrap();
    let last = feedback.rsplit("== ").next().unwrap();
    assert!(
        last.starts_with(
            "t 2\nThe previous attempt reported failure:\nattempt 1 got the sign wrong"
        ),
        "{feedback}"
    );
    let t = repo.task("t");
    assert_eq!(
        (t["attempts"].as_u64(), t["earlier_attempts"].as_u64()),
        (Some(2), Some(1))
    );
    // `status` shows the attempts spent across runs.
    let status = repo.loopc(&["status"]).run();
    assert!(status.stdout.contains("2 (1 earlier)"), "{status:?}");
}

#[test]
fn an_interrupted_run_resumes_at_the_next_attempt_with_the_last_feedback() {
    resumes_after(libc::SIGINT, Some(130));
}

#[test]
fn a_killed_run_resumes_at_the_next_attempt_with_the_last_feedback() {
    resumes_after(libc::SIGKILL, None);
}

const OVER: &str = r#"
loop "pay" { }
budget { cost = $20 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $1  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@"  COST = "5.0" } }
task t { agent = bot  prompt = "compute" }
"#;

#[test]
fn an_attempt_over_its_cap_is_said_everywhere_and_counted_in_full() {
    let repo = setup(OVER, "pass");
    let (ran, out) = run(&repo, &[], 0);
    assert_eq!(ran, ["t 1"]);
    assert!(
        out.contains("loopc: t attempt 1: passed (over its cost cap: cost $5, counted in full)"),
        "{out}"
    );
    assert!(out.contains("over cap: t attempt 1 cost $5"), "{out}");
    let state = repo.state();
    assert_eq!(state["spent"]["cost_micro_usd"], 5_000_000);
    assert_eq!(state["tasks"][0]["history"][0]["over_cap"], true);
    let finished = repo.finished_attempts("passed");
    assert_eq!(finished[0]["over_cap"], true, "{finished:?}");
    let status = repo.loopc(&["status"]).run();
    assert!(
        status.stdout.contains("over cap: t attempt 1"),
        "{status:?}"
    );
}

const UNCOVERED: &str = r#"
loop "pay" { parallel = 1 }
budget { cost = $1.50 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $1  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@"  COST = "0.80" } }
defaults { agent = bot }
task a { prompt = "one" }
task b { prompt = "two" }
"#;

#[test]
fn no_attempt_starts_that_the_cost_budget_left_cannot_cover_at_its_cap() {
    let repo = setup(UNCOVERED, "pass");
    let (ran, out) = run(&repo, &[], 3);
    assert_eq!(ran, ["a 1"], "{out}");
    assert_eq!(
        repo.state()["stop_reason"],
        "budget `cost`: $0.70 left of $1.50, less than agent `bot`'s per-attempt cap of $1"
    );
    assert_eq!(repo.status_of("b"), "pending");
}

/// Three tasks at once, each capped at $0.60 under `cost = $1`: an attempt
/// running holds its cap, so the next waits for it (`@COST@` is what each
/// attempt reports).
const HELD: &str = r#"
loop "pay" { parallel = 3 }
budget { cost = $1 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $0.60  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@"  COST = "@COST@" } }
defaults { agent = bot }
task a { prompt = "one" }
task b { prompt = "two" }
task c { prompt = "three" }
"#;

#[test]
fn attempts_running_hold_their_caps_so_parallel_ones_cannot_overspend() {
    // Each spends its whole cap: after the first, $0.40 is left.
    let repo = setup(&HELD.replace("@COST@", "0.60"), "pass");
    let (ran, out) = run(&repo, &[], 3);
    assert_eq!(ran, ["a 1"], "{out}");
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 600_000, "{out}");
    assert_eq!(
        repo.state()["stop_reason"],
        "budget `cost`: $0.40 left of $1, less than agent `bot`'s per-attempt cap of $0.60"
    );
    // Each spends less: the next starts once the one before it has said so.
    let repo = setup(&HELD.replace("@COST@", "0.30"), "pass");
    let (ran, out) = run(&repo, &[], 3);
    assert_eq!(ran, ["a 1", "b 1"], "{out}");
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 600_000, "{out}");
    assert_eq!(repo.status_of("c"), "pending");
}

#[test]
fn claude_codes_max_budget_result_is_the_cap_reached_and_over_it() {
    let repo = Test::repo();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agents");
    let plan = r#"
loop "cap" { }
budget { cost = $5  failures = 5 }
agent claude { run = "sh @FIX@/claude -p --output-format json --max-budget-usd \"$LOOP_COST_CAP_USD\""  output = claude-json  cost = $0.01  env = { FIXTURE_MODE = "budget" } }
task t { agent = claude  prompt = "x"  attempts = 1 }
"#;
    repo.plan(&plan.replace("@FIX@", fixtures));
    let out = repo.loopc(&["run"]).status(1).run();
    let h = &repo.task("t")["history"][0];
    assert_eq!(
        h["reason"],
        "the agent stopped at its cost cap (error_max_budget_usd: Reached maximum budget ($0.01)) \
         (exit status 1)"
    );
    assert_eq!(h["over_cap"], true, "{out:?}");
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 12_700);
}

const UNBOUNDED: &str = r#"
loop "pay" { }
budget { failures = 100 }
agent bot { run = "sh @BIN@/agent.sh"  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@" } }
task t { agent = bot  prompt = "compute"  attempts = 30 }
"#;

#[test]
fn a_plan_with_no_bounding_budget_stops_after_twenty_agent_attempts() {
    let repo = setup(UNBOUNDED, "fail");
    let check = repo.loopc(&["check", "plan.loop"]).run();
    assert!(
        check
            .stderr
            .contains("a run then stops after 20 agent attempts (REEL's default `iterations`)"),
        "{check:?}"
    );
    let (ran, out) = run(&repo, &[], 3);
    assert_eq!(ran.len(), 20, "{out}");
    assert_eq!(
        repo.state()["stop_reason"],
        "budget `iterations` spent: 20 of 20 agent attempts"
    );
}

/// A gate that blocks (`on_fail = block`): no more attempts under this key,
/// in this run or the next, until `--retry-failed`; a changed key runs it.
#[test]
fn a_blocked_task_is_not_paid_for_again_until_retried_or_changed() {
    let repo = setup(
        r#"
loop "pay" { }
budget { iterations = 20  failures = 10 }
agent bot { run = "sh @BIN@/agent.sh"  cost = $1  env = { LOG_DIR = "@BIN@"  MODE = "@MODE@" } }
gate strict { run = "echo 'no: needs a person'; false"  on_fail = block }
defaults { agent = bot }
task t { prompt = "compute"  gates = [strict] }
task after: t { prompt = "use it" }
"#,
        "pass",
    );
    let (ran, out) = run(&repo, &[], 1);
    assert_eq!(ran, ["t 1"], "{out}");
    assert_eq!(repo.status_of("t"), "blocked");
    assert_eq!(repo.task("t")["remembered"]["blocked"], true);
    let dry = repo.loopc(&["run", "--dry-run"]).run();
    assert!(
        dry.stdout.starts_with(
            "t: not run: blocked with this key in an earlier run; --retry-failed to run it\n\
             after: skipped: dependency `t` is not run\n"
        ),
        "{dry:?}"
    );
    let (ran, out) = run(&repo, &[], 1);
    assert_eq!(ran, Vec::<String>::new(), "{out}");
    assert_eq!(repo.status_of("t"), "blocked");
    let reason = repo.task("t")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.starts_with(
            "not run: blocked with this key in an earlier run; `loopc run --retry-failed t` to \
             run it (why: "
        ),
        "{reason}"
    );
    assert_eq!(repo.task("after")["reason"], "dependency `t` is not run");
    let (ran, _) = run(&repo, &["--retry-failed", "t"], 1);
    assert_eq!(ran, ["t 1"]);
}

#[test]
fn failures_and_questions_outlive_runs_of_other_plans_and_of_some_tasks() {
    let repo = Test::repo();
    repo.script("fail.sh", "#!/bin/sh\ncat >/dev/null\nexit 1\n");
    repo.script(
        "ask.sh",
        "#!/bin/sh\ncat >/dev/null\necho x >> g.txt\nprintf '{\"status\":\"needs_human\",\"summary\":\"s\",\"question\":\"Q?\"}' > \"$LOOP_HANDOFF\"\n",
    );
    let a = "loop \"a\" { }\nbudget { iterations = 10 }\n\
             agent t { run = \"sh @BIN@/fail.sh\" }\nagent q { run = \"sh @BIN@/ask.sh\" }\n\
             defaults { agent = t  attempts = 1 }\n\
             task x { prompt = \"p\" }\ntask ask { prompt = \"p\"  agent = q }\n\
             task y { run = \"echo y > y.txt\" }\n";
    repo.write(
        "a.loop",
        a.replace("@BIN@", &repo.bin.display().to_string()),
    );
    repo.write(
        "b.loop",
        "loop \"b\" { }\ntask z { run = \"echo z > z.txt\" }\n",
    );
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/a.loop\n/b.loop\n/.loopc/\n",
    )
    .unwrap();
    repo.loopc(&["run", "a.loop"]).status(1).run();
    let remembered = |out: &str| {
        out.contains("x: not run: ran out of attempts (1 of 1) with this key")
            && out.contains("ask: not run: its question is not answered yet")
    };
    let dry = repo.loopc(&["run", "--dry-run", "a.loop"]).run();
    assert!(remembered(&dry.stdout), "{dry:?}");
    // Another plan file's run, then a run of one task of the first plan.
    repo.loopc(&["run", "b.loop"]).status(0).run();
    let dry = repo.loopc(&["run", "--dry-run", "a.loop"]).run();
    assert!(remembered(&dry.stdout), "after b.loop: {dry:?}");
    repo.loopc(&["run", "a.loop", "y"]).status(0).run();
    assert!(
        repo.state()["carried"].to_string().contains("\"x\""),
        "{}",
        repo.state()
    );
    let dry = repo.loopc(&["run", "--dry-run", "a.loop"]).run();
    assert!(remembered(&dry.stdout), "after a run of y: {dry:?}");
    // The question can still be answered.
    repo.loopc(&["answer", "ask", "yes"]).status(0).run();
    let dry = repo.loopc(&["run", "--dry-run", "a.loop"]).run();
    assert!(
        dry.stdout.contains("x: not run: ran out of attempts"),
        "{dry:?}"
    );
    assert!(!dry.stdout.contains("ask: not run"), "{dry:?}");
}
