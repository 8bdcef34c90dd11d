//! A REEL spec tree's pipeline during a run (`docs/reel.md`, "Spec
//! trees"): once every task of a spec in a worked stage has passed (or was
//! replayed from the cache), its file moves to the next stage with one
//! commit on the integration branch, after the spec's last merge.
//!
//! The commit is written without a checkout (a scratch index file,
//! `git write-tree`, `git commit-tree` with the identity and dates of the
//! head it goes on, so an unchanged rerun makes the same commit), gated
//! like a merge (the command checks of the spec's tasks and of every task
//! merged before, in a scratch worktree) and lands by the same
//! compare-and-swap `update-ref`. A spec whose file at the integration
//! branch is not the text the run compiled (edited meanwhile, or not
//! committed) is not moved.

use crate::plan::StageSpec;
use crate::run::engine::attempt::gate::{self, Check, Owner, Verdict};
use crate::run::engine::budget::Cost;
use crate::run::engine::context::{AttemptFiles, RunCtx};
use crate::run::engine::land::scratch::{add_checks, run_in_scratch};
use crate::run::store::events::Event;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How moving a spec went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Advance {
    /// The integration branch now points at `commit`, which moved the spec.
    Moved {
        /// The new head.
        commit: String,
    },
    /// The spec stays where it is, for this reason.
    Stayed(String),
    /// The run is stopping.
    Stopped,
    /// The compare-and-swap failed: the integration branch moved under
    /// loopc (the scheduler finds out how).
    BranchMoved(String),
}

/// The commit message of a spec's move.
fn message(from: &str, to_stage: &str) -> String {
    format!("loop: advance {from} to {to_stage}/\n\nEvery task of the spec passed.")
}

/// `path`, a spec file, relative to the repository's top `root` (with
/// `/` separators).
///
/// Errors: it cannot be found, lies outside the repository, or its path is
/// not UTF-8 (each said in a sentence).
fn relative(root: &Path, path: &Path) -> Result<String, String> {
    let root = std::fs::canonicalize(root)
        .map_err(|e| format!("cannot find the repository at {}: {e}", root.display()))?;
    let file =
        std::fs::canonicalize(path).map_err(|e| format!("cannot find {}: {e}", path.display()))?;
    let rel = file.strip_prefix(&root).map_err(|_| {
        format!(
            "{} does not lie inside the repository at {}",
            path.display(),
            root.display()
        )
    })?;
    let parts: Option<Vec<&str>> = rel.iter().map(|c| c.to_str()).collect();
    parts
        .map(|p| p.join("/"))
        .ok_or_else(|| format!("the path {} is not UTF-8", path.display()))
}

/// Moves `spec` to its next stage on the integration branch at `head`.
/// `task` is the spec's task whose log directory (`.loopc/logs/<task>/advance/`)
/// and scratch worktree name the move's checks; `earlier` are the command
/// checks of tasks merged before in this run. Only command checks run (an
/// agent gate has no change of the task's to judge in a move), so a move
/// costs nothing.
pub fn advance(
    ctx: &RunCtx,
    spec: &StageSpec,
    task: usize,
    head: &str,
    earlier: &[Check],
    owners: &HashMap<String, Arc<Owner>>,
) -> Advance {
    let index: PathBuf = ctx.layout.dir.join("advance.index");
    let moved = move_commit(&ctx.git, spec, head, &index)
        .map_err(Advance::Stayed)
        .and_then(|commit| {
            let checks = move_checks(ctx, spec, earlier, owners);
            gate_move(ctx, task, head, &commit, &checks).map(|()| commit)
        });
    let commit = match moved {
        Ok(c) => c,
        Err(stayed) => return stayed,
    };
    match ctx
        .git
        .update_ref(&ctx.integration_ref, &commit, Some(head))
    {
        Ok(true) => Advance::Moved { commit },
        Ok(false) => Advance::BranchMoved(format!(
            "{} moved while loopc was running; it must only be changed by loopc during a run",
            ctx.integration_ref
        )),
        Err(e) => Advance::BranchMoved(e),
    }
}

/// The commit that moves `spec` to its next stage on top of `head` (not
/// yet on any branch), written with the scratch index file `index`; the
/// same commit for the same head, as [`advance`] makes it and as
/// `--dry-run` predicts it.
///
/// Errors: why the spec stays (the last stage, not the text the run read
/// at `head`, something in the way, git failing).
pub fn move_commit(
    git: &crate::run::sys::git::Git,
    spec: &StageSpec,
    head: &str,
    index: &Path,
) -> Result<String, String> {
    let (from, to, to_stage) = destination(&git.root, spec)?;
    still_there(git, spec, head, &from, &to)?;
    git.tree_with_move(head, &from, &to, index)
        .and_then(|tree| git.commit_tree_like(&tree, &[head], &message(&from, to_stage), head))
        .map_err(|e| format!("cannot write the move: {e}"))
}

