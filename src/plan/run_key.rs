//! The run-time key `loopc run` computes (docs/cache.md, "The run-time
//! key"): a task's work key ([`work_key`]), what its dependencies produced
//! ([`Produced`], [`result_digest`]: early cutoff) and the files its
//! `inputs` match ([`run_key`]); and the words that say what changed
//! between two keys ([`changes`]). Re-exported by [`super::key`].

use super::digest::{Encoder, Key};
use super::key::KEY_FORMAT_VERSION;
use super::types::{Plan, Task, TaskKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a change of [`changes`] ends when the inputs match a file now
/// (`input file README added`).
pub const ADDED: &str = "added";

/// How a change of [`changes`] ends when the inputs match a file no
/// longer (`input file old.txt removed`).
pub const REMOVED: &str = "removed";

/// The cache format version: part of every run-time key and of every entry.
/// Bump it whenever the encoding of [`run_key`] or the format of cache
/// entries (`run::cache::Entry`) changes.
pub const CACHE_FORMAT_VERSION: &str = "loopc-cache-v2";

/// What a task's work produced once merged (docs/cache.md, "Early
/// cutoff"): each path its merged work changed on the integration branch,
/// with `<mode> <object id>` there afterwards (a removed path has git's
/// zero id). A task that changed nothing produced the empty map.
pub type Produced = BTreeMap<String, String>;

/// The digest of what a dependency produced, as its dependent's key sees
/// it: `produced` without the path `except` (the plan fragment of the
/// producing task, for a task of that fragment: its own definition holds
/// what of the fragment matters to it).
pub fn result_digest(produced: &Produced, except: Option<&str>) -> Key {
    let mut e = Encoder::new();
    let kept: Vec<(&String, &String)> = produced
        .iter()
        .filter(|(p, _)| Some(p.as_str()) != except)
        .collect();
    e.str("files", &kept.len().to_string());
    for (path, object) in kept {
        e.str("file.path", path).str("file.object", object);
    }
    e.finish()
}

/// The components of a run-time key, kept in each entry so that a later
/// key can be compared with it part by part. Digests are lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Components {
    /// The cache format version ([`CACHE_FORMAT_VERSION`]).
    pub format: String,
    /// `agent` or `command`.
    pub kind: String,
    /// The work key: the definition without the gates and the
    /// dependencies (docs/cache.md).
    pub definition: String,
    /// The prompt or command digest.
    pub work: String,
    /// The agent digest.
    pub agent: String,
    /// `accept`, `protect` and `may_change` digest (not the gates).
    pub checks: String,
    /// The environment digest.
    pub env: String,
    /// Each dependency's name and the digest of what it produced
    /// ([`result_digest`]).
    pub dependencies: BTreeMap<String, String>,
    /// With `inputs`: each matched path and its object id at the base commit.
    pub inputs: Option<BTreeMap<String, String>>,
    /// With `context`: each context file and its object id at the base
    /// commit (`missing` when it is not there; absent from entries of
    /// tasks without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<BTreeMap<String, String>>,
    /// With `loop.copy`: each file copied into the worktrees and the
    /// blake3 digest of its content (absent from entries of plans without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied: Option<BTreeMap<String, String>>,
    /// With people's answers to the task's questions (`loopc answer`):
    /// the blake3 digest of the prompt section that gives them (absent
    /// from entries of tasks without answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
}

/// What a task runs with besides the plan and the repository's files,
/// part of its run-time key: the files `loop.copy` brings into every
/// worktree, and people's answers to the questions of tasks.
#[derive(Debug, Clone, Default)]
pub struct Surroundings {
    /// Each copied file (relative path) and the blake3 digest of its
    /// content; empty without `copy`.
    pub copied: BTreeMap<String, String>,
    /// Per task name: the blake3 digest of its answers' prompt section;
    /// a task without answers is not in it.
    pub answers: BTreeMap<String, String>,
}

/// A run-time key and what it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    /// The digest.
    pub key: Key,
    /// Its components.
    pub components: Components,
}

/// A task's work key (docs/cache.md): its definition without its gates
/// and without its dependencies' keys: the name, the prompt or command,
/// the agent, `accept` with `protect` and `may_change`, the environment.
pub fn work_key(task: &Task) -> Key {
    let parts = &task.key_parts;
    Encoder::new()
        .str("version", KEY_FORMAT_VERSION)
        .str("task", &task.name)
        .key("work", &parts.work)
        .key("agent", &parts.agent)
        .key("checks", &parts.checks)
        .key("env", &parts.env)
        .finish()
}

/// Why a task has no run-time key yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoKey {
    /// This dependency's result is not known (it has not landed yet).
    Dependency(String),
    /// Something else: the base's files were not listed, a glob.
    Other(String),
}

impl std::fmt::Display for NoKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoKey::Dependency(d) => write!(f, "dependency `{d}` has no known result"),
            NoKey::Other(e) => f.write_str(e),
        }
    }
}

