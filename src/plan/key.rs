//! Everything that goes into a cache key (docs/cache.md): blake3 digests over a
//! canonical encoding ([`Encoder`]), a task's definition key computed when
//! the plan is built ([`task_key`]), and the run-time key `loopc run`
//! computes from it, its dependencies' run-time keys and the files its
//! `inputs` match ([`run_key`]; see `docs/cache.md`).

pub use super::digest::{Encoder, Key, KeyParts};
use super::types::{Executor, Gate, GateKind, Plan, Task, TaskKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The key format version; bump it whenever the encoding ([`Encoder`],
/// [`task_key`]) changes so old cache entries stop matching instead of
/// matching wrongly.
pub const KEY_FORMAT_VERSION: &str = "loopc-key-v1";

/// Digests that many tasks share, computed once per plan: each agent's
/// (by identity: agents are resolved once and shared) and that of an empty
/// environment. Only a cache: the keys are those computed without it.
#[derive(Default)]
pub(super) struct KeyMemo {
    agents: Vec<(Arc<super::types::Agent>, Key)>,
    empty_env: Option<Key>,
    /// A command task's agent digest (a constant).
    no_agent: Option<Key>,
    /// The gates digest of a task without `accept` and gates (a constant).
    no_gates: Option<Key>,
}

/// A task's definition key (docs/cache.md without `inputs`) and its components.
///
/// In the key: the format version, the task name, the prompt or command
/// (with the fragment path of `expands`, when set), the
/// agent's `run` and `output`, `accept`, each gate's definition (command, or
/// agent `run`/`output`/`env` and prompt), the `run` of every executor that
/// launches one of these (`executor` argument: the task's own, for its
/// command and `accept`), `protect` and `may_change` and a command gate's
/// `on_change = ignore` (they decide what passes), the merged environment,
/// and the dependencies' keys (sorted). Not in it: titles, timeouts, attempts, budgets, `on_fail`, gate
/// and executor names, comments and layout. An executor is written only
/// when there is one, so the keys of plans without executors are those of
/// before executors existed.
///
/// Not in it either: the `resolver`. A key says which work a recorded pass
/// stands for; the resolver only fits that work onto whatever else was
/// merged meanwhile, and its result passed the task's gates (which are in
/// the key) like any merge. A replay is a fresh merge onto a new head
/// (one that conflicts is a miss and the task runs), so a pass recorded
/// through one resolver is as good under another, or under none.
///
/// `memo` holds the digests many tasks share (the same digests, computed once).
#[allow(clippy::too_many_arguments)]
pub(super) fn task_key(
    memo: &mut KeyMemo,
    name: &str,
    kind: &TaskKind,
    expands: Option<&str>,
    accept: Option<&str>,
    gates: &[Arc<Gate>],
    (protect, may_change): (&[String], &[String]),
    env: &BTreeMap<String, String>,
    executor: Option<&Executor>,
    mut dep_keys: Vec<Key>,
) -> (Key, KeyParts) {
    let work = {
        let mut e = Encoder::new();
        match kind {
            TaskKind::Agent { prompt, .. } => e.str("prompt", prompt),
            TaskKind::Command { run } => {
                e.str("run", run);
                launched_by(&mut e, "executor", executor);
                &mut e
            }
        };
        // Written only when set, so that the keys of tasks without it hold.
        if let Some(path) = expands {
            e.str("expands", path);
        }
        e.finish()
    };
    let agent = match kind {
        TaskKind::Agent { agent, .. } => {
            match memo.agents.iter().find(|(a, _)| Arc::ptr_eq(a, agent)) {
                Some((_, k)) => *k,
                None => {
                    let mut e = Encoder::new();
                    e.str("run", &agent.run)
                        .str("output", &agent.output.key_text());
                    launched_by(&mut e, "executor", agent.executor.as_deref());
                    let k = e.finish();
                    memo.agents.push((Arc::clone(agent), k));
                    k
                }
            }
        }
        TaskKind::Command { .. } => *memo
            .no_agent
            .get_or_insert_with(|| Encoder::new().str("agent", "").finish()),
    };
    let unprotected = protect.is_empty() && may_change.is_empty();
    let nothing = *memo
        .no_gates
        .get_or_insert_with(|| Encoder::new().opt("accept", None).finish());
    let checks = if accept.is_none() && unprotected {
        nothing
    } else {
        gates_key(accept, &[], (protect, may_change), executor)
    };
    let gates = if gates.is_empty() {
        checks
    } else {
        gates_key(accept, gates, (protect, may_change), executor)
    };
    let env = match memo.empty_env {
        Some(k) if env.is_empty() => k,
        _ => {
            let k = Encoder::new().map("env", env.iter()).finish();
            if env.is_empty() {
                memo.empty_env = Some(k);
            }
            k
        }
    };
    dep_keys.sort_unstable();
    let mut d = Encoder::new();
    for k in &dep_keys {
        d.key("dependency", k);
    }
    let dependencies = d.finish();
    let parts = KeyParts {
        work,
        agent,
        gates,
        checks,
        env,
        dependencies,
    };
    let key = Encoder::new()
        .str("version", KEY_FORMAT_VERSION)
        .str("task", name)
        .key("work", &parts.work)
        .key("agent", &parts.agent)
        .key("gates", &parts.gates)
        .key("env", &parts.env)
        .key("dependencies", &parts.dependencies)
        .finish();
    (key, parts)
}

/// The digest of `accept`, the gates' definitions (with the executors
/// that launch them) and what the task may not change (`protect`,
/// `may_change`: they decide what passes; written only when set, so the
/// keys of tasks without them hold).
fn gates_key(
    accept: Option<&str>,
    gates: &[Arc<Gate>],
    (protect, may_change): (&[String], &[String]),
    executor: Option<&Executor>,
) -> Key {
    let mut g = Encoder::new();
    for p in protect {
        g.str("protect", p);
    }
    for p in may_change {
        g.str("may_change", p);
    }
    g.opt("accept", accept);
    if accept.is_some() {
        launched_by(&mut g, "accept.executor", executor);
    }
    for gate in gates {
        write_gate(&mut g, &gate.kind, gate.on_change, gate.executor.as_deref());
    }
    g.finish()
}

/// Writes one gate's definition: what it runs and judges with, a command
/// gate's `on_change = ignore`, its executor's `run`.
fn write_gate(
    g: &mut Encoder,
    kind: &GateKind,
    on_change: crate::model::OnChange,
    executor: Option<&Executor>,
) {
    match kind {
        GateKind::Command { run } => {
            g.str("gate.run", run);
            // Written only when set, so the keys of other gates hold.
            if on_change == crate::model::OnChange::Ignore {
                g.str("gate.on_change", on_change.as_str());
            }
        }
        GateKind::Agent { agent, prompt } => {
            g.str("gate.agent.run", &agent.run)
                .str("gate.agent.output", &agent.output.key_text())
                .map("gate.agent.env", agent.env.iter())
                .str("gate.prompt", prompt);
        }
    }
    launched_by(g, "gate.executor", executor);
}

/// A gate's key ([`Gate::key`], docs/cache.md "Gates and their
/// verdicts"): blake3 over the gate key version and its definition as the
/// definition key writes it. Its name, timeout, `on_fail` and `recheck`
/// are not in it: a renamed gate keeps its verdicts.
pub(super) fn gate_key(
    kind: &GateKind,
    on_change: crate::model::OnChange,
    executor: Option<&Executor>,
) -> Key {
    let mut g = Encoder::new();
    g.str("version", GATE_KEY_VERSION);
    write_gate(&mut g, kind, on_change, executor);
    g.finish()
}

/// The gate key's format version ([`gate_key`]).
pub const GATE_KEY_VERSION: &str = "loopc-gate-v1";

/// Writes the `run` of the executor that launches something, if any.
fn launched_by(e: &mut Encoder, field: &str, executor: Option<&Executor>) {
    if let Some(x) = executor {
        e.str(field, &x.run);
    }
}

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
    let inputs = if task.inputs.is_empty() {
        None
    } else {
        let files = files
            .ok_or_else(|| NoKey::Other("the base commit's files were not listed".to_string()))?;
        Some(match_inputs(task, files).map_err(NoKey::Other)?)
    };
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
            copied: (!copied.is_empty()).then(|| copied.clone()),
            answers: answers.cloned(),
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
                "command"
            } else {
                "prompt"
            }
            .to_string(),
        );
    }
    if old.agent != parts.agent.to_hex() {
        out.push("agent".to_string());
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
            "command".to_string()
        } else {
            "prompt".to_string()
        });
    }
    if old.agent != new.agent {
        out.push("agent".to_string());
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
            for p in paths {
                if a.get(p) != b.get(p) {
                    out.push(format!("input file {p}"));
                }
            }
        }
    }
    let none = BTreeMap::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_unambiguous() {
        let a = Encoder::new().str("x", "ab").str("y", "c").finish();
        let b = Encoder::new().str("x", "a").str("y", "bc").finish();
        assert_ne!(a, b);
        let c = Encoder::new().opt("x", None).finish();
        let d = Encoder::new().opt("x", Some("")).finish();
        assert_ne!(c, d);
    }

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
        let a1 = run_key(&p, 0, &[], Some(&f1), &Surroundings::default()).unwrap();
        // Unmatched files and listing order do not matter.
        assert_eq!(
            a1.key,
            run_key(&p, 0, &[], Some(&f2), &Surroundings::default())
                .unwrap()
                .key
        );
        let a3 = run_key(&p, 0, &[], Some(&f3), &Surroundings::default()).unwrap();
        assert_ne!(a1.key, a3.key);
        assert_eq!(
            changes(&a1.components, &a3.components),
            ["input file src/lib.rs"]
        );
        // What a dependency produced flows into its dependents' keys, not
        // how it was produced (early cutoff).
        let made = |object: &str| {
            Some(Arc::new(Produced::from([(
                "a.txt".to_string(),
                format!("100644 {object}"),
            )])))
        };
        let none = Surroundings::default();
        let b1 = run_key(&p, 1, &[made("1")], None, &none).unwrap();
        let b3 = run_key(&p, 1, &[made("2")], None, &none).unwrap();
        assert_ne!(b1.key, b3.key);
        assert_eq!(changes(&b1.components, &b3.components), ["dependency a"]);
        assert_eq!(
            b1.key,
            run_key(&p, 1, &[made("1")], None, &none).unwrap().key
        );
        // No key without the dependency's.
        assert!(run_key(&p, 1, &[None], None, &Surroundings::default()).is_err());
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
        let o = run_key(&old, 0, &[], Some(&f), &Surroundings::default()).unwrap();
        let n = run_key(&new, 0, &[], Some(&f), &Surroundings::default()).unwrap();
        // Gates are not in the key: their verdicts are kept apart.
        assert_eq!(
            changes(&o.components, &n.components),
            ["prompt", "agent", "env"]
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
        assert_eq!(
            o.key,
            run_key(&same, 0, &[], Some(&f), &Surroundings::default())
                .unwrap()
                .key
        );
    }

    #[test]
    fn copied_files_are_part_of_the_key_and_said_when_changed() {
        let p = plan(PLAN);
        let none = Surroundings::default();
        let f: Vec<(String, String)> = vec![];
        let plain = run_key(&p, 0, &[], Some(&f), &none).unwrap();
        let with = |digest: &str| Surroundings {
            copied: [(".env".to_string(), digest.to_string())].into(),
            ..Surroundings::default()
        };
        let (one, two) = (with("d1"), with("d2"));
        let k1 = run_key(&p, 0, &[], Some(&f), &one).unwrap();
        let k2 = run_key(&p, 0, &[], Some(&f), &two).unwrap();
        assert_ne!(plain.key, k1.key);
        assert_ne!(k1.key, k2.key);
        assert_eq!(
            changes(&k1.components, &k2.components),
            ["copied file .env"]
        );
        assert_eq!(plain.components.copied, None);
    }

    #[test]
    fn answers_are_part_of_their_tasks_key_only() {
        let p = plan(PLAN);
        let f: Vec<(String, String)> = vec![];
        let none = Surroundings::default();
        let answered = Surroundings {
            answers: [("a".to_string(), "q1".to_string())].into(),
            ..Surroundings::default()
        };
        let plain = run_key(&p, 0, &[], Some(&f), &none).unwrap();
        let with = run_key(&p, 0, &[], Some(&f), &answered).unwrap();
        assert_ne!(plain.key, with.key);
        assert_eq!(changes(&plain.components, &with.components), ["answers"]);
        assert_eq!(plain.components.answers, None);
    }

    #[test]
    fn protected_paths_are_part_of_the_gates_key() {
        let key = |text: &str| {
            let p = plan(text);
            (p.tasks[0].key, p.tasks[0].key_parts.gates)
        };
        let plain = key(r#"task a { run = "x" }"#);
        let protected = key(r#"defaults { protect = ["tests/**"] } task a { run = "x" }"#);
        let looped = key(r#"loop { protect = ["tests/**"] } task a { run = "x" }"#);
        let lifted = key(
            r#"defaults { protect = ["tests/**"] } task a { run = "x" may_change = ["tests/**"] }"#,
        );
        assert_ne!(plain, protected);
        // Where it is written does not matter: what is protected does.
        assert_eq!(protected, looped);
        assert_ne!(protected, lifted);
        let gated = key(r#"gate g = "true" task a { run = "x" gates = [g] }"#);
        let ignoring =
            key(r#"gate g { run = "true" on_change = ignore } task a { run = "x" gates = [g] }"#);
        let failing =
            key(r#"gate g { run = "true" on_change = fail } task a { run = "x" gates = [g] }"#);
        assert_ne!(gated, ignoring);
        assert_eq!(gated, failing);
    }
}
