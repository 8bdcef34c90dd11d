//! A check's verdict, from its own exit status or (an agent gate) its own
//! handoff and output only: nothing the maker agent left in the worktree
//! is read (docs/running.md, "Checks an agent cannot game").

use super::launch::Ran;
use super::{Check, GateCost, Verdict, output_tail};
use crate::run::engine::agent::handoff::{self, HandoffStatus};
use crate::run::engine::agent::{executor, report};
use crate::run::engine::outcome::Limited;
use crate::run::sys::process::Exit;

/// The verdict of `check` from how it ran (`gate`: how messages name it);
/// `Ok(None)`: it passed. `Err`: what ends the round at once (the run is
/// stopping, the executor failed, the reviewing agent is usage limited).
/// An agent gate's cost is added to `cost`.
pub(super) fn judge(
    check: &Check,
    ran: &Ran<'_>,
    gate: &str,
    cost: &mut GateCost,
) -> Result<Option<Verdict>, Verdict> {
    let exit = ran.exit;
    if !matches!(
        exit,
        Exit::Code(0) | Exit::TimedOut | Exit::Stalled(_) | Exit::Stopped
    ) && let Some(why) = executor::failure(check.executor.as_deref(), &ran.report)
    {
        return Err(Verdict::Error(format!("{gate}: {why}")));
    }
    let output = || match ran.agent {
        // Half for each stream of an agent gate.
        Some(_) => output_tail(&[&ran.stdout, &ran.log]),
        None => output_tail(&[&ran.log]),
    };
    let verdict = match exit {
        Exit::Stopped => {
            // An agent gate cut off (Ctrl-C, SIGTERM, the `time` budget)
            // costs what it reported, else its cap, as a cut-off agent does.
            if let Some(a) = ran.agent {
                let read = report::read(&a.output, &ran.stdout);
                cost.add_reported(
                    report::reported_cost(read.as_ref(), &handoff::read(&ran.handoff)),
                    a,
                );
            }
            return Err(Verdict::Stopped);
        }
        Exit::TimedOut | Exit::Stalled(_) | Exit::Signal(_) => Some(reject(
            check,
            format!("{gate} {}", exit.describe(check.timeout)),
            output(),
        )),
        Exit::Code(c) if c != 0 => Some(reject(
            check,
            format!("{gate} failed ({})", exit.describe(check.timeout)),
            output(),
        )),
        Exit::Code(_) => None,
    };
    match ran.agent {
        Some(a) => agent_verdict(check, ran, a, verdict, cost, &output),
        None => Ok(verdict),
    }
}

/// A rejection by `check` for `reason`, with `feedback` under it.
pub(super) fn reject(check: &Check, reason: String, feedback: String) -> Verdict {
    Verdict::Reject {
        feedback: format!("{reason}\n\n{feedback}"),
        reason,
        on_fail: check.on_fail,
        by: check.label.clone(),
    }
}

/// An agent gate's verdict: `verdict` (from its exit status) unless it
/// reported an error or is limited, else its own handoff's.
fn agent_verdict(
    check: &Check,
    ran: &Ran<'_>,
    a: &crate::plan::Agent,
    mut verdict: Option<Verdict>,
    cost: &mut GateCost,
    output: &dyn Fn() -> String,
) -> Result<Option<Verdict>, Verdict> {
    let label = &check.label;
    let read = report::read(&a.output, &ran.stdout);
    let h = handoff::read(&ran.handoff);
    cost.add_reported(report::reported_cost(read.as_ref(), &h), a);
    if !matches!(ran.exit, Exit::Stopped | Exit::TimedOut | Exit::Stalled(_))
        && let Some(l) = Limited::of(&a.name, read.as_ref())
    {
        return Err(Verdict::Limited(l));
    }
    // A reviewer that cannot log in gives no verdict, now or later.
    if let Some(why) = read.as_ref().and_then(|r| r.blocking()) {
        return Err(Verdict::Blocked(format!("gate `{label}`: {why}")));
    }
    // An error the reviewing agent reported about its own run is no
    // verdict, whatever it exited with.
    if let Some(e) = read.as_ref().and_then(|r| r.error.as_ref()) {
        verdict = Some(reject(
            check,
            e.reason(&format!("gate `{label}`'s agent")),
            e.message.clone(),
        ));
    }
    if verdict.is_some() {
        return Ok(verdict);
    }
    Ok(match h {
        Err(e) => Some(reject(check, format!("gate `{label}`: {e}"), output())),
        Ok(None) => Some(reject(
            check,
            format!("gate `{label}` gave no verdict"),
            "The reviewing agent wrote no handoff file.".to_string(),
        )),
        Ok(Some(h)) => match h.status {
            HandoffStatus::Completed => None,
            HandoffStatus::Failed => Some(Verdict::Reject {
                reason: format!("gate `{label}` rejected the change"),
                feedback: format!(
                    "The review gate `{label}` rejected the change:\n{}",
                    h.summary.unwrap_or_default()
                ),
                on_fail: check.on_fail,
                by: check.label.clone(),
            }),
            // A gate's question is no verdict: the task is blocked, the
            // question in its reason (`loopc answer` answers a task's
            // agent, not a gate's).
            HandoffStatus::NeedsHuman
                if h.question.as_deref().is_some_and(|q| !q.trim().is_empty()) =>
            {
                Some(Verdict::Blocked(handoff::with_reason(
                    &format!("gate `{label}` asks a person"),
                    h.question.as_deref().unwrap_or_default(),
                )))
            }
            HandoffStatus::Blocked | HandoffStatus::NeedsHuman => {
                Some(Verdict::Blocked(handoff::with_reason(
                    &format!("gate `{label}` says the task needs help"),
                    &h.summary.unwrap_or_default(),
                )))
            }
        },
    })
}