/// Computes task `index`'s run-time key. `results` holds what each task
/// of the plan produced once merged (by task index; `None`: not known),
/// of which its dependencies' are read (early cutoff: a dependency that
/// produced the same files leaves the key as it was, however it was
/// produced); `files` is the base commit's file list (`Git::tree_files`
/// in `run`), needed only when the task has `inputs`; `around` the files
/// `loop.copy` brings into every worktree, each with the digest of its
/// content, and the tasks' answers (without either nothing is written).
///
/// Errors: a dependency's result is not known, or an `inputs` glob does
/// not compile.
pub fn run_key(
    plan: &Plan,
    index: usize,
    results: &[Option<Arc<Produced>>],
    files: Option<&[(String, String)]>,
    around: &Surroundings,
) -> Result<RunKey, NoKey> {
    let task = &plan.tasks[index];
    let copied = &around.copied;
    let answers = around.answers.get(&task.name);
    let (dependencies, dep_keys) = dependency_keys(plan, task, results)?;
    let (inputs, context) = file_parts(task, files)?;
    let work = work_key(task);

    let mut e = Encoder::new();
    e.str("format", CACHE_FORMAT_VERSION)
        .key("work", &work)
        .str("dependencies", &dep_keys.len().to_string());
    for (name, k) in &dep_keys {
        e.str("dependency.name", name).key("dependency.result", k);
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
    // In the order the prompt gives them (an order that changes the
    // prompt changes the key).
    if let Some(objects) = &context {
        e.str("context", &task.context.len().to_string());
        for path in &task.context {
            let object = objects.get(path).map_or("missing", String::as_str);
            e.str("context.path", path).str("context.object", object);
        }
    }
    if !copied.is_empty() {
        e.str("copied", &copied.len().to_string());
        for (path, digest) in copied {
            e.str("copied.path", path).str("copied.content", digest);
        }
    }
    if let Some(digest) = answers {
        e.str("answers", digest);
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
            definition: work.to_hex(),
            work: parts.work.to_hex(),
            agent: parts.agent.to_hex(),
            checks: parts.checks.to_hex(),
            env: parts.env.to_hex(),
            dependencies,
            inputs,
            context,
            copied: (!copied.is_empty()).then(|| copied.clone()),
            answers: answers.cloned(),
        },
    })
}

/// [`file_parts`]: the `inputs` matches and the `context` files.
type FileParts = (
    Option<BTreeMap<String, String>>,
    Option<BTreeMap<String, String>>,
);

/// The parts of `task`'s key that are files of the commit it starts from
/// (`files`, as [`run_key`] takes them): its `inputs` matches and its
/// `context` files, each with its object id; `None` for a task without.
///
/// Errors: the files were not listed, or an `inputs` glob does not compile.
fn file_parts(task: &Task, files: Option<&[(String, String)]>) -> Result<FileParts, NoKey> {
    if task.inputs.is_empty() && task.context.is_empty() {
        return Ok((None, None));
    }
    let files =
        files.ok_or_else(|| NoKey::Other("the base commit's files were not listed".to_string()))?;
    let inputs = if task.inputs.is_empty() {
        None
    } else {
        Some(match_inputs(task, files).map_err(NoKey::Other)?)
    };
    let context = (!task.context.is_empty()).then(|| context_objects(task, files));
    Ok((inputs, context))
}

/// What of task `index`'s own key changed since an older entry's
/// components `old`, assuming its dependencies produce what they did then
/// (their results are not known yet: they run first), in the words of
/// [`changes`]: its definition, and the files, copied files and answers
/// its key holds (`files` and `around` as [`run_key`] takes them).
///
/// Errors: as [`run_key`]'s, but for a dependency's unknown result.
pub fn changes_but_dependencies(
    plan: &Plan,
    index: usize,
    old: &Components,
    files: Option<&[(String, String)]>,
    around: &Surroundings,
) -> Result<Vec<String>, NoKey> {
    let task = &plan.tasks[index];
    let mut out = definition_changes(old, task);
    let (inputs, context) = file_parts(task, files)?;
    let assumed = Components {
        inputs,
        context,
        copied: (!around.copied.is_empty()).then(|| around.copied.clone()),
        answers: around.answers.get(&task.name).cloned(),
        ..old.clone()
    };
    // The definition's words are `definition_changes`'; the rest here.
    out.extend(changes(old, &assumed));
    Ok(out)
}

/// [`dependency_keys`]: the digests by name in hex, and as sorted pairs.
type DependencyKeys<'p> = (BTreeMap<String, String>, Vec<(&'p str, Key)>);

