//! The content-hash cache (spec §5 step 1, §6). Format: `docs/cache.md`.
//!
//! A task's *run-time key* is blake3 over a canonical encoding of the cache
//! format version, the task's definition key (from the compiled plan), the
//! run-time keys of its dependencies and, for a task with `inputs`, the
//! paths and object ids of the files its globs match at the task's base
//! commit ([`run_key`]).
//!
//! A pass is recorded as an *entry commit* that `refs/loopc/cache/<key>`
//! points at: its tree is the tree the task's gates passed on, its only
//! parent the integration-branch commit that brought the task's work
//! (so that commit, and everything it needs, survives `git gc` and worktree
//! removal), and its message carries the entry's metadata as JSON
//! ([`Entry`]). An entry whose message cannot be read is a miss. The
//! index `.loopc/cache/index.json` remembers, per plan and task, the key
//! recorded last, so `run --dry-run` can say what changed.

use crate::key::{Encoder, Key};
use crate::plan::{Plan, Task, TaskKind};
use crate::run::store::layout::Layout;
use crate::run::sys::git::Git;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;

/// The cache format version: part of every run-time key and of every entry.
/// Bump it whenever the encoding of [`run_key`] or the entry format changes.
pub const CACHE_FORMAT_VERSION: &str = "loopc-cache-v1";

/// Where entries live.
pub const REF_PREFIX: &str = "refs/loopc/cache/";

/// The first line of an entry commit's message.
const ENTRY_SUBJECT: &str = "loopc cache entry";

/// The components of a run-time key, kept in each entry so that a later
/// key can be compared with it part by part. Digests are lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Components {
    /// The cache format version ([`CACHE_FORMAT_VERSION`]).
    pub format: String,
    /// `agent` or `command`.
    pub kind: String,
    /// The definition key (spec §6 without `inputs`).
    pub definition: String,
    /// The prompt or command digest.
    pub work: String,
    /// The agent digest.
    pub agent: String,
    /// `accept` and gates digest.
    pub gates: String,
    /// The environment digest.
    pub env: String,
    /// Each dependency's name and run-time key.
    pub dependencies: BTreeMap<String, String>,
    /// With `inputs`: each matched path and its object id at the base commit.
    pub inputs: Option<BTreeMap<String, String>>,
}

/// A run-time key and what it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    /// The digest.
    pub key: Key,
    /// Its components.
    pub components: Components,
}

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
    /// Paths the task changed.
    pub files: Vec<String>,
    /// The key's components.
    pub components: Components,
}

/// Computes task `index`'s run-time key. `deps` holds the run-time key of
/// each of its dependencies (by task index); `files` is the base commit's
/// file list ([`Git::tree_files`]), needed only when the task has `inputs`.
///
/// Errors: a dependency has no key, or an `inputs` glob does not compile.
pub fn run_key(
    plan: &Plan,
    index: usize,
    deps: &[Option<Key>],
    files: Option<&[(String, String)]>,
) -> Result<RunKey, String> {
    let task = &plan.tasks[index];
    let mut dependencies = BTreeMap::new();
    let mut dep_keys = Vec::new();
    for &d in &task.dependencies {
        let Some(k) = deps.get(d).copied().flatten() else {
            return Err(format!(
                "dependency `{}` has no cache key",
                plan.tasks[d].name
            ));
        };
        dependencies.insert(plan.tasks[d].name.clone(), k.to_hex());
        dep_keys.push((plan.tasks[d].name.as_str(), k));
    }
    dep_keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let inputs = if task.inputs.is_empty() {
        None
    } else {
        let files = files.ok_or("the base commit's files were not listed")?;
        Some(match_inputs(task, files)?)
    };

    let mut e = Encoder::new();
    e.str("format", CACHE_FORMAT_VERSION)
        .key("definition", &task.key)
        .str("dependencies", &dep_keys.len().to_string());
    for (name, k) in &dep_keys {
        e.str("dependency.name", name).key("dependency.key", k);
    }
    match &inputs {
        None => {
            e.opt("inputs", None);
        }
        Some(list) => {
            e.opt("inputs", Some(&list.len().to_string()));
            for (path, oid) in list {
                e.str("input.path", path).str("input.object", oid);
            }
        }
    }
    let parts = &task.key_parts;
    Ok(RunKey {
        key: e.finish(),
        components: Components {
            format: CACHE_FORMAT_VERSION.to_string(),
            kind: match task.kind {
                TaskKind::Agent { .. } => "agent".into(),
                TaskKind::Command { .. } => "command".into(),
            },
            definition: task.key.to_hex(),
            work: parts.work.to_hex(),
            agent: parts.agent.to_hex(),
            gates: parts.gates.to_hex(),
            env: parts.env.to_hex(),
            dependencies,
            inputs,
        },
    })
}

