//! What a run keeps of a task's failed attempts, at the bottom of the
//! engine (the scheduler, the dry run and the cache's options use it):
//! the key they are remembered under and `--retry-failed`
//! (docs/resilience.md "Failures are remembered"). The rules applying
//! them are the scheduler's (`transition::resume`).

/// `loopc run --retry-failed [TASK…]`: which tasks that ran out of
/// attempts under their unchanged key run again (docs/running.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RetryFailed {
    /// Not given: such a task is not run.
    #[default]
    None,
    /// `--retry-failed` alone: every such task runs again.
    All,
    /// `--retry-failed a b`: these tasks run again.
    Tasks(Vec<String>),
}

impl RetryFailed {
    /// Whether task `name` runs again though it ran out of attempts.
    pub fn covers(&self, name: &str) -> bool {
        match self {
            RetryFailed::None => false,
            RetryFailed::All => true,
            RetryFailed::Tasks(names) => names.iter().any(|n| n == name),
        }
    }
}

/// The tasks `--retry-failed` names (in the order given) that have no
/// failure remembered in `previous` (the last run's state; `None`: there
/// was none): the flag changes nothing for them.
pub fn unremembered<'a>(
    retry: &'a RetryFailed,
    previous: Option<&crate::state::RunState>,
) -> Vec<&'a str> {
    let RetryFailed::Tasks(names) = retry else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|n| {
            !previous.is_some_and(|p| {
                p.tasks
                    .iter()
                    .any(|t| t.name == **n && t.remembered.is_some())
            })
        })
        .map(String::as_str)
        .collect()
}

/// The key `task`'s failures are remembered under (hex): its run-time
/// key `run_key` (hex; its work) and what judges its attempts, which the
/// run-time key leaves out: its gates' definitions, `changes` and
/// `timeout`. A failure is forgotten when either changes: a fixed gate or
/// a longer timeout may pass what failed.
pub fn remembered_key(task: &crate::plan::Task, run_key: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"loopc-remembered-v1\0");
    h.update(run_key.as_bytes());
    for g in &task.gates {
        h.update(b"\0gate\0");
        h.update(g.key.to_hex().as_bytes());
    }
    h.update(if task.changes_optional {
        b"\0optional"
    } else {
        b"\0required"
    });
    h.update(
        &u64::try_from(task.timeout.as_millis())
            .unwrap_or(u64::MAX)
            .to_le_bytes(),
    );
    h.finalize().to_hex().to_string()
}

/// How the reason of an attempt whose merge conflicted starts (the paths
/// follow).
pub const CONFLICT: &str = "merge conflict in";

/// Whether `r`'s last failure was its merge's conflict with work merged
/// meanwhile: not the task's own failure under its key, so a rerun, which
/// starts from a head holding that work, gives a task out of attempts one
/// more (docs/resilience.md).
pub fn conflicted(r: &crate::state::Remembered) -> bool {
    r.branch.is_none() && r.reason.as_deref().is_some_and(|w| w.starts_with(CONFLICT))
}
