//! The warning about uncommitted work: attempts start from a commit, so
//! what the main checkout has and the commit has not (edited files, files
//! never added) is not in any attempt's worktree. [`warning`] says so once,
//! naming a few (the files the plan reads first: an `inputs` file, a script
//! a `run` string names); it never stops the run. The plan file is left
//! out: loopc reads it from the checkout.

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
/// or named by its `context`, named by a word of a `run` string, or the
/// plan file (`plan_file`,
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
                || plan.tasks.iter().any(|t| t.context.contains(p))
                || words.iter().any(|w| names(w, p))
                || globs.iter().any(|g| names(g, p) || *g == p.as_str())
        })
        .cloned()
        .collect()
}

/// How many uncommitted changes [`warning`] names before it counts the rest.
const NAMED: usize = 3;

/// The one line about work the attempts will not see: they start from
/// commit `base`, and the main checkout at `root` has uncommitted changes
/// (`changed`: tracked files with changes; `untracked`: files not in git
/// and not ignored; both relative to `root`). The plan file (`plan_file`)
/// is left out, whether changed or untracked (loopc reads it from the
/// checkout), and so is what `loop.copy`/`loop.link` bring in (`brought`).
/// Names a few, the files the plan reads first. `None` when there are none.
pub fn warning(
    plan: &Plan,
    plan_file: &Path,
    root: &Path,
    changed: &[String],
    untracked: &[String],
    brought: &[String],
    base: &str,
) -> Option<String> {
    let plan_rel = repo_relative(plan_file, root);
    let is_brought = |p: &str| {
        brought
            .iter()
            .any(|b| p == b || p.starts_with(&format!("{b}/")))
    };
    let keep = |p: &&String| plan_rel.as_deref() != Some(p.as_str()) && !is_brought(p);
    let changed: Vec<String> = changed.iter().filter(keep).cloned().collect();
    let untracked: Vec<String> = untracked.iter().filter(keep).cloned().collect();
    let count = changed.len() + untracked.len();
    if count == 0 {
        return None;
    }
    // The files the plan reads first: those are the surprise.
    let read: Vec<String> = read_by_plan(plan, None, &changed)
        .into_iter()
        .chain(read_by_plan(plan, None, &untracked))
        .collect();
    let mut named: Vec<String> = Vec::new();
    let in_git = |p: &str| changed.iter().any(|c| c == p);
    let others = changed
        .iter()
        .chain(&untracked)
        .filter(|p| !read.contains(p));
    for p in read.iter().chain(others).take(NAMED) {
        named.push(if in_git(p) {
            p.clone()
        } else {
            format!("{p} (not in git)")
        });
    }
    let more = if count > named.len() {
        format!(" and {} more", count - named.len())
    } else {
        String::new()
    };
    let short = base.get(..10).unwrap_or(base);
    let (them, these) = if count == 1 {
        ("1 uncommitted change".to_string(), "it")
    } else {
        (format!("{count} uncommitted changes"), "them")
    };
    Some(format!(
        "warning: attempts start from commit {short} and do not see {them} in this checkout: \
         {}{more}; commit {these} first if the run needs {these}",
        named.join(", ")
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

/// `path` relative to the repository's top `root` (both with their
/// symbolic links resolved where they exist), as git names it; `None` when
/// it is outside.
pub fn repo_relative(path: &Path, root: &Path) -> Option<String> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canon(path)
        .strip_prefix(canon(root))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
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
