//! The other agent CLIs (issue 28): Gemini CLI, Qwen Code, OpenCode,
//! Cursor, Amp, GitHub Copilot CLI and Factory's droid, each read by its
//! `output` through a real `loopc run` (success, the error as feedback,
//! cost or tokens, session, usage limits as waits); the declarative reader
//! `output = { … }`; `idle`, which stops an agent that went quiet; and what
//! the running attempt's line shows from each reader's events. The fixture
//! agents print recorded output (tests/fixtures/agents/README.md).

use crate::harness::Test;
use serde_json::Value;

fn fixtures() -> String {
    format!("{}/tests/fixtures/agents", env!("CARGO_MANIFEST_DIR"))
}

fn plan(repo: &Test, text: &str) {
    repo.plan(&text.replace("@FIX@", &fixtures()));
}

/// The agent record of `task`'s first attempt.
fn agent_of(repo: &Test, task: &str) -> Value {
    repo.task(task)["history"][0]["agent"].clone()
}

#[test]
fn each_cli_passes_with_its_summary_session_and_counts() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "clis" { parallel = 4 }
budget { iterations = 20  cost = $5 }
agent gemini  { run = "sh @FIX@/gemini -p -o json"  output = gemini-json  cost = $0.10 }
agent gstream { run = "sh @FIX@/gemini -p -o stream-json"  output = gemini-json  cost = $0.10  env = { FIXTURE_FILE = "g2.txt" } }
agent qwen    { run = "sh @FIX@/qwen -p --output-format json"  output = claude-json  cost = $0.10 }
agent oc      { run = "sh @FIX@/opencode run --format json"  output = opencode-json }
agent cursor  { run = "sh @FIX@/cursor -p --output-format stream-json --force"  output = cursor-json  cost = $0.10 }
agent amp     { run = "sh @FIX@/amp -x --stream-json"  output = amp-json  cost = $0.10 }
agent copilot { run = "sh @FIX@/copilot -p - --output-format json --allow-all-tools"  output = copilot-json  cost = $0.10 }
agent droid   { run = "sh @FIX@/droid exec --auto low --output-format json"  output = droid-json  cost = $0.10 }
agent ddebug  { run = "sh @FIX@/droid exec --auto low --output-format debug"  output = droid-json  cost = $0.10  env = { FIXTURE_FILE = "d2.txt" } }
task gemini  { agent = gemini   prompt = "x" }
task gstream { agent = gstream  prompt = "x" }
task qwen    { agent = qwen     prompt = "x" }
task oc      { agent = oc       prompt = "x" }
task cursor  { agent = cursor   prompt = "x" }
task amp     { agent = amp      prompt = "x" }
task copilot { agent = copilot  prompt = "x" }
task droid   { agent = droid    prompt = "x" }
task ddebug  { agent = ddebug   prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let summary = |t: &str| repo.task(t)["summary"].clone();
    assert_eq!(summary("gemini"), "Wrote gemini.txt.");
    assert_eq!(summary("gstream"), "Wrote gemini.txt.");
    assert_eq!(summary("qwen"), "Wrote qwen.txt.");
    assert_eq!(summary("oc"), "Wrote opencode.txt.");
    assert_eq!(summary("cursor"), "Wrote cursor.txt.");
    assert_eq!(summary("amp"), "Wrote amp.txt.");
    assert_eq!(summary("copilot"), "Wrote copilot.txt.");
    assert_eq!(summary("droid"), "Wrote droid.txt.");
    assert_eq!(summary("ddebug"), "Wrote droid.txt.");

    let g = agent_of(&repo, "gemini");
    assert_eq!(g["session_id"], "219b0367-780a-4ea0-8ebb-875d740e8fe2");
    assert_eq!(g["model"], "gemini-2.5-pro");
    assert_eq!(g["usage"]["input_tokens"], 7173);
    assert_eq!(g["usage"]["cached_input_tokens"], 2048);
    let g = agent_of(&repo, "gstream");
    assert_eq!(g["model"], "gemini-3.1-pro-preview");
    assert_eq!(g["usage"]["input_tokens"], 12_601);
    assert_eq!(agent_of(&repo, "qwen")["model"], "qwen3-coder-plus");
    // OpenCode reports its cost: summed over its steps, no cap needed.
    let oc = repo.task("oc");
    assert_eq!(oc["cost_micro_usd"], 9_720);
    let oca = agent_of(&repo, "oc");
    assert_eq!(oca["session_id"], "ses_00ffa44f1ffeT4xyThvSemc697");
    assert_eq!(oca["usage"]["input_tokens"], 846);
    assert_eq!(oca["usage"]["cache_read_input_tokens"], 15_872);
    // Cursor's camelCase usage.
    let c = agent_of(&repo, "cursor");
    assert_eq!(c["usage"]["input_tokens"], 12_983);
    assert_eq!(c["usage"]["cache_read_input_tokens"], 5_957);
    assert_eq!(c["session_id"], "4e4bb132-b0ca-47cd-9522-23ca63211c70");
    assert_eq!(
        agent_of(&repo, "amp")["session_id"],
        "T-019e47a8-5090-7538-9035-f2fde26859b7"
    );
    let cp = agent_of(&repo, "copilot");
    assert_eq!(cp["session_id"], "dead-beef-4c1e-9d55-7c5d4a6c2a01");
    assert_eq!(cp["usage"]["input_tokens"], 7);
    assert_eq!(cp["model"], "gpt-5-mini");
    assert_eq!(
        agent_of(&repo, "droid")["session_id"],
        "8af22e0a-d222-42c6-8c7e-7a059e391b0b"
    );
    // The CLIs that report no cost are charged their cap.
    assert_eq!(repo.task("gemini")["cost_micro_usd"], 100_000);
}

