//! `loop.notify`: a command run once when a run ends (passed, failed,
//! stopped by a budget, interrupted), with the run's state document on its
//! stdin (what `loopc status --json` prints) and a bounded time. Its
//! failure is reported, never the run's: the exit status stays the run's.

use crate::run::sys::process::{self, Control, Spec};
use crate::state::RunState;
use std::path::Path;
use std::time::Duration;

/// The longest the notify command may run before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `command` (`sh -c`) in the main checkout `root`, the JSON of
/// `state` on stdin (with `report`: where `loopc report` writes the run's
/// report, `report`), its output in `log`. Its environment adds
/// `LOOP_REPO_ROOT`, `LOOP_RUN_STATUS` (state.json's `status`),
/// `LOOP_EXIT_STATUS` (the run's exit status) and `LOOP_REPORT` (`report`).
///
/// Errors: a line saying how it failed (it could not start, exited
/// non-zero, or was killed at [`TIMEOUT`]), naming the log.
pub fn notify(
    command: &str,
    root: &Path,
    state: &RunState,
    log: &Path,
    report: &Path,
) -> Result<(), String> {
    let json = crate::run::status::notify_json(state, report)?;
    let env = vec![
        (
            "LOOP_REPORT".to_string(),
            report.to_string_lossy().into_owned(),
        ),
        (
            "LOOP_REPO_ROOT".to_string(),
            root.to_string_lossy().into_owned(),
        ),
        (
            "LOOP_RUN_STATUS".to_string(),
            state.status.as_str().to_string(),
        ),
        (
            "LOOP_EXIT_STATUS".to_string(),
            state.exit_code.map(|c| c.to_string()).unwrap_or_default(),
        ),
    ];
    let spec = Spec {
        command,
        dir: root,
        env: &env,
        env_remove: &[],
        stdin: Some(json.into_bytes()),
        stdout: log,
        stderr: None,
        timeout: TIMEOUT,
        idle: None,
        grace: process::KILL_GRACE,
    };
    // A control of its own: the run's is stopped after Ctrl-C or at its
    // `time` budget, and the notice must still go out then.
    match process::run(&spec, &Control::default()) {
        Ok(e) if e.success() => Ok(()),
        Ok(e) => Err(format!(
            "the notify command failed ({}); its output is in {}; the run's exit status is \
             unchanged",
            e.describe(TIMEOUT),
            log.display()
        )),
        Err(e) => Err(format!(
            "the notify command could not run: {e}; the run's exit status is unchanged"
        )),
    }
}
