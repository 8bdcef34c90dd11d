//! Executors: every command of an attempt (agent, command task, `accept`,
//! gates, `setup`) is launched through its executor as `RUN sh -c 'CMD'`;
//! the shipped bubblewrap sandbox (`examples/sandbox/loopc-bwrap`) runs a
//! plan end to end and keeps hostile agents from writing outside their
//! worktree. Real repositories, real processes, real `bwrap`.

use crate::harness::{SIMPLE_AGENT, Test};
use std::collections::BTreeMap;

/// A launcher that records, per call, `LOOP_TASK`, its argument count, its
/// first two arguments and the command (its third), then runs it.
const RECORDING_LAUNCHER: &str = r#"#!/bin/sh
{
  printf 'task=%s argc=%s 1=%s 2=%s\n' "${LOOP_TASK-}" "$#" "$1" "$2"
  printf '%s\n---\n' "$3"
} >> "$(dirname "$0")/launches"
exec "$@"
"#;

fn launches(repo: &Test) -> String {
    std::fs::read_to_string(repo.bin.join("launches")).unwrap_or_default()
}

#[test]
fn every_command_of_an_attempt_goes_through_its_executor_as_one_argument() {
    let repo = Test::repo();
    repo.script("launch.sh", RECORDING_LAUNCHER);
    repo.script("agent.sh", SIMPLE_AGENT);
    // Quotes, `$` and a pipe in the commands: the launcher must get each
    // exactly as written, as one argument.
    repo.plan(
        r#"
loop "ex" { setup = "echo 'set up' | cat > /dev/null"  executor = wrap }
budget { iterations = 4 }
executor wrap { run = "sh @BIN@/launch.sh" }
agent bot { run = "X='it''s' sh @BIN@/agent.sh"  executor = wrap }
gate tests { run = "test \"$LOOP_TASK\" = a || test -f c.txt"  executor = wrap }
defaults { agent = bot  gates = [tests]  executor = wrap }
task a { prompt = "x"  accept = "test -f a.txt" }
task c { run = "echo c > c.txt" }
"#,
    );
    repo.loopc(&["run"]).status(0).run();
    assert_eq!(repo.show("loop/ex", "a.txt").unwrap(), "made by a\n");
    assert_eq!(repo.show("loop/ex", "c.txt").unwrap(), "c\n");
    let log = launches(&repo);
    let calls: Vec<&str> = log.split("---\n").filter(|c| !c.is_empty()).collect();
    for call in &calls {
        assert!(call.contains(" argc=3 1=sh 2=-c\n"), "{call}");
    }
    let commands: Vec<String> = calls
        .iter()
        .map(|c| c.split_once('\n').unwrap().1.trim_end().to_string())
        .collect();
    let bin = repo.bin.display();
    for want in [
        "echo 'set up' | cat > /dev/null".to_string(),
        format!("X='it''s' sh {bin}/agent.sh"),
        "test -f a.txt".to_string(),
        "test \"$LOOP_TASK\" = a || test -f c.txt".to_string(),
        "echo c > c.txt".to_string(),
    ] {
        assert!(commands.contains(&want), "{want:?} not in {commands:?}");
    }
    // setup, agent, accept and gate for a; setup, command and gate for c:
    // nothing ran beside the executor.
    assert_eq!(calls.len(), 7, "{log}");
    // The prefix is expanded with the attempt's LOOP_* variables.
    assert!(log.contains("task=a argc=3"), "{log}");
    assert!(log.contains("task=c argc=3"), "{log}");
}

#[test]
fn a_missing_launcher_stops_the_run_before_any_work() {
    let repo = Test::repo();
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.plan(
        r#"
loop "ex" { }
budget { iterations = 4 }
executor farm { run = "no-such-launcher-xyz --job-name=loopc-$LOOP_TASK" }
agent bot { run = "sh @BIN@/agent.sh"  executor = farm }
task a { agent = bot  prompt = "x" }
"#,
    );
    let r = repo.loopc(&["run"]).output();
    assert_eq!(r.status, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "plan.loop:4:23: executor `farm`, launching agent `bot` (task `a`): \
             `no-such-launcher-xyz` is not a command the shell can find"
        ),
        "{r:?}"
    );
    assert!(repo.bin.join("a.txt").metadata().is_err());
}

/// A launcher that, on SIGTERM, needs 3 s to end what it started (as `srun`
/// waits for a cluster to cancel a job), then records that it did.
const SLOW_TO_CANCEL_LAUNCHER: &str = r#"#!/bin/sh
here=$(dirname "$0")
trap 'kill "$child"; sleep 3; echo cancelled > "$here/cancelled"; exit 143' TERM
"$@" &
child=$!
echo started > "$here/started"
wait "$child"
"#;

