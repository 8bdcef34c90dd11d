//! Re-planning (`on_fail = replan`): a plan fragment's task that runs out
//! of attempts, or that a customer's agent gate rejects, sends the task
//! that wrote the fragment back to work with the failure as its feedback;
//! the new fragment's tasks run in the same run, within the producer's
//! `replans`.

use crate::harness::Test;

/// The planner: writes `plan/work.loop` with one task `build`. Its first
/// fragment asks for work no check accepts (`hard`), unless `PLANNER_HARD`
/// says every fragment does; once its feedback says it is re-planning, it
/// asks for work that passes (`easy`). It keeps each feedback in the
/// scripts directory as `feedback.<attempt>`.
const PLANNER: &str = r#"#!/bin/sh
cat > /dev/null
cp "$LOOP_FEEDBACK_FILE" "$BIN/feedback.$LOOP_ATTEMPT"
mkdir -p plan
if grep -q '^## Re-planning' "$LOOP_FEEDBACK_FILE" && [ -z "${PLANNER_HARD:-}" ]; then
  how=easy
else
  how=hard
fi
printf '# attempt %s\ntask build "Build it the %s way" { prompt = "WAY=%s" %s }\n' \
  "$LOOP_ATTEMPT" "$how" "$how" "$FRAGMENT_FIELDS" > plan/work.loop
printf '{"status":"completed","summary":"planned the %s way"}' "$how" > "$LOOP_HANDOFF"
"#;

/// The builder: writes `out.txt` with the way its prompt asks for (`hard`
/// or `easy`) and its attempt.
const BUILDER: &str = r#"#!/bin/sh
way=$(grep -o 'WAY=[a-z]*' | head -n 1)
printf '%s %s\n' "${way#WAY=}" "$LOOP_ATTEMPT" > out.txt
printf '{"status":"completed","summary":"built"}' > "$LOOP_HANDOFF"
"#;

/// A plan whose `design` expands `plan/work.loop` (with the `design`
/// fields `design` and the fragment's task fields `fragment`); `after`
/// waits for design (and so for the fragment's tasks).
fn plan(repo: &Test, design: &str, fragment: &str, extra: &str) {
    repo.script("planner.sh", PLANNER);
    repo.script("builder.sh", BUILDER);
    repo.plan(&format!(
        r#"loop "re" {{ }}
budget {{ iterations = 30 }}
agent planner {{ run = "sh @BIN@/planner.sh" env = {{ BIN = "@BIN@" FRAGMENT_FIELDS = "{fragment}" }} }}
agent builder {{ run = "sh @BIN@/builder.sh" }}
{extra}
defaults {{ agent = builder }}
task design {{ agent = planner prompt = "Plan the work." expands = "plan/work.loop" {design} }}
task after: design {{ run = "cat out.txt > after.txt" }}
"#
    ));
}

/// The accept check that only the easy build passes.
const ACCEPT_EASY: &str = r#"accept = \"grep -q easy out.txt\" attempts = 2"#;

