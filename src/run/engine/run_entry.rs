//! The whole-run cache entry (docs/cache.md, "An unchanged rerun"): a run
//! in which every task was replayed as a fast-forward (or changed nothing)
//! is recorded once more, as one entry keyed by everything such a run is
//! made of: the base commit, each task's name, definition key, `inputs`
//! and gates (in plan order), what `loop.copy` brings and the answers.
//! It is valid while the task entries it was replayed from are exactly as
//! they were (a digest of every ref under `refs/loopc/cache/`, these run
//! entries left out): the per-task replay is then a function of the same
//! data, and the next run with the same key takes its result at once: the
//! integration branch moves once, to the recorded head, with no lookup,
//! key or replay per task.
//!
//! One entry per plan name: `refs/loopc/cache/run/<plan slug>` points at
//! a commit whose only parent is the recorded head (so it stays
//! reachable) and whose message is the entry's JSON ([`RunEntry`]).

use crate::plan::Plan;
use crate::plan::key::{Encoder, Key};
use crate::run::engine::cache::{REF_PREFIX, Surroundings};
use crate::run::sys::git::Git;
use crate::run::sys::oid::object_id;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where run entries live (inside [`REF_PREFIX`], so that `loopc clean
/// --cache` and the integration branch's history check treat them as the
/// cache's).
pub const RUN_PREFIX: &str = "refs/loopc/cache/run/";

/// The version of a run entry's key and format.
pub const RUN_FORMAT_VERSION: &str = "loopc-run-v2";

/// The first line of a run entry commit's message.
const RUN_SUBJECT: &str = "loopc run entry";

/// How a task's replay went in the recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's name.
    pub task: String,
    /// Its run-time key (hex).
    pub key: String,
    /// The integration branch's head after it.
    pub commit: String,
    /// `fast_forward` or `none`.
    pub how: String,
    /// The entry's summary.
    pub summary: Option<String>,
    /// The entry's changed paths.
    pub files: Vec<String>,
}

/// One recorded run (the JSON in a run entry commit's message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// [`RUN_FORMAT_VERSION`].
    pub format: String,
    /// The whole run's key (hex, [`run_key`]).
    pub key: String,
    /// The digest of the task entries' refs it was replayed from ([`entries_digest`]).
    pub entries: String,
    /// The integration branch's head at the end.
    pub head: String,
    /// Every task, in plan order.
    pub tasks: Vec<TaskResult>,
}

/// The key of a run of `plan` from `base`: `None` when such a run cannot
/// be taken whole (a task `expands`: the plan grows as it runs; a REEL
/// spec tree: specs move).
pub fn run_key(plan: &Plan, base: &str, around: &Surroundings) -> Option<Key> {
    if plan.pipeline.is_some() || plan.tasks.iter().any(|t| t.expands.is_some()) {
        return None;
    }
    let mut e = Encoder::new();
    e.str("format", RUN_FORMAT_VERSION)
        .str("base", base)
        .str("tasks", &plan.tasks.len().to_string());
    for t in &plan.tasks {
        e.str("task.name", &t.name).key("task.key", &t.key);
        e.str("task.inputs", &t.inputs.len().to_string());
        for glob in &t.inputs {
            e.str("task.input", glob);
        }
        // The files' contents are the base's; the list is the plan's (v1
        // left it out: a task given `context` took the run entry).
        e.str("task.context", &t.context.len().to_string());
        for path in &t.context {
            e.str("task.context.path", path);
        }
        // After `--skip-gate`: the gates the run judges with.
        e.str("task.gates", &t.gates.len().to_string());
        for g in &t.gates {
            e.key("task.gate", &g.key);
        }
    }
    e.str("copied", &around.copied.len().to_string());
    for (path, digest) in &around.copied {
        e.str("copied.path", path).str("copied.content", digest);
    }
    e.str("answers", &around.answers.len().to_string());
    for (task, digest) in &around.answers {
        e.str("answers.task", task).str("answers.digest", digest);
    }
    Some(e.finish())
}

/// The ref of `plan`'s run entry.
pub fn refname(plan: &Plan) -> String {
    format!(
        "{RUN_PREFIX}{}",
        crate::run::sys::worktree::slug(&plan.name)
    )
}

