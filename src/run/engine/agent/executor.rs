//! What a launcher tells loopc about a command it ran (see
//! `docs/running.md`, "Executors"): loopc gives every command it launches
//! through an executor the variable `LOOP_EXECUTOR_REPORT`, a file in the
//! attempt's log directory (outside the worktree, so neither the command
//! nor a sandboxed agent can write it unless the launcher lets it). The
//! launcher may append lines to it:
//!
//! - `job ID …`: a job it started (kept in the logs, per attempt);
//! - `failed REASON`: the command did not end by itself; the launcher or its
//!   cluster ended it (a job cancelled from outside, a node that failed).
//!   Such an end is an infrastructure failure of the attempt, not a failure
//!   of the agent, gate or command.

use crate::plan::Executor;
use std::path::{Path, PathBuf};

/// The variable that names the report file.
pub const REPORT_VAR: &str = "LOOP_EXECUTOR_REPORT";

/// The report file of the command whose logs are `<stem>.*` in `log_dir`.
pub fn report_path(log_dir: &Path, stem: &str) -> PathBuf {
    log_dir.join(format!("{stem}.executor"))
}

/// `env` with `LOOP_EXECUTOR_REPORT` added when the command is launched
/// through `executor` (a stale report from an earlier use is removed).
pub fn with_report(
    mut env: Vec<(String, String)>,
    executor: Option<&Executor>,
    report: &Path,
) -> Vec<(String, String)> {
    if executor.is_some() {
        let _ = std::fs::remove_file(report);
        env.push((
            REPORT_VAR.to_string(),
            report.to_string_lossy().into_owned(),
        ));
    }
    env
}

/// How long a command's process group gets between SIGTERM and SIGKILL:
/// longer through an executor, whose launcher must end what it started
/// elsewhere (cancel a cluster job) before it is killed.
pub fn grace(executor: Option<&Executor>) -> std::time::Duration {
    use crate::run::sys::process::{KILL_GRACE, LAUNCHER_GRACE};
    if executor.is_some() {
        LAUNCHER_GRACE
    } else {
        KILL_GRACE
    }
}

/// Why `executor`'s launcher says it ended the command: the last
/// `failed REASON` line of the report at `path`, worded with the
/// executor's name. `None` without an executor, a report or such a line.
pub fn failure(executor: Option<&Executor>, path: &Path) -> Option<String> {
    let e = executor?;
    let text = std::fs::read_to_string(path).ok()?;
    let reason = text
        .lines()
        .filter_map(|l| l.strip_prefix("failed "))
        .map(str::trim)
        .rfind(|r| !r.is_empty())?;
    Some(format!("executor `{}` ended the command: {reason}", e.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failed_line_of_an_executor_is_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = report_path(dir.path(), "agent");
        let e = Executor {
            name: "slurm".into(),
            run: "srun".into(),
        };
        let env = with_report(Vec::new(), Some(&e), &p);
        assert_eq!(env, [(REPORT_VAR.to_string(), p.display().to_string())]);
        assert!(with_report(Vec::new(), None, &p).is_empty());
        assert_eq!(failure(Some(&e), &p), None, "no report");
        std::fs::write(&p, "job 12.0 on vm\nexit 0\n").unwrap();
        assert_eq!(failure(Some(&e), &p), None);
        std::fs::write(&p, "job 12.0 on vm\nfailed job 12 CANCELLED (by root)\n").unwrap();
        assert_eq!(
            failure(Some(&e), &p).unwrap(),
            "executor `slurm` ended the command: job 12 CANCELLED (by root)"
        );
        assert_eq!(failure(None, &p), None, "no executor: not read");
    }
}
