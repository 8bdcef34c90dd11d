//! The lock and interrupts: a second run is refused at once naming the
//! first, a lock left by `kill -9` blocks nothing, read-only commands work
//! during a run, and Ctrl-C/SIGTERM kill everything the tasks started
//! (grandchildren too), save state, exit 130 and resume on the next run.

use crate::harness::{Test, no_process_with, process_alive_with};

/// An agent that, while `hold` exists and for task `slow_task`, starts a
/// background sleeper and a foreground one (both marked), after touching
/// `started`; otherwise it writes `<task>.txt` and logs its task name.
fn holding_agent(
    repo: &Test,
    marker: &str,
    slow_task: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let sleeper = repo.marked_sleep(marker);
    let hold = repo.bin.join("hold");
    let started = repo.bin.join("started");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
echo "$LOOP_TASK" >> {log}
if [ "$LOOP_TASK" = {slow_task} ] && [ -e {hold} ]; then
  {sleeper} 1000 &
  touch {started}
  {sleeper} 1000
fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
"#,
            log = repo.bin.join("agent.log").display(),
            hold = hold.display(),
            started = started.display(),
        ),
    );
    (hold, started)
}

fn agent_log(repo: &Test) -> Vec<String> {
    std::fs::read_to_string(repo.bin.join("agent.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_second_run_is_refused_naming_the_first_and_read_only_commands_work() {
    let repo = Test::repo();
    let marker = format!("held-lock-marker-{}", std::process::id());
    let (hold, started) = holding_agent(&repo, &marker, "a");
    repo.plan(
        r#"
loop "sig" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let mut first = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(2000, || started.exists()));
    let second = repo.loopc(&["run"]).output();
    let status = repo.loopc(&["status"]).output();
    let graph = repo.loopc(&["graph", "plan.loop", "--state"]).output();
    let check = repo.loopc(&["check", "plan.loop"]).output();
    std::fs::remove_file(&hold).unwrap();
    // Ending the held attempt: interrupt the first run.
    crate::harness::signal(first.id(), libc::SIGINT);
    assert_eq!(first.wait().unwrap().code(), Some(130));

    assert_eq!(second.status, 2, "{second:?}");
    assert!(
        second
            .stderr
            .contains(&format!("pid {}, started 20", first.id())),
        "{second:?}"
    );
    assert!(second.stderr.contains(".loopc/lock"), "{second:?}");
    assert_eq!(status.status, 0, "{status:?}");
    assert!(status.stdout.contains("running"), "{status:?}");
    assert!(!status.stdout.contains("not going on"), "{status:?}");
    assert_eq!(graph.status, 0, "{graph:?}");
    assert_eq!(check.status, 0, "{check:?}");
    // The refused run started nothing.
    assert_eq!(agent_log(&repo), ["a"]);
}

#[test]
fn a_lock_left_by_kill_9_blocks_nothing() {
    let repo = Test::repo();
    let marker = format!("stale-lock-marker-{}", std::process::id());
    let (hold, started) = holding_agent(&repo, &marker, "a");
    repo.plan(
        r#"
loop "sig" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let mut first = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(2000, || started.exists()));
    let pid = first.id();
    first.kill().unwrap();
    // Not reaped yet: the killed loopc is a zombie, which holds no lock.
    assert!(repo.wait_for(2000, || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
    }));
    let st = repo.loopc(&["status", "--json"]).status(0).run();
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["status"], "killed", "{st:?}");
    first.wait().unwrap();
    std::fs::remove_file(&hold).unwrap();
    // The lock file still names the dead run.
    let lock = std::fs::read_to_string(repo.root.join(".loopc/lock")).unwrap();
    assert!(lock.contains(&format!("pid {pid}")), "{lock}");
    // `status` tells a killed run from a running one; state.json itself
    // still says running.
    let st = repo.loopc(&["status"]).status(0).run();
    assert!(st.stdout.contains(": killed"), "{st:?}");
    // The total line says so too, not "run running".
    assert!(st.stdout.contains("\nrun killed: "), "{st:?}");
    assert!(
        st.stdout
            .contains("the next `loopc run` cleans up after it and resumes"),
        "{st:?}"
    );
    let st = repo.loopc(&["status", "--json"]).run();
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["status"], "killed", "{st:?}");
    assert_eq!(repo.state()["status"], "running");

    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.status_of("a"), "passed");
    assert!(no_process_with(&marker));
}

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP alike: no new work, every process the task
/// started (the agent's background child too) is gone, state is saved,
/// exit 130; the next run resumes without rerunning the passed task, and
/// the interrupted attempt did not use up the task's only attempt.
#[test]
fn sigint_and_sigterm_kill_grandchildren_save_state_and_resume() {
    for (name, sig) in [
        ("int", libc::SIGINT),
        ("term", libc::SIGTERM),
        ("hup", libc::SIGHUP),
    ] {
        let repo = Test::repo();
        let marker = format!("sig-{name}-marker-{}", std::process::id());
        let (hold, started) = holding_agent(&repo, &marker, "b");
        repo.plan(
            r#"
loop "sig" { }
budget { iterations = 10 }
agent bot { run = "sh @BIN@/agent.sh" }
defaults { agent = bot  attempts = 1 }
task a { prompt = "a" }
task b: a { prompt = "b" }
task c: b { prompt = "c" }
"#,
        );
        let mut child = repo.loopc(&["run"]).spawn();
        assert!(
            repo.wait_for(2000, || started.exists()),
            "{name}: b never started"
        );
        assert!(
            repo.wait_for(2000, || process_alive_with(&marker)),
            "{name}: the precondition, a live grandchild"
        );
        crate::harness::signal(child.id(), sig);
        assert_eq!(child.wait().unwrap().code(), Some(130), "{name}");
        assert!(
            no_process_with(&marker),
            "{name}: a process of the agent survived"
        );

        let s = repo.state();
        assert_eq!(s["status"], "interrupted", "{name}");
        assert_eq!(s["exit_code"], 130, "{name}");
        assert_eq!(repo.status_of("a"), "passed", "{name}");
        assert_eq!(repo.status_of("b"), "interrupted", "{name}");
        assert_eq!(repo.task("b")["attempts"], 0, "{name}: not counted");
        assert_eq!(repo.status_of("c"), "pending", "{name}: no new work");
        let stderr = repo.spawned_stderr();
        assert!(stderr.contains("interrupted"), "{name}: {stderr}");

        std::fs::remove_file(&hold).unwrap();
        let r = repo.loopc(&["run"]).output();
        assert_eq!(r.status, 0, "{name}: {r:?}");
        assert_eq!(repo.status_of("a"), "cached", "{name}");
        assert_eq!(repo.status_of("b"), "passed", "{name}");
        assert_eq!(repo.task("b")["attempts"], 1, "{name}");
        assert_eq!(repo.status_of("c"), "passed", "{name}");
        assert_eq!(agent_log(&repo), ["a", "b", "b", "c"], "{name}");
        assert!(repo.extra_worktrees().is_empty(), "{name}");
    }
}

