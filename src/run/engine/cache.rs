//! The content-hash cache (docs/running.md step 1, docs/cache.md). Format: `docs/cache.md`.
//!
//! A task's *run-time key* is blake3 over a canonical encoding of the cache
//! format version, the task's definition key (from the compiled plan), the
//! run-time keys of its dependencies and, for a task with `inputs`, the
//! paths and object ids of the files its globs match at the task's base
//! commit ([`run_key`], which lives in [`crate::plan::key`] with everything
//! else that goes into a key).
//!
//! A pass is recorded as an *entry commit* that `refs/loopc/cache/<key>`
//! points at: its tree is the tree the task's gates passed on, its only
//! parent the integration-branch commit that brought the task's work
//! (so that commit, and everything it needs, survives `git gc` and worktree
//! removal), and its message carries the entry's metadata as JSON
//! ([`Entry`]). An entry whose message cannot be read is a miss. The
//! index `.loopc/cache/index.json` remembers, per plan and task, the key
//! recorded last, so `run --dry-run` can say what changed.

use crate::plan::Task;
use crate::plan::key::Key;
pub use crate::plan::key::{
    ADDED, CACHE_FORMAT_VERSION, Components, NoKey, Produced, REMOVED, RunKey, Surroundings,
    changes, changes_but_dependencies, definition_changes, match_inputs, run_key,
};
use crate::run::store::layout::Layout;
use crate::run::sys::git::Git;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;

/// Where entries live.
pub const REF_PREFIX: &str = "refs/loopc/cache/";

/// The first line of an entry commit's message.
const ENTRY_SUBJECT: &str = "loopc cache entry";

/// One recorded pass (the JSON in an entry commit's message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The cache format version.
    pub format: String,
    /// The run-time key (hex).
    pub key: String,
    /// The plan's name.
    pub plan: String,
    /// The task's name.
    pub task: String,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
    /// Milliseconds since the Unix epoch when it was recorded (orders
    /// entries of one task when the index is missing).
    pub recorded_unix_ms: u64,
    /// The task's summary.
    pub summary: Option<String>,
    /// What its attempts cost (known costs), micro-dollars.
    pub cost_micro_usd: u64,
    /// Whether some of that cost was unknown.
    pub cost_unknown: bool,
    /// The integration-branch commit that brought the task's work.
    pub commit: String,
    /// The commit the work was made on top of: replaying the entry applies
    /// `parent..commit`. `None` when the task changed nothing.
    pub parent: Option<String>,
    /// The tree the task's gates passed on (the tree of `commit`).
    pub gated_tree: String,
    /// For a task with `expands`: the commit its plan fragment was read
    /// from, the task's own commit before any merge (a replay reads the
    /// fragment there, not at `commit`, where another task's merged work
    /// may have changed the file). When it is not `commit`, it is the
    /// entry commit's second parent, so it stays reachable. Absent for
    /// other tasks, and in entries older loopc recorded (the fragment is
    /// then read at `commit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment_commit: Option<String>,
    /// Paths the task changed.
    pub files: Vec<String>,
    /// What the task's merged work produced: each path it changed on the
    /// integration branch and `<mode> <object id>` there (docs/cache.md,
    /// "Early cutoff"); its dependents' keys hold it.
    pub produced: Produced,
    /// The gates that passed this result (docs/cache.md, "Gates and their
    /// verdicts"): each gate's key (hex) and its name when it passed. A
    /// gate of the task that is not here has not judged this result (it
    /// was added, changed, or skipped with `--skip-gate`).
    pub gates: BTreeMap<String, String>,
    /// The agent gates that rejected this result when it was replayed
    /// (docs/cache.md, "Gates and their verdicts"): each gate's key (hex)
    /// and its verdict. A rerun takes the recorded verdict instead of
    /// paying the gate again. Absent when there is none, and in entries
    /// older loopc recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rejected: BTreeMap<String, Rejection>,
    /// The key's components.
    pub components: Components,
}

/// An agent gate's recorded rejection of a cached result ([`Entry::rejected`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    /// The gate's name when it rejected the result.
    pub gate: String,
    /// Why (one line), as the run said it then.
    pub reason: String,
    /// The feedback it gave: the first feedback of the task's next attempt.
    pub feedback: String,
}

