//! The `context` section of an agent's prompt (docs/language.md "Context
//! every agent reads"): each of the task's `context` files as it is in the
//! commit the attempt starts from, under `## Context: <path>`, before the
//! task's text (itself under `## Task`). Agent gates', resolvers' and
//! answerers' prompts carry the same section.

use super::Step;
use crate::plan::Task;
use crate::run::engine::outcome::Outcome;
use crate::run::sys::git::Git;

/// Why the context section could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// A file is not in the commit (the message names the task and path).
    Missing(String),
    /// Git failed.
    Git(String),
}

impl Unreadable {
    /// What went wrong, as one message naming the file.
    pub fn into_message(self) -> String {
        match self {
            Unreadable::Missing(why) | Unreadable::Git(why) => why,
        }
    }
}

/// Each of `task`'s `context` files as it is in commit `base`, under
/// `## Context: <path>`, each followed by a blank line; empty when the
/// task has no `context`. Bytes that are not UTF-8 are replaced by U+FFFD.
///
/// Errors: a file is not in `base` (an earlier task may have removed it,
/// or a plan fragment's task names a file that was never there); git fails.
pub fn sections(git: &Git, task: &Task, base: &str) -> Result<String, Unreadable> {
    let mut out = String::new();
    for path in &task.context {
        let bytes = match git.file_bytes(base, path) {
            Ok(Some(b)) => b,
            Ok(None) => {
                let short = base.get(..10).unwrap_or(base);
                return Err(Unreadable::Missing(format!(
                    "task `{}`: context file `{path}` is not in the commit the attempt starts \
                     from ({short}); add it, or remove it from `context`",
                    task.name
                )));
            }
            Err(e) => {
                return Err(Unreadable::Git(format!(
                    "cannot read the context file `{path}`: {e}"
                )));
            }
        };
        out.push_str(&format!("## Context: {path}\n"));
        out.push_str(String::from_utf8_lossy(&bytes).trim_end());
        out.push_str("\n\n");
    }
    Ok(out)
}

/// The context section of `task`'s prompt for an attempt starting from
/// commit `base` ([`sections`], then `## Task`); empty when the task has
/// no `context`.
///
/// Errors: a file is not in `base` (the task is blocked, naming it); git
/// fails (infrastructure).
pub(super) fn section(git: &Git, task: &Task, base: &str) -> Step<String> {
    let mut out = sections(git, task, base).map_err(|e| match e {
        Unreadable::Missing(why) => Outcome::Blocked(why),
        Unreadable::Git(why) => Outcome::Infrastructure(why),
    })?;
    if !out.is_empty() {
        out.push_str("## Task\n");
    }
    Ok(out)
}