#[test]
fn a_fragment_task_out_of_attempts_is_re_planned_and_the_run_goes_on() {
    let repo = Test::repo();
    plan(&repo, "on_fail = replan", ACCEPT_EASY, "");
    let out = repo.loopc(&["run"]).status(0).run();

    // The hard build failed both its attempts; design ran again and its
    // new fragment's build passed, then `after` ran on its work.
    let build = repo.task("design.build");
    assert_eq!(build["status"], "passed", "{out:?}");
    assert_eq!(build["attempts"], 3, "{build}");
    assert_eq!(build["replanned_by"], "design");
    assert_eq!(repo.show("loop/re", "out.txt").unwrap(), "easy 3\n");
    assert_eq!(repo.status_of("after"), "passed");
    let design = repo.task("design");
    assert_eq!(design["status"], "passed");
    assert_eq!(design["attempts"], 2);
    assert_eq!(design["replans"].as_array().unwrap().len(), 1, "{design}");
    assert_eq!(design["replans"][0]["task"], "design.build");

    // Its second attempt was told which task failed, why, and that
    // task's last feedback.
    let feedback = std::fs::read_to_string(repo.bin.join("feedback.2")).unwrap();
    for text in [
        "## Re-planning\nTask `build` (`design.build`) of the plan fragment `plan/work.loop` \
         this task wrote failed: out of attempts (2 of 2): ",
        "The failed task's last feedback (its checks' and gates' output):\n\
         gate `accept` failed (exit status 1)",
    ] {
        assert!(feedback.contains(text), "{text:?} not in\n{feedback}");
    }

    // The event, the live line and the summary say so.
    let ev = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "replanned")
        .expect("a replanned event");
    assert_eq!(ev["task"], "design");
    assert_eq!(ev["failed"], "design.build");
    assert_eq!(
        (ev["replan"].as_u64(), ev["replans"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(
        repo.seq_of("attempt_started", "design") < ev["seq"].as_u64().unwrap(),
        "{ev}"
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("design: re-planning (1 of 2): `design.build` failed: out of attempts"),
        "{all}"
    );
    assert!(
        out.stdout.contains(
            "re-planned: design wrote its plan fragment again (1 of this run) for `design.build`"
        ),
        "{}",
        out.stdout
    );
    // `graph --state` marks the producer.
    let graph = repo.loopc(&["graph", "--state"]).status(0).run();
    assert!(
        graph
            .stdout
            .contains("expanded plan/work.loop: design.build (re-planned 1 time)"),
        "{}",
        graph.stdout
    );
}

#[test]
fn re_planning_stops_at_replans_and_the_failure_stands() {
    let repo = Test::repo();
    plan(&repo, "on_fail = replan replans = 1", ACCEPT_EASY, "");
    let out = repo
        .loopc(&["run"])
        .env("PLANNER_HARD", "1")
        .status(1)
        .run();
    let build = repo.task("design.build");
    assert_eq!(build["status"], "failed", "{out:?}");
    assert_eq!(build["attempts"], 4);
    let reason = build["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("out of attempts (2 of 2): ")
            && reason.ends_with("; `design` re-planned it 1 time(s), its `replans` allow 1"),
        "{reason}"
    );
    assert_eq!(repo.task("design")["attempts"], 2);
    assert_eq!(repo.status_of("after"), "skipped");
    let replans = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "replanned")
        .count();
    assert_eq!(replans, 1);

    // Without `on_fail = replan`, the failure stands at once.
    plan(&repo, "", ACCEPT_EASY, "");
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("design.build"), "failed");
    assert!(repo.task("design")["replans"].is_null());
    let replans_since = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "replanned")
        .count();
    assert_eq!(replans_since, 1, "the first run's only");
}

#[test]
fn a_customer_gate_that_says_replan_re_plans_at_once() {
    let repo = Test::repo();
    repo.script(
        "customer.sh",
        r#"#!/bin/sh
cat > /dev/null
if grep -q easy out.txt; then
  printf '{"status":"completed","summary":"what I asked for"}' > "$LOOP_HANDOFF"
else
  printf '{"status":"failed","summary":"not what I asked for: make it easy"}' > "$LOOP_HANDOFF"
fi
"#,
    );
    // Neither the fragment's task nor its producer says `on_fail`: the
    // gate's `replan` alone routes the rejection to the producer.
    plan(
        &repo,
        "",
        r#"gates = [customer] attempts = 3"#,
        r#"agent customer { run = "sh @BIN@/customer.sh" }
gate customer { agent = customer prompt = "Is this what I asked for?" on_fail = replan }"#,
    );
    let out = repo.loopc(&["run"]).status(0).run();
    let build = repo.task("design.build");
    assert_eq!(build["status"], "passed", "{out:?}");
    // Rejected once, at attempt 1 of 3: re-planned without the retries.
    assert_eq!(build["attempts"], 2, "{build}");
    assert_eq!(build["history"][0]["outcome"], "failed");
    assert_eq!(repo.task("design")["attempts"], 2);
    let feedback = std::fs::read_to_string(repo.bin.join("feedback.2")).unwrap();
    assert!(
        feedback.contains("not what I asked for: make it easy"),
        "{feedback}"
    );
}