#[test]
fn on_ctrl_c_a_launcher_gets_time_to_cancel_what_it_started() {
    let repo = Test::repo();
    repo.script("launch.sh", SLOW_TO_CANCEL_LAUNCHER);
    repo.plan(
        r#"
loop "ex" { }
budget { iterations = 4 }
executor farm { run = "sh @BIN@/launch.sh" }
agent bot { run = "sleep 60"  executor = farm }
task a { agent = bot  prompt = "x" }
"#,
    );
    let mut run = repo.loopc(&["run"]).spawn();
    assert!(
        repo.wait_for(6000, || repo.bin.join("started").exists()),
        "{}",
        repo.spawned_stderr()
    );
    crate::harness::signal(run.id(), libc::SIGINT);
    assert_eq!(run.wait().unwrap().code(), Some(130));
    // Killed 2 s after SIGTERM, as a command without an executor is, the
    // launcher would never have finished cancelling.
    assert_eq!(
        std::fs::read_to_string(repo.bin.join("cancelled")).unwrap_or_default(),
        "cancelled\n",
        "{}",
        repo.spawned_stderr()
    );
}

// The bubblewrap sandbox ------------------------------------------------------

/// Whether `bwrap` can make the example's sandbox here (it needs user
/// namespaces, or root).
fn bwrap_works() -> Result<(), String> {
    crate::harness::program_runs(
        "bwrap",
        &[
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--unshare-net",
            "true",
        ],
    )
}

/// A repository whose plan runs every agent and gate through the shipped
/// `loopc-bwrap` (copied beside the agents, outside the repository), with
/// HOME a fake home holding `~/.ssh/authorized_keys`.
struct Sandboxed {
    repo: Test,
    home: std::path::PathBuf,
}

fn sandboxed(agent: &str, sandbox: bool) -> Sandboxed {
    let repo = Test::repo();
    repo.write("tracked.txt", "committed\n");
    repo.commit("tracked");
    repo.git(&["branch", "feature"]);
    repo.write("untracked.txt", "user's file\n");
    std::fs::write(
        repo.root.join(".git/info/exclude"),
        "/plan.loop\n/.loopc/\n",
    )
    .unwrap();
    let home = repo.bin.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/authorized_keys"), "ssh-ed25519 AAAA user\n").unwrap();
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sandbox/loopc-bwrap"),
    )
    .unwrap();
    repo.script("loopc-bwrap", &script);
    repo.script("agent.sh", agent);
    let executor = if sandbox { "executor = box" } else { "" };
    repo.plan(&format!(
        r#"
loop "sb" {{ }}
budget {{ iterations = 4 }}
executor box {{ run = "@BIN@/loopc-bwrap --no-network" }}
agent bot {{ run = "sh @BIN@/agent.sh" }}
gate clean {{ run = "test -z \"$(git status --porcelain)\"" }}
defaults {{ agent = bot  gates = [clean]  {executor} }}
task t {{ prompt = "x"  attempts = 1  env = {{ USER_REPO = "{}" }} }}
"#,
        repo.root.display()
    ));
    Sandboxed { repo, home }
}

impl Sandboxed {
    fn run(&self) -> crate::harness::Output {
        self.repo.loopc(&["run"]).env("HOME", &self.home).output()
    }

    /// Every ref of the user's (not loopc's), the checkout's files, the
    /// fake home's `authorized_keys`.
    fn user_view(&self) -> BTreeMap<String, String> {
        let mut v = BTreeMap::new();
        for l in self
            .repo
            .git(&["for-each-ref", "--format=%(refname) %(objectname)"])
            .lines()
        {
            if let Some((r, o)) = l.split_once(' ')
                && !r.starts_with("refs/heads/loopc/")
                && !r.starts_with("refs/heads/loop/")
                && !r.starts_with("refs/loopc/")
            {
                v.insert(r.to_string(), o.to_string());
            }
        }
        for f in ["tracked.txt", "untracked.txt", ".git/HEAD"] {
            v.insert(
                f.to_string(),
                std::fs::read_to_string(self.repo.root.join(f)).unwrap_or_default(),
            );
        }
        v.insert(
            "~/.ssh/authorized_keys".to_string(),
            std::fs::read_to_string(self.home.join(".ssh/authorized_keys")).unwrap(),
        );
        v
    }
}