/// The files of `files` that `task`'s `inputs` globs match, sorted by path
/// (a `BTreeMap`: byte order of the UTF-8 paths). Globs are matched against
/// whole repository-relative paths; `*` and `?` do not cross `/`, `**` does.
///
/// Errors: a glob does not compile (the checker rejects those first).
pub fn match_inputs(
    task: &Task,
    files: &[(String, String)],
) -> Result<BTreeMap<String, String>, String> {
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in &task.inputs {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("task `{}`: input glob `{pattern}`: {e}", task.name))?;
        builder.add(glob);
    }
    let set = builder
        .build()
        .map_err(|e| format!("task `{}`: inputs: {e}", task.name))?;
    Ok(files
        .iter()
        .filter(|(path, _)| set.is_match(path))
        .cloned()
        .collect())
}

/// What changed between an older entry's key components and the current
/// ones, in words (`prompt`, `command`, `agent`, `gates`, `env`,
/// `dependency a`, `input file src/x.py`, `cache format`).
pub fn changes(old: &Components, new: &Components) -> Vec<String> {
    let mut out = Vec::new();
    if old.format != new.format {
        out.push("cache format".to_string());
    }
    if old.work != new.work || old.kind != new.kind {
        out.push(if new.kind == "command" {
            "command".to_string()
        } else {
            "prompt".to_string()
        });
    }
    if old.agent != new.agent {
        out.push("agent".to_string());
    }
    if old.gates != new.gates {
        out.push("gates".to_string());
    }
    if old.env != new.env {
        out.push("env".to_string());
    }
    let mut dep_names: Vec<&String> = old
        .dependencies
        .keys()
        .chain(new.dependencies.keys())
        .collect();
    dep_names.sort();
    dep_names.dedup();
    for name in dep_names {
        if old.dependencies.get(name) != new.dependencies.get(name) {
            out.push(format!("dependency {name}"));
        }
    }
    match (&old.inputs, &new.inputs) {
        (None, None) => {}
        (Some(_), None) | (None, Some(_)) => out.push("inputs".to_string()),
        (Some(a), Some(b)) => {
            let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
            paths.sort();
            paths.dedup();
            for p in paths {
                if a.get(p) != b.get(p) {
                    out.push(format!("input file {p}"));
                }
            }
        }
    }
    if out.is_empty() && old.definition != new.definition {
        // Parts of the definition key not listed above (its own version).
        out.push("definition".to_string());
    }
    out
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
        let json = serde_json::to_string_pretty(&entry)
            .map_err(|e| format!("cannot encode entry: {e}"))?;
        let message = format!("{ENTRY_SUBJECT} {} {}\n\n{json}\n", entry.plan, entry.task);
        let commit = git.commit_tree(&entry.gated_tree, &[&entry.commit], &message)?;
        git.set_ref(&format!("{REF_PREFIX}{}", entry.key), &commit)?;
        self.index.version = 1;
        self.index
            .plans
            .entry(entry.plan.clone())
            .or_default()
            .insert(entry.task.clone(), entry.key.clone());
        self.entries.insert(entry.key.clone(), entry);
        self.write_index()
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
    /// The files of `commit` when task `task` has `inputs`, else `None`.
    ///
    /// Errors: git fails.
    pub fn files_for(
        &mut self,
        git: &Git,
        task: &Task,
        commit: &str,
    ) -> Result<Option<FileList>, String> {
        if task.inputs.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(source: &str) -> Plan {
        crate::compile("t.loop", source)
            .plan
            .unwrap_or_else(|| panic!("plan does not compile:\n{source}"))
    }

    const PLAN: &str = r#"
        agent bot { run = "bot" }
        defaults { agent = bot }
        task a { prompt = "a" inputs = ["src/*.rs", "docs/**"] }
        task b: a { prompt = "b" }
    "#;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, o)| (p.to_string(), o.to_string()))
            .collect()
    }

    #[test]
    fn globs_match_whole_paths_and_star_stays_in_a_directory() {
        let p = plan(PLAN);
        let matched = match_inputs(
            &p.tasks[0],
            &files(&[
                ("src/lib.rs", "1"),
                ("src/deep/mod.rs", "2"),
                ("docs/a/b.md", "3"),
                ("README", "4"),
                ("xsrc/lib.rs", "5"),
            ]),
        )
        .unwrap();
        let paths: Vec<&str> = matched.keys().map(String::as_str).collect();
        assert_eq!(paths, ["docs/a/b.md", "src/lib.rs"]);
    }

    #[test]
    fn run_keys_depend_on_inputs_and_dependencies_only_through_content() {
        let p = plan(PLAN);
        let f1 = files(&[("src/lib.rs", "1"), ("README", "x")]);
        let f2 = files(&[("README", "y"), ("src/lib.rs", "1")]);
        let f3 = files(&[("src/lib.rs", "2")]);
        let a1 = run_key(&p, 0, &[], Some(&f1)).unwrap();
        // Unmatched files and listing order do not matter.
        assert_eq!(a1.key, run_key(&p, 0, &[], Some(&f2)).unwrap().key);
        let a3 = run_key(&p, 0, &[], Some(&f3)).unwrap();
        assert_ne!(a1.key, a3.key);
        assert_eq!(
            changes(&a1.components, &a3.components),
            ["input file src/lib.rs"]
        );
        // A dependency's run-time key flows into its dependents'.
        let b1 = run_key(&p, 1, &[Some(a1.key)], None).unwrap();
        let b3 = run_key(&p, 1, &[Some(a3.key)], None).unwrap();
        assert_ne!(b1.key, b3.key);
        assert_eq!(changes(&b1.components, &b3.components), ["dependency a"]);
        // No key without the dependency's.
        assert!(run_key(&p, 1, &[None], None).is_err());
        // The definition key is part of it.
        assert_ne!(a1.key, p.tasks[0].key);
    }

    #[test]
    fn changes_name_each_part() {
        let old = plan(PLAN);
        let new = plan(
            r#"
            agent bot { run = "bot2" }
            gate g = "true"
            defaults { agent = bot }
            task a { prompt = "a!" inputs = ["src/*.rs", "docs/**"] gates = [g] env = { X = "1" } }
            task b: a { prompt = "b" }
        "#,
        );
        let f = files(&[("src/lib.rs", "1")]);
        let o = run_key(&old, 0, &[], Some(&f)).unwrap();
        let n = run_key(&new, 0, &[], Some(&f)).unwrap();
        assert_eq!(
            changes(&o.components, &n.components),
            ["prompt", "agent", "gates", "env"]
        );
        // Titles and timeouts are not part of any of them.
        let same = plan(
            r#"
            agent bot { run = "bot" timeout = 5m }
            defaults { agent = bot }
            task a "Title" { prompt = "a" inputs = ["src/*.rs", "docs/**"] timeout = 1m }
            task b: a { prompt = "b" }
        "#,
        );
        assert_eq!(o.key, run_key(&same, 0, &[], Some(&f)).unwrap().key);
    }
}