impl Entry {
    /// The gates of `task` that have not passed this result (in the
    /// task's order): they run on it before it is replayed.
    pub fn unchecked<'a>(&self, task: &'a Task) -> Vec<&'a crate::plan::Gate> {
        task.gates
            .iter()
            .filter(|g| !self.gates.contains_key(&g.key.to_hex()))
            .map(|g| g.as_ref())
            .collect()
    }

    /// The first gate of `task`, among those that have not passed this
    /// result, whose rejection of it is recorded, with that rejection: the
    /// result is not used, and the gate is not paid again.
    pub fn recorded_rejection<'a>(
        &'a self,
        task: &'a Task,
    ) -> Option<(&'a crate::plan::Gate, &'a Rejection)> {
        self.unchecked(task)
            .into_iter()
            .find_map(|g| self.rejected.get(&g.key.to_hex()).map(|r| (g, r)))
    }
}

/// Each gate of `task` by key (hex) and name: what an entry records as
/// having passed its result.
pub fn gates_of(task: &Task) -> BTreeMap<String, String> {
    task.gates
        .iter()
        .map(|g| (g.key.to_hex(), g.name.clone()))
        .collect()
}

/// What the work that moved the integration branch from `before` to
/// `after` produced ([`Produced`]); nothing when they are the same.
///
/// Errors: git fails.
pub fn produced(git: &Git, before: &str, after: &str) -> Result<Produced, String> {
    if before == after {
        return Ok(Produced::new());
    }
    Ok(git.changed_files(before, after)?.into_iter().collect())
}

/// Writes `entry`'s entry commit (its ref not moved yet): returns the
/// ref that is to point at it, `refs/loopc/cache/<key>`, and the commit.
///
/// Errors: git fails or the entry cannot be encoded.
pub fn write_entry(git: &Git, entry: &Entry) -> Result<(String, String), String> {
    let json =
        serde_json::to_string_pretty(entry).map_err(|e| format!("cannot encode entry: {e}"))?;
    let message = format!("{ENTRY_SUBJECT} {} {}\n\n{json}\n", entry.plan, entry.task);
    let mut parents = vec![entry.commit.as_str()];
    if let Some(f) = entry
        .fragment_commit
        .as_deref()
        .filter(|f| *f != entry.commit)
    {
        parents.push(f);
    }
    let commit = git.write_commit(&entry.gated_tree, &parents, &message)?;
    Ok((format!("{REF_PREFIX}{}", entry.key), commit))
}

/// The on-disk index: plan name → task name → the key recorded last.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    version: u32,
    plans: BTreeMap<String, BTreeMap<String, String>>,
}

/// The entries of one repository, loaded once per run.
#[derive(Debug, Default)]
pub struct Store {
    entries: HashMap<String, Entry>,
    index: Index,
    index_path: PathBuf,
    /// The index has entries not written to disk yet.
    unwritten: bool,
    /// When the index was last written.
    written_at: Option<std::time::Instant>,
    /// The least time until the next write: [`INDEX_EVERY`], or
    /// [`INDEX_SPACING`] times the last write's.
    write_every: std::time::Duration,
}

