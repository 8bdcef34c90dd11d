//! Executors on a real Slurm cluster: a single-node cluster on this machine
//! (`tests/slurm/start-cluster.sh`), the shipped launcher
//! `examples/slurm/loopc-srun`, and the job records Slurm keeps
//! (`jobcomp/filetxt`, `squeue`, `scontrol`). Every agent and gate command
//! runs as a job step; a timeout, Ctrl-C, or the next run after `kill -9`
//! cancels the jobs; a job cancelled from outside is an infrastructure
//! failure, retried.
//!
//! The cluster is the tests' own (its own configuration, state directory
//! and ports; the script checks that the controller answering is the one
//! it started), never another Slurm the machine runs. Where it cannot
//! start (no root, no `slurm-wlm`), these tests are skipped, saying so
//! ([`crate::harness::require`]), unless `LOOPC_REQUIRE` names `slurm`
//! (`.ci/run` does when it started the cluster), where they fail.

use crate::harness::{SIMPLE_AGENT, Test};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the cluster's configuration, state and logs are (the script's
/// default): shared by the test processes of every checkout, one cluster.
const DIR: &str = "/tmp/loopc-test-slurm";

/// The cluster's configuration file, after starting the cluster once per
/// test process; why not, when it cannot start here.
fn cluster() -> Result<&'static Path, String> {
    static CONF: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    CONF.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/start-cluster.sh");
        let dir = Path::new(DIR);
        match std::process::Command::new("sh")
            .arg(&script)
            .arg(dir)
            .output()
        {
            Ok(o) if o.status.success() => Ok(dir.join("slurm.conf")),
            Ok(o) => Err(format!(
                "tests/slurm/start-cluster.sh failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            )),
            Err(e) => Err(format!("tests/slurm/start-cluster.sh cannot run: {e}")),
        }
    })
    .as_deref()
    .map_err(Clone::clone)
}

macro_rules! need_cluster {
    () => {{
        let cluster = cluster();
        let conf = cluster.as_ref().ok().copied();
        if !crate::harness::require("slurm", cluster.map(|_| ())) {
            return;
        }
        conf.expect("the cluster is up")
    }};
}

/// A repository whose plan's commands run through `loopc-srun` (copied
/// beside the agents).
fn slurm_repo(plan: &str) -> Test {
    let repo = Test::repo();
    let launcher = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slurm/loopc-srun"),
    )
    .unwrap();
    repo.script("loopc-srun", &launcher);
    repo.plan(plan);
    repo
}

