//! A resolver for merge conflicts: two parallel tasks both edit
//! shared.txt; the second to merge conflicts, and the plan's `resolver`
//! agent (a script that reads the conflicted file and writes a resolution)
//! resolves it in a scratch worktree. A resolution that leaves markers,
//! changes an unlisted file or fails a gate falls back to a retry with the
//! resolver's output as feedback; the integration branch only ever points
//! at gated commits.

use crate::harness::Test;
use serde_json::Value;

/// The agent of tasks `a` and `b`: both wait (bounded) for each other, so
/// both start from the same integration head, then each replaces
/// shared.txt with its own line; on a retry (feedback given) it appends
/// its line on top of the other's work instead.
fn editor(repo: &Test) {
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    repo.script(
        "editor.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
touch "{s}/$LOOP_TASK-$LOOP_ATTEMPT"
i=0
if [ "$LOOP_ATTEMPT" = 1 ]; then
  while [ ! -e "{s}/a-1" ] || [ ! -e "{s}/b-1" ]; do
    i=$((i+1)); [ $i -gt 400 ] && break
    sleep 0.02
  done
fi
if [ -s "$LOOP_FEEDBACK_FILE" ]; then
  echo "edit by $LOOP_TASK" >> shared.txt
else
  echo "edit by $LOOP_TASK" > shared.txt
fi
echo '{{"status":"completed","summary":"edited","cost_usd":0.5}}' > "$LOOP_HANDOFF"
"#,
            s = sync.display()
        ),
    );
}

/// A resolver script: keeps both sides' lines of shared.txt (drops the
/// markers and the common base), then runs `extra` (shell), then writes
/// `handoff` to `$LOOP_HANDOFF`. It also keeps what it was given.
fn resolver(repo: &Test, extra: &str, handoff: &str) {
    let seen = repo.bin.join("seen");
    std::fs::create_dir_all(&seen).unwrap();
    repo.script(
        "resolver.sh",
        &format!(
            r#"#!/bin/sh
cat > "{seen}/stdin.md"
env | grep '^LOOP_' | sort > "{seen}/env.txt"
cp shared.txt "{seen}/conflicted.txt"
awk '/^<<<<<<< /{{s=1;next}} /^\|\|\|\|\|\|\| /{{s=2;next}} /^=======$/{{s=3;next}} /^>>>>>>> /{{s=0;next}} s!=2{{print}}' shared.txt > "$TMPDIR/r" && cat "$TMPDIR/r" > shared.txt
{extra}
echo "resolver says: kept both lines"
printf '%s' '{handoff}' > "$LOOP_HANDOFF"
"#,
            seen = seen.display()
        ),
    );
}

const COMPLETED: &str = r#"{"status":"completed","summary":"kept both","cost_usd":0.25}"#;

