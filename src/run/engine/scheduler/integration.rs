//! The scheduler's watch on the integration branch: deleted, or moved off
//! loopc's work by someone else, the run stops (docs/running.md).

use super::{Scheduler, StopKind};

impl Scheduler {
    /// The integration branch no longer exists: someone deleted it during
    /// the run. Stops at once (exit 2), as a foreign move does.
    pub(super) fn branch_deleted(&mut self) {
        self.set_stop(
            StopKind::BranchMoved,
            format!(
                "the integration branch `{}` was deleted by someone else while loopc was \
                 running (loopc's last head: {}); the run stops",
                self.ctx.plan.settings.branch, self.head
            ),
        );
        self.ctx.control.stop();
    }

    /// Checks, whenever an attempt ends, that the integration branch is still
    /// where loopc left it or on a descendant of it; stops the run when it
    /// was deleted or moved off loopc's work.
    pub(super) fn check_integration(&mut self) {
        match self.ctx.git.commit_of(&self.ctx.integration_ref) {
            Ok(None) => self.branch_deleted(),
            Ok(Some(h))
                if h != self.head && !self.ctx.git.is_ancestor(&self.head, &h).unwrap_or(true) =>
            {
                self.set_stop(
                    StopKind::BranchMoved,
                    format!(
                        "the integration branch `{}` was moved by someone else from {} \
                             (loopc's last head) to {}, which does not contain the work \
                             loopc merged; the run stops",
                        self.ctx.plan.settings.branch, self.head, h
                    ),
                );
                self.ctx.control.stop();
            }
            _ => {}
        }
    }
}
