//! What a dry run says of the failures and unanswered questions earlier
//! runs left under a task's key (docs/resilience.md "Failures are
//! remembered"): not run, resumed, or started over with `--retry-failed`,
//! as the run would decide.

use crate::plan::Task;
use crate::run::engine::remember::RetryFailed;
use crate::state::Remembered;
use std::collections::HashMap;

/// What a dry run knows of earlier runs' failures: each task's
/// `remembered` (by name) and `--retry-failed`.
#[derive(Clone, Copy)]
pub struct Memory<'a> {
    /// The last run's `remembered` of each task that has one.
    pub remembered: &'a HashMap<String, Remembered>,
    /// `--retry-failed`.
    pub retry: &'a RetryFailed,
    /// The tasks the last run left waiting for an agent's usage limit:
    /// by name, the agent and when the limit resets (seconds since the
    /// epoch); the run waits that out first (docs/resilience.md).
    pub waits: &'a HashMap<String, (String, u64)>,
}

/// Task `task`'s `line` with the wait for a limit the last run left it in,
/// when it would run and the limit has not reset by `now` (seconds since
/// the epoch): `run (first waits for claude's usage limit, which resets
/// 20:10; …)`.
pub fn with_wait(memory: Memory<'_>, task: &str, line: String, now: u64) -> String {
    let Some((agent, until)) = memory.waits.get(task).filter(|(_, u)| *u > now) else {
        return line;
    };
    let wait = format!(
        "first waits for {agent}'s usage limit, which resets {} (the last run was waiting for it)",
        crate::run::engine::agent::limits::clock(*until)
    );
    super::words::first_reason(line, &wait)
}

/// How the line of a task not run because it ran out of attempts under its
/// key starts.
pub const NOT_RUN: &str = "not run";

/// What `task`'s failures remembered under `key` (its remembered key)
/// decide: the line of a task not run (`Err`), else what its run resumes
/// with, if anything; `forced`: `--force` names it (it runs again, as with
/// `--retry-failed`).
pub fn decide(
    memory: Memory<'_>,
    task: &Task,
    forced: bool,
    key: &str,
) -> Result<Option<String>, String> {
    let Some(r) = memory.remembered.get(&task.name).filter(|r| r.key == key) else {
        return Ok(None);
    };
    let spent = format!("{} of {}", r.attempts, task.attempts);
    // The flag that runs it again, as the person gave it.
    let flag = if memory.retry.covers(&task.name) {
        "--retry-failed"
    } else {
        "--force"
    };
    if let Some(question) = &r.question {
        if memory.retry.covers(&task.name) || forced {
            return Ok(Some(format!(
                "{flag}: its question is not answered; its agent is asked again"
            )));
        }
        return Err(format!(
            "{NOT_RUN}: its question is not answered yet ({question}); answer it with \
             `loopc answer {} \"…\"`, or --retry-failed to ask again",
            task.name
        ));
    }
    if r.blocked {
        if memory.retry.covers(&task.name) || forced {
            return Ok(Some(format!(
                "{flag}: it was blocked with this key; starts over at attempt 1 with the last \
                 failure's feedback"
            )));
        }
        return Err(format!(
            "{NOT_RUN}: blocked with this key in an earlier run; --retry-failed to run it"
        ));
    }
    if memory.retry.covers(&task.name) || forced {
        return Ok(Some(format!(
            "{flag}: it ran out of attempts ({spent}) with this key; starts over \
             at attempt 1 with the last failure's feedback"
        )));
    }
    if r.attempts >= task.attempts && crate::run::engine::remember::conflicted(r) {
        return Ok(Some(format!(
            "its last attempt's merge conflicted with work merged meanwhile: one more \
             attempt, from the new head ({spent} spent with this key)"
        )));
    }
    if r.attempts >= task.attempts {
        return Err(format!(
            "{NOT_RUN}: ran out of attempts ({spent}) with this key; --retry-failed to run it"
        ));
    }
    Ok(Some(format!(
        "resumes at attempt {} with the last failure's feedback ({spent} spent with this key)",
        r.attempts + 1
    )))
}