fn setup(repo: &Test, gate: Option<&str>) {
    repo.write("shared.txt", "original\n");
    if let Some(g) = gate {
        repo.write("check.sh", g);
    }
    repo.commit("shared file");
    editor(repo);
    let gates = if gate.is_some() {
        "gate tests = \"sh check.sh\"\ndefaults { agent = bot  gates = [tests] }"
    } else {
        "defaults { agent = bot }"
    };
    repo.plan(&format!(
        r#"
loop "res" {{ parallel = 2  resolver = fixer }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/editor.sh" }}
agent fixer {{ run = "sh @BIN@/resolver.sh" }}
{gates}
task a "Task A" {{ prompt = "Write A's line." }}
task b "Task B" {{ prompt = "Write B's line." }}
"#
    ));
}

fn resolver_events(repo: &Test) -> Vec<Value> {
    repo.events()
        .into_iter()
        .filter(|e| e["event"] == "resolver_finished")
        .collect()
}

/// Every commit the integration branch pointed at, from its reflog.
fn heads(repo: &Test) -> Vec<String> {
    repo.git(&["reflog", "--format=%H", "refs/heads/loop/res"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_resolver_resolves_the_conflict_into_a_gated_commit_with_both_changes() {
    let repo = Test::repo();
    // The project's tests: no conflict markers, and the gate leaves a
    // trace of every tree it passed.
    let passed = repo.bin.join("passed");
    std::fs::create_dir_all(&passed).unwrap();
    setup(
        &repo,
        Some(&format!(
            "#!/bin/sh\nif grep -q '^<<<<<<<' shared.txt; then echo markers; exit 1; fi\n\
             git rev-parse HEAD^{{tree}} > \"{}/$(git rev-parse HEAD^{{tree}})\"\n",
            passed.display()
        )),
    );
    resolver(&repo, "", COMPLETED);
    repo.loopc(&["run"]).status(0).run();

    let res = resolver_events(&repo);
    assert_eq!(res.len(), 1, "{res:?}");
    let r = &res[0];
    assert_eq!(r["resolved"], true, "{r}");
    assert_eq!(r["agent"], "fixer");
    assert_eq!(r["conflicts"], serde_json::json!(["shared.txt"]));
    let loser = r["task"].as_str().unwrap().to_string();
    let winner = if loser == "a" { "b" } else { "a" };
    assert_eq!(r["with"], serde_json::json!([winner]), "{r}");
    // Both changes are on the integration branch, in a merge commit made
    // from the resolution, which the gate passed.
    let shared = repo.show("loop/res", "shared.txt").unwrap();
    assert_eq!(shared, format!("edit by {winner}\nedit by {loser}\n"));
    let merged: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "merged" && e["task"] == loser.as_str())
        .collect();
    assert_eq!(merged[0]["how"], "resolved", "{merged:?}");
    let head = repo.git(&["rev-parse", "loop/res"]);
    assert_eq!(merged[0]["commit"], head.as_str());
    assert_eq!(r["commit"], head.as_str());
    let parents = repo.git(&["rev-list", "--parents", "-n1", "loop/res"]);
    assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
    for h in heads(&repo) {
        let tree = repo.git(&["rev-parse", &format!("{h}^{{tree}}")]);
        assert!(
            passed.join(&tree).exists() || h == repo.git(&["rev-parse", "main"]),
            "the integration branch pointed at {h}, whose tree no gate passed"
        );
    }
    // No retry: both tasks passed at attempt 1.
    assert_eq!(repo.task("a")["attempts"], 1);
    assert_eq!(repo.task("b")["attempts"], 1);

    // The resolver's prompt holds both tasks' titles and prompts and the
    // conflicted file with its markers; it ran with the protocol's variables.
    let stdin = std::fs::read_to_string(repo.bin.join("seen/stdin.md")).unwrap();
    for want in [
        "Task A",
        "Task B",
        "Write A's line.",
        "Write B's line.",
        "### `shared.txt`",
        "<<<<<<<",
        "|||||||",
        "LOOP_HANDOFF",
        "extra_files",
    ] {
        assert!(stdin.contains(want), "{want} not in the prompt:\n{stdin}");
    }
    let env = std::fs::read_to_string(repo.bin.join("seen/env.txt")).unwrap();
    assert!(env.contains(&format!("LOOP_TASK={loser}\n")), "{env}");
    assert!(env.contains("LOOP_ATTEMPT=1\n"), "{env}");
    let conflicted = std::fs::read_to_string(repo.bin.join("seen/conflicted.txt")).unwrap();
    assert!(conflicted.contains(">>>>>>>"), "{conflicted}");

    // Its cost, iterations and logs are the attempt's.
    let t = repo.task(&loser);
    let h = &t["history"][0];
    assert_eq!(h["resolver"]["resolved"], true, "{t}");
    assert_eq!(h["resolver"]["cost_micro_usd"], 250_000, "{t}");
    // The agent's $0.50 and the resolver's $0.25.
    assert_eq!(h["cost_micro_usd"], 750_000, "{t}");
    assert_eq!(t["cost_micro_usd"], 750_000, "{t}");
    let logs = h["resolver"]["logs"].as_str().unwrap();
    assert!(
        logs.ends_with(&format!(".loopc/logs/{loser}/1/resolver")),
        "{logs}"
    );
    let out = std::fs::read_to_string(format!("{logs}/agent.stdout")).unwrap();
    assert!(out.contains("resolver says"), "{out}");
    // Every file docs/state.md lists for `resolver/`.
    for file in [
        "prompt.md",
        "feedback.md",
        "progress.md",
        "handoff.json",
        "agent.stderr",
        "resolution.patch",
    ] {
        assert!(std::path::Path::new(logs).join(file).exists(), "{file}");
    }
    // The gate ran on the resolution, logged under the attempt.
    assert!(
        repo.root
            .join(format!(".loopc/logs/{loser}/1/merge-tests.log"))
            .exists()
    );
    // `loopc logs` shows the resolver's files after the attempt's own.
    let shown = repo.loopc(&["logs", &loser]).run().stdout;
    let own = shown.find(&format!("{loser}/1/agent.stdout <==")).unwrap();
    let its = shown
        .find(&format!("{loser}/1/resolver/agent.stdout <=="))
        .unwrap();
    assert!(own < its, "{shown}");
    assert!(shown.contains("resolver says: kept both lines"), "{shown}");
    // Two agent attempts and the resolver's run.
    assert_eq!(repo.state()["spent"]["iterations"], 3);
    assert!(
        repo.extra_worktrees().is_empty(),
        "{:?}",
        repo.extra_worktrees()
    );
}

#[test]
fn a_resolvers_prompt_starts_with_its_tasks_context_files() {
    let repo = Test::repo();
    setup(&repo, None);
    repo.write("DESIGN.md", "# Design\nKeep both sides.\n");
    repo.commit("design");
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    repo.write(
        "plan.loop",
        plan.replace(
            "defaults { agent = bot",
            "defaults { agent = bot context = [\"DESIGN.md\"]",
        ),
    );
    resolver(&repo, "", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(resolver_events(&repo).len(), 1);
    let stdin = std::fs::read_to_string(repo.bin.join("seen/stdin.md")).unwrap();
    assert!(
        stdin.starts_with(
            "## Context: DESIGN.md\n# Design\nKeep both sides.\n\n# Resolve a merge conflict\n"
        ),
        "{stdin}"
    );
}

/// The task that lost the race, its second attempt's feedback, and the
/// resolver's event, after a run in which the resolution was refused.
fn refused(repo: &Test) -> (String, String, Value) {
    let res = resolver_events(repo);
    assert_eq!(res.len(), 1, "{res:?}");
    let r = res[0].clone();
    assert_eq!(r["resolved"], false, "{r}");
    let loser = r["task"].as_str().unwrap().to_string();
    let winner = if loser == "a" { "b" } else { "a" };
    // Today's retry: attempt 2 redid the change on top of the other's.
    assert_eq!(repo.task(&loser)["attempts"], 2);
    assert_eq!(
        repo.show("loop/res", "shared.txt").unwrap(),
        format!("edit by {winner}\nedit by {loser}\n")
    );
    let fb = std::fs::read_to_string(repo.root.join(format!(".loopc/logs/{loser}/2/feedback.md")))
        .unwrap();
    assert!(fb.contains("shared.txt"), "{fb}");
    let failed = repo
        .events()
        .into_iter()
        .find(|e| e["event"] == "attempt_finished" && e["outcome"] == "failed")
        .unwrap();
    let reason = failed["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("merge conflict in shared.txt; resolver `fixer` did not resolve it"),
        "{reason}"
    );
    // The refused run is still recorded under the failed attempt.
    let h = &repo.task(&loser)["history"][0];
    assert_eq!(h["outcome"], "failed");
    assert_eq!(h["resolver"]["resolved"], false, "{h}");
    (loser, fb, r)
}

#[test]
fn a_resolution_that_leaves_markers_falls_back_to_a_retry() {
    let repo = Test::repo();
    setup(&repo, None);
    // Puts the markers back after resolving.
    resolver(
        &repo,
        r#"cp "$(dirname "$0")/seen/conflicted.txt" shared.txt"#,
        COMPLETED,
    );
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    let why = r["reason"].as_str().unwrap();
    assert!(
        why.starts_with("its resolution leaves conflict markers (shared.txt:"),
        "{why}"
    );
    assert!(fb.contains("leaves conflict markers"), "{fb}");
    assert!(fb.contains("resolver says: kept both lines"), "{fb}");
}

#[test]
fn a_resolution_that_changes_an_unlisted_file_falls_back_to_a_retry() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(&repo, "echo tidy > unrelated.txt", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    assert!(fb.contains("resolver says: kept both lines"), "{fb}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("outside the conflict"), "{why}");
    assert!(why.ends_with("unrelated.txt"), "{why}");
    assert!(!repo.files_at("loop/res").contains(&"unrelated.txt".into()));
}

#[test]
fn a_file_listed_in_extra_files_may_change() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(
        &repo,
        "echo tidy > unrelated.txt",
        r#"{"status":"completed","summary":"also tidied","extra_files":["unrelated.txt"]}"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let res = resolver_events(&repo);
    assert_eq!(res[0]["resolved"], true, "{res:?}");
    assert_eq!(repo.show("loop/res", "unrelated.txt").unwrap(), "tidy\n");
}

#[test]
fn a_resolution_that_fails_a_gate_never_reaches_the_integration_branch() {
    let repo = Test::repo();
    setup(
        &repo,
        Some(
            "#!/bin/sh\nif grep -q BROKEN shared.txt; then echo 'shared.txt is BROKEN'; exit 1; fi\n",
        ),
    );
    resolver(&repo, "echo BROKEN >> shared.txt", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    let why = r["reason"].as_str().unwrap();
    assert!(
        why.starts_with("its resolution failed a check: gate `tests` failed"),
        "{why}"
    );
    assert!(fb.contains("shared.txt is BROKEN"), "{fb}");
    assert!(fb.contains("resolver says: kept both lines"), "{fb}");
    // The resolution commit exists nowhere the branch ever pointed.
    for h in heads(&repo) {
        let text = repo.show(&h, "shared.txt").unwrap_or_default();
        assert!(
            !text.contains("BROKEN"),
            "the branch pointed at {h}:\n{text}"
        );
    }
    // The resolver's run counts: two agent attempts of the loser, one of
    // the winner, and the resolver.
    assert_eq!(repo.state()["spent"]["iterations"], 4);
}

#[test]
fn a_resolver_that_fails_falls_back_to_a_retry_with_its_stderr() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(
        &repo,
        "echo 'cannot tell which line wins' >&2; exit 3",
        COMPLETED,
    );
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    // Its last stderr line is in the reason.
    assert_eq!(
        r["reason"], "it failed (exit status 3): cannot tell which line wins",
        "{r}"
    );
    assert!(fb.contains("cannot tell which line wins"), "{fb}");
}

#[test]
fn a_resolver_whose_handoff_says_failed_falls_back_to_a_retry() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(
        &repo,
        "",
        r#"{"status":"failed","summary":"the two lines contradict each other"}"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    assert_eq!(
        r["reason"], "its handoff says failed: the two lines contradict each other",
        "{r}"
    );
    assert!(fb.contains("the two lines contradict each other"), "{fb}");
}

#[test]
fn without_a_resolver_a_conflict_is_retried_as_before() {
    let repo = Test::repo();
    setup(&repo, None);
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    repo.write("plan.loop", plan.replace("  resolver = fixer", ""));
    resolver(&repo, "", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    assert!(resolver_events(&repo).is_empty());
    assert!(!repo.bin.join("seen/stdin.md").exists());
    let failed = repo.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["reason"], "merge conflict in shared.txt");
}

#[test]
fn the_nearest_resolver_wins() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "res" { resolver = one }
agent one { run = "true" }
agent two { run = "true" }
agent three { run = "true" }
defaults { agent = one  resolver = two }
task a { prompt = "x" }
task b { prompt = "x"  resolver = three }
task c { run = "true" }
"#,
    );
    let out = repo.loopc(&["graph", "--format", "json"]).run();
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    let resolver_of = |name: &str| {
        plan["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["resolver"]["name"]
            .clone()
    };
    assert_eq!(resolver_of("a"), "two");
    assert_eq!(resolver_of("b"), "three");
    assert_eq!(resolver_of("c"), "two");
}

#[test]
fn an_unknown_resolver_is_e0005_at_its_name() {
    let repo = Test::repo();
    repo.plan(
        "agent fixer { run = \"true\" }\ndefaults { agent = fixer }\nbudget { iterations = 3 }\n\
         task a { prompt = \"x\"  resolver = fixr }\n",
    );
    let out = repo.loopc(&["check", "--format", "json"]).status(1).run();
    let d: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(d["code"], "E0005", "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("unknown agent `fixr`"),
        "{d}"
    );
    // Line 4 (0-based 3), the name after `resolver = `.
    assert_eq!(d["range"]["start"]["line"], 3, "{d}");
    assert_eq!(d["range"]["start"]["character"], 34, "{d}");
    assert_eq!(d["range"]["end"]["character"], 38, "{d}");
    let human = repo.loopc(&["check"]).status(1).run().stderr;
    assert!(human.contains("fixer"), "did you mean: {human}");
    // On `loop` and `defaults` too.
    repo.plan(
        "loop \"x\" { resolver = nobody }\nagent fixer { run = \"true\" }\n\
         defaults { agent = fixer  resolver = nobody2 }\nbudget { iterations = 3 }\n\
         task a { prompt = \"x\" }\n",
    );
    let out = repo.loopc(&["check", "--format", "json"]).status(1).run();
    let codes: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    assert_eq!(codes.len(), 2, "{codes:?}");
    assert!(codes.iter().all(|d| d["code"] == "E0005"), "{codes:?}");
}

/// `examples/resolver/run.sh`, as docs/running.md points to it: the two
/// tasks conflict, the scripted resolver keeps both entries, the run
/// passes, and nothing is left in the temporary directory.
#[test]
fn the_resolver_example_runs_end_to_end() {
    let (stdout, stderr) = crate::harness::run_example_script_with_stderr("resolver/run.sh");
    assert!(
        stdout.contains(
            "# Features, one a line, sorted\nexport to PDF\nfull-text search\nimport from CSV\nlogin\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("kept both sides' entries"), "{stdout}");
    assert!(stderr.contains("merged (resolved)"), "{stderr}");
    assert!(
        stdout.contains("the scratch repository is removed"),
        "{stdout}"
    );
}

#[test]
fn a_command_tasks_conflict_is_resolved_too() {
    let repo = Test::repo();
    setup(&repo, None);
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    repo.write(
        "plan.loop",
        plan.replace(
            "{ prompt = \"Write A's line.\" }",
            "{ run = \"sh editor.sh\" }",
        )
        .replace(
            "{ prompt = \"Write B's line.\" }",
            "{ run = \"sh editor.sh\" }",
        ),
    );
    std::fs::copy(repo.bin.join("editor.sh"), repo.root.join("editor.sh")).unwrap();
    repo.commit("the command");
    resolver(&repo, "", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(resolver_events(&repo)[0]["resolved"], true);
    let stdin = std::fs::read_to_string(repo.bin.join("seen/stdin.md")).unwrap();
    assert!(
        stdin.contains("(a command task) It runs: `sh editor.sh`"),
        "{stdin}"
    );
    let shared = repo.show("loop/res", "shared.txt").unwrap();
    assert!(
        shared.contains("edit by a") && shared.contains("edit by b"),
        "{shared}"
    );
}

/// The attempts of all tasks that ended `failed`, from the events.

#[test]
fn ctrl_c_kills_a_running_resolver_at_once_and_counts_no_failure() {
    let repo = Test::repo();
    setup(&repo, None);
    let marker = format!("resolver-sleep-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    let started = repo.bin.join("resolver-started");
    let after = repo.bin.join("resolver-after-sleep");
    resolver(
        &repo,
        &format!(
            "touch {}; {sleeper} 100; touch {}",
            started.display(),
            after.display()
        ),
        COMPLETED,
    );
    let plan = std::fs::read_to_string(repo.root.join("plan.loop")).unwrap();
    repo.write(
        "plan.loop",
        plan.replace(
            "run = \"sh @BIN@/resolver.sh\"",
            "run = \"sh @BIN@/resolver.sh\"  timeout = 100",
        ),
    );
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(20_000, || started.exists()));
    crate::harness::signal(run.id(), libc::SIGINT);
    assert_eq!(run.wait().unwrap().code(), Some(130));
    // The resolver's sleep was killed, not waited out.
    assert!(crate::harness::no_process_with(&marker));
    assert!(!after.exists());
    // Its attempt was interrupted, not failed, and is not counted.
    assert!(
        repo.finished_attempts("failed").is_empty(),
        "{:?}",
        repo.finished_attempts("failed")
    );
    let res = resolver_events(&repo);
    assert_eq!(res.len(), 1, "{res:?}");
    let loser = res[0]["task"].as_str().unwrap();
    assert_eq!(res[0]["resolved"], false);
    assert_eq!(repo.status_of(loser), "interrupted");
    assert_eq!(repo.task(loser)["attempts"], 0, "{}", repo.task(loser));
}

/// Two command tasks that start from the same head (each waits, bounded,
/// for the other) and write their own file: the second to finish merges
/// with the first's work, and its merge gates run on both files.
fn two_writers(repo: &Test, gate: &str) {
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    repo.script(
        "writer.sh",
        &format!(
            r#"#!/bin/sh
touch "{s}/$LOOP_TASK"
i=0
while [ ! -e "{s}/a" ] || [ ! -e "{s}/b" ]; do
  i=$((i+1)); [ $i -gt 400 ] && break
  sleep 0.02
done
echo "by $LOOP_TASK" > "$LOOP_TASK.txt"
"#,
            s = sync.display()
        ),
    );
    repo.write("gate.sh", gate);
    repo.commit("the gate");
    repo.plan(
        r#"
loop "res" { parallel = 2 }
budget { iterations = 10 }
gate both = "sh gate.sh"
defaults { gates = [both] }
task a { run = "sh @BIN@/writer.sh" }
task b { run = "sh @BIN@/writer.sh" }
"#,
    );
}

#[test]
fn ctrl_c_kills_a_running_merge_gate_at_once_and_counts_no_failure() {
    let repo = Test::repo();
    let marker = format!("merge-gate-sleep-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    let started = repo.bin.join("gate-started");
    let after = repo.bin.join("gate-after-sleep");
    two_writers(
        &repo,
        &format!(
            "if [ -e a.txt ] && [ -e b.txt ]; then touch {}; {sleeper} 100; touch {}; fi\n",
            started.display(),
            after.display()
        ),
    );
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(20_000, || started.exists()));
    crate::harness::signal(run.id(), libc::SIGINT);
    assert_eq!(run.wait().unwrap().code(), Some(130));
    assert!(crate::harness::no_process_with(&marker));
    assert!(!after.exists());
    assert!(
        repo.finished_attempts("failed").is_empty(),
        "{:?}",
        repo.finished_attempts("failed")
    );
    let interrupted: Vec<String> = ["a", "b"]
        .into_iter()
        .filter(|t| repo.status_of(t) == "interrupted")
        .map(str::to_string)
        .collect();
    assert_eq!(interrupted.len(), 1, "{interrupted:?}");
    let t = repo.task(&interrupted[0]);
    assert_eq!(t["attempts"], 0, "{t}");
    let history = t["history"].to_string();
    assert!(!history.contains("\"failed\""), "{history}");
}

#[test]
fn a_resolver_that_moves_refs_is_refused_and_named() {
    let repo = Test::repo();
    setup(&repo, None);
    let main_before = repo.git(&["rev-parse", "main"]);
    resolver(
        &repo,
        "git branch -f evil-branch HEAD; git update-ref refs/heads/main HEAD",
        COMPLETED,
    );
    repo.loopc(&["run"]).run();
    let res = resolver_events(&repo);
    assert_eq!(res.len(), 1, "{res:?}");
    assert_eq!(res[0]["resolved"], false, "{res:?}");
    let loser = res[0]["task"].as_str().unwrap().to_string();
    let why = res[0]["reason"].as_str().unwrap();
    assert!(
        why.starts_with("refs that are not loopc's changed while the resolver `fixer` ran"),
        "{why}"
    );
    // The resolution never reached the integration branch.
    let merged: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "merged" && e["how"] == "resolved")
        .collect();
    assert!(merged.is_empty(), "{merged:?}");
    let failed = repo.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["task"], loser.as_str());
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("refs that are not loopc's changed: `refs/heads/evil-branch` was created"),
        "{reason}"
    );
    let warnings = repo.state()["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "while the resolver `fixer` of task `{loser}` attempt 1 ran"
        )),
        "{warnings}"
    );
    assert!(!warnings.contains("not while an attempt"), "{warnings}");
    // loopc does not move them back.
    assert_ne!(repo.git(&["rev-parse", "main"]), main_before);
}

#[test]
fn a_merge_gate_that_moves_refs_fails_the_merge_and_is_named() {
    let repo = Test::repo();
    let moved = repo.bin.join("moved");
    two_writers(
        &repo,
        &format!(
            "if [ -e a.txt ] && [ -e b.txt ] && [ ! -e {m} ]; then \
             touch {m}; git branch evil-gate HEAD; fi\n",
            m = moved.display()
        ),
    );
    repo.loopc(&["run"]).run();
    assert!(moved.exists());
    let failed = repo.finished_attempts("failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    let loser = failed[0]["task"].as_str().unwrap().to_string();
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("refs that are not loopc's changed: `refs/heads/evil-gate` was created"),
        "{reason}"
    );
    let warnings = repo.state()["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "while the merge gates of task `{loser}` attempt 1 ran"
        )),
        "{warnings}"
    );
    // The refused merge never moved the integration branch: the loser's
    // only merge is its retry's, on top of the winner's work.
    let merged: Vec<Value> = repo
        .events()
        .into_iter()
        .filter(|e| e["event"] == "merged" && e["task"] == loser.as_str())
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    assert_eq!(merged[0]["how"], "fast_forward", "{merged:?}");
}