/// How often, at most, the cache index is written while entries are
/// recorded one after another: it is a hint ([`Store::latest`] falls back
/// to the newest entry), so a run killed before it is written loses
/// nothing, and writing (with `fsync`) on every pass was a good part of the
/// coordinating thread's work per merge.
const INDEX_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// How many times the last write of the index passes before the next
/// one: the index names every task of every plan recorded (some 80 bytes
/// a task), and at 60,000 tasks writing it every [`INDEX_EVERY`] was half
/// of the coordinating thread's work in a first run; this keeps it to
/// about a tenth whatever the plan's size (as state.json's writes).
const INDEX_SPACING: u32 = 10;

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl Store {
    /// Loads every entry (one `git for-each-ref`) and the index. Entries
    /// whose metadata cannot be read are left out (they are misses).
    ///
    /// Errors: git fails.
    pub fn load(git: &Git, layout: &Layout) -> Result<Store, String> {
        let mut entries = HashMap::new();
        for (refname, message) in git.ref_messages(REF_PREFIX)? {
            let Some(key) = refname.strip_prefix(REF_PREFIX) else {
                continue;
            };
            let Some(json) = message
                .strip_prefix(ENTRY_SUBJECT)
                .and_then(|rest| rest.find('{').map(|i| &rest[i..]))
            else {
                continue;
            };
            let Ok(entry) = serde_json::from_str::<Entry>(json.trim_end()) else {
                continue;
            };
            if entry.key == key && entry.format == CACHE_FORMAT_VERSION {
                entries.insert(key.to_string(), entry);
            }
        }
        let index_path = layout.dir.join("cache").join("index.json");
        let index = std::fs::read(&index_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Index>(&b).ok())
            .filter(|i| i.version == 1)
            .unwrap_or_default();
        Ok(Store {
            entries,
            index,
            index_path,
            unwritten: false,
            written_at: None,
            write_every: INDEX_EVERY,
        })
    }

    /// The entry recorded under `key`, if any.
    pub fn get(&self, key: &Key) -> Option<&Entry> {
        self.entries.get(&key.to_hex())
    }

    /// The entry recorded last for `task` of `plan`: the one the index
    /// names, else the newest of that task's entries.
    pub fn latest(&self, plan: &str, task: &str) -> Option<&Entry> {
        if let Some(e) = self
            .index
            .plans
            .get(plan)
            .and_then(|m| m.get(task))
            .and_then(|k| self.entries.get(k))
        {
            return Some(e);
        }
        self.entries
            .values()
            .filter(|e| e.plan == plan && e.task == task)
            .max_by(|a, b| {
                a.recorded_unix_ms
                    .cmp(&b.recorded_unix_ms)
                    .then_with(|| a.key.cmp(&b.key))
            })
    }

    /// Records `entry`: writes its entry commit, points
    /// `refs/loopc/cache/<key>` at it and updates the index.
    ///
    /// Errors: git fails or the index cannot be written.
    pub fn record(&mut self, git: &Git, entry: Entry) -> Result<(), String> {
        let (refname, commit) = write_entry(git, &entry)?;
        git.set_ref(&refname, &commit)?;
        self.recorded(entry)
    }

    /// Notes `entry`, whose ref now points at its entry commit
    /// ([`write_entry`]; moved with the integration branch, docs/running.md
    /// step 7), and updates the index.
    ///
    /// Errors: the index cannot be written.
    pub fn recorded(&mut self, entry: Entry) -> Result<(), String> {
        self.index.version = 1;
        self.index
            .plans
            .entry(entry.plan.clone())
            .or_default()
            .insert(entry.task.clone(), entry.key.clone());
        self.entries.insert(entry.key.clone(), entry);
        self.unwritten = true;
        if self
            .written_at
            .is_some_and(|t| t.elapsed() < self.write_every.max(INDEX_EVERY))
        {
            return Ok(());
        }
        self.flush()
    }

    /// Writes the index if entries were recorded since it was last written
    /// (also when the store is dropped).
    ///
    /// Errors: the index cannot be written.
    pub fn flush(&mut self) -> Result<(), String> {
        if !self.unwritten {
            return Ok(());
        }
        self.unwritten = false;
        let began = std::time::Instant::now();
        let written = self.write_index();
        self.written_at = Some(std::time::Instant::now());
        self.write_every = INDEX_EVERY.max(began.elapsed() * INDEX_SPACING);
        written
    }

    fn write_index(&self) -> Result<(), String> {
        let dir = self.index_path.parent().unwrap_or(&self.index_path);
        let text = serde_json::to_string_pretty(&self.index)
            .map_err(|e| format!("cannot encode the cache index: {e}"))?;
        let tmp = self.index_path.with_extension("json.tmp");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.index_path)
        };
        write().map_err(|e| format!("cannot write {}: {e}", self.index_path.display()))
    }
}

/// A commit's files: `(path, object id)` pairs.
pub type FileList = std::sync::Arc<Vec<(String, String)>>;

/// Lists the files of base commits, each commit once per run.
#[derive(Debug, Default)]
pub struct FileLister {
    seen: HashMap<String, FileList>,
}

impl FileLister {
    /// The files of `commit` when task `task` has `inputs` or `context`,
    /// else `None`.
    ///
    /// Errors: git fails.
    pub fn files_for(
        &mut self,
        git: &Git,
        task: &Task,
        commit: &str,
    ) -> Result<Option<FileList>, String> {
        if !task.reads_files() {
            return Ok(None);
        }
        if let Some(f) = self.seen.get(commit) {
            return Ok(Some(f.clone()));
        }
        let files = std::sync::Arc::new(git.tree_files(commit)?);
        self.seen.insert(commit.to_string(), files.clone());
        Ok(Some(files))
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