fn slurm(conf: &Path, args: &[&str], tool: &str) -> String {
    let out = std::process::Command::new(tool)
        .args(args)
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ids of the queued or running jobs of this repository's worktrees
/// (their comment names the worktree).
fn our_jobs(conf: &Path, repo: &Test) -> Vec<String> {
    let root = repo.root.display().to_string();
    slurm(conf, &["-h", "-o", "%i %k"], "squeue")
        .lines()
        .filter(|l| l.contains(&root))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// The job-completion record (`key=value …`) of job `id`, once written.
fn job_record(conf: &Path, id: &str) -> Option<String> {
    let log = conf.with_file_name("jobcomp.log");
    std::fs::read_to_string(log)
        .ok()?
        .lines()
        .find(|l| l.starts_with(&format!("JobId={id} ")))
        .map(str::to_string)
}

/// The job ids in an attempt's `*.executor` report.
fn reported_jobs(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| l.strip_prefix("job "))
        .filter_map(|l| l.split('.').next().map(str::to_string))
        .collect()
}

/// The cluster the tests use is their own, whatever other Slurm the
/// machine runs (one installed as a service listens on 6817/6818, with no
/// job-completion log): the controller answering the tests' configuration
/// reports the tests' state directory, on a port of their own.
#[test]
fn the_cluster_is_the_tests_own() {
    let conf = need_cluster!();
    let config = slurm(conf, &["show", "config"], "scontrol");
    let field = |name: &str| {
        config
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    assert_eq!(
        field("StateSaveLocation"),
        format!("{DIR}/state"),
        "{config}"
    );
    assert_eq!(field("ClusterName"), "loopc-test", "{config}");
    assert_eq!(
        field("JobCompLoc"),
        format!("{DIR}/jobcomp.log"),
        "{config}"
    );
    for port in ["SlurmctldPort", "SlurmdPort"] {
        assert!(
            !["6817", "6818"].contains(&field(port).as_str()),
            "{port}: {config}"
        );
    }
}

#[test]
fn every_agent_and_gate_command_runs_as_a_slurm_job_step() {
    let conf = need_cluster!();
    let repo = slurm_repo(
        r#"
loop "hpc" { parallel = 2 }
budget { iterations = 4 }
executor slurm { run = "@BIN@/loopc-srun --time=5" }
agent bot { run = "sh @BIN@/agent.sh" }
gate tests { run = "test -n \"$SLURM_JOB_ID\" && test -s \"$LOOP_TASK.txt\"" }
defaults { agent = bot  gates = [tests]  executor = slurm }
task a { prompt = "x"  accept = "test -n \"$SLURM_STEP_ID\"" }
task b { prompt = "y" }
"#,
    );
    repo.script("agent.sh", SIMPLE_AGENT);
    repo.loopc(&["run"]).env("SLURM_CONF", conf).status(0).run();
    assert_eq!(repo.show("loop/hpc", "a.txt").unwrap(), "made by a\n");
    assert_eq!(repo.show("loop/hpc", "b.txt").unwrap(), "made by b\n");
    let mut ids = Vec::new();
    for (task, files) in [
        ("a", &["agent", "gate-accept", "gate-tests"][..]),
        ("b", &["agent", "gate-tests"][..]),
    ] {
        let logs = repo.root.join(format!(".loopc/logs/{task}/1"));
        let names: Vec<String> = std::fs::read_dir(&logs)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".executor"))
            .collect();
        // The second task to land is re-gated on the merge result: its
        // `merge-*` checks ran as jobs too.
        for f in files {
            assert!(
                names.contains(&format!("{f}.executor")),
                "{task}: {names:?}"
            );
        }
        for name in names {
            let report = std::fs::read_to_string(logs.join(&name)).unwrap();
            assert!(report.contains(".0 on "), "{task}/{name}: {report}");
            assert!(report.ends_with("exit 0\n"), "{task}/{name}: {report}");
            let jobs = reported_jobs(&report);
            assert_eq!(jobs.len(), 1, "{report}");
            ids.push((task, jobs[0].clone()));
        }
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "one job per command: {ids:?}");
    assert!(count >= 5, "{ids:?}");
    // Slurm's own records: each job completed, named after its attempt.
    for (task, id) in &ids {
        assert!(
            repo.wait_for(200, || job_record(conf, id).is_some()),
            "no record of job {id}"
        );
        let record = job_record(conf, id).unwrap();
        assert!(record.contains("JobState=COMPLETED"), "{record}");
        assert!(
            record.contains(&format!("Name=loopc-{task}-1 ")),
            "{record}"
        );
    }
    assert!(our_jobs(conf, &repo).is_empty());
}

/// An agent that sleeps in its job step until `hold` is removed (at most
/// a minute), then does its work.
fn holding_agent(repo: &Test) -> PathBuf {
    let hold = repo.bin.join("hold");
    std::fs::write(&hold, "").unwrap();
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nn=0\nwhile [ -e '{}' ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done\n\
             echo \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n",
            hold.display()
        ),
    );
    hold
}

const HOLDING_PLAN: &str = r#"
loop "hpc" { parallel = 2 }
budget { iterations = 6 }
executor slurm { run = "@BIN@/loopc-srun --time=5" }
agent bot { run = "sh @BIN@/agent.sh"  executor = slurm }
task a { agent = bot  prompt = "x"  attempts = 2 }
task b { agent = bot  prompt = "y"  attempts = 2 }
"#;

#[test]
fn an_attempt_timeout_cancels_its_job() {
    let conf = need_cluster!();
    let repo = slurm_repo(
        r#"
loop "hpc" { }
budget { iterations = 2 }
executor slurm { run = "@BIN@/loopc-srun --time=5" }
agent bot { run = "sh @BIN@/agent.sh"  executor = slurm }
task a { agent = bot  prompt = "x"  attempts = 1  timeout = 3s }
"#,
    );
    let _hold = holding_agent(&repo);
    let r = repo.loopc(&["run"]).env("SLURM_CONF", conf).output();
    assert_eq!(r.status, 1, "{r:?}");
    let reason = repo.task("a")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("timed out after 3"), "{reason}");
    let report = std::fs::read_to_string(repo.root.join(".loopc/logs/a/1/agent.executor")).unwrap();
    let id = reported_jobs(&report).pop().expect("a job id");
    assert!(
        repo.wait_for(3000, || our_jobs(conf, &repo).is_empty()),
        "still queued: {:?}",
        our_jobs(conf, &repo)
    );
    assert!(repo.wait_for(200, || job_record(conf, &id).is_some()));
    let record = job_record(conf, &id).unwrap();
    assert!(!record.contains("JobState=COMPLETED"), "{record}");
}