#[test]
fn each_clis_errors_fail_wait_or_block_as_they_say() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "errs" { parallel = 4 }
budget { iterations = 20  failures = 10  wait = 1s }
agent gquota  { run = "sh @FIX@/gemini -p -o json"  output = gemini-json  cost = $0.10  env = { FIXTURE_MODE = "quota" } }
agent gsquota { run = "sh @FIX@/gemini -p -o stream-json"  output = gemini-json  cost = $0.10  env = { FIXTURE_MODE = "quota" } }
agent ocauth  { run = "sh @FIX@/opencode run --format json"  output = opencode-json  cost = $0.10  env = { FIXTURE_MODE = "auth" } }
agent oclimit { run = "sh @FIX@/opencode run --format json"  output = opencode-json  cost = $0.10  env = { FIXTURE_MODE = "rate_limit" } }
agent cpquota { run = "sh @FIX@/copilot -p - --output-format json"  output = copilot-json  cost = $0.10  env = { FIXTURE_MODE = "quota" } }
task gq  { agent = gquota   prompt = "x" }
task gsq { agent = gsquota  prompt = "x" }
task oa  { agent = ocauth   prompt = "x"  attempts = 3 }
task ol  { agent = oclimit  prompt = "x" }
task cq  { agent = cpquota  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(3).run();
    for limited in ["gq", "gsq", "ol", "cq"] {
        let t = repo.task(limited);
        assert_eq!(t["history"][0]["outcome"], "limited", "{limited}: {t}");
        assert_eq!(t["attempts"], 0, "{limited}");
    }
    // Gemini's "reset after 8h44m7s" and OpenCode's "resets in 1d 5h" give
    // the time to wait for.
    for timed in ["gq", "ol"] {
        assert!(repo.task(timed)["waiting_until"].is_string(), "{timed}");
    }
    let oa = repo.task("oa");
    assert_eq!(oa["status"], "blocked", "{oa}");
    assert_eq!(oa["attempts"], 1);
    assert_eq!(
        oa["reason"],
        "the agent cannot authenticate: Invalid Authentication"
    );
}

#[test]
fn the_declarative_reader_takes_what_the_plan_points_at() {
    let repo = Test::repo();
    // A CLI loopc has no code for, printing JSON lines of its own.
    repo.script(
        "mycli.sh",
        r#"#!/bin/sh
cat > /dev/null
echo done > out.txt
echo '{"kind":"start","session":{"id":"my-7"}}'
echo '{"kind":"step","doing":"editing out.txt"}'
if [ "$MODE" = fail ]; then
  echo '{"kind":"end","ok":false,"problem":{"text":"the tests did not compile"}}'
  exit 1
fi
if [ "$MODE" = limit ]; then
  echo '{"kind":"end","ok":false,"quota":"Daily quota used up; try again in 3 hours"}'
  exit 1
fi
echo '{"kind":"end","ok":true,"answer":"Wrote out.txt","spend":{"usd":0.125},"tokens":{"in":900,"out":40}}'
"#,
    );
    plan(
        &repo,
        r#"
loop "decl" { parallel = 3 }
budget { iterations = 10  cost = $5  wait = 1s }
agent my {
  run    = "sh @BIN@/mycli.sh"
  output = {
    summary       = "[kind=end].answer"
    cost          = "spend.usd"
    session       = "session.id"
    error         = "problem.text"
    limit         = "quota"
    input_tokens  = "tokens.in"
    output_tokens = "tokens.out"
    activity      = "doing"
  }
}
agent myfail  { run = "sh @BIN@/mycli.sh"  output = { error = "problem.text" }  cost = $0.01  env = { MODE = "fail" } }
agent mylimit { run = "sh @BIN@/mycli.sh"  output = { limit = "quota" }  cost = $0.01  env = { MODE = "limit" } }
task ok   { agent = my       prompt = "x" }
task bad  { agent = myfail   prompt = "x"  attempts = 1 }
task wait { agent = mylimit  prompt = "x" }
"#,
    );
    repo.loopc(&["check"]).status(0).run();
    repo.loopc(&["run"]).status(3).run();
    let ok = repo.task("ok");
    assert_eq!(ok["status"], "passed", "{ok}");
    assert_eq!(ok["summary"], "Wrote out.txt");
    assert_eq!(ok["cost_micro_usd"], 125_000);
    let a = agent_of(&repo, "ok");
    assert_eq!(a["session_id"], "my-7");
    assert_eq!(a["usage"]["input_tokens"], 900);
    assert_eq!(a["usage"]["output_tokens"], 40);
    let bad = repo.task("bad");
    assert_eq!(bad["status"], "failed");
    assert_eq!(
        bad["history"][0]["reason"],
        "the agent reported an error: the tests did not compile (exit status 1)"
    );
    let w = repo.task("wait");
    assert_eq!(w["history"][0]["outcome"], "limited", "{w}");
    assert!(w["waiting_until"].is_string(), "{w}");
}

