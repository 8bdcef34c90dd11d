//! The `context` section of an agent's prompt (docs/language.md "Context
//! every agent reads"): each of the task's `context` files as it is in the
//! commit the attempt starts from, under `## Context: <path>`, before the
//! task's text (itself under `## Task`).

use super::Step;
use crate::plan::Task;
use crate::run::engine::outcome::Outcome;
use crate::run::sys::git::Git;

/// The context section of `task`'s prompt for an attempt starting from
/// commit `base`; empty when the task has no `context`. Bytes that are
/// not UTF-8 are replaced by U+FFFD.
///
/// Errors: a file is not in `base` (the task is blocked, naming it: an
/// earlier task may have removed it, or a plan fragment's task names a
/// file that was never there); git fails (infrastructure).
pub(super) fn section(git: &Git, task: &Task, base: &str) -> Step<String> {
    let mut out = String::new();
    for path in &task.context {
        let bytes = match git.file_bytes(base, path) {
            Ok(Some(b)) => b,
            Ok(None) => {
                let short = base.get(..10).unwrap_or(base);
                return Err(Outcome::Blocked(format!(
                    "task `{}`: context file `{path}` is not in the commit the attempt starts \
                     from ({short}); add it, or remove it from `context`",
                    task.name
                )));
            }
            Err(e) => {
                return Err(Outcome::Infrastructure(format!(
                    "cannot read the context file `{path}`: {e}"
                )));
            }
        };
        out.push_str(&format!("## Context: {path}\n"));
        out.push_str(String::from_utf8_lossy(&bytes).trim_end());
        out.push_str("\n\n");
    }
    if !out.is_empty() {
        out.push_str("## Task\n");
    }
    Ok(out)
}