/// A child that leaves the agent's process group (`setsid`) is still the
/// task's: it carries the worktree's `LOOP_WORKTREE` and is killed when the
/// agent ends, as are the children of a timed-out agent.
#[test]
fn children_that_escape_the_process_group_are_killed_too() {
    let repo = Test::repo();
    let marker = format!("escape-marker-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nsetsid {sleeper} 1000 < /dev/null > /dev/null 2>&1 &\n\
             if [ \"$LOOP_TASK\" = slow ]; then setsid {sleeper} 1001 < /dev/null > /dev/null 2>&1 & sleep 1000; fi\n\
             echo \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n"
        ),
    );
    repo.plan(
        r#"
loop "esc" { }
budget { iterations = 5 }
agent bot { run = "sh @BIN@/agent.sh" }
task quick { agent = bot  prompt = "x" }
task slow { agent = bot  prompt = "y"  attempts = 1  timeout = 300ms }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("quick"), "passed");
    assert_eq!(repo.status_of("slow"), "failed");
    assert!(
        no_process_with(&marker),
        "a child that left the group survived"
    );
}

/// A run resumed after Ctrl-C keeps the interrupted attempt's logs: the
/// earlier run's `logs/` moves to `earlier-logs/<k>/`, and `logs/` holds
/// this run's attempts.
#[test]
fn a_resumed_run_keeps_the_interrupted_attempts_logs() {
    let repo = Test::repo();
    let marker = format!("logs-marker-{}", std::process::id());
    let sleeper = repo.marked_sleep(&marker);
    let hold = repo.bin.join("hold");
    let started = repo.bin.join("started");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            r#"#!/bin/sh
cat > /dev/null
if [ -e {hold} ]; then
  echo "first run's output"
  touch {started}
  {sleeper} 1000
fi
echo "second run's output"
echo x > "$LOOP_TASK.txt"
"#,
            hold = hold.display(),
            started = started.display(),
        ),
    );
    repo.plan(
        r#"
loop "sig" { }
agent bot { run = "sh @BIN@/agent.sh" }
task a { agent = bot  prompt = "x" }
"#,
    );
    let mut child = repo.loopc(&["run"]).spawn();
    assert!(repo.wait_for(2000, || started.exists()));
    crate::harness::signal(child.id(), libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    std::fs::remove_file(&hold).unwrap();
    repo.loopc(&["run"]).status(0).run();
    let read = |rel: &str| std::fs::read_to_string(repo.root.join(rel)).unwrap_or_default();
    let now = read(".loopc/logs/a/1/agent.stdout");
    assert!(now.contains("second run's output"), "{now}");
    assert!(!now.contains("first run's output"), "{now}");
    let earlier = read(".loopc/earlier-logs/1/a/1/agent.stdout");
    assert!(earlier.contains("first run's output"), "{earlier}");
    assert_eq!(
        repo.task("a")["logs"]
            .as_str()
            .map(|p| p.ends_with(".loopc/logs/a/1")),
        Some(true)
    );
}

