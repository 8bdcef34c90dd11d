//! Whether a rejected last attempt failed only its review (docs/running.md,
//! "Work an agent gate did not accept"): when an agent gate rejects the
//! task's last attempt, its command checks (`accept`, command gates) are
//! run on the attempt's commit; if every one passes, the attempt is
//! `unreviewed` and the task ends `completed_unreviewed`, its branch kept
//! for a person, instead of `failed`.

use super::gate::{self, CheckKind, Verdict};
use crate::plan::OnFail;
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{Io, Protocol};
use crate::run::sys::checkout::Checkout;

/// Whether `verdict`, the verdict of `checks` on the attempt `proto`, is a
/// rejection of the task's last attempt that only an agent gate made:
/// the command checks among `checks` are run (again: those before the
/// rejecting gate had passed, those after it had not run) and all pass.
/// Their agent cost, none, goes to `cost`.
pub(super) fn only_review_rejected(
    io: Io<'_>,
    proto: &Protocol,
    checkout: &Checkout,
    checks: &[gate::Check],
    verdict: &Verdict,
    cost: &mut Cost,
) -> bool {
    let Verdict::Reject { on_fail, by, .. } = verdict else {
        return false;
    };
    let last = proto.attempt >= proto.task.attempts;
    // Only an agent gate's rejection: a command check that rejected the
    // attempt would reject it again (and cost its run twice).
    let by_agent_gate = checks
        .iter()
        .any(|c| c.label == *by && matches!(c.kind, CheckKind::Agent { .. }));
    if *on_fail != OnFail::Retry || !last || !by_agent_gate {
        return false;
    }
    let commands: Vec<gate::Check> = checks
        .iter()
        .filter(|c| matches!(c.kind, CheckKind::Command(_)))
        .cloned()
        .collect();
    matches!(
        gate::run_checks(io, proto, checkout, &commands, "review", cost),
        Verdict::Pass
    )
}