#[test]
fn the_fields_are_checked() {
    let repo = Test::repo();
    repo.plan(
        r#"agent a { run = "true" }
task t { agent = a prompt = "p" on_fail = replna replans = "two" }
"#,
    );
    let out = repo.loopc(&["check"]).status(1).run();
    assert!(out.stderr.contains("error[E0007]"), "{out:?}");
    assert!(
        out.stderr
            .contains("`on_fail` expects `retry` or `replan`, found `replna`"),
        "{out:?}"
    );
    assert!(out.stderr.contains("did you mean `replan`?"), "{out:?}");
    assert!(out.stderr.contains("`replans`"), "{out:?}");
}

#[test]
fn agentloop_example_script_runs() {
    // goal → planner (expands) → builders → customer gate rejects → the
    // planner re-plans → the pm agent answers a builder's question → done.
    let stdout = crate::harness::run_example_script("agentloop/run.sh");
    for text in [
        "run passed: 4/4 tasks passed",
        "re-planned: plan wrote its plan fragment again (1 of this run) for `plan.signup`: \
         gate `customer` rejected the change",
        "answered by agent `pm`: plan.signup's question",
        "I asked for a sign-up form, not a puzzle: no captcha, please",
        "\"by\": \"pm\"",
        "(re-planned 1 time)",
        "<h1>the sign-up form</h1>\n<input name=\"email\">\n",
    ] {
        assert!(stdout.contains(text), "{text:?} not in\n{stdout}");
    }
    assert!(!stdout.contains("captcha\"></div>"), "{stdout}");
}

#[test]
fn a_rerun_after_a_re_plan_replays_it_and_pays_nothing() {
    let repo = Test::repo();
    plan(&repo, "on_fail = replan", ACCEPT_EASY, "");
    repo.loopc(&["run", "-q"]).status(0).run();
    let head = repo.show("loop/re", "out.txt").unwrap();
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(!dry.contains("conflicts with the base"), "{dry}");
    let out = repo.loopc(&["run"]).status(0).run();
    for t in ["design", "design.build", "after"] {
        assert_eq!(repo.status_of(t), "cached", "{t}: {out:?}");
    }
    assert_eq!(repo.state()["spent"]["iterations"], 0, "{out:?}");
    assert_eq!(repo.show("loop/re", "out.txt").unwrap(), head);
    assert!(
        repo.show("loop/re", "plan/work.loop")
            .unwrap()
            .contains("the easy way"),
        "the re-planned fragment is the one replayed"
    );
}

#[test]
fn a_re_plan_that_writes_the_same_fragment_is_told_to_write_another() {
    let repo = Test::repo();
    repo.script(
        "same.sh",
        "#!/bin/sh\ncat > /dev/null\nmkdir -p plan\nprintf 'task build { run = \"false\" attempts = 1 }\\n' > plan/work.loop\n\
         printf '{\"status\":\"completed\",\"summary\":\"planned\"}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        r#"loop "re" { }
budget { iterations = 30 }
agent planner { run = "sh @BIN@/same.sh" }
task design { agent = planner prompt = "Plan." expands = "plan/work.loop" on_fail = replan  replans = 1  attempts = 2 }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let history = repo.task("design")["history"].to_string();
    assert!(
        history.contains(
            "no changes: the attempt changed no file (a task that `expands` writes its plan \
             fragment `plan/work.loop`; re-planning, it writes one other than the one whose \
             task failed)"
        ),
        "{history}"
    );
}