/// A digest of every task entry's ref (`refs/loopc/cache/<key>` and the
/// commit it points at, sorted; run entries left out), read from git's
/// files (one `git for-each-ref` where they do not say it plainly).
///
/// Errors: git fails.
pub fn entries_digest(git: &Git) -> Result<String, String> {
    let refs = match git.refs_under_from_files(REF_PREFIX, &[RUN_PREFIX]) {
        Some(r) => r,
        None => {
            let out = git.read(&[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                REF_PREFIX,
            ])?;
            out.lines()
                .filter_map(|l| l.split_once(' '))
                .filter(|(name, _)| !name.starts_with(RUN_PREFIX))
                .map(|(n, id)| (n.to_string(), id.to_string()))
                .collect()
        }
    };
    let mut e = Encoder::new();
    e.str("entries", &refs.len().to_string());
    for (name, id) in &refs {
        e.str("entry.ref", name).str("entry.commit", id);
    }
    Ok(e.finish().to_hex())
}

/// The run entry of `plan` recorded under `key`, if there is one and the
/// task entries it was replayed from are unchanged; anything unreadable
/// or different is a miss (`None`): the run replays task by task.
///
/// `memo` is a file that keeps the entry commit last read, as `git cat-file
/// commit` prints it: while the ref points at a commit whose id is the
/// memo's own object id (its hash, [`object_id`]), the commit is read from
/// there, not from git (one process fewer an unchanged rerun). The hash
/// makes it a proven copy: missing, changed or for another commit, git is
/// asked and the memo written again (a failure to write it changes nothing).
pub fn lookup(git: &Git, plan: &Plan, key: &Key, memo: &Path) -> Option<RunEntry> {
    let name = refname(plan);
    let commit = match git.ref_from_files(&name) {
        Some(found) => found?,
        None => git.commit_of(&name).ok()??,
    };
    let memoized = std::fs::read(memo)
        .ok()
        .filter(|raw| object_id("commit", raw, commit.len()).as_deref() == Some(commit.as_str()))
        .and_then(|raw| String::from_utf8(raw).ok());
    let text = match memoized {
        Some(text) => text,
        None => {
            let out = git
                .run_in(&git.root, &["cat-file", "commit", &commit])
                .ok()?;
            if out.stdout_was_utf8 {
                let _ = write_memo(memo, &out.stdout);
            }
            out.stdout
        }
    };
    let message = text.split_once("\n\n")?.1;
    let json = message.strip_prefix(RUN_SUBJECT)?.split_once("\n\n")?.1;
    let entry: RunEntry = serde_json::from_str(json.trim_end()).ok()?;
    let fits =
        entry.format == RUN_FORMAT_VERSION
            && entry.key == key.to_hex()
            && entry.tasks.len() == plan.tasks.len()
            && entry.tasks.iter().zip(&plan.tasks).all(|(r, t)| {
                r.task == t.name && matches!(r.how.as_str(), "fast_forward" | "none")
            });
    if !fits || entries_digest(git).ok()? != entry.entries {
        return None;
    }
    Some(entry)
}

/// Where [`lookup`] keeps its memo of `plan`'s run entry: in the
/// `.loopc/` directory `dir`, `cache/run-<plan slug>.memo`.
pub fn memo_path(dir: &Path, plan: &Plan) -> std::path::PathBuf {
    let slug = crate::run::sys::worktree::slug(&plan.name);
    dir.join("cache").join(format!("run-{slug}.memo"))
}

/// Writes the memo of [`lookup`]: whole or not at all (a file beside it,
/// renamed over it).
fn write_memo(memo: &Path, raw: &str) -> std::io::Result<()> {
    let part = memo.with_extension("part");
    if let Some(dir) = memo.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&part, raw)?;
    std::fs::rename(&part, memo)
}

/// Records `entry` as `plan`'s run entry: a commit on the recorded head
/// (its tree, the head as only parent), and the ref moved to it.
///
/// Errors: git fails.
pub fn record(git: &Git, plan: &Plan, entry: &RunEntry) -> Result<(), String> {
    let json =
        serde_json::to_string(entry).map_err(|e| format!("cannot encode the run entry: {e}"))?;
    let slug = crate::run::sys::worktree::slug(&plan.name);
    let message = format!("{RUN_SUBJECT} {slug}\n\n{json}\n");
    let tree = git.tree_of(&entry.head)?;
    let commit = git.commit_tree(&tree, &[entry.head.as_str()], &message)?;
    git.set_ref(&refname(plan), &commit)?;
    // Every run that takes this entry reads every task entry's ref
    // ([`entries_digest`]): one `packed-refs` file instead of a file per
    // task. Only quicker: a git without `--include` (before 2.42) or a
    // failure leaves the refs loose, as they were.
    let include = format!("{REF_PREFIX}*");
    let _ = git.try_run_in(&git.root, &["pack-refs", "--include", &include]);
    Ok(())
}
