//! What a dry run's lines say: the words for what changed in a task's
//! key, and the rewrites of the simulated lines (a disabled cache, tasks
//! waiting for a plan fragment, a spec tree's held tasks, skipped gates,
//! `verify`), one concern each.

use crate::plan::Plan;
use crate::run::engine::cache;
use std::collections::HashMap;

pub(super) use crate::visible::join_words;

/// The input file a change of [`cache::changes`] names (`input file a.rs`,
/// `input file README added`), if it names one.
pub(super) fn input_file(change: &str) -> Option<&str> {
    let p = change.strip_prefix("input file ")?;
    Some(
        p.strip_suffix(&format!(" {}", cache::ADDED))
            .or_else(|| p.strip_suffix(&format!(" {}", cache::REMOVED)))
            .unwrap_or(p),
    )
}

/// The changes of a task's key (`changed`, [`cache::changes`]) in words:
/// `prompt and input file a.rs changed`, and the files the inputs match
/// now or no longer as such (`prompt changed; input file README added`).
pub(super) fn changed_words(changed: &[String]) -> String {
    // A file added or removed: `input_file` took the word off its end.
    let (files, rest): (Vec<String>, Vec<String>) = changed
        .iter()
        .cloned()
        .partition(|c| input_file(c).is_some_and(|p| "input file ".len() + p.len() < c.len()));
    let mut parts = Vec::new();
    if !rest.is_empty() {
        parts.push(format!("{} changed", join_words(&rest)));
    }
    if !files.is_empty() {
        parts.push(join_words(&files));
    }
    parts.join("; ")
}

/// One line for each spec of the plan's pipeline: whether it would move
/// to its next stage (`dead`: the tasks held back, which keep it where it
/// is), appended to `out`.
pub(super) fn spec_lines(plan: &Plan, dead: &[bool], out: &mut String) {
    for spec in plan.pipeline.iter().flat_map(|p| &p.specs) {
        let file = spec.path.display();
        let from = spec.stage_name();
        let line = match spec.next_stage() {
            _ if spec.tasks.is_empty() => {
                format!("spec {file}: stays in {from}/ (it has no tasks)")
            }
            _ if spec.tasks.iter().any(|&t| dead[t]) => {
                format!("spec {file}: stays in {from}/ (a task of it cannot run)")
            }
            None => format!("spec {file}: stays in {from}/ (the last stage)"),
            Some(to) => format!(
                "spec {file}: moves from {from}/ to {to}/ once its {} task(s) pass",
                spec.tasks.len()
            ),
        };
        out.push_str(&crate::visible::escape(&line, &[]));
        out.push('\n');
    }
}

/// `line` of `task` with the gates `--skip-gate` took off it, if any.
pub(super) fn with_skipped(
    task: &crate::plan::Task,
    line: &str,
    skipped: &HashMap<String, Vec<String>>,
) -> String {
    match skipped.get(&task.name) {
        Some(gates) if !gates.is_empty() => {
            let q: Vec<String> = gates.iter().map(|g| format!("`{g}`")).collect();
            format!("{line} [gate {} skipped: --skip-gate]", join_words(&q))
        }
        _ => line.to_string(),
    }
}

/// `line` of `task` with what its `verify` decides (docs/running.md,
/// "Already satisfied: `verify`"), when it would run.
pub(super) fn with_verify(task: &crate::plan::Task, line: &str) -> String {
    if !task.verify || !line.starts_with("run") {
        return line.to_string();
    }
    if task.accept.is_some() {
        format!(
            "{line} [would verify first: `accept` on its starting commit; if it passes, \
             the task is already satisfied and no agent runs]"
        )
    } else {
        format!("{line} [verify: it has no `accept`, so nothing is verified first]")
    }
}

/// The line of a task under `--no-cache`: one that runs says the cache is
/// disabled, first among its reasons.
pub(super) fn cache_disabled(line: String) -> String {
    first_reason(line, "cache disabled")
}

/// The `line` of a task that would run (`run`, `run (…)`) with `why` first
/// among its reasons; any other line as it is.
pub(super) fn first_reason(line: String, why: &str) -> String {
    match line.strip_prefix("run") {
        Some("") => format!("run ({why})"),
        Some(rest) => match rest.strip_prefix(" (") {
            Some(others) => format!("run ({why}; {others}"),
            None => line,
        },
        None => line,
    }
}

/// Rewrites the lines of the tasks that wait for a task with `expands`
/// that would run: they will also wait for the tasks of the fragment it
/// writes, which no one knows yet, so whether they replay is decided then.
pub(super) fn unknown_fragments(plan: &Plan, lines: &mut [String]) {
    // The task with `expands` each task waits for, if any (topological
    // order: one forward sweep).
    let mut waits: Vec<Option<usize>> = vec![None; plan.tasks.len()];
    for i in 0..plan.tasks.len() {
        waits[i] = plan.tasks[i].dependencies.iter().find_map(|&d| {
            let runs = plan.tasks[d].expands.is_some() && lines[d].starts_with("run");
            if runs { Some(d) } else { waits[d] }
        });
        if let Some(p) = waits[i] {
            lines[i] = format!(
                "run (it waits for the tasks of the plan fragment `{}` writes when it runs; \
                 those decide whether it replays)",
                plan.tasks[p].name
            );
        }
    }
}

/// Rewrites the lines of a REEL spec tree's held tasks (`blocked: why`)
/// and of the tasks that depend on them (`skipped`); returns which tasks
/// will not run.
pub(super) fn held_back(plan: &Plan, lines: &mut [String]) -> Vec<bool> {
    let mut dead = vec![false; plan.tasks.len()];
    let Some(pipeline) = &plan.pipeline else {
        return dead;
    };
    for (i, why) in &pipeline.held {
        dead[*i] = true;
        lines[*i] = format!("blocked: {why}");
    }
    // Tasks are in topological order: one forward sweep suffices.
    for i in 0..plan.tasks.len() {
        if dead[i] {
            continue;
        }
        if let Some(&d) = plan.tasks[i].dependencies.iter().find(|&&d| dead[d]) {
            dead[i] = true;
            lines[i] = format!("skipped: dependency `{}` cannot run", plan.tasks[d].name);
        }
    }
    dead
}