/// The result digest of each of `task`'s dependencies: by name, in hex
/// (the key's components), and as `(name, digest)` pairs sorted by name
/// (what the key encodes).
///
/// Errors: a dependency's result is not known.
fn dependency_keys<'p>(
    plan: &'p Plan,
    task: &Task,
    results: &[Option<Arc<Produced>>],
) -> Result<DependencyKeys<'p>, NoKey> {
    let mut dependencies = BTreeMap::new();
    let mut dep_keys = Vec::new();
    for &d in &task.dependencies {
        let dep = &plan.tasks[d];
        let Some(produced) = results.get(d).and_then(Option::as_ref) else {
            return Err(NoKey::Dependency(dep.name.clone()));
        };
        // A task of a fragment sees its producer without the fragment.
        let except = match &task.expanded_from {
            Some(p) if *p == dep.name => dep.expands.as_deref(),
            _ => None,
        };
        let k = result_digest(produced, except);
        dependencies.insert(dep.name.clone(), k.to_hex());
        dep_keys.push((dep.name.as_str(), k));
    }
    dep_keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
    Ok((dependencies, dep_keys))
}

/// Each of `task`'s `context` files and its object id in `files` (the
/// base commit's), `missing` when it is not there.
fn context_objects(task: &Task, files: &[(String, String)]) -> BTreeMap<String, String> {
    task.context
        .iter()
        .map(|path| {
            let object = files
                .iter()
                .find(|(p, _)| p == path)
                .map_or_else(|| "missing".to_string(), |(_, o)| o.clone());
            (path.clone(), object)
        })
        .collect()
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

/// A command task's command changed, or the executor that launches it
/// (its `run` is part of the command's key).
const COMMAND_CHANGED: &str = "command or its executor";

/// An agent task's agent changed (its `run`, `output`, `env`, or the
/// executor that launches it: part of the agent).
const AGENT_CHANGED: &str = "agent";

/// What of `task`'s own definition (its work key: the prompt or command,
/// agent, `accept` and protected paths, env) changed since an older
/// entry's key components `old`, in the words of [`changes`]; for a task
/// whose dependencies' results are not known yet.
pub fn definition_changes(old: &Components, task: &Task) -> Vec<String> {
    let parts = &task.key_parts;
    let kind = match task.kind {
        TaskKind::Agent { .. } => "agent",
        TaskKind::Command { .. } => "command",
    };
    let mut out = Vec::new();
    if old.work != parts.work.to_hex() || old.kind != kind {
        out.push(
            if kind == "command" {
                COMMAND_CHANGED
            } else {
                "prompt"
            }
            .to_string(),
        );
    }
    if old.agent != parts.agent.to_hex() {
        out.push(AGENT_CHANGED.to_string());
    }
    if old.checks != parts.checks.to_hex() {
        out.push("accept or protected paths".to_string());
    }
    if old.env != parts.env.to_hex() {
        out.push("env".to_string());
    }
    out
}

/// What changed between an older entry's key components and the current
/// ones, in words (`prompt`, `command`, `agent`, `accept or protected
/// paths`, `env`,
/// `dependency a`, `input file src/x.py`, `cache format`).
pub fn changes(old: &Components, new: &Components) -> Vec<String> {
    let mut out = Vec::new();
    if old.format != new.format {
        out.push("cache format".to_string());
    }
    if old.work != new.work || old.kind != new.kind {
        out.push(if new.kind == "command" {
            COMMAND_CHANGED.to_string()
        } else {
            "prompt".to_string()
        });
    }
    if old.agent != new.agent {
        out.push(AGENT_CHANGED.to_string());
    }
    if old.checks != new.checks {
        out.push("accept or protected paths".to_string());
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
            // A file the inputs match now or no longer ends in what
            // became of it: "input file README added" (the others are
            // said "changed").
            for p in paths {
                match (a.get(p), b.get(p)) {
                    (Some(x), Some(y)) if x != y => out.push(format!("input file {p}")),
                    (None, Some(_)) => out.push(format!("input file {p} {ADDED}")),
                    (Some(_), None) => out.push(format!("input file {p} {REMOVED}")),
                    _ => {}
                }
            }
        }
    }
    let none = BTreeMap::new();
    let (a, b) = (
        old.context.as_ref().unwrap_or(&none),
        new.context.as_ref().unwrap_or(&none),
    );
    if a.keys().collect::<Vec<_>>() != b.keys().collect::<Vec<_>>() {
        out.push("context".to_string());
    } else {
        for (p, object) in a {
            if b.get(p) != Some(object) {
                out.push(format!("context file {p}"));
            }
        }
    }
    let (a, b) = (
        old.copied.as_ref().unwrap_or(&none),
        new.copied.as_ref().unwrap_or(&none),
    );
    let mut paths: Vec<&String> = a.keys().chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    for p in paths {
        if a.get(p) != b.get(p) {
            out.push(format!("copied file {p}"));
        }
    }
    if old.answers != new.answers {
        out.push("answers".to_string());
    }
    if out.is_empty() && old.definition != new.definition {
        // Parts of the definition key not listed above (its own version).
        out.push("definition".to_string());
    }
    out
}
