//! Everything that goes into a cache key (docs/cache.md): blake3 digests over a
//! canonical encoding ([`Encoder`]), a task's definition key computed when
//! the plan is built ([`task_key`]), each gate's key ([`gate_key`]), and,
//! re-exported from `run_key`, the run-time key `loopc run` computes from
//! a task's work key, what its dependencies produced and the files its
//! `inputs` match ([`run_key`]; see `docs/cache.md`).

pub use super::digest::{Encoder, Key, KeyParts};
use super::types::{Executor, Gate, GateKind, TaskKind};
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

pub use super::run_key::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

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
