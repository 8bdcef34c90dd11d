//! The verification pass (docs/running.md, "Already satisfied: `verify`"):
//! before the agent of a task that verifies, its `accept` runs on the
//! task's starting commit, in the attempt's worktree (after `setup`, as
//! any check). A pass there ends the attempt already satisfied: a pass
//! with no change, no agent started; a rejection lets the agent work.

use super::Step;
use super::gate::{self, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{Io, Protocol};
use crate::run::engine::outcome::{AttemptResult, Outcome};
use crate::run::sys::checkout::Checkout;

/// The summary of a task found already satisfied.
/// (the terminal, summary and status say "already satisfied" before it).
const SUMMARY: &str = "`accept` passed on its starting commit; no agent ran";

/// Runs the task's `accept` on the attempt's starting commit (`co` is
/// still there: nothing has run in it but `setup`). `Ok(Some(_))`: it
/// passed, and the attempt ends with that pass (`r.already_satisfied`);
/// `Ok(None)`: it was rejected (or the task has no `accept`), and the
/// agent works the task. Either way a verdict was reached
/// (`r.verified`). A check that cannot run is an infrastructure failure,
/// Ctrl-C an interruption.
pub(super) fn first(
    io: Io<'_>,
    proto: &Protocol<'_>,
    co: &Checkout,
    r: &mut AttemptResult,
) -> Step<Option<Outcome>> {
    let Some(accept) = gate::checks_of(proto.task)
        .into_iter()
        .find(|c| c.label == "accept" && c.owner.is_none())
    else {
        return Ok(None);
    };
    // What the check reads as the change (`LOOP_DIFF_FILE`): there is none.
    std::fs::write(&proto.files.diff, "").map_err(|e| {
        Outcome::Infrastructure(format!("cannot write {}: {e}", proto.files.diff.display()))
    })?;
    let mut cost = Cost::default();
    let verdict = gate::run_checks(io, proto, co, &[accept], "verify", &mut cost);
    r.cost.absorb(cost);
    match verdict {
        Verdict::Pass => {
            r.verified = true;
            r.already_satisfied = true;
            Ok(Some(Outcome::Passed {
                commit: r.input.base.clone(),
                summary: Some(SUMMARY.to_string()),
                files: Vec::new(),
            }))
        }
        Verdict::Reject { .. } => {
            r.verified = true;
            Ok(None)
        }
        Verdict::Blocked(why) => Err(Outcome::Blocked(why)),
        Verdict::Limited(l) => Err(Outcome::Limited(l)),
        Verdict::Stopped => Err(Outcome::Interrupted),
        Verdict::Error(e) => Err(Outcome::Infrastructure(format!("verify: {e}"))),
    }
}
