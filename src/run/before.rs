//! What a run's start checks of the command line (task and gate names
//! that are not the plan's) and the warnings it prints before any work
//! (uncommitted files, an empty worked stage, another plan's branch).

use super::engine::worktree_files::WorktreeFiles;
use super::preflight::Start;
use super::sys::git::Git;
use super::{Options, RetryFailed, RunError, engine};
use crate::plan::Plan;
use crate::state::RunState;
use std::path::Path;

/// The names given to `flag` (`--force`, `--retry-failed`) that are not
/// the plan's tasks: the first one's message.
pub(super) fn check_named(plan: &Plan, names: &[String], flag: &str) -> Result<(), RunError> {
    for name in names {
        if plan.task_index(name).is_none() {
            let hint = match crate::expand::unknown_task_hint(plan, name) {
                Some(h) => format!(": {h}; `{flag}` takes the plan's own tasks"),
                None => {
                    crate::check::names::suggest(name, plan.tasks.iter().map(|t| t.name.as_str()))
                        .map_or(String::new(), |s| format!("; did you mean `{s}`?"))
                }
            };
            return Err(RunError::usage(format!(
                "{flag}: no task named `{name}` in the plan{hint}"
            )));
        }
    }
    Ok(())
}

/// The `--retry-failed` names that are not the plan's tasks: the first
/// one's message.
pub(super) fn check_retried(plan: &Plan, retry: &RetryFailed) -> Result<(), RunError> {
    let RetryFailed::Tasks(names) = retry else {
        return Ok(());
    };
    // A task a plan fragment adds (`<producer>.<name>`) is known once its
    // producer's fragment is: taken when that producer `expands`.
    let of_fragment = |name: &str| {
        name.match_indices('.').any(|(at, _)| {
            plan.task_index(&name[..at])
                .is_some_and(|i| plan.tasks[i].expands.is_some())
        })
    };
    let own: Vec<String> = names.iter().filter(|n| !of_fragment(n)).cloned().collect();
    check_named(plan, &own, "--retry-failed")
}

/// The `--skip-gate` names that are no gate of the plan's tasks: the
/// first one's message. A plan that grows may use a gate only in its
/// fragments: any name is taken then.
pub(super) fn check_skipped(plan: &Plan, skip: &[String]) -> Result<(), RunError> {
    if plan.tasks.iter().any(|t| t.expands.is_some()) {
        return Ok(());
    }
    let mut names: Vec<&str> = plan
        .tasks
        .iter()
        .flat_map(|t| t.gates.iter().map(|g| g.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in skip {
        if !names.contains(&name.as_str()) {
            let hint = crate::check::names::suggest(name, names.iter().copied())
                .map_or(String::new(), |s| format!("; did you mean `{s}`?"));
            return Err(RunError::usage(format!(
                "--skip-gate: no task of the plan has a gate named `{name}`{hint}"
            )));
        }
    }
    Ok(())
}

/// The warning for a run onto the integration branch the last run (its
/// state `previous`) used for another plan file: plans of one file name
/// in two directories share `loop/<file stem>` unless named.
pub(super) fn other_plan(
    git: &Git,
    plan: &Plan,
    previous: Option<&RunState>,
    file: &Path,
) -> Option<String> {
    let previous = previous.filter(|p| p.integration_branch == plan.settings.branch)?;
    let theirs = previous.plan_path.as_deref()?;
    let ours = engine::uncommitted::repo_relative(file, &git.root)?;
    (theirs != ours).then(|| {
        format!(
            "warning: the integration branch `{}` was last used by another plan file, {theirs}; \
             this run of {ours} rebuilds it from the base ({theirs}'s passed tasks stay in \
             the cache). To give each plan its own branch, name it: `loop \"<name>\" {{ }}` \
             (or `loop {{ branch = \"…\" }}`)",
            plan.settings.branch
        )
    })
}

/// What the person should know before the run, each a line for stderr:
/// attempts start from a commit, so files the plan reads with uncommitted
/// changes are not seen (the run goes on); a spec tree's worked stages may
/// hold no spec.
pub(super) fn warnings(
    git: &Git,
    plan: &Plan,
    options: &Options,
    cwd: &Path,
    start: &Start,
    brought: &WorktreeFiles,
) -> Vec<String> {
    let mut out = Vec::new();
    // Attempts start from a commit: say once what of the checkout they do
    // not see.
    let uncommitted = git.uncommitted();
    if let Ok(found) = &uncommitted
        && let Some(w) = engine::uncommitted::warning(
            plan,
            &cwd.join(&options.plan_file),
            &git.root,
            &found.changed,
            &found.untracked,
            &brought.paths(),
            &start.base,
        )
    {
        out.push(w);
    }
    // A run of some of a spec's tasks (`run TASK…`) moves no spec, and
    // says nothing of it: the tasks run.
    if let Some(p) = &plan.pipeline
        && p.specs.is_empty()
        && plan.tasks.is_empty()
    {
        let stages: Vec<String> = p
            .worked
            .iter()
            .filter_map(|&i| crate::origin::STAGES.get(i))
            .map(|s| format!("{s}/"))
            .collect();
        out.push(format!(
            "warning: no spec in the worked stage(s) {} of {}: no spec of the tree runs \
             (`--stage` or `loop.stages` names others)",
            stages.join(", "),
            p.dir.display()
        ));
    }
    if plan.pipeline.is_some()
        && let Ok(found) = &uncommitted
        && let Some(w) = engine::uncommitted::specs_warning(
            plan,
            cwd,
            &git.root,
            &found.changed,
            &found.untracked,
        )
    {
        out.push(w);
    }
    out
}