/// Where `spec` moves: its path relative to the repository at `root`, its
/// path in the next stage, and that stage's name.
///
/// Errors: it is in the last stage, or outside the repository.
fn destination(root: &Path, spec: &StageSpec) -> Result<(String, String, &'static str), String> {
    let Some(to_stage) = spec.next_stage() else {
        return Err(format!(
            "{}/ is the last stage: there is nothing to move it to",
            spec.stage_name()
        ));
    };
    let from = relative(root, &spec.path)?;
    let file_name = spec
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let to = match from
        .rsplit_once('/')
        .and_then(|(dir, _)| dir.rsplit_once('/'))
    {
        Some((tree, _)) => format!("{tree}/{to_stage}/{file_name}"),
        None => format!("{to_stage}/{file_name}"),
    };
    Ok((from, to, to_stage))
}

/// Whether the spec at `from` on the integration branch at `head` is the
/// text this run read, and nothing is in the way at `to`.
///
/// Errors: why the spec stays.
fn still_there(
    git: &crate::run::sys::git::Git,
    spec: &StageSpec,
    head: &str,
    from: &str,
    to: &str,
) -> Result<(), String> {
    match git.file_at(head, from)? {
        Some(entry) => {
            if git.blob_text(&entry.blob)? != spec.text {
                return Err(format!(
                    "{from} on the integration branch is not the text this run read (it has \
                     uncommitted changes, or a task changed it): its tasks passed for the \
                     text read; commit the spec as it should be and run again"
                ));
            }
        }
        None => {
            return Err(format!(
                "{from} is not on the integration branch (it is not committed): commit it and \
                 run again"
            ));
        }
    }
    match git.file_at(head, to)? {
        None => Ok(()),
        Some(_) => Err(format!("{to} already exists on the integration branch")),
    }
}

/// The checks a move runs, as a merge's: the command checks of the spec's
/// tasks, then those of every task merged before; each sees its own task's
/// variables (its work on the integration branch, when known).
fn move_checks(
    ctx: &RunCtx,
    spec: &StageSpec,
    earlier: &[Check],
    owners: &HashMap<String, Arc<Owner>>,
) -> Vec<Check> {
    let mut checks: Vec<Check> = Vec::new();
    for &t in &spec.tasks {
        let name = &ctx.plan.tasks[t].name;
        for mut c in gate::checks_of(&ctx.plan.tasks[t]) {
            if !gate::is_agent(&c) && !checks.iter().any(|k| k.kind == c.kind) {
                if c.label == "accept" {
                    c.label = format!("accept of {name}");
                }
                c.owner = owners.get(name).cloned();
                checks.push(c);
            }
        }
    }
    add_checks(&mut checks, earlier);
    checks
}

/// Runs `checks` on the move `commit` in a scratch worktree, under task
/// `task`'s log directory (`advance/`).
///
/// Errors: the move stays (a check failed or could not run) or the run stops.
fn gate_move(
    ctx: &RunCtx,
    task: usize,
    head: &str,
    commit: &str,
    checks: &[Check],
) -> Result<(), Advance> {
    let task_def = &ctx.plan.tasks[task];
    let files = AttemptFiles::create(&ctx.layout, &task_def.name, "advance", None)
        .map_err(Advance::Stayed)?;
    ctx.git
        .diff_to_file(head, commit, &files.diff)
        .map_err(Advance::Stayed)?;
    ctx.events.emit(Event::Phase {
        task: task_def.name.clone(),
        attempt: 0,
        phase: "advance".into(),
        gate: None,
    });
    // Attempt 0 of this run, as a replay's checks: `+merge-<task>.r<run>-replay`.
    let id = crate::run::store::layout::TryId {
        run: ctx.run,
        attempt: 0,
        retry: 1,
    };
    let verdict = run_in_scratch(
        ctx,
        task_def,
        0,
        id,
        &files,
        commit,
        head,
        checks,
        "advance",
        &mut Cost::default(),
    );
    match verdict {
        Verdict::Pass => Ok(()),
        Verdict::Stopped => Err(Advance::Stopped),
        Verdict::Reject { reason, .. } => Err(Advance::Stayed(format!(
            "its move failed a check: {reason}"
        ))),
        Verdict::Limited(l) => Err(Advance::Stayed(format!(
            "its move could not be checked: agent `{}` hit a limit: {}",
            l.agent, l.message
        ))),
        Verdict::Blocked(why) | Verdict::Error(why) => Err(Advance::Stayed(format!(
            "its move could not be checked: {why}"
        ))),
    }
}