/// A Ctrl-C that lands while git moves the integration branch for a merge:
/// the branch may already have moved when loopc stops git, so loopc reads
/// it again, and a merge that happened is a pass (before: a failed
/// attempt whose work was on the branch all the same).
#[test]
fn a_merge_that_landed_as_the_run_was_stopped_counts_as_passed() {
    let repo = Test::repo();
    let armed = repo.bin.join("armed");
    let landed = repo.bin.join("landed");
    repo.plan(&format!(
        "task a {{ run = \"touch '{}'; echo a > a.txt\" }}\n",
        armed.display()
    ));
    // A `git` that, once the task has run, holds on after moving the
    // integration branch (alone, or with the cache entry in one
    // `update-ref --stdin`), as a slow disk would.
    let path = repo.git_wrapper(|real| {
        format!(
            "#!/bin/sh\n'{real}' \"$@\"; rc=$?\n\
             case \" $* \" in *' update-ref '*' refs/heads/loop/'*|*' update-ref '*' --stdin '*)\n\
             if [ -e '{armed}' ]; then touch '{landed}'; sleep 30; fi;;\nesac\nexit $rc\n",
            armed = armed.display(),
            landed = landed.display()
        )
    });
    let mut child = repo.loopc(&["run"]).env("PATH", &path).spawn();
    assert!(
        repo.wait_for(10_000, || landed.exists()),
        "the merge never ran"
    );
    crate::harness::signal(child.id(), libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(repo.files_at("loop/plan").contains(&"a.txt".to_string()));
    assert_eq!(repo.status_of("a"), "passed", "{}", repo.spawned_stderr());
    let stderr = repo.spawned_stderr();
    assert!(!stderr.contains("failed attempt"), "{stderr}");
}

/// An attempt cut off by Ctrl-C is not counted against `attempts` or
/// `iterations`, but what its agent spent is: the agent reported nothing,
/// so its cost is unknown (`$…+?`, "some costs unknown"), or its `cost` cap
/// when it has one, never $0 (docs/resilience.md, "Ctrl-C and SIGTERM").
#[test]
fn an_interrupted_attempt_s_cost_is_unknown_or_its_cap_never_zero() {
    for (cap, b_cost, total) in [
        ("", "$0+?", "$0.25 (some costs unknown, shown `+?`"),
        ("cost = $0.50", "$0.50", "$0.75,"),
    ] {
        let repo = Test::repo();
        let marker = format!("cost-marker-{}-{}", cap.len(), std::process::id());
        let sleeper = repo.marked_sleep(&marker);
        let started = repo.bin.join("started");
        repo.script(
            "agent.sh",
            &format!(
                r#"#!/bin/sh
cat > /dev/null
if [ "$LOOP_TASK" = b ]; then touch {started}; exec {sleeper} 1000; fi
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{{"status":"completed","summary":"ok","cost_usd":0.25}}' > "$LOOP_HANDOFF"
"#,
                started = started.display(),
            ),
        );
        repo.plan(&format!(
            r#"
loop "sig" {{ }}
budget {{ iterations = 10 }}
agent bot {{ run = "sh @BIN@/agent.sh" {cap} }}
defaults {{ agent = bot  attempts = 1 }}
task a {{ prompt = "a" }}
task b: a {{ prompt = "b" }}
"#
        ));
        let mut child = repo.loopc(&["run"]).spawn();
        assert!(
            repo.wait_for(2000, || started.exists()),
            "{cap}: b never started"
        );
        assert!(repo.wait_for(2000, || process_alive_with(&marker)), "{cap}");
        crate::harness::signal(child.id(), libc::SIGINT);
        assert_eq!(child.wait().unwrap().code(), Some(130), "{cap}");
        assert_eq!(repo.status_of("b"), "interrupted", "{cap}");
        assert_eq!(repo.task("b")["attempts"], 0, "{cap}: not counted");
        assert_eq!(repo.state()["spent"]["iterations"], 1, "{cap}: a's only");
        let status = repo.loopc(&["status"]).output().stdout;
        let row = status
            .lines()
            .find(|l| l.starts_with("b "))
            .unwrap_or_else(|| panic!("{cap}: no row for b in {status}"));
        assert!(row.trim_end().ends_with(b_cost), "{cap}: {status}");
        assert!(
            status.contains(&format!("1 agent attempt, {total}")),
            "{cap}: {status}"
        );
    }
}
