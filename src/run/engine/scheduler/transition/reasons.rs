//! The reasons recorded for an interrupted attempt and for a task that
//! needs a person (docs/running.md).

use super::{Books, StopKind};

/// Why an interrupted attempt counts, or `None` when it does not. An
/// attempt killed by the `time` budget did run: budgets are judged after an
/// attempt's result, and `time` also stops running ones, so it counts in
/// `attempts` and `iterations`. One cut off by Ctrl-C or SIGTERM is not
/// counted (docs/running.md: it is resumed as if it never ran). An attempt
/// whose agent ran, cut off because the integration branch was moved or
/// deleted, ran: it is counted.
pub(super) fn interrupted_reason(
    books: &Books,
    signalled: bool,
    past_deadline: bool,
    agent_started: bool,
) -> Option<String> {
    let by_time =
        !signalled && books.stop_kind().is_none_or(|k| k == StopKind::Budget) && past_deadline;
    let by_branch = agent_started && books.stop_kind() == Some(StopKind::BranchMoved);
    if by_branch {
        Some("the run stopped: its integration branch was changed".into())
    } else if by_time {
        Some("the attempt was stopped by the `time` budget".into())
    } else {
        None
    }
}

/// The reason recorded for a task that needs a person: its question's
/// first line.
pub(super) fn needs_human_reason(question: &str) -> String {
    crate::run::engine::agent::handoff::with_reason("the agent needs a human to answer", question)
}