/// Tries everything a hostile agent does, each step allowed to fail, then
/// does its work and reports which steps the sandbox refused.
const HOSTILE_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
refused=""
try() { name=$1; shift; if ! "$@" 2>/dev/null; then refused="$refused $name"; fi; }
main=$(git rev-parse HEAD)
try branch git branch -f feature "$main~1"
try update-ref git update-ref refs/heads/feature "$main~1"
try ref-file sh -c "echo $main > '$USER_REPO/.git/refs/heads/evil'"
try checkout sh -c "echo owned > '$USER_REPO/tracked.txt'"
try new-file sh -c "echo owned > '$USER_REPO/owned.txt'"
try ssh sh -c "echo ssh-rsa EVIL >> '$HOME/.ssh/authorized_keys'"
try commit sh -c "echo x > c.txt && git add c.txt && git commit -qm agent"
try tmp sh -c "echo x > /tmp/loopc-sandbox-escape-$$"
rm -f c.txt
echo "refused:$refused" > report.txt
scratch=$(mktemp)
echo ok > "$scratch"
net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')
printf '{"status":"completed","summary":"refused:%s; interfaces: %s"}' "$refused" "$net" > "$LOOP_HANDOFF"
"#;

#[test]
fn in_the_sandbox_a_hostile_agent_writes_nothing_outside_its_worktree() {
    if !crate::harness::require("bwrap", bwrap_works()) {
        return;
    }
    let s = sandboxed(HOSTILE_AGENT, true);
    let before = s.user_view();
    let r = s.run();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(s.user_view(), before, "{r:?}");
    assert!(!s.repo.root.join("owned.txt").exists());
    // Every hostile step was refused; the work itself went through, and
    // loopc (not the agent) committed it.
    let summary = s.repo.task("t")["summary"].as_str().unwrap().to_string();
    assert!(
        summary
            .starts_with("refused: branch update-ref ref-file checkout new-file ssh commit tmp; "),
        "{summary}"
    );
    assert!(
        summary.ends_with("interfaces: lo "),
        "no network: {summary}"
    );
    let report = s.repo.show("loop/sb", "report.txt").unwrap();
    assert!(report.starts_with("refused: branch"), "{report}");
    let log = s.repo.git(&["log", "--format=%s", "main..loop/sb"]);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(!log.contains("agent"), "{log}");
    assert!(s.repo.show("loop/sb", "c.txt").is_none());
}

#[test]
fn a_writable_directory_is_writable_in_the_sandbox_and_nothing_else_is() {
    if !crate::harness::require("bwrap", bwrap_works()) {
        return;
    }
    let s = sandboxed(
        "#!/bin/sh\ncat > /dev/null\necho session > \"$HOME/.agent-cli/state\" \
         && echo 'ssh-rsa EVIL' >> \"$HOME/.ssh/authorized_keys\"; echo work > work.txt\n\
         printf '{\"status\":\"completed\",\"summary\":\"ok\"}' > \"$LOOP_HANDOFF\"\n",
        true,
    );
    let cli = s.home.join(".agent-cli");
    std::fs::create_dir_all(&cli).unwrap();
    let text = std::fs::read_to_string(s.repo.root.join("plan.loop")).unwrap();
    std::fs::write(
        s.repo.root.join("plan.loop"),
        text.replace(
            "--no-network\"",
            &format!("--no-network --writable {}\"", cli.display()),
        ),
    )
    .unwrap();
    let r = s.run();
    assert_eq!(r.status, 0, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(cli.join("state")).unwrap(),
        "session\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.home.join(".ssh/authorized_keys")).unwrap(),
        "ssh-ed25519 AAAA user\n"
    );
}

/// A sandbox that cannot be set up is the sandbox's failure, not the
/// agent's: retried without counting attempts, iterations or cost, then
/// the task is blocked, naming why.
#[test]
fn a_sandbox_that_cannot_start_costs_no_attempt() {
    if !crate::harness::require("bwrap", bwrap_works()) {
        return;
    }
    let s = sandboxed(SIMPLE_AGENT, true);
    let plan = std::fs::read_to_string(s.repo.root.join("plan.loop")).unwrap();
    let missing = s.repo.bin.join("no-such-dir");
    s.repo.write(
        "plan.loop",
        plan.replace(
            "--no-network\" }",
            &format!("--no-network --writable {}\"  }}\nagent capped {{ run = \"sh {}/agent.sh\"  cost = $1 }}", missing.display(), s.repo.bin.display()),
        )
        .replace("defaults { agent = bot", "defaults { agent = capped"),
    );
    let r = s.run();
    assert_eq!(r.status, 1, "{r:?}");
    let t = s.repo.task("t");
    assert_eq!(t["status"], "blocked", "{r:?}");
    assert_eq!(t["attempts"], 0, "{t}");
    let reason = t["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "executor `box` ended the command: --writable {} is not a directory",
            missing.display()
        )),
        "{reason}"
    );
    let spent = &s.repo.state()["spent"];
    assert_eq!(
        (&spent["iterations"], &spent["cost_micro_usd"]),
        (&0.into(), &0.into()),
        "{spent}"
    );
}

