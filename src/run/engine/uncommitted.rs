//! The warning about uncommitted work: attempts start from a commit, so an
//! edited but uncommitted file the plan reads (an `inputs` file, a script a
//! `run` string names, the plan file itself) runs in its committed form.
//! [`warning`] names those files; it never stops the run.

use crate::plan::{GateKind, Plan, TaskKind};
use std::path::Path;

/// Every `run` string of the plan (agents, command tasks, `accept`, gates,
/// `setup`).
fn run_strings(plan: &Plan) -> Vec<&str> {
    let mut out: Vec<&str> = plan.settings.setup.iter().map(String::as_str).collect();
    for task in &plan.tasks {
        match &task.kind {
            TaskKind::Agent { agent, .. } => out.push(&agent.run),
            TaskKind::Command { run } => out.push(run),
        }
        out.extend(task.accept.as_deref());
        for g in &task.gates {
            match &g.kind {
                GateKind::Command { run } => out.push(run),
                GateKind::Agent { agent, .. } => out.push(&agent.run),
            }
        }
    }
    out
}

/// The words of `run` that may name files of the repository: not options,
/// not expansions; quotes and a leading `./` taken off.
fn path_words(run: &str) -> impl Iterator<Item = &str> {
    run.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>'))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .map(|w| w.strip_prefix("./").unwrap_or(w))
        .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains('$') && !w.contains('='))
}

/// Whether `path` (relative to the repository root) is one `word` names:
/// the same path, or matched by it as a glob.
fn names(word: &str, path: &str) -> bool {
    if word == path {
        return true;
    }
    word.contains(['*', '?', '['])
        && globset::GlobBuilder::new(word)
            .literal_separator(true)
            .build()
            .is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// Of `changed` (tracked files with uncommitted changes, relative to the
/// repository root), those the plan reads: matched by a task's `inputs`,
/// named by a word of a `run` string, or the plan file (`plan_file`,
/// relative to the root, when it is inside the repository).
pub fn read_by_plan(plan: &Plan, plan_file: Option<&str>, changed: &[String]) -> Vec<String> {
    let runs = run_strings(plan);
    let words: Vec<&str> = runs.iter().flat_map(|r| path_words(r)).collect();
    let globs: Vec<&str> = plan
        .tasks
        .iter()
        .flat_map(|t| t.inputs.iter().map(String::as_str))
        .collect();
    changed
        .iter()
        .filter(|p| {
            plan_file == Some(p.as_str())
                || words.iter().any(|w| names(w, p))
                || globs.iter().any(|g| names(g, p) || *g == p.as_str())
        })
        .cloned()
        .collect()
}

/// The warning for a run of `plan` (its file at `plan_file`) from commit
/// `base` in the repository at `root`, when files the plan reads have
/// uncommitted changes (`changed`, relative to `root`); `None` otherwise.
pub fn warning(
    plan: &Plan,
    plan_file: &Path,
    root: &Path,
    changed: &[String],
    base: &str,
) -> Option<String> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let plan_rel = canon(plan_file)
        .strip_prefix(canon(root))
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let read = read_by_plan(plan, plan_rel.as_deref(), changed);
    if read.is_empty() {
        return None;
    }
    let short = base.get(..10).unwrap_or(base);
    Some(format!(
        "warning: uncommitted changes to files the plan reads: {}; attempts start from the \
         commit {short} and see these files as committed there: commit them first if the run \
         needs them",
        read.join(", ")
    ))
}

/// The warning for a run of `plan` when files it reads are not in git at
/// all (`untracked`, relative to the repository root, less the files the
/// plan brings in with `copy`/`link`): attempts start from a commit, so
/// they do not have them. `None` when there are none. (The plan file itself
/// is read by loopc from the checkout, so an untracked plan is fine.)
pub fn untracked_warning(plan: &Plan, untracked: &[String], brought: &[String]) -> Option<String> {
    let candidates: Vec<String> = untracked
        .iter()
        .filter(|p| {
            !brought
                .iter()
                .any(|b| p.as_str() == b || p.starts_with(&format!("{b}/")))
        })
        .cloned()
        .collect();
    let read = read_by_plan(plan, None, &candidates);
    if read.is_empty() {
        return None;
    }
    Some(format!(
        "warning: files the plan reads are not in git: {}; attempts start from a commit and \
         will not have them: `git add` and commit them first (or bring them in with \
         `loop {{ copy = [...] }}`)",
        read.join(", ")
    ))
}

/// The warning for a run of a REEL spec tree whose worked specs are not
/// committed as they are: a spec moves to its next stage only as committed
/// (its text on the integration branch must be the text the run read), so
/// such a spec would stay. `changed` and `untracked` are relative to
/// `root`; the specs' paths are as read from `cwd`. `None` when all are
/// committed, or the plan is no spec tree.
pub fn specs_warning(
    plan: &Plan,
    cwd: &Path,
    root: &Path,
    changed: &[String],
    untracked: &[String],
) -> Option<String> {
    let pipeline = plan.pipeline.as_ref()?;
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = canon(root);
    let mut named = Vec::new();
    for spec in &pipeline.specs {
        let Ok(rel) = canon(&cwd.join(&spec.path))
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
        else {
            continue;
        };
        if changed.contains(&rel) {
            named.push(format!("{rel} (uncommitted changes)"));
        } else if untracked.contains(&rel) {
            named.push(format!("{rel} (not in git)"));
        }
    }
    if named.is_empty() {
        return None;
    }
    Some(format!(
        "warning: specs of the worked stages are not committed as they are: {}; a spec moves \
         to its next stage only as committed, so these would stay: commit them first",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_named_by_run_strings_inputs_and_the_plan_are_read() {
        let plan = crate::compile(
            "p.loop",
            r#"
            agent bot { run = "sh scripts/agent.sh --fast" }
            gate lint = "python3 -m py_compile calc/*.py && ./check.sh"
            defaults { agent = bot  gates = [lint] }
            task a { prompt = "x"  inputs = ["src/**"] }
            "#,
        )
        .plan
        .expect("compiles");
        let changed: Vec<String> = [
            "README",
            "calc/x.py",
            "check.sh",
            "p.loop",
            "scripts/agent.sh",
            "src/deep/y.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            read_by_plan(&plan, Some("p.loop"), &changed),
            [
                "calc/x.py",
                "check.sh",
                "p.loop",
                "scripts/agent.sh",
                "src/deep/y.rs"
            ]
        );
    }
}