#[test]
fn a_resolver_whose_program_is_missing_stops_the_run_before_any_work() {
    let repo = Test::repo();
    repo.plan(
        r#"
loop "res" { resolver = fixer }
budget { iterations = 4 }
agent bot { run = "true" }
agent fixer { run = "nosuchprogram-xyz --resolve" }
task a { agent = bot  prompt = "x" }
"#,
    );
    for args in [&["run", "--dry-run"][..], &["run"][..]] {
        let r = repo.loopc(args).output();
        assert_eq!(r.status, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.contains(
                "agent `fixer`, the resolver of task `a`: `nosuchprogram-xyz` is not a command \
                 the shell can find"
            ),
            "{args:?}: {r:?}"
        );
    }
    let events = std::fs::read_to_string(repo.root.join(".loopc/events.jsonl")).unwrap_or_default();
    assert!(!events.contains("attempt_started"), "{events}");
}

#[test]
fn a_modify_delete_conflict_is_named_in_the_prompt() {
    let repo = Test::repo();
    repo.write("shared.txt", "original\n");
    repo.commit("shared file");
    let sync = repo.bin.join("sync");
    std::fs::create_dir_all(&sync).unwrap();
    // `a` deletes shared.txt, `b` changes it; both from the same head.
    repo.script(
        "w.sh",
        &format!(
            r#"#!/bin/sh
touch "{s}/$LOOP_TASK"
i=0
while [ ! -e "{s}/a" ] || [ ! -e "{s}/b" ]; do
  i=$((i+1)); [ $i -gt 400 ] && break
  sleep 0.02
done
if [ "$LOOP_TASK" = a ]; then rm shared.txt; else echo "edit by b" > shared.txt; fi
"#,
            s = sync.display()
        ),
    );
    resolver(&repo, "", COMPLETED);
    repo.plan(
        r#"
loop "res" { parallel = 2  resolver = fixer }
budget { iterations = 10 }
agent fixer { run = "sh @BIN@/resolver.sh" }
task a { run = "sh @BIN@/w.sh" }
task b { run = "sh @BIN@/w.sh" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let res = resolver_events(&repo);
    assert_eq!(res.len(), 1, "{res:?}");
    let loser = res[0]["task"].as_str().unwrap();
    let stdin = std::fs::read_to_string(repo.bin.join("seen/stdin.md")).unwrap();
    assert!(stdin.contains("A modify/delete conflict"), "{stdin}");
    let want = if loser == "a" {
        "the task's change deletes this file, and the work merged meanwhile changed it"
    } else {
        "the work merged meanwhile deleted this file, and the task's change changed it"
    };
    assert!(stdin.contains(want), "{want}:\n{stdin}");
}

#[test]
fn a_resolution_that_deletes_a_file_both_sides_changed_is_refused() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(&repo, "rm shared.txt", COMPLETED);
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    let why = r["reason"].as_str().unwrap();
    assert!(
        why.starts_with("its resolution deletes shared.txt, which both sides changed"),
        "{why}"
    );
    assert!(fb.contains("which both sides changed"), "{fb}");
}

#[test]
fn a_deletion_of_a_file_both_sides_changed_listed_in_extra_files_is_taken() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(
        &repo,
        "rm shared.txt",
        r#"{"status":"completed","summary":"neither line is wanted","extra_files":["shared.txt"]}"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let res = resolver_events(&repo);
    assert_eq!(res[0]["resolved"], true, "{res:?}");
    assert!(repo.show("loop/res", "shared.txt").is_none());
}

#[test]
fn extra_files_outside_the_worktree_are_refused() {
    let repo = Test::repo();
    setup(&repo, None);
    resolver(
        &repo,
        "",
        r#"{"status":"completed","summary":"s","extra_files":["../escaped.txt","/etc/passwd","ok.txt"]}"#,
    );
    repo.loopc(&["run"]).status(0).run();
    let (_, fb, r) = refused(&repo);
    let why = r["reason"].as_str().unwrap();
    assert_eq!(
        why,
        "its handoff's \"extra_files\" names paths that are not inside the worktree: \
         ../escaped.txt, /etc/passwd (each must be relative to the repository root and stay \
         inside it)",
        "{r}"
    );
    assert!(fb.contains("../escaped.txt"), "{fb}");
}