#[test]
fn without_the_sandbox_the_same_agent_does_harm() {
    // The test above could not pass by accident: run directly, the same
    // agent moves the user's branch and writes to ~/.ssh and the checkout.
    let s = sandboxed(HOSTILE_AGENT, false);
    let before = s.user_view();
    let r = s.run();
    assert_eq!(r.status, 1, "the guard fails the attempt: {r:?}");
    let after = s.user_view();
    assert_ne!(after["refs/heads/feature"], before["refs/heads/feature"]);
    assert!(after.contains_key("refs/heads/evil"));
    assert!(after["~/.ssh/authorized_keys"].contains("EVIL"));
    assert_eq!(after["tracked.txt"], "owned\n");
    for leftover in std::fs::read_dir("/tmp").unwrap().filter_map(Result::ok) {
        if leftover
            .file_name()
            .to_string_lossy()
            .starts_with("loopc-sandbox-escape-")
        {
            let _ = std::fs::remove_file(leftover.path());
        }
    }
}

#[test]
fn what_an_agent_reported_before_its_executor_failed_is_spent() {
    // The launcher runs the agent, which reports $0.01, then says the job
    // failed (a node lost): infrastructure, retried; each try's reported
    // cost counts (never the cap: the agent may not have started).
    let repo = Test::repo();
    repo.script(
        "launch.sh",
        "#!/bin/sh\n\"$@\"\necho 'failed node lost' >> \"$LOOP_EXECUTOR_REPORT\"\nexit 1\n",
    );
    repo.script(
        "agent.sh",
        "#!/bin/sh\ncat > /dev/null\necho w > w.txt\nprintf '{\"status\":\"completed\",\"summary\":\"ok\",\"cost_usd\":0.01}' > \"$LOOP_HANDOFF\"\n",
    );
    repo.plan(
        r#"
loop "x" { }
budget { iterations = 10  cost = $5 }
executor remote { run = "sh @BIN@/launch.sh" }
agent bot { run = "sh @BIN@/agent.sh"  executor = remote  cost = $1 }
task t { agent = bot  prompt = "x" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    assert_eq!(repo.status_of("t"), "blocked");
    let tries = repo.task("t")["history"].as_array().unwrap().len() as u64;
    assert_eq!(tries, 4, "{}", repo.state());
    assert_eq!(repo.state()["spent"]["cost_micro_usd"], 10_000 * tries);
}

#[test]
fn setup_through_an_executor_gets_its_report_file() {
    let repo = Test::repo();
    repo.script(
        "launch.sh",
        "#!/bin/sh\necho \"report=${LOOP_EXECUTOR_REPORT-UNSET}\"\n\"$@\"\necho 'failed node lost' >> \"$LOOP_EXECUTOR_REPORT\"\nexit 1\n",
    );
    repo.plan(
        r#"
loop "x" { setup = "echo setup-ran"  executor = remote }
executor remote { run = "sh @BIN@/launch.sh" }
task t { run = "echo t > t.txt" }
"#,
    );
    repo.loopc(&["run"]).status(1).run();
    let log = std::fs::read_to_string(repo.root.join(".loopc/logs/t/1/setup.log")).unwrap();
    assert!(
        log.contains("report=") && log.contains("setup.executor"),
        "{log}"
    );
    let reason = repo.task("t")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("executor `remote` ended the command: node lost"),
        "{reason}"
    );
}

#[test]
fn a_dry_run_says_a_command_tasks_executor_changed() {
    let repo = Test::repo();
    repo.script("launch.sh", "#!/bin/sh\n\"$@\"\n");
    let plan = |launcher: &str| {
        format!(
            "loop \"x\" {{ }}\nexecutor remote {{ run = \"{launcher}\" }}\n\
             defaults {{ executor = remote }}\ntask c {{ run = \"echo c > c.txt\" }}\n"
        )
    };
    repo.plan(&plan("sh @BIN@/launch.sh"));
    repo.loopc(&["run", "-q"]).status(0).run();
    repo.plan(&plan("sh @BIN@/launch.sh --x"));
    let dry = repo.loopc(&["run", "--dry-run"]).run().stdout;
    assert!(
        dry.contains("c: run (command or its executor changed)"),
        "{dry}"
    );
}