#[test]
fn ctrl_c_cancels_every_job_of_the_run() {
    let conf = need_cluster!();
    let repo = slurm_repo(HOLDING_PLAN);
    let _hold = holding_agent(&repo);
    let mut run = repo.loopc(&["run"]).env("SLURM_CONF", conf).spawn();
    assert!(
        repo.wait_for(600, || our_jobs(conf, &repo).len() == 2),
        "the jobs did not start: {:?}",
        our_jobs(conf, &repo)
    );
    let jobs = our_jobs(conf, &repo);
    crate::harness::signal(run.id(), libc::SIGINT);
    assert_eq!(run.wait().unwrap().code(), Some(130));
    // A bound, not a speed: under load slurmctld takes a while to end a
    // cancelled job (each poll runs squeue; a full suite beside it has
    // outlasted 3,000 polls).
    assert!(
        repo.wait_for(12_000, || our_jobs(conf, &repo).is_empty()),
        "left running: {:?}",
        our_jobs(conf, &repo)
    );
    for id in jobs {
        assert!(repo.wait_for(200, || job_record(conf, &id).is_some()));
        let record = job_record(conf, &id).unwrap();
        assert!(!record.contains("JobState=COMPLETED"), "{record}");
    }
}

#[test]
fn the_run_after_kill_9_cancels_the_orphaned_jobs_before_it_starts() {
    let conf = need_cluster!();
    let repo = slurm_repo(HOLDING_PLAN);
    let hold = holding_agent(&repo);
    let mut run = repo.loopc(&["run"]).env("SLURM_CONF", conf).spawn();
    assert!(repo.wait_for(600, || our_jobs(conf, &repo).len() == 2));
    let orphans = our_jobs(conf, &repo);
    run.kill().unwrap();
    run.wait().unwrap();
    // loopc is gone; its jobs are not.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(our_jobs(conf, &repo), orphans);
    // The next run: its agents record which of this repository's jobs
    // other than their own are still queued when they start.
    std::fs::remove_file(&hold).unwrap();
    let seen = repo.bin.join("seen");
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nsqueue -h -o '%i %k' | grep -F '{}' | grep -v \"^$SLURM_JOB_ID \" >> '{}'\n\
             echo \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n",
            repo.root.display(),
            seen.display()
        ),
    );
    repo.loopc(&["run"]).env("SLURM_CONF", conf).status(0).run();
    let seen = std::fs::read_to_string(&seen).unwrap_or_default();
    for id in &orphans {
        assert!(
            !seen.lines().any(|l| l.starts_with(&format!("{id} "))),
            "orphan {id} still queued when the next run's agents started: {seen}"
        );
        let record = job_record(conf, id).unwrap_or_default();
        assert!(!record.contains("JobState=COMPLETED"), "{record}");
    }
    assert!(our_jobs(conf, &repo).is_empty());
    assert_eq!(repo.status_of("a"), "passed");
    assert_eq!(repo.status_of("b"), "passed");
}

#[test]
fn a_job_cancelled_from_outside_is_an_infrastructure_failure_and_retried() {
    let conf = need_cluster!();
    let repo = slurm_repo(
        r#"
loop "hpc" { }
budget { iterations = 2  failures = 1 }
executor slurm { run = "@BIN@/loopc-srun --time=5" }
agent bot { run = "sh @BIN@/agent.sh"  executor = slurm }
task a { agent = bot  prompt = "x"  attempts = 1 }
"#,
    );
    // The first run of the agent waits (to be cancelled), the next does not.
    let once = repo.bin.join("once");
    repo.script(
        "agent.sh",
        &format!(
            "#!/bin/sh
cat > /dev/null
if [ ! -e '{0}' ]; then touch '{0}'; sleep 60; fi
             echo \"made by $LOOP_TASK\" > \"$LOOP_TASK.txt\"\n",
            once.display()
        ),
    );
    let run = repo.loopc(&["run"]).env("SLURM_CONF", conf).spawn();
    assert!(repo.wait_for(600, || once.exists() && our_jobs(conf, &repo).len() == 1));
    let id = our_jobs(conf, &repo).pop().unwrap();
    slurm(conf, &[&id], "scancel");
    let out = run.wait_with_output().unwrap();
    let t = repo.task("a");
    assert_eq!(out.status.code(), Some(0), "{t}\n{}", repo.spawned_stderr());
    assert_eq!(t["status"], "passed", "{t}");
    // Neither `attempts = 1` nor `failures = 1` was spent on it.
    assert_eq!(t["history"][0]["outcome"], "infrastructure", "{t}");
    let reason = t["history"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "executor `slurm` ended the command: Slurm job {id} ended CANCELLED"
        )),
        "{reason}"
    );
    assert_eq!(t["history"][1]["outcome"], "passed", "{t}");
}
