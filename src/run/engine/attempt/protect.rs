//! Protected paths (`protect`, `may_change`; docs/running.md, "Checks an
//! agent cannot game"): the checks that judge an agent's work are not the
//! agent's to change. An attempt whose commit adds, changes, deletes,
//! renames or changes the mode of a protected path fails, its feedback
//! naming each path.

use super::{Step, failed};
use crate::plan::Task;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The globs `patterns` as one set; `*` and `?` do not cross `/`, `**`
/// does, as for `inputs`.
///
/// Errors: a glob does not compile (the checker rejects those first).
fn glob_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("glob `{p}`: {e}"))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| e.to_string())
}

/// What `task` may not change: its `protect` globs less its `may_change`.
pub(crate) struct Protection {
    protect: GlobSet,
    lifted: GlobSet,
}

impl Protection {
    /// The protection of `task`.
    ///
    /// Errors: a glob does not compile.
    pub(crate) fn of(task: &Task) -> Result<Protection, String> {
        let of = |p: &[String]| glob_set(p).map_err(|e| format!("task `{}`: {e}", task.name));
        Ok(Protection {
            protect: of(&task.protect)?,
            lifted: of(&task.may_change)?,
        })
    }

    /// Whether the task's `may_change` names `path`.
    pub(crate) fn lifts(&self, path: &str) -> bool {
        self.lifted.is_match(path)
    }

    /// Whether the task may not change `path` (relative to the repository's top).
    pub(crate) fn covers(&self, path: &str) -> bool {
        self.protect.is_match(path) && !self.lifted.is_match(path)
    }
}

/// Fails the attempt when `paths` (every path its commit changed, both
/// sides of a rename, mode changes included) holds a protected one: one
/// of the task's `protect` globs, or `plan_file`, the plan being run (its
/// gates and checks are the plan's), unless `may_change` lifts it.
pub(super) fn check(task: &Task, paths: &[String], plan_file: Option<&str>) -> Step<()> {
    let plan_hit =
        plan_file.filter(|p| task.expands.as_deref() != Some(*p) && paths.iter().any(|x| x == p));
    if task.protect.is_empty() && plan_hit.is_none() {
        return Ok(());
    }
    let protection =
        Protection::of(task).map_err(crate::run::engine::outcome::Outcome::Infrastructure)?;
    let mut hit: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| protection.covers(p))
        .collect();
    if let Some(p) = plan_hit
        && !protection.lifts(p)
        && !hit.contains(&p)
    {
        hit.push(p);
    }
    if hit.is_empty() {
        return Ok(());
    }
    let list: String = hit.iter().map(|p| format!("- {p}\n")).collect();
    Err(failed(
        format!("the attempt changed protected paths: {}", hit.join(", ")),
        format!(
            "The previous attempt changed paths the plan protects (`protect`): they hold \
             the checks that judge the work, and no attempt may add, change, delete, \
             rename or change the mode of them:\n{list}\nChange the code so that the \
             checks pass, not the checks. Leave these paths as they are at LOOP_BASE."
        ),
    ))
}
