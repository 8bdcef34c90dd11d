//! The plan a report draws: the copy of the plan file the run kept with
//! its logs, else the run's plan file as it is now (as the run was given
//! it, from the current directory or the repository's top, else the plan
//! found from the current directory), compiled, grown by the plan
//! fragments the run spliced, and its task graph as `loopc graph --format
//! svg` draws it, each task coloured by its status and linked to its
//! details.

use crate::plan::Plan;
use crate::render::state::StateMap;
use crate::state::RunState;
use std::path::{Path, PathBuf};

/// The plan of the run `state` records, compiled; `root` is the
/// repository's top, `cwd` the current directory, `saved` the copy of
/// the plan file the run kept with its logs ([`crate::run::store::layout::RUN_PLAN`]):
/// when it is there, the graph is the run's own, whatever the plan file
/// says now.
///
/// Errors: why there is none (not found, errors, another plan's name),
/// said as a note on the report.
pub fn plan_of(state: &RunState, root: &Path, cwd: &Path, saved: &Path) -> Result<Plan, String> {
    let (compiled, path) = match std::fs::read(saved) {
        Ok(bytes) => (
            crate::compile_bytes(&state.plan_file, &bytes),
            saved.to_path_buf(),
        ),
        Err(_) => plan_file_now(state, root, cwd)?,
    };
    let plan = match &compiled.plan {
        Some(p) if !compiled.has_errors() => p.clone(),
        _ => {
            return Err(format!(
                "the graph is not drawn: {} has errors now (`loopc check` shows them)",
                path.display()
            ));
        }
    };
    if plan.name != state.plan {
        return Err(format!(
            "the graph is not drawn: {} is now the plan `{}`, not the run's `{}`",
            path.display(),
            plan.name,
            state.plan
        ));
    }
    if !plan.tasks.iter().any(|t| t.expands.is_some()) {
        return Ok(plan);
    }
    let statuses = statuses(state);
    let base = crate::expand::Base::of(&compiled, &plan.name);
    Ok(crate::expand::regrow(&base, plan, |task, fragment| {
        statuses
            .fragment_commit(task)
            .and_then(|commit| crate::render::state::file_at(root, commit, fragment))
    }))
}

/// The run's plan file as it is now (for runs that kept no copy of it):
/// as the run was given it, from `cwd` or `root`, else the plan found
/// from `cwd`; compiled, with the path it was read from.
fn plan_file_now(
    state: &RunState,
    root: &Path,
    cwd: &Path,
) -> Result<(crate::Compilation, PathBuf), String> {
    let given = Path::new(&state.plan_file);
    let mut candidates: Vec<PathBuf> = Vec::new();
    if !state.plan_file.is_empty() {
        if given.is_absolute() {
            candidates.push(given.to_path_buf());
        } else {
            candidates.push(cwd.join(given));
            candidates.push(root.join(given));
        }
    }
    candidates.extend(crate::discover::find_plan(cwd).ok().map(|p| cwd.join(p)));
    let Some(path) = candidates.into_iter().find(|p| p.exists()) else {
        return Err(format!(
            "the graph is not drawn: the run's plan file `{}` is not there any more",
            state.plan_file
        ));
    };
    let compiled =
        crate::compile_path(&path, None).map_err(|e| format!("the graph is not drawn: {e}"))?;
    Ok((compiled, path))
}

/// Each task's status (and recorded commits) in `state`, as `loopc graph
/// --state` reads them.
pub fn statuses(state: &RunState) -> StateMap {
    serde_json::to_vec(state)
        .ok()
        .and_then(|bytes| crate::render::state::parse(&bytes).ok())
        .unwrap_or_default()
}

/// The SVG drawing of `plan` (no XML declaration: it goes inside a page),
/// each task coloured by its status in `state` and a link to `link(name)`.
pub fn svg(plan: &Plan, state: &RunState, link: &dyn Fn(&str) -> String) -> String {
    let statuses = statuses(state);
    let href = |i: usize| link(&plan.tasks[i].name);
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = crate::render::svg::render_linked(plan, Some(&statuses), Some(&href), &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    match text.split_once("?>\n") {
        Some((decl, rest)) if decl.starts_with("<?xml") => rest.to_string(),
        _ => text,
    }
}