#[test]
fn an_agent_quiet_past_its_idle_is_stopped_as_stalled() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "idle" { }
budget { iterations = 4  cost = $5 }
agent claude { run = "sh @FIX@/claude -p --output-format stream-json --verbose"  output = claude-json  idle = 2s  timeout = 10m  env = { FIXTURE_MODE = "hang" } }
task t { agent = claude  prompt = "x"  attempts = 1 }
"#,
    );
    let r = repo.loopc(&["run"]).status(1).run();
    let t = repo.task("t");
    assert_eq!(t["status"], "failed");
    assert_eq!(
        t["history"][0]["reason"],
        "the agent stalled: no output for 2s (`idle = 2s`)"
    );
    // Shown as it went quiet, before it was stopped.
    assert!(
        r.stderr.contains("t attempt 1: now: quiet: no output for "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("stopped as stalled at 2s"),
        "{}",
        r.stderr
    );
    // The agent's output is the next attempt's feedback; not a timeout.
    assert!(!r.stderr.contains("timed out"), "{}", r.stderr);
    assert!(!repo.has_processes_inside());
}

#[test]
fn an_agent_gate_quiet_past_its_agents_idle_rejects_as_stalled() {
    let repo = Test::repo();
    repo.script("work.sh", "#!/bin/sh\ncat >/dev/null\necho x > x.txt\n");
    plan(
        &repo,
        r#"
loop "gidle" { }
budget { iterations = 4 }
agent bot { run = "sh @BIN@/work.sh" }
agent reviewer { run = "sh @FIX@/claude -p --output-format stream-json --verbose"  output = claude-json  cost = $0.01  idle = 1s  env = { FIXTURE_MODE = "hang"  FIXTURE_FILE = "/dev/null" } }
gate review { agent = reviewer  prompt = "review" }
task t { agent = bot  prompt = "x"  gates = [review]  attempts = 1 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let reason = repo.task("t")["history"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.starts_with("gate `review` stalled: no output for 1s"),
        "{reason}"
    );
}

/// Runs the plan, waits until loopc's stderr shows `line` while the agent
/// waits for `go`, then lets it finish; the run passes.
fn shows_while_running(repo: &Test, line: &str) {
    let mut run = repo.loopc(&["run"]).spawn();
    let seen = repo.wait_for(4000, || repo.spawned_stderr().contains(line));
    std::fs::write(repo.bin.join("go"), "").unwrap();
    assert_eq!(
        run.wait().unwrap().code(),
        Some(0),
        "{}",
        repo.spawned_stderr()
    );
    assert!(seen, "{line:?} not shown:\n{}", repo.spawned_stderr());
}

#[test]
fn a_running_gemini_agents_tool_call_is_shown() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "wg" { }
budget { iterations = 2 }
agent gemini { run = "sh @FIX@/gemini -p -o stream-json"  output = gemini-json  cost = $0.01  env = { FIXTURE_WAIT_FOR = "@BIN@/go" } }
task t { agent = gemini  prompt = "x" }
"#,
    );
    shows_while_running(&repo, "loopc: t attempt 1: now: write_file gemini.txt\n");
}

#[test]
fn a_running_cursor_agents_shell_command_is_shown() {
    let repo = Test::repo();
    plan(
        &repo,
        r#"
loop "wcur" { }
budget { iterations = 2 }
agent cursor { run = "sh @FIX@/cursor -p --output-format stream-json"  output = cursor-json  cost = $0.01  env = { FIXTURE_WAIT_FOR = "@BIN@/go" } }
task t { agent = cursor  prompt = "x" }
"#,
    );
    shows_while_running(
        &repo,
        "loopc: t attempt 1: now: Shell echo written > cursor.txt\n",
    );
}
