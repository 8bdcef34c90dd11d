//! Work an agent gate did not accept (docs/running.md): a task whose last
//! attempt passed every command check and failed only an agent gate ends
//! `completed_unreviewed`, its task branch kept and named in `status`
//! (text and `--json`), the summary and the report, with the `git merge`
//! that takes it; its dependents are skipped as for a failure. A command
//! check that fails still makes it `failed`.

use crate::harness::{SIMPLE_AGENT, Test};

/// A reviewer that rejects everything.
const CUSTOMER: &str = r#"#!/bin/sh
cat > /dev/null
printf '{"status":"failed","summary":"not what I asked for"}' > "$LOOP_HANDOFF"
"#;

fn setup(check: &str) -> Test {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.script("customer.sh", CUSTOMER);
    repo.plan(&format!(
        r#"
loop "ur" {{ }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
agent customer {{ run = "sh @BIN@/customer.sh" }}
gate review {{ agent = customer  prompt = "Is it what you asked for?" }}
gate tests = "{check}"
task t {{ agent = bot  prompt = "write t"  attempts = 2  gates = [review, tests] }}
task after: t {{ run = "true"  changes = optional }}
"#
    ));
    repo
}

#[test]
fn only_an_agent_gate_rejecting_the_last_attempt_keeps_its_work_for_a_person() {
    let repo = setup("test -f t.txt");
    let run = repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "completed_unreviewed");
    assert_eq!(repo.status_of("after"), "skipped");
    assert_eq!(
        repo.task("after")["reason"],
        "dependency `t` ended completed_unreviewed (an agent gate did not accept its work)"
    );
    let t = repo.task("t");
    assert_eq!(t["attempts"], 2);
    let branch = t["branch"]
        .as_str()
        .expect("the branch is recorded")
        .to_string();
    assert!(branch.starts_with("loopc/ur/t/"), "{branch}");
    // The branch holds the work.
    assert_eq!(repo.show(&branch, "t.txt").as_deref(), Some("made by t\n"));
    assert_eq!(repo.state()["version"], 3);
    let hint = format!("review it, then take it with `git merge {branch}`");
    assert!(run.stdout.contains(&hint), "summary: {run:?}");
    assert!(run.stdout.contains("completed_unreviewed"), "{run:?}");
    let status = repo.loopc(&["status"]).status(0).run();
    assert!(status.stdout.contains(&hint), "status: {status:?}");
    let json: serde_json::Value =
        serde_json::from_str(&repo.loopc(&["status", "--json"]).status(0).run().stdout)
            .expect("status --json");
    let jt = json["tasks"]
        .as_array()
        .and_then(|ts| ts.iter().find(|x| x["name"] == "t"))
        .expect("task t");
    assert_eq!(jt["status"], "completed_unreviewed");
    assert_eq!(jt["branch"], branch.as_str());
    // The report names it with the merge command.
    let report = repo.loopc(&["report", "--json"]).run();
    let r: serde_json::Value = serde_json::from_str(&report.stdout).expect("report JSON");
    assert_eq!(r["version"], 2);
    assert_eq!(
        r["left"]["unreviewed"][0]["merge"],
        format!("git merge {branch}")
    );
    assert_eq!(r["counts"]["unreviewed"], 1);
    // The page's summary counts it too (its counts add up to the tasks).
    let page = repo.loopc(&["report", "-o", "-"]).run().stdout;
    assert!(
        page.contains(", 1 completed unreviewed"),
        "the summary lacks it"
    );
    // A rerun does not pay for it again, and still shows where it is.
    let again = repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "completed_unreviewed");
    assert_eq!(repo.task("t")["branch"], branch.as_str());
    assert!(again.stdout.contains(&hint), "rerun: {again:?}");
    // Taking it by hand works.
    repo.git(&["merge", "-q", "--no-edit", &branch]);
    assert_eq!(
        std::fs::read_to_string(repo.root.join("t.txt")).unwrap(),
        "made by t\n"
    );
}

#[test]
fn a_failing_command_check_still_fails_the_task() {
    let repo = setup("false");
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "failed");
    assert!(repo.task("t").get("branch").is_none());
    assert_eq!(repo.status_of("after"), "skipped");
}

#[test]
fn a_command_gate_that_rejects_the_last_attempt_runs_once_on_it() {
    // `tests` rejects both attempts and the reviewer accepts them: the last
    // attempt's rejection is `tests`'s, a plain failure, and `tests` is not
    // run on it a second time (as it is after an agent gate's rejection).
    for gates in ["[tests, review]", "[review, tests]"] {
        let repo = Test::repo();
        repo.script("agent.sh", SIMPLE_AGENT);
        repo.script(
            "reviewer.sh",
            "#!/bin/sh\ncat > /dev/null\nprintf '{\"status\":\"completed\",\"summary\":\"fine\"}' > \"$LOOP_HANDOFF\"\n",
        );
        repo.plan(&format!(
            r#"
loop "ur" {{ }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
agent reviewer {{ run = "sh @BIN@/reviewer.sh" }}
gate review {{ agent = reviewer  prompt = "Fine?" }}
gate tests = "echo $LOOP_ATTEMPT >> @BIN@/tests.count; false"
task t {{ agent = bot  prompt = "write t"  attempts = 2  gates = {gates} }}
"#
        ));
        repo.loopc(&["run"]).status(1).run();
        assert_eq!(repo.status_of("t"), "failed", "{gates}");
        assert_eq!(repo.bin_lines("tests.count"), ["1", "2"], "{gates}");
    }
}
